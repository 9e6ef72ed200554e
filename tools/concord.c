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
    "Solves every factor graph in FILE (AD3 .fg format; '-' reads stdin) and\n"
    "prints one summary per graph: status, value, upper bound, iterations,\n"
    "integrality and time.\n"
    "\n"
    "options:\n"
    "  --format fg|uai    input format (default: from the extension, .uai is UAI)\n"
    "  --algorithm ad3    inference algorithm (ad3: LP-MAP by AD3, the default)\n"
    "  --max-iter N       iteration cap (default 10000)\n"
    "  --tol X            residual tolerance per link (default 1e-6)\n"
    "  --eta X            initial penalty, relative to the score scale (default 0.1)\n"
    "  --no-adapt         keep the penalty fixed\n"
    "  --relaxation X     over-relaxation factor in [1, 2) (default 1.5)\n"
    "  -o, --output FILE  write posteriors to FILE in AD3's layout: per graph, one\n"
    "                     value per variable, a blank line, one value per factor\n"
    "                     additional output, a blank line (%.17g, round-trip exact)\n"
    "  --json             print one JSON object per graph on stdout\n"
    "  -q, --quiet        no summary (posteriors and JSON are still written)\n"
    "  -v, --verbose      print solver progress to stderr\n"
    "  -h, --help         this help\n"
    "  --version          the library version\n"
    "\n"
    "Without -o and --json, posteriors go to stdout and the summary to stderr.\n"
    "\n"
    "exit status: 0 solved; 2 usage error; 3 bad input (unreadable or malformed\n"
    "file, with file:line in the message); 4 some graph did not converge (its\n"
    "posteriors are still written); 5 numerical or output failure.\n";

typedef struct options {
    const char *input;
    const char *output;
    concord_format format;
    concord_settings settings;
    int json;
    int quiet;
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

static int parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    concord_default_settings(&o->settings);
    for (int k = 2; k < argc; ++k) {
        const char *arg = argv[k];
        const char *value = k + 1 < argc ? argv[k + 1] : NULL;
        int takes_value = !strcmp(arg, "--format") || !strcmp(arg, "--algorithm") ||
                          !strcmp(arg, "--max-iter") || !strcmp(arg, "--tol") ||
                          !strcmp(arg, "--eta") || !strcmp(arg, "--relaxation") ||
                          !strcmp(arg, "-o") || !strcmp(arg, "--output");
        if (takes_value && !value) return usage_error("%s needs a value", arg);
        if (!strcmp(arg, "--format")) {
            if (!strcmp(value, "fg")) o->format = CONCORD_FORMAT_FG;
            else if (!strcmp(value, "uai")) o->format = CONCORD_FORMAT_UAI;
            else return usage_error("unknown format '%s' (expected fg or uai)", value);
        } else if (!strcmp(arg, "--algorithm")) {
            if (strcmp(value, "ad3"))
                return usage_error("unknown algorithm '%s' (expected ad3)", value);
        } else if (!strcmp(arg, "--max-iter")) {
            if (parse_int(arg, value, &o->settings.max_iter)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--tol")) {
            if (parse_double(arg, value, &o->settings.tol)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--eta")) {
            if (parse_double(arg, value, &o->settings.eta)) return EXIT_USAGE;
        } else if (!strcmp(arg, "--relaxation")) {
            if (parse_double(arg, value, &o->settings.relaxation)) return EXIT_USAGE;
        } else if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
            o->output = value;
        } else if (!strcmp(arg, "--no-adapt")) {
            o->settings.adapt_eta = false;
        } else if (!strcmp(arg, "-v") || !strcmp(arg, "--verbose")) {
            o->settings.verbosity += 1;
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
    return EXIT_OK;
}

static void print_warning(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "concord: warning: %s\n", message);
}

static int read_input(const options *o, concord_graph ***graphs, size_t *count) {
    char error[1024];
    int rc;
    if (!strcmp(o->input, "-")) {
        size_t size = 0, cap = 1 << 16;
        char *data = malloc(cap);
        while (data) {
            if (size == cap) {
                char *p = realloc(data, cap * 2);
                if (!p) break;
                data = p;
                cap *= 2;
            }
            size_t got = fread(data + size, 1, cap - size, stdin);
            size += got;
            if (got == 0) break;
        }
        if (!data || ferror(stdin)) {
            free(data);
            fprintf(stderr, "concord: could not read stdin\n");
            return EXIT_BAD_INPUT;
        }
        rc = concord_read_buffer(data, size, "<stdin>", o->format, graphs, count, error,
                                 sizeof error, print_warning, NULL);
        free(data);
    } else {
        rc = concord_read_file(o->input, o->format, graphs, count, error, sizeof error,
                               print_warning, NULL);
    }
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

static void print_json(FILE *fp, size_t k, const concord_graph *g, const concord_info *info) {
    fprintf(fp, "{\"graph\":%zu,\"status\":\"%s\"", k + 1, concord_status_name(info->status));
    json_number(fp, "value", info->value);
    json_number(fp, "upper_bound", info->upper_bound);
    fprintf(fp, ",\"iterations\":%d,\"integral\":%s", info->iterations,
            info->integral ? "true" : "false");
    json_number(fp, "seconds", info->seconds);
    json_number(fp, "primal_residual", info->primal_residual);
    json_number(fp, "dual_residual", info->dual_residual);
    fprintf(fp, ",\"factor_solves\":%lld,\"eta\":%.6g", (long long)info->factor_solves, info->eta);
    fprintf(fp, ",\"variables\":%d,\"factors\":%d}\n", concord_num_variables(g),
            concord_num_factors(g));
}

static void print_summary(FILE *fp, size_t k, const concord_info *info) {
    fprintf(fp, "graph %zu: %s, value %.10g, upper bound %.10g, %d iterations, %.3g s",
            k + 1, concord_status_name(info->status), info->value, info->upper_bound,
            info->iterations, info->seconds);
    if (info->status != CONCORD_STATUS_INTEGRAL && info->status != CONCORD_STATUS_FRACTIONAL)
        fprintf(fp, ", solution %s", info->integral ? "integral" : "fractional");
    fputc('\n', fp);
}

static int write_posteriors(FILE *fp, const concord_graph *g) {
    const double *u = concord_solution_variables(g), *v = concord_solution_additionals(g);
    for (int32_t i = 0; i < concord_num_variables(g); ++i) fprintf(fp, "%.17g\n", u[i]);
    fputc('\n', fp);
    for (int32_t k = 0; k < concord_num_additionals(g); ++k) fprintf(fp, "%.17g\n", v[k]);
    fputc('\n', fp);
    return ferror(fp) ? -1 : 0;
}

/* Opens a temporary file beside `path` (renamed over it on success). */
static FILE *open_temporary(const char *path, char *tmp, size_t size) {
    if ((size_t)snprintf(tmp, size, "%s.tmpXXXXXX", path) >= size) return NULL;
    int fd = mkstemp(tmp);
    if (fd < 0) return NULL;
    FILE *fp = fdopen(fd, "w");
    if (!fp) {
        close(fd);
        unlink(tmp);
    }
    return fp;
}

static int run_solve(const options *o) {
    concord_graph **graphs;
    size_t count;
    int status = read_input(o, &graphs, &count);
    if (status != EXIT_OK) return status;

    char tmp[4096];
    FILE *post = NULL;
    if (o->output) {
        post = open_temporary(o->output, tmp, sizeof tmp);
        if (!post) {
            fprintf(stderr, "concord: cannot write %s: %s\n", o->output, strerror(errno));
            concord_free_graphs(graphs, count);
            return EXIT_FAILURE_OTHER;
        }
    } else if (!o->json) {
        post = stdout;
    }
    FILE *summary = post == stdout ? stderr : stdout;

    int failed_output = 0;
    for (size_t k = 0; k < count; ++k) {
        concord_info info;
        int rc = concord_solve_map(graphs[k], &o->settings, &info);
        if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) {
            fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_last_error(graphs[k]));
            status = EXIT_FAILURE_OTHER;
            if (rc != CONCORD_ENUMERIC) break;
        }
        if (rc == CONCORD_ENOTCONVERGED && status == EXIT_OK) status = EXIT_NOT_CONVERGED;
        if (o->json) print_json(stdout, k, graphs[k], &info);
        else if (!o->quiet) print_summary(summary, k, &info);
        if (post && concord_solution_variables(graphs[k]) && write_posteriors(post, graphs[k]))
            failed_output = 1;
    }
    if (post && post != stdout) {
        if (fclose(post) != 0) failed_output = 1;
        if (failed_output || status == EXIT_FAILURE_OTHER || rename(tmp, o->output) != 0) {
            if (!failed_output && status != EXIT_FAILURE_OTHER) failed_output = 1;
            unlink(tmp);
        }
    } else if (post && fflush(post) != 0) {
        failed_output = 1;
    }
    if (failed_output) {
        fprintf(stderr, "concord: failed writing the posteriors\n");
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
