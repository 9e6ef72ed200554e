/*
 * The switch-off safeguard of Anderson acceleration (src/solve/anderson.c),
 * on plain fixed-point maps it knows nothing of: the acceleration stops
 * for the rest of a solve when, after 100 iterations, fewer than a third of
 * the extrapolations it tried were kept, and keeps running where they are
 * kept. An extrapolation is kept when the next step does not undo it.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "solve/anderson.h"

enum { ENTRIES = 4, ITERATIONS = 400 };

/* The map z -> z / 2 + c; `spoil` makes the plain iteration after a
 * rewrite by the acceleration push z far away, so that the residual the
 * next step sees has grown and every extrapolation is undone. */
typedef struct fixed_point {
    double z[ENTRIES];
    bool spoil, rewritten;
} fixed_point;

static void rewritten(void *context, int32_t b) {
    (void)b;
    ((fixed_point *)context)->rewritten = true;
}

static void plain_iteration(fixed_point *p) {
    for (int q = 0; q < ENTRIES; ++q) {
        p->z[q] = p->z[q] / 2.0 + (double)(q + 1);
        if (p->spoil && p->rewritten) p->z[q] += 1e3 * (1.0 + fabs(p->z[q]));
    }
    p->rewritten = false;
}

/* Runs the acceleration over ITERATIONS plain iterations of the map;
 * returns whether it still runs at the end. */
static bool runs_to_the_end(bool spoil) {
    static const int32_t block_begin[] = {0, ENTRIES};
    fixed_point p = {.z = {10.0, -3.0, 7.0, 0.5}, .spoil = spoil};
    anderson *a = anderson_new(1, block_begin, 8);
    assert_non_null(a);
    anderson_begin(a, 8, p.z, 0);
    for (int32_t t = 1; t <= ITERATIONS; ++t) {
        plain_iteration(&p);
        anderson_changed(a, 0, t);
        if (anderson_due(a, t)) anderson_step(a, p.z, rewritten, &p);
        if (anderson_grows(a, t)) anderson_restart(a, p.z, t);
    }
    const bool running = anderson_running(a);
    anderson_free(a);
    return running;
}

static void acceleration_that_is_never_kept_switches_itself_off(void **state) {
    (void)state;
    assert_false(runs_to_the_end(true));
}

static void acceleration_that_is_kept_runs_on(void **state) {
    (void)state;
    assert_true(runs_to_the_end(false));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acceleration_that_is_never_kept_switches_itself_off),
        cmocka_unit_test(acceleration_that_is_kept_runs_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
