/*
 * LP-MAP dual bounds over time: iterations and CPU time until the dual
 * bound is within a relative gap (default 1e-3) of the LP optimum, for AD3
 * (concord_solver_map), PSDD (each step-size rule) and MPLP, on AD3's
 * mln_large.fg and the UAI 2014 Grids (and any .fg or .uai file given).
 * The LP optimum is AD3's value at tolerance 1e-9. Every method reports
 * its bound through the progress callback every 10 iterations (MPLP
 * every sweep), which stops it once the bound is close enough; a method
 * that does not get there within the time limit shows its last gap. Each
 * method solves with a new solver, whose first solve touches its memory:
 * the minor page faults during the solve are printed beside the time.
 *
 *   bench_dual [DATA_DIR] [GAP] [TIME_LIMIT] [FILE...]
 *       DATA_DIR defaults to ../shared/data, GAP to 1e-3, TIME_LIMIT to 60 s.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_common.h"
#include "concord.h"

typedef struct watch {
    double target, start, bound, seconds;
    int32_t iteration;
    bool reached;
} watch;

static int watch_progress(void *context, const concord_progress *p) {
    watch *w = context;
    w->bound = p->upper_bound;
    w->iteration = p->iteration;
    w->seconds = bench_now() - w->start;
    if (p->upper_bound <= w->target) w->reached = true;
    return w->reached;
}

static long minor_faults(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

typedef enum method { AD3, PSDD_SQRT, PSDD_DECREASE, PSDD_POLYAK, MPLP, METHODS } method;
static const char *const names[METHODS] = {"AD3", "PSDD sqrt", "PSDD decrease", "PSDD Polyak",
                                           "MPLP"};

static void run_method(concord_graph *g, method m, double optimum, double gap, double limit) {
    concord_solver *s;
    if (concord_solver_new(g, &s) != CONCORD_OK) return;
    concord_settings st;
    concord_default_settings(&st);
    st.max_iter = 10000000;
    st.time_limit = limit;
    st.bound_every = 10;
    st.tol = 1e-12;
    st.acyclic = false;
    watch w = {optimum + gap * fabs(optimum), 0.0, INFINITY, NAN, 0, false};
    st.progress = watch_progress;
    st.progress_context = &w;
    if (m == PSDD_DECREASE) st.psdd_step = CONCORD_STEP_DECREASE;
    if (m == PSDD_POLYAK) st.psdd_step = CONCORD_STEP_POLYAK;
    concord_info info;
    const long faults_before = minor_faults();
    w.start = bench_now();
    int rc = m == AD3    ? concord_solver_map(s, &st, &info)
             : m == MPLP ? concord_solver_mplp(s, &st, &info)
                         : concord_solver_psdd(s, &st, &info);
    const double seconds = bench_now() - w.start;
    const long faults = minor_faults() - faults_before;
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) {
        printf("  %-14s %s\n", names[m], concord_solver_last_error(s));
    } else if (w.reached) {
        printf("  %-14s %10d %10.3f %7ld   reached (bound %.9g)\n", names[m],
               (int)w.iteration, w.seconds, faults, w.bound);
    } else {
        const double bound = fmin(w.bound, info.upper_bound);
        printf("  %-14s %10d %10.3f %7ld   not reached: gap %.3g (bound %.9g, %s)\n",
               names[m], (int)info.iterations, seconds, faults, (bound - optimum) / fabs(optimum),
               bound, concord_status_name(info.status));
    }
    concord_solver_free(s);
}

static void bench_file(const char *path, double gap, double limit) {
    concord_graph *g = NULL, **graphs = NULL;
    size_t count = 0;
    char error[512], evidence[1100];
    snprintf(evidence, sizeof evidence, "%s.evid", path);
    const bool uai = strstr(path, ".uai") != NULL;
    FILE *ev = uai ? fopen(evidence, "r") : NULL;
    if (ev) fclose(ev);
    int rc = uai ? concord_read_uai(path, ev ? evidence : NULL, &g, error, sizeof error)
                 : concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                                     NULL, NULL);
    if (rc != CONCORD_OK) {
        printf("%s: %s\n", path, error);
        return;
    }
    if (!uai) g = graphs[0];
    concord_solver *s;
    concord_settings st;
    concord_default_settings(&st);
    st.tol = 1e-9;
    st.acyclic = false;
    concord_info info;
    if (concord_solver_new(g, &s) != CONCORD_OK) return;
    concord_solver_map(s, &st, &info);
    concord_solver_free(s);
    const double optimum = info.value;
    printf("%s: LP optimum %.9g (AD3 at tolerance 1e-9, %s, bound %.9g); to gap %g:\n", path,
           optimum, concord_status_name(info.status), info.upper_bound, gap);
    printf("  %-14s %10s %10s %7s\n", "method", "iterations", "seconds", "faults");
    for (int m = 0; m < METHODS; ++m) run_method(g, (method)m, optimum, gap, limit);
    if (uai) concord_graph_free(g);
    else concord_free_graphs(graphs, count);
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    const double gap = argc > 2 && atof(argv[2]) > 0 ? atof(argv[2]) : 1e-3;
    const double limit = argc > 3 && atof(argv[3]) > 0 ? atof(argv[3]) : 60.0;
    printf("CPU seconds; bounds every 10 iterations (MPLP: every sweep)\n");
    if (argc > 4) {
        for (int k = 4; k < argc; ++k) bench_file(argv[k], gap, limit);
        return 0;
    }
    static const char *const files[] = {"ad3/mln_large.fg", "uai2014/Grids_26.uai",
                                        "uai2014/Grids_28.uai", "uai2014/Grids_30.uai"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", data, files[k]);
        bench_file(path, gap, limit);
    }
    return 0;
}
