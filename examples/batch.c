/*
 * A training batch with the solver API: one graph (the structure), one
 * solver per example (its scores, its solution), all solved at once on
 * threads, then the backward pass of each.
 *
 * The structure is a word alignment between two 6-word sentences as an
 * LP-matching: each source word aligns to exactly one target word (XOR per
 * row) and each target word to at most one source word (ATMOSTONE per
 * column). Each of the 8 examples of the batch has its own scores (made up
 * here from a hidden alignment plus noise). LP-SparseMAP gives each a
 * sparse, differentiable alignment; the backward pass gives the gradient
 * of a loss through it, as a neural aligner would use it.
 *
 * The program checks itself: the batch on 4 threads must equal the same
 * solves run one by one, bit for bit. It exits 1 otherwise.
 *
 * Build against an installed concord:
 *   cc batch.c $(pkg-config --cflags --libs concord) -o batch
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "concord.h"

enum { N = 6, EXAMPLES = 8 };

static void fail(const char *what, const char *message) {
    fprintf(stderr, "%s: %s\n", what, message);
    exit(1);
}

/* The structure: N x N alignment variables, row-major, and the rows' and
 * columns' constraints. Its scores are left at zero: every solver gets
 * its own. */
static concord_graph *alignment_structure(void) {
    concord_graph *g = concord_graph_new();
    if (!g) fail("graph", "out of memory");
    int32_t vars[N];
    int rc = concord_add_variables(g, N * N, NULL, NULL);
    for (int i = 0; i < N && rc == CONCORD_OK; ++i) {
        for (int j = 0; j < N; ++j) vars[j] = i * N + j;
        rc = concord_add_logic(g, CONCORD_XOR, N, vars, NULL, NULL);
    }
    for (int j = 0; j < N && rc == CONCORD_OK; ++j) {
        for (int i = 0; i < N; ++i) vars[i] = i * N + j;
        rc = concord_add_logic(g, CONCORD_ATMOSTONE, N, vars, NULL, NULL);
    }
    if (rc != CONCORD_OK) fail("structure", concord_last_error(g));
    return g;
}

/* Example k's scores: its hidden alignment (a shifted diagonal) scores
 * 1, everything else noise in [-0.8, 0.8]. */
static void example_scores(int k, double *scores) {
    unsigned seed = 17u * (unsigned)k + 1u;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            seed = seed * 1103515245u + 12345u;
            double noise = 1.6 * ((seed >> 8) % 1000) / 1000.0 - 0.8;
            scores[i * N + j] = (j == (i + k) % N ? 1.0 : 0.0) + noise;
        }
}

/* An N x N matrix, two decimals (a value that rounds to 0 shows as 0.00,
 * not -0.00). */
static void print_alignment(const double *u) {
    for (int i = 0; i < N; ++i) {
        printf("    ");
        for (int j = 0; j < N; ++j) {
            const double x = u[i * N + j];
            printf(" %5.2f", x > -0.005 && x < 0.005 ? 0.0 : x);
        }
        printf("\n");
    }
}

int main(void) {
    concord_graph *g = alignment_structure();
    concord_solver *batch[EXAMPLES], *one_by_one[EXAMPLES];
    double scores[N * N];
    for (int k = 0; k < EXAMPLES; ++k) {
        if (concord_solver_new(g, &batch[k]) != CONCORD_OK ||
            concord_solver_new(g, &one_by_one[k]) != CONCORD_OK)
            fail("solver", "out of memory");
        example_scores(k, scores);
        if (concord_solver_set_scores(batch[k], scores, NULL) != CONCORD_OK ||
            concord_solver_set_scores(one_by_one[k], scores, NULL) != CONCORD_OK)
            fail("scores", concord_solver_last_error(batch[k]));
    }

    /* The batch, on 4 threads. */
    concord_info info[EXAMPLES];
    int rc = concord_solve_batch(batch, EXAMPLES, CONCORD_ALGORITHM_SPARSE, NULL, info, 4);
    if (rc != CONCORD_OK) fail("batch", concord_strerror(rc));
    printf("%d alignments solved by LP-SparseMAP on 4 threads:\n", EXAMPLES);
    for (int k = 0; k < EXAMPLES; ++k)
        printf("  example %d: %-10s %3d iterations, objective %.4f\n", k,
               concord_status_name(info[k].status), info[k].iterations, info[k].value);
    printf("  example 0's alignment (row: source word, column: target word):\n");
    print_alignment(concord_solver_variables(batch[0]));

    /* The same solves one by one give the same bits. */
    int same = 1;
    for (int k = 0; k < EXAMPLES; ++k) {
        if (concord_solver_sparse(one_by_one[k], NULL, NULL) != CONCORD_OK)
            fail("solve", concord_solver_last_error(one_by_one[k]));
        same &= memcmp(concord_solver_variables(batch[k]),
                       concord_solver_variables(one_by_one[k]), sizeof scores) == 0;
    }
    printf("  batch equals the sequential solves bit for bit: %s\n", same ? "yes" : "NO");

    /* Backward: the gradient of L = u[0][0] with respect to the scores. */
    double du[N * N] = {1.0}, dtheta[N * N];
    if (concord_solver_backward(batch[0], NULL, du, NULL, dtheta, NULL, NULL) != CONCORD_OK)
        fail("backward", concord_solver_last_error(batch[0]));
    printf("  d u[0][0] / d scores of example 0:\n");
    print_alignment(dtheta);

    for (int k = 0; k < EXAMPLES; ++k) {
        concord_solver_free(batch[k]);
        concord_solver_free(one_by_one[k]);
    }
    concord_graph_free(g);
    return same ? 0 : 1;
}
