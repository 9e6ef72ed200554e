/*
 * LP-SparseMAP forward and backward passes on four structured problems,
 * with random N(0, 1) scores (fixed seed):
 *   grid      a 10x10 grid of binary variables with PAIR factors on edges;
 *   matching  LP-matching 20x20: XOR per row, ATMOSTONE per column;
 *   tree      a non-projective tree over 20 words (all 420 arcs) with
 *             BUDGET(5) on each head's outgoing arcs;
 *   sequence  a sequence of 30 positions x 10 states (Viterbi factor)
 *             with BUDGET(4) on each state's indicators.
 * For each: the median over repeated runs of the forward time (default
 * settings, tolerance 1e-6 per link) and of the backward time for a random
 * direction, with iterations, status, the mean and largest number of
 * active configurations per factor, and the iterations of the backward:
 * conjugate gradients (the default) and, for comparison, the power
 * iteration of the LP-SparseMAP paper at the same tolerance.
 *
 * Then warm against cold starts, as in a training loop that solves one
 * structure again after a small change of its scores: each repetition
 * moves every variable score by 1% of a N(0, 1) draw and solves again
 * from the previous solution (warm) and from scratch (cold), by LP-MAP and
 * by LP-SparseMAP; medians of the times and iterations.
 *
 *   bench_sparse [REPEATS]
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "concord.h"

static void normals(double *x, int n) {
    for (int i = 0; i < n; ++i) x[i] = bench_normal();
}

static concord_graph *grid(void) {
    enum { N = 10 };
    double theta[N * N];
    normals(theta, N * N);
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, N * N, theta, NULL);
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < N; ++c) {
            if (c + 1 < N) concord_add_pair(g, r * N + c, r * N + c + 1, bench_normal(), NULL);
            if (r + 1 < N) concord_add_pair(g, r * N + c, (r + 1) * N + c, bench_normal(), NULL);
        }
    return g;
}

static concord_graph *matching(void) {
    enum { N = 20 };
    double theta[N * N];
    normals(theta, N * N);
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, N * N, theta, NULL);
    int32_t vars[N];
    for (int r = 0; r < N; ++r) {
        for (int c = 0; c < N; ++c) vars[c] = r * N + c;
        concord_add_logic(g, CONCORD_XOR, N, vars, NULL, NULL);
    }
    for (int c = 0; c < N; ++c) {
        for (int r = 0; r < N; ++r) vars[r] = r * N + c;
        concord_add_logic(g, CONCORD_ATMOSTONE, N, vars, NULL, NULL);
    }
    return g;
}

static concord_graph *tree(void) {
    enum { WORDS = 20, ARCS = WORDS * WORDS }; /* heads 0..20, modifiers 1..20 */
    int32_t heads[ARCS], mods[ARCS], vars[ARCS];
    int32_t n = 0;
    for (int h = 0; h <= WORDS; ++h)
        for (int m = 1; m <= WORDS; ++m)
            if (h != m) heads[n] = h, mods[n] = m, vars[n] = n, ++n;
    double *theta = malloc((size_t)n * sizeof *theta);
    normals(theta, n);
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, n, theta, NULL);
    concord_add_tree(g, WORDS + 1, n, heads, mods, vars, 0, NULL);
    int32_t out[ARCS];
    for (int h = 0; h <= WORDS; ++h) {
        int32_t k = 0;
        for (int32_t a = 0; a < n; ++a)
            if (heads[a] == h) out[k++] = a;
        concord_add_budget(g, k, out, NULL, 5, false, NULL);
    }
    free(theta);
    return g;
}

static concord_graph *sequence(void) {
    enum { L = 30, K = 10 };
    int32_t states[L], vars[L * K];
    double theta[L * K];
    double transitions[K + (L - 1) * K * K + K];
    for (int p = 0; p < L; ++p) states[p] = K;
    for (int i = 0; i < L * K; ++i) vars[i] = i;
    normals(theta, L * K);
    normals(transitions, (int)(sizeof transitions / sizeof transitions[0]));
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, L * K, theta, NULL);
    concord_add_sequence(g, L, states, vars, transitions, NULL);
    int32_t column[L];
    for (int s = 0; s < K; ++s) {
        for (int p = 0; p < L; ++p) column[p] = p * K + s;
        concord_add_budget(g, L, column, NULL, 4, false, NULL);
    }
    return g;
}

/* Warm against cold starts on g after small score changes (see above). */
static int warm_versus_cold(const char *name, const concord_graph *g, int repeats) {
    const int32_t n = concord_num_variables(g);
    concord_solver *warm, *cold;
    if (concord_solver_new(g, &warm) != CONCORD_OK) return 1;
    if (concord_solver_new(g, &cold) != CONCORD_OK) return 1;
    double *theta = malloc((size_t)n * sizeof *theta);
    if (!theta) return 1;
    concord_settings warm_settings, cold_settings;
    concord_default_settings(&warm_settings);
    cold_settings = warm_settings;
    cold_settings.warm_start = false;
    for (int sparse = 0; sparse <= 1; ++sparse) {
        double warm_ms[1000], cold_ms[1000], warm_iters[1000], cold_iters[1000];
        int (*solve)(concord_solver *, const concord_settings *, concord_info *) =
            sparse ? concord_solver_sparse : concord_solver_map;
        for (int32_t i = 0; i < n; ++i) theta[i] = concord_variable_scores(g)[i];
        concord_info info;
        concord_solver_set_scores(warm, theta, NULL);
        solve(warm, &warm_settings, &info);
        for (int r = 0; r < repeats; ++r) {
            for (int32_t i = 0; i < n; ++i) theta[i] += 0.01 * bench_normal();
            concord_solver_set_scores(warm, theta, NULL);
            concord_solver_set_scores(cold, theta, NULL);
            double t0 = bench_now();
            solve(warm, &warm_settings, &info);
            double t1 = bench_now();
            warm_iters[r] = info.iterations;
            solve(cold, &cold_settings, &info);
            double t2 = bench_now();
            cold_iters[r] = info.iterations;
            warm_ms[r] = 1e3 * (t1 - t0);
            cold_ms[r] = 1e3 * (t2 - t1);
        }
        printf("%-9s %-13s %8.3f %8.0f %8.3f %8.0f\n", name, sparse ? "LP-SparseMAP" : "LP-MAP",
               bench_median(cold_ms, repeats), bench_median(cold_iters, repeats),
               bench_median(warm_ms, repeats), bench_median(warm_iters, repeats));
    }
    free(theta);
    concord_solver_free(warm);
    concord_solver_free(cold);
    return 0;
}

typedef struct problem {
    const char *name;
    concord_graph *(*build)(void);
} problem;

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 15;
    if (repeats < 1 || repeats > 1000) repeats = 15;
    const problem problems[] = {
        {"grid", grid}, {"matching", matching}, {"tree", tree}, {"sequence", sequence}};
    concord_graph *graphs[sizeof problems / sizeof problems[0]];
    concord_settings cold, power;
    concord_default_settings(&cold);
    cold.warm_start = false;
    concord_default_settings(&power);
    power.backward_power = true;
    power.backward_max_iter = 1000000;
    printf("%-9s %11s %7s %-11s %11s %4s %11s %8s %10s %11s\n", "problem", "forward ms", "iters",
           "status", "active mean", "max", "backward ms", "CG iters", "power ms", "power iters");
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; ++k) {
        concord_graph *g = graphs[k] = problems[k].build();
        concord_solver *solver;
        if (concord_solver_new(g, &solver) != CONCORD_OK) return 1;
        int32_t n = concord_num_variables(g), n_add = concord_num_additionals(g);
        double *du = malloc((size_t)n * sizeof *du), *dtheta = malloc((size_t)n * sizeof *dtheta);
        double *dv = malloc((size_t)(n_add ? n_add : 1) * sizeof *dv);
        double *dphi = malloc((size_t)(n_add ? n_add : 1) * sizeof *dphi);
        normals(du, n);
        normals(dv, n_add);
        double forward[1000], backward[1000], powered[1000];
        concord_info info = {0};
        concord_backward_info binfo = {0}, pinfo = {0};
        for (int r = 0; r < repeats; ++r) {
            double t0 = bench_now();
            concord_solver_sparse(solver, &cold, &info);
            double t1 = bench_now();
            concord_solver_backward(solver, NULL, du, n_add ? dv : NULL, dtheta,
                                    n_add ? dphi : NULL, &binfo);
            double t2 = bench_now();
            concord_solver_backward(solver, &power, du, n_add ? dv : NULL, dtheta,
                                    n_add ? dphi : NULL, &pinfo);
            double t3 = bench_now();
            forward[r] = t1 - t0;
            backward[r] = t2 - t1;
            powered[r] = t3 - t2;
        }
        double total = 0.0;
        int32_t largest = 0, factors = concord_num_factors(g), counted = 0;
        for (int32_t f = 0; f < factors; ++f) {
            int32_t count;
            if (concord_solver_factor_distribution(solver, f, &count) != CONCORD_OK) continue;
            total += count;
            counted += 1;
            if (count > largest) largest = count;
        }
        printf("%-9s %11.3f %7d %-11s %11.2f %4d %11.3f %8d %10.3f %11d\n", problems[k].name,
               1e3 * bench_median(forward, repeats), info.iterations,
               concord_status_name(info.status), counted ? total / counted : 0.0, largest,
               1e3 * bench_median(backward, repeats), binfo.iterations,
               1e3 * bench_median(powered, repeats), pinfo.iterations);
        free(du);
        free(dtheta);
        free(dv);
        free(dphi);
        concord_solver_free(solver);
    }
    printf("\n%-9s %-13s %8s %8s %8s %8s\n", "problem", "algorithm", "cold ms", "iters",
           "warm ms", "iters");
    for (size_t k = 0; k < sizeof problems / sizeof problems[0]; ++k) {
        if (warm_versus_cold(problems[k].name, graphs[k], repeats)) return 1;
        concord_graph_free(graphs[k]);
    }
    return 0;
}
