/*
 * The singly-constrained box QP at large degrees, where enumeration-based
 * references cannot go: checked against bisection on the multiplier (in
 * long double), and on inputs built so that variable fixing needs more
 * passes than its budget and finishes with the sorted sweep -- the
 * fallback that keeps the worst case O(n log n) and that random small
 * inputs never reach.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "qp/box_qp.h"
#include "testutil.h"

enum { MAX_N = 4096 };

static long double clip01l(long double x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }

static long double sum_at(int n, const double *a, const double *d, const double *c,
                          long double tau) {
    long double s = 0;
    for (int i = 0; i < n; ++i) {
        long double ci = c ? c[i] : 1.0L;
        s += ci * clip01l((a[i] - tau * ci) / d[i]);
    }
    return s;
}

/* The reference: tau* by bisection on the non-increasing sum, then u. */
static void bisection_reference(int n, const double *a, const double *d, const double *c,
                                double rhs, box_sense sense, long double *u) {
    long double tau = 0;
    long double s0 = sum_at(n, a, d, c, 0);
    int active = sense == BOX_EQ || (sense == BOX_LE && s0 > rhs) || (sense == BOX_GE && s0 < rhs);
    if (active) {
        long double lo = -1, hi = 1;
        while (sum_at(n, a, d, c, lo) < rhs) lo *= 2;
        while (sum_at(n, a, d, c, hi) > rhs) hi *= 2;
        for (int it = 0; it < 400 && lo < hi; ++it) {
            long double mid = lo + (hi - lo) / 2;
            if (mid == lo || mid == hi) break;
            if (sum_at(n, a, d, c, mid) > rhs) lo = mid;
            else hi = mid;
        }
        tau = lo + (hi - lo) / 2;
    }
    for (int i = 0; i < n; ++i) u[i] = clip01l((a[i] - tau * (c ? c[i] : 1.0L)) / d[i]);
}

/* The library's answer on (a, d) must satisfy the constraint and match
 * the reference's on (a_ref, d_ref), a problem with the same solution;
 * on items whose weight d_i is tiny the solution is a step in tau, so
 * those are compared through the constraint only. */
static void check_against(int n, const double *a, const double *d, const double *c, double rhs,
                          box_sense sense, const double *a_ref, const double *d_ref,
                          double tol) {
    static double u[MAX_N];
    static long double ref[MAX_N];
    void *scratch = malloc(box_qp_scratch_bytes(n)); /* exact size: ASan sees overruns */
    assert_non_null(scratch);
    box_qp(n, a, d, c, rhs, sense, u, scratch);
    free(scratch);
    bisection_reference(n, a_ref, d_ref, c, rhs, sense, ref);
    long double s = 0, cmax = 0;
    for (int i = 0; i < n; ++i) {
        assert_true(u[i] >= 0.0 && u[i] <= 1.0);
        long double ci = c ? c[i] : 1.0L;
        s += ci * u[i];
        if (ci > cmax) cmax = ci;
        /* |du| <= |dtau| c/d: items with d >= 1e-6 are well determined */
        if (d_ref[i] >= 1e-6 && fabsl(u[i] - ref[i]) > tol) {
            fprintf(stderr, "item %d of %d: library %.17g reference %.17Lg (d %g)\n", i, n, u[i],
                    ref[i], d[i]);
            fail();
        }
    }
    long double slack = 1e-9L * (1 + cmax * n);
    if (sense == BOX_EQ) assert_true(fabsl(s - rhs) <= slack);
    if (sense == BOX_LE) assert_true(s <= rhs + slack);
    if (sense == BOX_GE) assert_true(s >= rhs - slack);
}

static void check(int n, const double *a, const double *d, const double *c, double rhs,
                  box_sense sense) {
    check_against(n, a, d, c, rhs, sense, a, d, 1e-7);
}

static void large_random_inputs_match_bisection(void **state) {
    (void)state;
    test_rng rng = {41};
    static double a[MAX_N], d[MAX_N], c[MAX_N];
    for (int trial = 0; trial < 300; ++trial) {
        int n = 16 + rng_int(&rng, 2000);
        int with_costs = rng_int(&rng, 2);
        double total = 0;
        for (int i = 0; i < n; ++i) {
            a[i] = rng_normal(&rng) * pow(10.0, rng_int(&rng, 4) - 2);
            d[i] = exp(log(1e-3) + rng_uniform(&rng) * log(1e6));
            c[i] = rng_int(&rng, 5) == 0 ? 0.0 : 0.1 + 2 * rng_uniform(&rng);
            total += with_costs ? c[i] : 1.0;
        }
        double rhs = rng_uniform(&rng) * total;
        box_sense sense = (box_sense)rng_int(&rng, 3);
        check(n, a, d, with_costs ? c : NULL, rhs, sense);
    }
}

/* Unit costs and rhs 1 (XOR, ATMOSTONE, OR) take the simplex path: the
 * scores are shifted down at random so that OR's lower constraint binds
 * as often as the upper one. */
static void large_unit_simplex_inputs_match_bisection(void **state) {
    (void)state;
    test_rng rng = {43};
    static double a[MAX_N], d[MAX_N];
    for (int trial = 0; trial < 300; ++trial) {
        int n = 16 + rng_int(&rng, 2000);
        double shift = rng_int(&rng, 2) ? 0.0 : 3.0 * rng_uniform(&rng);
        for (int i = 0; i < n; ++i) {
            d[i] = exp(log(1e-3) + rng_uniform(&rng) * log(1e6));
            a[i] = (rng_normal(&rng) * pow(10.0, rng_int(&rng, 4) - 2) - shift) * d[i];
        }
        check(n, a, d, NULL, 1.0, (box_sense)rng_int(&rng, 3));
    }
}

/* Unit simplices (small ones, of at most BOX_QP_SMALL_SIMPLEX items, and
 * larger ones) with weights up to 1e12 apart, checked against bisection
 * as at any weights. Measured from the largest score, a light item far
 * below it has a huge ratio and came out off by the ratio's rounding (an
 * ATMOSTONE with weights 2e11 apart: infeasible by 2e-5; 471 of these
 * 20,000 problems broke their constraint by more than 1e-9), or was
 * dropped by variable fixing while positive. */
static void unit_simplices_hold_at_spread_weights(void **state) {
    (void)state;
    test_rng rng = {47};
    double a[12], d[12];
    for (int trial = 0; trial < 20000; ++trial) {
        const int n = 2 + rng_int(&rng, trial % 2 ? 3 : 11);
        const double scale = pow(10.0, 6.0 * rng_uniform(&rng) - 3.0);
        for (int i = 0; i < n; ++i) {
            d[i] = pow(10.0, 12.0 * rng_uniform(&rng) - 6.0);
            a[i] = (2.0 * rng_uniform(&rng) - 1.0) * scale;
            if (rng_int(&rng, 3) == 0) a[i] += d[i]; /* a literal flipped: d - a */
        }
        check(n, a, d, NULL, 1.0, (box_sense)rng_int(&rng, 3));
    }
    /* a score beyond double's range in units of the weights (1e212 beside
     * 1e-97): the other items' ratios overflowed to -inf, and every value
     * came out 0 */
    const double huge_a[14] = {-8.4987129111727209e-99, -1.7491510736622025e+127,
                               1.3399498605844767e+212, 7.8601132809191725e-99,
                               1.2178291120318643e-96,  -1.6083161048734573e-98,
                               1.1368691327978088e-97,  2.8078328570230767e-98,
                               1.135061573577597e-97,   5.0579849116227635e-97,
                               2.7434220969693125e-97,  4.6808855470938859e-98,
                               -5.5013594330043103e-79, 1.2492297097308834e-96};
    const double tiny_d[14] = {3.2300169471606874e-97, 3.5524092728832025e-98,
                               3.0540665959290111e-97, 2.4237765565253111e-97,
                               7.2034107179790051e-97, 1.4882545204523178e-96,
                               1.2653132283316649e-97, 6.8216832548636554e-99,
                               1.1413083114858122e-96, 9.3079113532913386e-97,
                               1.7113082542477692e-97, 2.3298899009783445e-99,
                               8.9952449624470161e-99, 2.6576033920250048e-97};
    for (int sense = 0; sense < 3; ++sense)
        check(14, huge_a, tiny_d, NULL, 1.0, (box_sense)sense);
}

/* Budgets and knapsacks (rhs above 1, costs in [1, 2)) with weights up
 * to 1e12 apart hold as the unit simplices do: their variable fixing
 * measures ratios from 0, not from the largest score, and ends with a
 * Newton step. */
static void budgets_and_knapsacks_hold_at_spread_weights(void **state) {
    (void)state;
    test_rng rng = {61};
    double a[12], d[12], c[12];
    for (int trial = 0; trial < 10000; ++trial) {
        const int n = 3 + rng_int(&rng, 10);
        const double scale = pow(10.0, 6.0 * rng_uniform(&rng) - 3.0);
        const bool costs = trial % 2;
        for (int i = 0; i < n; ++i) {
            d[i] = pow(10.0, 12.0 * rng_uniform(&rng) - 6.0);
            a[i] = (2.0 * rng_uniform(&rng) - 1.0) * scale;
            if (rng_int(&rng, 3) == 0) a[i] += d[i];
            c[i] = 1.0 + rng_uniform(&rng);
        }
        const double rhs = 1 + rng_int(&rng, n - 2);
        check(n, a, d, costs ? c : NULL, rhs, (box_sense)rng_int(&rng, 2));
    }
}

/* z_i = a_i/d_i = (i+1)^p with d_i = (i+1)^q, q very negative: variable
 * fixing then removes few items per pass and exceeds its pass budget, so
 * the sorted sweep finishes the solve (found by search; 64 and 4096 items;
 * the last two with rhs 1 exhaust the simplex path's budget). */
static void slow_fixing_inputs_fall_back_to_the_sorted_sweep(void **state) {
    (void)state;
    static double a[MAX_N], d[MAX_N];
    const struct {
        int n;
        double p, q, rhs;
    } cases[] = {{64, 2.0, -12.0, 0.5},  {64, 2.5, -12.0, 1.0}, {4096, 2.75, -4.0, 0.5},
                 {64, 1.25, -16.0, 1.0}, {4096, 1.0, -8.0, 1.0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        int n = cases[k].n;
        for (int i = 0; i < n; ++i) {
            d[i] = pow(i + 1, cases[k].q);
            a[i] = pow(i + 1, cases[k].p) * d[i];
        }
        for (int sense = BOX_LE; sense <= BOX_GE; ++sense)
            check(n, a, d, NULL, cases[k].rhs, (box_sense)sense);
    }
}

/* A random right-hand side the problem can meet: rhs 1 or an integer up
 * to n with unit costs, any value up to the total cost with costs. */
static double random_rhs(test_rng *rng, int n, const double *c) {
    if (!c) return rng_int(rng, 2) ? 1.0 : (double)rng_int(rng, n + 1);
    double total = 0;
    for (int i = 0; i < n; ++i) total += c[i];
    return rng_uniform(rng) * total;
}

/* Scores far beyond the weights: a_i = c_i k_i m + r_i, tiers k_i in
 * {-2, ..., 2}, m = 2^p, d_i and c_i between 1/8 and 2 (multiples of
 * 1/8), residuals r_i multiples of 1/256 in [-4, 4] (zero outside tier 0
 * once m leaves them no bits). The items of the tiers above the one
 * holding the multiplier are at 1, those below at 0, and the ones in it
 * solve a problem that does not depend on m once m is far beyond
 * n (|r| + d) / c: so the answer at m = 2^p, up to 2^996 (scores near
 * 1e300), must be the reference's at m = 2^16. Forming the multiplier
 * from sums of huge scores put XOR(m, -m, m) at (0, 0, 0), off its
 * simplex, and BUDGET(2) of (m, 1, 1/2) at (1, 0, 0). */
static void huge_scores_answer_as_their_tiers_do(void **state) {
    (void)state;
    test_rng rng = {47};
    static double a[MAX_N], d[MAX_N], c[MAX_N], a_ref[MAX_N];
    for (int trial = 0; trial < 4000; ++trial) {
        int n = 1 + rng_int(&rng, rng_int(&rng, 4) ? 8 : 200);
        int p = 20 + rng_int(&rng, 977);
        int with_costs = rng_int(&rng, 3) == 0;
        int spread = 1 + rng_int(&rng, 2); /* tiers in [-spread, spread] */
        for (int i = 0; i < n; ++i) {
            int tier = rng_int(&rng, 2 * spread + 1) - spread;
            double r = rng_int(&rng, 4) ? (rng_int(&rng, 2049) - 1024) / 256.0 : 0.0;
            if (p > 40 && tier != 0) r = 0.0;
            d[i] = rng_int(&rng, 3) ? 1.0 : (1 + rng_int(&rng, 16)) / 8.0;
            c[i] = (1 + rng_int(&rng, 16)) / 8.0;
            double ci = with_costs ? c[i] : 1.0;
            a[i] = ldexp(ci * tier, p) + r;
            a_ref[i] = ldexp(ci * tier, 16) + r;
        }
        const double *costs = with_costs ? c : NULL;
        check_against(n, a, d, costs, random_rhs(&rng, n, costs), (box_sense)rng_int(&rng, 3),
                      a_ref, d, 1e-10);
    }
    /* the tester's cases: XOR(m, -m, m) for m up to 1e300, BUDGET(2) */
    double one[3] = {1, 1, 1};
    for (double m = 1e14; m <= 1e300; m *= 1e2) {
        check_against(3, (double[]){m, -m, m}, one, NULL, 1.0, BOX_EQ,
                      (double[]){1e3, -1e3, 1e3}, one, 1e-10);
        check_against(3, (double[]){m, m, m}, one, NULL, 2.0, BOX_LE, (double[]){1e3, 1e3, 1e3},
                      one, 1e-10);
        check_against(3, (double[]){m, 1.0, 0.5}, one, NULL, 2.0, BOX_LE,
                      (double[]){1e3, 1.0, 0.5}, one, 1e-10);
    }
}

/* Scaling a and d together by 2^e changes nothing (exactly, short of
 * subnormal numbers): scores and weights near 1e-298 or 1e298 must give
 * the reference's answer at their O(1) values. Tiny scores with weights
 * near 1 are compared with the reference at those very scores. */
static void tiny_and_scaled_scores_match_bisection(void **state) {
    (void)state;
    test_rng rng = {53};
    static double a[MAX_N], d[MAX_N], c[MAX_N], as[MAX_N], ds[MAX_N];
    for (int trial = 0; trial < 3000; ++trial) {
        int n = 1 + rng_int(&rng, rng_int(&rng, 4) ? 8 : 200);
        int with_costs = rng_int(&rng, 3) == 0;
        int e = rng_int(&rng, 2) ? 990 : -990;
        for (int i = 0; i < n; ++i) {
            d[i] = exp(log(1e-2) + rng_uniform(&rng) * log(1e4));
            a[i] = rng_normal(&rng) * pow(10.0, rng_int(&rng, 3) - 1);
            c[i] = 0.1 + 2 * rng_uniform(&rng);
            as[i] = ldexp(a[i], e);
            ds[i] = ldexp(d[i], e);
        }
        const double *costs = with_costs ? c : NULL;
        double rhs = random_rhs(&rng, n, costs);
        box_sense sense = (box_sense)rng_int(&rng, 3);
        check_against(n, as, ds, costs, rhs, sense, a, d, 1e-9);
        for (int i = 0; i < n; ++i) as[i] = ldexp(a[i], -1000);
        check(n, as, d, costs, rhs, sense);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(large_random_inputs_match_bisection),
        cmocka_unit_test(large_unit_simplex_inputs_match_bisection),
        cmocka_unit_test(unit_simplices_hold_at_spread_weights),
        cmocka_unit_test(budgets_and_knapsacks_hold_at_spread_weights),
        cmocka_unit_test(slow_fixing_inputs_fall_back_to_the_sorted_sweep),
        cmocka_unit_test(huge_scores_answer_as_their_tiers_do),
        cmocka_unit_test(tiny_and_scaled_scores_match_bisection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
