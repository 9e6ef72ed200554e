/*
 * PSDD and MPLP against GLPK's local-polytope LP and brute force, on random
 * graphs: binary graphs with every logic, budget, knapsack and pair factor
 * (ref_random_graph, for PSDD under each step-size rule), and graphs of
 * PAIR and DENSE factors over multi-valued variables (ref_mgraph, for
 * both). Every dual bound is a bound (>= the LP optimum, up to rounding),
 * the best bound never rises, and it approaches the LP optimum: PSDD's gap
 * shrinks between 100 and 4000 iterations and ends small on average;
 * MPLP, a coordinate descent that may stop above the optimum, ends at it
 * on most graphs (all of these, to 1e-6). A status "integral" is a
 * certificate: the returned assignment is allowed and its value is the
 * brute-force MAP. After either, concord_solver_decode returns an allowed
 * assignment no better than the MAP. MPLP refuses factors it cannot take
 * max-marginals of linearly (KNAPSACK, an OR over two states of one
 * multi-variable).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "concord.h"
#include "ref_graph.h"
#include "ref_mgraph.h"
#include "testutil.h"

enum { GRAPHS = 120 };

/* ---- tolerances (and why) ------------------------------------------------
 * BOUND_TOL: a dual bound is valid at any multipliers, so it may fall
 *   below GLPK's exact LP optimum by rounding only: 1e-9 of sum |scores|.
 * CERT_TOL: a certified assignment is within tol (1e-6) times sum |scores|
 *   of the bound, hence of the MAP; 1e-6 plus rounding.
 * PSDD_MEAN_GAP: PSDD's mean gap to the LP optimum after 4000 iterations,
 *   relative to sum |scores|, on the binary graphs: the subgradient method
 *   converges as 1/sqrt(t); the measured means are 5e-4 (sqrt), 7e-4
 *   (Polyak), 5e-3 (decrease), the worst graphs (a KNAPSACK among scores of
 *   1e4) 0.05 and, for the decreasing rule, 0.15.
 * PSDD_GAP, MPLP_GAP: the largest gap on the DENSE and pairwise models
 *   (measured: 7e-4 and 8e-7).
 */
#define BOUND_TOL 1e-9
#define CERT_TOL 1.1e-6
#define PSDD_MEAN_GAP 1e-2
#define PSDD_GAP 1e-2
#define MPLP_GAP 1e-5

typedef struct tally {
    int graphs, certified, at_optimum, decoded;
    double worst_gap, sum_gap;
} tally;

static void print_tally(const char *name, const tally *t) {
    printf("%s: %d graphs, %d certified, %d at the LP optimum (gap <= 1e-6), %d decoded, gap "
           "relative to sum |scores|: worst %.3g, mean %.3g\n",
           name, t->graphs, t->certified, t->at_optimum, t->decoded, t->worst_gap,
           t->sum_gap / (t->graphs ? t->graphs : 1));
}

/* Checks a solve's outcome against the LP optimum lp and the MAP (brute,
 * when map_feasible), x_value evaluating an assignment with the tests'
 * semantics. Returns the number of failures (messages printed). */
typedef double (*value_fn)(const void *graph, const double *u);

static int check_dual(const char *name, concord_solver *s, int rc, const concord_info *info,
                      double lp, bool map_feasible, double brute, double l1, value_fn value,
                      const void *graph, double gap_limit, tally *t) {
    int failures = 0;
    t->graphs += 1;
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) {
        printf("%s: code %d (%s)\n", name, rc, concord_solver_last_error(s));
        return 1;
    }
    const double gap = (info->upper_bound - lp) / (l1 > 0.0 ? l1 : 1.0);
    if (gap < -BOUND_TOL) {
        printf("%s: bound %.17g below the LP optimum %.17g\n", name, info->upper_bound, lp);
        failures += 1;
    }
    if (gap > gap_limit) {
        printf("%s: bound %.17g, LP optimum %.17g (gap %.3g of sum |scores|), status %s after %d "
               "iterations\n",
               name, info->upper_bound, lp, gap, concord_status_name(info->status),
               (int)info->iterations);
        failures += 1;
    }
    t->worst_gap = fmax(t->worst_gap, gap);
    t->sum_gap += fmax(gap, 0.0);
    t->at_optimum += gap <= 1e-6;
    if (info->status == CONCORD_STATUS_INTEGRAL) {
        t->certified += 1;
        const double v = value(graph, concord_solver_variables(s));
        if (!map_feasible || !(fabs(v - brute) <= CERT_TOL * l1) ||
            !(fabs(info->value - v) <= 1e-12 * l1 + 1e-300)) {
            printf("%s: certified value %.17g (its assignment's %.17g), MAP %.17g\n", name,
                   info->value, v, brute);
            failures += 1;
        }
    }
    concord_decoding dec;
    if (concord_solver_decode(s, &dec) != CONCORD_OK) {
        printf("%s: decoding failed: %s\n", name, concord_solver_last_error(s));
        return failures + 1;
    }
    if (dec.violated == 0) {
        t->decoded += 1;
        const double v = value(graph, concord_solver_decoded(s));
        if (!map_feasible || v > brute + 1e-12 * l1 || fabs(v - dec.value) > 1e-12 * l1 + 1e-300) {
            printf("%s: decoded value %.17g (its assignment's %.17g), MAP %.17g\n", name,
                   dec.value, v, brute);
            failures += 1;
        }
    }
    return failures;
}

/* ---- value of an assignment by the tests' semantics ---------------------- */

static double ref_value_of(const void *graph, const double *u) {
    const ref_graph *g = graph;
    int x[REF_MAX_VARS];
    for (int i = 0; i < g->n_vars; ++i) x[i] = u[i] > 0.5;
    return ref_assignment_value(g, x);
}

static double mg_value_of(const void *graph, const double *u) {
    const mg_graph *g = graph;
    int x[MG_MAX_VARS];
    for (int i = 0; i < g->n_vars; ++i) x[i] = u[i] > 0.5;
    return mg_value(g, x);
}

/* ---- PSDD ------------------------------------------------------------------ */

/* A PSDD solve that ends "fractional" (CONCORD_OK) claims an LP-MAP
 * solution: it must lie in every factor's polytope (GLPK's distance, to
 * the solve's tolerance 1e-6 plus rounding) and its value must be GLPK's
 * LP optimum (to tol * sum |scores| of the bound, plus what the distance
 * allows). "stalled" must come with CONCORD_ENOTCONVERGED. Returns the
 * number of failures (messages printed). */
static int check_fractional_claim(const char *name, concord_solver *s, int rc,
                                  const concord_info *info, const ref_graph *g, double lp,
                                  double l1) {
    if (info->status == CONCORD_STATUS_STALLED && rc != CONCORD_ENOTCONVERGED) {
        printf("%s: stalled with code %d\n", name, rc);
        return 1;
    }
    if (info->status != CONCORD_STATUS_FRACTIONAL) return 0;
    const double distance =
        ref_graph_max_distance(g, concord_solver_variables(s), concord_solver_additionals(s), NULL);
    if (rc != CONCORD_OK || !(distance >= 0.0 && distance <= 2e-6) ||
        !(fabs(info->value - lp) <= 1e-5 * (l1 > 0.0 ? l1 : 1.0))) {
        printf("%s: fractional (code %d) at distance %.3g from the local polytope, value %.17g, "
               "LP optimum %.17g\n",
               name, rc, distance, info->value, lp);
        return 1;
    }
    return 0;
}

static void psdd_bounds_are_valid_and_approach_the_lp_optimum(void **state) {
    (void)state;
    static const concord_step_rule rules[] = {CONCORD_STEP_SQRT, CONCORD_STEP_DECREASE,
                                              CONCORD_STEP_POLYAK};
    static const char *const names[] = {"PSDD sqrt", "PSDD decrease", "PSDD Polyak"};
    test_rng rng = {31337};
    tally tallies[3] = {{0}};
    int failures = 0, shrank = 0, compared = 0;
    for (int n = 0; n < GRAPHS;) {
        ref_graph g;
        ref_random_graph(&rng, 14, &g);
        double lp;
        if (ref_local_lp(&g, &lp, NULL, NULL) != REF_LP_OPTIMAL) continue;
        double brute;
        const bool feasible = ref_brute_map(&g, &brute, NULL);
        const double l1 = ref_graph_score_l1(&g);
        concord_graph *cg = ref_build(&g);
        assert_non_null(cg);
        for (int r = 0; r < 3; ++r) {
            concord_solver *s = new_solver_or_fail(cg);
            concord_settings st;
            concord_default_settings(&st);
            st.psdd_step = rules[r];
            st.warm_start = false;
            st.max_iter = 100;
            concord_info early, info;
            concord_solver_psdd(s, &st, &early);
            st.max_iter = 4000;
            const int rc = concord_solver_psdd(s, &st, &info);
            char name[64];
            snprintf(name, sizeof name, "%s, graph %d", names[r], n);
            const int f = check_dual(name, s, rc, &info, lp, feasible, brute, l1, ref_value_of,
                                     &g, INFINITY, &tallies[r]) +
                          check_fractional_claim(name, s, rc, &info, &g, lp, l1);
            if (early.status == CONCORD_STATUS_MAX_ITER && info.status != CONCORD_STATUS_INTEGRAL) {
                compared += 1;
                shrank += info.upper_bound < early.upper_bound;
                if (info.upper_bound > early.upper_bound) {
                    printf("%s: bound %.17g after 4000 iterations, %.17g after 100\n", name,
                           info.upper_bound, early.upper_bound);
                    failures += 1;
                }
            }
            if (f) ref_graph_print(stdout, &g);
            failures += f;
            concord_solver_free(s);
        }
        concord_graph_free(cg);
        n += 1;
    }
    for (int r = 0; r < 3; ++r) print_tally(names[r], &tallies[r]);
    printf("PSDD: the bound of 4000 iterations below that of 100 on %d of %d unfinished runs\n",
           shrank, compared);
    assert_int_equal(failures, 0);
    assert_true(shrank >= compared * 9 / 10);
    for (int r = 0; r < 3; ++r)
        assert_true(tallies[r].sum_gap / tallies[r].graphs <= PSDD_MEAN_GAP);
}

/* A lone KNAPSACK: PSDD's one copy agrees with itself at once, on the
 * fractional knapsack's vertex. That point solves LP-MAP (GLPK's optimum)
 * but proves no assignment a MAP: rounded, it gives (1, 0) of value 2
 * below the MAP (0, 1) of 2.5 (brute force), or (1, 1), which the
 * knapsack forbids. */
static void psdd_agreeing_on_a_fractional_vertex_certifies_no_map(void **state) {
    (void)state;
    const ref_graph graphs[] = {
        {.n_vars = 2, .theta = {2.0, 2.5}, .n_factors = 1, .factors = {
            {.kind = REF_KNAPSACK, .degree = 2, .vars = {0, 1}, .budget = 1.5,
             .costs = {1.0, 1.5}}}},
        {.n_vars = 2, .theta = {1.0, 1.0}, .n_factors = 1, .factors = {
            {.kind = REF_KNAPSACK, .degree = 2, .vars = {0, 1}, .budget = 1.5,
             .costs = {1.0, 1.0}}}},
    };
    tally t = {0};
    for (size_t k = 0; k < sizeof graphs / sizeof graphs[0]; ++k) {
        const ref_graph *g = &graphs[k];
        double lp, brute;
        assert_int_equal(ref_local_lp(g, &lp, NULL, NULL), REF_LP_OPTIMAL);
        const bool feasible = ref_brute_map(g, &brute, NULL);
        const double l1 = ref_graph_score_l1(g);
        concord_graph *cg = ref_build(g);
        assert_non_null(cg);
        concord_solver *s = new_solver_or_fail(cg);
        concord_info info;
        const int rc = concord_solver_psdd(s, NULL, &info);
        assert_int_equal(check_dual("PSDD on a lone KNAPSACK", s, rc, &info, lp, feasible, brute,
                                    l1, ref_value_of, g, 1e-12, &t),
                         0);
        assert_int_equal(rc, CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_FRACTIONAL);
        assert_true(fabs(info.value - lp) <= 1e-12 * l1);
        concord_solver_free(s);
        concord_graph_free(cg);
    }
}

/* XOR(x1, x2) and PAIR(x2, x1) scoring 2, theta = (-2, 0, -1): LP-MAP is
 * 0.5 at x1 = x2 = 1/2 with both on half the time. PSDD's bound stalls
 * while the step-weighted average still breaks the XOR (u1 + u2 = 1.015
 * after 1782 iterations) and puts both on more often than either: that
 * point, above the bound, is no LP-MAP solution, and the run must not
 * claim one. */
static void psdd_claims_no_solution_its_average_has_not_reached(void **state) {
    (void)state;
    const ref_graph g = {
        .n_vars = 3, .theta = {-2.0, 0.0, -1.0}, .n_factors = 2, .factors = {
            {.kind = REF_XOR, .degree = 2, .vars = {1, 2}},
            {.kind = REF_PAIR, .degree = 2, .vars = {2, 1}, .score = 2.0}}};
    double lp, brute;
    assert_int_equal(ref_local_lp(&g, &lp, NULL, NULL), REF_LP_OPTIMAL);
    const bool feasible = ref_brute_map(&g, &brute, NULL);
    const double l1 = ref_graph_score_l1(&g);
    concord_graph *cg = ref_build(&g);
    assert_non_null(cg);
    concord_solver *s = new_solver_or_fail(cg);
    concord_info info;
    const int rc = concord_solver_psdd(s, NULL, &info);
    tally t = {0};
    assert_int_equal(check_dual("PSDD on XOR and PAIR", s, rc, &info, lp, feasible, brute, l1,
                                ref_value_of, &g, INFINITY, &t) +
                         check_fractional_claim("PSDD on XOR and PAIR", s, rc, &info, &g, lp, l1),
                     0);
    assert_true(info.status == CONCORD_STATUS_FRACTIONAL || info.status == CONCORD_STATUS_STALLED);
    concord_solver_free(s);
    concord_graph_free(cg);
}

/* Warm-started from AD3's multipliers, PSDD's steps stay near an optimum
 * and its step-weighted average often solves LP-MAP to tol: it then ends
 * "fractional" with that average, which GLPK must place in the local
 * polytope at the LP optimum, and with the average's own residual. */
static void psdd_claims_an_average_that_solves_lp_map(void **state) {
    (void)state;
    test_rng rng = {4242};
    int claims = 0, failures = 0;
    for (int n = 0; n < 400; ++n) {
        ref_graph g;
        ref_random_graph(&rng, 14, &g);
        double lp;
        if (ref_local_lp(&g, &lp, NULL, NULL) != REF_LP_OPTIMAL) continue;
        const double l1 = ref_graph_score_l1(&g);
        concord_graph *cg = ref_build(&g);
        assert_non_null(cg);
        concord_solver *s = new_solver_or_fail(cg);
        concord_info info;
        concord_solver_map(s, NULL, &info);
        const int rc = concord_solver_psdd(s, NULL, &info);
        if (info.status == CONCORD_STATUS_FRACTIONAL && !info.integral) {
            claims += 1;
            char name[64];
            snprintf(name, sizeof name, "warm PSDD, graph %d", n);
            const int f = check_fractional_claim(name, s, rc, &info, &g, lp, l1);
            if (f || !(info.primal_residual <= 1e-6)) {
                printf("%s: primal residual %.3g\n", name, info.primal_residual);
                ref_graph_print(stdout, &g);
                failures += 1;
            }
        }
        concord_solver_free(s);
        concord_graph_free(cg);
    }
    printf("warm PSDD: %d averages claimed as LP-MAP solutions\n", claims);
    assert_int_equal(failures, 0);
    assert_true(claims >= 8);
}

/* A triangle of ATMOSTONE factors scored 1 each: LP-MAP is 1.5 at
 * (1/2, 1/2, 1/2), each factor half (1, 0) and half (0, 1), which is the
 * distribution AD3 leaves behind; the MAP is 1 (one variable on). PSDD's
 * average and MPLP's assignment come with no distribution: asking for one
 * is an error, not the active sets of some earlier solve. */
static void distributions_follow_only_the_solves_that_have_them(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, 3, (double[]){1.0, 1.0, 1.0}, NULL), CONCORD_OK);
    for (int32_t k = 0; k < 3; ++k)
        assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, 2,
                                           (int32_t[]){k, (k + 1) % 3}, NULL, NULL),
                         CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_info info;
    int32_t count;
    assert_int_equal(concord_solver_map(s, NULL, &info), CONCORD_OK);
    assert_int_equal(concord_solver_factor_distribution(s, 0, &count), CONCORD_OK);
    double mean[2] = {0.0, 0.0};
    for (int32_t k = 0; k < count; ++k) {
        double weight, u[2];
        assert_int_equal(concord_solver_distribution_entry(s, k, &weight, u, NULL), CONCORD_OK);
        mean[0] += weight * u[0];
        mean[1] += weight * u[1];
    }
    assert_true(fabs(mean[0] - 0.5) <= 1e-6 && fabs(mean[1] - 0.5) <= 1e-6);

    concord_solver_psdd(s, NULL, &info);
    assert_true(info.status != CONCORD_STATUS_INTEGRAL);
    assert_int_equal(concord_solver_factor_distribution(s, 0, &count), CONCORD_EINVAL);
    /* MPLP's descent stops with an assignment it cannot certify (the MAP,
     * 1, is below the LP bound 1.5): stalled, not converged */
    assert_int_equal(concord_solver_mplp(s, NULL, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_STALLED);
    assert_true(info.integral && info.upper_bound >= 1.5 - 1e-9);
    assert_int_equal(concord_solver_factor_distribution(s, 0, &count), CONCORD_EINVAL);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* 49 copies of one KNAPSACK (costs 1 and 1.5, budget 1.5) over x0, x1
 * scored (2, 2.5): every copy takes the fractional knapsack's vertex
 * (1, 1/3) at once (greedy by score per cost, x0 first), which solves
 * LP-MAP with value 2 + 2.5 / 3, so PSDD ends fractional there in one
 * iteration. The mean of 49 equal copies, 49 (1/3) times 1/49, is not
 * 1/3 in floating point: agreement is judged on the copies themselves. */
static void psdd_sees_copies_agree_whatever_the_degree(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, 2, (double[]){2.0, 2.5}, NULL), CONCORD_OK);
    for (int k = 0; k < 49; ++k)
        assert_int_equal(concord_add_knapsack(g, 2, (int32_t[]){0, 1}, NULL,
                                              (double[]){1.0, 1.5}, 1.5, NULL),
                         CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_info info;
    assert_int_equal(concord_solver_psdd(s, NULL, &info), CONCORD_OK);
    assert_int_equal(info.status, CONCORD_STATUS_FRACTIONAL);
    assert_int_equal(info.iterations, 1);
    assert_true(fabs(info.value - (2.0 + 2.5 / 3.0)) <= 1e-12);
    const double *u = concord_solver_variables(s);
    assert_true(u[0] == 1.0 && fabs(u[1] - 1.0 / 3.0) <= 1e-15);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* ---- MPLP and PSDD on pairwise and DENSE models ---------------------------- */

/* Whether some PAIR joins two states of one multi-variable. */
static bool pair_within_a_multi_variable(const mg_graph *g) {
    for (int k = 0; k < g->n_factors; ++k) {
        const mg_factor *f = &g->factors[k];
        if (f->kind != MG_PAIR) continue;
        for (int m = 0; m < g->n_multi; ++m) {
            const int lo = g->multi_first[m], hi = lo + g->multi_states[m];
            if (f->vars[0] >= lo && f->vars[0] < hi && f->vars[1] >= lo && f->vars[1] < hi)
                return true;
        }
    }
    return false;
}

static void both_bound_dense_and_pairwise_models(void **state) {
    (void)state;
    test_rng rng = {8086};
    tally mplp = {0}, psdd = {0};
    int failures = 0;
    for (int n = 0; n < GRAPHS;) {
        mg_graph g;
        mg_random_graph(&rng, (1u << MG_DENSE) | (1u << MG_PAIR), &g);
        if (pair_within_a_multi_variable(&g)) continue; /* MPLP refuses those */
        double lp, brute;
        if (mg_local_lp(&g, &lp) != REF_LP_OPTIMAL) continue;
        const bool feasible = mg_brute_map(&g, &brute, NULL);
        const double l1 = mg_score_l1(&g);
        concord_graph *cg = mg_build(&g);
        assert_non_null(cg);
        concord_solver *s = new_solver_or_fail(cg);
        concord_settings st;
        concord_default_settings(&st);
        st.max_iter = 2000;
        concord_info info;
        char name[64];
        snprintf(name, sizeof name, "MPLP, graph %d", n);
        int rc = concord_solver_mplp(s, &st, &info);
        int f = check_dual(name, s, rc, &info, lp, feasible, brute, l1, mg_value_of, &g, MPLP_GAP,
                           &mplp);
        st.max_iter = 4000;
        snprintf(name, sizeof name, "PSDD, graph %d", n);
        rc = concord_solver_psdd(s, &st, &info);
        f += check_dual(name, s, rc, &info, lp, feasible, brute, l1, mg_value_of, &g, PSDD_GAP,
                        &psdd);
        if (f) mg_print(&g);
        failures += f;
        concord_solver_free(s);
        concord_graph_free(cg);
        n += 1;
    }
    print_tally("MPLP", &mplp);
    print_tally("PSDD", &psdd);
    assert_int_equal(failures, 0);
    /* coordinate descent reaches the optimum on most of these graphs */
    assert_true(mplp.at_optimum >= GRAPHS * 3 / 4);
}

/* MPLP on graphs of logic factors over binary variables (each link its
 * own unit): bounds valid, the same checks. */
static void mplp_bounds_logic_graphs(void **state) {
    (void)state;
    test_rng rng = {1984};
    tally t = {0};
    int failures = 0;
    for (int n = 0; n < GRAPHS;) {
        ref_graph g;
        ref_random_graph(&rng, 14, &g);
        bool knapsack = false;
        for (int k = 0; k < g.n_factors; ++k) knapsack |= g.factors[k].kind == REF_KNAPSACK;
        double lp;
        if (knapsack || ref_local_lp(&g, &lp, NULL, NULL) != REF_LP_OPTIMAL) continue;
        double brute;
        const bool feasible = ref_brute_map(&g, &brute, NULL);
        concord_graph *cg = ref_build(&g);
        concord_solver *s = new_solver_or_fail(cg);
        concord_settings st;
        concord_default_settings(&st);
        st.max_iter = 2000;
        concord_info info;
        char name[64];
        snprintf(name, sizeof name, "MPLP (logic), graph %d", n);
        const int rc = concord_solver_mplp(s, &st, &info);
        const int f = check_dual(name, s, rc, &info, lp, feasible, brute, ref_graph_score_l1(&g),
                                 ref_value_of, &g, INFINITY, &t);
        if (f) ref_graph_print(stdout, &g);
        failures += f;
        concord_solver_free(s);
        concord_graph_free(cg);
        n += 1;
    }
    print_tally("MPLP (logic)", &t);
    assert_int_equal(failures, 0);
}

/* AD3 and branch and bound warm-started from MPLP's multipliers (the
 * default) reach GLPK's LP optimum and the brute-force MAP: MPLP's
 * multipliers do not sum to zero per variable, which an ADMM warm start
 * needs. */
static void ad3_and_exact_after_mplp_reach_the_optimum(void **state) {
    (void)state;
    test_rng rng = {77};
    for (int n = 0; n < 30;) {
        ref_graph g;
        ref_random_graph(&rng, 10, &g);
        bool knapsack = false;
        for (int k = 0; k < g.n_factors; ++k) knapsack |= g.factors[k].kind == REF_KNAPSACK;
        double lp, brute;
        if (knapsack || ref_local_lp(&g, &lp, NULL, NULL) != REF_LP_OPTIMAL ||
            !ref_brute_map(&g, &brute, NULL))
            continue;
        const double l1 = ref_graph_score_l1(&g);
        concord_graph *cg = ref_build(&g);
        concord_solver *s = new_solver_or_fail(cg);
        concord_info info;
        concord_solver_mplp(s, NULL, NULL);
        assert_int_equal(concord_solver_map(s, NULL, &info), CONCORD_OK);
        assert_true(fabs(info.upper_bound - lp) <= CERT_TOL * l1);
        concord_solver_mplp(s, NULL, NULL);
        assert_int_equal(concord_solver_exact(s, NULL, &info), CONCORD_OK);
        assert_true(fabs(info.value - brute) <= CERT_TOL * l1);
        concord_solver_free(s);
        concord_graph_free(cg);
        n += 1;
    }
}

/* MPLP where beliefs tie: two variables that must differ (a table of
 * probabilities 1 2 / 2 1) and a BUDGET of 2 over three variables scored
 * alike. Rounding the tied beliefs unit by unit gives a worse assignment
 * (both variables in their first state; no variable on), whose value never
 * meets the bound; the decoder's local search finds one that does, so the
 * solve is certified. The optima are the enumerated ones. */
static void mplp_certifies_optima_its_tied_beliefs_hide(void **state) {
    (void)state;
    static const char differ[] = "MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 2 2 1\n";
    char error[256];
    concord_graph *g;
    assert_int_equal(concord_read_uai_buffer(differ, sizeof differ - 1, "differ", NULL, 0, NULL,
                                             &g, error, sizeof error),
                     CONCORD_OK);
    concord_graph *budget = concord_graph_new();
    const double ones[3] = {1.0, 1.0, 1.0};
    assert_int_equal(concord_add_variables(budget, 3, ones, NULL), CONCORD_OK);
    assert_int_equal(concord_add_budget(budget, 3, (int32_t[]){0, 1, 2}, NULL, 2.0, false, NULL),
                     CONCORD_OK);
    const double optimum[2] = {log(2.0), 2.0}; /* max over the 4 and the 8 assignments */
    concord_graph *graphs[2] = {g, budget};
    for (int k = 0; k < 2; ++k) {
        concord_solver *s = new_solver_or_fail(graphs[k]);
        concord_info info;
        assert_int_equal(concord_solver_mplp(s, NULL, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        assert_true(fabs(info.value - optimum[k]) <= 1e-12);
        assert_true(fabs(info.upper_bound - optimum[k]) <= 1e-9);
        concord_solver_free(s);
        concord_graph_free(graphs[k]);
    }
}

static void mplp_refuses_what_it_cannot_take(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t x;
    assert_int_equal(concord_add_variables(g, 3, NULL, &x), CONCORD_OK);
    const int32_t vars[3] = {x, x + 1, x + 2};
    const double costs[3] = {1, 2, 3};
    assert_int_equal(concord_add_knapsack(g, 3, vars, NULL, costs, 2.0, NULL), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_mplp(s, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "fractional vertices"));
    concord_solver_free(s);
    concord_graph_free(g);

    g = concord_graph_new();
    int32_t a;
    assert_int_equal(concord_add_multi_variable(g, 3, NULL, true, &a), CONCORD_OK);
    const int32_t two[2] = {a, a + 1};
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 2, two, NULL, NULL), CONCORD_OK);
    s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_mplp(s, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "two states"));
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Steps too small to move the multipliers stall PSDD's bound without
 * convergence: on XOR(x0, x1, x2) and PAIR(x2, x3) the factors' MAPs
 * disagree on x2, their average (x2 = 1/2) lies outside the local
 * polytope and is worth 1.45, above the optimum 1.1 (LP-MAP = MAP on this
 * tree; enumerated below). Such a stall must not be reported as converged. */
static void a_bound_stalled_by_tiny_steps_is_not_convergence(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double theta[4] = {0.5, -0.2, 0.3, 0.1};
    concord_add_variables(g, 4, theta, NULL);
    int32_t xor_vars[3] = {0, 1, 2};
    concord_add_logic(g, CONCORD_XOR, 3, xor_vars, NULL, NULL);
    concord_add_pair(g, 2, 3, 0.7, NULL);
    /* the MAP by enumeration: exactly one of x0..x2, x3 free */
    double best = -INFINITY;
    for (int one = 0; one < 3; ++one)
        for (int x3 = 0; x3 <= 1; ++x3)
            best = fmax(best, theta[one] + 0.1 * x3 + (one == 2 && x3 ? 0.7 : 0.0));
    assert_true(fabs(best - 1.1) < 1e-12);
    concord_solver *s;
    assert_int_equal(concord_solver_new(g, &s), CONCORD_OK);
    concord_settings st;
    concord_default_settings(&st);
    st.psdd_eta = 1e-11;
    st.max_iter = 5000;
    st.warm_start = false;
    concord_info info;
    int rc = concord_solver_psdd(s, &st, &info);
    assert_true(info.upper_bound >= best - 1e-12);
    if (info.status == CONCORD_STATUS_FRACTIONAL || info.status == CONCORD_STATUS_INTEGRAL) {
        assert_int_equal(rc, CONCORD_OK);
        assert_true(info.value <= best + 1e-6);
    } else {
        assert_int_equal(rc, CONCORD_ENOTCONVERGED);
    }
    /* the time limit still holds while stalls do not count */
    st.max_iter = 1000000000;
    st.time_limit = 0.05;
    assert_int_equal(concord_solver_psdd(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_TIME_LIMIT);
    concord_solver_free(s);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(psdd_bounds_are_valid_and_approach_the_lp_optimum),
        cmocka_unit_test(psdd_agreeing_on_a_fractional_vertex_certifies_no_map),
        cmocka_unit_test(psdd_sees_copies_agree_whatever_the_degree),
        cmocka_unit_test(psdd_claims_no_solution_its_average_has_not_reached),
        cmocka_unit_test(distributions_follow_only_the_solves_that_have_them),
        cmocka_unit_test(psdd_claims_an_average_that_solves_lp_map),
        cmocka_unit_test(both_bound_dense_and_pairwise_models),
        cmocka_unit_test(mplp_bounds_logic_graphs),
        cmocka_unit_test(mplp_refuses_what_it_cannot_take),
        cmocka_unit_test(mplp_certifies_optima_its_tied_beliefs_hide),
        cmocka_unit_test(ad3_and_exact_after_mplp_reach_the_optimum),
        cmocka_unit_test(a_bound_stalled_by_tiny_steps_is_not_convergence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
