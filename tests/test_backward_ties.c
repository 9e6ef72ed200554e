/*
 * The backward pass where scores tie exactly, as a zero initialization
 * gives. SparseMAP's solution then lies inside a face of the polytope that
 * its own configurations do not span, and the derivative must be taken on
 * the face that holds it (concord_solver_backward completes it).
 *
 * References, independent of the library:
 * - a perfect matching of n x n at scores theta_ij = r_i + c_j (every
 *   permutation ties; zero scores among them): the solution is u = 1/n,
 *   inside the Birkhoff polytope, whose affine hull is {row and column
 *   sums 1}; the Jacobian is the projection onto its tangent space,
 *   (I - 11^T/n) x (I - 11^T/n): J[ij][kl] = (d_ik - 1/n)(d_jl - 1/n);
 * - a sequence whose positions' scores are constant (every tag sequence
 *   ties): u = 1/S at every position, inside the product of simplices the
 *   state marginals fill, and J = I - 11^T/S per position; checked against
 *   central finite differences of the forward pass too, which the map is
 *   differentiable there;
 * - the same simplices where one score masks a state (-1e9, on a
 *   variable or on a transition): per position, states 0 and 1 tie and
 *   state 2 lies 0.5 below them, u = (1/2, 1/2, 0), and J is
 *   I - 11^T/2 on states 0 and 1 and 0 elsewhere; checked against
 *   central finite differences too; and the same with 1e10 added to every
 *   state's score (against the formula);
 * - a SEQUENCE of 20 positions x 4 states at small random scores (no
 *   exact ties): the solve certifies its solution with configurations
 *   that do not span its face (those missing would have weights of 1e-13),
 *   and the products must still be the derivative: checked against
 *   central finite differences of the forward pass;
 * - a SEQUENCE of 4 positions x 2 states with a HEAD_AUTOMATON over four
 *   of its variables, at zero scores: the automaton allows any subset of
 *   its modifiers, so its variables' polytope is the cube, which the
 *   sequence's lies in, and the solution and J are the sequence's alone
 *   (u = 1/2, J = I - 11^T/2 per position); checked against central
 *   finite differences too;
 * - a face larger than CONCORD_FACE_COMPLETION_LIMIT (a 24-token TREE at
 *   zero scores, dimension 24 * 23 = 552) is reported incomplete, a
 *   smaller one (10 tokens) is not;
 * - a solve after a backward pass that completed a face (a 10-token TREE
 *   at zero scores, alone and with a BUDGET on the root's arcs) is bit for
 *   bit the solve without that backward pass;
 * - a user oracle failing while the face is completed fails the backward
 *   pass with its error, and the completion leaves the distribution and
 *   the next solve as they were;
 * - a user XOR at unit scores plus a common score of up to 1e12 has the
 *   solution and Jacobian of sparsemax at the unit scores (computed here).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "concord.h"
#include "testutil.h"

static concord_settings tight_settings(void) {
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-12;
    st.backward_tol = 1e-13;
    return st;
}

/* Column k of the Jacobian, by the backward pass (it is symmetric). */
static void jacobian_column(concord_solver *s, int n, int k, double *column,
                            concord_backward_info *info) {
    double *du = calloc((size_t)n, sizeof *du);
    du[k] = 1.0;
    concord_settings st = tight_settings();
    assert_int_equal(concord_solver_backward(s, &st, du, NULL, column, NULL, info), CONCORD_OK);
    assert_true(info->converged);
    free(du);
}

/* Column k of the Jacobian by central differences: probe solves at theta
 * (n variable scores, NULL: zeros) moved by +-h along variable k. */
static void difference_column(concord_solver *probe, const concord_settings *st,
                              const double *theta, int n, int k, double h, double *column) {
    double *shifted = malloc((size_t)n * sizeof *shifted), *plus = malloc((size_t)n * sizeof *plus);
    for (int sign = 1; sign >= -1; sign -= 2) {
        for (int i = 0; i < n; ++i) shifted[i] = theta ? theta[i] : 0.0;
        shifted[k] += sign * h;
        assert_int_equal(concord_solver_set_scores(probe, shifted, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(probe, st, NULL), CONCORD_OK);
        const double *u = concord_solver_variables(probe);
        for (int i = 0; i < n; ++i) {
            if (sign > 0) plus[i] = u[i];
            else column[i] = (plus[i] - u[i]) / (2 * h);
        }
    }
    free(shifted);
    free(plus);
}

/* Over the columns k of the Jacobian of s's solution (n variables), by
 * backward passes that must complete their faces: the largest difference
 * from expected(k, l) into *worst_formula (expected NULL: none), and from
 * central differences of probe at theta (h 1e-6, settings st) into
 * *worst_difference (probe NULL: none). */
static void compare_jacobian(concord_solver *s, concord_solver *probe, const concord_settings *st,
                             const double *theta, int n, double (*expected)(int k, int l),
                             double *worst_formula, double *worst_difference) {
    double *column = malloc((size_t)n * sizeof *column),
           *difference = malloc((size_t)n * sizeof *difference);
    *worst_formula = *worst_difference = 0.0;
    for (int k = 0; k < n; ++k) {
        if (probe) difference_column(probe, st, theta, n, k, 1e-6, difference);
        concord_backward_info info;
        jacobian_column(s, n, k, column, &info);
        assert_int_equal(info.incomplete_faces, 0);
        for (int l = 0; l < n; ++l) {
            if (expected)
                *worst_formula = fmax(*worst_formula, fabs(column[l] - expected(k, l)));
            if (probe)
                *worst_difference = fmax(*worst_difference, fabs(column[l] - difference[l]));
        }
    }
    free(column);
    free(difference);
}

enum { MATCHED = 4 };

/* The projection onto the Birkhoff polytope's tangent space,
 * (I - 11^T/n) x (I - 11^T/n). */
static double birkhoff_projection(int k, int l) {
    return ((l / MATCHED == k / MATCHED) - 1.0 / MATCHED) *
           ((l % MATCHED == k % MATCHED) - 1.0 / MATCHED);
}

static void a_tied_perfect_matching_has_the_birkhoff_polytopes_derivative(void **state) {
    (void)state;
    test_rng rng = {11};
    const int n = MATCHED, nn = n * n;
    for (int trial = 0; trial < 3; ++trial) {
        double theta[MATCHED * MATCHED], row[MATCHED], col[MATCHED];
        for (int i = 0; i < n; ++i) {
            row[i] = trial ? rng_normal(&rng) : 0.0;
            col[i] = trial ? rng_normal(&rng) : 0.0;
        }
        int32_t vars[MATCHED * MATCHED];
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                theta[i * n + j] = row[i] + col[j];
                vars[i * n + j] = i * n + j;
            }
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, nn, theta, NULL), CONCORD_OK);
        int32_t f;
        assert_int_equal(concord_add_matching(g, n, n, vars, CONCORD_MATCHING_PERFECT, &f),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_settings st = tight_settings();
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        for (int k = 0; k < nn; ++k) assert_true(fabs(concord_solver_variables(s)[k] - 0.25) < 1e-9);
        int32_t before;
        assert_int_equal(concord_solver_factor_distribution(s, f, &before), CONCORD_OK);
        double worst, unused;
        compare_jacobian(s, NULL, &st, theta, nn, birkhoff_projection, &worst, &unused);
        assert_true(worst < 1e-8);
        /* the tied configurations the backward pass added are no part of
         * the distribution, and the next solve starts without them */
        int32_t after;
        assert_int_equal(concord_solver_factor_distribution(s, f, &after), CONCORD_OK);
        assert_int_equal(after, before);
        double total = 0.0;
        for (int32_t k = 0; k < after; ++k) {
            double weight;
            assert_int_equal(concord_solver_distribution_entry(s, k, &weight, NULL, NULL),
                             CONCORD_OK);
            assert_true(weight > 0.0);
            total += weight;
        }
        assert_true(fabs(total - 1.0) < 1e-12);
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        for (int k = 0; k < nn; ++k) assert_true(fabs(concord_solver_variables(s)[k] - 0.25) < 1e-9);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* A graph of positions x states tag variables, position by position,
 * scored theta (NULL: 0), and one SEQUENCE over them whose transitions
 * are scored `transitions` (NULL: 0). */
static concord_graph *tag_sequence(int positions, int states, const double *theta,
                                   const double *transitions) {
    int32_t vars[128], num_states[32];
    assert_true(positions <= 32 && positions * states <= 128);
    for (int k = 0; k < positions * states; ++k) vars[k] = k;
    for (int i = 0; i < positions; ++i) num_states[i] = states;
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, positions * states, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_sequence(g, positions, num_states, vars, transitions, NULL),
                     CONCORD_OK);
    return g;
}

enum { POSITIONS = 3, STATES = 3, TAGS = POSITIONS * STATES };

/* The projection onto the tangent space of the product of the positions'
 * simplices: I - 11^T/S per position. */
static double simplices_projection(int k, int l) {
    return l / STATES == k / STATES ? (l == k) - 1.0 / STATES : 0.0;
}

static void a_tied_sequence_has_the_simplices_derivative(void **state) {
    (void)state;
    test_rng rng = {23};
    for (int trial = 0; trial < 2; ++trial) {
        double theta[TAGS];
        for (int i = 0; i < POSITIONS; ++i) {
            const double level = trial ? rng_normal(&rng) : 0.0;
            for (int k = 0; k < STATES; ++k) theta[i * STATES + k] = level;
        }
        concord_graph *g = tag_sequence(POSITIONS, STATES, theta, NULL);
        /* s solves at theta once, from scratch; probe at the shifted
         * scores (a warm start from those would bring their configurations) */
        concord_solver *s = new_solver_or_fail(g), *probe = new_solver_or_fail(g);
        concord_settings st = tight_settings();
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        double worst_formula, worst_difference;
        compare_jacobian(s, probe, &st, theta, TAGS, simplices_projection, &worst_formula,
                         &worst_difference);
        assert_true(worst_formula < 1e-8);
        assert_true(worst_difference < 1e-5);
        concord_solver_free(s);
        concord_solver_free(probe);
        concord_graph_free(g);
    }
}

enum { MASKED_POSITIONS = 8, MASKED_STATES = 3, MASKED_TAGS = 24 };
/* start, the tables between positions, stop */
enum { MASKED_TRANSITIONS = 2 * MASKED_STATES +
                            (MASKED_POSITIONS - 1) * MASKED_STATES * MASKED_STATES };

/* The projection onto the tangent space of the tied states' simplices
 * (states 0 and 1 of each position; state 2 stays at 0). */
static double tied_states_projection(int k, int l) {
    const bool tied = k % MASKED_STATES != 2 && l % MASKED_STATES != 2;
    return tied && l / MASKED_STATES == k / MASKED_STATES ? (l == k) - 0.5 : 0.0;
}

/* The perturbations that find the tied configurations are set by the
 * terms of the held configurations' scores: the mask, which they do not
 * have, would make them so large that every round finds state 2 rather
 * than a tie. With 1e10 added to every state's score, the held terms are
 * that large themselves, and the tied configurations are found by a move
 * set apart from it (finite differences cannot see through its rounding:
 * the formula alone there). */
static void a_masked_state_does_not_hide_the_tied_configurations(void **state) {
    (void)state;
    const double mask = -1e9;
    for (int trial = 0; trial < 4; ++trial) {
        const double common = trial < 2 ? 0.0 : 1e10;
        double theta[MASKED_TAGS], transitions[MASKED_TRANSITIONS] = {0};
        for (int i = 0; i < MASKED_POSITIONS; ++i) {
            theta[i * MASKED_STATES] = theta[i * MASKED_STATES + 1] = common;
            theta[i * MASKED_STATES + 2] = common - 1.0;
        }
        if (trial % 2 == 0) theta[2] = common + mask; /* state 2 at position 0 */
        else transitions[MASKED_STATES + 2 * MASKED_STATES + 2] = mask; /* 2 -> 2 from 0 to 1 */
        concord_graph *g = tag_sequence(MASKED_POSITIONS, MASKED_STATES, theta, transitions);
        concord_solver *s = new_solver_or_fail(g), *probe = new_solver_or_fail(g);
        concord_settings st = tight_settings();
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        for (int k = 0; k < MASKED_TAGS; ++k)
            assert_true(fabs(concord_solver_variables(s)[k] -
                             (k % MASKED_STATES == 2 ? 0.0 : 0.5)) < 1e-9);
        double worst_formula, worst_difference;
        compare_jacobian(s, common == 0.0 ? probe : NULL, &st, theta, MASKED_TAGS,
                         tied_states_projection, &worst_formula, &worst_difference);
        if (worst_formula >= 1e-8) fail_msg("trial %d: %g off the formula", trial, worst_formula);
        assert_true(worst_difference < 1e-5);
        concord_solver_free(s);
        concord_solver_free(probe);
        concord_graph_free(g);
    }
}

enum { NEAR_POSITIONS = 20, NEAR_STATES = 4, NEAR_TAGS = NEAR_POSITIONS * NEAR_STATES };

/* Scores drawn at random but small: the solution lies inside a face of
 * dozens of configurations, and the solve stops once the rest would
 * change the objective by no more than rounding (1e-12), a few short. */
static void a_near_tie_at_random_scores_has_the_derivative(void **state) {
    (void)state;
    test_rng rng = {41};
    for (int trial = 0; trial < 2; ++trial) {
        double theta[NEAR_TAGS];
        for (int k = 0; k < NEAR_TAGS; ++k) theta[k] = 0.01 * rng_normal(&rng);
        concord_graph *g = tag_sequence(NEAR_POSITIONS, NEAR_STATES, theta, NULL);
        concord_solver *s = new_solver_or_fail(g), *probe = new_solver_or_fail(g);
        concord_settings st = tight_settings();
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        double unused, worst;
        compare_jacobian(s, probe, &st, theta, NEAR_TAGS, NULL, &unused, &worst);
        assert_true(worst < 1e-4);
        concord_solver_free(s);
        concord_solver_free(probe);
        concord_graph_free(g);
    }
}

enum { AUTOMATON_POSITIONS = 4, AUTOMATON_TAGS = 8, AUTOMATON_MODIFIERS = 4 };

/* The projection onto the tangent space of the positions' two-state
 * simplices: I - 11^T/2 per position. */
static double pairs_projection(int k, int l) { return l / 2 == k / 2 ? (l == k) - 0.5 : 0.0; }

/* The automaton's gradient is 0 at the solution, so what the solve leaves
 * of it is its residual (1e-14): its ties are told from the size of the
 * terms it is computed from, not from its own size. */
static void a_factor_whose_gradient_vanishes_finds_its_ties(void **state) {
    (void)state;
    const int32_t modifiers[AUTOMATON_MODIFIERS] = {7, 1, 0, 3};
    double siblings[(AUTOMATON_MODIFIERS + 1) * (AUTOMATON_MODIFIERS + 2) / 2] = {0};
    concord_graph *g = tag_sequence(AUTOMATON_POSITIONS, 2, NULL, NULL);
    assert_int_equal(
        concord_add_head_automaton(g, AUTOMATON_MODIFIERS, modifiers, siblings, NULL),
        CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g), *probe = new_solver_or_fail(g);
    concord_settings st = tight_settings();
    st.max_iter = 100000;
    assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
    for (int k = 0; k < AUTOMATON_TAGS; ++k)
        assert_true(fabs(concord_solver_variables(s)[k] - 0.5) < 1e-9);
    double worst_formula, worst_difference;
    compare_jacobian(s, probe, &st, NULL, AUTOMATON_TAGS, pairs_projection, &worst_formula,
                     &worst_difference);
    assert_true(worst_formula < 1e-8);
    assert_true(worst_difference < 1e-5);
    concord_solver_free(s);
    concord_solver_free(probe);
    concord_graph_free(g);
}

/* A TREE over `tokens` tokens (every arc given) at zero scores; the number
 * of its variables goes to *arcs. */
static concord_graph *zero_tree(int tokens, int *arcs) {
    const int length = tokens + 1;
    int32_t *heads = malloc((size_t)(length * length) * sizeof *heads);
    int32_t *modifiers = malloc((size_t)(length * length) * sizeof *modifiers);
    int32_t *vars = malloc((size_t)(length * length) * sizeof *vars);
    int n = 0;
    for (int m = 1; m < length; ++m)
        for (int hd = 0; hd < length; ++hd)
            if (hd != m) {
                heads[n] = hd;
                modifiers[n] = m;
                vars[n] = n;
                ++n;
            }
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, n, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_tree(g, length, n, heads, modifiers, vars, 0, NULL), CONCORD_OK);
    free(heads);
    free(modifiers);
    free(vars);
    *arcs = n;
    return g;
}

static void a_tied_face_beyond_the_limit_is_reported(void **state) {
    (void)state;
    const int tokens[2] = {10, 24};
    for (int c = 0; c < 2; ++c) {
        int arcs;
        concord_graph *g = zero_tree(tokens[c], &arcs);
        /* the polytope's dimension: one head per token */
        const int dimension = arcs - tokens[c];
        concord_solver *s = new_solver_or_fail(g);
        assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
        double *du = calloc((size_t)arcs, sizeof *du), *dtheta = malloc((size_t)arcs * sizeof *dtheta);
        du[0] = 1.0;
        concord_backward_info info;
        assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, &info),
                         CONCORD_OK);
        assert_int_equal(info.incomplete_faces, dimension + 1 > CONCORD_FACE_COMPLETION_LIMIT);
        free(du);
        free(dtheta);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* The tied configurations leave the state as they found it: a backward
 * pass changes none of the solves that follow. */
static void a_backward_pass_leaves_the_next_solve_as_it_was(void **state) {
    (void)state;
    test_rng rng = {31};
    for (int c = 0; c < 2; ++c) {
        int arcs;
        concord_graph *g = zero_tree(10, &arcs);
        if (c == 1) {
            int32_t root[10];
            for (int m = 0; m < 10; ++m) root[m] = m * 10; /* head 0 comes first */
            assert_int_equal(concord_add_budget(g, 10, root, NULL, 1.0, false, NULL), CONCORD_OK);
        }
        concord_solver *with = new_solver_or_fail(g), *without = new_solver_or_fail(g);
        double *theta = calloc((size_t)arcs, sizeof *theta);
        double *du = calloc((size_t)arcs, sizeof *du), *dtheta = malloc((size_t)arcs * sizeof *dtheta);
        du[0] = 1.0;
        for (int step = 0; step < 4; ++step) {
            concord_info a, b;
            assert_int_equal(concord_solver_set_scores(with, theta, NULL), CONCORD_OK);
            assert_int_equal(concord_solver_set_scores(without, theta, NULL), CONCORD_OK);
            assert_int_equal(concord_solver_sparse(with, NULL, &a), CONCORD_OK);
            assert_int_equal(concord_solver_sparse(without, NULL, &b), CONCORD_OK);
            assert_int_equal(a.iterations, b.iterations);
            assert_memory_equal(concord_solver_variables(with), concord_solver_variables(without),
                                (size_t)arcs * sizeof(double));
            concord_backward_info info;
            assert_int_equal(concord_solver_backward(with, NULL, du, NULL, dtheta, NULL, &info),
                             CONCORD_OK);
            for (int k = 0; k < arcs; ++k) theta[k] = 0.01 * rng_normal(&rng);
        }
        free(theta);
        free(du);
        free(dtheta);
        concord_solver_free(with);
        concord_solver_free(without);
        concord_graph_free(g);
    }
}

/* XOR's configuration over n links at scores a: the first of the best
 * links on, and its score. */
static void best_single_link(int n, const double *a, double *u, double *value) {
    int best = 0;
    for (int k = 0; k < n; ++k) {
        u[k] = 0.0;
        if (a[k] > a[best]) best = k;
    }
    u[best] = 1.0;
    *value = a[best];
}

/* XOR's oracle over three links, failing with error 9 once *fail is
 * set. */
static int xor_oracle(void *user, const double *a, const double *b, double *u, double *v,
                      double *value) {
    (void)b, (void)v;
    if (*(const bool *)user) return 9;
    best_single_link(3, a, u, value);
    return 0;
}

static void an_oracle_failing_while_the_face_is_completed_fails_the_backward_pass(void **state) {
    (void)state;
    bool fail = false;
    int32_t vars[3] = {0, 1, 2};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 3, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_factor(g, 3, vars, NULL, 0, NULL, xor_oracle, &fail, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st = tight_settings();
    assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
    double du[3] = {1, 0, 0}, dtheta[3];
    concord_backward_info info;
    /* at zero scores, u = 1/3 inside the simplex: J = I - 11^T/3 */
    assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info), CONCORD_OK);
    assert_int_equal(info.incomplete_faces, 0);
    for (int k = 0; k < 3; ++k) assert_true(fabs(dtheta[k] - ((k == 0) - 1.0 / 3)) < 1e-9);
    fail = true;
    assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info),
                     CONCORD_ECALLBACK);
    assert_int_equal(concord_solver_callback_code(s), 9);
    assert_non_null(strstr(concord_solver_last_error(s), "factor 0"));
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The best of four links alone (XOR by a user oracle: the active set
 * solves it). */
static int best_of_four_oracle(void *user, const double *a, const double *b, double *u,
                               double *v, double *value) {
    (void)user, (void)b, (void)v;
    best_single_link(4, a, u, value);
    return 0;
}

/* The projection of z (n entries) onto the simplex: the largest k with
 * z_(k) > (sum of the k largest - 1) / k sets the threshold. */
static void sparsemax(const double *z, int n, double *p) {
    double sorted[8], sum = 0.0, tau = 0.0;
    memcpy(sorted, z, (size_t)n * sizeof *z);
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && sorted[j - 1] < sorted[j]; --j) {
            const double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    for (int k = 0; k < n; ++k) {
        sum += sorted[k];
        if (sorted[k] > (sum - 1.0) / (k + 1)) tau = (sum - 1.0) / (k + 1);
    }
    for (int i = 0; i < n; ++i) p[i] = z[i] > tau ? z[i] - tau : 0.0;
}

/* A score common to every configuration (c on each link of an XOR given
 * by a user oracle, whose configurations each hold one link) changes
 * neither the solution nor its derivative: they are sparsemax of the
 * scores without it and its Jacobian diag(s) - s s^T / |S| (s the
 * support), at c up to 1e12. With c inside the active set's targets and
 * tolerances, the solution was 6e-7 off at 1e10 and 0.3 off, called
 * integral, at 1e12; and the backward pass took configurations up to one
 * unit below the best for tied, from 1e8. */
static void a_score_common_to_every_configuration_changes_nothing(void **state) {
    (void)state;
    const double base[4] = {0.12573022, -0.13210486, 0.64042265, 0.10490012};
    const double offsets[] = {0.0, 1e6, 1e8, 1e9, 1e10, 1e12};
    int32_t vars[4] = {0, 1, 2, 3};
    for (size_t o = 0; o < sizeof offsets / sizeof *offsets; ++o) {
        const double c = offsets[o];
        double a[4], shifted[4], expected[4];
        for (int k = 0; k < 4; ++k) {
            a[k] = base[k] + c;
            shifted[k] = a[k] - c; /* exact: what the library receives, without c */
        }
        sparsemax(shifted, 4, expected);
        concord_graph *g = concord_graph_new();
        assert_non_null(g);
        assert_int_equal(concord_add_variables(g, 4, a, NULL), CONCORD_OK);
        assert_int_equal(concord_add_factor(g, 4, vars, NULL, 0, NULL, best_of_four_oracle, NULL,
                                            NULL),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_settings st = tight_settings();
        concord_info info;
        assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_FRACTIONAL);
        const double *u = concord_solver_variables(s);
        for (int k = 0; k < 4; ++k)
            if (fabs(u[k] - expected[k]) > 1e-9)
                fail_msg("offset %g: u[%d] = %.17g, sparsemax %.17g", c, k, u[k], expected[k]);
        int support = 0;
        for (int k = 0; k < 4; ++k) support += expected[k] > 0.0;
        for (int k = 0; k < 4; ++k) {
            double du[4] = {0}, dtheta[4];
            du[k] = 1.0;
            concord_backward_info binfo;
            assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &binfo),
                             CONCORD_OK);
            for (int i = 0; i < 4; ++i) {
                const double jacobian = expected[i] > 0.0 && expected[k] > 0.0
                                            ? (i == k) - 1.0 / support
                                            : 0.0;
                if (fabs(dtheta[i] - jacobian) > 1e-6)
                    fail_msg("offset %g: J[%d][%d] = %.17g, sparsemax's %.17g", c, i, k,
                             dtheta[i], jacobian);
            }
        }
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_tied_perfect_matching_has_the_birkhoff_polytopes_derivative),
        cmocka_unit_test(a_tied_sequence_has_the_simplices_derivative),
        cmocka_unit_test(a_masked_state_does_not_hide_the_tied_configurations),
        cmocka_unit_test(a_near_tie_at_random_scores_has_the_derivative),
        cmocka_unit_test(a_factor_whose_gradient_vanishes_finds_its_ties),
        cmocka_unit_test(a_tied_face_beyond_the_limit_is_reported),
        cmocka_unit_test(a_backward_pass_leaves_the_next_solve_as_it_was),
        cmocka_unit_test(an_oracle_failing_while_the_face_is_completed_fails_the_backward_pass),
        cmocka_unit_test(a_score_common_to_every_configuration_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
