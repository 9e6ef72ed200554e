/*
 * The concord command-line tool on factor graph files against GLPK: the
 * repository's tests/data/fg/logic.fg and transitivity.fg, and AD3's own
 * example graphs (../shared/data/ad3: example1, example2, coref,
 * srl_fract_001..005, mln_large; each skipped, with a line naming it, when
 * ../shared/data is absent). The files are read by the tests' own .fg
 * reader (support/fg_reader.h, independent of the library's; like AD3 it
 * swallows the one line after each graph, so the stray CARALHO3/CARALHO4
 * lines of srl_fract_003/004 are skipped), and the local-polytope LP (the
 * factors in these files are XOR, ATMOSTONE, OR, OROUT and PAIR, written in
 * H-representation) is solved by GLPK (support/ref_extended_lp.h: its dual
 * simplex with presolve, then its exact simplex on all but mln_large).
 * `concord solve FILE --json -o POST`
 * must converge, report GLPK's optimum and a valid upper bound, and write
 * posteriors in AD3's layout that reproduce the reported value and satisfy
 * every constraint. Under AddressSanitizer mln_large is skipped (GLPK alone
 * takes about 25 s on it; the solver itself is the same plain binary).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "child_process.h"
#include "fg_reader.h"
#include "ref_extended_lp.h"
#include "testutil.h"

/* ---- tolerances (and why) ------------------------------------------------
 * VALUE_TOL: |value - glpk| <= 1e-5 * max(|glpk|, max |score|): the
 *   optima here are far from 0, so this is 1e-5 relative; the solver's
 *   stopping tolerance (1e-6 per link) leaves it a margin.
 * BOUND_TOL: upper_bound >= glpk - 1e-9 * max(|glpk|, max |score|): the
 *   dual bound is a bound; GLPK's own optimum is only exact to its
 *   tolerances (~1e-9 relative here), hence not rounding-tight.
 * REPRO_TOL: theta.u + phi.v from the posteriors file (printed %.17g)
 *   against the reported value: 1e-12 of sum |score| (summation order).
 * LINK_TOL: every H-representation row a.lit <= b is violated by at most
 *   ||a||_1 * 1e-6 (+1e-12): the solver's posteriors are within 1e-6 (max
 *   norm) of each factor's polytope.
 */
#define VALUE_TOL 1e-5
#define BOUND_TOL 1e-9
#define REPRO_TOL 1e-12
#define LINK_TOL 1e-6

/* ------------------------------------------------------------------------
 * Reading the CLI's output
 * ------------------------------------------------------------------------ */

typedef struct line_reader {
    const char *p, *end;
    int line;
} line_reader;

/* The next line (without its newline) into buf; false at end of input. */
static bool next_line(line_reader *r, char *buf, size_t size) {
    if (r->p >= r->end) return false;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    const char *stop = nl ? nl : r->end;
    size_t len = (size_t)(stop - r->p);
    if (len > 0 && r->p[len - 1] == '\r') len -= 1;
    if (len >= size) len = size - 1;
    memcpy(buf, r->p, len);
    buf[len] = '\0';
    r->p = nl ? nl + 1 : r->end;
    r->line += 1;
    return true;
}

static bool only_blank(const char *s) {
    for (; *s; ++s)
        if (*s != ' ' && *s != '\t') return false;
    return true;
}

/* A number at the start of s: with rest, *rest is left after it; without,
 * the remainder of s must be blank. */
static bool parse_double(const char *s, double *out, const char **rest) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return false;
    *out = v;
    if (rest) *rest = end;
    return rest || only_blank(end);
}

/* ------------------------------------------------------------------------
 * Running the CLI
 * ------------------------------------------------------------------------ */

typedef struct cli_graph {
    int graph;
    char status[32];
    double value, upper_bound;
    int iterations;
    int integral; /* -1: missing */
} cli_graph;

/* The text after "key": in a one-line JSON object, or NULL. */
static const char *json_field(const char *obj, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(obj, pattern);
    return p ? p + strlen(pattern) : NULL;
}

static bool parse_json_line(const char *line, cli_graph *out) {
    const char *p;
    memset(out, 0, sizeof *out);
    out->integral = -1;
    if (line[0] != '{') return false;
    if (!(p = json_field(line, "graph"))) return false;
    out->graph = atoi(p);
    if (!(p = json_field(line, "status")) || *p != '"') return false;
    size_t k = 0;
    for (++p; *p && *p != '"' && k + 1 < sizeof out->status; ++p) out->status[k++] = *p;
    out->status[k] = '\0';
    if (!(p = json_field(line, "value")) || !parse_double(p, &out->value, &p)) return false;
    if (!(p = json_field(line, "upper_bound")) || !parse_double(p, &out->upper_bound, &p))
        return false;
    if (!(p = json_field(line, "iterations"))) return false;
    out->iterations = atoi(p);
    if ((p = json_field(line, "integral")))
        out->integral = !strncmp(p, "true", 4) ? 1 : !strncmp(p, "false", 5) ? 0 : -1;
    return true;
}

/* ------------------------------------------------------------------------
 * One shared file: everything computed once, checked by several tests
 * ------------------------------------------------------------------------ */

typedef struct shared_case {
    const char *file;
    bool repository; /* in tests/data/fg, else in ../shared/data/ad3 */
    int computed; /* 0: not yet, 1: done, -1: failed */
    char path[1024];
    fg_graph *graphs;
    int n_graphs;
    double *glpk;    /* per graph */
    double glpk_seconds, cli_seconds;
    int exit_code;
    cli_graph *cli;  /* per JSON line */
    int n_cli;
    char *posteriors; /* the -o file's text */
} shared_case;

static shared_case cases[] = {
    {.file = "logic.fg", .repository = true},
    {.file = "transitivity.fg", .repository = true},
    {.file = "example1.fg"},      {.file = "example2.fg"},      {.file = "coref.fg"},
    {.file = "srl_fract_001.fg"}, {.file = "srl_fract_002.fg"}, {.file = "srl_fract_003.fg"},
    {.file = "srl_fract_004.fg"}, {.file = "srl_fract_005.fg"}, {.file = "mln_large.fg"},
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static bool skipped_under_asan(const shared_case *c) {
    return UNDER_ASAN && !strcmp(c->file, "mln_large.fg");
}

/* Runs `concord solve FILE --json -o POSTERIORS`; its exit code, JSON
 * lines and posteriors go into c. */
static int run_cli(shared_case *c) {
    char dir[] = "/tmp/concord_shared_graphs_XXXXXX";
    if (!mkdtemp(dir)) return -1;
    char out_path[64], posteriors_path[64];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    snprintf(posteriors_path, sizeof posteriors_path, "%s/posteriors.txt", dir);
    const char *argv[] = {CONCORD_BINARY, "solve", c->path, "--json", "-o", posteriors_path, NULL};
    double t0 = monotonic_seconds();
    c->exit_code = run_program(argv, NULL, out_path, NULL, 0);
    c->cli_seconds = monotonic_seconds() - t0;
    char *out = read_whole_file(out_path, NULL);
    c->posteriors = read_whole_file(posteriors_path, NULL);
    remove_tree(dir);
    if (!out) return -1;
    for (char *line = out, *next; *line; line = next) {
        char *eol = strchr(line, '\n');
        next = eol ? eol + 1 : line + strlen(line);
        if (eol) *eol = '\0';
        cli_graph *more = realloc(c->cli, (size_t)(c->n_cli + 1) * sizeof *more);
        if (!more) break;
        c->cli = more;
        if (parse_json_line(line, &c->cli[c->n_cli])) c->n_cli += 1;
        else printf("%s: unexpected CLI output line: %s\n", c->file, line);
    }
    free(out);
    return 0;
}

static int compute(shared_case *c) {
    if (c->computed) return c->computed;
    c->computed = -1;
    if (fg_read_path(c->path, &c->graphs, &c->n_graphs) != FG_READ_OK) return -1;
    c->glpk = calloc((size_t)c->n_graphs, sizeof *c->glpk);
    if (!c->glpk) return -1;
    double t0 = monotonic_seconds();
    for (int k = 0; k < c->n_graphs; ++k) {
        if (ref_extended_lp_graph(&c->graphs[k], false, &c->glpk[k], NULL, NULL) !=
            REF_EXT_OPTIMAL) {
            printf("%s: GLPK did not solve graph %d\n", c->file, k + 1);
            return -1;
        }
    }
    c->glpk_seconds = monotonic_seconds() - t0;
    if (run_cli(c) != 0) {
        printf("%s: could not run %s\n", c->file, CONCORD_BINARY);
        return -1;
    }
    for (int k = 0; k < c->n_graphs && k < c->n_cli; ++k)
        printf("%s graph %d: GLPK %.15g (%.2f s), concord %.15g, bound %.15g, %s, %d "
               "iterations (CLI %.2f s)\n",
               c->file, k + 1, c->glpk[k], c->glpk_seconds, c->cli[k].value,
               c->cli[k].upper_bound, c->cli[k].status, c->cli[k].iterations, c->cli_seconds);
    c->computed = 1;
    return 1;
}

/* The state of a test: its file, computed on first use. */
static shared_case *prepare(void **state) {
    shared_case *c = *state;
    if (skipped_under_asan(c)) {
        printf("%s: skipped under AddressSanitizer (GLPK alone takes ~25 s on it); the "
               "plain build of this test checks it\n",
               c->file);
        skip();
    }
    char relative[256];
    snprintf(relative, sizeof relative, "%s/%s", c->repository ? "fg" : "ad3", c->file);
    snprintf(c->path, sizeof c->path, "%s",
             c->repository ? test_data_path(relative) : shared_data_path_or_skip(relative));
    assert_int_equal(compute(c), 1);
    return c;
}

static double score_scale(const fg_graph *g) {
    double s = 0.0;
    for (int i = 0; i < g->n_vars; ++i) s = fmax(s, fabs(g->theta[i]));
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] == FG_PAIR) s = fmax(s, fabs(g->scores[g->score_start[f]]));
    return s;
}

static double score_l1(const fg_graph *g) {
    double s = 0.0;
    for (int i = 0; i < g->n_vars; ++i) s += fabs(g->theta[i]);
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] == FG_PAIR) s += fabs(g->scores[g->score_start[f]]);
    return s;
}

/* ---- the checks ---------------------------------------------------------- */

/* exit status 0, one JSON object per graph (numbered 1..G), each with a
 * converged status: "integral" or "fractional", consistent with its
 * "integral" flag. */
static void cli_converges(void **state) {
    shared_case *c = prepare(state);
    assert_int_equal(c->exit_code, 0);
    assert_int_equal(c->n_cli, c->n_graphs);
    for (int k = 0; k < c->n_cli; ++k) {
        assert_int_equal(c->cli[k].graph, k + 1);
        bool integral = !strcmp(c->cli[k].status, "integral");
        bool fractional = !strcmp(c->cli[k].status, "fractional");
        if (!integral && !fractional) printf("graph %d: status %s\n", k + 1, c->cli[k].status);
        assert_true(integral || fractional);
        assert_int_equal(c->cli[k].integral, integral ? 1 : 0);
    }
}

/* |value - glpk| <= 1e-5 * max(|glpk|, max |score|) (see VALUE_TOL). */
static void cli_value_matches_glpk(void **state) {
    shared_case *c = prepare(state);
    assert_int_equal(c->n_cli, c->n_graphs);
    for (int k = 0; k < c->n_graphs; ++k) {
        double scale = fmax(fabs(c->glpk[k]), score_scale(&c->graphs[k]));
        double err = fabs(c->cli[k].value - c->glpk[k]);
        printf("%s graph %d: |concord - GLPK| = %.3g = %.3g of the scale\n", c->file, k + 1, err,
               scale > 0.0 ? err / scale : err);
        assert_true(err <= VALUE_TOL * scale);
    }
}

/* upper_bound >= glpk - 1e-9 * max(|glpk|, max |score|). */
static void cli_upper_bound_is_at_least_glpk(void **state) {
    shared_case *c = prepare(state);
    assert_int_equal(c->n_cli, c->n_graphs);
    for (int k = 0; k < c->n_graphs; ++k) {
        double scale = fmax(fabs(c->glpk[k]), score_scale(&c->graphs[k]));
        if (c->cli[k].upper_bound < c->glpk[k] - BOUND_TOL * scale)
            printf("%s graph %d: upper bound %.17g below GLPK's optimum %.17g\n", c->file, k + 1,
                   c->cli[k].upper_bound, c->glpk[k]);
        assert_true(c->cli[k].upper_bound >= c->glpk[k] - BOUND_TOL * scale);
    }
}

/* Reads the posteriors of graph k from *p: n_vars numbers, a blank line,
 * n_additionals numbers, a blank line. False if the layout differs. */
static bool read_posteriors(const char **p, const fg_graph *g, double *u, double *v) {
    char line[256];
    line_reader r = {*p, *p + strlen(*p), 0};
    for (int i = 0; i < g->n_vars; ++i)
        if (!next_line(&r, line, sizeof line) || !parse_double(line, &u[i], NULL)) return false;
    if (!next_line(&r, line, sizeof line) || line[0] != '\0') return false;
    for (int k = 0; k < g->n_additionals; ++k)
        if (!next_line(&r, line, sizeof line) || !parse_double(line, &v[k], NULL)) return false;
    if (!next_line(&r, line, sizeof line) || line[0] != '\0') return false;
    *p = r.p;
    return true;
}

/* The -o file holds, per graph, one value in [0, 1] per variable, a blank
 * line, one per PAIR (P(both on)), a blank line, and nothing else; and
 * theta.u + phi.v of those values is the reported value (to 1e-12 of
 * sum |score|). */
static void cli_posteriors_have_ad3_layout_and_reproduce_the_value(void **state) {
    shared_case *c = prepare(state);
    assert_non_null(c->posteriors);
    assert_int_equal(c->n_cli, c->n_graphs);
    const char *p = c->posteriors;
    for (int k = 0; k < c->n_graphs; ++k) {
        const fg_graph *g = &c->graphs[k];
        double *u = malloc(((size_t)g->n_vars + 1) * sizeof *u);
        double *v = malloc(((size_t)g->n_additionals + 1) * sizeof *v);
        assert_non_null(u);
        assert_non_null(v);
        bool layout = read_posteriors(&p, g, u, v);
        if (!layout) printf("%s graph %d: the posteriors do not have AD3's layout\n", c->file, k + 1);
        double s = 0.0;
        int outside = 0;
        for (int i = 0; layout && i < g->n_vars; ++i) {
            s += g->theta[i] * u[i];
            outside += !(u[i] >= 0.0 && u[i] <= 1.0);
        }
        for (int f = 0; layout && f < g->n_factors; ++f)
            if (g->type[f] == FG_PAIR) {
                double x = v[g->score_start[f]];
                s += g->scores[g->score_start[f]] * x;
                outside += !(x >= 0.0 && x <= 1.0);
            }
        free(u);
        free(v);
        assert_true(layout);
        assert_int_equal(outside, 0);
        double err = fabs(s - c->cli[k].value);
        if (err > REPRO_TOL * score_l1(g) + DBL_MIN)
            printf("%s graph %d: posteriors give %.17g, reported %.17g\n", c->file, k + 1, s,
                   c->cli[k].value);
        assert_true(err <= REPRO_TOL * score_l1(g) + DBL_MIN);
    }
    if (*p) printf("%s: unexpected text after the last graph's posteriors\n", c->file);
    assert_true(*p == '\0');
}

/* Every H-representation row a.lit (<=, >=, =) b holds at the posteriors
 * to within ||a||_1 * 1e-6 + 1e-12 (see ROW_TOL). */
static void cli_posteriors_satisfy_every_constraint(void **state) {
    shared_case *c = prepare(state);
    assert_non_null(c->posteriors);
    const char *p = c->posteriors;
    for (int k = 0; k < c->n_graphs; ++k) {
        const fg_graph *g = &c->graphs[k];
        double *u = malloc(((size_t)g->n_vars + 1) * sizeof *u);
        double *v = malloc(((size_t)g->n_additionals + 1) * sizeof *v);
        assert_non_null(u);
        assert_non_null(v);
        bool layout = read_posteriors(&p, g, u, v);
        hrep h;
        int built = hrep_build(g, &h);
        int violated = 0;
        double worst = 0.0;
        for (int r = 0; layout && built == 0 && r < h.n_rows; ++r) {
            const hrow *row = &h.rows[r];
            double act = hrow_activity(row, u, v), norm = 0.0;
            for (int t = 0; t < row->n; ++t) norm += fabs(row->a[t]);
            double excess = row->sense < 0 ? act - row->b
                            : row->sense > 0 ? row->b - act
                                             : fabs(act - row->b);
            worst = fmax(worst, excess / norm);
            if (excess > norm * LINK_TOL + 1e-12) {
                if (violated < 5)
                    printf("%s graph %d: constraint %d violated by %.3g (norm %g)\n", c->file,
                           k + 1, r, excess, norm);
                violated += 1;
            }
        }
        printf("%s graph %d: largest constraint violation per unit of norm %.3g\n", c->file,
               k + 1, worst);
        hrep_free(&h);
        free(u);
        free(v);
        assert_true(layout);
        assert_int_equal(built, 0);
        assert_int_equal(violated, 0);
    }
}

static int teardown(void **state) {
    (void)state;
    for (int k = 0; k < N_CASES; ++k) {
        shared_case *c = &cases[k];
        fg_free_graphs(c->graphs, c->n_graphs);
        free(c->glpk);
        free(c->cli);
        free(c->posteriors);
        c->graphs = NULL;
        c->glpk = NULL;
        c->cli = NULL;
        c->posteriors = NULL;
        c->n_graphs = c->n_cli = 0;
        c->computed = 0;
    }
    return 0;
}

int main(void) {
    static const struct {
        const char *name;
        CMUnitTestFunction fn;
    } checks[] = {
        {"cli_converges_on", cli_converges},
        {"cli_value_matches_glpk_local_polytope_optimum_on", cli_value_matches_glpk},
        {"cli_upper_bound_is_at_least_the_glpk_optimum_on", cli_upper_bound_is_at_least_glpk},
        {"cli_posteriors_have_ad3_layout_and_reproduce_the_value_on",
         cli_posteriors_have_ad3_layout_and_reproduce_the_value},
        {"cli_posteriors_satisfy_every_constraint_within_1e_6_per_link_on",
         cli_posteriors_satisfy_every_constraint},
    };
    enum { N_CHECKS = sizeof checks / sizeof checks[0] };
    static char names[N_CASES * N_CHECKS][128];
    struct CMUnitTest tests[N_CASES * N_CHECKS];
    for (int k = 0; k < N_CASES; ++k)
        for (int j = 0; j < N_CHECKS; ++j) {
            char *name = names[k * N_CHECKS + j];
            snprintf(name, sizeof names[0], "%s_%s%s", checks[j].name,
                     cases[k].repository ? "repository_" : "", cases[k].file);
            for (char *q = name; *q; ++q)
                if (*q == '.') *q = '_';
            tests[k * N_CHECKS + j] = (struct CMUnitTest){name, checks[j].fn, NULL, NULL, &cases[k]};
        }
    if (UNDER_ASAN) printf("built with AddressSanitizer: mln_large.fg is skipped\n");
    return cmocka_run_group_tests(tests, NULL, teardown);
}
