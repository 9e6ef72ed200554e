/*
 * Speed of the dynamic-programming MAP oracles of the structured factors
 * (sequences, head automata, summarization), the inner loop of every
 * active-set QP and of the dual bound: MAP oracle calls per second (median
 * of repeated timed runs, random scores redrawn for each run), plus cold
 * active-set QP solves per second (SparseMAP, d = 1) for reference.
 * Prints figures only; never fails on time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "concord.h"
#include "factor.h"
#include "graph.h"
#include "qp/active_set.h"

enum { RUNS = 7 };

static volatile double sink;

/* Median calls per second of the oracle (qp = false) or of a cold
 * active-set solve (qp = true) on factor f; for the QP, the mean oracle
 * calls per solve and the fraction solved exactly (the others stopped at
 * the cap of 1000 oracle calls) go to *calls and *exact. */
static double rate(const factor *f, bool qp, double *calls_per, double *exact) {
    size_t deg = (size_t)f->degree + 1, add = (size_t)f->n_add + 1;
    double *a = malloc(deg * sizeof(double)), *b = malloc(add * sizeof(double));
    double *d = malloc(deg * sizeof(double)), *u = malloc(deg * sizeof(double));
    double *v = malloc(add * sizeof(double));
    uint8_t *neg = calloc(deg, 1);
    factor_buffers buf = {malloc(deg * sizeof(double)), malloc(deg * sizeof(double)),
                          malloc(deg * sizeof(double)), malloc(deg * sizeof(double)),
                          malloc(add * sizeof(double)), malloc(factor_scratch_bytes(f) + 1)};
    active_set *state = active_set_new(f);
    if (!state) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < deg; ++i) d[i] = 1.0;
    double rates[RUNS];
    long solves = 0, oracle = 0, exact_solves = 0;
    for (int run = 0; run < RUNS; ++run) {
        for (size_t i = 0; i < deg; ++i) a[i] = 2.0 * bench_uniform() - 1.0;
        for (size_t k = 0; k < add; ++k) b[k] = 2.0 * bench_uniform() - 1.0;
        long calls = 0, batch = 1;
        double start = bench_now(), elapsed = 0.0;
        while (elapsed < 0.1) {
            for (long c = 0; c < batch; ++c) {
                if (qp) {
                    active_set_reset(state);
                    qp_outcome out;
                    factor_qp_variables(f, state, neg, a, b, d, u, v, 1000, &buf, &out);
                    sink = u[0];
                    ++solves;
                    oracle += out.oracle_calls;
                    exact_solves += out.exact;
                } else {
                    sink = f->ops->map(f, a, b, u, v, buf.scratch);
                }
            }
            calls += batch;
            batch *= 2;
            elapsed = bench_now() - start;
        }
        rates[run] = (double)calls / elapsed;
    }
    qsort(rates, RUNS, sizeof(double), bench_compare);
    if (calls_per) *calls_per = solves ? (double)oracle / (double)solves : 0.0;
    if (exact) *exact = solves ? (double)exact_solves / (double)solves : 0.0;
    free(a), free(b), free(d), free(u), free(v), free(neg);
    active_set_free(state);
    free(buf.lit_a), free(buf.lit_u), free(buf.oracle_a), free(buf.oracle_u), free(buf.oracle_v);
    free(buf.scratch);
    return rates[RUNS / 2];
}

static void report(const char *what, concord_graph *g) {
    const factor *f = &g->factors[concord_num_factors(g) - 1];
    double calls, exact;
    double map = rate(f, false, NULL, NULL), qp = rate(f, true, &calls, &exact);
    printf("%-58s %10.0f  %9.0f  %6.1f  %5.0f%%\n", what, map, qp, calls, 100.0 * exact);
}

static int32_t *iota(int32_t n) {
    int32_t *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    for (int32_t i = 0; i < n; ++i) x[i] = i;
    return x;
}

int main(void) {
    printf("structured factor oracles: median of %d runs of >= 0.1 s CPU; cold active-set QP\n"
           "with d = 1 and scores uniform in [-1, 1] (oracle calls per QP; %% solved exactly,\n"
           "the others stop at 1000 calls)\n\n",
           RUNS);
    printf("%-58s %10s  %9s  %6s  %6s\n", "factor", "oracle/s", "QP/s", "calls", "exact");
    {
        enum { L = 50, K = 20 };
        int32_t states[L];
        for (int i = 0; i < L; ++i) states[i] = K;
        int32_t *vars = iota(L * K);
        concord_graph *g = concord_graph_new();
        concord_add_variables(g, L * K, NULL, NULL);
        concord_add_sequence(g, L, states, vars, NULL, NULL);
        report("SEQUENCE, length 50, 20 states", g);
        concord_add_sequence_budget(g, L, states, vars, 10, NULL, NULL);
        report("SEQUENCE_BUDGET, length 50, 20 states, budget 10", g);
        /* a quarter of the transitions forbidden (-inf): the oracle then
         * runs on a masked copy of the transition scores */
        const int32_t n_add = K + (L - 1) * K * K + K;
        double *forbidding = calloc((size_t)n_add, sizeof(double));
        for (int32_t k = 0; k < n_add; ++k)
            if (k % 4 == 1) forbidding[k] = -INFINITY;
        concord_add_sequence(g, L, states, vars, forbidding, NULL);
        report("SEQUENCE, length 50, 20 states, 1/4 forbidden", g);
        free(forbidding);
        concord_graph_free(g);
        free(vars);
    }
    {
        enum { N = 40 };
        int32_t *vars = iota(2 * N);
        concord_graph *g = concord_graph_new();
        concord_add_variables(g, 2 * N, NULL, NULL);
        concord_add_head_automaton(g, N, vars, NULL, NULL);
        report("HEAD_AUTOMATON, 40 modifiers (sentence length 40)", g);
        concord_add_grandparent_head_automaton(g, N, N, vars, NULL, NULL);
        report("GRANDPARENT_HEAD_AUTOMATON, 40 grandparents, 40 modifiers", g);
        concord_add_sequence_compressor(g, N, vars, NULL, NULL);
        report("SEQUENCE_COMPRESSOR, 40 words", g);
        concord_graph_free(g);
        free(vars);
    }
    {
        enum { N = 40, K = 3 };
        int32_t states[N], parents[N];
        parents[0] = -1;
        for (int i = 0; i < N; ++i) {
            states[i] = K;
            if (i > 0) parents[i] = (i - 1) / 2; /* a binary tree */
        }
        int32_t *vars = iota(N * K + N + 1);
        concord_graph *g = concord_graph_new();
        concord_add_variables(g, N * K + N + 1, NULL, NULL);
        concord_add_general_tree(g, N, states, parents, vars, NULL, NULL);
        report("GENERAL_TREE, 40 nodes (binary tree), 3 states", g);
        concord_add_general_tree_counts(g, N, states, parents, vars, NULL, NULL);
        report("GENERAL_TREE_COUNTS, 40 nodes (binary tree), 3 states", g);
        concord_graph_free(g);
        free(vars);
    }
    return 0;
}
