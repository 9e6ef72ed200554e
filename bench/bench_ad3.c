/*
 * AD3 (LP-MAP) on AD3's own example graphs: for each file, the time to read
 * it and the median over repeated solves of the wall time, iterations and
 * time per iteration, with the status and value reached at the default
 * settings (tolerance 1e-6 per link). Repeated solves reuse the graph's
 * workspace, as a training loop would.
 *
 *   bench_ad3 [DATA_DIR] [REPEATS]     (DATA_DIR defaults to ../shared/data)
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "concord.h"

static const char *const files[] = {
    "mln_large.fg",     "coref.fg",         "srl_fract_001.fg", "srl_fract_002.fg",
    "srl_fract_003.fg", "srl_fract_004.fg", "srl_fract_005.fg", "parsing_excerpt.fg",
    "parsing01.fg",     "parsing02.fg",     "sequence.fg",      "sequence_budget.fg",
    "general_tree.fg",  "general_tree_counts.fg",
};

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    int repeats = argc > 2 ? atoi(argv[2]) : 9;
    if (repeats < 1 || repeats > 1000) repeats = 9;
    printf("%-24s %9s %10s %8s %12s %-10s %s\n", "graph", "read ms", "solve ms", "iters",
           "us/iter", "status", "value");
    for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
        char path[1024];
        snprintf(path, sizeof path, "%s/ad3/%s", data, files[k]);
        double *read_times = malloc((size_t)repeats * sizeof(double));
        double *solve_times = malloc((size_t)repeats * sizeof(double));
        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        int ok = read_times && solve_times;
        for (int r = 0; r < repeats && ok; ++r) {
            concord_free_graphs(graphs, count);
            double t0 = bench_now();
            ok = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                                   NULL, NULL) == CONCORD_OK;
            read_times[r] = bench_now() - t0;
        }
        if (!ok) {
            printf("%-24s %s\n", files[k], error);
            free(read_times);
            free(solve_times);
            continue;
        }
        /* one solver per graph, made once; every solve starts cold */
        concord_solver **solvers = calloc(count, sizeof *solvers);
        for (size_t i = 0; solvers && i < count; ++i) concord_solver_new(graphs[i], &solvers[i]);
        concord_settings cold;
        concord_default_settings(&cold);
        cold.warm_start = false;
        concord_info info = {0};
        for (int r = 0; r < repeats && solvers; ++r) {
            double t0 = bench_now();
            for (size_t i = 0; i < count; ++i) concord_solver_map(solvers[i], &cold, &info);
            solve_times[r] = bench_now() - t0;
        }
        for (size_t i = 0; solvers && i < count; ++i) concord_solver_free(solvers[i]);
        free(solvers);
        double solve = bench_median(solve_times, repeats);
        printf("%-24s %9.2f %10.3f %8d %12.2f %-10s %.10g\n", files[k],
               1e3 * bench_median(read_times, repeats), 1e3 * solve, info.iterations,
               1e6 * solve / (info.iterations > 0 ? info.iterations : 1),
               concord_status_name(info.status), info.value);
        concord_free_graphs(graphs, count);
        free(read_times);
        free(solve_times);
    }
    return 0;
}
