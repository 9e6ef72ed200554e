/*
 * LP-MAP on the UAI 2014 MAP instances with their evidence: median over
 * repeated runs of the read, solve and decode times, with iterations, the
 * LP upper bound, the decoded assignment's log-probability and the gap.
 * A last column gives the peak resident memory after 10^4 solves of the
 * smallest instance compared with after the first solve, to show memory
 * stays flat.
 *
 *   bench_uai [DATA_DIR] [REPEATS]     (DATA_DIR defaults to ../shared/data)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "concord.h"

static const char *const models[] = {
    "Grids_26",          "Grids_28",        "Grids_30",        "ObjectDetection_11",
    "Promedas_11",       "Promedas_20",     "Promedas_30",     "ProteinFolding_11",
    "Segmentation_12",   "Segmentation_14", "wcsp_15",
};

static long peak_rss_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    if (repeats < 1 || repeats > 1000) repeats = 5;
    printf("%-20s %8s %9s %9s %7s %14s %14s %9s\n", "instance", "read ms", "solve ms",
           "decode ms", "iters", "upper bound", "decoded", "gap");
    for (size_t k = 0; k < sizeof models / sizeof models[0]; ++k) {
        char model[1024], evidence[1024], error[512];
        snprintf(model, sizeof model, "%s/uai2014/%s.uai", data, models[k]);
        snprintf(evidence, sizeof evidence, "%s/uai2014/%s.uai.evid", data, models[k]);
        double reads[1000], solves[1000], decodes[1000];
        concord_info info = {0};
        concord_decoding dec = {0};
        int ok = 1;
        for (int r = 0; r < repeats && ok; ++r) {
            concord_graph *g = NULL;
            double t0 = bench_now();
            ok = concord_read_uai(model, evidence, &g, error, sizeof error) == CONCORD_OK;
            double t1 = bench_now();
            if (ok) concord_solve_map(g, NULL, &info);
            double t2 = bench_now();
            if (ok) concord_decode(g, &dec);
            double t3 = bench_now();
            reads[r] = t1 - t0, solves[r] = t2 - t1, decodes[r] = t3 - t2;
            concord_graph_free(g);
        }
        if (!ok) {
            printf("%-20s %s\n", models[k], error);
            continue;
        }
        printf("%-20s %8.2f %9.2f %9.2f %7d %14.6f %14.6f %9.3g\n", models[k],
               1e3 * bench_median(reads, repeats), 1e3 * bench_median(solves, repeats),
               1e3 * bench_median(decodes, repeats), info.iterations, info.upper_bound,
               dec.value, info.upper_bound - dec.value);
    }

    /* Memory over 10^4 solves with new scores each time. */
    char model[1024], error[512];
    snprintf(model, sizeof model, "%s/ad3/grid4x4.uai", data);
    concord_graph *g = NULL;
    if (concord_read_uai(model, NULL, &g, error, sizeof error) != CONCORD_OK) {
        printf("%s\n", error);
        return 1;
    }
    int32_t n = concord_num_variables(g);
    double *theta = malloc((size_t)n * sizeof *theta);
    const double *base = concord_variable_scores(g);
    for (int32_t i = 0; i < n; ++i) theta[i] = base[i];
    concord_solve_map(g, NULL, NULL);
    long first = peak_rss_kb();
    unsigned seed = 1;
    double t0 = bench_now();
    for (int r = 0; r < 10000; ++r) {
        for (int32_t i = 0; i < n; ++i) theta[i] = base[i] + 0.1 * ((rand_r(&seed) % 200) - 100) / 100.0;
        concord_set_variable_scores(g, 0, n, theta);
        concord_solve_map(g, NULL, NULL);
    }
    double elapsed = bench_now() - t0;
    printf("\n10000 solves of grid4x4 with new scores: %.3f ms per solve; peak RSS %ld kB "
           "after the first solve, %ld kB after all\n",
           1e3 * elapsed / 10000, first, peak_rss_kb());
    free(theta);
    concord_graph_free(g);
    return 0;
}
