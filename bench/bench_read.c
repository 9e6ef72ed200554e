/*
 * Reading against solving, in one process: for every AD3 .fg file in
 * DATA_DIR/ad3 and a few UAI 2014 models, the median CPU time of reading
 * the file (concord_read_file, or concord_read_uai with its evidence) and
 * of solving what was read (LP-MAP, default settings), and the read time as
 * a share of the solve. It exists to decide whether a speed-up of the
 * readers is worth its code: the project keeps a trick only when it saves
 * more than a tenth of a solve on realistic inputs (docs/performance.md).
 *
 *   bench_read [DATA_DIR] [REPEATS]     (DATA_DIR defaults to ../shared/data)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "concord.h"

static const char *const uai_models[] = {"ObjectDetection_11", "Promedas_11", "Grids_26",
                                         "Segmentation_12"};

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads `path` (a .fg file, or a UAI model with `evidence`) into graphs. */
static int read_input(const char *path, const char *evidence, concord_graph ***graphs,
                      size_t *count, char *error, size_t size) {
    if (!evidence)
        return concord_read_file(path, CONCORD_FORMAT_FG, graphs, count, error, size, NULL, NULL);
    *graphs = malloc(sizeof **graphs);
    *count = 1;
    if (!*graphs) return CONCORD_ENOMEM;
    int rc = concord_read_uai(path, evidence, *graphs, error, size);
    if (rc) {
        free(*graphs);
        *graphs = NULL;
        *count = 0;
    }
    return rc;
}

static void bench_file(const char *label, const char *path, const char *evidence, int repeats) {
    double *reads = malloc((size_t)repeats * sizeof *reads);
    double *solves = malloc((size_t)repeats * sizeof *solves);
    char error[512] = "";
    int ok = reads && solves;
    for (int r = 0; r < repeats && ok; ++r) {
        concord_graph **graphs;
        size_t count;
        double t0 = bench_now();
        ok = read_input(path, evidence, &graphs, &count, error, sizeof error) == CONCORD_OK;
        double t1 = bench_now();
        for (size_t k = 0; k < count && ok; ++k) { /* a solver made and used once */
            concord_solver *solver;
            if (concord_solver_new(graphs[k], &solver) != CONCORD_OK) continue;
            concord_solver_map(solver, NULL, NULL);
            concord_solver_free(solver);
        }
        double t2 = bench_now();
        reads[r] = t1 - t0;
        solves[r] = t2 - t1;
        if (ok) concord_free_graphs(graphs, count);
    }
    if (ok) {
        double read = bench_median(reads, repeats), solve = bench_median(solves, repeats);
        printf("%-24s %10.3f %11.3f %8.1f\n", label, 1e3 * read, 1e3 * solve,
               100.0 * read / solve);
    } else {
        printf("%-24s %s\n", label, error);
    }
    free(reads);
    free(solves);
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    int repeats = argc > 2 ? atoi(argv[2]) : 21;
    if (repeats < 1 || repeats > 10000) repeats = 21;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/ad3", data);
    /* a missing folder skips its graphs with a line, as a missing UAI
     * instance does below: the benchmarks run on whatever data is there */
    char *names[256];
    size_t n = 0;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && n < 256) {
            size_t len = strlen(e->d_name);
            if (len > 3 && !strcmp(e->d_name + len - 3, ".fg")) names[n++] = strdup(e->d_name);
        }
        closedir(d);
    } else {
        printf("%s: cannot open: its graphs skipped\n", dir);
    }
    qsort(names, n, sizeof *names, compare_names);
    printf("%-24s %10s %11s %8s\n", "input", "read ms", "solve ms", "read %");
    for (size_t k = 0; k < n; ++k) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        bench_file(names[k], path, NULL, repeats);
        free(names[k]);
    }
    for (size_t k = 0; k < sizeof uai_models / sizeof uai_models[0]; ++k) {
        char model[1400], evidence[1400];
        snprintf(model, sizeof model, "%s/uai2014/%s.uai", data, uai_models[k]);
        snprintf(evidence, sizeof evidence, "%s/uai2014/%s.uai.evid", data, uai_models[k]);
        bench_file(uai_models[k], model, evidence, repeats);
    }
    return 0;
}
