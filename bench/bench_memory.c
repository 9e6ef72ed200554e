/*
 * Memory over many solves: AD3's own active set grows across calls; concord
 * sizes every buffer once per graph structure. This program reads
 * grid4x4.uai (DENSE factors, so every factor goes through the active set)
 * and solves it COUNT times with new random scores, alternating LP-MAP, and
 * LP-SparseMAP followed by its backward pass. It prints the peak resident
 * memory after the first solve and after each tenfold more. To count heap
 * allocations, run it under valgrind: the total allocated must not grow
 * with COUNT, and every byte must be freed at exit.
 *
 *   bench_memory [DATA_DIR] [COUNT]     (COUNT defaults to 10000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "concord.h"

static long peak_rss_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    long count = argc > 2 ? atol(argv[2]) : 10000;
    if (count < 1) count = 10000;
    char model[1024], error[512];
    snprintf(model, sizeof model, "%s/ad3/grid4x4.uai", data);
    concord_graph *g = NULL;
    if (concord_read_uai(model, NULL, &g, error, sizeof error) != CONCORD_OK) {
        fprintf(stderr, "%s\n", error);
        return 1;
    }
    int32_t n = concord_num_variables(g), n_add = concord_num_additionals(g);
    double *theta = malloc((size_t)n * sizeof *theta), *base = malloc((size_t)n * sizeof *base);
    double *du = malloc((size_t)n * sizeof *du), *dtheta = malloc((size_t)n * sizeof *dtheta);
    double *dphi = malloc((size_t)n_add * sizeof *dphi);
    if (!theta || !base || !du || !dtheta || !dphi) return 1;
    for (int32_t i = 0; i < n; ++i) base[i] = concord_variable_scores(g)[i], du[i] = 1.0;
    concord_solver *solver;
    if (concord_solver_new(g, &solver) != CONCORD_OK) return 1;
    unsigned seed = 1;
    long next_report = 1;
    double t0 = bench_now();
    printf("%8s %14s %12s\n", "solves", "peak RSS kB", "ms/solve");
    for (long r = 1; r <= count; ++r) {
        for (int32_t i = 0; i < n; ++i)
            theta[i] = base[i] + 0.1 * ((rand_r(&seed) % 200) - 100) / 100.0;
        concord_solver_set_scores(solver, theta, NULL);
        if (r % 2) {
            concord_solver_map(solver, NULL, NULL);
        } else {
            concord_solver_sparse(solver, NULL, NULL);
            concord_solver_backward(solver, NULL, du, NULL, dtheta, dphi, NULL);
        }
        if (r == next_report || r == count) {
            printf("%8ld %14ld %12.3f\n", r, peak_rss_kb(), 1e3 * (bench_now() - t0) / (double)r);
            next_report *= 10;
        }
    }
    free(theta), free(base), free(du), free(dtheta), free(dphi);
    concord_solver_free(solver);
    concord_graph_free(g);
    return 0;
}
