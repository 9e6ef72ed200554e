/*
 * Small numeric helpers shared by the factor families and solvers: clipping
 * to the unit interval and an allocation-free sort of (key, index) pairs,
 * which is what every breakpoint search in the closed-form QPs needs.
 */
#ifndef CONCORD_UTIL_H
#define CONCORD_UTIL_H

#include <stdint.h>

typedef struct keyed {
    double key;
    int32_t index;
    int32_t tag;
} keyed;

/* Sorts x[0..n) by ascending key, in place, without allocating. */
void sort_keyed(keyed *x, int32_t n);

static inline double clip01(double x) {
    return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

#endif /* CONCORD_UTIL_H */
