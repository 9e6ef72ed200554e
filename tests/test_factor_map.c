/*
 * The MAP oracle of every factor kind, checked against brute force. For
 * each kind, thousands of random one-factor problems (degrees 1..8, random
 * negations, scores from several regimes including many exact ties) go
 * through the library's variable-space entry point factor_map_variables.
 * The configuration it returns must be allowed (ref_allowed on exact 0/1
 * values; for KNAPSACK, inside the continuous knapsack polytope), and both
 * the score it returns and the score of that configuration must equal the
 * optimum: the best allowed configuration by enumeration, or for KNAPSACK
 * the LP optimum computed by GLPK's simplex. The vertex enumeration
 * of the continuous knapsack polytope, which the QP reference relies on, is
 * cross-checked against the same GLPK LP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factor.h"
#include "graph.h"
#include "ref_factor.h"
#include "ref_semantics.h"
#include "testutil.h"

enum { CASES_PER_KIND = 4000, MAX_TEST_DEGREE = 8, MAX_REPORTS = 5 };

/* Scores are compared relative to sum |a| + sum |b|: every candidate score
 * is a short sum of those numbers (times values in [0, 1]), so correct
 * answers agree to a few ulps of that scale; 1e-12 leaves a wide margin for
 * rounding yet catches any wrong choice, since a tie broken the wrong way
 * still gives the same score and a genuinely worse configuration differs by
 * one of the drawn scores. A KNAPSACK point may exceed the budget only by
 * rounding: 1e-12 in units of the largest cost (plus budget / largest cost,
 * since left-over budget is tracked by subtraction). */
#define SCORE_TOL 1e-12
#define KNAPSACK_FEAS_TOL 1e-12

static double map_scale(const ref_factor *f, const double *a, const double *b) {
    double scale = 0.0;
    for (int j = 0; j < f->degree; ++j) scale += fabs(a[j]);
    for (int k = 0; k < ref_num_additionals(f); ++k) scale += fabs(b[k]);
    return scale;
}

/* Whether u (and v) are exact 0/1 values forming an allowed configuration. */
static bool allowed_configuration(const ref_factor *f, const double *u, const double *v) {
    int x[REF_MAX_DEGREE], y[1] = {0};
    for (int j = 0; j < f->degree; ++j) {
        if (u[j] != 0.0 && u[j] != 1.0) return false;
        x[j] = u[j] == 1.0;
    }
    for (int k = 0; k < ref_num_additionals(f); ++k) {
        if (v[k] != 0.0 && v[k] != 1.0) return false;
        y[k] = v[k] == 1.0;
    }
    return ref_allowed(f, x, y);
}

static void check_one(test_rng *r, ref_kind kind, int case_id, int *failures) {
    ref_graph *rg = calloc(1, sizeof *rg);
    assert_non_null(rg);
    ref_factor *f = &rg->factors[0];
    ref_draw_factor(r, kind, MAX_TEST_DEGREE, f);
    int p = f->degree, q = ref_num_additionals(f);
    double a[REF_MAX_DEGREE], b[1] = {0.0};
    ref_draw_scores(r, f, NULL, a, b);

    concord_graph *g = ref_build_single_factor(rg, b);
    assert_non_null(g);
    const factor *fa = &g->factors[0];
    assert_int_equal(fa->degree, p);
    assert_int_equal(fa->n_add, q);
    size_t scratch_bytes = factor_scratch_bytes(fa);
    /* Closed forms use the literal buffers only; the oracle ones stay NULL. */
    factor_buffers buf = {.lit_a = malloc((size_t)p * sizeof(double)),
                          .lit_u = malloc((size_t)p * sizeof(double)),
                          .scratch = scratch_bytes ? malloc(scratch_bytes) : NULL};
    double *ain = malloc((size_t)p * sizeof(double)), *u = malloc((size_t)p * sizeof(double));
    double *bin = q ? malloc((size_t)q * sizeof(double)) : NULL;
    double *v = q ? malloc((size_t)q * sizeof(double)) : NULL;
    assert_true(buf.lit_a && buf.lit_u && (buf.scratch || !scratch_bytes) && ain && u);
    assert_true(!q || (bin && v));
    memcpy(ain, a, (size_t)p * sizeof(double));
    if (q) memcpy(bin, b, (size_t)q * sizeof(double));
    double value = factor_map_variables(fa, g->link_neg + fa->link_begin, ain, bin, u, v, &buf);

    double uref[REF_MAX_DEGREE], vref[1] = {0.0}, best;
    if (kind == REF_KNAPSACK) {
        assert_int_equal(ref_knapsack_lp(f, a, uref, &best), 0);
    } else {
        best = ref_map(f, a, b, uref, vref);
        assert_false(isnan(best));
    }
    double tol = SCORE_TOL * map_scale(f, a, b);
    double own = 0.0;
    for (int j = 0; j < p; ++j) own += a[j] * u[j];
    for (int k = 0; k < q; ++k) own += b[k] * v[k];

    bool feasible;
    if (kind == REF_KNAPSACK) {
        double cmax = 0.0;
        for (int j = 0; j < p; ++j) cmax = fmax(cmax, f->costs[j]);
        double slack = KNAPSACK_FEAS_TOL * (1.0 + (cmax > 0.0 ? f->budget / cmax : 0.0));
        feasible = ref_polytope_violation(f, u, v) <= slack;
    } else {
        feasible = allowed_configuration(f, u, v);
    }
    bool bad = !feasible || !(fabs(value - best) <= tol) || !(fabs(own - best) <= tol);
    if (bad && (*failures)++ < MAX_REPORTS) {
        fprintf(stderr, "%s MAP case %d: %s; returned %.17g, its configuration scores %.17g, "
                        "optimum %.17g\n",
                ref_kind_name(kind), case_id, feasible ? "allowed" : "NOT ALLOWED", value, own,
                best);
        ref_print_case(f, a, b, NULL);
        ref_print_vector("library u", p, u);
        ref_print_vector("reference u", p, uref);
        if (q) fprintf(stderr, "  library v %.17g reference v %.17g\n", v[0], vref[0]);
    }

    free(buf.lit_a);
    free(buf.lit_u);
    free(buf.scratch);
    free(ain);
    free(u);
    free(bin);
    free(v);
    concord_graph_free(g);
    free(rg);
}

static void check_kind(ref_kind kind) {
    test_rng r = {0x3a90000u + (uint64_t)kind * 104729u};
    int failures = 0;
    for (int c = 0; c < CASES_PER_KIND; ++c) check_one(&r, kind, c, &failures);
    if (failures)
        fail_msg("%s: %d of %d MAP cases wrong", ref_kind_name(kind), failures, CASES_PER_KIND);
}

static void xor_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_XOR);
}

static void xorout_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_XOROUT);
}

static void atmostone_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_ATMOSTONE);
}

static void or_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_OR);
}

static void orout_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_OROUT);
}

static void andout_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_ANDOUT);
}

static void imply_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_IMPLY);
}

static void budget_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_BUDGET);
}

static void exact_budget_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_BUDGET_EXACT);
}

static void knapsack_map_is_feasible_and_lp_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_KNAPSACK);
}

static void pair_map_is_allowed_and_optimal_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_PAIR);
}

/* The QP reference optimizes over the enumerated knapsack vertices; their
 * best linear score must be the LP optimum, and the best vertex feasible. */
static void knapsack_vertex_enumeration_agrees_with_glpk_lp(void **state) {
    (void)state;
    test_rng r = {0x6c70u};
    for (int c = 0; c < CASES_PER_KIND; ++c) {
        ref_factor f;
        ref_draw_factor(&r, REF_KNAPSACK, MAX_TEST_DEGREE, &f);
        double a[REF_MAX_DEGREE], b[1] = {0.0}, u[REF_MAX_DEGREE], lp;
        ref_draw_scores(&r, &f, NULL, a, b);
        double best = ref_map(&f, a, b, u, NULL);
        assert_int_equal(ref_knapsack_lp(&f, a, NULL, &lp), 0);
        double tol = SCORE_TOL * map_scale(&f, a, b);
        if (!(fabs(best - lp) <= tol)) {
            ref_print_case(&f, a, b, NULL);
            fail_msg("case %d: best vertex %.17g, LP %.17g", c, best, lp);
        }
        assert_true(ref_polytope_violation(&f, u, NULL) <= 1e-13);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(knapsack_vertex_enumeration_agrees_with_glpk_lp),
        cmocka_unit_test(xor_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(xorout_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(atmostone_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(or_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(orout_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(andout_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(imply_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(budget_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(exact_budget_map_is_allowed_and_optimal_on_random_inputs),
        cmocka_unit_test(knapsack_map_is_feasible_and_lp_optimal_on_random_inputs),
        cmocka_unit_test(pair_map_is_allowed_and_optimal_on_random_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
