/*
 * Word alignment as a bipartite matching, solved two ways with concord:
 *
 *   1. one MATCHING factor over the source x target grid (every source
 *      word aligned to exactly one target word, each target word used at
 *      most once): AD3 calls its Hungarian MAP oracle through the active
 *      set;
 *   2. the same constraints as an LP relaxation of small factors, one XOR
 *      per source word and one ATMOSTONE per target word, which AD3 must
 *      make agree by message passing.
 *
 * Both describe the same polytope (the constraint matrix of a bipartite
 * matching is totally unimodular, so its LP is integral): they must find
 * the same alignment and score, and the comparison shows what the
 * structured factor buys in iterations and time. The first problem is a
 * four-word sentence pair; the second a synthetic 40 x 40 one.
 *
 * Build: part of the CMake build (example_alignment).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "concord.h"

static void check(concord_graph *g, int rc, const char *what) {
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) {
        fprintf(stderr, "%s: %s (%s)\n", what, concord_strerror(rc), concord_last_error(g));
        exit(1);
    }
}

/* The grid's variables are 0 .. rows*cols-1, row-major: (i, j) = source
 * word i aligned to target word j. */
static concord_graph *new_grid(int rows, int cols, const double *scores) {
    concord_graph *g = concord_graph_new();
    check(g, concord_add_variables(g, rows * cols, scores, NULL), "variables");
    return g;
}

static concord_graph *with_matching(int rows, int cols, const double *scores) {
    concord_graph *g = new_grid(rows, cols, scores);
    int32_t *vars = malloc((size_t)(rows * cols) * sizeof *vars);
    for (int k = 0; k < rows * cols; ++k) vars[k] = k;
    check(g, concord_add_matching(g, rows, cols, vars, CONCORD_MATCHING_EVERY_ROW, NULL),
          "matching");
    free(vars);
    return g;
}

static concord_graph *with_xor_atmostone(int rows, int cols, const double *scores) {
    concord_graph *g = new_grid(rows, cols, scores);
    int32_t *vars = malloc((size_t)(rows > cols ? rows : cols) * sizeof *vars);
    for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < cols; ++j) vars[j] = i * cols + j;
        check(g, concord_add_logic(g, CONCORD_XOR, cols, vars, NULL, NULL), "xor");
    }
    for (int j = 0; j < cols; ++j) {
        for (int i = 0; i < rows; ++i) vars[i] = i * cols + j;
        check(g, concord_add_logic(g, CONCORD_ATMOSTONE, rows, vars, NULL, NULL), "atmostone");
    }
    free(vars);
    return g;
}

/* Solves and reports; returns the solver, which holds the solution (free
 * it with concord_solver_free). */
static concord_solver *solve(const concord_graph *g, const char *label) {
    concord_solver *solver;
    if (concord_solver_new(g, &solver) != CONCORD_OK) {
        fprintf(stderr, "%s: out of memory\n", label);
        exit(1);
    }
    concord_info info;
    int rc = concord_solver_map(solver, NULL, &info);
    if (rc != CONCORD_OK) {
        fprintf(stderr, "%s: %s\n", label, concord_solver_last_error(solver));
        exit(1);
    }
    printf("  %-28s %-10s %6d iterations %7.2f ms  score %.4f  bound %.4f\n", label,
           concord_status_name(info.status), info.iterations, 1e3 * info.seconds, info.value,
           info.upper_bound);
    return solver;
}

static int same_alignment(const double *x, const double *y, int n) {
    for (int k = 0; k < n; ++k)
        if (fabs(x[k] - y[k]) > 1e-6) return 0;
    return 1;
}

/* Returns whether both formulations found the same alignment. */
static int sentence_pair(void) {
    static const char *const source[] = {"the", "black", "cat", "sleeps"};
    static const char *const target[] = {"le", "chat", "noir", "dort"};
    /* similarity of source word i and target word j (a lexicon's log odds) */
    static const double scores[16] = {
        2.00,  -0.98, -0.93, -0.99, /* the */
        -0.95, 1.20,  2.50,  -0.95, /* black */
        -1.00, 3.00,  0.90,  -0.99, /* cat */
        -0.96, -0.92, -0.99, 2.80,  /* sleeps */
    };
    printf("the black cat sleeps / le chat noir dort\n");
    concord_graph *a = with_matching(4, 4, scores);
    concord_graph *b = with_xor_atmostone(4, 4, scores);
    concord_solver *sa = solve(a, "MATCHING"), *sb = solve(b, "XOR rows + ATMOSTONE cols");
    const double *x = concord_solver_variables(sa), *y = concord_solver_variables(sb);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
            if (x[i * 4 + j] > 0.5) printf("    %-7s -> %s\n", source[i], target[j]);
    int same = same_alignment(x, y, 16);
    printf("  same alignment: %s\n\n", same ? "yes" : "NO");
    concord_solver_free(sa);
    concord_solver_free(sb);
    concord_graph_free(a);
    concord_graph_free(b);
    return same;
}

/* A synthetic pair of 40-word sentences: a hidden permutation (a mostly
 * monotone alignment with local swaps) scores high, everything else is
 * noise, strong enough that the best alignment is not obvious. */
static int synthetic(int n) {
    double *scores = malloc((size_t)(n * n) * sizeof *scores);
    int *perm = malloc((size_t)n * sizeof *perm);
    uint64_t state = 7;
    for (int i = 0; i < n; ++i) perm[i] = i;
    for (int i = 0; i + 1 < n; i += 3) { /* swap neighbours now and then */
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if ((state >> 33) % 2) {
            int t = perm[i];
            perm[i] = perm[i + 1], perm[i + 1] = t;
        }
    }
    for (int k = 0; k < n * n; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        scores[k] = 2.0 * ((double)(state >> 11) / 9007199254740992.0) - 1.5;
    }
    for (int i = 0; i < n; ++i) scores[i * n + perm[i]] += 1.5;
    printf("synthetic %d x %d alignment\n", n, n);
    concord_graph *a = with_matching(n, n, scores);
    concord_graph *b = with_xor_atmostone(n, n, scores);
    concord_solver *sa = solve(a, "MATCHING"), *sb = solve(b, "XOR rows + ATMOSTONE cols");
    const double *x = concord_solver_variables(sa), *y = concord_solver_variables(sb);
    int recovered = 0;
    for (int i = 0; i < n; ++i) recovered += x[i * n + perm[i]] > 0.5;
    printf("  hidden alignment links recovered: %d of %d\n", recovered, n);
    int same = same_alignment(x, y, n * n);
    printf("  same alignment: %s\n", same ? "yes" : "NO");
    concord_solver_free(sa);
    concord_solver_free(sb);
    concord_graph_free(a);
    concord_graph_free(b);
    free(scores);
    free(perm);
    return same;
}

int main(void) {
    int same = sentence_pair();
    same &= synthetic(40);
    return same ? 0 : 1; /* the two formulations must agree */
}
