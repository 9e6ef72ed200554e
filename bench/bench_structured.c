/*
 * LP-MAP (AD3) and LP-SparseMAP on structured graphs of chosen sizes: the
 * generated suite of bench/gen/structured_gen.h (second-order dependency
 * parsing, and coupled sequence labelling; see `gen_structured --help`)
 * and AD3's parsing01.fg and parsing02.fg from DATA_DIR/ad3 (a line says
 * when one is missing). Generated graphs are written to memory and read
 * back, untimed. For each graph: its size, then for LP-MAP the median
 * over repeated solves of the time, with the iterations, status, value
 * and dual bound, and for LP-SparseMAP the median time, iterations and
 * status, at the default settings (tolerance 1e-6 per link); every solve
 * starts cold. A graph whose solves take more than 5 s in all gets at
 * least 3 of them instead of REPEATS. Last, the geometric means of the
 * times and iterations over each generated shape. With SCALE, every
 * finite score is multiplied by it first (LP-MAP is scale-invariant, up
 * to the rounding of the scaled scores; LP-SparseMAP's solution spreads
 * over more structures as the scores shrink).
 *
 *   bench_structured [DATA_DIR] [REPEATS] [SCALE]   (defaults ../shared/data, 9, 1)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"
#include "concord.h"
#include "structured_gen.h"

/* The median time of repeated cold solves by one algorithm; info is the
 * last solve's (all solves are the same, being cold). */
static double median_solve(concord_solver *solver, concord_algorithm algorithm, int repeats,
                           concord_info *info) {
    concord_settings cold;
    concord_default_settings(&cold);
    cold.warm_start = false;
    double *times = malloc((size_t)repeats * sizeof *times), total = 0.0;
    if (!times) return NAN;
    int runs = 0;
    while (runs < repeats && (runs < 3 || total < 5.0)) {
        double t0 = bench_now();
        if (algorithm == CONCORD_ALGORITHM_AD3)
            concord_solver_map(solver, &cold, info);
        else
            concord_solver_sparse(solver, &cold, info);
        times[runs] = bench_now() - t0;
        total += times[runs++];
    }
    double median = bench_median(times, runs);
    free(times);
    return median;
}

/* Sums of logarithms for the geometric means of one shape. */
typedef struct shape_means {
    const char *name;
    int count;
    double log_map_ms, log_map_iters, log_sparse_ms, log_sparse_iters;
} shape_means;

/* Multiplies every finite score of g by scale; returns 0, or -1 (and a
 * line) when the graph refuses the new scores. */
static int scale_scores(const char *name, concord_graph *g, double scale) {
    const int32_t counts[2] = {concord_num_variables(g), concord_num_additionals(g)};
    const double *scores[2] = {concord_variable_scores(g), concord_additional_scores(g)};
    for (int kind = 0; kind < 2; ++kind) {
        double *scaled = malloc((size_t)(counts[kind] ? counts[kind] : 1) * sizeof *scaled);
        if (!scaled) return -1;
        for (int32_t k = 0; k < counts[kind]; ++k)
            scaled[k] = isfinite(scores[kind][k]) ? scale * scores[kind][k] : scores[kind][k];
        int rc = kind == 0 ? concord_set_variable_scores(g, 0, counts[0], scaled)
                           : concord_set_additional_scores(g, 0, counts[1], scaled);
        free(scaled);
        if (rc != CONCORD_OK) {
            printf("%-34s cannot scale its scores: %s\n", name, concord_last_error(g));
            return -1;
        }
    }
    return 0;
}

/* Solves g both ways, its scores times scale, and prints its row; adds to
 * means (may be NULL). */
static void bench_graph(const char *name, concord_graph *g, double scale, int repeats,
                        shape_means *means) {
    if (scale != 1.0 && scale_scores(name, g, scale)) return;
    concord_solver *solver = NULL;
    if (concord_solver_new(g, &solver) != CONCORD_OK) {
        printf("%-34s cannot make a solver: %s\n", name, concord_last_error(g));
        return;
    }
    concord_info map = {0}, sparse = {0};
    double map_ms = 1e3 * median_solve(solver, CONCORD_ALGORITHM_AD3, repeats, &map);
    double sparse_ms = 1e3 * median_solve(solver, CONCORD_ALGORITHM_SPARSE, repeats, &sparse);
    concord_solver_free(solver);
    printf("%-34s %6d %6d %9.3f %7d %-10s %14.8f %14.8f %9.3f %7d %-10s\n", name,
           concord_num_variables(g), concord_num_factors(g), map_ms, map.iterations,
           concord_status_name(map.status), map.value, map.upper_bound, sparse_ms,
           sparse.iterations, concord_status_name(sparse.status));
    if (means) {
        means->count++;
        means->log_map_ms += log(map_ms);
        means->log_map_iters += log(map.iterations);
        means->log_sparse_ms += log(sparse_ms);
        means->log_sparse_iters += log(sparse.iterations);
    }
}

/* The one graph of the text; NULL (and a line) when it cannot be read. */
static concord_graph *read_one(const char *name, const char *text, size_t size) {
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    if (concord_read_buffer(text, size, name, CONCORD_FORMAT_FG, &graphs, &count, error,
                            sizeof error, NULL, NULL) != CONCORD_OK) {
        printf("%-34s %s\n", name, error);
        return NULL;
    }
    concord_graph *g = graphs[0];
    graphs[0] = NULL;
    concord_free_graphs(graphs, count);
    return g;
}

static void bench_generated(const gen_spec *spec, double scale, int repeats,
                            shape_means *means) {
    char name[128];
    gen_name(spec, name, sizeof name);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    int written = out && gen_write_fg(out, spec) == 0;
    if (out) written &= fclose(out) == 0;
    concord_graph *g = written ? read_one(name, text, size) : NULL;
    if (!written) printf("%-34s cannot be generated\n", name);
    if (g) bench_graph(name, g, scale, repeats, means);
    concord_graph_free(g);
    free(text);
}

static void bench_file(const char *data, const char *file, double scale, int repeats) {
    char path[1024];
    snprintf(path, sizeof path, "%s/ad3/%s", data, file);
    FILE *in = fopen(path, "rb");
    if (!in) {
        printf("%-34s skipped: %s not found\n", file, path);
        return;
    }
    fclose(in);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    if (concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error, NULL,
                          NULL) != CONCORD_OK) {
        printf("%-34s %s\n", file, error);
        return;
    }
    for (size_t k = 0; k < count; ++k) bench_graph(file, graphs[k], scale, repeats, NULL);
    concord_free_graphs(graphs, count);
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    int repeats = argc > 2 ? atoi(argv[2]) : 9;
    if (repeats < 1 || repeats > 1000) repeats = 9;
    const double scale = argc > 3 ? atof(argv[3]) : 1.0;
    if (!(scale > 0.0 && isfinite(scale))) {
        fprintf(stderr, "bench_structured: SCALE must be a positive number\n");
        return 2;
    }
    if (scale != 1.0) printf("every score times %g\n", scale);
    printf("%-34s %6s %6s %9s %7s %-10s %14s %14s %9s %7s %-10s\n", "graph", "vars", "facts",
           "map ms", "iters", "status", "value", "bound", "sparse ms", "iters", "status");
    shape_means means[2] = {{.name = "parsing"}, {.name = "sequences"}};
    for (int k = 0; k < gen_suite_count; ++k)
        bench_generated(&gen_suite[k], scale, repeats, &means[gen_suite[k].shape]);
    bench_file(data, "parsing01.fg", scale, repeats);
    bench_file(data, "parsing02.fg", scale, repeats);
    printf("\ngeometric means    %9s %7s %9s %7s\n", "map ms", "iters", "sparse ms", "iters");
    for (int s = 0; s < 2; ++s) {
        const shape_means *m = &means[s];
        if (m->count == 0) continue;
        printf("%-10s (%2d)    %9.3f %7.0f %9.3f %7.0f\n", m->name, m->count,
               exp(m->log_map_ms / m->count), exp(m->log_map_iters / m->count),
               exp(m->log_sparse_ms / m->count), exp(m->log_sparse_iters / m->count));
    }
    return 0;
}
