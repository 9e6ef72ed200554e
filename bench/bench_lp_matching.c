/*
 * The C side of bench/python_overhead.py: builds and solves one n x n
 * LP-matching (an XOR per row, an ATMOSTONE per column) from scratch, over
 * and over, and prints the median CPU time of one cycle for each algorithm:
 * graph, variables with their scores, 2n factors, solver, solve, a copy of
 * the solution, free. The scores come on stdin ("n repetitions" then n*n
 * numbers, row-major), so that the Python benchmark times the same problem.
 *
 *   build/bench_lp_matching < input    prints "sparse <us>" and "map <us>"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "concord.h"

static void fail(const char *what) {
    fprintf(stderr, "bench_lp_matching: %s\n", what);
    exit(1);
}

/* One cycle; the solution goes to u (n*n values). */
static void cycle(int n, const double *scores, int sparse, double *u) {
    concord_graph *g = concord_graph_new();
    if (!g || concord_add_variables(g, n * n, scores, NULL) != CONCORD_OK) fail("variables");
    int32_t vars[4096];
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) vars[j] = i * n + j;
        if (concord_add_logic(g, CONCORD_XOR, n, vars, NULL, NULL) != CONCORD_OK) fail("xor");
    }
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) vars[i] = i * n + j;
        if (concord_add_logic(g, CONCORD_ATMOSTONE, n, vars, NULL, NULL) != CONCORD_OK)
            fail("atmostone");
    }
    concord_solver *s;
    if (concord_solver_new(g, &s) != CONCORD_OK) fail("solver");
    concord_info info;
    int rc = sparse ? concord_solver_sparse(s, NULL, &info) : concord_solver_map(s, NULL, &info);
    if (rc != CONCORD_OK) fail(concord_solver_last_error(s));
    memcpy(u, concord_solver_variables(s), (size_t)(n * n) * sizeof(double));
    concord_solver_free(s);
    concord_graph_free(g);
}

int main(void) {
    int n, reps;
    if (scanf("%d %d", &n, &reps) != 2 || n < 1 || n > 64 || reps < 1) fail("bad header");
    double *scores = malloc((size_t)(n * n) * sizeof(double));
    double *u = malloc((size_t)(n * n) * sizeof(double));
    double *times = malloc((size_t)reps * sizeof(double));
    if (!scores || !u || !times) fail("out of memory");
    for (int k = 0; k < n * n; ++k)
        if (scanf("%lf", &scores[k]) != 1) fail("missing scores");
    for (int sparse = 1; sparse >= 0; --sparse) {
        for (int r = 0; r < reps; ++r) {
            double t = bench_now();
            cycle(n, scores, sparse, u);
            times[r] = bench_now() - t;
        }
        printf("%s %.2f\n", sparse ? "sparse" : "map", 1e6 * bench_median(times, reps));
    }
    free(scores);
    free(u);
    free(times);
    return 0;
}
