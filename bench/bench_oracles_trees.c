/*
 * MAP oracle throughput of the structured factors: calls per second of the
 * TREE oracle (non-projective by Chu-Liu-Edmonds/Tarjan, multi- and
 * single-root; projective by Eisner) on a 40-node sentence with every arc,
 * and of the MATCHING oracle (Hungarian) on a 20 x 20 grid. Each figure is
 * the median of several timed runs over a pool of random score vectors,
 * timed in process CPU time (the machines this runs on are shared, and
 * wall time then mostly measures the neighbours). It prints figures only;
 * time is never asserted on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "concord.h"
#include "graph.h"

enum { POOL = 16, RUNS = 7 };

/* Median over RUNS of calls per second of f's oracle; each run makes
 * enough calls to last about 0.1 s. */
static double oracle_rate(const factor *f) {
    const int32_t n = f->degree;
    double *a = malloc((size_t)POOL * (size_t)n * sizeof *a);
    double *u = malloc((size_t)n * sizeof *u), v[1], b[1] = {0.0};
    void *scratch = malloc(factor_scratch_bytes(f));
    if (!a || !u || !scratch) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t k = 0; k < (size_t)POOL * (size_t)n; ++k) a[k] = 4.0 * bench_uniform() - 2.0;
    double sink = 0.0;
    long calls = 1;
    for (;;) { /* calibrate */
        double t0 = bench_now();
        for (long c = 0; c < calls; ++c)
            sink += f->ops->map(f, a + (size_t)(c % POOL) * (size_t)n, b, u, v, scratch);
        if (bench_now() - t0 > 0.02) break;
        calls *= 2;
    }
    calls *= 5;
    double rates[RUNS];
    for (int r = 0; r < RUNS; ++r) {
        double t0 = bench_now();
        for (long c = 0; c < calls; ++c)
            sink += f->ops->map(f, a + (size_t)(c % POOL) * (size_t)n, b, u, v, scratch);
        rates[r] = (double)calls / (bench_now() - t0);
    }
    qsort(rates, RUNS, sizeof rates[0], bench_compare);
    if (sink == 42.0) printf(" ");
    free(a), free(u), free(scratch);
    return rates[RUNS / 2];
}

/* Prints the MAP throughput of g's one factor, whose addition returned rc
 * (exits with the library's message when it failed). */
static void report_only_factor(concord_graph *g, int rc, const char *label) {
    if (rc != CONCORD_OK) {
        fprintf(stderr, "%s\n", concord_last_error(g));
        exit(1);
    }
    double rate = oracle_rate(&g->factors[0]);
    printf("%-46s %10.0f calls/s %9.1f us/call\n", label, rate, 1e6 / rate);
}

static void bench_tree(int32_t length, unsigned flags, const char *label) {
    concord_graph *g = concord_graph_new();
    int32_t n_arcs = (length - 1) * (length - 1);
    int32_t *heads = malloc(3 * (size_t)n_arcs * sizeof(int32_t));
    int32_t *mods = heads + n_arcs, *vars = mods + n_arcs, k = 0;
    for (int32_t h = 0; h < length; ++h)
        for (int32_t m = 1; m < length; ++m)
            if (h != m) heads[k] = h, mods[k] = m, vars[k] = k, ++k;
    concord_add_variables(g, n_arcs, NULL, NULL);
    report_only_factor(g, concord_add_tree(g, length, n_arcs, heads, mods, vars, flags, NULL),
                       label);
    free(heads);
    concord_graph_free(g);
}

static void bench_matching(int32_t rows, int32_t cols, unsigned flags, const char *label) {
    concord_graph *g = concord_graph_new();
    int32_t *vars = malloc((size_t)rows * (size_t)cols * sizeof *vars);
    for (int32_t k = 0; k < rows * cols; ++k) vars[k] = k;
    concord_add_variables(g, rows * cols, NULL, NULL);
    report_only_factor(g, concord_add_matching(g, rows, cols, vars, flags, NULL), label);
    free(vars);
    concord_graph_free(g);
}

int main(void) {
    printf("MAP oracle calls per CPU second (median of %d runs)\n", RUNS);
    bench_tree(40, 0, "tree, non-projective, n=40, all arcs");
    bench_tree(40, CONCORD_TREE_SINGLE_ROOT, "tree, non-projective single-root, n=40");
    bench_tree(40, CONCORD_TREE_PROJECTIVE, "tree, projective, n=40");
    bench_tree(40, CONCORD_TREE_PROJECTIVE | CONCORD_TREE_SINGLE_ROOT,
               "tree, projective single-root, n=40");
    bench_tree(80, 0, "tree, non-projective, n=80 (O(n^2) check)");
    bench_tree(80, CONCORD_TREE_PROJECTIVE, "tree, projective, n=80 (O(n^3) check)");
    bench_matching(20, 20, 0, "matching 20x20, partial");
    bench_matching(20, 20, CONCORD_MATCHING_PERFECT, "matching 20x20, perfect");
    bench_matching(40, 40, CONCORD_MATCHING_PERFECT, "matching 40x40, perfect (O(n^3) check)");
    return 0;
}
