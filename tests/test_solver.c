/*
 * The solver API: solvers apart from the graph, batches on threads, warm
 * starts, user factors, progress, limits and interrupts, and the errors of
 * the backward pass.
 *
 * References: sequential solves (a batch must equal them bit for bit, on
 * any number of threads), a checksum of the graph's storage (solving never
 * changes it), the built-in factors (user factors that re-implement XOR,
 * BUDGET and TREE with oracles written here must give their solutions),
 * brute-force enumeration of dependency trees (the TREE oracle), central
 * finite differences of the forward pass (the backward pass through user
 * factors), and the closed form of a weighted sparsemax (regularization
 * weights).
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "concord.h"
#include "graph.h"
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t k = 0; k < n; ++k) {
        h ^= p[k];
        h *= 1099511628211ull;
    }
    return h;
}

/* A checksum of everything the graph stores: sizes, scores, factors,
 * links, multi-variables, revisions and the error message. */
static uint64_t graph_checksum(const concord_graph *g) {
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &g->n_vars, sizeof g->n_vars);
    h = fnv(h, g->theta, (size_t)g->n_vars * sizeof *g->theta);
    h = fnv(h, g->weight, (size_t)g->n_vars * sizeof *g->weight);
    h = fnv(h, &g->n_add, sizeof g->n_add);
    h = fnv(h, g->phi, (size_t)g->n_add * sizeof *g->phi);
    h = fnv(h, &g->n_factors, sizeof g->n_factors);
    h = fnv(h, g->factors, (size_t)g->n_factors * sizeof *g->factors);
    h = fnv(h, &g->n_links, sizeof g->n_links);
    h = fnv(h, g->link_var, (size_t)g->n_links * sizeof *g->link_var);
    h = fnv(h, g->link_neg, (size_t)g->n_links * sizeof *g->link_neg);
    h = fnv(h, &g->n_multi, sizeof g->n_multi);
    h = fnv(h, g->multi, (size_t)g->n_multi * sizeof *g->multi);
    h = fnv(h, &g->structure_revision, sizeof g->structure_revision);
    h = fnv(h, &g->scores_revision, sizeof g->scores_revision);
    h = fnv(h, g->error, sizeof g->error);
    return h;
}

static void random_normals(test_rng *rng, double *x, int n, double scale) {
    for (int i = 0; i < n; ++i) x[i] = scale * rng_normal(rng);
}

/* An LP-matching of rows x cols (XOR per row, ATMOSTONE per column) with
 * a PAIR between horizontal neighbours: fractional solutions, a few hundred
 * iterations, additional outputs. */
static concord_graph *matching_graph(int rows, int cols, test_rng *rng) {
    concord_graph *g = concord_graph_new();
    double *theta = malloc((size_t)(rows * cols) * sizeof *theta);
    random_normals(rng, theta, rows * cols, 1.0);
    assert_int_equal(concord_add_variables(g, rows * cols, theta, NULL), CONCORD_OK);
    int32_t vars[64];
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) vars[j] = i * cols + j;
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, cols, vars, NULL, NULL), CONCORD_OK);
    }
    for (int j = 0; j < cols; ++j) {
        for (int i = 0; i < rows; ++i) vars[i] = i * cols + j;
        assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, rows, vars, NULL, NULL),
                         CONCORD_OK);
    }
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j + 1 < cols; j += 2)
            assert_int_equal(
                concord_add_pair(g, i * cols + j, i * cols + j + 1, 0.5 * rng_normal(rng), NULL),
                CONCORD_OK);
    free(theta);
    return g;
}

/* ------------------------------------------------------------------------
 * The graph is the problem; solvers hold everything else
 * ------------------------------------------------------------------------ */

/* Four solvers over one graph, each with its own scores, solved as a batch
 * on 1, 2, 4 and 8 threads, give bit for bit what four solvers solved one
 * after the other give; the graph's storage is byte-identical before and
 * after (checksum), for LP-MAP, LP-SparseMAP, exact MAP, PSDD and MPLP
 * (iterations capped at 300, which PSDD reaches, and MPLP's sweeps at 30). */
static void a_batch_equals_sequential_solves_and_leaves_the_graph_untouched(void **state) {
    (void)state;
    enum { SOLVERS = 4, ROWS = 8, COLS = 8 };
    test_rng rng = {11};
    concord_graph *g = matching_graph(ROWS, COLS, &rng);
    const int32_t n = concord_num_variables(g), n_add = concord_num_additionals(g);
    double *scores = malloc((size_t)SOLVERS * (size_t)(n + n_add) * sizeof *scores);
    random_normals(&rng, scores, SOLVERS * (n + n_add), 1.0);
    const uint64_t before = graph_checksum(g);
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 300;
    for (int algorithm = CONCORD_ALGORITHM_AD3; algorithm <= CONCORD_ALGORITHM_MPLP;
         ++algorithm) {
        /* the sequential reference */
        concord_solver *seq[SOLVERS];
        concord_info seq_info[SOLVERS];
        int first_rc = CONCORD_OK;
        st.max_iter = algorithm == CONCORD_ALGORITHM_MPLP ? 30 : 300; /* MPLP: sweeps */
        for (int k = 0; k < SOLVERS; ++k) {
            seq[k] = new_solver_or_fail(g);
            const double *s = scores + (size_t)k * (size_t)(n + n_add);
            assert_int_equal(concord_solver_set_scores(seq[k], s, s + n), CONCORD_OK);
            int rc;
            switch (algorithm) {
            case CONCORD_ALGORITHM_AD3: rc = concord_solver_map(seq[k], &st, &seq_info[k]); break;
            case CONCORD_ALGORITHM_SPARSE:
                rc = concord_solver_sparse(seq[k], &st, &seq_info[k]);
                break;
            case CONCORD_ALGORITHM_EXACT:
                rc = concord_solver_exact(seq[k], &st, &seq_info[k]);
                break;
            case CONCORD_ALGORITHM_PSDD: rc = concord_solver_psdd(seq[k], &st, &seq_info[k]); break;
            default: rc = concord_solver_mplp(seq[k], &st, &seq_info[k]); break;
            }
            assert_true(rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED);
            if (first_rc == CONCORD_OK) first_rc = rc;
        }
        for (int threads = 1; threads <= 8; threads *= 2) {
            concord_solver *batch[SOLVERS];
            concord_info info[SOLVERS];
            for (int k = 0; k < SOLVERS; ++k) {
                batch[k] = new_solver_or_fail(g);
                const double *s = scores + (size_t)k * (size_t)(n + n_add);
                assert_int_equal(concord_solver_set_scores(batch[k], s, s + n), CONCORD_OK);
            }
            assert_int_equal(concord_solve_batch(batch, SOLVERS, (concord_algorithm)algorithm,
                                                 &st, info, threads),
                             first_rc);
            for (int k = 0; k < SOLVERS; ++k) {
                assert_int_equal(info[k].iterations, seq_info[k].iterations);
                assert_true(info[k].value == seq_info[k].value);
                assert_true(info[k].upper_bound == seq_info[k].upper_bound);
                assert_memory_equal(concord_solver_variables(batch[k]),
                                    concord_solver_variables(seq[k]), (size_t)n * sizeof(double));
                assert_memory_equal(concord_solver_additionals(batch[k]),
                                    concord_solver_additionals(seq[k]),
                                    (size_t)n_add * sizeof(double));
                concord_solver_free(batch[k]);
            }
        }
        /* the four score sets gave four different problems (MPLP's value
         * may be -inf for all: its assignments violate constraints here) */
        assert_true(seq_info[0].upper_bound != seq_info[1].upper_bound);
        for (int k = 0; k < SOLVERS; ++k) concord_solver_free(seq[k]);
    }
    assert_true(graph_checksum(g) == before);
    free(scores);
    concord_graph_free(g);
}

/* A solver listed twice is refused before anything is solved; an empty
 * batch is fine (but for an unknown algorithm); a null solver is an error. */
static void a_batch_refuses_a_solver_listed_twice(void **state) {
    (void)state;
    test_rng rng = {3};
    concord_graph *g = matching_graph(3, 3, &rng);
    concord_solver *a = new_solver_or_fail(g), *b = new_solver_or_fail(g);
    concord_solver *twice[3] = {a, b, a};
    concord_info info[3];
    memset(info, 0xab, sizeof info);
    assert_int_equal(concord_solve_batch(twice, 3, CONCORD_ALGORITHM_AD3, NULL, info, 2),
                     CONCORD_EINVAL);
    for (int k = 0; k < 3; ++k)
        assert_true(info[k].status == CONCORD_STATUS_UNSOLVED && info[k].iterations == 0 &&
                    info[k].value == 0.0);
    assert_null(concord_solver_variables(a));
    assert_int_equal(concord_solve_batch(twice, 0, CONCORD_ALGORITHM_AD3, NULL, NULL, 2),
                     CONCORD_OK);
    /* an unknown algorithm is refused even when there is nothing to solve */
    assert_int_equal(concord_solve_batch(twice, 0, (concord_algorithm)5, NULL, NULL, 2),
                     CONCORD_EINVAL);
    assert_int_equal(concord_solve_batch(NULL, 0, (concord_algorithm)-1, NULL, NULL, 1),
                     CONCORD_EINVAL);
    concord_solver *pair_of[2] = {a, b};
    memset(info, 0xab, sizeof info);
    assert_int_equal(concord_solve_batch(pair_of, 2, (concord_algorithm)5, NULL, info, 2),
                     CONCORD_EINVAL);
    assert_true(info[0].status == CONCORD_STATUS_UNSOLVED && info[1].iterations == 0);
    concord_solver *with_null[2] = {a, NULL};
    assert_int_equal(concord_solve_batch(with_null, 2, CONCORD_ALGORITHM_AD3, NULL, NULL, 2),
                     CONCORD_EINVAL);
    /* the refused batch released its solvers: they solve normally */
    concord_solver *pair[2] = {a, b};
    assert_int_equal(concord_solve_batch(pair, 2, CONCORD_ALGORITHM_AD3, NULL, info, 0),
                     CONCORD_OK);
    assert_true(info[0].iterations > 0 && info[1].iterations > 0);
    /* a solver that refuses (its graph changed) has an unsolved info; the
     * others solve */
    concord_graph *other = matching_graph(2, 2, &rng);
    concord_solver *stale = new_solver_or_fail(other);
    assert_int_equal(concord_add_variables(other, 1, NULL, NULL), CONCORD_OK);
    concord_solver *mixed[2] = {stale, a};
    memset(info, 0xab, sizeof info);
    assert_int_equal(concord_solve_batch(mixed, 2, CONCORD_ALGORITHM_SPARSE, NULL, info, 2),
                     CONCORD_EINVAL);
    assert_true(info[0].status == CONCORD_STATUS_UNSOLVED && info[0].iterations == 0);
    assert_true(info[1].status == CONCORD_STATUS_FRACTIONAL ||
                info[1].status == CONCORD_STATUS_INTEGRAL);
    assert_true(info[1].iterations > 0);
    assert_non_null(strstr(concord_solver_last_error(stale), "structure changed"));
    concord_solver_free(stale);
    concord_graph_free(other);
    concord_solver_free(a);
    concord_solver_free(b);
    concord_graph_free(g);
}

/* Solvers read the graph's scores until given their own; NULL gives the
 * graph's back; non-finite scores are refused with nothing changed. */
static void solver_scores_are_their_own(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double theta[3] = {1.0, 0.0, 0.0};
    int32_t vars[3] = {0, 1, 2};
    concord_add_variables(g, 3, theta, NULL);
    concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_true(concord_solver_variables(s)[0] == 1.0);
    double own[3] = {0.0, 0.0, 3.0};
    assert_int_equal(concord_solver_set_scores(s, own, NULL), CONCORD_OK);
    assert_ptr_not_equal(concord_solver_variable_scores(s), concord_variable_scores(g));
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_true(concord_solver_variables(s)[2] == 1.0);
    double nan_scores[3] = {0.0, NAN, 0.0};
    assert_int_equal(concord_solver_set_scores(s, nan_scores, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "not finite"));
    assert_true(concord_solver_variable_scores(s)[2] == 3.0);
    assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
    assert_ptr_equal(concord_solver_variable_scores(s), concord_variable_scores(g));
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_true(concord_solver_variables(s)[0] == 1.0);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* After the graph's structure changes, its old solvers refuse to work,
 * hand out none of their buffers (sized for the old graph), and are freed
 * safely (the sanitized build reads past no array). */
static void a_solver_refuses_a_graph_whose_structure_changed(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    const double scores[3] = {0.5, -0.2, 0.1};
    int32_t first, labels[2];
    concord_add_multi_variable(g, 3, scores, true, &first);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_non_null(concord_solver_variables(s));
    concord_decoding decoding;
    assert_int_equal(concord_solver_decode(s, &decoding), CONCORD_OK);
    assert_non_null(concord_solver_decoded(s));
    assert_int_equal(concord_solver_decoded_labels(s, labels), CONCORD_OK);
    assert_int_equal(labels[0], 0);
    assert_int_equal(concord_num_additionals(g), 0);
    assert_int_equal(concord_solver_decoded_additionals(s, NULL), CONCORD_OK);
    concord_add_multi_variable(g, 2, NULL, true, &first);
    assert_null(concord_solver_decoded(s));
    assert_int_equal(concord_solver_decoded_labels(s, labels), CONCORD_EINVAL);
    double v[1];
    assert_int_equal(concord_solver_decoded_additionals(s, v), CONCORD_EINVAL);
    assert_null(concord_solver_variables(s));
    assert_null(concord_solver_additionals(s));
    assert_null(concord_solver_variable_scores(s));
    assert_null(concord_solver_additional_scores(s));
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "structure changed"));
    assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_EINVAL);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Regularization weights: 1 until set (new variables too), checked, and
 * part of the structure (a solver made before they changed refuses). */
static void regularization_weights_are_checked_and_belong_to_the_structure(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t first;
    concord_add_variables(g, 3, NULL, &first);
    const int32_t vars[3] = {0, 1, 2};
    concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL);
    for (int32_t i = 0; i < 3; ++i) assert_true(concord_regularization(g)[i] == 1.0);
    concord_solver *s = new_solver_or_fail(g);
    const double ones[2] = {1.0, 1.0}, weights[2] = {0.5, 2.0};
    /* the values the weights already have, or none: nothing changes */
    assert_int_equal(concord_set_regularization(g, 1, 2, ones), CONCORD_OK);
    assert_int_equal(concord_set_regularization(g, 0, 0, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_set_regularization(g, 1, 2, weights), CONCORD_OK);
    assert_true(concord_regularization(g)[0] == 1.0 && concord_regularization(g)[1] == 0.5 &&
                concord_regularization(g)[2] == 2.0);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "structure changed"));
    concord_solver_free(s);
    concord_add_variables(g, 2, NULL, &first);
    assert_true(concord_regularization(g)[3] == 1.0 && concord_regularization(g)[4] == 1.0);
    const double bad[] = {0.0, -1.0, NAN, INFINITY, 0.5e-6, 2e6};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        assert_int_equal(concord_set_regularization(g, 4, 1, &bad[k]), CONCORD_EINVAL);
        assert_non_null(strstr(concord_last_error(g), "regularization weight of variable 4"));
    }
    assert_int_equal(concord_set_regularization(g, 4, 2, weights), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "out of range"));
    assert_int_equal(concord_set_regularization(g, -1, 1, weights), CONCORD_EINVAL);
    assert_int_equal(concord_set_regularization(g, 0, 1, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_set_regularization(NULL, 0, 1, weights), CONCORD_EINVAL);
    assert_int_equal(concord_set_regularization(g, 0, 0, NULL), CONCORD_OK);
    assert_true(concord_regularization(g)[4] == 1.0);
    concord_graph_free(g);
}

/* The weighted SparseMAP of an XOR factor: u_i = max((theta_i - tau) /
 * w_i, 0) summing to 1, tau found by bisection. */
static void weighted_sparsemax(int32_t n, const double *theta, const double *w, double *u) {
    double lo = -1e3, hi = 1e3;
    for (int it = 0; it < 200; ++it) {
        const double tau = 0.5 * (lo + hi);
        double sum = 0.0;
        for (int32_t i = 0; i < n; ++i) sum += fmax((theta[i] - tau) / w[i], 0.0);
        if (sum > 1.0) lo = tau;
        else hi = tau;
    }
    for (int32_t i = 0; i < n; ++i) u[i] = fmax((theta[i] - 0.5 * (lo + hi)) / w[i], 0.0);
}

/* Sets every regularization weight of g and solves LP-SparseMAP to tol
 * 1e-10 with a new solver, which it returns. */
static concord_solver *weighted_sparse_solve(concord_graph *g, const double *weights,
                                             concord_info *info) {
    assert_int_equal(concord_set_regularization(g, 0, concord_num_variables(g), weights),
                     CONCORD_OK);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-10;
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(s, &st, info), CONCORD_OK);
    return s;
}

/* LP-SparseMAP with regularization weights against closed forms: an XOR
 * alone is the weighted sparsemax, a variable in no factor clip(theta / w)
 * with slope 1/w. */
static void regularization_weights_change_the_objective_as_documented(void **state) {
    (void)state;
    const double theta[4] = {0.8, 0.3, -0.2, 2.0}, w[4] = {2.0, 0.5, 1.0, 4.0};
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 4, theta, NULL);
    const int32_t vars[3] = {0, 1, 2};
    concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL);
    concord_info info;
    concord_solver *s = weighted_sparse_solve(g, w, &info);
    double expect[3];
    weighted_sparsemax(3, theta, w, expect);
    const double *u = concord_solver_variables(s);
    double value = theta[3] * 0.5 - 0.5 * w[3] * 0.25;
    for (int32_t i = 0; i < 3; ++i) {
        assert_true(fabs(u[i] - expect[i]) < 1e-9);
        value += theta[i] * expect[i] - 0.5 * w[i] * expect[i] * expect[i];
    }
    assert_true(fabs(u[3] - 0.5) < 1e-12); /* clip(2 / 4) */
    assert_true(fabs(info.value - value) < 1e-9);
    const double du[4] = {0.0, 0.0, 0.0, 1.0};
    double dtheta[4];
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL), CONCORD_OK);
    assert_true(fabs(dtheta[3] - 0.25) < 1e-12);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Variables x, y, z and a copy x' of x, scored (0.8, 0.3, -0.2, 0) times
 * scale: an XOR over x', y, z and a second XOR with x' negated that holds
 * x' equal to x. */
static concord_graph *xor_over_a_copy(double scale) {
    const double theta[4] = {0.8 * scale, 0.3 * scale, -0.2 * scale, 0.0};
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 4, theta, NULL);
    const int32_t over_copy[3] = {3, 1, 2}, tie[2] = {0, 3};
    const bool tie_negated[2] = {false, true};
    concord_add_logic(g, CONCORD_XOR, 3, over_copy, NULL, NULL);
    concord_add_logic(g, CONCORD_XOR, 2, tie, tie_negated, NULL);
    return g;
}

/* xor_over_a_copy, x and x' weighing 1/2 each, solves as the XOR over x
 * itself with unit weights (ADMM: the graph is not separable): sparsemax,
 * with the Jacobian I - 11^T/|S| on its support S. */
static void copies_weighing_half_count_once(void **state) {
    (void)state;
    const double theta[3] = {0.8, 0.3, -0.2};
    concord_graph *g = xor_over_a_copy(1.0);
    const double halves[4] = {0.5, 1.0, 1.0, 0.5}, ones[3] = {1.0, 1.0, 1.0};
    concord_info info;
    concord_solver *s = weighted_sparse_solve(g, halves, &info);
    double expect[3];
    weighted_sparsemax(3, theta, ones, expect); /* (0.75, 0.25, 0) */
    const double *u = concord_solver_variables(s);
    for (int32_t i = 0; i < 3; ++i) assert_true(fabs(u[i] - expect[i]) < 1e-8);
    assert_true(fabs(u[3] - u[0]) < 1e-8);
    const double du[4] = {1.0, -0.5, 0.3, 0.0};
    double dtheta[4];
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL), CONCORD_OK);
    const double mean = 0.5 * (du[0] + du[1]); /* over the support {x, y} */
    assert_true(fabs(dtheta[0] - (du[0] - mean)) < 1e-8);
    assert_true(fabs(dtheta[1] - (du[1] - mean)) < 1e-8);
    assert_true(fabs(dtheta[2]) < 1e-8);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The stopping test measures LP-SparseMAP's dual residual in units of each
 * variable's curvature w: the graph above with scores and weights both
 * times 1e-4 has the same solution, and a solve at the default tolerance
 * must end within 1e-5 of it (with the changes not divided by the
 * weights, it stopped 0.02 away). */
static void tiny_weights_stop_at_the_tolerance(void **state) {
    (void)state;
    concord_graph *g = xor_over_a_copy(1e-4);
    const double weights[4] = {0.5e-4, 1e-4, 1e-4, 0.5e-4};
    assert_int_equal(concord_set_regularization(g, 0, 4, weights), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    const double *u = concord_solver_variables(s), expect[3] = {0.75, 0.25, 0.0};
    for (int32_t i = 0; i < 3; ++i) assert_true(fabs(u[i] - expect[i]) < 1e-5);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A SEQUENCE of one position over three states (solved by its active set,
 * alone in its graph) with every weight w and scores offset + w z, z =
 * (0.8, 0.3, -0.2): the offset cancels on the simplex, and the solution is
 * the sparsemax of z, (0.75, 0.25, 0), whatever w. Scores 1e16 are beyond
 * the precision of |u|^2 / 2 at weight 1 but not at weight 1e6: there the
 * solve returned the MAP vertex (1, 0, 0) as if the weights were 1. */
static void huge_scores_are_measured_against_the_weights(void **state) {
    (void)state;
    const double cases[2][2] = {{1e10, 1.0}, {1e16, 1e6}}; /* offset, w */
    const double z[3] = {0.8, 0.3, -0.2}, expect[3] = {0.75, 0.25, 0.0};
    for (int k = 0; k < 2; ++k) {
        const double offset = cases[k][0], w = cases[k][1];
        const double theta[3] = {offset + w * z[0], offset + w * z[1], offset + w * z[2]};
        const double weights[3] = {w, w, w};
        const int32_t states = 3, vars[3] = {0, 1, 2};
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
        assert_int_equal(concord_add_sequence(g, 1, &states, vars, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_set_regularization(g, 0, 3, weights), CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
        const double *u = concord_solver_variables(s);
        for (int32_t i = 0; i < 3; ++i) assert_true(fabs(u[i] - expect[i]) < 1e-5);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* Graphs whose factors' scores are all 0 (found by random graphs of
 * test_lp_random drawn with other seeds): the factors' part is worth 0 at
 * every point, and LP-MAP's bound is exactly the free variables' best.
 * The first graph has a free variable scored 5.967e-4, and its bound stood
 * 2.9e-7 above that (the multipliers' bound at the end of the solve); the
 * second has no score at all, and its bound stood 2.8e-18 below 0, below
 * the optimum, by rounding. */
static void a_graph_whose_factors_score_nothing_is_bounded_by_its_free_variables(void **state) {
    (void)state;
    for (int k = 0; k < 2; ++k) {
        concord_graph *g = concord_graph_new();
        double free_best;
        if (k == 0) {
            const double theta[6] = {0, 0, 0, 5.9670927623714769e-4, 0, 0};
            free_best = theta[3];
            assert_int_equal(concord_add_variables(g, 6, theta, NULL), CONCORD_OK);
            assert_int_equal(concord_add_budget(g, 4, (int32_t[]){4, 1, 0, 2}, NULL, 1.0, true,
                                                NULL),
                             CONCORD_OK);
            assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, (int32_t[]){4, 2}, NULL, NULL),
                             CONCORD_OK);
            assert_int_equal(concord_add_logic(g, CONCORD_IMPLY, 3, (int32_t[]){1, 2, 4}, NULL,
                                               NULL),
                             CONCORD_OK);
        } else {
            free_best = 0.0;
            assert_int_equal(concord_add_variables(g, 2, (double[]){0, 0}, NULL), CONCORD_OK);
            assert_int_equal(concord_add_logic(g, CONCORD_XOROUT, 1, (int32_t[]){0},
                                               (bool[]){true}, NULL),
                             CONCORD_OK);
            assert_int_equal(concord_add_logic(g, CONCORD_XOROUT, 2, (int32_t[]){1, 0}, NULL,
                                               NULL),
                             CONCORD_OK);
            assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, (int32_t[]){1, 0},
                                               (bool[]){true, false}, NULL),
                             CONCORD_OK);
        }
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_map(s, NULL, &info), CONCORD_OK);
        assert_true(info.upper_bound == free_best);
        assert_true(fabs(info.value - free_best) <= 1e-9 * free_best);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* A warm start after a small change of the scores needs fewer iterations
 * than a cold start, and reaches the same solution. */
static void a_warm_start_after_a_small_change_is_faster(void **state) {
    (void)state;
    test_rng rng = {29};
    concord_graph *g = matching_graph(12, 12, &rng);
    const int32_t n = concord_num_variables(g);
    double *theta = malloc((size_t)n * sizeof *theta);
    memcpy(theta, concord_variable_scores(g), (size_t)n * sizeof *theta);
    concord_settings warm, cold;
    concord_default_settings(&warm);
    warm.tol = 1e-8;
    cold = warm;
    cold.warm_start = false;
    for (int sparse = 0; sparse <= 1; ++sparse) {
        concord_solver *w = new_solver_or_fail(g), *c = new_solver_or_fail(g);
        concord_info first, warm_info, cold_info;
        assert_int_equal(sparse ? concord_solver_sparse(w, &warm, &first)
                                : concord_solver_map(w, &warm, &first),
                         CONCORD_OK);
        for (int32_t i = 0; i < n; ++i) theta[i] += 0.01 * rng_normal(&rng);
        assert_int_equal(concord_solver_set_scores(w, theta, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_set_scores(c, theta, NULL), CONCORD_OK);
        assert_int_equal(sparse ? concord_solver_sparse(w, &warm, &warm_info)
                                : concord_solver_map(w, &warm, &warm_info),
                         CONCORD_OK);
        assert_int_equal(sparse ? concord_solver_sparse(c, &cold, &cold_info)
                                : concord_solver_map(c, &cold, &cold_info),
                         CONCORD_OK);
        print_message("%s: cold %d iterations, warm after a 1%% change %d\n",
                      sparse ? "LP-SparseMAP" : "LP-MAP", cold_info.iterations,
                      warm_info.iterations);
        assert_true(warm_info.iterations < cold_info.iterations);
        assert_true(fabs(warm_info.value - cold_info.value) <= 1e-6 * (1.0 + fabs(cold_info.value)));
        if (sparse) /* the LP-SparseMAP solution is unique */
            for (int32_t i = 0; i < n; ++i)
                assert_true(fabs(concord_solver_variables(w)[i] - concord_solver_variables(c)[i]) <=
                            1e-5);
        concord_solver_free(w);
        concord_solver_free(c);
    }
    free(theta);
    concord_graph_free(g);
}

/* A warm start follows a change of the scores' scale: after a solve at
 * scores around 1e8, solves at scores from 0 to 1 (AD3, PSDD, exact MAP)
 * find the MAP. The graph, XOR(x0..x3) and x0 AND x1 AND x2 = NOT x3,
 * allows one assignment, (0, 0, 0, 1), by brute force over the 16. Kept
 * at their old size, the multipliers left AD3 and exact MAP at max_iter
 * and made PSDD call the graph infeasible. */
static void warm_starts_follow_a_change_of_the_score_scale(void **state) {
    (void)state;
    test_rng rng = {31};
    concord_graph *g = concord_graph_new();
    int32_t first, vars[4] = {0, 1, 2, 3}, and_vars[4] = {0, 2, 1, 3};
    const bool negated[4] = {false, false, false, true};
    const double large[4] = {60024085.5, -27574187.6, 76115155.4, 67211116.7};
    assert_int_equal(concord_add_variables(g, 4, large, &first), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 4, vars, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_ANDOUT, 4, and_vars, negated, NULL), CONCORD_OK);
    int allowed = 0, which = -1;
    for (int x = 0; x < 16; ++x) {
        const int u0 = x & 1, u1 = (x >> 1) & 1, u2 = (x >> 2) & 1, u3 = (x >> 3) & 1;
        if (u0 + u1 + u2 + u3 == 1 && (u0 & u1 & u2) == 1 - u3) ++allowed, which = x;
    }
    assert_int_equal(allowed, 1);
    assert_int_equal(which, 8); /* (0, 0, 0, 1) */
    const double scales[] = {0.0, 1e-10, 1e-4, 1e-2, 1.0};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; ++k) {
        for (int algorithm = 0; algorithm < 3; ++algorithm) {
            double theta[4];
            for (int i = 0; i < 4; ++i) theta[i] = scales[k] * rng_normal(&rng);
            concord_solver *s = new_solver_or_fail(g);
            assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
            assert_int_equal(concord_solver_set_scores(s, theta, NULL), CONCORD_OK);
            concord_info info;
            const int rc = algorithm == 0   ? concord_solver_map(s, NULL, &info)
                           : algorithm == 1 ? concord_solver_psdd(s, NULL, &info)
                                            : concord_solver_exact(s, NULL, &info);
            assert_int_equal(rc, CONCORD_OK);
            assert_int_equal(info.status, algorithm == 2 ? CONCORD_STATUS_OPTIMAL
                                                         : CONCORD_STATUS_INTEGRAL);
            assert_true(fabs(info.value - theta[3]) <= 1e-9 * (1.0 + fabs(theta[3])));
            const double *u = concord_solver_variables(s);
            for (int i = 0; i < 4; ++i) assert_true(u[i] == (i == 3 ? 1.0 : 0.0));
            concord_solver_free(s);
        }
    }
    concord_graph_free(g);
}

/* The distribution behind each closed-form factor's part of a solution
 * mixes to that part (the factor's copies, and its additional outputs)
 * within 1e-4, however far apart the regularization weights are within
 * their documented range and wherever the solve stopped: over random
 * graphs of XOR, OR, ATMOSTONE, OROUT, BUDGET and PAIR factors with
 * negated links, LP-SparseMAP with weights from 1e-6 to 1e6 and max_iter
 * from 1 up. Along links weighted 1e12 below the scores the active set's
 * point drifted 0.1 to 0.5 from the solution with CONCORD_OK, and a solve
 * stopped at max_iter whose last iteration moved the penalty had its
 * distributions computed at a penalty no factor was solved at. */
static void distributions_mix_to_the_factors_solutions(void **state) {
    (void)state;
    enum { GRAPHS = 400, MAX_VARS = 7 };
    test_rng rng = {53};
    int checked = 0;
    for (int t = 0; t < GRAPHS; ++t) {
        const int n = 3 + rng_int(&rng, MAX_VARS - 2);
        double theta[MAX_VARS], weights[MAX_VARS];
        for (int i = 0; i < n; ++i) {
            theta[i] = rng_int(&rng, 5) ? 2.0 * rng_uniform(&rng) - 1.0 : 0.0;
            weights[i] = pow(10.0, rng_int(&rng, 3) ? 12.0 * rng_uniform(&rng) - 6.0
                                                    : (rng_int(&rng, 2) ? 6.0 : -6.0));
        }
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, n, theta, NULL), CONCORD_OK);
        assert_int_equal(concord_set_regularization(g, 0, n, weights), CONCORD_OK);
        const int factors = 2 + rng_int(&rng, 4);
        for (int k = 0; k < factors; ++k) {
            int32_t vars[MAX_VARS];
            bool negated[MAX_VARS];
            for (int i = 0; i < n; ++i) vars[i] = i;
            for (int i = n - 1; i > 0; --i) {
                const int j = rng_int(&rng, i + 1);
                const int32_t x = vars[i];
                vars[i] = vars[j];
                vars[j] = x;
            }
            const int degree = 2 + rng_int(&rng, (n < 4 ? n : 4) - 1);
            for (int i = 0; i < degree; ++i) negated[i] = rng_int(&rng, 3) == 0;
            const int kind = rng_int(&rng, 6);
            if (kind < 4) {
                const concord_logic logic[4] = {CONCORD_XOR, CONCORD_OR, CONCORD_ATMOSTONE,
                                                CONCORD_OROUT};
                assert_int_equal(concord_add_logic(g, logic[kind], degree, vars, negated, NULL),
                                 CONCORD_OK);
            } else if (kind == 4) {
                assert_int_equal(concord_add_budget(g, degree, vars, negated,
                                                    1 + rng_int(&rng, degree - 1), false, NULL),
                                 CONCORD_OK);
            } else {
                assert_int_equal(concord_add_pair(g, vars[0], vars[1], 2.0 * rng_uniform(&rng) - 1.0,
                                                  NULL),
                                 CONCORD_OK);
            }
        }
        concord_solver *s = new_solver_or_fail(g);
        concord_settings st;
        concord_default_settings(&st);
        if (rng_int(&rng, 2)) st.max_iter = 1 + rng_int(&rng, 12);
        concord_info info;
        const int rc = concord_solver_sparse(s, &st, &info);
        assert_true(rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED || rc == CONCORD_EINFEASIBLE);
        if (rc == CONCORD_EINFEASIBLE) { /* XORs over negated links can exclude each other */
            concord_solver_free(s);
            concord_graph_free(g);
            continue;
        }
        double copies[8 * MAX_VARS]; /* at most 5 factors of at most 4 links */
        assert_int_equal(concord_solver_links(s, NULL, copies), CONCORD_OK);
        const double *additionals = concord_solver_additionals(s);
        /* a factor's links follow those of the factors before it */
        for (int32_t f = 0, first = 0, degree = 0; f < concord_num_factors(g);
             ++f, first += degree) {
            assert_int_equal(concord_factor_degree(g, f, &degree), CONCORD_OK);
            int32_t count = 0, add_first, n_add;
            assert_int_equal(concord_factor_additionals(g, f, &add_first, &n_add), CONCORD_OK);
            const int drc = concord_solver_factor_distribution(s, f, &count);
            if (drc == CONCORD_EINVAL) continue; /* a factor a separable solve did not reach */
            assert_int_equal(drc, CONCORD_OK);
            double mean_u[6] = {0}, mean_v[1] = {0};
            for (int32_t k = 0; k < count; ++k) {
                double weight, u[6], v[1];
                assert_int_equal(concord_solver_distribution_entry(s, k, &weight, u, v),
                                 CONCORD_OK);
                for (int32_t j = 0; j < degree; ++j) mean_u[j] += weight * u[j];
                for (int32_t j = 0; j < n_add; ++j) mean_v[j] += weight * v[j];
            }
            for (int32_t j = 0; j < degree; ++j)
                assert_true(fabs(mean_u[j] - copies[first + j]) <= 1e-4);
            for (int32_t j = 0; j < n_add; ++j)
                assert_true(fabs(mean_v[j] - additionals[add_first + j]) <= 1e-4);
            checked += 1;
        }
        concord_solver_free(s);
        concord_graph_free(g);
    }
    assert_true(checked > GRAPHS);
}

/* ------------------------------------------------------------------------
 * User factors
 * ------------------------------------------------------------------------ */

/* XOR: the best literal alone. */
static int xor_oracle(void *user, const double *a, const double *b, double *u, double *v,
                      double *value) {
    (void)b, (void)v;
    const int32_t degree = *(const int32_t *)user;
    int32_t best = 0;
    for (int32_t i = 0; i < degree; ++i) {
        u[i] = 0.0;
        if (a[i] > a[best]) best = i;
    }
    u[best] = 1.0;
    *value = a[best];
    return 0;
}

/* An XOR over two variables that counts its calls. */
typedef struct counted_xor {
    int64_t calls;
} counted_xor;

static int counted_xor_oracle(void *user, const double *a, const double *b, double *u,
                              double *v, double *value) {
    static const int32_t two = 2;
    ((counted_xor *)user)->calls += 1;
    return xor_oracle((void *)&two, a, b, u, v, value);
}

/* info.oracle_calls of PSDD, MPLP and dynamic programming counts every call
 * their solve makes: on a chain of user XORs (acyclic) it equals what the
 * oracles counted themselves. */
static void dual_and_acyclic_solves_count_every_oracle_call(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, 4, (double[]){0.5, -1.0, 2.0, 0.3}, NULL),
                     CONCORD_OK);
    counted_xor counter = {0};
    for (int32_t k = 0; k < 3; ++k)
        assert_int_equal(concord_add_factor(g, 2, (int32_t[]){k, k + 1}, NULL, 0, NULL,
                                            counted_xor_oracle, &counter, NULL),
                         CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_info info;
    typedef int (*solve_fn)(concord_solver *, const concord_settings *, concord_info *);
    const solve_fn solves[] = {concord_solver_map, concord_solver_mplp, concord_solver_psdd,
                               concord_solver_exact};
    for (size_t k = 0; k < sizeof solves / sizeof solves[0]; ++k) {
        counter.calls = 0;
        assert_int_equal(solves[k](s, NULL, &info), CONCORD_OK);
        assert_true(info.oracle_calls > 0);
        assert_int_equal(info.oracle_calls, counter.calls);
    }
    assert_true(info.acyclic); /* exact MAP took the dynamic programming */
    concord_solver_free(s);
    concord_graph_free(g);
}

/* BUDGET: the (at most) `budget` best positive literals. */
typedef struct budget_user {
    int32_t degree, budget;
} budget_user;

static int budget_oracle(void *user, const double *a, const double *b, double *u, double *v,
                         double *value) {
    (void)b, (void)v;
    const budget_user *p = user;
    *value = 0.0;
    for (int32_t i = 0; i < p->degree; ++i) u[i] = 0.0;
    for (int32_t taken = 0; taken < p->budget; ++taken) {
        int32_t best = -1;
        for (int32_t i = 0; i < p->degree; ++i)
            if (u[i] == 0.0 && a[i] > 0.0 && (best < 0 || a[i] > a[best])) best = i;
        if (best < 0) break;
        u[best] = 1.0;
        *value += a[best];
    }
    return 0;
}

/* TREE over a sentence of 4 nodes (the root and 3 tokens), every arc h ->
 * m, h != m, m >= 1, by enumerating all head assignments. */
enum { TREE_NODES = 4, TREE_ARCS = 9, MAX_TREES = 64 };
static int32_t tree_head[TREE_ARCS], tree_mod[TREE_ARCS];
static int n_trees;
static uint16_t trees[MAX_TREES]; /* arc masks */

static void enumerate_trees(void) {
    int k = 0;
    for (int m = 1; m < TREE_NODES; ++m)
        for (int h = 0; h < TREE_NODES; ++h)
            if (h != m) tree_head[k] = h, tree_mod[k] = m, ++k;
    n_trees = 0;
    int head[TREE_NODES] = {0};
    for (int code = 0; code < TREE_NODES * TREE_NODES * TREE_NODES; ++code) {
        for (int m = 1, c = code; m < TREE_NODES; ++m, c /= TREE_NODES) head[m] = c % TREE_NODES;
        bool ok = true;
        for (int m = 1; m < TREE_NODES && ok; ++m) {
            int y = m, steps = 0;
            while (y != 0 && steps++ < TREE_NODES) y = head[y];
            ok = y == 0;
        }
        if (!ok) continue;
        uint16_t mask = 0;
        for (int a = 0; a < TREE_ARCS; ++a)
            if (head[tree_mod[a]] == tree_head[a]) mask |= (uint16_t)(1u << a);
        trees[n_trees++] = mask;
    }
}

static int tree_oracle(void *user, const double *a, const double *b, double *u, double *v,
                       double *value) {
    (void)user, (void)b, (void)v;
    int best = 0;
    double best_score = -INFINITY;
    for (int t = 0; t < n_trees; ++t) {
        double score = 0.0;
        for (int k = 0; k < TREE_ARCS; ++k)
            if (trees[t] >> k & 1) score += a[k];
        if (score > best_score) best_score = score, best = t;
    }
    for (int k = 0; k < TREE_ARCS; ++k) u[k] = trees[best] >> k & 1;
    *value = best_score;
    return 0;
}

/* The same problem twice: with built-in factors, and with user factors in
 * their place. Variables 0..8 are the arcs of a TREE over 4 nodes, 9..14
 * free; an XOR over {9, 10, -11} (negated link), a BUDGET of 2 over
 * {0, 4, 8, 12, 13, 14}, and a PAIR between 12 and 3 in both. */
enum { PROBLEM_VARS = 15 };
static int32_t xor_degree = 3;
static budget_user budget_params = {6, 2};

static concord_graph *problem(bool user, const double *theta, double pair_score) {
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, PROBLEM_VARS, theta, NULL), CONCORD_OK);
    int32_t arcs[TREE_ARCS];
    for (int k = 0; k < TREE_ARCS; ++k) arcs[k] = k;
    int32_t xor_vars[3] = {9, 10, 11}, budget_vars[6] = {0, 4, 8, 12, 13, 14};
    bool xor_neg[3] = {false, false, true};
    if (user) {
        assert_int_equal(
            concord_add_factor(g, TREE_ARCS, arcs, NULL, 0, NULL, tree_oracle, NULL, NULL),
            CONCORD_OK);
        assert_int_equal(
            concord_add_factor(g, 3, xor_vars, xor_neg, 0, NULL, xor_oracle, &xor_degree, NULL),
            CONCORD_OK);
        assert_int_equal(concord_add_factor(g, 6, budget_vars, NULL, 0, NULL, budget_oracle,
                                            &budget_params, NULL),
                         CONCORD_OK);
    } else {
        assert_int_equal(concord_add_tree(g, TREE_NODES, TREE_ARCS, tree_head, tree_mod, arcs,
                                          0, NULL),
                         CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, xor_vars, xor_neg, NULL),
                         CONCORD_OK);
        assert_int_equal(concord_add_budget(g, 6, budget_vars, NULL, 2.0, false, NULL),
                         CONCORD_OK);
    }
    assert_int_equal(concord_add_pair(g, 12, 3, pair_score, NULL), CONCORD_OK);
    return g;
}

/* User factors re-implementing TREE, XOR and BUDGET give the built-ins'
 * solutions, for AD3 and LP-SparseMAP, over many random scores. */
static void user_factors_solve_as_the_builtins_they_reimplement(void **state) {
    (void)state;
    enumerate_trees();
    assert_int_equal(n_trees, 16); /* Cayley: 4^(4-2) rooted at node 0 */
    test_rng rng = {71};
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-9;
    double worst_map = 0.0, worst_sparse = 0.0;
    int fractional = 0;
    for (int trial = 0; trial < 40; ++trial) {
        double theta[PROBLEM_VARS];
        random_normals(&rng, theta, PROBLEM_VARS, 1.0);
        const double pair_score = rng_normal(&rng);
        concord_graph *builtin = problem(false, theta, pair_score);
        concord_graph *user = problem(true, theta, pair_score);
        concord_solver *sb = new_solver_or_fail(builtin), *su = new_solver_or_fail(user);
        for (int sparse = 0; sparse <= 1; ++sparse) {
            concord_info ib, iu;
            assert_int_equal(sparse ? concord_solver_sparse(sb, &st, &ib)
                                    : concord_solver_map(sb, &st, &ib),
                             CONCORD_OK);
            assert_int_equal(sparse ? concord_solver_sparse(su, &st, &iu)
                                    : concord_solver_map(su, &st, &iu),
                             CONCORD_OK);
            fractional += !sparse && !ib.integral;
            assert_true(fabs(ib.value - iu.value) <= 1e-6 * (1.0 + fabs(ib.value)));
            if (!sparse) assert_true(fabs(ib.upper_bound - iu.upper_bound) <= 1e-5);
            double diff = 0.0;
            for (int i = 0; i < PROBLEM_VARS; ++i)
                diff = fmax(diff, fabs(concord_solver_variables(sb)[i] -
                                       concord_solver_variables(su)[i]));
            diff = fmax(diff, fabs(concord_solver_additionals(sb)[0] -
                                   concord_solver_additionals(su)[0]));
            if (sparse) worst_sparse = fmax(worst_sparse, diff);
            else worst_map = fmax(worst_map, diff);
            /* LP-SparseMAP's solution is unique; LP-MAP's is when it is
             * integral (ties have probability zero) */
            if (sparse || ib.integral) assert_true(diff <= 1e-5);
        }
        concord_solver_free(sb);
        concord_solver_free(su);
        concord_graph_free(builtin);
        concord_graph_free(user);
    }
    print_message("user factors against built-ins: largest difference %.2e (LP-MAP, %d "
                  "fractional), %.2e (LP-SparseMAP)\n",
                  worst_map, fractional, worst_sparse);
}

/* The backward pass through user factors equals central finite
 * differences of the LP-SparseMAP solution, and the built-ins' backward. */
static void backward_through_user_factors_equals_finite_differences(void **state) {
    (void)state;
    enumerate_trees();
    test_rng rng = {83};
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-12;
    st.backward_tol = 1e-13;
    const double h = 1e-5;
    int checked = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 30; ++trial) {
        double theta[PROBLEM_VARS], d[PROBLEM_VARS], plus[PROBLEM_VARS], minus[PROBLEM_VARS];
        random_normals(&rng, theta, PROBLEM_VARS, 1.0);
        random_normals(&rng, d, PROBLEM_VARS, 1.0);
        const double pair_score = rng_normal(&rng);
        concord_graph *user = problem(true, theta, pair_score);
        concord_graph *builtin = problem(false, theta, pair_score);
        concord_solver *s = new_solver_or_fail(user), *sb = new_solver_or_fail(builtin);
        double shifted[PROBLEM_VARS];
        for (int i = 0; i < PROBLEM_VARS; ++i) shifted[i] = theta[i] + h * d[i];
        assert_int_equal(concord_solver_set_scores(s, shifted, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        memcpy(plus, concord_solver_variables(s), sizeof plus);
        for (int i = 0; i < PROBLEM_VARS; ++i) shifted[i] = theta[i] - h * d[i];
        assert_int_equal(concord_solver_set_scores(s, shifted, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        memcpy(minus, concord_solver_variables(s), sizeof minus);
        assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(sb, &st, NULL), CONCORD_OK);
        double jvp[PROBLEM_VARS], jvp_builtin[PROBLEM_VARS];
        concord_backward_info binfo;
        assert_int_equal(concord_solver_backward(s, &st, d, NULL, jvp, NULL, &binfo), CONCORD_OK);
        assert_true(binfo.converged);
        assert_int_equal(concord_solver_backward(sb, &st, d, NULL, jvp_builtin, NULL, NULL),
                         CONCORD_OK);
        /* away from the pieces' boundaries the solution map is affine in h */
        double kink = 0.0, diff = 0.0;
        for (int i = 0; i < PROBLEM_VARS; ++i) {
            const double base = concord_solver_variables(s)[i];
            kink = fmax(kink, fabs((plus[i] - base) - (base - minus[i])) / h);
            diff = fmax(diff, fabs((plus[i] - minus[i]) / (2 * h) - jvp[i]));
            diff = fmax(diff, fabs(jvp[i] - jvp_builtin[i]));
        }
        if (kink <= 1e-6) {
            ++checked;
            worst = fmax(worst, diff);
            assert_true(diff <= 1e-5);
        }
        concord_solver_free(s);
        concord_solver_free(sb);
        concord_graph_free(user);
        concord_graph_free(builtin);
    }
    print_message("backward through user factors: %d of 30 checked (the others straddle a "
                  "kink), largest difference %.2e\n",
                  checked, worst);
    assert_true(checked >= 15);
}

/* PAIR as a user factor whose additional output is `scale` when both
 * links are 1 (0 otherwise), scale in [-1, 1]. */
static int scaled_pair_oracle(void *user, const double *a, const double *b, double *u, double *v,
                              double *value) {
    const double *scale = user;
    double best = -INFINITY;
    for (int c = 0; c < 4; ++c) {
        const double x = c & 1, y = c >> 1, score = a[0] * x + a[1] * y + b[0] * *scale * x * y;
        if (score > best) {
            best = score;
            u[0] = x;
            u[1] = y;
            v[0] = *scale * x * y;
        }
    }
    *value = best;
    return 0;
}

/* The box [0, 1]^d with its additional outputs: every output of positive
 * score is on. */
static int box_oracle(void *user, const double *a, const double *b, double *u, double *v,
                      double *value) {
    const int32_t *sizes = user; /* degree, additional outputs */
    *value = 0.0;
    for (int32_t i = 0; i < sizes[0]; ++i) u[i] = a[i] > 0.0, *value += u[i] * a[i];
    for (int32_t k = 0; k < sizes[1]; ++k) v[k] = b[k] > 0.0, *value += v[k] * b[k];
    return 0;
}

/* A factor alone whose active set cannot certify its QP still hands out
 * the point it reached, in the box: the box [0, 1]^2 with weights 1 and
 * 1e11 (1e11 apart, within what regularization weights can give) at
 * scores (0.5, 1) has the solution clip(a / w) = (0.5, 1e-11), which the
 * active set does not certify in its oracle calls (its system holds
 * entries 1e11 apart); u was left unwritten. Certified, it must be that
 * solution. */
static void a_factor_alone_uncertified_gives_the_point_it_reached(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 2, NULL, NULL), CONCORD_OK);
    static int32_t sizes[2] = {2, 0};
    int32_t f;
    assert_int_equal(
        concord_add_factor(g, 2, (int32_t[]){0, 1}, NULL, 0, NULL, box_oracle, sizes, &f),
        CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    const double a[2] = {0.5, 1.0}, w[2] = {1.0, 1e11};
    double u[2] = {-1.0, -1.0};
    const int rc = concord_solver_factor_qp(s, f, a, NULL, w, u, NULL, NULL);
    assert_true(rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED);
    for (int j = 0; j < 2; ++j) assert_true(u[j] >= 0.0 && u[j] <= 1.0);
    if (rc == CONCORD_OK) {
        assert_true(fabs(u[0] - 0.5) <= 1e-9);
        assert_true(fabs(u[1] - 1e-11) <= 1e-18);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A user factor's additional outputs stay within [-1, 1] in a solution:
 * its active set's weights summed to 1 + 2^-52 here (the fuzzer's graph:
 * a box over two negated links, one of them a state of a multi-variable,
 * stopped at 21 iterations), and both outputs came out an ulp above 1. */
static void a_user_factors_additional_outputs_stay_within_one(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 2, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_multi_variable(g, 2, NULL, true, NULL), CONCORD_OK);
    static int32_t sizes[2] = {2, 2};
    const double phi[2] = {2.5, 2.3125};
    assert_int_equal(concord_add_factor(g, 2, (int32_t[]){2, 0}, (bool[]){true, true}, 2, phi,
                                        box_oracle, sizes, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 21;
    concord_info info;
    assert_int_equal(concord_solver_sparse(s, &settings, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_MAX_ITER);
    const double *v = concord_solver_additionals(s);
    for (int k = 0; k < 2; ++k) assert_true(v[k] >= 0.99 && v[k] <= 1.0);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A user factor's additional outputs may be reals in [-1, 1]: PAIR with
 * its additional output scaled by c and score phi is the built-in PAIR
 * with score c phi, so both give the same variables, the user's additional
 * is c times the built-in's, and so are its distribution's entries and
 * its gradient with respect to phi; the losses of a gold structure are
 * the built-in's when its additional output is scaled alike (negative for
 * c < 0, in [-1, 1] as the factor's). An oracle writing 1.5 is refused. */
static void a_user_factors_additional_outputs_may_be_real(void **state) {
    (void)state;
    test_rng rng = {29};
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-10;
    st.backward_tol = 1e-12;
    const double scales[3] = {0.4, -0.7, 1.0};
    for (int trial = 0; trial < 30; ++trial) {
        double scale = scales[trial % 3], theta[3], phi = 2.0 * rng_normal(&rng);
        double scaled_phi = scale * phi;
        random_normals(&rng, theta, 3, 1.0);
        concord_graph *g[2];
        for (int user = 0; user <= 1; ++user) {
            g[user] = concord_graph_new();
            concord_add_variables(g[user], 3, theta, NULL);
            int32_t vars[2] = {0, 1}, budget_vars[2] = {1, 2};
            if (user)
                assert_int_equal(concord_add_factor(g[user], 2, vars, NULL, 1, &phi,
                                                    scaled_pair_oracle, &scale, NULL),
                                 CONCORD_OK);
            else
                concord_add_pair(g[user], 0, 1, scaled_phi, NULL);
            concord_add_logic(g[user], CONCORD_ATMOSTONE, 2, budget_vars, NULL, NULL);
        }
        concord_solver *s[2] = {new_solver_or_fail(g[0]), new_solver_or_fail(g[1])};
        concord_info info[2];
        for (int k = 0; k < 2; ++k) {
            assert_int_equal(concord_solver_map(s[k], &st, &info[k]), CONCORD_OK);
            assert_true(fabs(info[0].value - info[k].value) <= 1e-8);
        }
        for (int k = 0; k < 2; ++k)
            assert_int_equal(concord_solver_sparse(s[k], &st, &info[k]), CONCORD_OK);
        for (int i = 0; i < 3; ++i)
            assert_true(fabs(concord_solver_variables(s[0])[i] -
                             concord_solver_variables(s[1])[i]) <= 1e-7);
        assert_true(fabs(scale * concord_solver_additionals(s[0])[0] -
                         concord_solver_additionals(s[1])[0]) <= 1e-7);
        /* the distribution's additional entries are 0 or the scale */
        int32_t count;
        assert_int_equal(concord_solver_factor_distribution(s[1], 0, &count), CONCORD_OK);
        double mean = 0.0;
        for (int32_t k = 0; k < count; ++k) {
            double w, u[2], v;
            assert_int_equal(concord_solver_distribution_entry(s[1], k, &w, u, &v), CONCORD_OK);
            assert_true(v == (u[0] == 1.0 && u[1] == 1.0 ? scale : 0.0));
            mean += w * v;
        }
        assert_true(fabs(mean - concord_solver_additionals(s[1])[0]) <= 1e-9);
        /* d/dphi of the user's graph = c d/d(c phi) of the built-in's */
        double du[3], dtheta[2][3], dphi[2];
        random_normals(&rng, du, 3, 1.0);
        for (int k = 0; k < 2; ++k)
            assert_int_equal(concord_solver_backward(s[k], &st, du, NULL, dtheta[k], &dphi[k],
                                                     NULL),
                             CONCORD_OK);
        for (int i = 0; i < 3; ++i) assert_true(fabs(dtheta[0][i] - dtheta[1][i]) <= 1e-6);
        assert_true(fabs(scale * dphi[0] - dphi[1]) <= 1e-6);
        /* the losses of the gold structure (1, 0, 0) or (1, 1, 0), whose
         * additional output is the built-in's times the scale (negative for
         * scale -0.7), equal the built-in's */
        const double gold[2][3] = {{1, 0, 0}, {1, 1, 0}};
        for (int k = 0; k < 2; ++k) {
            const double v_builtin = gold[k][0] * gold[k][1], v_user = scale * v_builtin;
            double loss[2];
            for (int hinge = 0; hinge <= 1; ++hinge) {
                for (int user = 0; user <= 1; ++user) {
                    const double *v_gold = user ? &v_user : &v_builtin;
                    const int rc =
                        hinge ? concord_solver_loss_hinge(s[user], &st, gold[k], v_gold,
                                                          &loss[user], NULL, NULL, NULL)
                              : concord_solver_loss_sparsemap(s[user], &st, gold[k], v_gold,
                                                              &loss[user], NULL, NULL, NULL);
                    assert_int_equal(rc, CONCORD_OK);
                }
                assert_true(fabs(loss[0] - loss[1]) <= 1e-7);
            }
        }
        /* scores under which (1, 1) is the oracle's first answer */
        const double high[3] = {5.0, 5.0, 0.0}, positive = 1.0;
        assert_int_equal(concord_solver_set_scores(s[1], high, &positive), CONCORD_OK);
        scale = 1.5;
        assert_int_equal(concord_solver_sparse(s[1], &st, &info[1]), CONCORD_ECALLBACK);
        assert_non_null(strstr(concord_solver_last_error(s[1]), "invalid configuration"));
        for (int k = 0; k < 2; ++k) {
            concord_solver_free(s[k]);
            concord_graph_free(g[k]);
        }
    }
}

/* An XOR oracle that fails (returns 7) from its `after`-th call on, or
 * writes an invalid configuration. */
typedef struct failing_user {
    int32_t degree;
    int calls, after;
    bool invalid;
} failing_user;

static int failing_oracle(void *user, const double *a, const double *b, double *u, double *v,
                          double *value) {
    failing_user *p = user;
    if (++p->calls >= p->after) {
        if (!p->invalid) return 7;
        for (int32_t i = 0; i < p->degree; ++i) u[i] = 0.5;
        *value = 0.0;
        return 0;
    }
    return xor_oracle(&p->degree, a, b, u, v, value);
}

/* The XOR's closed-form QP, computed by bisection on the simplex
 * multiplier (user: the degree). */
static int xor_qp(void *user, const double *a, const double *b, const double *d, double *u,
                  double *v) {
    (void)b, (void)v;
    const int32_t n = *(const int32_t *)user;
    /* u_i = clip((a_i - tau) / d_i, 0, 1) with sum u_i = 1 */
    double lo = -1e6, hi = 1e6;
    for (int it = 0; it < 200; ++it) {
        double tau = 0.5 * (lo + hi), sum = 0.0;
        for (int32_t i = 0; i < n; ++i) sum += fmin(fmax((a[i] - tau) / d[i], 0.0), 1.0);
        if (sum > 1.0) lo = tau;
        else hi = tau;
    }
    double tau = 0.5 * (lo + hi);
    for (int32_t i = 0; i < n; ++i) u[i] = fmin(fmax((a[i] - tau) / d[i], 0.0), 1.0);
    return 0;
}

/* An oracle's error ends the solve, with that error in the message and
 * status callback_failed; so does an invalid configuration. Decoding and
 * the losses report it too. */
/* An oracle and a progress callback that try to call their own solver and
 * to change the graph; each attempt's code is recorded. */
typedef struct meddler {
    concord_graph *g;
    concord_solver *s, *other;
    int32_t degree;
    int solve_rc, add_rc, pair_rc, scores_rc, weights_rc, qp_rc, decode_rc, other_rc;
    int multi_rc, factor_rc;
    int calls, reports;
} meddler;

static int meddling_oracle(void *user, const double *a, const double *b, double *u, double *v,
                           double *value) {
    meddler *m = user;
    m->calls += 1;
    double score = 1.0, weight = 2.0;
    int32_t pair[2] = {0, 1};
    m->solve_rc = concord_solver_map(m->s, NULL, NULL);
    m->add_rc = concord_add_variables(m->g, 1, NULL, NULL);
    m->pair_rc = concord_add_pair(m->g, pair[0], pair[1], 1.0, NULL);
    m->scores_rc = concord_set_variable_scores(m->g, 0, 1, &score);
    m->weights_rc = concord_set_regularization(m->g, 0, 1, &weight);
    m->qp_rc = concord_set_factor_qp(m->g, 0, NULL);
    m->other_rc = concord_solver_set_scores(m->other, NULL, NULL);
    m->multi_rc = concord_add_multi_variable(m->g, 2, NULL, true, NULL);
    m->factor_rc = concord_add_factor(m->g, 2, pair, NULL, 0, NULL, xor_oracle, &xor_degree, NULL);
    return xor_oracle(&m->degree, a, b, u, v, value);
}

/* The XOR's QP for the meddling oracle's factor. */
static int meddling_qp(void *user, const double *a, const double *b, const double *d, double *u,
                       double *v) {
    meddler *m = user;
    return xor_qp(&m->degree, a, b, d, u, v);
}

/* Every attempt of the meddling oracle was refused. */
static void assert_meddling_refused(const meddler *m) {
    assert_true(m->calls > 0);
    assert_int_equal(m->solve_rc, CONCORD_EINVAL);
    assert_int_equal(m->add_rc, CONCORD_EINVAL);
    assert_int_equal(m->pair_rc, CONCORD_EINVAL);
    assert_int_equal(m->scores_rc, CONCORD_EINVAL);
    assert_int_equal(m->weights_rc, CONCORD_EINVAL);
    assert_int_equal(m->qp_rc, CONCORD_EINVAL);
    assert_int_equal(m->multi_rc, CONCORD_EINVAL);
    assert_int_equal(m->factor_rc, CONCORD_EINVAL);
    assert_int_equal(m->other_rc, CONCORD_OK);
}

static int meddling_progress(void *context, const concord_progress *p) {
    (void)p;
    meddler *m = context;
    m->reports += 1;
    concord_decoding decoding;
    m->decode_rc = concord_solver_decode(m->s, &decoding);
    return 0;
}

/* While a call runs a graph's callbacks, its solver refuses other calls
 * and the graph refuses to change (the solve reads both); other solvers
 * of the graph stay usable. The refused attempts leave the solve's answer
 * (an XOR and an OR over its first two variables: the best variable, the
 * first, on) and the graph as they were. */
static void callbacks_cannot_call_their_solver_nor_change_the_graph(void **state) {
    (void)state;
    const double theta[3] = {0.3, -0.2, 0.1};
    const int32_t vars[3] = {0, 1, 2};
    meddler m = {.g = concord_graph_new(), .degree = 3};
    concord_add_variables(m.g, 3, theta, NULL);
    assert_int_equal(concord_add_factor(m.g, 3, vars, NULL, 0, NULL, meddling_oracle, &m, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_add_logic(m.g, CONCORD_OR, 2, vars, NULL, NULL), CONCORD_OK);
    m.s = new_solver_or_fail(m.g);
    m.other = new_solver_or_fail(m.g);
    concord_settings st;
    concord_default_settings(&st);
    st.progress = meddling_progress;
    st.progress_context = &m;
    st.bound_every = 1;
    st.acyclic = false;
    concord_info info;
    for (int algorithm = 0; algorithm < 3; ++algorithm) {
        m.calls = m.reports = 0;
        m.solve_rc = m.add_rc = m.pair_rc = m.scores_rc = m.weights_rc = m.qp_rc = -1;
        m.decode_rc = -1;
        m.other_rc = -1;
        const int rc = algorithm == 0   ? concord_solver_map(m.s, &st, &info)
                       : algorithm == 1 ? concord_solver_exact(m.s, &st, &info)
                                        : concord_solver_sparse(m.s, &st, &info);
        assert_int_equal(rc, CONCORD_OK);
        assert_meddling_refused(&m);
        /* the refusal's message does not outlive the solve that succeeded */
        assert_string_equal(concord_solver_last_error(m.s), "");
        if (algorithm != 2) { /* LP-MAP and exact MAP: the best variable */
            assert_true(m.reports > 0);
            assert_int_equal(m.decode_rc, CONCORD_EINVAL);
            const double *x = concord_solver_variables(m.s);
            assert_non_null(x);
            assert_true(x[0] == 1.0 && x[1] == 0.0 && x[2] == 0.0 && info.value == 0.3);
        }
    }
    assert_int_equal(concord_num_variables(m.g), 3);
    assert_int_equal(concord_num_factors(m.g), 2);
    assert_true(concord_variable_scores(m.g)[0] == 0.3);
    assert_true(concord_regularization(m.g)[0] == 1.0);
    m.calls = 0;
    concord_decoding decoding;
    assert_int_equal(concord_solver_decode(m.s, &decoding), CONCORD_OK);
    assert_int_equal(m.solve_rc, CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(m.g), "the graph is being solved"));
    /* a factor's distribution, computed afresh for a factor with a QP
     * callback, calls the oracle too: the same refusals */
    assert_int_equal(concord_set_factor_qp(m.g, 0, meddling_qp), CONCORD_OK);
    concord_solver_free(m.s);
    concord_solver_free(m.other);
    m.s = new_solver_or_fail(m.g);
    m.other = new_solver_or_fail(m.g);
    assert_int_equal(concord_solver_sparse(m.s, NULL, NULL), CONCORD_OK);
    m.calls = 0;
    m.solve_rc = m.add_rc = m.pair_rc = m.scores_rc = m.weights_rc = m.qp_rc = -1;
    m.multi_rc = m.factor_rc = m.other_rc = -1;
    int32_t count = 0;
    assert_int_equal(concord_solver_factor_distribution(m.s, 0, &count), CONCORD_OK);
    assert_meddling_refused(&m);
    assert_true(count >= 1);
    assert_int_equal(concord_num_variables(m.g), 3);
    assert_int_equal(concord_num_factors(m.g), 2);
    /* once the calls returned, both work again */
    assert_int_equal(concord_add_variables(m.g, 1, NULL, NULL), CONCORD_OK);
    concord_solver_free(m.s);
    concord_solver_free(m.other);
    concord_graph_free(m.g);
}

/* Oracles on several threads at once (a batch) that try to change their
 * graph: how many attempts were accepted. */
typedef struct thread_meddler {
    concord_graph *g;
    atomic_int accepted;
} thread_meddler;

static int thread_meddling_oracle(void *user, const double *a, const double *b, double *u,
                                  double *v, double *value) {
    thread_meddler *m = user;
    const int32_t pair[2] = {0, 1};
    const int codes[4] = {
        concord_add_multi_variable(m->g, 2, NULL, true, NULL),
        concord_add_factor(m->g, 2, pair, NULL, 0, NULL, xor_oracle, &xor_degree, NULL),
        concord_add_logic(m->g, CONCORD_XOR, 2, pair, NULL, NULL),
        concord_add_variables(m->g, 1, NULL, NULL),
    };
    for (int k = 0; k < 4; ++k) atomic_fetch_add(&m->accepted, codes[k] == CONCORD_OK);
    return xor_oracle(&xor_degree, a, b, u, v, value);
}

/* Every change an oracle attempts during a batch is refused before it
 * touches the graph: the multi-variables' array and the builders' marks
 * once grew before the refusal, which two threads did at once (double
 * frees under ASan, data races under TSan), and each refusal wrote the
 * graph's message. The batch's solves are those of sequential ones. */
static void oracles_on_threads_cannot_change_the_graph(void **state) {
    (void)state;
    enum { SOLVERS = 8, VARS = 64 };
    thread_meddler m = {.g = concord_graph_new()};
    atomic_init(&m.accepted, 0);
    const int32_t vars[3] = {0, 1, 2};
    assert_int_equal(concord_add_variables(m.g, 3, NULL, NULL), CONCORD_OK);
    assert_int_equal(
        concord_add_factor(m.g, 3, vars, NULL, 0, NULL, thread_meddling_oracle, &m, NULL),
        CONCORD_OK);
    assert_int_equal(concord_add_logic(m.g, CONCORD_OR, 2, vars + 1, NULL, NULL), CONCORD_OK);
    /* variables past the builders' marks, which a new factor would grow */
    assert_int_equal(concord_add_variables(m.g, VARS - 3, NULL, NULL), CONCORD_OK);
    test_rng rng = {37};
    concord_solver *solvers[SOLVERS];
    double scores[SOLVERS][VARS];
    for (int k = 0; k < SOLVERS; ++k) {
        random_normals(&rng, scores[k], VARS, 1.0);
        solvers[k] = new_solver_or_fail(m.g);
        assert_int_equal(concord_solver_set_scores(solvers[k], scores[k], NULL), CONCORD_OK);
    }
    concord_settings st;
    concord_default_settings(&st);
    st.acyclic = false;
    concord_info infos[SOLVERS];
    assert_int_equal(concord_solve_batch(solvers, SOLVERS, CONCORD_ALGORITHM_AD3, &st, infos, 4),
                     CONCORD_OK);
    assert_int_equal(atomic_load(&m.accepted), 0);
    assert_int_equal(concord_num_variables(m.g), VARS);
    assert_int_equal(concord_num_factors(m.g), 2);
    assert_int_equal(concord_num_multi_variables(m.g), 0);
    assert_non_null(strstr(concord_last_error(m.g), "the graph is being solved"));
    for (int k = 0; k < SOLVERS; ++k) {
        concord_solver *alone = new_solver_or_fail(m.g);
        assert_int_equal(concord_solver_set_scores(alone, scores[k], NULL), CONCORD_OK);
        concord_info info;
        assert_int_equal(concord_solver_map(alone, &st, &info), CONCORD_OK);
        assert_int_equal(info.iterations, infos[k].iterations);
        assert_memory_equal(concord_solver_variables(alone), concord_solver_variables(solvers[k]),
                            VARS * sizeof(double));
        concord_solver_free(alone);
        concord_solver_free(solvers[k]);
    }
    concord_graph_free(m.g);
}

/* An XOR oracle that first tries to solve another solver (`target`). */
typedef struct batch_reacher {
    concord_solver *target;
    int calls, refused, reads; /* the oracle's solver is solved on one thread */
    char message[200];         /* what the first refusal said */
} batch_reacher;

static int batch_reaching_oracle(void *user, const double *a, const double *b, double *u,
                                 double *v, double *value) {
    batch_reacher *r = user;
    static const int32_t three = 3;
    concord_info info;
    concord_exact_info exact;
    r->calls += 1;
    if (concord_solver_sparse(r->target, NULL, &info) == CONCORD_EINVAL) {
        if (r->refused++ == 0)
            snprintf(r->message, sizeof r->message, "%s", concord_solver_last_error(r->target));
    }
    r->reads += concord_solver_variables(r->target) != NULL ||
                concord_solver_variable_scores(r->target) != NULL ||
                concord_solver_exact_info(r->target, &exact) == CONCORD_OK;
    return xor_oracle((void *)&three, a, b, u, v, value);
}

/* An oracle of one solver of a batch that calls another solver of the
 * batch is refused, whichever thread solves either (one of the others
 * could be solving it: a data race under TSan when only a callback's call
 * on its own solver was refused), with the message on its own thread; the
 * held solver's solve is the sequential one, and once the batch is over
 * the solver takes calls again. */
static void a_solver_in_a_batch_refuses_calls_from_outside_it(void **state) {
    (void)state;
    test_rng rng = {41};
    concord_graph *held_graph = matching_graph(4, 4, &rng);
    concord_solver *held = new_solver_or_fail(held_graph);
    batch_reacher reacher = {.target = held};
    concord_graph *g = concord_graph_new();
    const double theta[3] = {0.3, -0.2, 0.1};
    const int32_t vars[3] = {0, 1, 2};
    assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
    assert_int_equal(
        concord_add_factor(g, 3, vars, NULL, 0, NULL, batch_reaching_oracle, &reacher, NULL),
        CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 2, vars + 1, NULL, NULL), CONCORD_OK);
    concord_solver *reaching = new_solver_or_fail(g);
    concord_solver *batch[2] = {reaching, held};
    concord_info infos[2];
    assert_int_equal(concord_solve_batch(batch, 2, CONCORD_ALGORITHM_SPARSE, NULL, infos, 2),
                     CONCORD_OK);
    assert_true(reacher.calls > 0);
    assert_int_equal(reacher.refused, reacher.calls);
    assert_int_equal(reacher.reads, 0); /* its arrays were changing on another thread */
    assert_non_null(strstr(reacher.message, "held by a running batch"));
    assert_string_equal(concord_solver_last_error(held), "");
    concord_solver *alone = new_solver_or_fail(held_graph);
    concord_info info;
    assert_int_equal(concord_solver_sparse(alone, NULL, &info), CONCORD_OK);
    assert_int_equal(info.iterations, infos[1].iterations);
    assert_memory_equal(concord_solver_variables(alone), concord_solver_variables(held),
                        (size_t)concord_num_variables(held_graph) * sizeof(double));
    /* outside a batch, the oracle's calls on the other solver are taken */
    const int calls = reacher.calls, refused = reacher.refused;
    assert_int_equal(concord_solver_sparse(reaching, NULL, &info), CONCORD_OK);
    assert_true(reacher.calls > calls && reacher.refused == refused);
    concord_solver_free(alone);
    concord_solver_free(reaching);
    concord_solver_free(held);
    concord_graph_free(g);
    concord_graph_free(held_graph);
}

/* One solver used from two threads at once: one solves it MISUSE_ROUNDS
 * times, the other meanwhile gives it scores and copies its links out. */
enum { MISUSE_ROUNDS = 300 };
typedef struct shared_solver {
    concord_solver *s;
    const double *scores[2];
    atomic_bool done;
    int unexpected; /* codes other than OK and EINVAL (a refusal) */
} shared_solver;

/* Whether a call on the shared solver ended as it may: done, or refused
 * (busy, or links before any solve). Which it was, the message cannot
 * tell for sure: a refusal for another reason than busy writes the
 * solver's message, which the other thread's next call clears. */
static bool ended_as_it_may(int rc) { return rc == CONCORD_OK || rc == CONCORD_EINVAL; }

static void *solve_shared(void *arg) {
    shared_solver *sh = arg;
    concord_settings st;
    concord_default_settings(&st);
    st.acyclic = false;
    for (int r = 0; r < MISUSE_ROUNDS; ++r) {
        concord_info info;
        const int rc = concord_solver_map(sh->s, &st, &info);
        sh->unexpected += !ended_as_it_may(rc);
        /* a pause between solves, where the other thread's calls get in */
        const struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
    }
    atomic_store(&sh->done, true);
    return NULL;
}

/* Every call either runs whole or is refused: scores and links
 * once entered without taking the solver, so they could write its scores
 * or read its multipliers while the other thread solved (a data race under
 * TSan). The solver's last solve then is that of a fresh solver. */
static void one_solver_from_two_threads_refuses_what_overlaps(void **state) {
    (void)state;
    test_rng rng = {43};
    concord_graph *g = matching_graph(4, 4, &rng);
    const int32_t n = concord_num_variables(g);
    double *scores = malloc(2 * (size_t)n * sizeof(double));
    random_normals(&rng, scores, 2 * n, 1.0);
    shared_solver sh = {.s = new_solver_or_fail(g), .scores = {scores, scores + n}};
    atomic_init(&sh.done, false);
    int32_t n_links = 0;
    for (int32_t f = 0; f < concord_num_factors(g); ++f) {
        int32_t degree = 0;
        assert_int_equal(concord_factor_degree(g, f, &degree), CONCORD_OK);
        n_links += degree;
    }
    double *multipliers = malloc((size_t)n_links * sizeof(double));
    pthread_t solving;
    assert_int_equal(pthread_create(&solving, NULL, solve_shared, &sh), 0);
    int unexpected = 0;
    /* until the other thread is done, so that the two overlap */
    for (int r = 0; !atomic_load(&sh.done); ++r) {
        unexpected += !ended_as_it_may(concord_solver_set_scores(sh.s, sh.scores[r % 2], NULL));
        unexpected += !ended_as_it_may(concord_solver_links(sh.s, multipliers, NULL));
    }
    assert_int_equal(pthread_join(solving, NULL), 0);
    assert_int_equal(unexpected, 0);
    assert_int_equal(sh.unexpected, 0);
    concord_settings st;
    concord_default_settings(&st);
    st.acyclic = false;
    st.warm_start = false;
    concord_solver *fresh = new_solver_or_fail(g);
    concord_info info, fresh_info;
    assert_int_equal(concord_solver_set_scores(sh.s, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_set_scores(fresh, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_map(sh.s, &st, &info), CONCORD_OK);
    assert_int_equal(concord_solver_map(fresh, &st, &fresh_info), CONCORD_OK);
    assert_int_equal(info.iterations, fresh_info.iterations);
    assert_memory_equal(concord_solver_variables(sh.s), concord_solver_variables(fresh),
                        (size_t)n * sizeof(double));
    concord_solver_free(fresh);
    concord_solver_free(sh.s);
    free(multipliers);
    free(scores);
    concord_graph_free(g);
}

/* Solvers whose oracles call their own solver (refused) and, from one,
 * the other solver, whose oracle does the same. */
typedef struct nested_caller {
    concord_solver *own, *other;
    int calls;
    char own_refusal[200], after_other[200];
} nested_caller;

static int nested_calling_oracle(void *user, const double *a, const double *b, double *u,
                                 double *v, double *value) {
    nested_caller *c = user;
    static const int32_t three = 3;
    concord_info info;
    if (c->calls++ == 0) {
        concord_solver_sparse(c->own, NULL, &info);
        snprintf(c->own_refusal, sizeof c->own_refusal, "%s", concord_solver_last_error(c->own));
        if (c->other) concord_solver_sparse(c->other, NULL, &info);
        snprintf(c->after_other, sizeof c->after_other, "%s", concord_solver_last_error(c->own));
    }
    return xor_oracle((void *)&three, a, b, u, v, value);
}

/* An XOR oracle that solves a batch of its own solver and another one. */
typedef struct batching_caller {
    concord_solver *batch[2];
    int rc;
    char message[200];
} batching_caller;

static int batching_oracle(void *user, const double *a, const double *b, double *u, double *v,
                           double *value) {
    batching_caller *c = user;
    static const int32_t three = 3;
    if (c->message[0] == '\0') {
        concord_info infos[2];
        c->rc = concord_solve_batch(c->batch, 2, CONCORD_ALGORITHM_SPARSE, NULL, infos, 2);
        snprintf(c->message, sizeof c->message, "%s", concord_solver_last_error(c->batch[0]));
    }
    return xor_oracle((void *)&three, a, b, u, v, value);
}

/* A batch that lists a solver in a call (here the one whose oracle runs
 * the batch) is refused before anything is solved, with the message where
 * its caller reads it: claimed, the solver's solve was refused on a batch
 * thread, whose message the caller never saw. */
static void a_batch_refuses_a_solver_in_a_call(void **state) {
    (void)state;
    batching_caller caller = {.rc = -1};
    const double theta[3] = {0.3, -0.2, 0.1};
    const int32_t vars[3] = {0, 1, 2};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
    assert_int_equal(
        concord_add_factor(g, 3, vars, NULL, 0, NULL, batching_oracle, &caller, NULL),
        CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 2, vars + 1, NULL, NULL), CONCORD_OK);
    test_rng rng = {5};
    concord_graph *other = matching_graph(3, 3, &rng);
    caller.batch[0] = new_solver_or_fail(g);
    caller.batch[1] = new_solver_or_fail(other);
    concord_info info;
    assert_int_equal(concord_solver_sparse(caller.batch[0], NULL, &info), CONCORD_OK);
    assert_int_equal(caller.rc, CONCORD_EINVAL);
    assert_non_null(strstr(caller.message, "cannot call its own solver"));
    assert_null(concord_solver_variables(caller.batch[1])); /* nothing solved */
    concord_solver *again[2] = {caller.batch[0], caller.batch[1]};
    caller.message[0] = 'x'; /* the oracle leaves batches alone now */
    concord_info infos[2];
    assert_int_equal(concord_solve_batch(again, 2, CONCORD_ALGORITHM_SPARSE, NULL, infos, 2),
                     CONCORD_OK);
    for (int k = 0; k < 2; ++k) {
        assert_string_equal(concord_solver_last_error(again[k]), "");
        concord_solver_free(again[k]);
    }
    concord_graph_free(g);
    concord_graph_free(other);
}

/* A callback's refused call on its own solver leaves its message on the
 * solver, and the refusals of a nested solve's callbacks (on their own
 * solver) do not take it away; a successful solve then leaves none. */
static void a_callbacks_refusal_survives_a_nested_solve(void **state) {
    (void)state;
    nested_caller outer = {0}, inner = {0};
    concord_graph *graphs[2];
    nested_caller *callers[2] = {&outer, &inner};
    concord_solver *solvers[2];
    for (int k = 0; k < 2; ++k) {
        const double theta[3] = {0.3, -0.2, 0.1};
        const int32_t vars[3] = {0, 1, 2};
        graphs[k] = concord_graph_new();
        assert_int_equal(concord_add_variables(graphs[k], 3, theta, NULL), CONCORD_OK);
        assert_int_equal(concord_add_factor(graphs[k], 3, vars, NULL, 0, NULL,
                                            nested_calling_oracle, callers[k], NULL),
                         CONCORD_OK);
        assert_int_equal(concord_add_logic(graphs[k], CONCORD_OR, 2, vars + 1, NULL, NULL),
                         CONCORD_OK);
        solvers[k] = new_solver_or_fail(graphs[k]);
        callers[k]->own = solvers[k];
    }
    outer.other = solvers[1];
    concord_info info;
    assert_int_equal(concord_solver_sparse(solvers[0], NULL, &info), CONCORD_OK);
    assert_true(inner.calls > 0);
    assert_non_null(strstr(outer.own_refusal, "cannot call its own solver"));
    assert_string_equal(outer.after_other, outer.own_refusal);
    assert_non_null(strstr(inner.own_refusal, "cannot call its own solver"));
    assert_string_equal(concord_solver_last_error(solvers[0]), "");
    for (int k = 0; k < 2; ++k) {
        concord_solver_free(solvers[k]);
        concord_graph_free(graphs[k]);
    }
}

/* Four variables: a user factor (oracle `map`, user data fu) over the
 * first three, an OR over the last two, a PAIR over the first and last. */
static concord_graph *graph_with_user_factor(failing_user *fu, concord_map_fn map) {
    concord_graph *g = concord_graph_new();
    double theta[4] = {0.3, -0.2, 0.1, 0.4};
    int32_t vars[3] = {0, 1, 2}, pair_vars[2] = {2, 3};
    concord_add_variables(g, 4, theta, NULL);
    assert_int_equal(concord_add_factor(g, 3, vars, NULL, 0, NULL, map, fu, NULL), CONCORD_OK);
    concord_add_logic(g, CONCORD_OR, 2, pair_vars, NULL, NULL);
    concord_add_pair(g, 0, 3, -1.0, NULL);
    return g;
}

static void a_failing_oracle_ends_the_solve_with_its_error(void **state) {
    (void)state;
    for (int invalid = 0; invalid <= 1; ++invalid) {
        failing_user fu = {3, 0, 5, invalid};
        concord_graph *g = graph_with_user_factor(&fu, failing_oracle);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        concord_settings st;
        concord_default_settings(&st);
        st.tol = 1e-12;
        for (int sparse = 0; sparse <= 1; ++sparse) {
            fu.calls = 0;
            int rc = sparse ? concord_solver_sparse(s, &st, &info)
                            : concord_solver_map(s, &st, &info);
            assert_int_equal(rc, CONCORD_ECALLBACK);
            assert_int_equal(info.status, CONCORD_STATUS_CALLBACK_FAILED);
            assert_string_equal(concord_status_name(info.status), "callback_failed");
            assert_non_null(strstr(concord_solver_last_error(s),
                                   invalid ? "invalid configuration" : "returned error 7"));
            assert_non_null(strstr(concord_solver_last_error(s), "factor 0"));
            assert_int_equal(concord_solver_callback_code(s), invalid ? 0 : 7);
            assert_null(concord_solver_variables(s));
        }
        /* the next call clears the code */
        assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_callback_code(s), 0);
        /* an oracle that fails at once fails the losses and decoding's
         * evaluation too */
        fu.calls = 0;
        fu.after = 1;
        double gold[4] = {1, 0, 0, 1}, loss;
        assert_int_equal(concord_solver_loss_hinge(s, NULL, gold, NULL, &loss, NULL, NULL, NULL),
                         CONCORD_ECALLBACK);
        assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_ECALLBACK);
        concord_decoding dec;
        assert_int_equal(concord_solver_evaluate(s, gold, &dec), CONCORD_ECALLBACK);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* The first solve of concord_solver_map, _exact and _mplp analyses the
 * graph, asking the oracles of factors over a multi-variable's states; a
 * loss asks for the gold structure's outputs before it solves. An oracle
 * failing there ends the call as one failing during the iterations does:
 * status "callback_failed" (it was "unsolved", as for a refused call) and
 * no solution (the previous solve's was left in place). A refused loss
 * writes "unsolved" (it left the caller's info untouched). */
static void an_oracle_failing_before_the_iterations_fails_the_solve(void **state) {
    (void)state;
    failing_user fu = {3, 0, INT32_MAX, false};
    concord_graph *g = concord_graph_new();
    const double theta[3] = {0.4, -0.1, 0.2};
    int32_t first;
    assert_int_equal(concord_add_multi_variable(g, 3, theta, true, &first), CONCORD_OK);
    const int32_t vars[3] = {first, first + 1, first + 2};
    assert_int_equal(concord_add_factor(g, 3, vars, NULL, 0, NULL, failing_oracle, &fu, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    const concord_info garbage = {.status = 99, .iterations = 1234, .value = 5.0};
    concord_info info;
    double loss = -1.0;
    const double gold[3] = {1, 0, 0};
    for (int call = 0; call < 4; ++call) {
        fu.after = INT32_MAX;
        assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
        assert_non_null(concord_solver_variables(s));
        fu.after = fu.calls + 1; /* the next oracle call fails */
        info = garbage;
        int rc = call == 0   ? concord_solver_map(s, NULL, &info)
                 : call == 1 ? concord_solver_exact(s, NULL, &info)
                 : call == 2 ? concord_solver_mplp(s, NULL, &info)
                             : concord_solver_loss_hinge(s, NULL, gold, NULL, &loss, NULL, NULL,
                                                         &info);
        assert_int_equal(rc, CONCORD_ECALLBACK);
        assert_int_equal(info.status, CONCORD_STATUS_CALLBACK_FAILED);
        assert_int_equal(concord_solver_callback_code(s), 7);
        assert_null(concord_solver_variables(s));
        assert_int_equal(concord_solver_decode(s, NULL), CONCORD_EINVAL);
    }
    info = garbage;
    const double outside[3] = {2, 0, 0};
    assert_int_equal(
        concord_solver_loss_sparsemap(s, NULL, outside, NULL, &loss, NULL, NULL, &info),
        CONCORD_EINVAL);
    assert_int_equal(info.status, CONCORD_STATUS_UNSOLVED);
    assert_int_equal(info.iterations, 0);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Variable 1 (score 1) under XOR(x1) and a second factor over it alone,
 * beside variable 0, in no factor, scored `free_score`. */
static concord_graph *one_variable_beside_a_free_one(double free_score, concord_logic second,
                                                     bool negated) {
    concord_graph *g = concord_graph_new();
    const double theta[2] = {free_score, -1.0};
    concord_add_variables(g, 2, theta, NULL);
    const int32_t var = 1;
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 1, &var, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, second, 1, &var, &negated, NULL), CONCORD_OK);
    return g;
}

/* XOR(x1) and XOR(not x1) admit no assignment whatever variable 0, in no
 * factor, scores. The dual bounds proved it against the sum of every
 * |score|; with variable 0 scored +-1e12, the factors' part of the bound
 * had to fall below -1e12, and AD3, LP-SparseMAP and PSDD ran to max_iter
 * (exact MAP spent max_iter on its root). The variables in no factor are
 * exact in the bound and are now put aside. The feasible twin, XOR(x1) and
 * OR(x1), whose LP value x1 = 1 sits on that floor (theta_1 = -1), must
 * not be called infeasible. */
static void a_variable_in_no_factor_does_not_hide_infeasibility(void **state) {
    (void)state;
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 2000;
    st.acyclic = false;
    const double free_scores[3] = {1e12, -1e12, 0.5};
    for (int k = 0; k < 3; ++k) {
        const double free_score = free_scores[k];
        for (int feasible = 0; feasible <= 1; ++feasible) {
            concord_graph *g = one_variable_beside_a_free_one(
                free_score, feasible ? CONCORD_OR : CONCORD_XOR, !feasible);
            concord_solver *s = new_solver_or_fail(g);
            for (int algorithm = 0; algorithm < 5; ++algorithm) {
                concord_info info;
                int rc = algorithm == 0   ? concord_solver_map(s, &st, &info)
                         : algorithm == 1 ? concord_solver_sparse(s, &st, &info)
                         : algorithm == 2 ? concord_solver_psdd(s, &st, &info)
                         : algorithm == 3 ? concord_solver_exact(s, &st, &info)
                                          : concord_solver_mplp(s, &st, &info);
                if (!feasible) {
                    assert_int_equal(rc, CONCORD_EINFEASIBLE);
                    assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
                    continue;
                }
                assert_int_equal(rc, CONCORD_OK);
                /* x1 = 1 is forced; x0 = 1 when its score is positive */
                const double x0 = free_score > 0.0 ? 1.0 : 0.0;
                const double *u = concord_solver_variables(s);
                assert_true(u[1] == 1.0);
                if (algorithm == 1) {
                    /* LP-SparseMAP: x0 = clip(theta_0, 0, 1) */
                    const double u0 = free_score > 1.0 ? 1.0 : free_score > 0.0 ? free_score : 0.0;
                    assert_true(u[0] == u0);
                    assert_true(fabs(info.value - (free_score * u0 - 0.5 * u0 * u0 - 1.5)) <=
                                1e-9 * fabs(free_score));
                } else {
                    assert_true(u[0] == x0);
                    assert_true(fabs(info.value - (free_score * x0 - 1.0)) <=
                                1e-12 * fabs(free_score));
                }
            }
            concord_solver_free(s);
            concord_graph_free(g);
        }
    }
}

/* XOR(x0..x9) with x4 forced on (a one-state DENSE) and one of x8, x9, x0
 * required (a DENSE over them): infeasible, and a PAIR(x3, x4) scored
 * beyond 1e154 puts the per-link state past the square root of DBL_MAX.
 * The acceleration's squared norms overflowed there; its step, then
 * measured as inf <= 100 inf, was kept and wrote infinities into the
 * multipliers: "non-finite values" where the dual bound proves
 * infeasibility. No 0/1 assignment satisfies every factor (brute force). */
static void an_infeasible_graph_at_huge_scores_is_called_infeasible(void **state) {
    (void)state;
    const double pair_scores[3] = {3.1872192394775339e154, 1e200, 1e300};
    for (int k = 0; k < 3; ++k) {
        concord_graph *g = concord_graph_new();
        const int32_t all[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, one_state = 1, forced = 4,
                      three_states = 3, either[3] = {8, 9, 0};
        const double either_scores[3] = {-4.5, 1.25, 0.5625};
        int32_t f;
        assert_int_equal(concord_add_variables(g, 10, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 10, all, NULL, &f), CONCORD_OK);
        assert_int_equal(concord_add_dense(g, 1, &one_state, &forced, NULL, &f), CONCORD_OK);
        assert_int_equal(concord_add_pair(g, 3, 4, pair_scores[k], &f), CONCORD_OK);
        assert_int_equal(concord_add_dense(g, 1, &three_states, either, either_scores, &f),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        for (int32_t bits = 0; bits < 1024; ++bits) {
            double x[10];
            for (int i = 0; i < 10; ++i) x[i] = (bits >> i) & 1;
            concord_decoding d;
            assert_int_equal(concord_solver_evaluate(s, x, &d), CONCORD_OK);
            assert_true(d.violated > 0);
        }
        concord_settings st;
        concord_default_settings(&st);
        st.max_iter = 2000;
        for (int sparse = 0; sparse <= 1; ++sparse) {
            concord_info info;
            const int rc = sparse ? concord_solver_sparse(s, &st, &info)
                                  : concord_solver_map(s, &st, &info);
            assert_int_equal(rc, CONCORD_EINFEASIBLE);
            assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
        }
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* XOR(x1, x2, x3) and XOR(not x1, not x2, not x3) want x1 + x2 + x3 = 1
 * and = 2: the local polytope is empty, though each factor allows either
 * state of any of its variables, so no state is ruled out and the dual
 * bounds stay finite. They prove infeasibility by falling below minus the
 * sum of the factors' |scores| (0.6), whatever variable 0, in no factor,
 * scores. MPLP tested its bound against the sum of every |score| and ran
 * to max_iter beside a score of +-1e12; above, XOR(x1) beside XOR(not x1)
 * rules out both states of x1, and MPLP's bound of -inf passed any test. */
static void an_empty_local_polytope_is_proven_beside_a_variable_in_no_factor(void **state) {
    (void)state;
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 2000;
    st.acyclic = false;
    const double free_scores[3] = {1e12, -1e12, 0.5};
    for (int k = 0; k < 3; ++k) {
        concord_graph *g = concord_graph_new();
        const double theta[4] = {free_scores[k], 0.3, -0.2, 0.1};
        const int32_t vars[3] = {1, 2, 3};
        const bool negated[3] = {true, true, true};
        concord_add_variables(g, 4, theta, NULL);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, vars, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, vars, negated, NULL), CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        for (int algorithm = 0; algorithm < 5; ++algorithm) {
            concord_info info;
            int rc = algorithm == 0   ? concord_solver_map(s, &st, &info)
                     : algorithm == 1 ? concord_solver_sparse(s, &st, &info)
                     : algorithm == 2 ? concord_solver_psdd(s, &st, &info)
                     : algorithm == 3 ? concord_solver_exact(s, &st, &info)
                                      : concord_solver_mplp(s, &st, &info);
            assert_int_equal(rc, CONCORD_EINFEASIBLE);
            assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
            if (algorithm == 3) continue; /* branch and bound: every node infeasible */
            assert_true(isfinite(info.upper_bound));
            assert_non_null(strstr(concord_solver_last_error(s),
                                   "(>= -0.6; the variables in no factor aside)"));
        }
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* An XOR oracle with one additional output (always 0) that fails, returning
 * its additional score as its error code, when that score is not 0. */
static int coded_oracle(void *user, const double *a, const double *b, double *u, double *v,
                        double *value) {
    if (b[0] != 0.0) return (int)b[0];
    v[0] = 0.0;
    return xor_oracle(user, a, b, u, v, value);
}

/* Solvers over one graph, solved at once on threads, each keep the code
 * of their own oracle failure: whose failure was whose is not lost. */
static void each_solver_keeps_its_own_callback_code(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    double theta[3] = {0.3, -0.2, 0.1};
    int32_t vars[3] = {0, 1, 2};
    concord_add_variables(g, 3, theta, NULL);
    assert_int_equal(concord_add_factor(g, 3, vars, NULL, 1, NULL, coded_oracle, &xor_degree,
                                        NULL),
                     CONCORD_OK);
    concord_add_logic(g, CONCORD_OR, 2, vars, NULL, NULL);
    enum { N = 4 };
    concord_solver *s[N];
    concord_info info[N];
    for (int k = 0; k < N; ++k) {
        s[k] = new_solver_or_fail(g);
        const double code = 11.0 * k; /* solver 0 succeeds */
        assert_int_equal(concord_solver_set_scores(s[k], NULL, &code), CONCORD_OK);
    }
    for (int algorithm = 0; algorithm < 2; ++algorithm) {
        int rc = concord_solve_batch(s, N, algorithm ? CONCORD_ALGORITHM_SPARSE
                                                     : CONCORD_ALGORITHM_AD3,
                                     NULL, info, N);
        assert_int_equal(rc, CONCORD_ECALLBACK);
        assert_int_equal(info[0].status == CONCORD_STATUS_CALLBACK_FAILED, false);
        assert_int_equal(concord_solver_callback_code(s[0]), 0);
        for (int k = 1; k < N; ++k) {
            assert_int_equal(info[k].status, CONCORD_STATUS_CALLBACK_FAILED);
            assert_int_equal(concord_solver_callback_code(s[k]), 11 * k);
        }
    }
    for (int k = 0; k < N; ++k) concord_solver_free(s[k]);
    concord_graph_free(g);
}

/* Building user factors: a missing oracle, bad links, a QP for a factor
 * that is not a user factor. */
static void user_factor_arguments_are_checked(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 3, NULL, NULL);
    int32_t vars[3] = {0, 1, 1};
    assert_int_equal(concord_add_factor(g, 2, vars, NULL, 0, NULL, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "oracle"));
    assert_int_equal(concord_add_factor(g, 3, vars, NULL, 0, NULL, xor_oracle, &xor_degree, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "more than once"));
    assert_int_equal(concord_add_factor(g, 2, vars, NULL, -1, NULL, xor_oracle, &xor_degree, NULL),
                     CONCORD_EINVAL);
    double bad = INFINITY;
    assert_int_equal(concord_add_factor(g, 2, vars, NULL, 1, &bad, xor_oracle, &xor_degree, NULL),
                     CONCORD_EINVAL);
    int32_t f;
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 2, vars, NULL, &f), CONCORD_OK);
    assert_int_equal(concord_set_factor_qp(g, f, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 1);
    concord_graph_free(g);
}

/* A closed-form QP callback (the XOR's, computed here by bisection on the
 * simplex multiplier) replaces the active set in the forward pass: same
 * solutions as the oracle alone, and the backward pass still works. */
static void a_qp_callback_gives_the_oracles_solution(void **state) {
    (void)state;
    test_rng rng = {5};
    for (int trial = 0; trial < 10; ++trial) {
        double theta[6];
        random_normals(&rng, theta, 6, 1.0);
        concord_graph *g[2];
        for (int k = 0; k < 2; ++k) {
            g[k] = concord_graph_new();
            concord_add_variables(g[k], 6, theta, NULL);
            int32_t a[3] = {0, 1, 2}, b[3] = {2, 3, 4}, c[3] = {4, 5, 0};
            int32_t f;
            assert_int_equal(
                concord_add_factor(g[k], 3, a, NULL, 0, NULL, xor_oracle, &xor_degree, &f),
                CONCORD_OK);
            if (k) assert_int_equal(concord_set_factor_qp(g[k], f, xor_qp), CONCORD_OK);
            concord_add_logic(g[k], CONCORD_OR, 3, b, NULL, NULL);
            concord_add_budget(g[k], 3, c, NULL, 1.0, false, NULL);
        }
        concord_solver *s0 = new_solver_or_fail(g[0]), *s1 = new_solver_or_fail(g[1]);
        concord_settings st;
        concord_default_settings(&st);
        st.tol = 1e-10;
        assert_int_equal(concord_solver_sparse(s0, &st, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(s1, &st, NULL), CONCORD_OK);
        double du[6], j0[6], j1[6];
        random_normals(&rng, du, 6, 1.0);
        assert_int_equal(concord_solver_backward(s0, NULL, du, NULL, j0, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_backward(s1, NULL, du, NULL, j1, NULL, NULL), CONCORD_OK);
        for (int i = 0; i < 6; ++i) {
            assert_true(fabs(concord_solver_variables(s0)[i] - concord_solver_variables(s1)[i]) <=
                        1e-7);
            assert_true(fabs(j0[i] - j1[i]) <= 1e-6);
        }
        int32_t count;
        assert_int_equal(concord_solver_factor_distribution(s1, 0, &count), CONCORD_OK);
        assert_true(count >= 1 && count <= 3);
        concord_solver_free(s0);
        concord_solver_free(s1);
        concord_graph_free(g[0]);
        concord_graph_free(g[1]);
    }
}

/* The QP callback of a failing_user: the XOR's QP until its `after`-th
 * call, then error 7 or a point outside the box. */
static int failing_qp(void *user, const double *a, const double *b, const double *d,
                      double *u, double *v) {
    failing_user *p = user;
    if (++p->calls >= p->after) {
        if (!p->invalid) return 7;
        for (int32_t i = 0; i < p->degree; ++i) u[i] = 1.5;
        return 0;
    }
    return xor_qp(&p->degree, a, b, d, u, v);
}

/* A QP callback's error, or a point it writes outside the box, ends an
 * LP-SparseMAP solve and the factor's QP on its own like an oracle's. */
static void a_failing_qp_callback_ends_the_solve_with_its_error(void **state) {
    (void)state;
    for (int invalid = 0; invalid <= 1; ++invalid) {
        failing_user fu = {3, 0, 4, invalid};
        concord_graph *g = graph_with_user_factor(&fu, xor_oracle);
        assert_int_equal(concord_set_factor_qp(g, 0, failing_qp), CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        concord_settings st;
        concord_default_settings(&st);
        st.tol = 1e-12;
        const char *expected = invalid ? "invalid configuration" : "returned error 7";
        assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ECALLBACK);
        assert_int_equal(info.status, CONCORD_STATUS_CALLBACK_FAILED);
        assert_int_equal(fu.calls, fu.after);
        assert_non_null(strstr(concord_solver_last_error(s), expected));
        assert_non_null(strstr(concord_solver_last_error(s), "factor 0"));
        assert_int_equal(concord_solver_callback_code(s), invalid ? 0 : 7);
        assert_null(concord_solver_variables(s));
        const double scores[3] = {0.3, -0.2, 0.1};
        double u[3];
        fu.calls = 0;
        fu.after = 1;
        assert_int_equal(concord_solver_factor_qp(s, 0, scores, NULL, NULL, u, NULL, NULL),
                         CONCORD_ECALLBACK);
        assert_non_null(strstr(concord_solver_last_error(s), expected));
        /* below its `after`-th call it answers */
        fu.calls = 0;
        fu.after = 2;
        assert_int_equal(concord_solver_factor_qp(s, 0, scores, NULL, NULL, u, NULL, NULL),
                         CONCORD_OK);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* A user factor whose additional output is -1 or +1: configurations
 * (u; v) = (0,1; -1), (1,0; -1), (1,1; +1). */
static int signed_output_oracle(void *user, const double *a, const double *b, double *u,
                                double *v, double *value) {
    (void)user;
    static const double cu[3][2] = {{0, 1}, {1, 0}, {1, 1}}, cv[3] = {-1, -1, 1};
    int best = 0;
    for (int k = 1; k < 3; ++k)
        if (a[0] * cu[k][0] + a[1] * cu[k][1] + b[0] * cv[k] >
            a[0] * cu[best][0] + a[1] * cu[best][1] + b[0] * cv[best])
            best = k;
    u[0] = cu[best][0], u[1] = cu[best][1], v[0] = cv[best];
    *value = a[0] * u[0] + a[1] * u[1] + b[0] * v[0];
    return 0;
}

/* Whether a factor allows an assignment is asked of its oracle with link
 * scores that outweigh its additional scores: with an additional score of
 * -8e15, a margin of 1 beside it was lost to rounding, and the allowed
 * (1, 1) was called a violation, the graph infeasible. */
static void a_factor_allows_its_configurations_beside_large_additional_scores(void **state) {
    (void)state;
    for (int k = 0; k < 3; ++k) {
        const double phi = (double[]){-4e15, -8e15, -3e299}[k];
        concord_graph *g = concord_graph_new();
        const double theta[2] = {1.0, 1.0};
        concord_add_variables(g, 2, theta, NULL);
        int32_t vars[2] = {0, 1};
        assert_int_equal(
            concord_add_factor(g, 2, vars, NULL, 1, &phi, signed_output_oracle, NULL, NULL),
            CONCORD_OK);
        concord_add_logic(g, CONCORD_XOR, 1, &vars[0], NULL, NULL);
        concord_add_logic(g, CONCORD_XOR, 1, &vars[1], NULL, NULL);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_exact(s, NULL, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_OPTIMAL);
        assert_true(concord_solver_variables(s)[0] == 1.0 && concord_solver_variables(s)[1] == 1.0);
        assert_true(info.value == 2.0 + phi);
        const double x[2] = {1.0, 1.0};
        concord_decoding d;
        assert_int_equal(concord_solver_evaluate(s, x, &d), CONCORD_OK);
        assert_int_equal(d.violated, 0);
        assert_true(d.value == 2.0 + phi);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* A user PAIR (two variables and their product as an additional output):
 * the oracle enumerates the four configurations, the QP callback hands the
 * QP to a built-in PAIR factor of a one-factor graph's solver. */
typedef struct user_pair {
    concord_solver *reference; /* over a graph holding one PAIR factor */
} user_pair;

static int pair_oracle(void *user, const double *a, const double *b, double *u, double *v,
                       double *value) {
    (void)user;
    *value = -INFINITY;
    for (int config = 0; config < 4; ++config) {
        const double x0 = config & 1, x1 = config >> 1;
        const double score = a[0] * x0 + a[1] * x1 + b[0] * x0 * x1;
        if (score > *value) *value = score, u[0] = x0, u[1] = x1, v[0] = x0 * x1;
    }
    return 0;
}

static int pair_qp(void *user, const double *a, const double *b, const double *d, double *u,
                   double *v) {
    const user_pair *p = user;
    return concord_solver_factor_qp(p->reference, 0, a, b, d, u, v, NULL);
}

/* A QP callback of a factor with additional outputs writes them itself:
 * AD3 and LP-SparseMAP over a user PAIR give the built-in PAIR's solution,
 * additional outputs included. */
static void a_qp_callback_writes_the_additional_outputs(void **state) {
    (void)state;
    concord_graph *single = concord_graph_new();
    concord_add_variables(single, 2, NULL, NULL);
    concord_add_pair(single, 0, 1, 0.0, NULL);
    user_pair up = {new_solver_or_fail(single)};
    test_rng rng = {17};
    for (int trial = 0; trial < 5; ++trial) {
        double theta[4], pair_score;
        random_normals(&rng, theta, 4, 1.0);
        random_normals(&rng, &pair_score, 1, 2.0);
        concord_graph *g[2];
        for (int k = 0; k < 2; ++k) {
            g[k] = concord_graph_new();
            concord_add_variables(g[k], 4, theta, NULL);
            int32_t pair_vars[2] = {0, 1}, xor_vars[3] = {1, 2, 3}, or_vars[2] = {0, 3}, f;
            if (k) {
                assert_int_equal(concord_add_factor(g[k], 2, pair_vars, NULL, 1, &pair_score,
                                                    pair_oracle, &up, &f),
                                 CONCORD_OK);
                assert_int_equal(concord_set_factor_qp(g[k], f, pair_qp), CONCORD_OK);
            } else {
                concord_add_pair(g[k], 0, 1, pair_score, NULL);
            }
            concord_add_logic(g[k], CONCORD_XOR, 3, xor_vars, NULL, NULL);
            concord_add_logic(g[k], CONCORD_OR, 2, or_vars, NULL, NULL);
        }
        concord_settings st;
        concord_default_settings(&st);
        st.tol = 1e-10;
        for (int sparse = 0; sparse <= 1; ++sparse) {
            concord_solver *s[2];
            for (int k = 0; k < 2; ++k) {
                s[k] = new_solver_or_fail(g[k]);
                assert_int_equal(sparse ? concord_solver_sparse(s[k], &st, NULL)
                                        : concord_solver_map(s[k], &st, NULL),
                                 CONCORD_OK);
            }
            for (int i = 0; i < 4; ++i)
                assert_true(fabs(concord_solver_variables(s[0])[i] -
                                 concord_solver_variables(s[1])[i]) <= 1e-6);
            assert_true(fabs(concord_solver_additionals(s[0])[0] -
                             concord_solver_additionals(s[1])[0]) <= 1e-6);
            concord_solver_free(s[0]);
            concord_solver_free(s[1]);
        }
        concord_graph_free(g[0]);
        concord_graph_free(g[1]);
    }
    concord_solver_free(up.reference);
    concord_graph_free(single);
}

/* ------------------------------------------------------------------------
 * Progress, limits, interrupts
 * ------------------------------------------------------------------------ */

typedef struct progress_log {
    int calls, stop_at;
    int32_t last_iteration;
    bool increasing, bounds_valid;
} progress_log;

static int log_progress(void *context, const concord_progress *p) {
    progress_log *log = context;
    log->calls += 1;
    log->increasing &= p->iteration > log->last_iteration;
    log->bounds_valid &= isfinite(p->upper_bound) && p->seconds >= 0.0 && p->eta > 0.0;
    log->last_iteration = p->iteration;
    return log->calls == log->stop_at;
}

/* The progress callback sees every bound (every bound_every iterations)
 * and can stop the solve, whose status is then "interrupted" with its
 * current point as the solution. */
static void the_progress_callback_reports_and_can_interrupt(void **state) {
    (void)state;
    test_rng rng = {13};
    concord_graph *g = matching_graph(10, 10, &rng);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-12;
    st.warm_start = false;
    progress_log log = {0, 0, 0, true, true};
    st.progress = log_progress;
    st.progress_context = &log;
    concord_info info;
    assert_int_equal(concord_solver_map(s, &st, &info), CONCORD_OK);
    assert_true(log.calls >= info.iterations / st.bound_every - 1);
    assert_true(log.increasing && log.bounds_valid);
    log = (progress_log){0, 2, 0, true, true};
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_INTERRUPTED);
    assert_string_equal(concord_status_name(info.status), "interrupted");
    assert_int_equal(info.iterations, 2 * st.bound_every);
    assert_non_null(concord_solver_variables(s));
    assert_non_null(strstr(concord_solver_last_error(s), "progress callback"));
    concord_solver_free(s);
    concord_graph_free(g);
}

enum { PENALTY_LOG = 16 };

/* The relative penalty in force during each of the first iterations. */
typedef struct penalty_log {
    double eta[PENALTY_LOG + 1];
} penalty_log;

static int log_penalty(void *context, const concord_progress *p) {
    penalty_log *log = context;
    if (p->iteration <= PENALTY_LOG) log->eta[p->iteration] = p->eta;
    return 0;
}

/* The penalty's first check (iteration 5) corrects an initial penalty far
 * too small by up to 16 times in one change; the early checks after it
 * (here those up to iteration 15) move it by at most 4 times. */
static void the_first_penalty_check_corrects_a_far_off_guess(void **state) {
    (void)state;
    test_rng rng = {17};
    concord_graph *g = matching_graph(10, 10, &rng);
    concord_solver *s = new_solver_or_fail(g);
    for (int sparse = 0; sparse < 2; ++sparse) {
        concord_settings st;
        concord_default_settings(&st);
        st.warm_start = false;
        st.bound_every = 1;
        st.eta = 1e-4;
        penalty_log log = {{0}};
        st.progress = log_penalty;
        st.progress_context = &log;
        concord_info info;
        int rc = sparse ? concord_solver_sparse(s, &st, &info) : concord_solver_map(s, &st, &info);
        assert_int_equal(rc, CONCORD_OK);
        assert_true(info.iterations > PENALTY_LOG);
        for (int t = 1; t <= 5; ++t) assert_true(log.eta[t] == st.eta);
        const double first = log.eta[6] / log.eta[5];
        if (!(fabs(first - 16.0) <= 1e-12 * 16.0))
            fail_msg("%s: the first check moved the penalty %g times", sparse ? "LP-SparseMAP" : "LP-MAP",
                     first);
        for (int t = 6; t < PENALTY_LOG; ++t) {
            const double change = log.eta[t + 1] / log.eta[t];
            assert_true(change <= 4.0 * (1 + 1e-12) && change >= 0.25 * (1 - 1e-12));
        }
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

/* An oracle that takes a millisecond per call. */
static int slow_oracle(void *user, const double *a, const double *b, double *u, double *v,
                       double *value) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
    return xor_oracle(user, a, b, u, v, value);
}

/* A solve stops at the time limit, with status "time_limit"; a negative
 * limit is refused. */
static void a_solve_stops_at_the_time_limit(void **state) {
    (void)state;
    test_rng rng = {17};
    concord_graph *g = matching_graph(6, 6, &rng);
    static int32_t six = 6;
    int32_t vars[6] = {0, 7, 14, 21, 28, 35};
    assert_int_equal(concord_add_factor(g, 6, vars, NULL, 0, NULL, slow_oracle, &six, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-14;
    st.time_limit = 0.05;
    concord_info info;
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_TIME_LIMIT);
    assert_string_equal(concord_status_name(info.status), "time_limit");
    assert_true(info.seconds >= 0.05 && info.seconds < 2.0);
    assert_true(info.iterations < st.max_iter);
    assert_non_null(strstr(concord_solver_last_error(s), "time limit"));
    st.time_limit = -1.0;
    assert_int_equal(concord_solver_map(s, &st, &info), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "time_limit"));
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A graph of one user XOR over SEPARABLE_DEGREE variables of near-equal
 * scores: its SparseMAP solution spreads over every vertex, and the
 * active set needs an oracle call for each. The graph is separable (no
 * variable is shared), so a solve runs the factor's rounds alone. */
enum { SEPARABLE_DEGREE = 30 };
static concord_graph *one_slow_xor_graph(void) {
    static int32_t degree = SEPARABLE_DEGREE;
    test_rng rng = {41};
    double theta[SEPARABLE_DEGREE];
    int32_t vars[SEPARABLE_DEGREE];
    random_normals(&rng, theta, SEPARABLE_DEGREE, 1e-3);
    for (int32_t i = 0; i < SEPARABLE_DEGREE; ++i) vars[i] = i;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, SEPARABLE_DEGREE, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_factor(g, SEPARABLE_DEGREE, vars, NULL, 0, NULL, slow_oracle,
                                        &degree, NULL),
                     CONCORD_OK);
    return g;
}

/* The sum of the solution's values: 1 on the XOR's polytope. */
static double solution_sum(const concord_solver *s) {
    const double *u = concord_solver_variables(s);
    double sum = 0.0;
    for (int32_t i = 0; i < SEPARABLE_DEGREE; ++i) sum += u[i];
    return sum;
}

/* The additional outputs at a decoded assignment (one variable per column
 * on, PAIRs along the rows): a PAIR's is the product of its two variables
 * there, and with them theta.x + phi.v is the decoding's value. Before
 * any decoding there are none. */
static void decoded_additionals_are_the_pairs_products_and_make_the_value(void **state) {
    (void)state;
    enum { ROWS = 4, COLS = 5, PAIRS = ROWS * (COLS - 1) };
    test_rng rng = {29};
    double theta[ROWS * COLS];
    random_normals(&rng, theta, ROWS * COLS, 1.0);
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, ROWS * COLS, theta, NULL), CONCORD_OK);
    int32_t pair_factor[PAIRS], pair_var[PAIRS], vars[ROWS];
    for (int j = 0; j < COLS; ++j) {
        for (int i = 0; i < ROWS; ++i) vars[i] = i * COLS + j;
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, ROWS, vars, NULL, NULL), CONCORD_OK);
    }
    for (int i = 0, k = 0; i < ROWS; ++i) {
        for (int j = 0; j + 1 < COLS; ++j, ++k) {
            pair_var[k] = i * COLS + j;
            assert_int_equal(concord_add_pair(g, pair_var[k], pair_var[k] + 1,
                                              2.0 * rng_normal(&rng), &pair_factor[k]),
                             CONCORD_OK);
        }
    }
    concord_solver *s = new_solver_or_fail(g);
    double v[PAIRS];
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_decoded_additionals(s, v), CONCORD_EINVAL);
    concord_decoding decoding;
    assert_int_equal(concord_solver_decode(s, &decoding), CONCORD_OK);
    assert_int_equal(decoding.violated, 0);
    assert_int_equal(concord_num_additionals(g), PAIRS);
    assert_int_equal(concord_solver_decoded_additionals(s, v), CONCORD_OK);
    const double *x = concord_solver_decoded(s), *phi = concord_additional_scores(g);
    double value = 0.0, scale = 0.0;
    for (int32_t i = 0; i < ROWS * COLS; ++i) {
        value += theta[i] * x[i];
        scale += fabs(theta[i]);
    }
    int both_on = 0;
    for (int k = 0; k < PAIRS; ++k) {
        int32_t first, count;
        assert_int_equal(concord_factor_additionals(g, pair_factor[k], &first, &count), CONCORD_OK);
        assert_int_equal(count, 1);
        assert_true(v[first] == x[pair_var[k]] * x[pair_var[k] + 1]);
        both_on += v[first] == 1.0;
        value += phi[first] * v[first];
        scale += fabs(phi[first]);
    }
    assert_true(both_on > 0 && both_on < PAIRS);
    assert_true(fabs(value - decoding.value) <= 1e-12 * scale);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A separable graph is solved factor by factor, a factor by rounds of
 * oracle calls: the time limit is read between rounds, and a solve
 * stopped there (or at max_iter) keeps the best point the factor reached,
 * a point of its polytope. */
static void a_separable_solve_stops_at_the_time_limit_with_a_feasible_point(void **state) {
    (void)state;
    concord_graph *g = one_slow_xor_graph();
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    concord_info full;
    assert_int_equal(concord_solver_sparse(s, &st, &full), CONCORD_OK);
    assert_true(full.oracle_calls >= SEPARABLE_DEGREE); /* at least 30 ms */
    st.warm_start = false;
    st.time_limit = 0.005;
    concord_info info;
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_TIME_LIMIT);
    assert_true(info.oracle_calls < full.oracle_calls);
    assert_true(fabs(solution_sum(s) - 1.0) <= 1e-12);
    st.time_limit = 0.0;
    st.max_iter = 2;
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_MAX_ITER);
    assert_true(fabs(solution_sum(s) - 1.0) <= 1e-12);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Progress reports of a separable solve: every bound_every rounds, the
 * value and bound not yet known. */
typedef struct separable_log {
    int reports, stop_at;
    bool unknown_value_and_bound;
} separable_log;

static int log_separable_progress(void *context, const concord_progress *p) {
    separable_log *log = context;
    log->reports += 1;
    log->unknown_value_and_bound &= p->value == -INFINITY && p->upper_bound == INFINITY;
    return log->reports == log->stop_at;
}

static void a_separable_solve_reports_progress_and_can_be_stopped(void **state) {
    (void)state;
    concord_graph *g = one_slow_xor_graph();
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.bound_every = 4;
    separable_log log = {0, 3, true};
    st.progress = log_separable_progress;
    st.progress_context = &log;
    concord_info info;
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_INTERRUPTED);
    assert_int_equal(log.reports, 3);
    assert_true(log.unknown_value_and_bound);
    assert_true(info.oracle_calls >= 12 && info.oracle_calls < SEPARABLE_DEGREE);
    assert_true(fabs(solution_sum(s) - 1.0) <= 1e-12);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A separable solve stopped at max_iter while its first factor was not
 * yet certified: that factor's distribution is the best point it reached
 * (its configurations mix to the solution), and the factors after it, left
 * at their starting point, have none: CONCORD_EINVAL, where the second
 * HEAD_AUTOMATON's was empty and CONCORD_OK. */
static void a_stopped_separable_solve_has_no_distribution_or_backward_past_where_it_stopped(void **state) {
    (void)state;
    const int32_t first_arcs[2] = {0, 1}, second_arcs[2] = {2, 3}, xor_vars[3] = {4, 5, 6};
    const double pairs[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    concord_graph *g = concord_graph_new();
    int32_t first, second, xor_factor;
    assert_int_equal(concord_add_variables(g, 7, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_head_automaton(g, 2, first_arcs, pairs, &first), CONCORD_OK);
    assert_int_equal(concord_add_head_automaton(g, 2, second_arcs, pairs, &second), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, xor_vars, NULL, &xor_factor), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 1;
    st.max_inner_iter = 1;
    concord_info info;
    assert_int_equal(concord_solver_sparse(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_MAX_ITER);
    int32_t count = 0;
    assert_int_equal(concord_solver_factor_distribution(s, first, &count), CONCORD_OK);
    assert_true(count >= 1);
    double total = 0.0, mixed[2] = {0.0, 0.0};
    for (int32_t k = 0; k < count; ++k) {
        double weight, u[2];
        assert_int_equal(concord_solver_distribution_entry(s, k, &weight, u, NULL), CONCORD_OK);
        total += weight;
        for (int j = 0; j < 2; ++j) mixed[j] += weight * u[j];
    }
    assert_true(fabs(total - 1.0) <= 1e-12);
    for (int j = 0; j < 2; ++j)
        assert_true(fabs(mixed[j] - concord_solver_variables(s)[first_arcs[j]]) <= 1e-12);
    assert_int_equal(concord_solver_factor_distribution(s, second, &count), CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "stopped before"));
    assert_int_equal(concord_solver_factor_distribution(s, xor_factor, &count), CONCORD_EINVAL);
    /* nor a backward pass: the factors it did not reach hold their start */
    double du[7] = {1, 2, 3, 4, 5, 6, 7}, dtheta[7];
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "stopped before it reached factor 1"));
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The same graph by LP-MAP, stopped by the progress callback after its
 * first factor: that factor's part of the solution is the vertex its MAP
 * oracle gave, and its distribution is that vertex with weight 1. Its
 * active set was left empty (the oracle does not use it), and the
 * distribution came out CONCORD_OK with no configuration (the API
 * fuzzer's find); a solve that runs to its end is integral and never
 * read it. */
static void a_stopped_separable_lp_map_solve_has_the_vertex_as_distribution(void **state) {
    (void)state;
    const int32_t first_arcs[2] = {0, 1}, second_arcs[2] = {2, 3}, xor_vars[3] = {4, 5, 6};
    const double pairs[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    const double theta[7] = {0.8, -0.3, 0.2, 0.1, 0.0, 0.5, -0.5};
    concord_graph *g = concord_graph_new();
    int32_t first, second, xor_factor, add_first, n_add_first;
    assert_int_equal(concord_add_variables(g, 7, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_head_automaton(g, 2, first_arcs, pairs, &first), CONCORD_OK);
    assert_int_equal(concord_add_head_automaton(g, 2, second_arcs, pairs, &second), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, xor_vars, NULL, &xor_factor), CONCORD_OK);
    assert_int_equal(concord_factor_additionals(g, first, &add_first, &n_add_first), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.acyclic = false; /* the separable solve, not dynamic programming */
    st.bound_every = 1;
    separable_log log = {0, 1, true};
    st.progress = log_separable_progress;
    st.progress_context = &log;
    concord_info info;
    assert_int_equal(concord_solver_map(s, &st, &info), CONCORD_ENOTCONVERGED);
    assert_int_equal(info.status, CONCORD_STATUS_INTERRUPTED);
    const double *u = concord_solver_variables(s), *v = concord_solver_additionals(s);
    int32_t count = 0;
    assert_int_equal(concord_solver_factor_distribution(s, first, &count), CONCORD_OK);
    assert_int_equal(count, 1);
    double weight, vertex_u[2], vertex_v[6];
    assert_int_equal(n_add_first, 6);
    assert_int_equal(concord_solver_distribution_entry(s, 0, &weight, vertex_u, vertex_v),
                     CONCORD_OK);
    assert_true(weight == 1.0);
    for (int j = 0; j < 2; ++j) {
        assert_true(vertex_u[j] == 0.0 || vertex_u[j] == 1.0);
        assert_true(vertex_u[j] == u[first_arcs[j]]);
    }
    for (int k = 0; k < n_add_first; ++k) assert_true(vertex_v[k] == v[add_first + k]);
    assert_int_equal(concord_solver_factor_distribution(s, second, &count), CONCORD_EINVAL);
    assert_int_equal(concord_solver_factor_distribution(s, xor_factor, &count), CONCORD_EINVAL);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* ------------------------------------------------------------------------
 * The backward pass: errors and its cap
 * ------------------------------------------------------------------------ */

static void backward_refuses_a_stale_or_missing_forward_pass(void **state) {
    (void)state;
    test_rng rng = {23};
    concord_graph *g = matching_graph(4, 4, &rng);
    const int32_t n = concord_num_variables(g);
    double du[16], dtheta[16];
    random_normals(&rng, du, n, 1.0);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "concord_solver_sparse"));
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL), CONCORD_OK);
    /* the solver's own scores change: stale */
    double theta[16];
    memcpy(theta, concord_variable_scores(g), (size_t)n * sizeof *theta);
    theta[0] += 1.0;
    assert_int_equal(concord_solver_set_scores(s, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(s), "scores changed"));
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL), CONCORD_OK);
    /* the graph's scores change while the solver reads them: stale too */
    assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_set_variable_scores(g, 0, 1, theta), CONCORD_OK);
    assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_solver_backward(s, NULL, NULL, NULL, dtheta, NULL, NULL),
                     CONCORD_EINVAL);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Conjugate gradients and the power iteration stopped at their cap say
 * so: CONCORD_ENOTCONVERGED, info.converged false, the products filled. */
static void backward_reports_its_iteration_cap(void **state) {
    (void)state;
    test_rng rng = {31};
    concord_graph *g = matching_graph(8, 8, &rng);
    const int32_t n = concord_num_variables(g);
    double du[64], dtheta[64];
    random_normals(&rng, du, n, 1.0);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    for (int power = 0; power <= 1; ++power) {
        concord_settings st;
        concord_default_settings(&st);
        st.backward_power = power;
        st.backward_tol = 1e-12;
        st.backward_max_iter = 100000;
        concord_backward_info info;
        assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info),
                         CONCORD_OK);
        assert_true(info.converged && info.iterations > 1);
        st.backward_max_iter = 1;
        for (int32_t i = 0; i < n; ++i) dtheta[i] = NAN;
        assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info),
                         CONCORD_ENOTCONVERGED);
        assert_false(info.converged);
        assert_int_equal(info.iterations, 1);
        assert_true(info.residual > st.backward_tol);
        for (int32_t i = 0; i < n; ++i) assert_true(isfinite(dtheta[i]));
        assert_non_null(strstr(concord_solver_last_error(s), "stopped at 1 iterations"));
        /* the residual reached does not depend on the tolerance asked for
         * (a tolerance whose square underflows once made it read 0) */
        const double residual = info.residual;
        st.backward_tol = 1e-200;
        assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info),
                         CONCORD_ENOTCONVERGED);
        assert_true(info.residual == residual);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

static int interrupt_at_third_iteration(void *context, const concord_progress *p) {
    (void)context;
    return p->iteration >= 3;
}

/* A forward pass stopped before converging (max_iter, or interrupted by
 * its progress callback) is differentiated at its last iterate, and the
 * backward pass says so: CONCORD_ENOTCONVERGED with the products filled
 * and its conjugate gradients converged; after a converged solve, OK. */
static void backward_reports_an_unconverged_forward_pass(void **state) {
    (void)state;
    test_rng rng = {37};
    concord_graph *g = matching_graph(8, 8, &rng);
    const int32_t n = concord_num_variables(g);
    double du[64], dtheta[64];
    random_normals(&rng, du, n, 1.0);
    concord_solver *s = new_solver_or_fail(g);
    concord_settings stopped;
    concord_default_settings(&stopped);
    stopped.warm_start = false;
    for (int by_callback = 0; by_callback <= 1; ++by_callback) {
        concord_info info;
        if (by_callback) {
            stopped.max_iter = 10000;
            stopped.bound_every = 1; /* the callback runs with the bound */
            stopped.progress = interrupt_at_third_iteration;
        } else {
            stopped.max_iter = 2;
        }
        assert_int_equal(concord_solver_sparse(s, &stopped, &info), CONCORD_ENOTCONVERGED);
        assert_int_equal(info.status, by_callback ? CONCORD_STATUS_INTERRUPTED
                                                  : CONCORD_STATUS_MAX_ITER);
        concord_backward_info binfo;
        for (int32_t i = 0; i < n; ++i) dtheta[i] = NAN;
        assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, &binfo),
                         CONCORD_ENOTCONVERGED);
        assert_true(binfo.converged);
        for (int32_t i = 0; i < n; ++i) assert_true(isfinite(dtheta[i]));
        assert_non_null(strstr(concord_solver_last_error(s), "stopped before converging"));
        assert_int_equal(concord_solver_sparse(s, NULL, &info), CONCORD_OK);
        assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, &binfo),
                         CONCORD_OK);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The graph of the backward tests at any magnitude: XOR(0, 1, 2),
 * OR(1, 2, 3) and a PAIR on (0, 3), whose one additional output is v. */
static concord_graph *logic_and_pair_graph(void) {
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    const double theta[4] = {0.3, 0.5, -0.2, 0.1};
    assert_int_equal(concord_add_variables(g, 4, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, (int32_t[]){0, 1, 2}, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_OR, 3, (int32_t[]){1, 2, 3}, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_add_pair(g, 0, 3, 0.7, NULL), CONCORD_OK);
    return g;
}

/* The least slack of the linear inequalities that describe each logic
 * family's and BUDGET's polytope over 4 links (the convex hull of its
 * configurations: box constraints and the ones below), written here from
 * the families' definitions: >= 0 inside, < 0 outside. Families 0-6 are
 * the logic kinds in concord_logic's order, 7 BUDGET 2, 8 exact BUDGET 2,
 * 9 OR over links 0 and 2 negated. */
enum { GOLD_FAMILIES = 10 };
static double polytope_slack(int family, const double *u) {
    const int n = 4;
    double least = INFINITY, sum = 0.0, inputs = 0.0;
    for (int j = 0; j < n; ++j) {
        least = fmin(least, fmin(u[j], 1.0 - u[j]));
        sum += u[j];
    }
    inputs = sum - u[n - 1];
    const double y = u[n - 1];
    switch (family) {
    case 0: return fmin(least, -fabs(sum - 1.0));          /* XOR */
    case 1: return fmin(least, 1.0 - sum);                 /* ATMOSTONE */
    case 2: return fmin(least, sum - 1.0);                 /* OR */
    case 3: return fmin(least, -fabs(inputs - y));         /* XOROUT */
    case 4:                                                /* OROUT */
        for (int j = 0; j < n - 1; ++j) least = fmin(least, y - u[j]);
        return fmin(least, inputs - y);
    case 5:                                                /* ANDOUT */
        for (int j = 0; j < n - 1; ++j) least = fmin(least, u[j] - y);
        return fmin(least, y - (inputs - (n - 2)));
    case 6: return fmin(least, (n - 1) - inputs + y - 1.0); /* IMPLY: some input off, or y */
    case 7: return fmin(least, 2.0 - sum);                 /* BUDGET 2 */
    case 8: return fmin(least, -fabs(sum - 2.0));          /* exact BUDGET 2 */
    default: return fmin(least, (1.0 - u[0]) + u[1] + (1.0 - u[2]) + u[3] - 1.0); /* OR */
    }
}

/* Adds the factor of polytope_slack's family over variables 0-3. */
static int add_gold_family(concord_graph *g, int family) {
    const concord_logic kinds[7] = {CONCORD_XOR,   CONCORD_ATMOSTONE, CONCORD_OR,
                                    CONCORD_XOROUT, CONCORD_OROUT,    CONCORD_ANDOUT,
                                    CONCORD_IMPLY};
    const int32_t vars[4] = {0, 1, 2, 3};
    const bool negated[4] = {true, false, true, false};
    if (family < 7) return concord_add_logic(g, kinds[family], 4, vars, NULL, NULL);
    if (family < 9) return concord_add_budget(g, 4, vars, NULL, 2.0, family == 8, NULL);
    return concord_add_logic(g, CONCORD_OR, 4, vars, negated, NULL);
}

/* A fractional gold is refused exactly when it lies outside a factor's
 * polytope (by projection, for the logic families and BUDGET); golds
 * inside are mixtures of the factor's configurations, golds outside are
 * uniform points at least 1e-3 outside. A float32 rounding of an inside
 * gold is taken. */
static void fractional_golds_are_judged_by_the_factor_polytope(void **state) {
    (void)state;
    test_rng rng = {23};
    int inside = 0, outside = 0;
    for (int family = 0; family < GOLD_FAMILIES; ++family) {
        concord_graph *g = concord_graph_new();
        double theta[4];
        for (int j = 0; j < 4; ++j) theta[j] = 4.0 * rng_uniform(&rng) - 2.0;
        assert_int_equal(concord_add_variables(g, 4, theta, NULL), CONCORD_OK);
        assert_int_equal(add_gold_family(g, family), CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        double allowed[16][4];
        int n_allowed = 0;
        for (int c = 0; c < 16; ++c) {
            double u[4];
            for (int j = 0; j < 4; ++j) u[j] = (c >> j) & 1;
            if (polytope_slack(family, u) >= 0.0) memcpy(allowed[n_allowed++], u, sizeof u);
        }
        for (int trial = 0; trial < 200; ++trial) {
            double gold[4] = {0.0, 0.0, 0.0, 0.0}, loss;
            bool expect_inside = trial % 2 == 0;
            if (expect_inside) {
                double total = 0.0, w[16];
                for (int c = 0; c < n_allowed; ++c) total += w[c] = rng_uniform(&rng);
                for (int c = 0; c < n_allowed; ++c)
                    for (int j = 0; j < 4; ++j) gold[j] += w[c] / total * allowed[c][j];
                if (trial % 4 == 0)
                    for (int j = 0; j < 4; ++j) gold[j] = (float)gold[j];
            } else {
                do {
                    for (int j = 0; j < 4; ++j) gold[j] = rng_uniform(&rng);
                } while (polytope_slack(family, gold) > -1e-3);
            }
            const int rc =
                concord_solver_loss_sparsemap(s, NULL, gold, NULL, &loss, NULL, NULL, NULL);
            if (expect_inside) {
                assert_int_equal(rc, CONCORD_OK);
                ++inside;
            } else {
                assert_int_equal(rc, CONCORD_EINVAL);
                assert_non_null(strstr(concord_solver_last_error(s), "lies outside"));
                ++outside;
            }
        }
        concord_solver_free(s);
        concord_graph_free(g);
    }
    assert_int_equal(inside, 100 * GOLD_FAMILIES);
    assert_int_equal(outside, 100 * GOLD_FAMILIES);
}

/* A KNAPSACK gold on its budget, given in float32: one item of cost 1 and
 * 100,000 of cost 0.003, every value float32(0.3), the budget their cost
 * at 0.3. The rounding (1.2e-8 per value, all one way) puts the gold 3.6e-6
 * over the budget, and the projection would move the first value by
 * 1.9e-6, beyond any slack that refuses golds outside the other families:
 * KNAPSACK is judged by the necessary test, and the gold is taken. */
static void a_float32_knapsack_gold_on_its_budget_is_taken(void **state) {
    (void)state;
    enum { ITEMS = 100001 };
    int32_t *vars = malloc(ITEMS * sizeof *vars);
    double *costs = malloc(ITEMS * sizeof *costs), *gold = malloc(ITEMS * sizeof *gold);
    double budget = 0.0;
    for (int32_t i = 0; i < ITEMS; ++i) {
        vars[i] = i;
        costs[i] = i == 0 ? 1.0 : 0.003;
        budget += costs[i] * 0.3;
        gold[i] = (float)0.3;
    }
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, ITEMS, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_knapsack(g, ITEMS, vars, NULL, costs, budget, NULL), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    double loss;
    assert_int_equal(concord_solver_loss_sparsemap(s, NULL, gold, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_OK);
    assert_true(loss >= 0.0);
    concord_solver_free(s);
    concord_graph_free(g);
    free(vars), free(costs), free(gold);
}

/* XOROUT, ANDOUT and IMPLY are solved as XOR, OROUT and OR over flipped
 * links; messages name the family given, at the builder and at a gold
 * structure the factor forbids. */
static void derived_logic_families_are_named_as_given(void **state) {
    (void)state;
    const concord_logic kinds[3] = {CONCORD_XOROUT, CONCORD_ANDOUT, CONCORD_IMPLY};
    const char *names[3] = {"XOROUT", "ANDOUT", "IMPLY"};
    /* inputs 0, 1 and output 2 (IMPLY: 0 and 1 imply 2) */
    const double forbidden_gold[3][3] = {{1.0, 0.0, 0.0}, {1.0, 1.0, 0.0}, {1.0, 1.0, 0.0}};
    for (int k = 0; k < 3; ++k) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, 3, NULL, NULL), CONCORD_OK);
        char expected[96];
        assert_int_equal(concord_add_logic(g, kinds[k], 3, (int32_t[]){0, 1, 0}, NULL, NULL),
                         CONCORD_EINVAL);
        snprintf(expected, sizeof expected, "%s factor: variable 0 appears more than once",
                 names[k]);
        assert_string_equal(concord_last_error(g), expected);
        assert_int_equal(concord_add_logic(g, kinds[k], 3, (int32_t[]){0, 1, 2}, NULL, NULL),
                         CONCORD_OK);
        concord_solver *s = new_solver_or_fail(g);
        double loss;
        assert_int_equal(concord_solver_loss_sparsemap(s, NULL, forbidden_gold[k], NULL, &loss,
                                                       NULL, NULL, NULL),
                         CONCORD_EINVAL);
        snprintf(expected, sizeof expected, "the gold structure violates factor 0 (%s)", names[k]);
        assert_string_equal(concord_solver_last_error(s), expected);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

/* A gold structure a factor does not allow is refused, naming the factor;
 * a fractional gold in a graph with additional outputs needs them given
 * (they are not computed from the factors, which would round it). */
static void a_gold_structure_a_factor_forbids_is_refused_by_name(void **state) {
    (void)state;
    concord_graph *g = logic_and_pair_graph(); /* XOR(0, 1, 2), OR(1, 2, 3), PAIR(0, 3) */
    concord_solver *s = new_solver_or_fail(g);
    const double two_on[4] = {1.0, 1.0, 0.0, 0.0}, none_on[4] = {0.0, 0.0, 0.0, 0.0};
    double loss;
    assert_int_equal(concord_solver_loss_sparsemap(s, NULL, two_on, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(concord_solver_last_error(s), "the gold structure violates factor 0 (XOR)");
    concord_graph *pair = concord_graph_new();
    assert_int_equal(concord_add_variables(pair, 2, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(pair, CONCORD_OR, 2, (int32_t[]){0, 1}, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_add_pair(pair, 0, 1, 0.5, NULL), CONCORD_OK);
    concord_solver *p = new_solver_or_fail(pair);
    assert_int_equal(concord_solver_loss_hinge(p, NULL, none_on, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(concord_solver_last_error(p), "the gold structure violates factor 0 (OR)");
    const double half[2] = {0.5, 0.5};
    assert_int_equal(concord_solver_loss_hinge(p, NULL, half, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(concord_solver_last_error(p),
                        "the gold structure is fractional (variable 0 is 0.5) in factor 1 "
                        "(PAIR), which has additional outputs: a fractional gold needs them "
                        "given (v_gold)");
    const double pair_v[1] = {0.25};
    assert_int_equal(concord_solver_loss_hinge(p, NULL, half, pair_v, &loss, NULL, NULL, NULL),
                     CONCORD_OK);
    concord_solver_free(p);
    concord_graph_free(pair);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A fractional gold without v_gold: in a graph without additional outputs
 * there are none to find, so it is a mixture like any other (here of the
 * XOR's configurations (1, 0, 0) and (0, 1, 0), the losses checked against
 * their definitions worked by hand); in a graph with some it is refused,
 * not scored with the additional outputs of the gold rounded (a PAIR's 0
 * at (0.5, 0.5), which counted v* = 0 where the best is 0.5). */
static void a_fractional_gold_without_v_gold_is_a_mixture_or_refused(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    const double theta[3] = {0.0, 1.0, 2.0}, half[3] = {0.5, 0.5, 0.0};
    assert_int_equal(concord_add_variables(g, 3, theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, (int32_t[]){0, 1, 2}, NULL, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    double loss, dtheta[3];
    /* sparsemax(0, 1, 2) = (0, 0, 1): F = 2 - 1/2, the gold scores 1/2 - 1/4 */
    assert_int_equal(concord_solver_loss_sparsemap(s, NULL, half, NULL, &loss, dtheta, NULL, NULL),
                     CONCORD_OK);
    assert_true(fabs(loss - 1.25) < 1e-12);
    assert_true(fabs(dtheta[0] + 0.5) < 1e-12 && fabs(dtheta[1] + 0.5) < 1e-12 &&
                fabs(dtheta[2] - 1.0) < 1e-12);
    /* augmented scores theta + 1 - 2 u* = (0, 1, 3): u = (0, 0, 1), and the
     * loss is theta.(u - u*) + (u - u*).(1 - 2 u*) = 1.5 + 1 */
    assert_int_equal(concord_solver_loss_hinge(s, NULL, half, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_OK);
    assert_true(fabs(loss - 2.5) < 1e-12);
    concord_graph *pair = concord_graph_new();
    const double pair_theta[2] = {0.3, -0.2};
    assert_int_equal(concord_add_variables(pair, 2, pair_theta, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(pair, 0, 1, 1.0, NULL), CONCORD_OK);
    concord_solver *p = new_solver_or_fail(pair);
    assert_int_equal(concord_solver_loss_sparsemap(p, NULL, half, NULL, &loss, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_string_equal(concord_solver_last_error(p),
                        "the gold structure is fractional (variable 0 is 0.5) in factor 0 "
                        "(PAIR), which has additional outputs: a fractional gold needs them "
                        "given (v_gold)");
    concord_solver_free(p);
    concord_graph_free(pair);
    /* fractional only on a variable in no factor (2), the PAIR's outputs
     * are its best at (1, 1): v* = 1. At scores 0 and a PAIR score of 1,
     * F = max v - |u|^2/2 = 1/4 (u0 = u1 = v = 1/2, u2 = 0) and the gold
     * scores 1 - (1 + 1 + 1/4)/2 = -1/8: the loss is 3/8 */
    concord_graph *apart = concord_graph_new();
    assert_int_equal(concord_add_variables(apart, 3, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(apart, 0, 1, 1.0, NULL), CONCORD_OK);
    concord_solver *a = new_solver_or_fail(apart);
    concord_settings tight;
    concord_default_settings(&tight);
    tight.tol = 1e-10;
    assert_int_equal(concord_solver_loss_sparsemap(a, &tight, (double[]){1.0, 1.0, 0.5}, NULL,
                                                   &loss, NULL, NULL, NULL),
                     CONCORD_OK);
    assert_true(fabs(loss - 0.375) < 1e-6);
    concord_solver_free(a);
    concord_graph_free(apart);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A fractional gold far outside a factor is refused before any solve,
 * though its losses are not negative: under XOR(x0, x1, x2) at scores 0,
 * (0.9, 0.9, 0.9) would score 1.05 (sparsemap: sparsemax(0) = 1/3 each,
 * F = -1/6, the gold -1.215) and 1.36; a mixture of (1, 0, 0), (0, 1, 0)
 * and (0, 0, 1) is taken, and so is a gold given with v_gold inside a
 * PAIR (which only the necessary test, |(u*, v*)|^2 against the MAP at
 * the gold, judges); one outside the PAIR that passes that test is
 * refused by its negative loss. The references are the polytopes'
 * definitions (XOR's points sum to 1, a PAIR's v is at most min(u)). */
static void a_fractional_gold_outside_a_factor_is_refused(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 3, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, 3, (int32_t[]){0, 1, 2}, NULL, NULL),
                     CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    const double outside[3] = {0.9, 0.9, 0.9}, third[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    double loss = -1.0;
    for (int hinge = 0; hinge <= 1; ++hinge) {
        int (*loss_fn)(concord_solver *, const concord_settings *, const double *,
                       const double *, double *, double *, double *, concord_info *) =
            hinge ? concord_solver_loss_hinge : concord_solver_loss_sparsemap;
        assert_int_equal(loss_fn(s, NULL, outside, NULL, &loss, NULL, NULL, NULL),
                         CONCORD_EINVAL);
        assert_non_null(strstr(concord_solver_last_error(s),
                               "the gold structure lies outside factor 0 (XOR)"));
        assert_int_equal(loss_fn(s, NULL, third, NULL, &loss, NULL, NULL, NULL), CONCORD_OK);
        /* at scores 0 the gold is sparsemax's own solution (loss 0), and
         * the hinge's sum (u - u*).(1 - 2 u*) is 1/3 (sum u - 1) = 0 at
         * any vertex u */
        assert_true(fabs(loss) < 1e-9);
    }
    concord_graph *pair = concord_graph_new();
    assert_int_equal(concord_add_variables(pair, 2, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(pair, 0, 1, 1.0, NULL), CONCORD_OK);
    concord_solver *p = new_solver_or_fail(pair);
    /* (0.5, 0.5, v = 0.25): the mixture of all four configurations */
    assert_int_equal(concord_solver_loss_sparsemap(p, NULL, (double[]){0.5, 0.5},
                                                   (double[]){0.25}, &loss, NULL, NULL, NULL),
                     CONCORD_OK);
    /* v = 0.9 > min(u) is outside the PAIR but passes its test (1.31
     * against 1.9 at (1, 1, 1)); the loss's sign refuses it: the maximum
     * of v - |u|^2/2 is 0.25 (u = (0.5, 0.5), v = 0.5), the gold scores
     * 0.9 - 0.25 */
    assert_int_equal(concord_solver_loss_sparsemap(p, NULL, (double[]){0.5, 0.5},
                                                   (double[]){0.9}, &loss, NULL, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_solver_last_error(p),
                           "outside the local polytope (its loss would be -0.4 < 0)"));
    concord_solver_free(p);
    concord_graph_free(pair);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* Three SEQUENCEs over the same 8 variables and a HEAD_AUTOMATON: the
 * LP-SparseMAP solution has u_2 = 1 at a vertex, so the faces project a
 * gradient on u_2 to rounding, and the derivative of u_2 is 0. CG measured
 * its residual against that rounding, broke down on it and returned
 * entries of 2 with a residual of 3e15; the products must equal central
 * finite differences of the forward pass. */
static void backward_gives_the_derivative_where_the_faces_leave_rounding(void **state) {
    (void)state;
    const double theta[8] = {-1, 0, 2, -1, 1, -1, 0, 0};
    const int32_t states[4] = {2, 2, 2, 2}, vars[8] = {0, 1, 2, 3, 4, 5, 6, 7},
                  modifiers[4] = {3, 0, 4, 1};
    const double automaton[15] = {0};
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 8, theta, NULL), CONCORD_OK);
    for (int k = 0; k < 3; ++k)
        assert_int_equal(concord_add_sequence(g, 4, states, vars, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_head_automaton(g, 4, modifiers, automaton, NULL), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g), *probe = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-12;
    assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
    assert_true(fabs(concord_solver_variables(s)[2] - 1.0) < 1e-9);
    double du[8] = {0, 0, 1, 0, 0, 0, 0, 0}, dtheta[8];
    concord_backward_info info;
    assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, NULL, &info), CONCORD_OK);
    assert_true(info.converged);
    const double h = 1e-6;
    for (int k = 0; k < 8; ++k) {
        double shifted[8], plus, minus;
        memcpy(shifted, theta, sizeof shifted);
        shifted[k] += h;
        assert_int_equal(concord_solver_set_scores(probe, shifted, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(probe, &st, NULL), CONCORD_OK);
        plus = concord_solver_variables(probe)[2];
        shifted[k] -= 2 * h;
        assert_int_equal(concord_solver_set_scores(probe, shifted, NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(probe, &st, NULL), CONCORD_OK);
        minus = concord_solver_variables(probe)[2];
        assert_true(fabs(dtheta[k] - (plus - minus) / (2 * h)) < 1e-6);
    }
    concord_solver_free(s);
    concord_solver_free(probe);
    concord_graph_free(g);
}

/* The backward pass is linear in (du, dv): at du = s e_0 (and at dv = s),
 * for s from 1e-300 to 1e308, it must give s times the derivatives that
 * central finite differences of the forward pass give (du_0 . u = u_0, so
 * dtheta_i = du_0/dtheta_i; dv . v = v, so dtheta_i = dv/dtheta_i and
 * dphi = dv/dphi), with the pass converged. Squared norms of the gradient
 * once overflowed above ~1e154 (zeros, "converged", residual NaN) and
 * underflowed below ~1e-160 (zeros). */
static void backward_is_linear_in_the_gradient_at_any_magnitude(void **state) {
    (void)state;
    concord_graph *g = logic_and_pair_graph();
    concord_solver *s = new_solver_or_fail(g);
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-12;
    st.backward_tol = 1e-12;
    const double h = 1e-6;
    double theta[4], phi = 0.7, du_ref[4], dv_ref[4], dphi_ref, base[5], plus[5], minus[5];
    memcpy(theta, concord_variable_scores(g), sizeof theta);
    assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
    memcpy(base, concord_solver_variables(s), 4 * sizeof(double));
    base[4] = concord_solver_additionals(s)[0];
    /* column k of the derivatives: k < 4 moves theta_k, k = 4 moves phi */
    for (int k = 0; k <= 4; ++k) {
        double shifted[4], shifted_phi;
        for (int sign = -1; sign <= 1; sign += 2) {
            memcpy(shifted, theta, sizeof shifted);
            shifted_phi = phi;
            if (k < 4) shifted[k] += sign * h;
            else shifted_phi += sign * h;
            assert_int_equal(concord_solver_set_scores(s, shifted, &shifted_phi), CONCORD_OK);
            assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
            double *out = sign > 0 ? plus : minus;
            memcpy(out, concord_solver_variables(s), 4 * sizeof(double));
            out[4] = concord_solver_additionals(s)[0];
        }
        /* away from the pieces' boundaries the solution is affine in h */
        for (int j = 0; j <= 4; ++j)
            assert_true(fabs((plus[j] - base[j]) - (base[j] - minus[j])) <= 1e-9);
        if (k < 4) {
            du_ref[k] = (plus[0] - minus[0]) / (2 * h);
            dv_ref[k] = (plus[4] - minus[4]) / (2 * h);
        } else {
            dphi_ref = (plus[4] - minus[4]) / (2 * h);
        }
    }
    assert_true(fabs(du_ref[0]) > 0.1 && fabs(dphi_ref) > 0.1); /* not a trivial check */
    assert_int_equal(concord_solver_set_scores(s, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_solver_sparse(s, &st, NULL), CONCORD_OK);
    const double scales[] = {1.0, 1e154, 1e155, 1e200, 1e300, 1e308, 3.0e-150, 1e-160, 1e-200,
                             1e-300};
    for (size_t c = 0; c < sizeof scales / sizeof scales[0]; ++c) {
        const double sc = scales[c];
        double du[4] = {sc, 0, 0, 0}, zero[4] = {0}, dv[1] = {sc}, dtheta[4], dphi[1];
        concord_backward_info info;
        assert_int_equal(concord_solver_backward(s, &st, du, NULL, dtheta, dphi, &info),
                         CONCORD_OK);
        assert_true(info.converged && isfinite(info.residual));
        for (int i = 0; i < 4; ++i) assert_true(fabs(dtheta[i] / sc - du_ref[i]) <= 1e-6);
        assert_int_equal(concord_solver_backward(s, &st, zero, dv, dtheta, dphi, &info),
                         CONCORD_OK);
        assert_true(info.converged && isfinite(info.residual));
        for (int i = 0; i < 4; ++i) assert_true(fabs(dtheta[i] / sc - dv_ref[i]) <= 1e-6);
        assert_true(fabs(dphi[0] / sc - dphi_ref) <= 1e-6);
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

/* A gradient with a NaN or an infinity has no product: CONCORD_EINVAL,
 * with a message naming the entry, for du and for dv. */
/* PAIR(x0, x1) scored 1.25, variables at 0: the solution u0 = u1 = v = t
 * maximizes (a0 + a1 + b) t - t^2, t = (a0 + a1 + b) / 2 = 0.625, so every
 * product is (du0 + du1 + dv) / 2: 0.75 DBL_MAX for du = dv = DBL_MAX / 2,
 * and beyond DBL_MAX, +inf, for du = dv = DBL_MAX. */
static void backward_products_beyond_the_largest_double_are_infinite(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t f;
    assert_int_equal(concord_add_variables(g, 2, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_pair(g, 0, 1, 1.25, &f), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    assert_true(fabs(concord_solver_variables(s)[0] - 0.625) <= 1e-9);
    const double halves[2] = {0.5, 1.0};
    for (int k = 0; k < 2; ++k) {
        const double m = DBL_MAX * halves[k];
        double du[2] = {m, m}, dv[1] = {m}, dtheta[2], dphi[1];
        assert_int_equal(concord_solver_backward(s, NULL, du, dv, dtheta, dphi, NULL),
                         CONCORD_OK);
        for (int j = 0; j < 3; ++j) {
            const double product = j < 2 ? dtheta[j] : dphi[0];
            if (k == 0) assert_true(fabs(product / DBL_MAX - 0.75) <= 1e-9);
            else assert_true(product == INFINITY);
        }
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

static void backward_refuses_a_gradient_that_is_not_finite(void **state) {
    (void)state;
    concord_graph *g = logic_and_pair_graph();
    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; ++c) {
        double du[4] = {0.5, bad[c], 0, 0}, ok[4] = {1, 0, 0, 0}, dv[1] = {bad[c]}, dtheta[4];
        assert_int_equal(concord_solver_backward(s, NULL, du, NULL, dtheta, NULL, NULL),
                         CONCORD_EINVAL);
        assert_non_null(strstr(concord_solver_last_error(s), "du[1]"));
        assert_non_null(strstr(concord_solver_last_error(s), "finite"));
        assert_int_equal(concord_solver_backward(s, NULL, ok, dv, dtheta, NULL, NULL),
                         CONCORD_EINVAL);
        assert_non_null(strstr(concord_solver_last_error(s), "dv[0]"));
    }
    concord_solver_free(s);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_batch_equals_sequential_solves_and_leaves_the_graph_untouched),
        cmocka_unit_test(a_batch_refuses_a_solver_listed_twice),
        cmocka_unit_test(distributions_mix_to_the_factors_solutions),
        cmocka_unit_test(solver_scores_are_their_own),
        cmocka_unit_test(a_solver_refuses_a_graph_whose_structure_changed),
        cmocka_unit_test(regularization_weights_are_checked_and_belong_to_the_structure),
        cmocka_unit_test(regularization_weights_change_the_objective_as_documented),
        cmocka_unit_test(copies_weighing_half_count_once),
        cmocka_unit_test(tiny_weights_stop_at_the_tolerance),
        cmocka_unit_test(huge_scores_are_measured_against_the_weights),
        cmocka_unit_test(a_graph_whose_factors_score_nothing_is_bounded_by_its_free_variables),
        cmocka_unit_test(a_warm_start_after_a_small_change_is_faster),
        cmocka_unit_test(warm_starts_follow_a_change_of_the_score_scale),
        cmocka_unit_test(user_factors_solve_as_the_builtins_they_reimplement),
        cmocka_unit_test(backward_through_user_factors_equals_finite_differences),
        cmocka_unit_test(callbacks_cannot_call_their_solver_nor_change_the_graph),
        cmocka_unit_test(oracles_on_threads_cannot_change_the_graph),
        cmocka_unit_test(a_solver_in_a_batch_refuses_calls_from_outside_it),
        cmocka_unit_test(a_callbacks_refusal_survives_a_nested_solve),
        cmocka_unit_test(a_batch_refuses_a_solver_in_a_call),
        cmocka_unit_test(one_solver_from_two_threads_refuses_what_overlaps),
        cmocka_unit_test(a_gold_structure_a_factor_forbids_is_refused_by_name),
        cmocka_unit_test(derived_logic_families_are_named_as_given),
        cmocka_unit_test(fractional_golds_are_judged_by_the_factor_polytope),
        cmocka_unit_test(a_float32_knapsack_gold_on_its_budget_is_taken),
        cmocka_unit_test(a_fractional_gold_without_v_gold_is_a_mixture_or_refused),
        cmocka_unit_test(a_fractional_gold_outside_a_factor_is_refused),
        cmocka_unit_test(a_failing_oracle_ends_the_solve_with_its_error),
        cmocka_unit_test(an_oracle_failing_before_the_iterations_fails_the_solve),
        cmocka_unit_test(a_variable_in_no_factor_does_not_hide_infeasibility),
        cmocka_unit_test(an_infeasible_graph_at_huge_scores_is_called_infeasible),
        cmocka_unit_test(an_empty_local_polytope_is_proven_beside_a_variable_in_no_factor),
        cmocka_unit_test(each_solver_keeps_its_own_callback_code),
        cmocka_unit_test(user_factor_arguments_are_checked),
        cmocka_unit_test(a_qp_callback_gives_the_oracles_solution),
        cmocka_unit_test(a_failing_qp_callback_ends_the_solve_with_its_error),
        cmocka_unit_test(a_factor_allows_its_configurations_beside_large_additional_scores),
        cmocka_unit_test(a_qp_callback_writes_the_additional_outputs),
        cmocka_unit_test(a_user_factors_additional_outputs_may_be_real),
        cmocka_unit_test(a_factor_alone_uncertified_gives_the_point_it_reached),
        cmocka_unit_test(a_user_factors_additional_outputs_stay_within_one),
        cmocka_unit_test(the_progress_callback_reports_and_can_interrupt),
        cmocka_unit_test(the_first_penalty_check_corrects_a_far_off_guess),
        cmocka_unit_test(a_solve_stops_at_the_time_limit),
        cmocka_unit_test(decoded_additionals_are_the_pairs_products_and_make_the_value),
        cmocka_unit_test(a_separable_solve_stops_at_the_time_limit_with_a_feasible_point),
        cmocka_unit_test(a_separable_solve_reports_progress_and_can_be_stopped),
        cmocka_unit_test(a_stopped_separable_solve_has_no_distribution_or_backward_past_where_it_stopped),
        cmocka_unit_test(a_stopped_separable_lp_map_solve_has_the_vertex_as_distribution),
        cmocka_unit_test(backward_refuses_a_stale_or_missing_forward_pass),
        cmocka_unit_test(backward_reports_its_iteration_cap),
        cmocka_unit_test(backward_reports_an_unconverged_forward_pass),
        cmocka_unit_test(backward_is_linear_in_the_gradient_at_any_magnitude),
        cmocka_unit_test(backward_gives_the_derivative_where_the_faces_leave_rounding),
        cmocka_unit_test(backward_products_beyond_the_largest_double_are_infinite),
        cmocka_unit_test(backward_refuses_a_gradient_that_is_not_finite),
        cmocka_unit_test(dual_and_acyclic_solves_count_every_oracle_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
