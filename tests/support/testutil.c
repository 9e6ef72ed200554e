/*
 * Out-of-line parts of the test helpers.
 */
#include "testutil.h"

#include <math.h>

double rng_normal(test_rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}
