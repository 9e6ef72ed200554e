/*
 * LP-MAP on the UAI 2014 MAP instances with their evidence: median over
 * repeated runs of the read, solve and decode times, with iterations, the
 * LP upper bound, the decoded assignment's log-probability and the gap.
 *
 *   bench_uai [DATA_DIR] [REPEATS]     (DATA_DIR defaults to ../shared/data)
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "concord.h"

static const char *const models[] = {
    "Grids_26",          "Grids_28",        "Grids_30",        "ObjectDetection_11",
    "Promedas_11",       "Promedas_20",     "Promedas_30",     "ProteinFolding_11",
    "Segmentation_12",   "Segmentation_14", "wcsp_15",
};

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
            concord_solver *solver = NULL;
            ok = ok && concord_solver_new(g, &solver) == CONCORD_OK;
            double t1s = bench_now();
            if (ok) concord_solver_map(solver, NULL, &info);
            double t2 = bench_now();
            if (ok) concord_solver_decode(solver, &dec);
            double t3 = bench_now();
            reads[r] = t1 - t0, solves[r] = t2 - t1s, decodes[r] = t3 - t2;
            concord_solver_free(solver);
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
    return 0;
}
