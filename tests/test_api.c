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
    /* refused by its degree before the array is read (it once returned 0
     * after checking the links, with no factor added) */
    assert_int_equal(concord_add_logic(g, CONCORD_OR, INT32_MAX / 2 + 1, ok, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "links, more than"));
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, -1.0, false, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, 1.5, false, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_budget(g, 2, ok, NULL, 3.0, true, NULL), CONCORD_EINVAL);
    double bad_costs[2] = {1.0, -2.0};
    assert_int_equal(concord_add_knapsack(g, 2, ok, NULL, bad_costs, 1.0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_pair(g, 0, 0, 1.0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_pair(g, 0, 1, INFINITY, NULL), CONCORD_EINVAL);
    const int32_t two_states[1] = {2};
    const double forbidden[2] = {-INFINITY, -INFINITY};
    assert_int_equal(concord_add_dense(g, 1, two_states, ok, forbidden, NULL),
                     CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g),
                           "DENSE factor: every configuration uses a forbidden (-inf) output"));
    assert_int_equal(concord_num_factors(g), 0);
    /* the dynamic-programming families forbid -inf outputs too, and refuse
     * a factor that forbids every configuration; the others refuse -inf */
    const double all_forbidden[6] = {-INFINITY, -INFINITY, -INFINITY,
                                     -INFINITY, -INFINITY, -INFINITY};
    const int32_t one_position[1] = {2};
    assert_int_equal(concord_add_sequence(g, 1, one_position, ok, all_forbidden, NULL),
                     CONCORD_EINFEASIBLE);
    assert_int_equal(concord_add_head_automaton(g, 2, ok, all_forbidden, NULL),
                     CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g), "HEAD_AUTOMATON factor: every configuration"));
    const int32_t root_and_child[2] = {-1, 0};
    assert_int_equal(concord_add_binary_tree(g, 2, root_and_child, ok, all_forbidden, NULL),
                     CONCORD_EINFEASIBLE);
    assert_int_equal(concord_add_sequence_compressor(g, 1, ok, all_forbidden, NULL),
                     CONCORD_EINFEASIBLE);
    assert_int_equal(concord_num_factors(g), 0);
    assert_int_equal(concord_num_additionals(g), 0);
    /* one allowed output is enough: a head automaton of two modifiers that
     * must take both (only the chain 0 -> 1 -> 2 -> 3 is left) */
    double only_both[6] = {0.5, -INFINITY, -INFINITY, 0.25, -INFINITY, 0.0};
    int32_t automaton = -1;
    assert_int_equal(concord_add_head_automaton(g, 2, ok, only_both, &automaton), CONCORD_OK);
    concord_info info;
    concord_solver *only = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(only, NULL, &info), CONCORD_OK);
    assert_true(concord_solver_variables(only)[0] == 1.0 && concord_solver_variables(only)[1] == 1.0);
    assert_true(info.value == 0.75);
    concord_solver_free(only);
    /* later scores: -inf only where forbidden, and whatever is set there
     * reads as 0 (so it enters neither the penalty's scale nor a value) */
    const double minus_infinity[1] = {-INFINITY};
    assert_int_equal(concord_set_additional_scores(g, 0, 1, minus_infinity), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "additional score 0 (-inf) is not finite"));
    const double later[6] = {1.0, -INFINITY, 7.0, 2.0, -INFINITY, 3.0};
    assert_int_equal(concord_set_additional_scores(g, 0, 6, later), CONCORD_OK);
    const double stored[6] = {1.0, 0.0, 0.0, 2.0, 0.0, 3.0};
    for (int k = 0; k < 6; ++k) assert_true(concord_additional_scores(g)[k] == stored[k]);
    assert_int_equal(concord_set_additional_scores(g, 2, 3, later + 2), CONCORD_OK);
    assert_true(concord_additional_scores(g)[2] == 0.0 && concord_additional_scores(g)[3] == 2.0);
    only = new_solver_or_fail(g);
    const double solver_later[6] = {-INFINITY, 0.0, 0.0, 0.0, 0.0, 0.0};
    assert_int_equal(concord_solver_set_scores(only, NULL, solver_later), CONCORD_EINVAL);
    assert_int_equal(concord_solver_set_scores(only, NULL, later), CONCORD_OK);
    for (int k = 0; k < 6; ++k)
        assert_true(concord_solver_additional_scores(only)[k] == stored[k]);
    const double zero_links[2] = {0.0, 0.0};
    double value = 0.0;
    assert_int_equal(concord_solver_factor_map(only, automaton, zero_links, later, NULL, NULL,
                                               &value),
                     CONCORD_OK);
    assert_true(value == 6.0); /* 1 + 2 + 3: the only chain left */
    assert_int_equal(concord_solver_factor_map(only, automaton, zero_links, solver_later, NULL,
                                               NULL, &value),
                     CONCORD_EINVAL);
    concord_solver_free(only);
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

/* A NULL array or an oversize argument is named as such in the message,
 * not reported as some other fault ("[0, 1) out of range", "degree 0"),
 * and so are the readers' NULL arguments, which left the message empty. */
static void null_arrays_and_oversize_arguments_are_named_in_the_message(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 4, NULL, NULL), CONCORD_OK);
    const int32_t vars[4] = {0, 1, 2, 3}, states[3] = {2, 2, 2};
    assert_int_equal(concord_set_variable_scores(g, 0, 1, NULL), CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "variable scores: NULL array");
    assert_int_equal(concord_set_regularization(g, 0, 1, NULL), CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "regularization weights: NULL array");
    assert_int_equal(concord_add_knapsack(g, 3, vars, NULL, NULL, 1.0, NULL), CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "KNAPSACK factor: NULL costs");
    assert_int_equal(concord_add_sequence(g, 1, NULL, vars, NULL, NULL), CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "SEQUENCE factor: NULL num_states");
    assert_int_equal(concord_add_dense(g, 2, NULL, vars, NULL, NULL), CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "DENSE factor: NULL num_states");
    assert_int_equal(concord_add_general_tree(g, 3, states, NULL, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(concord_last_error(g), "GENERAL_TREE factor: NULL parents array");
    assert_int_equal(concord_add_matching(g, 65536, 65536, vars, 0, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "rows x cols at most"));
    assert_int_equal(concord_num_factors(g), 0);
    concord_graph_free(g);
    char error[128];
    concord_graph **graphs = NULL, *graph = NULL;
    size_t count = 0;
    assert_int_equal(concord_read_buffer(NULL, 5, "x.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                         error, sizeof error, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(error, "data is NULL but size is not 0");
    assert_int_equal(concord_read_file(NULL, CONCORD_FORMAT_AUTO, &graphs, &count, error,
                                       sizeof error, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(error, "path is NULL");
    assert_int_equal(concord_read_buffer("1\n0\n0\n", 6, "x.fg", CONCORD_FORMAT_FG, NULL,
                                         &count, error, sizeof error, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(error, "graphs or count is NULL"));
    assert_int_equal(concord_read_uai_buffer(NULL, 10, "m.uai", NULL, 0, NULL, &graph, error,
                                             sizeof error),
                     CONCORD_EINVAL);
    assert_non_null(strstr(error, "NULL but its size is not 0"));
}

/* concord_score_refusal refuses exactly what its documentation says (a
 * score is a finite 0 or of magnitude within [1e-300, 1e300]) and exactly
 * what the calls taking variable scores refuse, whose messages carry its
 * words. */
static void score_refusal_is_the_builders_and_set_scores_rule(void **state) {
    (void)state;
    const double values[] = {0.0,     -0.0,    1.0,    -2.5,      1e-300, -1e-300,  1e300,
                             -1e300,  1e-301,  5e-324, -2e-308,   1e301,  -1.7e308, INFINITY,
                             -INFINITY, NAN};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 1, NULL, NULL), CONCORD_OK);
    concord_solver *s = NULL;
    assert_int_equal(concord_solver_new(g, &s), CONCORD_OK);
    for (size_t k = 0; k < sizeof values / sizeof values[0]; ++k) {
        const double x = values[k], magnitude = fabs(x);
        const bool documented =
            isfinite(x) && (x == 0.0 || (magnitude >= 1e-300 && magnitude <= 1e300));
        const char *why = concord_score_refusal(x);
        assert_true((why == NULL) == documented);
        concord_graph *h = concord_graph_new();
        assert_int_equal(concord_add_variables(h, 1, &x, NULL) == CONCORD_OK, documented);
        assert_int_equal(concord_solver_set_scores(s, &x, NULL) == CONCORD_OK, documented);
        if (why) {
            assert_non_null(strstr(concord_last_error(h), why));
            assert_non_null(strstr(concord_solver_last_error(s), why));
            assert_non_null(strstr(why, isfinite(x) ? "out of range" : "not finite"));
        }
        concord_graph_free(h);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

/* concord_additional_score_refusal refuses what concord_score_refusal
 * does, but -inf at an output built forbidden, and exactly what
 * concord_set_additional_scores and concord_solver_set_scores refuse at
 * that output, whose messages carry its words: over a DENSE factor built
 * with its output 1 forbidden and a PAIR (output 4), which refuses -inf. */
static void additional_score_refusal_is_set_scores_rule(void **state) {
    (void)state;
    const double values[] = {0.0, -2.5, 1e-300, 1e301, 5e-324, INFINITY, -INFINITY, NAN};
    const int32_t states[2] = {2, 2}, vars[4] = {0, 1, 2, 3};
    const double table[4] = {0.0, -INFINITY, 1.0, 2.0};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 4, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_dense(g, 2, states, vars, table, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(g, 0, 2, 0.5, NULL), CONCORD_OK);
    assert_int_equal(concord_num_additionals(g), 5);
    concord_solver *s = new_solver_or_fail(g);
    for (int32_t output = 0; output < 5; ++output) {
        for (size_t k = 0; k < sizeof values / sizeof values[0]; ++k) {
            const double x = values[k];
            const bool taken = concord_score_refusal(x) == NULL ||
                               (x == -INFINITY && output == 1);
            const char *why = concord_additional_score_refusal(g, output, x);
            assert_true((why == NULL) == taken);
            assert_int_equal(concord_set_additional_scores(g, output, 1, &x) == CONCORD_OK,
                             taken);
            double scores[5] = {0.0, -INFINITY, 0.0, 0.0, 0.0};
            scores[output] = x;
            assert_int_equal(concord_solver_set_scores(s, NULL, scores) == CONCORD_OK, taken);
            if (why) {
                assert_non_null(strstr(concord_last_error(g), why));
                assert_non_null(strstr(concord_solver_last_error(s), why));
            }
        }
    }
    assert_non_null(concord_additional_score_refusal(g, -1, 0.0));
    assert_non_null(concord_additional_score_refusal(g, 5, 0.0));
    assert_non_null(concord_additional_score_refusal(NULL, 0, 0.0));
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Adding no variables changes nothing: a solver of the graph stays usable
 * (it was refused as over a changed structure). */
static void adding_no_variables_leaves_the_solvers_usable(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    const double scores[2] = {1.0, -1.0};
    const int32_t pair[2] = {0, 1};
    assert_int_equal(concord_add_variables(g, 2, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, pair, NULL, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    int32_t first = -1;
    assert_int_equal(concord_add_variables(g, 0, NULL, &first), CONCORD_OK);
    assert_int_equal(first, 2);
    assert_int_equal(concord_num_variables(g), 2);
    concord_info info;
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    assert_true(concord_solver_variables(solver)[0] == 1.0);
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* A graph whose constraints admit no assignment (XOR(x0, x1) with x0 and
 * x1 each forced on) leaves nothing to decode, by ADMM as by the acyclic
 * path and branch and bound: ADMM's last iterate stays readable (as AD3's)
 * but its decoding, which violated the XOR, is refused; the others leave
 * no iterate. */
static void an_infeasible_graph_leaves_nothing_to_decode_on_every_path(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    const double scores[2] = {0.3, 0.2};
    const int32_t both[2] = {0, 1}, first[1] = {0}, second[1] = {1};
    assert_int_equal(concord_add_variables(g, 2, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, both, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 1, first, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 1, second, NULL, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    concord_settings settings;
    concord_default_settings(&settings);
    for (int path = 0; path < 3; ++path) {
        settings.acyclic = path == 1;
        concord_info info;
        const int rc = path == 2 ? concord_solver_exact(solver, &settings, &info)
                                 : concord_solver_map(solver, &settings, &info);
        assert_int_equal(rc, CONCORD_EINFEASIBLE);
        assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
        if (path > 0) assert_null(concord_solver_variables(solver));
        assert_int_equal(concord_solver_decode(solver, NULL), CONCORD_EINVAL);
        assert_non_null(strstr(concord_solver_last_error(solver), "nothing to decode"));
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
 * and still within max_iter rounds of max_inner_iter oracle calls (and
 * the one that starts the active set): a 50 x 20 SEQUENCE needs more than
 * 2 x 1 + 1, so it stops there. */
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
    assert_true(info.oracle_calls <= 2 * 1 + 1);
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* A factor's degree and links read back as they were given, negations
 * included, for every logic family (XOROUT, ANDOUT and IMPLY flip some
 * links inside) and with or without negations given. */
static void factor_links_read_back(void **state) {
    (void)state;
    const concord_logic kinds[] = {CONCORD_XOR,    CONCORD_XOROUT, CONCORD_ATMOSTONE, CONCORD_OR,
                                   CONCORD_OROUT,  CONCORD_ANDOUT, CONCORD_IMPLY};
    const int n_kinds = (int)(sizeof kinds / sizeof *kinds);
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 5, NULL, NULL), CONCORD_OK);
    int32_t vars[3] = {4, 0, 2}, f, degree, got[3];
    bool negated[3] = {false, true, false}, got_neg[3];
    for (int k = 0; k < 2 * n_kinds; ++k) {
        const bool given = k < n_kinds;
        assert_int_equal(concord_add_logic(g, kinds[k % n_kinds], 3, vars,
                                           given ? negated : NULL, &f),
                         CONCORD_OK);
        assert_int_equal(f, k);
        assert_int_equal(concord_factor_degree(g, f, &degree), CONCORD_OK);
        assert_int_equal(degree, 3);
        assert_int_equal(concord_factor_variables(g, f, got, got_neg), CONCORD_OK);
        for (int j = 0; j < 3; ++j) {
            assert_int_equal(got[j], vars[j]);
            assert_true(got_neg[j] == (given && negated[j]));
        }
    }
    int32_t pair;
    assert_int_equal(concord_add_pair(g, 1, 3, 0.5, &pair), CONCORD_OK);
    assert_int_equal(concord_factor_variables(g, pair, got, NULL), CONCORD_OK);
    assert_true(got[0] == 1 && got[1] == 3);
    assert_int_equal(concord_factor_degree(g, pair + 1, &degree), CONCORD_EINVAL);
    assert_int_equal(concord_factor_variables(g, -1, got, NULL), CONCORD_EINVAL);
    concord_graph_free(g);
}

/* The MAP of one factor on its own, against the best of its allowed
 * configurations enumerated from their definition: an OR of 5 literals
 * (two negated) and a PAIR with its additional output. */
static void a_factor_alone_gives_its_map(void **state) {
    (void)state;
    test_rng rng = {21};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 5, NULL, NULL), CONCORD_OK);
    int32_t vars[5] = {0, 1, 2, 3, 4}, or_id, pair_id;
    bool negated[5] = {false, true, false, true, false};
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 5, vars, negated, &or_id), CONCORD_OK);
    assert_int_equal(concord_add_pair(g, 0, 1, 0.0, &pair_id), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    for (int trial = 0; trial < 200; ++trial) {
        double a[5], u[5], value, best = -INFINITY;
        for (int j = 0; j < 5; ++j) a[j] = trial % 2 ? rng_int(&rng, 5) - 2.0 : rng_normal(&rng);
        for (int x = 0; x < 32; ++x) {
            bool some = false;
            double score = 0.0;
            for (int j = 0; j < 5; ++j) {
                int on = x >> j & 1;
                some |= on != negated[j];
                score += on * a[j];
            }
            if (some && score > best) best = score;
        }
        assert_int_equal(concord_solver_factor_map(solver, or_id, a, NULL, u, NULL, &value),
                         CONCORD_OK);
        double score = 0.0;
        bool some = false;
        for (int j = 0; j < 5; ++j) {
            assert_true(u[j] == 0.0 || u[j] == 1.0);
            score += u[j] * a[j];
            some |= (u[j] == 1.0) != negated[j];
        }
        assert_true(some);
        assert_true(fabs(value - best) <= 1e-12 && fabs(score - best) <= 1e-12);
        double b = rng_normal(&rng), v;
        double pair_best = fmax(fmax(0.0, a[0]), fmax(a[1], a[0] + a[1] + b));
        assert_int_equal(concord_solver_factor_map(solver, pair_id, a, &b, u, &v, &value),
                         CONCORD_OK);
        assert_true(fabs(value - pair_best) <= 1e-12);
        assert_true(v == (u[0] == 1.0 && u[1] == 1.0 ? 1.0 : 0.0));
    }
    double bad[5] = {0, NAN, 0, 0, 0};
    assert_int_equal(concord_solver_factor_map(solver, or_id, bad, NULL, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_solver_factor_map(solver, 7, bad, NULL, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* The mean of the distribution k-th entries give (u: the factor's degree). */
static void distribution_mean(const concord_solver *s, int32_t count, int32_t degree,
                              double *mean) {
    double total = 0.0;
    for (int32_t j = 0; j < degree; ++j) mean[j] = 0.0;
    for (int32_t k = 0; k < count; ++k) {
        double weight, x[8];
        assert_int_equal(concord_solver_distribution_entry(s, k, &weight, x, NULL), CONCORD_OK);
        assert_true(weight > 0.0);
        total += weight;
        for (int32_t j = 0; j < degree; ++j) mean[j] += weight * x[j];
    }
    assert_true(fabs(total - 1.0) <= 1e-12);
}

/* A closed form's distribution mixes to its solution however far apart
 * the weights are: an XOR at a = (1, 1, 1) with weights (1, e, e) has
 * u = (e, 1, 1) / (e + 2) (on the simplex a.u is 1, and the weighted
 * squares are least there), where weights 1e12 apart once gave the
 * single configuration (0, 1, 0) with CONCORD_OK; and LP-SparseMAP at the
 * documented extremes of the regularization weights (1e6 beside 1e-6),
 * where the distribution was CONCORD_ENOTCONVERGED. Where no distribution
 * is found (a weight 1e300 times the others) the call says so. */
static void a_distribution_mixes_to_its_solution_at_spread_weights(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    const int32_t vars[3] = {0, 1, 2};
    const double ones[3] = {1.0, 1.0, 1.0};
    int32_t f;
    assert_int_equal(concord_add_variables(g, 3, ones, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, &f), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    const double spreads[] = {1e-3, 1e-8, 1e-12, 1e-16, 1e-50, 1e-299};
    for (size_t k = 0; k < sizeof spreads / sizeof spreads[0]; ++k) {
        const double e = spreads[k], w[3] = {1.0, e, e};
        const double expected[3] = {e / (e + 2.0), 1.0 / (e + 2.0), 1.0 / (e + 2.0)};
        double u[3], mean[3];
        int32_t count = 0;
        assert_int_equal(concord_solver_factor_qp(s, f, ones, NULL, w, u, NULL, &count),
                         CONCORD_OK);
        distribution_mean(s, count, 3, mean);
        for (int j = 0; j < 3; ++j)
            assert_true(fabs(u[j] - expected[j]) <= 1e-12 && fabs(mean[j] - expected[j]) <= 1e-6);
    }
    const double heavy[3] = {1e300, 1.0, 1.0};
    double u[3], mean[3];
    int32_t count = 0;
    const int rc = concord_solver_factor_qp(s, f, ones, NULL, heavy, u, NULL, &count);
    if (rc == CONCORD_OK) {
        distribution_mean(s, count, 3, mean);
        for (int j = 0; j < 3; ++j) assert_true(fabs(mean[j] - u[j]) <= 1e-9);
    } else {
        assert_int_equal(rc, CONCORD_ENOTCONVERGED);
        assert_non_null(strstr(concord_solver_last_error(s), "no distribution found"));
    }
    const double regularization[3] = {CONCORD_MAX_REGULARIZATION, CONCORD_MIN_REGULARIZATION,
                                      CONCORD_MIN_REGULARIZATION};
    assert_int_equal(concord_set_regularization(g, 0, 3, regularization), CONCORD_OK);
    concord_solver *sparse = new_solver_or_fail(g);
    concord_info info;
    assert_int_equal(concord_solver_sparse(sparse, NULL, &info), CONCORD_OK);
    assert_int_equal(concord_solver_factor_distribution(sparse, f, &count), CONCORD_OK);
    distribution_mean(sparse, count, 3, mean);
    const double *solution = concord_solver_variables(sparse);
    const double e = 1e-12; /* the weights' ratio, as above */
    for (int j = 0; j < 3; ++j) {
        const double expected = j ? 1.0 / (e + 2.0) : e / (e + 2.0);
        assert_true(fabs(solution[j] - expected) <= 1e-9 && fabs(mean[j] - expected) <= 1e-9);
    }
    concord_solver_free(sparse);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The weighted QP of an XOR alone: u_i = max(0, (a_i - tau) / w_i) with
 * tau such that they sum to 1 (found here by bisection); with the
 * distribution, whose one-hot configurations mix to u. */
static void a_factor_alone_gives_its_weighted_qp(void **state) {
    (void)state;
    enum { N = 6 };
    test_rng rng = {22};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, N, NULL, NULL), CONCORD_OK);
    int32_t vars[N] = {0, 1, 2, 3, 4, 5}, f;
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, N, vars, NULL, &f), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    for (int trial = 0; trial < 100; ++trial) {
        double a[N], w[N], u[N];
        for (int j = 0; j < N; ++j) {
            a[j] = rng_normal(&rng);
            w[j] = trial % 2 ? 1.0 : 0.2 + 2.0 * rng_uniform(&rng);
        }
        double lo = -100.0, hi = 100.0;
        for (int it = 0; it < 200; ++it) {
            double tau = 0.5 * (lo + hi), sum = 0.0;
            for (int j = 0; j < N; ++j) sum += fmax(0.0, (a[j] - tau) / w[j]);
            if (sum > 1.0) lo = tau;
            else hi = tau;
        }
        int32_t count = 0;
        assert_int_equal(
            concord_solver_factor_qp(solver, f, a, NULL, trial % 2 ? NULL : w, u, NULL, &count),
            CONCORD_OK);
        double mixed[N] = {0}, total = 0.0;
        for (int32_t k = 0; k < count; ++k) {
            double weight, x[N];
            assert_int_equal(concord_solver_distribution_entry(solver, k, &weight, x, NULL),
                             CONCORD_OK);
            assert_true(weight >= 0.0);
            total += weight;
            for (int j = 0; j < N; ++j) mixed[j] += weight * x[j];
        }
        assert_true(fabs(total - 1.0) <= 1e-12);
        for (int j = 0; j < N; ++j) {
            double expected = fmax(0.0, (a[j] - lo) / w[j]);
            assert_true(fabs(u[j] - expected) <= 1e-9);
            assert_true(fabs(mixed[j] - expected) <= 1e-9);
        }
    }
    double zero[N] = {0};
    assert_int_equal(concord_solver_factor_qp(solver, f, zero, NULL, zero, zero, NULL, NULL),
                     CONCORD_EINVAL);
    /* a subnormal weight, refused as a subnormal score is: it divided a
     * score into a NaN solution that came back with CONCORD_OK */
    double half[N], subnormal[N], u[N];
    for (int j = 0; j < N; ++j) half[j] = 0.625, subnormal[j] = j ? 0.6875 : 1e-310;
    assert_int_equal(concord_solver_factor_qp(solver, f, half, NULL, subnormal, u, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(solver), "weight 0"));
    subnormal[0] = 1e-300;
    assert_int_equal(concord_solver_factor_qp(solver, f, half, NULL, subnormal, u, NULL, NULL),
                     CONCORD_OK);
    for (int j = 0; j < N; ++j) assert_true(u[j] >= 0.0 && u[j] <= 1.0);
    /* weights more than 1e300 apart: the scores scaled by their inverses
     * overflowed, and u[0] came back NaN with CONCORD_OK */
    subnormal[1] = 1e300;
    half[1] = 1.8e127;
    assert_int_equal(concord_solver_factor_qp(solver, f, half, NULL, subnormal, u, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(solver), "more than 1e300 times weight 0"));
    concord_solver_free(solver);
    concord_graph_free(g);
}

static void assert_near(int n, const double *x, const double *expected, double tol) {
    for (int j = 0; j < n; ++j) {
        if (!(fabs(x[j] - expected[j]) <= tol))
            fail_msg("entry %d is %.17g, %.17g expected", j, x[j], expected[j]);
    }
}

/* LP-SparseMAP of an XOR alone over scores (m, -m, m) is its SparseMAP,
 * (1/2, 0, 1/2) for every m: the tied items share the simplex. From
 * m = 1e15 the closed form once put it at (0, 0, 0), and from m = 4.5e15
 * the solve took the MAP oracle's (1, 0, 0) instead. */
static void sparsemap_of_a_closed_form_holds_at_huge_scores(void **state) {
    (void)state;
    const double half[3] = {0.5, 0.0, 0.5};
    for (double m = 1e14; m <= 1e300; m *= 10.0) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 3, (double[]){m, -m, m}, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, (int32_t[]){0, 1, 2}, NULL, NULL),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
        assert_near(3, concord_solver_variables(s), half, 1e-12);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* Factor f's distribution is the one configuration (u, v) with weight 1,
 * and so is f's part of the solution (vars: its variables; its additional
 * outputs start at add_begin). */
static void assert_distribution_is_the_vertex(concord_solver *s, int32_t f, int32_t degree,
                                              const int32_t *vars, int32_t add_begin,
                                              int32_t n_add, const double *u, const double *v) {
    int32_t count = 0;
    assert_int_equal(concord_solver_factor_distribution(s, f, &count), CONCORD_OK);
    assert_int_equal(count, 1);
    double weight = 0.0, entry_u[2], entry_v[6];
    assert_int_equal(concord_solver_distribution_entry(s, 0, &weight, entry_u, entry_v),
                     CONCORD_OK);
    assert_true(fabs(weight - 1.0) <= 1e-12);
    assert_near(degree, entry_u, u, 0.0);
    assert_near(n_add, entry_v, v, 0.0);
    for (int32_t j = 0; j < degree; ++j) assert_true(concord_solver_variables(s)[vars[j]] == u[j]);
    assert_near(n_add, concord_solver_additionals(s) + add_begin, v, 0.0);
}

/* LP-SparseMAP of a separable graph at scores beyond 1/DBL_EPSILON, where
 * the factors without a closed form take their MAP oracle's vertex: their
 * distribution is that vertex. The graph: a HEAD_AUTOMATON without
 * modifiers, whose one configuration has its pair (0, 1) on, scored m;
 * one over two modifiers scored (1, -1) whose pair (0, 3) (no modifier)
 * is scored m, so that its best configuration has no modifier for m > 0,
 * and for m < 0 modifier 1 alone (pairs (0, 1) and (1, 3)); an XOR at
 * zero scores, which makes the solution fractional (1/3 each). The
 * distributions were empty after a cold solve, and after a warm one those
 * of the solve before. */
static void a_vertex_taken_at_huge_scores_is_the_distribution(void **state) {
    (void)state;
    const int32_t modifiers[2] = {0, 1};
    const double one[1] = {1.0}, sizes[3] = {1e20, 1e150, 1e300};
    for (int size = 0; size < 3; ++size) {
        for (double sign = 1.0; sign >= -1.0; sign -= 2.0) {
            const double huge = sign * sizes[size];
            concord_graph *g = concord_graph_new();
            int32_t linkless, automaton;
            assert_int_equal(concord_add_variables(g, 5, (double[]){1.0, -1.0, 0.0, 0.0, 0.0},
                                                   NULL),
                             CONCORD_OK);
            assert_int_equal(concord_add_head_automaton(g, 0, NULL, &huge, &linkless), CONCORD_OK);
            assert_int_equal(concord_add_head_automaton(g, 2, modifiers,
                                                        (double[]){0, 0, huge, 0, 0, 0},
                                                        &automaton),
                             CONCORD_OK);
            assert_int_equal(
                concord_add_logic(g, CONCORD_XOR, 3, (int32_t[]){2, 3, 4}, NULL, NULL),
                CONCORD_OK);
            const double none[2] = {0, 0}, first[2] = {1, 0};
            const double no_modifier[6] = {0, 0, 1, 0, 0, 0}, first_alone[6] = {1, 0, 0, 0, 1, 0};
            concord_solver *s = new_solver_or_fail(g);
            concord_info info;
            /* cold, then warm after a solve at small scores that picks the
             * automaton's other configuration */
            for (int solve = 0; solve < 2; ++solve) {
                if (solve == 1) {
                    const double small[7] = {sign, 0, 0, -2.0 * sign, 0, 0, 0};
                    assert_int_equal(concord_solver_set_scores(s, NULL, small), CONCORD_OK);
                    assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
                    assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
                }
                assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
                assert_int_equal(info.status, CONCORD_STATUS_FRACTIONAL);
                assert_distribution_is_the_vertex(s, linkless, 0, NULL, 0, 1, NULL, one);
                assert_distribution_is_the_vertex(s, automaton, 2, modifiers, 1, 6,
                                                  huge > 0 ? none : first,
                                                  huge > 0 ? no_modifier : first_alone);
            }
            concord_solver_free(s);
            concord_graph_free(g);
        }
    }
}

/* LP-SparseMAP at the default tolerance, beside a large score: an XOR
 * over x0, x1 scored (1/2, 0) and x2 in two OR factors of its own, scored
 * m. The problem separates: x2 = 1, and (x0, x1) is the sparsemax of
 * (1/2, 0), (3/4, 1/4) (the threshold -1/4 leaves both above 0). The
 * graph is not separable for the solver (x2 has two factors), so ADMM
 * runs with a penalty in units of m; a converged solve must still be within
 * a few tol of that answer. */
static void lp_sparsemap_converges_beside_large_scores(void **state) {
    (void)state;
    const double answer[3] = {0.75, 0.25, 1.0};
    for (double m = 1e2; m <= 1e14; m *= 10.0) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 3, (double[]){0.5, 0.0, m}, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, (int32_t[]){0, 1}, NULL, NULL),
                         CONCORD_OK);
        for (int k = 0; k < 2; ++k)
            assert_int_equal(concord_add_logic(g, CONCORD_OR, 1, (int32_t[]){2}, NULL, NULL),
                             CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_settings st;
        concord_default_settings(&st);
        concord_info info;
        assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_OK);
        assert_near(3, concord_solver_variables(s), answer, 10.0 * st.tol);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* XOR(not x0, x1) and OR(x0) leave one point of the local polytope,
 * (1, 1): with scores (m, m), m < 0, LP-SparseMAP's answer is (1, 1) and
 * its value 2m - 1. Its dual bound sums terms of the order of the
 * multipliers (about 1, from -|u|^2/2), which rounding leaves 1e-16 off:
 * below -sum |scores| = 2m when m is tiny, which must not pass for a proof
 * of infeasibility. */
static void lp_sparsemap_at_tiny_scores_is_feasible(void **state) {
    (void)state;
    const double answer[2] = {1.0, 1.0};
    for (double m = -1e-12; m >= -1e-3; m *= 10.0) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 2, (double[]){m, m}, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, (int32_t[]){0, 1},
                                           (bool[]){true, false}, NULL),
                         CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_OR, 1, (int32_t[]){0}, NULL, NULL),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        assert_near(2, concord_solver_variables(s), answer, 0.0);
        assert_true(fabs(info.value - (2.0 * m - 1.0)) <= 1e-15);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* KNAPSACK with costs c, c, c and budget c is sum u <= 1 for every c > 0.
 * With scores (1, -1, 1/2): SparseMAP u = (3/4, 0, 1/4) (u_i = a_i - tau on
 * the items above 0, summing to 1), whose derivative along du = e_0 is
 * (1/2, 0, -1/2) (e_0 projected onto sum = 0 over the free items); LP-MAP
 * u = (1, 0, 0); next to an XOR over the same variables, LP-SparseMAP is
 * the XOR's SparseMAP, the same u. The costs' squares once overflowed from
 * c ~ 1e155 and underflowed below c ~ 1e-160, and the constraint was lost. */
static void knapsack_answers_alike_at_any_cost_scale(void **state) {
    (void)state;
    const double scales[] = {1e-300, 1e-200, 1e-160, 1e-100, 1.0, 3.0, 1e100,
                             1e155,  1e160,  1e200,  1e300,  1e308};
    const double theta[3] = {1.0, -1.0, 0.5}, sparse[3] = {0.75, 0.0, 0.25},
                 jvp[3] = {0.5, 0.0, -0.5}, map[3] = {1.0, 0.0, 0.0};
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-10;
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; ++k) {
        const double c = scales[k], costs[3] = {c, c, c};
        int32_t vars[3] = {0, 1, 2};
        for (int with_xor = 0; with_xor <= 1; ++with_xor) {
            concord_graph *g = concord_graph_new();
            assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
            assert_int_equal(concord_add_knapsack(g, 3, vars, NULL, costs, c, NULL), CONCORD_OK);
            if (with_xor)
                assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL),
                                 CONCORD_OK);
            concord_solver *s = new_solver_or_fail(g);
            double u[3], dtheta[3];
            assert_int_equal(concord_solver_factor_qp(s, 0, theta, NULL, NULL, u, NULL, NULL),
                             CONCORD_OK);
            assert_near(3, u, sparse, 1e-12);
            assert_int_equal(concord_solver_map(s, &st, NULL), CONCORD_OK);
            assert_near(3, concord_solver_variables(s), map, 1e-6);
            assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
            assert_near(3, concord_solver_variables(s), sparse, 1e-6);
            assert_int_equal(concord_solver_backward(s, &st, (double[]){1, 0, 0}, NULL, dtheta,
                                                     NULL, NULL),
                             CONCORD_OK);
            assert_near(3, dtheta, jvp, 1e-5);
            concord_solver_free(s);
            concord_graph_free(g);
        }
    }
}

/* Costs of very different sizes: with costs (big, 1, 1), budget 1 and
 * scores (1, 2, 3) the first item costs more than the budget per unit of
 * score, and both LP-MAP and SparseMAP are (0, 0, 1) (SparseMAP: tau = 2
 * puts the second item at 0 and the third at 1). With costs (2^56, 1, 1),
 * scores (2.5 * 2^56, 0, 0), SparseMAP takes the first item alone, up to
 * the budget: u_0 = 2^-56. The sums of the multiplier once mixed the
 * costs' scales and took items that exceed the budget. */
static void knapsack_with_costs_of_mixed_sizes_keeps_its_budget(void **state) {
    (void)state;
    const double bigs[] = {1e16, 1e17, 1e155, 1e300};
    const double theta[3] = {1.0, 2.0, 3.0}, best[3] = {0.0, 0.0, 1.0};
    int32_t vars[3] = {0, 1, 2};
    for (size_t k = 0; k < sizeof bigs / sizeof bigs[0]; ++k) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
        assert_int_equal(
            concord_add_knapsack(g, 3, vars, NULL, (double[]){bigs[k], 1.0, 1.0}, 1.0, NULL),
            CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        double u[3];
        assert_int_equal(concord_solver_factor_qp(s, 0, theta, NULL, NULL, u, NULL, NULL),
                         CONCORD_OK);
        assert_near(3, u, best, 1e-12);
        assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
        assert_near(3, concord_solver_variables(s), best, 1e-9);
        concord_solver_free(s);
        concord_graph_free(g);
    }
    concord_graph *g = concord_graph_new();
    const double big = ldexp(1.0, 56), scores[3] = {2.5 * big, 0.0, 0.0};
    assert_int_equal(concord_add_variables(g, 3, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_add_knapsack(g, 3, vars, NULL, (double[]){big, 1.0, 1.0}, 1.0, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    double u[3];
    assert_int_equal(concord_solver_factor_qp(s, 0, scores, NULL, NULL, u, NULL, NULL),
                     CONCORD_OK);
    assert_near(3, u, (double[]){1.0 / big, 0.0, 0.0}, 1e-30);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The per-link state after a solve: one multiplier and one copy per link;
 * at convergence the copies agree with the solution, and the dual bound
 * the multipliers give (from each factor's MAP at theta_i / deg_i +
 * multiplier) is at least the reported bound and the value. */
static void link_state_gives_the_dual_bound(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double theta[3] = {0.3, -0.2, 0.5};
    assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
    int32_t all[3] = {0, 1, 2};
    assert_int_equal(concord_add_pair(g, 0, 1, -1.0, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(g, 1, 2, 0.8, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, 3, all, NULL, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    double multipliers[7], copies[7];
    assert_int_equal(concord_solver_links(solver, multipliers, copies), CONCORD_EINVAL);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-9;
    concord_info info;
    assert_int_equal(concord_solver_map(solver, &st, &info), CONCORD_OK);
    assert_int_equal(concord_solver_links(solver, multipliers, copies), CONCORD_OK);
    const double *u = concord_solver_variables(solver);
    int deg[3] = {0, 0, 0}, link = 0;
    int32_t vars[3];
    for (int32_t f = 0; f < 3; ++f) {
        int32_t degree;
        concord_factor_degree(g, f, &degree);
        concord_factor_variables(g, f, vars, NULL);
        for (int j = 0; j < degree; ++j) deg[vars[j]] += 1;
    }
    double bound = 0.0, sums[3] = {0, 0, 0};
    for (int32_t f = 0; f < 3; ++f) {
        int32_t degree;
        double a[3], best;
        concord_factor_degree(g, f, &degree);
        concord_factor_variables(g, f, vars, NULL);
        for (int j = 0; j < degree; ++j, ++link) {
            assert_true(fabs(copies[link] - u[vars[j]]) <= 1e-6);
            a[j] = theta[vars[j]] / deg[vars[j]] + multipliers[link];
            sums[vars[j]] += multipliers[link];
        }
        assert_int_equal(concord_solver_factor_map(solver, f, a, NULL, NULL, NULL, &best),
                         CONCORD_OK);
        bound += best;
    }
    for (int i = 0; i < 3; ++i) bound += fmax(0.0, -sums[i]);
    assert_true(bound >= info.upper_bound - 1e-12 && bound >= info.value - 1e-9);
    assert_true(bound <= info.value + 1e-6);
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* A solve by dynamic programming has no multipliers: its link state is
 * the solution at every link (in variable space, a negated link too) and
 * multipliers 0, whatever an earlier solve of the same solver left. The
 * chain XOR(x0, x1), ATMOSTONE(x1, not x2) at theta (1, -0.5, 0.25) has
 * the MAP (1, 0, 1). */
static void dynamic_programming_leaves_the_solution_at_the_links(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double theta[3] = {1.0, -0.5, 0.25};
    assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, (int32_t[]){0, 1}, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, 2, (int32_t[]){1, 2},
                                       (bool[]){false, true}, NULL),
                     CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    const double expected[4] = {1.0, 0.0, 0.0, 1.0};
    for (int exact = 0; exact <= 1; ++exact) {
        concord_info info;
        assert_int_equal(concord_solver_sparse(solver, NULL, &info), CONCORD_OK);
        int rc = exact ? concord_solver_exact(solver, NULL, &info)
                       : concord_solver_map(solver, NULL, &info);
        assert_int_equal(rc, CONCORD_OK);
        assert_true(info.acyclic && info.value == 1.25);
        double multipliers[4], copies[4];
        assert_int_equal(concord_solver_links(solver, multipliers, copies), CONCORD_OK);
        for (int l = 0; l < 4; ++l) {
            assert_true(copies[l] == expected[l]);
            assert_true(multipliers[l] == 0.0);
        }
    }
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* A factor without links (a head automaton with no candidate modifier:
 * its one configuration is the chain 0 -> 1, whose pair is its only
 * additional output) on a graph without links: its oracle and a solve
 * work (and, under the sanitizers, touch no offset of a null array). */
static void a_factor_without_links_is_solved(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double score = 0.5;
    assert_int_equal(concord_add_head_automaton(g, 0, NULL, &score, NULL), CONCORD_OK);
    concord_solver *s;
    assert_int_equal(concord_solver_new(g, &s), CONCORD_OK);
    double v, value;
    assert_int_equal(concord_solver_factor_map(s, 0, NULL, NULL, NULL, &v, &value), CONCORD_OK);
    assert_true(v == 1.0 && value == 0.5);
    concord_info info;
    for (int sparse = 0; sparse <= 1; ++sparse) {
        int rc = sparse ? concord_solver_sparse(s, NULL, &info) : concord_solver_map(s, NULL, &info);
        assert_int_equal(rc, CONCORD_OK);
        assert_true(concord_solver_additionals(s)[0] == 1.0 && info.value == 0.5);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

static int never_called_oracle(void *user, const double *a, const double *b, double *u,
                               double *v, double *value) {
    (void)user, (void)a, (void)b, (void)u, (void)v, (void)value;
    return 1;
}

/* Arguments out of the header's contract are refused, not taken: OROUT
 * and ANDOUT of one link (they need inputs and an output), a user factor
 * whose configurations could not be indexed; a NULL settings pointer is
 * ignored. */
static void contract_limits_are_refused(void **state) {
    (void)state;
    concord_default_settings(NULL);
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 2, NULL, NULL);
    int32_t vars[2] = {0, 1};
    assert_int_equal(concord_add_logic(g, CONCORD_OROUT, 1, vars, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "at least 2 links"));
    assert_int_equal(concord_add_logic(g, CONCORD_ANDOUT, 1, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_logic(g, CONCORD_OROUT, 2, vars, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_factor(g, 2, vars, NULL, INT32_MAX, NULL, never_called_oracle,
                                        NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "too many"));
    assert_int_equal(concord_num_factors(g), 1);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setting_zero_scores_is_a_no_op),
        cmocka_unit_test(null_arrays_and_oversize_arguments_are_named_in_the_message),
        cmocka_unit_test(score_refusal_is_the_builders_and_set_scores_rule),
        cmocka_unit_test(additional_score_refusal_is_set_scores_rule),
        cmocka_unit_test(adding_no_variables_leaves_the_solvers_usable),
        cmocka_unit_test(an_infeasible_graph_leaves_nothing_to_decode_on_every_path),
        cmocka_unit_test(the_iteration_cap_holds_on_a_graph_of_one_factor),
        cmocka_unit_test(xor_alone_selects_the_best_variable),
        cmocka_unit_test(resolving_with_new_scores_uses_them),
        cmocka_unit_test(repeated_solves_are_identical),
        cmocka_unit_test(bad_arguments_are_rejected_with_a_message),
        cmocka_unit_test(factor_links_read_back),
        cmocka_unit_test(a_factor_alone_gives_its_map),
        cmocka_unit_test(a_factor_alone_gives_its_weighted_qp),
        cmocka_unit_test(a_distribution_mixes_to_its_solution_at_spread_weights),
        cmocka_unit_test(sparsemap_of_a_closed_form_holds_at_huge_scores),
        cmocka_unit_test(a_vertex_taken_at_huge_scores_is_the_distribution),
        cmocka_unit_test(lp_sparsemap_converges_beside_large_scores),
        cmocka_unit_test(lp_sparsemap_at_tiny_scores_is_feasible),
        cmocka_unit_test(knapsack_answers_alike_at_any_cost_scale),
        cmocka_unit_test(knapsack_with_costs_of_mixed_sizes_keeps_its_budget),
        cmocka_unit_test(link_state_gives_the_dual_bound),
        cmocka_unit_test(dynamic_programming_leaves_the_solution_at_the_links),
        cmocka_unit_test(a_factor_without_links_is_solved),
        cmocka_unit_test(contract_limits_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
