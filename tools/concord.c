/*
 * The concord command-line tool: `concord solve FILE` reads every graph in
 * a file, solves each, prints a summary (human or JSON) and writes the
 * posteriors in AD3's output layout. Input is read and validated entirely
 * before anything is solved or written, and the posteriors file is written
 * to a temporary name and renamed at the end, so bad input never leaves a
 * partial output file behind.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "concord.h"

enum exit_code {
    EXIT_OK = 0,
    EXIT_USAGE = 2,
    EXIT_BAD_INPUT = 3,
    EXIT_NOT_CONVERGED = 4,
    EXIT_FAILURE_OTHER = 5
};

static const char usage_text[] =
    "usage: concord solve [options] FILE\n"
    "       concord --help | --version\n"
    "\n"
    "Solves every factor graph in FILE (AD3 .fg format, or a UAI model; '-'\n"
    "reads stdin) and prints one summary per graph: status, value, upper bound,\n"
    "iterations, integrality and time.\n"
    "\n"
    "options:\n"
    "  --format fg|uai    input format (default: from the extension, .uai is UAI)\n"
    "  --algorithm ad3|sparse\n"
    "                     ad3: LP-MAP by AD3 (the default); sparse: LP-SparseMAP,\n"
    "                     max theta.u + phi.v - |u|^2/2 over the local polytope\n"
    "  --max-iter N       iteration cap (default 100000)\n"
    "  --tol X            residual tolerance per link (default 1e-6)\n"
    "  --eta X            initial penalty, relative to the score scale (default 0.1)\n"
    "  --no-adapt         keep the penalty fixed\n"
    "  --relaxation X     over-relaxation factor in [1, 2) (default 1: none)\n"
    "  --accelerate N     Anderson acceleration memory, 0 turns it off (default 8;\n"
    "                     at most 5 during the first 80 iterations); it switches\n"
    "                     itself off where it does not pay\n"
    "  --time-limit S     stop each solve after S seconds (status time_limit; exit 4)\n"
    "  --evid FILE        UAI evidence file (observed variables are fixed)\n"
    "  --decode           also decode an integral assignment (always done for UAI):\n"
    "                     max-posterior rounding, then local search when the LP\n"
    "                     solution is fractional; reports its value and the gap\n"
    "  --uai-map FILE     write the decoded assignment of a UAI model in the UAI\n"
    "                     result format ('MAP', then N and the N states)\n"
    "  -o, --output FILE  write posteriors to FILE in AD3's layout: per graph, one\n"
    "                     value per variable, a blank line, one value per factor\n"
    "                     additional output, a blank line (%.17g, round-trip exact)\n"
    "  --json             print one JSON object per graph on stdout (with\n"
    "                     map_value, violated and gap when decoding)\n"
    "  -q, --quiet        no summary (posteriors and JSON are still written)\n"
    "  -v, --verbose      print solver progress to stderr (every 25 iterations:\n"
    "                     residuals, penalty, dual bound, time)\n"
    "  -h, --help         this help\n"
    "  --version          the library version\n"
    "\n"
    "Without -o and --json, posteriors go to stdout and the summary to stderr.\n"
    "\n"
    "exit status: 0 solved; 2 usage error; 3 bad input (unreadable or malformed\n"
    "file, with file:line in the message, or a graph whose constraints admit no\n"
    "solution); 4 some graph did not converge, or stopped at the time limit (its\n"
    "posteriors are still written);\n"
    "5 numerical or output failure.\n";

typedef struct options {
    const char *input;
    const char *output;
    const char *evidence;
    const char *uai_map;
    int decode;
    int sparse; /* --algorithm sparse */
    concord_format format;
    concord_settings settings;
    int json;
    int quiet;
    int verbose;
} options;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "concord: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'concord --help'.\n");
    return EXIT_USAGE;
}

static int parse_double(const char *flag, const char *text, double *out) {
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(x)) {
        fprintf(stderr, "concord: %s expects a number, not '%s'\n", flag, text);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_int(const char *flag, const char *text, int32_t *out) {
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (errno || end == text || *end || x < 1 || x > INT32_MAX) {
        fprintf(stderr, "concord: %s expects a positive integer, not '%s'\n", flag, text);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

/* -v: one line per progress report of the solver. */
static int print_progress(void *context, const concord_progress *p) {
    (void)context;
    fprintf(stderr,
            "iter %6d  primal %.3e  dual %.3e  eta %.3g  bound %.12g  value %.12g  %.3f s\n",
            p->iteration, p->primal_residual, p->dual_residual, p->eta, p->upper_bound,
            p->value, p->seconds);
    return 0;
}

static int parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    concord_default_settings(&o->settings);
    for (int k = 2; k < argc; ++k) {
        const char *arg = argv[k];
        const char *value = k + 1 < argc ? argv[k + 1] : NULL;
        int takes_value = !strcmp(arg, "--format") || !strcmp(arg, "--algorithm") ||
                          !strcmp(arg, "--max-iter") || !strcmp(arg, "--tol") ||
                          !strcmp(arg, "--eta") || !strcmp(arg, "--relaxation") ||
                          !strcmp(arg, "--accelerate") || !strcmp(arg, "--time-limit") ||
                          !strcmp(arg, "-o") || !strcmp(arg, "--output") ||
                          !strcmp(arg, "--evid") || !strcmp(arg, "--uai-map");
        if (takes_value && !value) return usage_error("%s needs a value", arg);
        if (!strcmp(arg, "--format")) {
            if (!strcmp(value, "fg")) o->format = CONCORD_FORMAT_FG;
            else if (!strcmp(value, "uai")) o->format = CONCORD_FORMAT_UAI;
            else return usage_error("unknown format '%s' (expected fg or uai)", value);
        } else if (!strcmp(arg, "--algorithm")) {
            if (!strcmp(value, "ad3")) o->sparse = 0;
            else if (!strcmp(value, "sparse")) o->sparse = 1;
            else return usage_error("unknown algorithm '%s' (expected ad3 or sparse)", value);
        } else if (!strcmp(arg, "--max-iter")) {
            if (parse_int(arg, value, &o->settings.max_iter)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--tol")) {
            if (parse_double(arg, value, &o->settings.tol)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--eta")) {
            if (parse_double(arg, value, &o->settings.eta)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--time-limit")) {
            if (parse_double(arg, value, &o->settings.time_limit)) return EXIT_USAGE;
            if (o->settings.time_limit <= 0.0)
                return usage_error("--time-limit expects a positive number of seconds, not '%s'",
                                   value);
        } else if (!strcmp(arg, "--relaxation")) {
            if (parse_double(arg, value, &o->settings.relaxation)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--accelerate")) {
            char *end;
            long m = strtol(value, &end, 10);
            if (end == value || *end || m < 0 || m > 16)
                return usage_error("--accelerate expects an integer in [0, 16], not '%s'", value);
            o->settings.acceleration = (int32_t)m;
        } else if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
            o->output = value;
        } else if (!strcmp(arg, "--evid")) {
            o->evidence = value;
        } else if (!strcmp(arg, "--uai-map")) {
            o->uai_map = value;
        } else if (!strcmp(arg, "--decode")) {
            o->decode = 1;
        } else if (!strcmp(arg, "--no-adapt")) {
            o->settings.adapt_eta = false;
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            o->verbose = 1;
        } else if (!strcmp(arg, "--json")) {
            o->json = 1;
        } else if (!strcmp(arg, "-q") || !strcmp(arg, "--quiet")) {
            o->quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error("unknown option '%s'", arg);
        } else if (o->input) {
            return usage_error("more than one input file ('%s')", arg);
        } else {
            o->input = arg;
        }
        if (takes_value) ++k;
    }
    if (!o->input) return usage_error("%s", "no input file");
    if ((o->output && !o->output[0]) || (o->uai_map && !o->uai_map[0]))
        return usage_error("%s", "an output path is empty");
    char message[128];
    if (concord_check_settings(&o->settings, message, sizeof message))
        return usage_error("%s", message);
    if (o->format == CONCORD_FORMAT_AUTO) {
        size_t n = strlen(o->input);
        o->format = n >= 4 && !strcmp(o->input + n - 4, ".uai") ? CONCORD_FORMAT_UAI
                                                                 : CONCORD_FORMAT_FG;
    }
    if (o->format != CONCORD_FORMAT_UAI && (o->evidence || o->uai_map))
        return usage_error("%s", "--evid and --uai-map need a UAI model (.uai or --format uai)");
    if (o->evidence && !strcmp(o->input, "-"))
        return usage_error("%s", "--evid needs the model in a file, not on stdin");
    if (o->format == CONCORD_FORMAT_UAI) o->decode = 1;
    if (o->verbose) o->settings.progress = print_progress;
    return EXIT_OK;
}

static void print_warning(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "concord: warning: %s\n", message);
}

/* Reads all of stdin (at most 2 GiB, as the file readers); NULL on failure. */
static char *read_stdin(size_t *size_out) {
    size_t size = 0, cap = 1 << 16;
    char *data = malloc(cap);
    while (data) {
        if (size == cap) {
            char *p = cap >= ((size_t)1 << 31) ? NULL : realloc(data, cap * 2);
            if (!p) {
                free(data);
                return NULL;
            }
            data = p;
            cap *= 2;
        }
        size_t got = fread(data + size, 1, cap - size, stdin);
        size += got;
        if (got == 0) break;
    }
    if (data && ferror(stdin)) {
        free(data);
        return NULL;
    }
    *size_out = size;
    return data;
}

static int read_input(const options *o, concord_graph ***graphs, size_t *count) {
    char error[1024] = "";
    int rc;
    int from_stdin = !strcmp(o->input, "-");
    size_t size = 0;
    char *data = NULL;
    if (from_stdin && !(data = read_stdin(&size))) {
        fprintf(stderr, "concord: could not read stdin\n");
        return EXIT_BAD_INPUT;
    }
    if (o->format == CONCORD_FORMAT_UAI) {
        concord_graph *g = NULL;
        rc = from_stdin ? concord_read_uai_buffer(data, size, "<stdin>", NULL, 0, NULL, &g,
                                                  error, sizeof error)
                        : concord_read_uai(o->input, o->evidence, &g, error, sizeof error);
        if (rc == CONCORD_OK) {
            *graphs = malloc(sizeof **graphs);
            if (!*graphs) {
                concord_graph_free(g);
                rc = CONCORD_ENOMEM;
            } else {
                (*graphs)[0] = g;
                *count = 1;
            }
        }
    } else if (from_stdin) {
        rc = concord_read_buffer(data, size, "<stdin>", o->format, graphs, count, error,
                                 sizeof error, print_warning, NULL);
    } else {
        rc = concord_read_file(o->input, o->format, graphs, count, error, sizeof error,
                               print_warning, NULL);
    }
    free(data);
    if (rc != CONCORD_OK) {
        fprintf(stderr, "concord: %s\n", error[0] ? error : concord_strerror(rc));
        return rc == CONCORD_ENOMEM ? EXIT_FAILURE_OTHER : EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static void json_number(FILE *fp, const char *key, double x) {
    if (isfinite(x)) fprintf(fp, ",\"%s\":%.17g", key, x);
    else fprintf(fp, ",\"%s\":null", key);
}

static void print_json(FILE *fp, size_t k, const concord_graph *g, const concord_info *info,
                       const concord_decoding *dec) {
    fprintf(fp, "{\"graph\":%zu,\"status\":\"%s\"", k + 1, concord_status_name(info->status));
    json_number(fp, "value", info->value);
    json_number(fp, "upper_bound", info->upper_bound);
    fprintf(fp, ",\"iterations\":%d,\"integral\":%s", info->iterations,
            info->integral ? "true" : "false");
    json_number(fp, "seconds", info->seconds);
    json_number(fp, "primal_residual", info->primal_residual);
    json_number(fp, "dual_residual", info->dual_residual);
    json_number(fp, "eta", info->eta);
    fprintf(fp, ",\"factor_solves\":%lld,\"oracle_calls\":%lld", (long long)info->factor_solves,
            (long long)info->oracle_calls);
    if (dec) {
        json_number(fp, "map_value", dec->value);
        json_number(fp, "gap", info->upper_bound - dec->value);
        fprintf(fp, ",\"violated\":%d", dec->violated);
    }
    fprintf(fp, ",\"variables\":%d,\"factors\":%d}\n", concord_num_variables(g),
            concord_num_factors(g));
}

static void print_summary(FILE *fp, size_t k, const concord_info *info,
                          const concord_decoding *dec) {
    fprintf(fp, "graph %zu: %s, value %.10g, upper bound %.10g, %d iterations, %.3g s",
            k + 1, concord_status_name(info->status), info->value, info->upper_bound,
            info->iterations, info->seconds);
    if (info->status != CONCORD_STATUS_INTEGRAL && info->status != CONCORD_STATUS_FRACTIONAL)
        fprintf(fp, ", solution %s", info->integral ? "integral" : "fractional");
    if (dec && dec->violated == 0)
        fprintf(fp, "; decoded value %.10g (gap %.3g)", dec->value, info->upper_bound - dec->value);
    else if (dec)
        fprintf(fp, "; decoded assignment violates %d factors", dec->violated);
    fputc('\n', fp);
}

/* One posterior per line, round-trip exact. Most posteriors are exactly 0
 * or 1, which are written without printf's multi-precision conversion (on
 * AD3's srl graphs that conversion cost more than a tenth of the run). */
static void write_value(FILE *fp, double x) {
    if (x == 0.0 && !signbit(x)) fputs("0\n", fp);
    else if (x == 1.0) fputs("1\n", fp);
    else fprintf(fp, "%.17g\n", x);
}

static void write_posteriors(FILE *fp, const concord_graph *g, const concord_solver *s) {
    const double *u = concord_solver_variables(s), *v = concord_solver_additionals(s);
    for (int32_t i = 0; i < concord_num_variables(g); ++i) write_value(fp, u[i]);
    fputc('\n', fp);
    for (int32_t k = 0; k < concord_num_additionals(g); ++k) write_value(fp, v[k]);
    fputc('\n', fp);
}

/* The UAI result format: "MAP", then N and the decoded state of each. */
static int write_uai_map(FILE *fp, const concord_graph *g, const concord_solver *s) {
    int32_t n = concord_num_multi_variables(g);
    int32_t *labels = malloc((size_t)(n ? n : 1) * sizeof *labels);
    if (!labels || concord_solver_decoded_labels(s, labels) != CONCORD_OK) {
        free(labels);
        return -1;
    }
    fprintf(fp, "MAP\n%d", n);
    for (int32_t m = 0; m < n; ++m) fprintf(fp, " %d", labels[m]);
    fputc('\n', fp);
    free(labels);
    return 0;
}

/* An output file written under a temporary name beside its path and
 * renamed over it only when everything succeeded. */
typedef struct output_file {
    const char *path;
    char tmp[4096];
    FILE *fp;
} output_file;

static int output_open(output_file *out, const char *path) {
    out->path = path;
    out->fp = NULL;
    out->tmp[0] = '\0';
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device, pipe or symbolic link: write through it in place. */
        out->fp = fopen(path, "w");
        return out->fp ? 0 : -1;
    }
    if ((size_t)snprintf(out->tmp, sizeof out->tmp, "%s.tmpXXXXXX", path) >= sizeof out->tmp)
        return -1;
    int fd = mkstemp(out->tmp);
    if (fd < 0) return -1;
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(out->fp = fdopen(fd, "w"))) {
        close(fd);
        unlink(out->tmp);
        out->fp = NULL;
        return -1;
    }
    return 0;
}

/* Closes the file and renames it into place when keep; removes it
 * otherwise. Returns -1 when writing failed. */
static int output_close(output_file *out, int keep) {
    if (!out->fp) return 0;
    int failed = ferror(out->fp) != 0;
    failed |= fclose(out->fp) != 0;
    out->fp = NULL;
    if (!out->tmp[0]) return keep && failed ? -1 : 0; /* written in place */
    if (keep && !failed && rename(out->tmp, out->path) == 0) return 0;
    unlink(out->tmp);
    return keep ? -1 : 0;
}

/* The order in which graphs' statuses decide the exit status: an output
 * failure, then bad input, then a graph that did not converge. */
static int severity(int status) {
    switch (status) {
    case EXIT_FAILURE_OTHER: return 3;
    case EXIT_BAD_INPUT: return 2;
    case EXIT_NOT_CONVERGED: return 1;
    default: return 0;
    }
}

/* Solves graph k, prints its summary and writes its outputs; returns its
 * exit status. */
static int solve_one(const options *o, size_t k, const concord_graph *g, concord_solver *solver,
                     FILE *summary, FILE *posteriors, FILE *map) {
    concord_info info;
    int rc = o->sparse ? concord_solver_sparse(solver, &o->settings, &info)
                       : concord_solver_map(solver, &o->settings, &info);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED && rc != CONCORD_EINFEASIBLE) {
        fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_solver_last_error(solver));
        return EXIT_FAILURE_OTHER;
    }
    if (rc == CONCORD_EINFEASIBLE) {
        /* an infeasible graph is bad input; the others are still solved */
        fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_solver_last_error(solver));
        if (o->json) print_json(stdout, k, g, &info, NULL);
        else if (!o->quiet) print_summary(summary, k, &info, NULL);
        return EXIT_BAD_INPUT;
    }
    concord_decoding decoding;
    const concord_decoding *dec = NULL;
    if (o->decode) {
        if (concord_solver_decode(solver, &decoding) != CONCORD_OK) {
            fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_solver_last_error(solver));
            return EXIT_FAILURE_OTHER;
        }
        dec = &decoding;
    }
    if (o->json) print_json(stdout, k, g, &info, dec);
    else if (!o->quiet) print_summary(summary, k, &info, dec);
    if (posteriors) write_posteriors(posteriors, g, solver);
    if (map && write_uai_map(map, g, solver)) {
        fprintf(stderr, "concord: out of memory writing %s\n", o->uai_map);
        return EXIT_FAILURE_OTHER;
    }
    return rc == CONCORD_ENOTCONVERGED ? EXIT_NOT_CONVERGED : EXIT_OK;
}

static int run_solve(const options *o) {
    concord_graph **graphs;
    size_t count;
    int status = read_input(o, &graphs, &count);
    if (status != EXIT_OK) return status;

    output_file post = {0}, map = {0};
    if ((o->output && output_open(&post, o->output)) ||
        (o->uai_map && output_open(&map, o->uai_map))) {
        fprintf(stderr, "concord: cannot write %s: %s\n", post.fp ? o->uai_map : o->output,
                strerror(errno));
        output_close(&post, 0);
        concord_free_graphs(graphs, count);
        return EXIT_FAILURE_OTHER;
    }
    FILE *posteriors = post.fp ? post.fp : (o->json ? NULL : stdout);
    FILE *summary = posteriors == stdout ? stderr : stdout;

    for (size_t k = 0; k < count && status != EXIT_FAILURE_OTHER; ++k) {
        concord_solver *solver;
        if (concord_solver_new(graphs[k], &solver) != CONCORD_OK) {
            fprintf(stderr, "concord: graph %zu: out of memory\n", k + 1);
            status = EXIT_FAILURE_OTHER;
            break;
        }
        int graph_status = solve_one(o, k, graphs[k], solver, summary, posteriors, map.fp);
        if (severity(graph_status) > severity(status)) status = graph_status;
        concord_solver_free(solver);
    }
    int keep = status != EXIT_FAILURE_OTHER;
    int failed = output_close(&post, keep) | output_close(&map, keep);
    if (posteriors == stdout && fflush(stdout) != 0) failed = -1;
    if (failed) {
        fprintf(stderr, "concord: failed writing the output\n");
        status = EXIT_FAILURE_OTHER;
    }
    concord_free_graphs(graphs, count);
    return status;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("concord %s\n", concord_version());
        return EXIT_OK;
    }
    if (strcmp(argv[1], "solve")) return usage_error("unknown command '%s'", argv[1]);
    for (int k = 2; k < argc; ++k) {
        if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
    }
    options o;
    int status = parse_options(argc, argv, &o);
    if (status != EXIT_OK) return status;
    return run_solve(&o);
}
