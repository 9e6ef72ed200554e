/*
 * The concord command-line tool: `concord solve FILE` reads the graphs of a
 * file one at a time (concord_reader_next), solves each, prints its summary
 * (human or JSON), writes its posteriors and decoded assignment, and frees
 * it before reading the next, so memory holds the input and one graph.
 * Output files are written under temporary names and renamed into place
 * when the run ends well: a malformed graph, a failure or a signal
 * (handlers remove the temporaries, then let the signal end the process)
 * never leaves a partial output file. Every graph of a file has its block
 * in the outputs, an infeasible one included, so blocks stay aligned with
 * graphs. solve_graph() is the one place that runs the solver.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
    "usage: concord solve [options] [--] FILE\n"
    "       concord --help (or: concord help) | --version\n"
    "\n"
    "Solves every factor graph in FILE (AD3 .fg format, or a UAI model; '-'\n"
    "reads stdin), one graph at a time, and prints one summary per graph:\n"
    "status, value (or that no solution was found), upper bound, iterations,\n"
    "integrality and time.\n"
    "\n"
    "options (a value may follow its flag as the next argument, or after '='\n"
    "as in --tol=1e-8; numbers are decimal; '--' ends the options, so that FILE\n"
    "may start with '-'; a flag marked for some algorithms, as exact: or\n"
    "ad3, sparse, exact:, is ignored by the others with a warning):\n"
    "  --format fg|uai    input format (default: from the extension, .uai in any\n"
    "                     case is UAI)\n"
    "  --algorithm ad3|sparse|exact|psdd|mplp\n"
    "                     ad3: LP-MAP by AD3 (the default); sparse: LP-SparseMAP,\n"
    "                     max theta.u + phi.v - |u|^2/2 over the local polytope;\n"
    "                     exact: MAP with a certificate, by dynamic programming\n"
    "                     on an acyclic graph, else branch and bound over AD3\n"
    "                     (status optimal when proven; the posteriors are the\n"
    "                     best assignment); psdd: LP-MAP dual bound by projected\n"
    "                     subgradient; mplp: LP-MAP dual bound by MPLP\n"
    "  --max-iter N       iteration cap, a positive integer up to 2147483647\n"
    "                     (default 100000); exact: of each branch-and-bound\n"
    "                     node's solve (--node-limit and --time-limit cap the\n"
    "                     search)\n"
    "  --tol X            residual tolerance per link, 0 < X < 1 (default 1e-6)\n"
    "  --eta X            ad3, sparse, exact: initial penalty, relative to the\n"
    "                     score scale, in [1e-4, 1e4] (default 0.1)\n"
    "  --no-adapt         ad3, sparse, exact: keep the penalty fixed\n"
    "  --relaxation X     ad3, sparse, exact: over-relaxation factor in [1, 2)\n"
    "                     (default 1: none)\n"
    "  --accelerate N     ad3, sparse, exact: Anderson acceleration memory in\n"
    "                     [0, 16], 0 turns it off (default 8); it begins at\n"
    "                     iteration 40 (LP-SparseMAP: at once) and uses at most\n"
    "                     5 until iteration 80; it switches itself off where it\n"
    "                     does not pay\n"
    "  --time-limit S     stop each graph's solve after S seconds (S > 0); it is\n"
    "                     then reported with status time_limit\n"
    "  --node-limit N     exact: solve at most N branch-and-bound nodes, a positive\n"
    "                     integer (default: no limit); then status node_limit\n"
    "  --search best|depth\n"
    "                     exact: the order of the search, best first (the\n"
    "                     default) or depth first\n"
    "  --exact-gap X      exact: the gap that counts as closed, relative to the\n"
    "                     best value, 0 <= X < 1 (default 1e-9)\n"
    "  --heuristic-every N\n"
    "                     exact: decode an assignment at every N-th node that is\n"
    "                     neither pruned nor integral, 0: at the root only\n"
    "                     (default 1)\n"
    "  --no-acyclic       ad3, exact: never solve an acyclic graph by dynamic\n"
    "                     programming (they do by default)\n"
    "  --psdd-step sqrt|decrease|polyak\n"
    "                     psdd: the step-size rule: eta/sqrt(t) (the default),\n"
    "                     eta/(1+k) after k rises of the dual, or Polyak's step\n"
    "                     to the best rounded value\n"
    "  --psdd-eta X       psdd: the initial step, relative to the score scale,\n"
    "                     X >= 1e-12 (default 1)\n"
    "  --evid FILE        UAI evidence file (observed variables are fixed)\n"
    "  --decode           decode an integral assignment (when the LP solution is\n"
    "                     fractional: max-posterior rounding and sequential\n"
    "                     fixing, each refined by local search, the better kept)\n"
    "                     and print it on stdout in place of the posteriors, in\n"
    "                     the layout of --decode-output (in JSON: as \"assignment\"\n"
    "                     in each object); the summary reports its value and the\n"
    "                     gap. A UAI model is always decoded for the summary\n"
    "  --decode-output FILE\n"
    "                     write the decoded assignment to FILE (implies --decode):\n"
    "                     per graph one 0/1 value per variable and a blank line;\n"
    "                     for a UAI model the UAI result format ('MAP', then N\n"
    "                     and the N states), neither written nor printed when\n"
    "                     the decoded assignment has probability zero, which a\n"
    "                     warning says\n"
    "  --uai-map FILE     the same as --decode-output FILE, for a UAI model only\n"
    "  -o, --output FILE  write posteriors to FILE in AD3's layout: per graph, one\n"
    "                     value per variable, a blank line, one value per factor\n"
    "                     additional output, a blank line (%.17g, round-trip\n"
    "                     exact); for a UAI model, one line per model variable\n"
    "                     with its states' values (0 for states the evidence or a\n"
    "                     zero potential removed), then a blank line\n"
    "  --json             print one JSON object per graph on stdout (raw numbers;\n"
    "                     map_value, violated and gap when decoding)\n"
    "  -q, --quiet        no summary (posteriors and JSON are still written)\n"
    "  -v, --verbose      print solver progress to stderr: every 25 iterations\n"
    "                     (every 5 near the end; mplp: every sweep), the\n"
    "                     residuals, penalty, dual bound, value and time;\n"
    "                     exact: when the best value improves and every 100\n"
    "                     nodes, the nodes solved and open, bound, best value\n"
    "  -h, --help         this help\n"
    "  --version          the library version\n"
    "\n"
    "stdout carries one thing: the JSON objects with --json, else the decoded\n"
    "assignment with --decode (without --decode-output), else the posteriors\n"
    "when -o is not given, else the summary. The summary goes to stderr when\n"
    "stdout carries something else. Where round-off alone puts a value above\n"
    "the upper bound (a negative gap), the summary shows the bound raised to it\n"
    "(JSON has the raw numbers); a larger excess stays visible: a point just\n"
    "outside the polytope (an LP-MAP point within --tol of it) can score above\n"
    "the bound, and an unconverged one far above it (PSDD's average), which the\n"
    "summary marks with how far its factors' copies disagree.\n"
    "\n"
    "A flag given twice takes its last value, but for the files (-o, --evid,\n"
    "--decode-output, --uai-map), which may be given once.\n"
    "\n"
    "A graph whose constraints admit no solution is reported as infeasible; its\n"
    "blocks of posteriors and decoded assignment hold 'nan' in every place (a UAI\n"
    "result file is not written), so later graphs' blocks stay aligned. So do\n"
    "those of a solve stopped at its limit before it had any solution.\n"
    "Output files are written under a temporary name and renamed at the end (a\n"
    "symbolic link's target likewise, created if it does not exist yet; devices,\n"
    "pipes and the file stdout goes to are written in place),\n"
    "with a replaced file's permissions, and its owner and group as far as the\n"
    "user may give them; when the run fails or is interrupted they are removed\n"
    "and an existing file is left as it was. The posteriors and the decoded\n"
    "assignment cannot share a file, nor replace the input or evidence file, nor\n"
    "take the file or pipe that stderr goes to, or stdout when it carries\n"
    "something else (as /dev/stdout names it; with -q and without --json it\n"
    "may). Graphs are read one at a time, so when graph k is malformed, what\n"
    "went to stdout for graphs 1..k-1 stays there.\n"
    "\n"
    "exit status:\n"
    "  0  every graph solved (also when a UAI model's decoded assignment has\n"
    "     probability zero: no result is written, a warning says so)\n"
    "  2  usage error (nothing is read or written)\n"
    "  3  bad input: FILE cannot be read or is malformed (file:line on stderr, no\n"
    "     output file is written), or some graph is infeasible (the others are\n"
    "     solved and the outputs written)\n"
    "  4  some graph stopped at --max-iter, --time-limit or --node-limit, or the\n"
    "     psdd or mplp bound stalled (status stalled), before converging or\n"
    "     proving its optimum (its posteriors are still written)\n"
    "  5  numerical failure, out of memory, an algorithm that cannot take the\n"
    "     graph (mplp on a KNAPSACK factor), or an output could not be written\n"
    "     (no output file is kept)\n"
    "  When several apply, the status is the first of 5, 3, 4. A signal (SIGINT,\n"
    "  SIGTERM, SIGHUP, SIGPIPE) ends the run as usual, without temporary files.\n";

typedef struct options {
    const char *input;
    const char *output;        /* -o */
    const char *evidence;      /* --evid */
    const char *decode_output; /* --decode-output or --uai-map */
    int print_decoded;         /* --decode without a file: the assignment on stdout */
    int decode;                /* decode every graph */
    concord_algorithm algorithm; /* --algorithm */
    concord_format format;
    concord_settings settings;
    int json;
    int quiet;
} options;

/* -v: one line per progress report of the solver (context: the
 * algorithm). */
static int print_progress(void *context, const concord_progress *p) {
    const concord_algorithm *algorithm = context;
    if (*algorithm == CONCORD_ALGORITHM_EXACT)
        fprintf(stderr,
                "nodes %8lld  open %7lld  bound %.12g  best %.12g  iter %10d  %.3f s\n",
                (long long)p->nodes, (long long)p->open_nodes, p->upper_bound, p->value,
                p->iteration, p->seconds);
    else
        fprintf(stderr,
                "iter %6d  primal %.3e  dual %.3e  eta %.3g  bound %.12g  value %.12g  %.3f s\n",
                p->iteration, p->primal_residual, p->dual_residual, p->eta, p->upper_bound,
                p->value, p->seconds);
    return 0;
}

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------ */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("concord: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'concord --help'.\n", stderr);
    return EXIT_USAGE;
}

/* Whether text is one of strtod's (or strtoll's base 0) hexadecimal
 * forms, 0x10 or 0x1p3, which no flag takes. */
static int is_hexadecimal(const char *text) {
    if (*text == '-' || *text == '+') ++text;
    return text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

enum interval_end { OPEN, CLOSED };

/* A decimal number from lo to hi (hi INFINITY: no upper end), each end
 * included when CLOSED; `flag` is the flag as the user typed it. */
static int parse_double(const char *flag, const char *text, double lo, enum interval_end lo_end,
                        double hi, enum interval_end hi_end, double *out) {
    char range[64];
    if (hi == INFINITY)
        snprintf(range, sizeof range, "%s %g", lo_end == CLOSED ? "at least" : "greater than", lo);
    else
        snprintf(range, sizeof range, "in %c%g, %g%c", lo_end == CLOSED ? '[' : '(', lo, hi,
                 hi_end == CLOSED ? ']' : ')');
    if (is_hexadecimal(text))
        return usage_error("%s expects a decimal number, not hexadecimal '%s'", flag, text);
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    /* strtod skips leading spaces; trailing ones are refused, so these are */
    if (end == text || *end || isspace((unsigned char)text[0]) ||
        (errno != ERANGE && !isfinite(x)))
        return usage_error("%s expects a number, not '%s'", flag, text);
    if (errno == ERANGE)
        return usage_error("%s: '%s' is out of range (outside a double's normal range, "
                           "%.2g to %.2g in magnitude); %s must be %s",
                           flag, text, DBL_MIN, DBL_MAX, flag, range);
    if (!((lo_end == CLOSED ? x >= lo : x > lo) && (hi_end == CLOSED ? x <= hi : x < hi)))
        return usage_error("%s must be %s, not '%s'", flag, range, text);
    *out = x;
    return EXIT_OK;
}

/* A decimal integer in [lo, hi]. */
static int parse_integer(const char *flag, const char *text, long long lo, long long hi,
                         long long *out) {
    if (is_hexadecimal(text))
        return usage_error("%s expects a decimal integer, not hexadecimal '%s'", flag, text);
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno || end == text || *end || isspace((unsigned char)text[0]) || x < lo || x > hi) {
        if (lo == 1)
            return usage_error("%s expects a positive integer (at most %lld), not '%s'", flag, hi,
                               text);
        return usage_error("%s expects an integer in [%lld, %lld], not '%s'", flag, lo, hi, text);
    }
    *out = x;
    return EXIT_OK;
}

static int parse_int32(const char *flag, const char *text, int32_t lo, int32_t hi,
                       int32_t *out) {
    long long x;
    int rc = parse_integer(flag, text, lo, hi, &x);
    if (!rc) *out = (int32_t)x;
    return rc;
}

enum flag_id {
    F_FORMAT, F_ALGORITHM, F_MAX_ITER, F_TOL, F_ETA, F_NO_ADAPT, F_RELAXATION, F_ACCELERATE,
    F_TIME_LIMIT, F_EVID, F_DECODE, F_DECODE_OUTPUT, F_UAI_MAP, F_OUTPUT, F_JSON, F_QUIET,
    F_VERBOSE, F_NODE_LIMIT, F_SEARCH, F_EXACT_GAP, F_HEURISTIC_EVERY, F_NO_ACYCLIC,
    F_PSDD_STEP, F_PSDD_ETA
};

/* --algorithm's values, indexed by concord_algorithm. */
static const char *const algorithm_names[] = {"ad3", "sparse", "exact", "psdd", "mplp"};
enum { N_ALGORITHMS = sizeof algorithm_names / sizeof algorithm_names[0] };
_Static_assert(N_ALGORITHMS == CONCORD_ALGORITHM_MPLP + 1,
               "algorithm_names names every concord_algorithm, in order");

/* The names of the algorithms in `set` (bit k: concord_algorithm k) as
 * "exact", "ad3 or exact", "ad3, sparse or exact", into out. */
static void list_algorithms(unsigned set, char *out, size_t size) {
    out[0] = '\0';
    unsigned left = set;
    for (size_t a = 0; left && a < N_ALGORITHMS; ++a) {
        if (!(left & (1u << a))) continue;
        left &= ~(1u << a);
        snprintf(out + strlen(out), size - strlen(out), "%s%s",
                 !out[0] ? "" : left ? ", " : " or ", algorithm_names[a]);
    }
}

/* The algorithms a flag applies to: ALL, or a set of these bits. */
#define ONLY(algorithm) (1u << CONCORD_ALGORITHM_##algorithm)
enum { ALL = 0, ADMM = ONLY(AD3) | ONLY(SPARSE) | ONLY(EXACT) };

typedef struct flag_spec {
    const char *name, *alias;
    enum flag_id id;
    int takes_value;
    unsigned algorithms; /* ALL, or those it applies to (others ignore it, with a warning) */
} flag_spec;

static const flag_spec flags[] = {
    {"--format", NULL, F_FORMAT, 1, ALL},
    {"--algorithm", NULL, F_ALGORITHM, 1, ALL},
    {"--max-iter", NULL, F_MAX_ITER, 1, ALL},
    {"--tol", NULL, F_TOL, 1, ALL},
    {"--eta", NULL, F_ETA, 1, ADMM},
    {"--no-adapt", NULL, F_NO_ADAPT, 0, ADMM},
    {"--relaxation", NULL, F_RELAXATION, 1, ADMM},
    {"--accelerate", NULL, F_ACCELERATE, 1, ADMM},
    {"--time-limit", NULL, F_TIME_LIMIT, 1, ALL},
    {"--node-limit", NULL, F_NODE_LIMIT, 1, ONLY(EXACT)},
    {"--search", NULL, F_SEARCH, 1, ONLY(EXACT)},
    {"--exact-gap", NULL, F_EXACT_GAP, 1, ONLY(EXACT)},
    {"--heuristic-every", NULL, F_HEURISTIC_EVERY, 1, ONLY(EXACT)},
    {"--no-acyclic", NULL, F_NO_ACYCLIC, 0, ONLY(AD3) | ONLY(EXACT)},
    {"--psdd-step", NULL, F_PSDD_STEP, 1, ONLY(PSDD)},
    {"--psdd-eta", NULL, F_PSDD_ETA, 1, ONLY(PSDD)},
    {"--evid", NULL, F_EVID, 1, ALL},
    {"--decode", NULL, F_DECODE, 0, ALL},
    {"--decode-output", NULL, F_DECODE_OUTPUT, 1, ALL},
    {"--uai-map", NULL, F_UAI_MAP, 1, ALL},
    {"--output", "-o", F_OUTPUT, 1, ALL},
    {"--json", NULL, F_JSON, 0, ALL},
    {"--quiet", "-q", F_QUIET, 0, ALL},
    {"--verbose", "-v", F_VERBOSE, 0, ALL},
};

static const flag_spec *find_flag(const char *name, size_t len) {
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; ++k) {
        const char *a = flags[k].name, *b = flags[k].alias;
        if ((strlen(a) == len && !strncmp(a, name, len)) ||
            (b && strlen(b) == len && !strncmp(b, name, len)))
            return &flags[k];
    }
    return NULL;
}

/* Takes the path of a file flag, which may be given once (of two files,
 * one would be lost): a second is a usage error naming the first. */
static int take_path_once(const char **path, const char *flag, const char *value,
                          const char *already) {
    if (*path) return usage_error("%s: %s '%s'", flag, already, *path);
    *path = value;
    return EXIT_OK;
}

/* Applies one flag; `flag` is the flag as typed (for messages). */
static int apply_flag(options *o, enum flag_id id, const char *flag, const char *value,
                      const char **uai_map) {
    concord_settings *s = &o->settings;
    int rc = EXIT_OK;
    switch (id) {
    case F_FORMAT:
        if (!strcmp(value, "fg")) o->format = CONCORD_FORMAT_FG;
        else if (!strcmp(value, "uai")) o->format = CONCORD_FORMAT_UAI;
        else return usage_error("%s: unknown format '%s' (expected fg or uai)", flag, value);
        break;
    case F_ALGORITHM:
        for (size_t k = 0; k < N_ALGORITHMS; ++k)
            if (!strcmp(value, algorithm_names[k])) {
                o->algorithm = (concord_algorithm)k;
                return EXIT_OK;
            }
        {
            char all[64];
            list_algorithms((1u << N_ALGORITHMS) - 1, all, sizeof all);
            return usage_error("%s: unknown algorithm '%s' (expected %s)", flag, value, all);
        }
    case F_NODE_LIMIT: {
        long long n;
        if ((rc = parse_integer(flag, value, 1, INT64_MAX, &n))) return rc;
        s->node_limit = n;
        break;
    }
    case F_HEURISTIC_EVERY: return parse_int32(flag, value, 0, INT32_MAX, &s->heuristic_every);
    case F_SEARCH:
        if (!strcmp(value, "best")) s->search = CONCORD_SEARCH_BEST_FIRST;
        else if (!strcmp(value, "depth")) s->search = CONCORD_SEARCH_DEPTH_FIRST;
        else return usage_error("%s: unknown order '%s' (expected best or depth)", flag, value);
        break;
    case F_EXACT_GAP: return parse_double(flag, value, 0.0, CLOSED, 1.0, OPEN, &s->exact_gap);
    case F_NO_ACYCLIC: s->acyclic = false; break;
    case F_PSDD_STEP:
        if (!strcmp(value, "sqrt")) s->psdd_step = CONCORD_STEP_SQRT;
        else if (!strcmp(value, "decrease")) s->psdd_step = CONCORD_STEP_DECREASE;
        else if (!strcmp(value, "polyak")) s->psdd_step = CONCORD_STEP_POLYAK;
        else
            return usage_error("%s: unknown rule '%s' (expected sqrt, decrease or polyak)", flag,
                               value);
        break;
    case F_PSDD_ETA: return parse_double(flag, value, 1e-12, CLOSED, INFINITY, OPEN, &s->psdd_eta);
    case F_MAX_ITER: return parse_int32(flag, value, 1, INT32_MAX, &s->max_iter);
    case F_ACCELERATE: return parse_int32(flag, value, 0, 16, &s->acceleration);
    case F_TOL: return parse_double(flag, value, 0.0, OPEN, 1.0, OPEN, &s->tol);
    case F_ETA:
        return parse_double(flag, value, CONCORD_MIN_ETA, CLOSED, CONCORD_MAX_ETA, CLOSED,
                            &s->eta);
    case F_TIME_LIMIT:
        return parse_double(flag, value, 0.0, OPEN, INFINITY, OPEN, &s->time_limit);
    case F_RELAXATION: return parse_double(flag, value, 1.0, CLOSED, 2.0, OPEN, &s->relaxation);
    case F_NO_ADAPT: s->adapt_eta = false; break;
    case F_VERBOSE:
        s->progress = print_progress;
        s->progress_context = &o->algorithm;
        break;
    case F_JSON: o->json = 1; break;
    case F_QUIET: o->quiet = 1; break;
    case F_DECODE: o->print_decoded = 1; break;
    case F_EVID:
        if ((rc = take_path_once(&o->evidence, flag, value, "the evidence is already read from")))
            return rc;
        break;
    case F_OUTPUT:
        if ((rc = take_path_once(&o->output, flag, value, "the output already goes to")))
            return rc;
        break;
    case F_UAI_MAP: *uai_map = value; /* fall through */
    case F_DECODE_OUTPUT:
        if ((rc = take_path_once(&o->decode_output, flag, value,
                                 "the decoded assignment already goes to")))
            return rc;
        break;
    }
    if ((id == F_EVID || id == F_OUTPUT || id == F_UAI_MAP || id == F_DECODE_OUTPUT) && !value[0])
        return usage_error("%s needs a path, not an empty string", flag);
    if (id == F_EVID && !strcmp(value, "-"))
        return usage_error("--evid needs a path: '-' is not one (the evidence is read from a "
                           "file; stdin may carry the model)");
    if ((id == F_OUTPUT || id == F_UAI_MAP || id == F_DECODE_OUTPUT) && !strcmp(value, "-"))
        return usage_error("%s needs a path: '-' is not one (stdout carries one output; see "
                           "--help)",
                           flag);
    return EXIT_OK;
}

enum { PATH_BYTES = 4096 }; /* the longest path an output may have */

/* What writing to `path` creates, malloc'd: path itself, or for a link to
 * nothing yet the file it points to (followed through further links). */
static char *created_path(const char *path) {
    char *at = strdup(path);
    struct stat st;
    for (int depth = 0; at && depth < 40 && lstat(at, &st) == 0 && S_ISLNK(st.st_mode);
         ++depth) {
        char target[PATH_BYTES];
        const ssize_t n = readlink(at, target, sizeof target - 1);
        if (n < 0) break;
        target[n] = '\0';
        const char *slash = strrchr(at, '/');
        const int dir_length = target[0] == '/' || !slash ? 0 : (int)(slash - at) + 1;
        char *next = malloc((size_t)dir_length + (size_t)n + 1);
        if (next) sprintf(next, "%.*s%s", dir_length, at, target);
        free(at);
        at = next;
    }
    return at;
}

/* The absolute name a file to be created at `path` gets (its directory
 * resolved, a link to nothing yet followed), malloc'd; NULL when the
 * directory does not exist. */
static char *name_to_create(const char *link_or_path) {
    char *path = created_path(link_or_path);
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    const char *base = slash ? slash + 1 : path;
    char *name = real ? malloc(strlen(real) + strlen(base) + 2) : NULL;
    if (name) sprintf(name, "%s/%s", real, base);
    free(real);
    free(path);
    return name;
}

/* Whether the output paths a and b name one regular file, existing or to
 * be created (one output would overwrite the other). Devices and pipes may
 * take both outputs. */
static int same_output_file(const char *a, const char *b) {
    struct stat sa, sb;
    const int a_exists = stat(a, &sa) == 0, b_exists = stat(b, &sb) == 0;
    if (a_exists || b_exists)
        return a_exists && b_exists && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
    char *na = name_to_create(a), *nb = name_to_create(b);
    const int same = na && nb && !strcmp(na, nb);
    free(na);
    free(nb);
    return same;
}

/* The standard stream (1 or 2) whose file or pipe `path` names, as
 * /dev/stdout does, or 0: written through two streams, with their own
 * buffers and offsets, one output would overwrite or cut into the other
 * (or be renamed over). Devices, a terminal or /dev/null, may take both. */
static int standard_stream_of(const char *path) {
    struct stat sp, sf;
    if (stat(path, &sp) != 0 || S_ISCHR(sp.st_mode) || S_ISBLK(sp.st_mode)) return 0;
    for (int fd = 1; fd <= 2; ++fd)
        if (fstat(fd, &sf) == 0 && sp.st_dev == sf.st_dev && sp.st_ino == sf.st_ino) return fd;
    return 0;
}

/* A usage error when the output file of `flag` is where stderr goes, or
 * where stdout goes while stdout carries something else
 * (`stdout_carries`). */
static int check_not_a_standard_stream(const char *flag, const char *path, int stdout_carries) {
    const int fd = path ? standard_stream_of(path) : 0;
    if (!fd || (fd == 1 && !stdout_carries)) return EXIT_OK;
    return usage_error("%s %s is where %s goes (stdout carries one output, stderr the "
                       "messages; see --help)",
                       flag, path, fd == 1 ? "stdout" : "stderr");
}

/* A usage error when the output file of `flag` is the input or the
 * evidence file: the run would replace what it reads. */
static int check_not_an_input(const options *o, const char *flag, const char *path) {
    const char *inputs[2] = {strcmp(o->input, "-") ? o->input : NULL, o->evidence};
    for (int k = 0; path && k < 2; ++k)
        if (inputs[k] && same_output_file(path, inputs[k]))
            return usage_error("%s %s is the %s file: the run would replace what it reads", flag,
                               path, k == 0 ? "input" : "evidence");
    return EXIT_OK;
}

static int has_uai_extension(const char *path) {
    const size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".uai");
}

/* Whether arg is a flag whose value is the next argument (not
 * --flag=value): that argument is a value, whatever it looks like. */
static int value_follows(const char *arg) {
    if (arg[0] != '-' || strchr(arg, '=')) return 0;
    const flag_spec *f = find_flag(arg, strlen(arg));
    return f && f->takes_value;
}

/* The index of the '--' that ends solve's options (argv[2..]), or argc:
 * the arguments after it are operands, even those that start with '-'. A
 * flag's value is skipped as the parser takes it ('-o --' names the file
 * '--'). */
static int end_of_options(int argc, char **argv) {
    for (int k = 2; k < argc; ++k) {
        if (!strcmp(argv[k], "--")) return k;
        k += value_follows(argv[k]);
    }
    return argc;
}

/* Warns about each flag given (set in `given`, by index in flags[]) that
 * the chosen algorithm does not use: most likely a mistyped --algorithm. */
static void warn_unused_flags(const bool *given, concord_algorithm algorithm) {
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; ++k) {
        const unsigned only = flags[k].algorithms;
        if (!given[k] || only == ALL || (only & (1u << algorithm))) continue;
        char users[64];
        list_algorithms(only, users, sizeof users);
        fprintf(stderr,
                "concord: warning: %s applies to --algorithm %s only; ignored with "
                "--algorithm %s\n",
                flags[k].name, users, algorithm_names[algorithm]);
    }
}

static int parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    concord_default_settings(&o->settings);
    const char *uai_map = NULL;
    bool given[sizeof flags / sizeof flags[0]] = {false};
    const int end = end_of_options(argc, argv);
    for (int k = 2; k < argc; ++k) {
        const char *arg = argv[k];
        if (k == end) continue;
        if (k > end || arg[0] != '-' || !arg[1]) { /* an input file, or '-' for stdin */
            if (o->input) return usage_error("more than one input file ('%s')", arg);
            o->input = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const flag_spec *f = find_flag(arg, len);
        char flag[64];
        snprintf(flag, sizeof flag, "%.*s", (int)(len < 60 ? len : 60), arg);
        if (!f) return usage_error("unknown option '%s'", flag);
        const char *value = eq ? eq + 1 : NULL;
        if (f->takes_value && !value) {
            if (k + 1 >= argc) return usage_error("%s needs a value", flag);
            value = argv[++k];
        } else if (!f->takes_value && value) {
            return usage_error("%s takes no value", flag);
        }
        int rc = apply_flag(o, f->id, flag, value, &uai_map);
        if (rc) return rc;
        given[f - flags] = true;
    }
    if (!o->input) return usage_error("no input file");
    char message[256];
    if (concord_check_settings(&o->settings, message, sizeof message))
        return usage_error("%s", message);
    if (o->format == CONCORD_FORMAT_AUTO)
        o->format = has_uai_extension(o->input) ? CONCORD_FORMAT_UAI : CONCORD_FORMAT_FG;
    if (o->format != CONCORD_FORMAT_UAI && o->evidence)
        return usage_error("--evid needs a UAI model (.uai or --format uai)");
    if (o->format != CONCORD_FORMAT_UAI && uai_map)
        return usage_error("--uai-map needs a UAI model (.uai or --format uai); "
                           "--decode-output writes a .fg graph's assignment");
    if (o->evidence && !strcmp(o->input, "-"))
        return usage_error("--evid needs the model in a file, not on stdin");
    if (o->output && o->decode_output && same_output_file(o->output, o->decode_output))
        return usage_error("the posteriors (-o %s) and the decoded assignment (%s) would go "
                           "to the same file",
                           o->output, o->decode_output);
    int rc = check_not_an_input(o, "-o", o->output);
    if (!rc) rc = check_not_an_input(o, uai_map ? "--uai-map" : "--decode-output",
                                     o->decode_output);
    if (rc) return rc;
    if (o->decode_output) o->print_decoded = 0;
    /* whether stdout carries anything but the output files: JSON, the
     * decoded assignment, the posteriors or the summary (see --help) */
    const int stdout_carries = o->json || o->print_decoded || !o->output || !o->quiet;
    rc = check_not_a_standard_stream("-o", o->output, stdout_carries);
    if (!rc) rc = check_not_a_standard_stream(uai_map ? "--uai-map" : "--decode-output",
                                              o->decode_output, stdout_carries);
    if (rc) return rc;
    o->decode = o->print_decoded || o->decode_output || o->format == CONCORD_FORMAT_UAI;
    warn_unused_flags(given, o->algorithm);
    return EXIT_OK;
}

/* ------------------------------------------------------------------------
 * Output files and signals
 * ------------------------------------------------------------------------ */

/* Temporary output files, by slot, for the signal handler to remove: the
 * paths live in static storage, and a slot is marked live only while its
 * file exists under that name (both changed with the signals blocked). */
enum { N_SLOTS = 2 };
static char temp_path[N_SLOTS][PATH_BYTES];
static volatile sig_atomic_t temp_live[N_SLOTS];
static const int cleanup_signals[] = {SIGHUP, SIGINT, SIGPIPE, SIGTERM};
enum { N_SIGNALS = sizeof cleanup_signals / sizeof cleanup_signals[0] };

/* Removes the temporaries, then lets the signal end the process as it
 * would have (the handler was reset to the default on entry). Only
 * async-signal-safe calls. */
static void on_signal(int sig) {
    for (int k = 0; k < N_SLOTS; ++k)
        if (temp_live[k]) unlink(temp_path[k]);
    raise(sig);
}

static void install_signal_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < N_SIGNALS; ++k) sigaddset(&sa.sa_mask, cleanup_signals[k]);
    for (int k = 0; k < N_SIGNALS; ++k) {
        struct sigaction old;
        /* a signal the caller ignores (nohup, background jobs) stays ignored */
        if (sigaction(cleanup_signals[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(cleanup_signals[k], &sa, NULL);
    }
}

static void block_signals(sigset_t *saved) {
    sigset_t set;
    sigemptyset(&set);
    for (int k = 0; k < N_SIGNALS; ++k) sigaddset(&set, cleanup_signals[k]);
    sigprocmask(SIG_BLOCK, &set, saved);
}

static void restore_signals(const sigset_t *saved) { sigprocmask(SIG_SETMASK, saved, NULL); }

/* An output file written under a temporary name beside its path (in slot
 * `slot`) and renamed over it only when everything succeeded, with the
 * permissions, owner and group of the file it replaces. A symbolic
 * link stays: its target is replaced, or created when the link points to
 * nothing yet, the same way. A device or a pipe is written through in place. */
typedef struct output_file {
    const char *path;
    char *target; /* the file replaced: NULL for path itself, or a link's target */
    int slot;     /* -1: written in place, or not open */
    FILE *fp;
} output_file;

/* Whether fchown's error says the owner cannot be set here (by this user,
 * or on this file system) rather than that something failed. */
static int owner_not_settable(int error) {
    return error == EPERM || error == EOPNOTSUPP || error == ENOSYS;
}

/* For a symbolic link to nothing yet, the name its target gets when
 * created through it, malloc'd; NULL for anything else (a link loop is
 * written through in place, where opening it fails). */
static char *dangling_link_target(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return NULL;
    char *target = created_path(path);
    if (target && (lstat(target, &st) == 0 || errno != ENOENT)) {
        free(target);
        return NULL;
    }
    return target;
}

static int output_open(output_file *out, const char *path, int slot) {
    out->path = path;
    out->target = NULL;
    out->slot = -1;
    out->fp = NULL;
    /* The file or pipe stdout goes to (-o /dev/stdout with -q; parse_options
     * refused it when stdout carries anything else): written through
     * stdout, at its offset. A file renamed over it replaced what the shell
     * had written there (>> log) and cut off what it wrote after. */
    if (standard_stream_of(path) == 1) {
        out->fp = stdout;
        return 0;
    }
    struct stat st;
    const int exists = stat(path, &st) == 0; /* through links */
    const int regular = exists && S_ISREG(st.st_mode);
    /* the replaced file's */
    const mode_t kept_mode = regular ? st.st_mode & 07777 : 0;
    const uid_t kept_owner = regular ? st.st_uid : 0;
    const gid_t kept_group = regular ? st.st_gid : 0;
    if (regular && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
        !(out->target = realpath(path, NULL)))
        return -1;
    if (!exists) out->target = dangling_link_target(path);
    if (exists ? !regular : !out->target && lstat(path, &st) == 0) {
        out->fp = fopen(path, "w");
        return out->fp ? 0 : -1;
    }
    const char *name = out->target ? out->target : path;
    char *tmp = temp_path[slot];
    if ((size_t)snprintf(tmp, PATH_BYTES, "%s.tmpXXXXXX", name) >= PATH_BYTES) {
        errno = ENAMETOOLONG;
        return -1;
    }
    sigset_t saved;
    block_signals(&saved);
    int fd = mkstemp(tmp);
    if (fd >= 0) temp_live[slot] = 1;
    restore_signals(&saved);
    if (fd < 0) return -1;
    out->slot = slot;
    mode_t mask = umask(0);
    umask(mask);
    /* The replaced file's owner and group, as far as this user may give
     * them and the file system keeps them (EPERM: only root gives a file
     * away, and a user may give only their own groups; some network and
     * FUSE file systems have no owners to set), set before its mode,
     * since a change of owner may clear the set-id bits. */
    int owned = !regular || fchown(fd, kept_owner, kept_group) == 0;
    if (!owned && owner_not_settable(errno))
        owned = fchown(fd, (uid_t)-1, kept_group) == 0 || owner_not_settable(errno);
    if (!owned || fchmod(fd, regular ? kept_mode : 0666 & ~mask) != 0 ||
        !(out->fp = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        block_signals(&saved);
        unlink(tmp);
        temp_live[slot] = 0;
        restore_signals(&saved);
        out->slot = -1;
        errno = e;
        return -1;
    }
    return 0;
}

/* Closes the file and, when keep, renames it over `name`; removes it
 * otherwise. Returns -1 (errno set) when writing or renaming failed. */
static int output_finish(output_file *out, const char *name, int keep) {
    if (!out->fp) return 0;
    int failed = ferror(out->fp) != 0;
    if ((out->fp == stdout ? fflush(out->fp) : fclose(out->fp)) != 0) failed = 1;
    int e = errno;
    out->fp = NULL;
    if (out->slot < 0) return keep && failed ? (errno = e ? e : EIO, -1) : 0;
    sigset_t saved;
    block_signals(&saved);
    int ok = keep && !failed && rename(temp_path[out->slot], name) == 0;
    if (!ok) e = failed ? (e ? e : EIO) : errno;
    if (!ok) unlink(temp_path[out->slot]);
    temp_live[out->slot] = 0;
    restore_signals(&saved);
    out->slot = -1;
    if (ok || !keep) return 0;
    errno = e;
    return -1;
}

/* Closes the file and renames it into place (over a link's target) when
 * keep, removes it otherwise. Returns -1 (errno set) when writing or
 * renaming failed. */
static int output_close(output_file *out, int keep) {
    const int rc = output_finish(out, out->target ? out->target : out->path, keep);
    free(out->target);
    out->target = NULL;
    return rc;
}

/* ------------------------------------------------------------------------
 * Solving one graph
 * ------------------------------------------------------------------------ */

/* What solving (and decoding) one graph produced. */
typedef struct graph_result {
    int rc;               /* the solve's code */
    concord_info info;
    const double *u, *v;  /* the solution (variables, additionals) */
    int decoded;          /* decoding below is set */
    concord_decoding decoding;
    const double *x;      /* the decoded 0/1 assignment */
    int exact;            /* exact_info below is set */
    concord_exact_info exact_info;
} graph_result;

/* Solves with `solver` (over the graph) as the options say and decodes the
 * solution when asked and there is one. This is the one function that
 * runs the solver and reads its results. Returns the solve's code
 * (CONCORD_OK, ENOTCONVERGED, EINFEASIBLE, or a failure), or the
 * decoder's failure. */
static int solve_graph(const options *o, concord_solver *solver, graph_result *res) {
    memset(res, 0, sizeof *res);
    switch (o->algorithm) {
    case CONCORD_ALGORITHM_SPARSE:
        res->rc = concord_solver_sparse(solver, &o->settings, &res->info);
        break;
    case CONCORD_ALGORITHM_EXACT:
        res->rc = concord_solver_exact(solver, &o->settings, &res->info);
        res->exact = concord_solver_exact_info(solver, &res->exact_info) == CONCORD_OK;
        break;
    case CONCORD_ALGORITHM_PSDD:
        res->rc = concord_solver_psdd(solver, &o->settings, &res->info);
        break;
    case CONCORD_ALGORITHM_MPLP:
        res->rc = concord_solver_mplp(solver, &o->settings, &res->info);
        break;
    default: res->rc = concord_solver_map(solver, &o->settings, &res->info); break;
    }
    if (res->rc != CONCORD_OK && res->rc != CONCORD_ENOTCONVERGED) return res->rc;
    res->u = concord_solver_variables(solver);
    res->v = concord_solver_additionals(solver);
    /* a solve stopped before its first solution leaves nothing to decode */
    if (o->decode && res->u) {
        int rc = concord_solver_decode(solver, &res->decoding);
        if (rc != CONCORD_OK) return rc;
        res->decoded = 1;
        res->x = concord_solver_decoded(solver);
    }
    return res->rc;
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

/* Everything a run writes to and reads from while writing. */
typedef struct run {
    const options *o;
    concord_reader *reader;
    output_file posteriors_file, decoded_file;
    FILE *posteriors; /* NULL: not written */
    FILE *decoded;    /* NULL: not written */
    FILE *summary;    /* NULL: not printed */
    int32_t *labels;  /* UAI: decoded state per model variable */
    int32_t cap_labels;
    int read_failed;  /* the input turned out malformed: no file is kept */
    int drop_decoded; /* no assignment to write (an infeasible UAI model) */
} run;

/* One value, round-trip exact. Most posteriors are exactly 0 or 1, which
 * are written without printf's multi-precision conversion (on AD3's srl
 * graphs that conversion cost more than a tenth of the run). */
static void write_value(FILE *fp, double x, char end) {
    if (isnan(x)) fputs("nan", fp);
    else if (x == 0.0 && !signbit(x)) fputc('0', fp);
    else if (x == 1.0) fputc('1', fp);
    else fprintf(fp, "%.17g", x);
    fputc(end, fp);
}

/* The values of u (NULL: nan) at the graph's variables, then those of v:
 * AD3's layout; or, for a UAI model, one line per model variable. */
static void write_posteriors(const run *rn, const concord_graph *g, const double *u,
                             const double *v) {
    FILE *fp = rn->posteriors;
    if (rn->o->format == CONCORD_FORMAT_UAI) {
        int32_t n_states;
        const int32_t *state_vars;
        for (int32_t i = 0; concord_reader_uai_states(rn->reader, i, &n_states, &state_vars) ==
                            CONCORD_OK;
             ++i) {
            for (int32_t x = 0; x < n_states; ++x) {
                double p = !u ? NAN : state_vars[x] < 0 ? 0.0 : u[state_vars[x]];
                write_value(fp, p, x + 1 < n_states ? ' ' : '\n');
            }
        }
        fputc('\n', fp);
        return;
    }
    for (int32_t i = 0; i < concord_num_variables(g); ++i) write_value(fp, u ? u[i] : NAN, '\n');
    fputc('\n', fp);
    for (int32_t k = 0; k < concord_num_additionals(g); ++k) write_value(fp, v ? v[k] : NAN, '\n');
    fputc('\n', fp);
}

/* The decoded state of every UAI model variable, from the assignment x. */
static int uai_labels(run *rn, const double *x, int32_t **labels, int32_t *n) {
    int32_t n_states;
    const int32_t *state_vars;
    for (*n = 0; concord_reader_uai_states(rn->reader, *n, &n_states, &state_vars) == CONCORD_OK;
         ++*n) {
        if (*n == rn->cap_labels) {
            int32_t cap = rn->cap_labels ? 2 * rn->cap_labels : 256;
            int32_t *p = realloc(rn->labels, (size_t)cap * sizeof *p);
            if (!p) return -1;
            rn->labels = p;
            rn->cap_labels = cap;
        }
        rn->labels[*n] = -1;
        for (int32_t s = 0; s < n_states; ++s)
            if (state_vars[s] >= 0 && x[state_vars[s]] == 1.0) rn->labels[*n] = s;
    }
    *labels = rn->labels;
    return 0;
}

/* The decoded assignment x (NULL: infeasible): .fg, one 0/1 (or nan) per
 * line and a blank line; UAI, the result format ("MAP", then N and the
 * states). */
static int write_decoded(run *rn, const concord_graph *g, const double *x) {
    FILE *fp = rn->decoded;
    if (rn->o->format == CONCORD_FORMAT_UAI) {
        int32_t *labels, n;
        if (!x) return 0; /* none (decoded_assignment): the file is dropped */
        if (uai_labels(rn, x, &labels, &n)) return -1;
        fprintf(fp, "MAP\n%d", n);
        for (int32_t i = 0; i < n; ++i) fprintf(fp, " %d", labels[i]);
        fputc('\n', fp);
        return 0;
    }
    for (int32_t i = 0; i < concord_num_variables(g); ++i) write_value(fp, x ? x[i] : NAN, '\n');
    fputc('\n', fp);
    return 0;
}

static void json_number(FILE *fp, const char *key, double x) {
    if (isfinite(x)) fprintf(fp, ",\"%s\":%.17g", key, x);
    else fprintf(fp, ",\"%s\":null", key);
}

static int print_json(run *rn, size_t k, const concord_graph *g, const graph_result *res) {
    FILE *fp = stdout;
    const concord_info *info = &res->info;
    int infeasible = res->rc == CONCORD_EINFEASIBLE;
    fprintf(fp, "{\"graph\":%zu,\"status\":\"%s\"", k + 1, concord_status_name(info->status));
    json_number(fp, "value", infeasible ? NAN : info->value);
    json_number(fp, "upper_bound", info->upper_bound);
    fprintf(fp, ",\"iterations\":%d,\"integral\":%s", info->iterations,
            info->integral ? "true" : "false");
    json_number(fp, "seconds", info->seconds);
    json_number(fp, "primal_residual", info->primal_residual);
    json_number(fp, "dual_residual", info->dual_residual);
    json_number(fp, "eta", info->eta);
    fprintf(fp, ",\"factor_solves\":%lld,\"oracle_calls\":%lld", (long long)info->factor_solves,
            (long long)info->oracle_calls);
    fprintf(fp, ",\"acyclic\":%s", info->acyclic ? "true" : "false");
    if (res->exact) {
        fprintf(fp, ",\"nodes\":%lld,\"open_nodes\":%lld", (long long)res->exact_info.nodes,
                (long long)res->exact_info.open);
        json_number(fp, "root_bound", res->exact_info.root_bound);
    }
    if (res->decoded) {
        json_number(fp, "map_value", res->decoding.value);
        json_number(fp, "gap", info->upper_bound - res->decoding.value);
        fprintf(fp, ",\"violated\":%d", res->decoding.violated);
    } else if (rn->o->decode) { /* no solution to decode */
        json_number(fp, "map_value", NAN);
        json_number(fp, "gap", NAN);
    }
    if (!res->decoded && rn->o->print_decoded) fputs(",\"assignment\":null", fp);
    if (res->decoded && rn->o->print_decoded) {
        fputs(",\"assignment\":[", fp);
        if (rn->o->format == CONCORD_FORMAT_UAI) {
            int32_t *labels, n;
            if (uai_labels(rn, res->x, &labels, &n)) return -1;
            for (int32_t i = 0; i < n; ++i) fprintf(fp, i ? ",%d" : "%d", labels[i]);
        } else {
            for (int32_t i = 0; i < concord_num_variables(g); ++i)
                fputs(i ? (res->x[i] == 1.0 ? ",1" : ",0") : (res->x[i] == 1.0 ? "1" : "0"), fp);
        }
        fputc(']', fp);
    }
    fprintf(fp, ",\"variables\":%d,\"factors\":%d}\n", concord_num_variables(g),
            concord_num_factors(g));
    return 0;
}

/* a, raised to b when b exceeds it by round-off only: the summary never
 * shows a value above its bound, but a real inconsistency stays visible. */
static double up_to_roundoff(double a, double b) {
    return isfinite(a) && b > a && b - a <= 1e-9 * fmax(1.0, fabs(b)) ? b : a;
}

/* Whether a status means the solve reached its answer. */
static int status_converged(int status) {
    return status == CONCORD_STATUS_INTEGRAL || status == CONCORD_STATUS_FRACTIONAL ||
           status == CONCORD_STATUS_OPTIMAL;
}

/* tol: the solve's residual tolerance. */
static void print_summary(FILE *fp, size_t k, const graph_result *res, double tol) {
    const concord_info *info = &res->info;
    const char *s = info->iterations == 1 ? "" : "s";
    if (res->rc == CONCORD_EINFEASIBLE) {
        fprintf(fp, "graph %zu: infeasible (the constraints admit no solution), %d iteration%s, "
                    "%.3g s\n",
                k + 1, info->iterations, s, info->seconds);
        return;
    }
    int feasible_decoding = res->decoded && res->decoding.violated == 0;
    double bound = up_to_roundoff(info->upper_bound, info->value);
    if (feasible_decoding) bound = up_to_roundoff(bound, res->decoding.value);
    fprintf(fp, "graph %zu: %s, ", k + 1, concord_status_name(info->status));
    /* where JSON's value is null, the summary says why */
    if (!res->u) fputs("no solution found", fp);
    else if (!isfinite(info->value))
        fputs("no allowed solution found (the one returned violates a factor)", fp);
    else fprintf(fp, "value %.10g", info->value);
    /* an unconverged point's value may lie far above the bound (PSDD's
     * average, its copies 5% apart, scored 7 times the optimum) */
    if (res->u && isfinite(info->value) && !status_converged(info->status) &&
        info->primal_residual > tol)
        fprintf(fp, " (unconverged: the factors' copies disagree by up to %.3g)",
                info->primal_residual);
    fprintf(fp, ", upper bound %.10g, %d iteration%s", bound, info->iterations, s);
    if (res->exact && !info->acyclic)
        fprintf(fp, ", %lld node%s", (long long)res->exact_info.nodes,
                res->exact_info.nodes == 1 ? "" : "s");
    fprintf(fp, ", %.3g s", info->seconds);
    if (info->acyclic) fputs(", acyclic (dynamic programming)", fp);
    if (res->u && !status_converged(info->status))
        fprintf(fp, ", solution %s", info->integral ? "integral" : "fractional");
    if (feasible_decoding)
        fprintf(fp, "; decoded value %.10g (gap %.3g)", res->decoding.value,
                bound - res->decoding.value);
    else if (res->decoded)
        fprintf(fp, "; decoded assignment violates %d factor%s", res->decoding.violated,
                res->decoding.violated == 1 ? "" : "s");
    fputc('\n', fp);
}

/* The assignment the decoded outputs get, or NULL for none. A UAI result
 * says its assignment is the MAP, and cannot say "none": it has no
 * assignment of probability zero (one that violates a factor) either. */
static const double *decoded_assignment(const run *rn, const graph_result *res) {
    if (!res->decoded) return NULL;
    if (rn->o->format == CONCORD_FORMAT_UAI && res->decoding.violated > 0) return NULL;
    return res->x;
}

/* Writes graph k's results everywhere they go. Returns -1 when out of
 * memory (a write error shows in the streams' error flags). */
static int write_graph(run *rn, size_t k, const concord_graph *g, const graph_result *res) {
    int infeasible = res->rc == CONCORD_EINFEASIBLE;
    errno = 0; /* a failed write below says why */
    if (rn->o->json && print_json(rn, k, g, res)) return -1;
    if (rn->summary) print_summary(rn->summary, k, res, rn->o->settings.tol);
    if (rn->posteriors) write_posteriors(rn, g, infeasible ? NULL : res->u, res->v);
    if (rn->decoded && write_decoded(rn, g, decoded_assignment(rn, res))) return -1;
    return 0;
}

/* The output that failed (its error flag is set), or NULL. */
static const char *failed_output(const run *rn) {
    if (rn->posteriors && ferror(rn->posteriors))
        return rn->posteriors == stdout ? "stdout" : rn->o->output;
    if (rn->decoded && ferror(rn->decoded))
        return rn->decoded == stdout ? "stdout" : rn->o->decode_output;
    if (ferror(stdout)) return "stdout";
    if (rn->summary && ferror(rn->summary)) return rn->summary == stderr ? "stderr" : "stdout";
    return NULL;
}

/* ------------------------------------------------------------------------
 * The run
 * ------------------------------------------------------------------------ */

static void print_warning(void *context, const char *message) {
    (void)context;
    fprintf(stderr, "concord: warning: %s\n", message);
}

/* Reads all of stdin (at most 2 GiB, as the file readers); NULL on
 * failure, with errno ENOMEM, EFBIG (beyond the limit) or the read's. */
static char *read_stdin(size_t *size_out) {
    size_t size = 0, cap = 1 << 16;
    char *data = malloc(cap);
    while (data) {
        if (size == cap) {
            char *p = cap >= ((size_t)1 << 31) ? NULL : realloc(data, cap * 2);
            if (!p) {
                const int e = cap >= ((size_t)1 << 31) ? EFBIG : ENOMEM;
                free(data);
                errno = e;
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
        const int e = errno;
        free(data);
        errno = e;
        return NULL;
    }
    *size_out = size;
    return data;
}

static int exit_for_read_error(int rc) {
    return rc == CONCORD_ENOMEM ? EXIT_FAILURE_OTHER : EXIT_BAD_INPUT;
}

/* Opens the reader over the input (stdin's bytes go to *data). */
static int open_input(const options *o, concord_reader **reader, char **data, char *error,
                      size_t error_size) {
    int rc;
    *data = NULL;
    if (!strcmp(o->input, "-")) {
        size_t size = 0;
        if (!(*data = read_stdin(&size))) {
            const int e = errno;
            fprintf(stderr, "concord: could not read stdin: %s\n",
                    e == EFBIG ? "larger than the 2 GiB input limit"
                    : e == ENOMEM ? "out of memory"
                                  : strerror(e));
            return e == ENOMEM ? EXIT_FAILURE_OTHER : EXIT_BAD_INPUT;
        }
        rc = concord_reader_open_buffer(*data, size, "<stdin>", o->format, reader, error,
                                        error_size, print_warning, NULL);
    } else {
        rc = concord_reader_open_file(o->input, o->format, reader, error, error_size,
                                      print_warning, NULL);
        if (!rc && o->evidence) rc = concord_reader_set_evidence(*reader, o->evidence);
    }
    if (rc != CONCORD_OK) {
        fprintf(stderr, "concord: %s\n", error[0] ? error : concord_strerror(rc));
        return exit_for_read_error(rc);
    }
    return EXIT_OK;
}

/* Opens the output files and decides where each output goes. */
static int open_outputs(run *rn) {
    const options *o = rn->o;
    if (o->output && output_open(&rn->posteriors_file, o->output, 0)) {
        fprintf(stderr, "concord: cannot write %s: %s\n", o->output, strerror(errno));
        return EXIT_FAILURE_OTHER;
    }
    if (o->decode_output && output_open(&rn->decoded_file, o->decode_output, 1)) {
        fprintf(stderr, "concord: cannot write %s: %s\n", o->decode_output, strerror(errno));
        return EXIT_FAILURE_OTHER;
    }
    /* stdout carries one thing: JSON, else the decoded assignment, else the
     * posteriors, else the summary */
    rn->posteriors = o->output                       ? rn->posteriors_file.fp
                     : o->json || o->print_decoded ? NULL
                                                   : stdout;
    rn->decoded = o->decode_output                ? rn->decoded_file.fp
                  : o->print_decoded && !o->json ? stdout
                                                 : NULL;
    int stdout_taken = o->json || rn->posteriors == stdout || rn->decoded == stdout;
    rn->summary = o->quiet || o->json ? NULL : stdout_taken ? stderr : stdout;
    return EXIT_OK;
}

/* Solves graph k and writes its results; returns the exit status so far. */
static int process_graph(run *rn, size_t k, concord_graph *g, int status) {
    concord_solver *solver;
    if (concord_solver_new(g, &solver) != CONCORD_OK) {
        fprintf(stderr, "concord: graph %zu: out of memory\n", k + 1);
        return EXIT_FAILURE_OTHER;
    }
    graph_result res;
    int rc = solve_graph(rn->o, solver, &res);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED && rc != CONCORD_EINFEASIBLE) {
        fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_solver_last_error(solver));
        concord_solver_free(solver);
        return EXIT_FAILURE_OTHER;
    }
    if (rc == CONCORD_EINFEASIBLE) {
        /* bad input, but only this graph: the others are still solved */
        fprintf(stderr, "concord: graph %zu: %s\n", k + 1, concord_solver_last_error(solver));
        status = EXIT_BAD_INPUT;
    } else if (rc == CONCORD_ENOTCONVERGED && status == EXIT_OK) {
        status = EXIT_NOT_CONVERGED;
    }
    int unwritten = write_graph(rn, k, g, &res);
    concord_solver_free(solver);
    if (unwritten) {
        fprintf(stderr, "concord: graph %zu: out of memory\n", k + 1);
        return EXIT_FAILURE_OTHER;
    }
    /* A UAI result that has no assignment is not written: not as a file,
     * and not on stdout either. */
    if (rn->o->decode && rn->o->format == CONCORD_FORMAT_UAI && !decoded_assignment(rn, &res)) {
        if (res.decoded && rn->decoded)
            fprintf(stderr,
                    "concord: warning: graph %zu: the decoded assignment has probability zero "
                    "(factors violated: %d): %s\n",
                    k + 1, res.decoding.violated,
                    rn->o->decode_output ? "the result file is not written"
                                         : "no result is printed");
        rn->drop_decoded = 1;
    }
    const char *failed = failed_output(rn);
    if (failed) {
        fprintf(stderr, "concord: cannot write %s: %s\n", failed, strerror(errno ? errno : EIO));
        return EXIT_FAILURE_OTHER;
    }
    return status;
}

/* Flushes one output; records the first failure. */
static void flush_output(FILE *fp, const char *name, const char **failed, int *e) {
    if (!fp || *failed) return;
    errno = 0;
    if (fflush(fp) != 0 || ferror(fp)) {
        *failed = name;
        *e = errno ? errno : EIO;
    }
}

/* Closes the outputs, keeping the files when the run succeeded. Every
 * stream is flushed first, so that a failed write anywhere is known before
 * any file is renamed into place. */
static int close_outputs(run *rn, int status) {
    const char *failed = NULL;
    int e = 0;
    if (status != EXIT_FAILURE_OTHER) {
        flush_output(rn->posteriors_file.fp, rn->o->output, &failed, &e);
        flush_output(rn->decoded_file.fp, rn->o->decode_output, &failed, &e);
        flush_output(stdout, "stdout", &failed, &e);
    }
    int keep = status != EXIT_FAILURE_OTHER && !failed && !rn->read_failed;
    if (output_close(&rn->posteriors_file, keep) && !failed) failed = rn->o->output, e = errno;
    if (output_close(&rn->decoded_file, keep && !rn->drop_decoded) && !failed)
        failed = rn->o->decode_output, e = errno;
    if (failed && status != EXIT_FAILURE_OTHER) {
        fprintf(stderr, "concord: cannot write %s: %s\n", failed, strerror(e ? e : EIO));
        status = EXIT_FAILURE_OTHER;
    }
    if (status == EXIT_FAILURE_OTHER) fflush(stdout); /* what it could write */
    return status;
}

static int run_solve(const options *o) {
    char error[1024] = "";
    run rn = {0};
    rn.o = o;
    char *stdin_data;
    int status = open_input(o, &rn.reader, &stdin_data, error, sizeof error);
    if (status == EXIT_OK) status = open_outputs(&rn);
    for (size_t k = 0; status != EXIT_FAILURE_OTHER && rn.reader; ++k) {
        concord_graph *g;
        int rc = concord_reader_next(rn.reader, &g);
        if (rc != CONCORD_OK) {
            fprintf(stderr, "concord: %s\n", error[0] ? error : concord_strerror(rc));
            status = exit_for_read_error(rc);
            rn.read_failed = 1; /* malformed input never leaves an output file */
            break;
        }
        if (!g) break;
        status = process_graph(&rn, k, g, status);
        concord_graph_free(g);
    }
    status = close_outputs(&rn, status);
    concord_reader_close(rn.reader);
    free(rn.labels);
    free(stdin_data);
    return status;
}

static int is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

/* Prints the help or the version on stdout; returns the exit status. */
static int print_help_or_version(int version) {
    errno = 0;
    if (version) printf("concord %s\n", concord_version());
    else fputs(usage_text, stdout);
    /* a write that failed while the text was going out leaves the error flag */
    if (fflush(stdout) == 0 && !ferror(stdout)) return EXIT_OK;
    fprintf(stderr, "concord: cannot write stdout: %s\n", strerror(errno ? errno : EIO));
    return EXIT_FAILURE_OTHER;
}

/* Opens /dev/null on each of fds 0-2 that the caller left closed
 * (`>&-`), so that no file of the run takes its number: the summary or a
 * progress line, written to a closed stdout or stderr, would land in an
 * output file. Each is opened against its direction (stdin write-only,
 * stdout and stderr read-only), so that using it still fails (EBADF) and
 * a lost summary is still reported. Returns -1 when it cannot. */
static int reserve_standard_streams(void) {
    for (int fd = 0; fd <= 2; ++fd) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        /* the lower ones are open: open() takes the lowest free number */
        const int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got != fd) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (reserve_standard_streams()) return EXIT_FAILURE_OTHER;
    if (argc < 2) { /* the usage lines alone: the help is long */
        const char *end = strstr(usage_text, "\n\n");
        fwrite(usage_text, 1, end ? (size_t)(end - usage_text) + 1 : strlen(usage_text), stderr);
        fputs("Try 'concord --help'.\n", stderr);
        return EXIT_USAGE;
    }
    const int help = is_help(argv[1]) || !strcmp(argv[1], "help");
    if (help || !strcmp(argv[1], "--version")) {
        if (argc > 2) return usage_error("unexpected argument '%s' after '%s'", argv[2], argv[1]);
        return print_help_or_version(!help);
    }
    if (strcmp(argv[1], "solve")) return usage_error("unknown command '%s'", argv[1]);
    const int end = end_of_options(argc, argv); /* what follows is no flag */
    for (int k = 2; k < end; k += 1 + value_follows(argv[k]))
        if (is_help(argv[k]) || !strcmp(argv[k], "--version"))
            return print_help_or_version(!is_help(argv[k]));
    options o;
    int status = parse_options(argc, argv, &o);
    if (status != EXIT_OK) return status;
    install_signal_handlers();
    return run_solve(&o);
}
