/*
 * Exact MAP side by side: concord_solver_exact (in this process), toulbar2
 * and AD3's --exact (ad3_multi, built outside this repository), on the UAI
 * 2014 MAP instances (with their evidence), AD3's UAI models, and AD3's
 * coref and parsing graphs. For each, the median CPU time over repeated
 * runs (one run when the first reaches the time limit), the status, value
 * and upper bound. toulbar2 and AD3 are timed as whole processes (their
 * CPU time from wait4: start-up and reading included); concord's column is
 * the solve alone, and "read" is its reading. AD3's answer is its
 * posteriors file: an integral assignment is evaluated in concord's graph,
 * and counts as solved when it reaches the proven optimum; AD3 reads no
 * evidence, so a model with evidence is written out with the observed
 * variables reduced to their observed state. AD3 turns a zero potential
 * into a score of -1000 where concord and toulbar2 forbid the state.
 *
 *   bench_exact [DATA_DIR] [REPEATS] [TIME_LIMIT] [INSTANCE...]
 *       DATA_DIR defaults to ../shared/data, REPEATS to 3, TIME_LIMIT to
 *       60 (seconds, for each tool); INSTANCE names restrict the list.
 *   TOULBAR2=path (default: toulbar2 on PATH), AD3_MULTI=path (no AD3
 *   column without it).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "concord.h"

typedef struct instance {
    const char *path; /* under DATA_DIR */
    bool evidence;    /* path.evid exists */
} instance;

static const instance instances[] = {
    {"uai2014/Segmentation_12.uai", true}, {"uai2014/Segmentation_14.uai", true},
    {"uai2014/Promedas_30.uai", true},     {"uai2014/Promedas_20.uai", true},
    {"uai2014/Promedas_11.uai", true},     {"uai2014/Grids_26.uai", true},
    {"uai2014/Grids_28.uai", true},        {"uai2014/Grids_30.uai", true},
    {"uai2014/ObjectDetection_11.uai", true}, {"uai2014/ProteinFolding_11.uai", true},
    {"uai2014/wcsp_15.uai", true},         {"ad3/grid3x3.uai", false},
    {"ad3/grid4x4.uai", false},            {"ad3/grid10x10.f2.wrap.uai", false},
    {"ad3/GEOM30a_3.uai", false},          {"ad3/Family2Dominant.1.5loci.uai", false},
    {"ad3/10_14_s.binary.uai", false},     {"ad3/deer_rescaled_0034.K10.F1.25.model.uai", false},
    {"ad3/30markers.uai", false},          {"ad3/or_chain_10.fg.uai", false},
    {"ad3/coref.fg", false},               {"ad3/parsing01.fg", false},
    {"ad3/parsing02.fg", false},
};

static char work_dir[] = "/tmp/bench-exact-XXXXXX";

/* ---- child processes ------------------------------------------------------- */

/* Runs argv with stdout and stderr to out_path, its CPU time limited to
 * `limit` seconds (then SIGXCPU/SIGKILL end it). Returns the exit code (or
 * 128 + signal), the CPU seconds it used in *cpu. */
static int run(const char *const *argv, const char *out_path, double limit, double *cpu) {
    pid_t child = fork();
    if (child < 0) return -1;
    if (child == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        struct rlimit rl = {(rlim_t)ceil(limit), (rlim_t)ceil(limit) + 1};
        setrlimit(RLIMIT_CPU, &rl);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) return -1;
    *cpu = (double)usage.ru_utime.tv_sec + 1e-6 * (double)usage.ru_utime.tv_usec +
           (double)usage.ru_stime.tv_sec + 1e-6 * (double)usage.ru_stime.tv_usec;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, fp) != (size_t)n) n = 0;
    if (text) text[n] = '\0';
    fclose(fp);
    return text;
}

/* The executable `name` on PATH, or NULL. */
static const char *on_path(const char *name, char *buf, size_t size) {
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, size, "%.*s/%s", (int)n, path, name);
        if (n && access(buf, X_OK) == 0) return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

/* ---- a UAI model with its evidence applied, for AD3 ------------------------ */

/* Writes the model at `model` with each observed variable reduced to its
 * observed state (cardinality 1, its tables sliced) to `out`. Returns 0 or
 * -1. */
static int write_with_evidence(const char *model, const char *evidence, const char *out) {
    char *text = slurp(model), *ev = slurp(evidence);
    FILE *fp = fopen(out, "w");
    int rc = -1;
    if (!text || !ev || !fp) goto done;
    char *p = text, *q = ev, *end;
    char kind[32];
    int used;
    if (sscanf(p, "%31s%n", kind, &used) != 1) goto done;
    p += used;
    const long n = strtol(p, &end, 10);
    p = end;
    long *card = malloc((size_t)n * sizeof(long)), *seen = malloc((size_t)n * sizeof(long));
    if (!card || !seen) goto done;
    for (long i = 0; i < n; ++i) card[i] = strtol(p, &p, 10), seen[i] = -1;
    const long n_ev = strtol(q, &q, 10);
    for (long e = 0; e < n_ev; ++e) {
        const long v = strtol(q, &q, 10);
        seen[v] = strtol(q, &q, 10);
    }
    fprintf(fp, "%s\n%ld\n", kind, n);
    for (long i = 0; i < n; ++i) fprintf(fp, "%ld ", seen[i] >= 0 ? 1L : card[i]);
    const long m = strtol(p, &p, 10);
    fprintf(fp, "\n%ld\n", m);
    long *scope = malloc((size_t)m * 8 * sizeof(long)), *arity = malloc((size_t)m * sizeof(long));
    if (!scope || !arity) goto done;
    for (long f = 0; f < m; ++f) {
        arity[f] = strtol(p, &p, 10);
        if (arity[f] > 8) goto done;
        fprintf(fp, "%ld", arity[f]);
        for (long j = 0; j < arity[f]; ++j) {
            scope[8 * f + j] = strtol(p, &p, 10);
            fprintf(fp, " %ld", scope[8 * f + j]);
        }
        fprintf(fp, "\n");
    }
    for (long f = 0; f < m; ++f) {
        const long entries = strtol(p, &p, 10);
        long kept = 1;
        for (long j = 0; j < arity[f]; ++j)
            kept *= seen[scope[8 * f + j]] >= 0 ? 1 : card[scope[8 * f + j]];
        fprintf(fp, "\n%ld\n", kept);
        for (long e = 0; e < entries; ++e) {
            const double x = strtod(p, &p);
            /* the entry's state of each variable, the last fastest */
            long rest = e, keep = 1;
            for (long j = arity[f] - 1; j >= 0; --j) {
                const long v = scope[8 * f + j];
                if (seen[v] >= 0 && rest % card[v] != seen[v]) keep = 0;
                rest /= card[v];
            }
            if (keep) fprintf(fp, " %.17g", x);
        }
        fprintf(fp, "\n");
    }
    rc = 0;
    free(scope);
    free(arity);
    free(card);
    free(seen);
done:
    free(text);
    free(ev);
    if (fp) fclose(fp);
    return rc;
}

/* ---- results ------------------------------------------------------------------ */

typedef struct result {
    const char *status; /* "optimal", "time_limit", "gave up", "wrong", ... */
    double seconds, value, bound;
    long long nodes;
} result;

/* concord: read once, solve `repeats` times with a fresh solver each. */
static result run_concord(const char *path, const char *evidence, int repeats, double limit,
                          double *read_seconds) {
    result r = {"error", NAN, NAN, NAN, 0};
    concord_graph *g = NULL, **graphs = NULL;
    size_t count = 0;
    char error[512];
    double t0 = bench_now();
    const bool uai = strstr(path, ".uai") != NULL;
    int rc = uai ? concord_read_uai(path, evidence, &g, error, sizeof error)
                 : concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                                     NULL, NULL);
    *read_seconds = bench_now() - t0;
    if (rc != CONCORD_OK) return r;
    if (!uai) g = graphs[0];
    concord_settings st;
    concord_default_settings(&st);
    st.time_limit = limit;
    double times[100];
    int runs = 0;
    for (; runs < repeats && runs < 100; ++runs) {
        concord_solver *s;
        if (concord_solver_new(g, &s) != CONCORD_OK) break;
        concord_info info;
        concord_exact_info xi = {0};
        t0 = bench_now();
        concord_solver_exact(s, &st, &info);
        times[runs] = bench_now() - t0;
        concord_solver_exact_info(s, &xi);
        r.status = concord_status_name(info.status);
        r.value = info.value;
        r.bound = info.upper_bound;
        r.nodes = xi.nodes;
        concord_solver_free(s);
        if (info.status != CONCORD_STATUS_OPTIMAL) {
            runs += 1;
            break;
        }
    }
    r.seconds = runs ? bench_median(times, runs) : NAN;
    if (uai) concord_graph_free(g);
    else concord_free_graphs(graphs, count);
    return r;
}

static result run_toulbar2(const char *tb2, const char *path, const char *evidence, int repeats,
                           double limit) {
    result r = {"error", NAN, NAN, NAN, 0};
    char out[600], timer[64];
    snprintf(out, sizeof out, "%s/toulbar2.txt", work_dir);
    snprintf(timer, sizeof timer, "-timer=%d", (int)limit);
    const char *argv[] = {tb2, path, evidence ? evidence : timer, evidence ? timer : NULL, NULL};
    double times[100];
    int runs = 0;
    for (; runs < repeats && runs < 100; ++runs) {
        double cpu = NAN;
        run(argv, out, limit + 5.0, &cpu);
        times[runs] = cpu;
        char *text = slurp(out);
        const char *opt = text ? strstr(text, "Optimum:") : NULL;
        const char *energy = opt ? strstr(opt, "energy:") : NULL;
        double e;
        if (energy && sscanf(energy, "energy: %lf", &e) == 1) {
            r.status = "optimal";
            r.value = -e;
        } else {
            /* the last "New solution" line */
            r.status = "time_limit";
            for (const char *s = text; s && (s = strstr(s, "New solution:")); ++s) {
                const char *en = strstr(s, "energy:");
                if (en && sscanf(en, "energy: %lf", &e) == 1) r.value = -e;
            }
        }
        free(text);
        if (strcmp(r.status, "optimal")) {
            runs += 1;
            break;
        }
    }
    r.seconds = runs ? bench_median(times, runs) : NAN;
    return r;
}

/* A UAI model's cardinalities (*n of them), malloc'ed; and the observed
 * state of each variable (-1: none) from its evidence file (may be NULL). */
static long *model_cardinalities(const char *model, const char *evidence, long *n,
                                 long **observed) {
    char *text = slurp(model), *ev = evidence ? slurp(evidence) : NULL;
    long *card = NULL;
    *observed = NULL;
    if (text) {
        char *p = text;
        while (*p && (*p < '0' || *p > '9')) ++p; /* past MARKOV or BAYES */
        *n = strtol(p, &p, 10);
        card = malloc((size_t)*n * sizeof *card);
        *observed = malloc((size_t)*n * sizeof **observed);
        for (long i = 0; card && *observed && i < *n; ++i) {
            card[i] = strtol(p, &p, 10);
            (*observed)[i] = -1;
        }
        if (ev && *observed) {
            char *q = ev;
            const long k = strtol(q, &q, 10);
            for (long e = 0; e < k; ++e) {
                const long v = strtol(q, &q, 10);
                const long x = strtol(q, &q, 10);
                if (v >= 0 && v < *n) (*observed)[v] = x;
            }
        }
    }
    free(text);
    free(ev);
    return card;
}

/* AD3's posteriors, evaluated in concord's graph g: for a UAI model, one
 * value per state of each model variable (one for an observed variable,
 * as written for AD3), whose state on gives the variable's label; for an
 * .fg graph, one value per variable. *integral: the posteriors were an
 * assignment. The value is -INFINITY when a factor forbids it. */
static double ad3_value(const char *posteriors, const concord_graph *g, const char *model,
                        const char *evidence, bool *integral) {
    char *text = slurp(posteriors);
    *integral = false;
    if (!text) return NAN;
    const bool uai = strstr(model, ".uai") != NULL;
    const int32_t n = concord_num_variables(g);
    double *x = calloc((size_t)(n ? n : 1), sizeof *x);
    const char *p = text;
    char *end;
    bool ok = x != NULL;
    if (uai) {
        long m = 0, *observed = NULL;
        long *card = model_cardinalities(model, evidence, &m, &observed);
        int32_t *labels = malloc((size_t)(m ? m : 1) * sizeof *labels);
        ok = ok && card && observed && labels && m == concord_num_multi_variables(g);
        for (long i = 0; ok && i < m; ++i) {
            const long states = observed[i] >= 0 ? 1 : card[i];
            int on = 0;
            for (long t = 0; t < states && ok; ++t) {
                const double v = strtod(p, &end);
                if (end == p) ok = false;
                p = end;
                if (v > 1.0 - 1e-6) {
                    on += 1;
                    labels[i] = (int32_t)(observed[i] >= 0 ? observed[i] : t);
                } else if (v > 1e-6) {
                    on += 2;
                }
            }
            ok = ok && on == 1;
        }
        /* a label concord removed (a zero potential) is not an assignment of
         * its graph: the value is then -INFINITY */
        if (ok && concord_assignment_from_labels(g, labels, x) != CONCORD_OK) {
            free(card);
            free(observed);
            free(labels);
            free(x);
            free(text);
            *integral = true;
            return -INFINITY;
        }
        free(card);
        free(observed);
        free(labels);
    } else {
        for (int32_t i = 0; ok && i < n; ++i) {
            const double v = strtod(p, &end);
            if (end == p) ok = false;
            p = end;
            if (v > 1.0 - 1e-6) x[i] = 1.0;
            else if (v >= 1e-6) ok = false;
        }
    }
    double value = NAN;
    concord_solver *s = NULL;
    concord_decoding dec;
    if (ok && concord_solver_new(g, &s) == CONCORD_OK &&
        concord_solver_evaluate(s, x, &dec) == CONCORD_OK) {
        value = dec.violated ? -INFINITY : dec.value;
        *integral = true;
    }
    concord_solver_free(s);
    free(x);
    free(text);
    return value;
}

/* AD3's --exact on the model (with evidence applied in a file of its own),
 * judged against concord's optimum. */
static result run_ad3(const char *ad3, const char *model, const char *evidence, int repeats,
                      double limit, double optimum) {
    result r = {"error", NAN, NAN, NAN, 0};
    const bool uai = strstr(model, ".uai") != NULL;
    char input[600], out[600], post[600], graphs[1200], posteriors[700];
    snprintf(input, sizeof input, "%s/with_evidence.uai", work_dir);
    snprintf(out, sizeof out, "%s/ad3.txt", work_dir);
    snprintf(post, sizeof post, "%s/ad3_posteriors.txt", work_dir);
    if (evidence && uai && write_with_evidence(model, evidence, input)) return r;
    snprintf(graphs, sizeof graphs, "--file_graphs=%s", evidence && uai ? input : model);
    snprintf(posteriors, sizeof posteriors, "--file_posteriors=%s", post);
    const char *argv[] = {ad3, uai ? "--format=uai" : "--format=ad3", graphs, posteriors,
                          "--exact=true", NULL};
    concord_graph *g = NULL, **gs = NULL;
    size_t count = 0;
    char error[512];
    if (uai ? concord_read_uai(model, evidence, &g, error, sizeof error)
            : concord_read_file(model, CONCORD_FORMAT_FG, &gs, &count, error, sizeof error, NULL,
                                NULL))
        return r;
    if (!uai) g = gs[0];
    double times[100];
    int runs = 0;
    for (; runs < repeats && runs < 100; ++runs) {
        double cpu = NAN;
        remove(post);
        const int code = run(argv, out, limit, &cpu);
        times[runs] = cpu;
        bool integral;
        r.value = code == 0 ? ad3_value(post, g, model, evidence, &integral) : NAN;
        if (code != 0) r.status = code >= 128 ? "time_limit" : "error";
        else if (!integral) r.status = "fractional";
        else if (r.value >= optimum - 1e-6 * fmax(1.0, fabs(optimum))) r.status = "optimal";
        else r.status = "suboptimal";
        if (strcmp(r.status, "optimal")) {
            runs += 1;
            break;
        }
    }
    r.seconds = runs ? bench_median(times, runs) : NAN;
    if (uai) concord_graph_free(g);
    else concord_free_graphs(gs, count);
    return r;
}

static bool chosen(int argc, char **argv, const char *path) {
    if (argc <= 4) return true;
    for (int k = 4; k < argc; ++k)
        if (strstr(path, argv[k])) return true;
    return false;
}

static void print_result(const result *r) {
    printf(" | %-10s %9.4f %14.6f", r->status, r->seconds, r->value);
}

int main(int argc, char **argv) {
    const char *data = bench_data_dir(argc, argv);
    const int repeats = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 3;
    const double limit = argc > 3 && atof(argv[3]) > 0 ? atof(argv[3]) : 60.0;
    char buf[1024];
    const char *tb2 = getenv("TOULBAR2");
    if (!tb2) tb2 = on_path("toulbar2", buf, sizeof buf);
    const char *ad3 = getenv("AD3_MULTI");
    if (!mkdtemp(work_dir)) {
        perror("bench_exact: mkdtemp");
        return 1;
    }
    printf("median CPU seconds of %d runs (one when the first reaches the %g s limit)\n", repeats,
           limit);
    printf("toulbar2: %s; AD3: %s\n", tb2 ? tb2 : "(not found)", ad3 ? ad3 : "(AD3_MULTI unset)");
    printf("%-42s | %-10s %9s %14s %14s %7s %8s", "instance", "concord", "s", "value",
           "upper bound", "nodes", "read s");
    printf(" | %-10s %9s %14s", "toulbar2", "s", "value");
    if (ad3) printf(" | %-10s %9s %14s", "AD3 exact", "s", "value");
    printf("\n");
    for (size_t k = 0; k < sizeof instances / sizeof instances[0]; ++k) {
        if (!chosen(argc, argv, instances[k].path)) continue;
        char path[1024], evidence[1100];
        snprintf(path, sizeof path, "%s/%s", data, instances[k].path);
        snprintf(evidence, sizeof evidence, "%s.evid", path);
        const char *ev = instances[k].evidence ? evidence : NULL;
        if (access(path, R_OK) != 0) {
            printf("%-42s | not found\n", instances[k].path);
            continue;
        }
        double read_seconds;
        const result c = run_concord(path, ev, repeats, limit, &read_seconds);
        printf("%-42s | %-10s %9.4f %14.6f %14.6f %7lld %8.4f", instances[k].path, c.status,
               c.seconds, c.value, c.bound, c.nodes, read_seconds);
        fflush(stdout);
        if (tb2 && strstr(path, ".uai")) {
            const result t = run_toulbar2(tb2, path, ev, repeats, limit);
            print_result(&t);
        } else {
            printf(" | %-10s %9s %14s", "-", "-", "-");
        }
        fflush(stdout);
        if (ad3) {
            const double optimum = strcmp(c.status, "optimal") ? INFINITY : c.value;
            const result a = run_ad3(ad3, path, ev, repeats, limit, optimum);
            print_result(&a);
        }
        printf("\n");
        fflush(stdout);
    }
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf %s", work_dir);
    if (system(rm) != 0) return 1;
    return 0;
}
