/*
 * Anderson acceleration (src/solve/anderson.c) on plain fixed-point maps it
 * knows nothing of:
 * - the switch-off safeguard: the acceleration stops for the rest of a
 *   solve when, after 100 iterations, fewer than a third of the
 *   extrapolations it tried were kept, and keeps running where they are
 *   kept (an extrapolation is kept when the next step does not undo it)
 *   or where a single one was refused;
 * - on a slow linear contraction it takes the long steps (up to 22 plain
 *   steps) that reach the fixed point;
 * - its work follows what moves: a block the iteration leaves alone after
 *   the history (re)starts is never handed back to the owner, and leaving
 *   it out changes nothing in the blocks that move.
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
    anderson_begin(a, 8, p.z);
    for (int32_t t = 1; t <= ITERATIONS; ++t) {
        plain_iteration(&p);
        anderson_changed(a, 0, t);
        if (anderson_due(a, t)) anderson_step(a, p.z, rewritten, &p);
        if (anderson_grows(a, t)) anderson_restart(a, p.z);
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

/* Block 0 (entries 0..3) follows a nonlinear contraction; block 1
 * (entries 4, 5) stands still until iteration `wake` and follows
 * z -> 0.8 z + 1 from then on. */
enum { MOVING = 4, STILL = 2, QUIET_ITERATIONS = 120 };

typedef struct two_blocks {
    double z[MOVING + STILL];
    int handed[2]; /* how often the acceleration handed each block back */
} two_blocks;

static void count_handed(void *context, int32_t b) { ((two_blocks *)context)->handed[b] += 1; }

/* Runs QUIET_ITERATIONS iterations with the history restarted at
 * iteration 50 (the whole vector: block 1 too, as after a penalty change);
 * with `both`, the accelerator sees both blocks, else block 0 only. */
static two_blocks run_two_blocks(bool both, int32_t wake) {
    static const int32_t both_begin[] = {0, MOVING, MOVING + STILL}, one_begin[] = {0, MOVING};
    two_blocks p = {.z = {10.0, -3.0, 7.0, 0.5, 4.0, -2.0}};
    anderson *a = both ? anderson_new(2, both_begin, 8) : anderson_new(1, one_begin, 8);
    assert_non_null(a);
    anderson_begin(a, 8, p.z);
    for (int32_t t = 1; t <= QUIET_ITERATIONS; ++t) {
        for (int q = 0; q < MOVING; ++q)
            p.z[q] = 0.9 * p.z[q] + 0.1 * sin(p.z[(q + 1) % MOVING]) + (double)(q + 1) / 10.0;
        anderson_changed(a, 0, t);
        if (both && wake > 0 && t >= wake) {
            for (int q = MOVING; q < MOVING + STILL; ++q) p.z[q] = 0.8 * p.z[q] + 1.0;
            anderson_changed(a, 1, t);
        }
        if (anderson_due(a, t)) anderson_step(a, p.z, count_handed, &p);
        if (t == 50) {
            for (int q = 0; q < MOVING + STILL; ++q) p.z[q] *= 1.5;
            anderson_restart(a, p.z);
        }
        if (anderson_grows(a, t)) anderson_restart(a, p.z);
    }
    anderson_free(a);
    return p;
}

static void a_block_that_stands_still_is_left_out(void **state) {
    (void)state;
    const two_blocks alone = run_two_blocks(false, 0), beside = run_two_blocks(true, 0);
    assert_true(beside.handed[0] > 0);
    assert_int_equal(beside.handed[1], 0);
    /* the moving block's iterates are those of an accelerator that never
     * saw the other block, bit for bit */
    for (int q = 0; q < MOVING; ++q) assert_true(beside.z[q] == alone.z[q]);
    assert_true(beside.z[MOVING] == 4.0 * 1.5 && beside.z[MOVING + 1] == -2.0 * 1.5);
}

static void a_block_that_moves_after_a_restart_is_taken_in(void **state) {
    (void)state;
    assert_true(run_two_blocks(true, 60).handed[1] > 0);
}

/* The slow linear contraction z_q -> r_q z_q + q + 1, r_q from 0.97 to
 * 0.985: three plain iterations (one step) contract by 0.91-0.96, so the
 * fixed point lies 10-22 plain steps ahead of the plain image. */
static void slow_iteration(double *z) {
    for (int q = 0; q < ENTRIES; ++q) z[q] = (0.97 + 0.005 * q) * z[q] + (double)(q + 1);
}

static double slow_fixed_point(int q) { return (double)(q + 1) / (1.0 - (0.97 + 0.005 * q)); }

static void ignore_rewrite(void *context, int32_t b) {
    (void)context;
    (void)b;
}

/* On a slow linear contraction the acceleration takes the long steps that
 * reach the fixed point: within 60 iterations it is there to 1e-9, where
 * the plain iteration has closed a sixth of the distance at most. */
static void a_slow_contraction_is_accelerated_by_long_steps(void **state) {
    (void)state;
    static const int32_t block_begin[] = {0, ENTRIES};
    double z[ENTRIES] = {0.0, 0.0, 0.0, 0.0};
    anderson *a = anderson_new(1, block_begin, 8);
    assert_non_null(a);
    anderson_begin(a, 8, z);
    for (int32_t t = 1; t <= 60; ++t) {
        slow_iteration(z);
        anderson_changed(a, 0, t);
        if (anderson_due(a, t)) anderson_step(a, z, ignore_rewrite, NULL);
        if (anderson_grows(a, t)) anderson_restart(a, z);
    }
    for (int q = 0; q < ENTRIES; ++q)
        assert_true(fabs(z[q] - slow_fixed_point(q)) <= 1e-9 * slow_fixed_point(q));
    anderson_free(a);
}

/* The slow contraction with every value times `scale` (z_q -> r_q z_q +
 * scale (q + 1)), accelerated for 60 iterations from scale (q + 1), left
 * in z. */
static void accelerate_scaled_contraction(double scale, double *z) {
    static const int32_t block_begin[] = {0, ENTRIES};
    for (int q = 0; q < ENTRIES; ++q) z[q] = scale * (double)(q + 1);
    anderson *a = anderson_new(1, block_begin, 8);
    assert_non_null(a);
    anderson_begin(a, 8, z);
    for (int32_t t = 1; t <= 60; ++t) {
        for (int q = 0; q < ENTRIES; ++q)
            z[q] = (0.97 + 0.005 * q) * z[q] + scale * (double)(q + 1);
        anderson_changed(a, 0, t);
        if (anderson_due(a, t)) anderson_step(a, z, ignore_rewrite, NULL);
        if (anderson_grows(a, t)) anderson_restart(a, z);
    }
    anderson_free(a);
}

/* Scaled by a power of two every operation of the plain iteration is
 * exact, so the accelerated iterates at 2^600 (4e180, whose squares
 * overflow) and 2^-600 (2e-181, whose squares vanish) are those at scale
 * 1 times the scale, bit for bit, at the fixed point: the acceleration
 * measures its history in a unit of the state's size. */
static void the_acceleration_is_the_same_at_every_power_of_two_scale(void **state) {
    (void)state;
    double reference[ENTRIES], z[ENTRIES];
    accelerate_scaled_contraction(1.0, reference);
    for (int q = 0; q < ENTRIES; ++q)
        assert_true(fabs(reference[q] - slow_fixed_point(q)) <= 1e-9 * slow_fixed_point(q));
    const double scales[2] = {0x1p600, 0x1p-600};
    for (int k = 0; k < 2; ++k) {
        accelerate_scaled_contraction(scales[k], z);
        for (int q = 0; q < ENTRIES; ++q) assert_true(z[q] == scales[k] * reference[q]);
    }
}

/* The first extrapolation after the memory grows (iteration 80) is spoilt
 * (the next plain iteration pushes z away) and refused; the others would
 * be kept. One refusal is no verdict on the memory in use: at iteration
 * 110, past the first judgement (100), the acceleration still runs. */
typedef struct spoilt_once {
    double z[ENTRIES];
    bool spoil_next;
    int rewrites_after_growth;
} spoilt_once;

static void spoil_first_after_growth(void *context, int32_t b) {
    (void)b;
    spoilt_once *p = context;
    p->spoil_next = p->rewrites_after_growth++ == 0;
}

static void one_refusal_does_not_switch_the_acceleration_off(void **state) {
    (void)state;
    static const int32_t block_begin[] = {0, ENTRIES};
    spoilt_once p = {.z = {0.0, 0.0, 0.0, 0.0}, .rewrites_after_growth = -1};
    anderson *a = anderson_new(1, block_begin, 8);
    assert_non_null(a);
    for (int32_t t = 1; t <= 110; ++t) {
        slow_iteration(p.z);
        if (p.spoil_next)
            for (int q = 0; q < ENTRIES; ++q) p.z[q] += 1e3;
        p.spoil_next = false;
        if (t == 70) anderson_begin(a, 8, p.z); /* late, so that z still moves after 80 */
        if (t <= 70) continue;
        anderson_changed(a, 0, t);
        if (anderson_due(a, t)) anderson_step(a, p.z, spoil_first_after_growth, &p);
        if (anderson_grows(a, t)) {
            anderson_restart(a, p.z);
            p.rewrites_after_growth = 0;
        }
    }
    assert_int_equal(p.rewrites_after_growth, 2); /* the extrapolation and its undoing */
    assert_true(anderson_running(a));
    anderson_free(a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acceleration_that_is_never_kept_switches_itself_off),
        cmocka_unit_test(acceleration_that_is_kept_runs_on),
        cmocka_unit_test(a_block_that_stands_still_is_left_out),
        cmocka_unit_test(a_block_that_moves_after_a_restart_is_taken_in),
        cmocka_unit_test(a_slow_contraction_is_accelerated_by_long_steps),
        cmocka_unit_test(the_acceleration_is_the_same_at_every_power_of_two_scale),
        cmocka_unit_test(one_refusal_does_not_switch_the_acceleration_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
