/*
 * The public API on small graphs whose answers are known by construction:
 * building, errors on bad arguments, solving, re-solving with new scores.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "concord.h"
#include "testutil.h"

/* An XOR alone picks the best variable: the LP is the simplex, whose
 * vertices are the one-hot assignments. */
static void xor_alone_selects_the_best_variable(void **state) {
    (void)state;
    test_rng rng = {1};
    for (int trial = 0; trial < 50; ++trial) {
        concord_graph *g = concord_graph_new();
        assert_non_null(g);
        int n = 2 + rng_int(&rng, 6);
        double scores[8];
        int32_t vars[8];
        int best = 0;
        for (int i = 0; i < n; ++i) {
            scores[i] = rng_normal(&rng);
            vars[i] = i;
            if (scores[i] > scores[best]) best = i;
        }
        assert_int_equal(concord_add_variables(g, n, scores, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, n, vars, NULL, NULL), CONCORD_OK);
        concord_solver *solver = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        const double *u = concord_solver_variables(solver);
        for (int i = 0; i < n; ++i) assert_true(u[i] == (i == best ? 1.0 : 0.0));
        assert_true(fabs(info.value - scores[best]) <= 1e-12);
        assert_true(fabs(info.upper_bound - scores[best]) <= 1e-6 * (1 + fabs(scores[best])));
        concord_solver_free(solver);
        concord_graph_free(g);
    }
}

/* A cold solve depends on the graph and the settings only: solving again,
 * even after solves in other modes and with other settings, repeats the
 * first solve bit for bit (the active sets of the sequence factor forget
 * their weights and numerical history on each cold solve). */
static void repeated_solves_are_identical(void **state) {
    (void)state;
    enum { L = 30, K = 10 };
    test_rng rng = {7};
    double theta[L * K], transitions[K + (L - 1) * K * K + K];
    int32_t states[L], vars[L * K], column[L];
    for (int i = 0; i < L * K; ++i) theta[i] = rng_normal(&rng), vars[i] = i;
    for (size_t i = 0; i < sizeof transitions / sizeof transitions[0]; ++i)
        transitions[i] = rng_normal(&rng);
    for (int p = 0; p < L; ++p) states[p] = K;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, L * K, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_sequence(g, L, states, vars, transitions, NULL), CONCORD_OK);
    for (int k = 0; k < K; ++k) {
        for (int p = 0; p < L; ++p) column[p] = p * K + k;
        assert_int_equal(concord_add_budget(g, L, column, NULL, 4, false, NULL), CONCORD_OK);
    }
    concord_solver *solver = new_solver_or_fail(g);
    concord_settings cold;
    concord_default_settings(&cold);
    cold.warm_start = false;
    concord_info first, again;
    double u[L * K];
    assert_int_equal(concord_solver_sparse(solver, &cold, &first), CONCORD_OK);
    assert_true(first.iterations > 1);
    memcpy(u, concord_solver_variables(solver), sizeof u);
    concord_settings other = cold;
    other.eta = 1.0;
    other.acceleration = 0;
    assert_int_equal(concord_solver_sparse(solver, &other, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_map(solver, NULL, NULL), CONCORD_OK);
    for (int round = 0; round < 2; ++round) {
        assert_int_equal(concord_solver_sparse(solver, &cold, &again), CONCORD_OK);
        assert_int_equal(again.iterations, first.iterations);
        assert_memory_equal(concord_solver_variables(solver), u, sizeof u);
    }
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* Scores change between solves without rebuilding; each solve answers for
 * the scores it was given. */
static void resolving_with_new_scores_uses_them(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double s[3] = {1.0, 0.0, 0.0};
    int32_t vars[3] = {0, 1, 2};
    concord_add_variables(g, 3, s, NULL);
    concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL);
    concord_solver *solver = new_solver_or_fail(g);
    for (int k = 0; k < 3; ++k) {
        double t[3] = {0.0, 0.0, 0.0};
        t[k] = 2.0;
        assert_int_equal(concord_set_variable_scores(g, 0, 3, t), CONCORD_OK);
        assert_int_equal(concord_solver_map(solver, NULL, NULL), CONCORD_OK);
        const double *u = concord_solver_variables(solver);
        for (int i = 0; i < 3; ++i) assert_true(u[i] == (i == k ? 1.0 : 0.0));
    }
    concord_solver_free(solver);
    concord_graph_free(g);
}

static void bad_arguments_are_rejected_with_a_message(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double nan_score = NAN;
    assert_int_equal(concord_add_variables(g, 1, &nan_score, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "not finite"));
    assert_int_equal(concord_num_variables(g), 0);
    concord_add_variables(g, 3, NULL, NULL);
    int32_t repeated[2] = {1, 1};
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 2, repeated, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "more than once"));
    int32_t out_of_range[2] = {0, 3};
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 2, out_of_range, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "out of range"));
    int32_t ok[2] = {0, 1};
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 0, ok, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, -1.0, false, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, 1.5, false, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, 3.0, true, NULL), CONCORD_EINVAL);
    double bad_costs[2] = {1.0, -2.0};
    assert_int_equal(concord_add_knapsack(g, 2, ok, NULL, bad_costs, 1.0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_pair(g, 0, 0, 1.0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_pair(g, 0, 1, INFINITY, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 0);
    concord_settings settings;
    concord_default_settings(&settings);
    concord_solver *solver = new_solver_or_fail(g);
    for (int k = 0; k < 3; ++k) {
        settings.tol = (double[]){-1.0, 0.0, 1.0}[k];
        assert_int_equal(concord_solver_map(solver, &settings, NULL), CONCORD_EINVAL);
        assert_non_null(strstr(concord_solver_last_error(solver), "tol"));
    }
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* Setting no scores at all is fine (and hands memcpy no null pointer,
 * which UBSan's build of this test would report). */
static void setting_zero_scores_is_a_no_op(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double s[2] = {1.0, 2.0};
    concord_add_variables(g, 2, s, NULL);
    int32_t vars[2] = {0, 1};
    concord_add_pair(g, 0, 1, 0.5, NULL);
    concord_add_logic(g, CONCORD_OR, 2, vars, NULL, NULL);
    assert_int_equal(concord_set_variable_scores(g, 0, 0, NULL), CONCORD_OK);
    assert_int_equal(concord_set_additional_scores(g, 1, 0, NULL), CONCORD_OK);
    assert_true(concord_variable_scores(g)[1] == 2.0);
    assert_int_equal(concord_set_variable_scores(g, 0, 1, NULL), CONCORD_EINVAL);
    concord_graph_free(g);
}

/* A graph with one factor is solved factor by factor (SparseMAP itself),
 * and still within max_iter rounds of max_inner_iter oracle calls: a
 * 50 x 20 SEQUENCE needs more than 2 x 1, so it stops there. */
static void the_iteration_cap_holds_on_a_graph_of_one_factor(void **state) {
    (void)state;
    enum { L = 50, K = 20 };
    test_rng rng = {3};
    static double theta[L * K], transitions[K + (L - 1) * K * K + K];
    int32_t states[L], vars[L * K];
    for (int i = 0; i < L * K; ++i) theta[i] = 2.0 * rng_uniform(&rng) - 1.0, vars[i] = i;
    for (size_t i = 0; i < sizeof transitions / sizeof transitions[0]; ++i)
        transitions[i] = 2.0 * rng_uniform(&rng) - 1.0;
    for (int p = 0; p < L; ++p) states[p] = K;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, L * K, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_sequence(g, L, states, vars, transitions, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 2;
    st.max_inner_iter = 1;
    concord_info info;
    assert_int_equal(concord_solver_sparse(solver, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_MAX_ITER);
    assert_true(info.iterations <= 2);
    assert_true(info.oracle_calls <= 2);
    concord_solver_free(solver);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setting_zero_scores_is_a_no_op),
        cmocka_unit_test(the_iteration_cap_holds_on_a_graph_of_one_factor),
        cmocka_unit_test(xor_alone_selects_the_best_variable),
        cmocka_unit_test(resolving_with_new_scores_uses_them),
        cmocka_unit_test(repeated_solves_are_identical),
        cmocka_unit_test(bad_arguments_are_rejected_with_a_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
