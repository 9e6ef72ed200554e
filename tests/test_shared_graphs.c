/*
 * The concord command-line tool on factor graph files against GLPK: the
 * repository's tests/data/fg/logic.fg and transitivity.fg, and AD3's own
 * example graphs (../shared/data/ad3: example1, example2, coref,
 * srl_fract_001..005, mln_large; each skipped, with a line naming it, when
 * ../shared/data is absent). The files are read by a small .fg parser written
 * here (independent of the library's reader; like AD3 it swallows the one
 * line after each graph, so the stray CARALHO3/CARALHO4 lines of
 * srl_fract_003/004 are skipped), the local-polytope LP is written in
 * H-representation (the factors in these files are XOR, ATMOSTONE, OR,
 * OROUT and PAIR, whose hulls have short exact descriptions) and solved by
 * GLPK's dual simplex with presolve. `concord solve FILE --json -o POST`
 * must converge, report GLPK's optimum and a valid upper bound, and write
 * posteriors in AD3's layout that reproduce the reported value and satisfy
 * every constraint. Under AddressSanitizer mln_large is skipped (GLPK alone
 * takes about 25 s on it; the solver itself is the same plain binary).
 */
#include <errno.h>
#include <float.h>
#include <glpk.h>
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

/* GLPK's exact simplex polishes the optimum of problems this small */
#define EXACT_MAX_ROWS 5000

/* ------------------------------------------------------------------------
 * A small .fg reader
 * ------------------------------------------------------------------------ */

typedef enum fg_type { FG_XOR, FG_ATMOSTONE, FG_OR, FG_OROUT, FG_PAIR } fg_type;

typedef struct fg_graph {
    int n_vars, n_factors, n_pairs;
    double *theta;   /* n_vars */
    int *type;       /* n_factors */
    int *start;      /* n_factors + 1: links of factor f are start[f]..start[f+1) */
    int *var;        /* 0-based */
    char *neg;       /* negated link */
    double *param;   /* PAIR: its score */
    int *pair_index; /* PAIR: index of its additional output, else -1 */
} fg_graph;

static void fg_free(fg_graph *g) {
    free(g->theta);
    free(g->type);
    free(g->start);
    free(g->var);
    free(g->neg);
    free(g->param);
    free(g->pair_index);
    memset(g, 0, sizeof *g);
}

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
static bool parse_long(const char *s, long *out, const char **rest) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno) return false;
    *out = v;
    if (rest) *rest = end;
    return rest || only_blank(end);
}

static bool parse_double(const char *s, double *out, const char **rest) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) return false;
    *out = v;
    if (rest) *rest = end;
    return rest || only_blank(end);
}

/* Reads one graph; returns false (with a message) on malformed input. */
static bool fg_read_graph(line_reader *r, fg_graph *g, const char *name) {
    char line[1 << 16];
    long n, m;
    memset(g, 0, sizeof *g);
    if (!next_line(r, line, sizeof line) || !parse_long(line, &n, NULL) || n < 0 ||
        !next_line(r, line, sizeof line) || !parse_long(line, &m, NULL) || m < 0) {
        printf("%s:%d: expected the numbers of variables and factors\n", name, r->line);
        return false;
    }
    g->n_vars = (int)n;
    g->n_factors = (int)m;
    g->theta = calloc((size_t)n + 1, sizeof *g->theta);
    g->type = calloc((size_t)m + 1, sizeof *g->type);
    g->start = calloc((size_t)m + 1, sizeof *g->start);
    g->param = calloc((size_t)m + 1, sizeof *g->param);
    g->pair_index = calloc((size_t)m + 1, sizeof *g->pair_index);
    size_t cap = 16, used = 0;
    g->var = malloc(cap * sizeof *g->var);
    g->neg = malloc(cap);
    if (!g->theta || !g->type || !g->start || !g->param || !g->pair_index || !g->var || !g->neg)
        return false;
    for (long i = 0; i < n; ++i)
        if (!next_line(r, line, sizeof line) || !parse_double(line, &g->theta[i], NULL)) {
            printf("%s:%d: expected the score of variable %ld\n", name, r->line, i + 1);
            return false;
        }
    for (long f = 0; f < m; ++f) {
        if (!next_line(r, line, sizeof line)) {
            printf("%s: missing factor %ld\n", name, f + 1);
            return false;
        }
        char type[32];
        int consumed = 0;
        if (sscanf(line, "%31s%n", type, &consumed) != 1) {
            printf("%s:%d: expected a factor\n", name, r->line);
            return false;
        }
        if (!strcmp(type, "XOR")) g->type[f] = FG_XOR;
        else if (!strcmp(type, "ATMOSTONE")) g->type[f] = FG_ATMOSTONE;
        else if (!strcmp(type, "OR")) g->type[f] = FG_OR;
        else if (!strcmp(type, "OROUT")) g->type[f] = FG_OROUT;
        else if (!strcmp(type, "PAIR")) g->type[f] = FG_PAIR;
        else {
            printf("%s:%d: factor type %s is not handled by this test's reader\n", name,
                   r->line, type);
            return false;
        }
        const char *p = line + consumed;
        long degree;
        if (!parse_long(p, &degree, &p) || degree < 1 || degree > n ||
            (g->type[f] == FG_PAIR && degree != 2) || (g->type[f] == FG_OROUT && degree < 2)) {
            printf("%s:%d: bad degree\n", name, r->line);
            return false;
        }
        g->start[f] = (int)used;
        for (long j = 0; j < degree; ++j) {
            long index;
            if (!parse_long(p, &index, &p) || index == 0 || labs(index) > n ||
                (g->type[f] == FG_PAIR && index < 0)) {
                printf("%s:%d: bad variable index\n", name, r->line);
                return false;
            }
            if (used == cap) {
                cap *= 2;
                int *v = realloc(g->var, cap * sizeof *v);
                if (v) g->var = v;
                char *ng = realloc(g->neg, cap);
                if (ng) g->neg = ng;
                if (!v || !ng) return false;
            }
            g->var[used] = (int)labs(index) - 1;
            g->neg[used] = index < 0;
            used += 1;
        }
        g->pair_index[f] = -1;
        if (g->type[f] == FG_PAIR) {
            if (!parse_double(p, &g->param[f], NULL)) {
                printf("%s:%d: expected the PAIR score\n", name, r->line);
                return false;
            }
            g->pair_index[f] = g->n_pairs++;
        } else if (!only_blank(p)) {
            printf("%s:%d: unexpected parameters '%s'\n", name, r->line, p);
            return false;
        }
    }
    g->start[m] = (int)used;
    return true;
}

/* Reads every graph of a file: after each graph one line is swallowed,
 * whatever it holds (AD3's separator; the stray CARALHO lines). */
static int fg_read_file(const char *path, fg_graph **graphs, int *count) {
    size_t size;
    char *data = read_whole_file(path, &size);
    if (!data) {
        printf("cannot open %s\n", path);
        return -1;
    }
    line_reader r = {data, data + size, 0};
    *graphs = NULL;
    *count = 0;
    int rc = 0;
    for (;;) {
        /* stop when only blank lines remain */
        const char *q = r.p;
        while (q < r.end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')) ++q;
        if (q >= r.end) break;
        fg_graph *more = realloc(*graphs, (size_t)(*count + 1) * sizeof *more);
        if (!more) {
            rc = -1;
            break;
        }
        *graphs = more;
        if (!fg_read_graph(&r, &(*graphs)[*count], path)) {
            fg_free(&(*graphs)[*count]);
            rc = -1;
            break;
        }
        *count += 1;
        char line[256];
        if (next_line(&r, line, sizeof line) && !only_blank(line))
            printf("%s:%d: skipping '%s' after graph %d (AD3 swallows this line)\n", path,
                   r.line, line, *count);
    }
    free(data);
    return rc;
}

/* ------------------------------------------------------------------------
 * The local polytope in H-representation
 * ------------------------------------------------------------------------ */

/* One row sum_j a_j lit_j (<=, >=, =) b over literals, a_j integers. */
typedef struct hrow {
    int n;
    int *var;   /* variable index, or -(1 + k) for PAIR output k */
    char *neg;  /* literal is 1 - u */
    double *a;
    int sense;  /* -1: <=, 0: =, +1: >= */
    double b;
} hrow;

typedef struct hrep {
    hrow *rows;
    int n_rows, cap;
    int *var_pool;
    char *neg_pool;
    double *a_pool;
    size_t pool_used, pool_cap;
} hrep;

static void hrep_free(hrep *h) {
    free(h->rows);
    free(h->var_pool);
    free(h->neg_pool);
    free(h->a_pool);
    memset(h, 0, sizeof *h);
}

/* Adds a row with `n` terms; the caller fills var/neg/a (offsets into the
 * pools are fixed once the pools are sized, see hrep_build). */
static hrow *hrep_row(hrep *h, int n, int sense, double b) {
    if (h->n_rows == h->cap || h->pool_used + (size_t)n > h->pool_cap) return NULL;
    hrow *r = &h->rows[h->n_rows++];
    r->n = n;
    r->var = h->var_pool + h->pool_used;
    r->neg = h->neg_pool + h->pool_used;
    r->a = h->a_pool + h->pool_used;
    h->pool_used += (size_t)n;
    r->sense = sense;
    r->b = b;
    return r;
}

static void set_term(hrow *r, int k, int var, bool neg, double a) {
    r->var[k] = var;
    r->neg[k] = (char)neg;
    r->a[k] = a;
}

/* The exact hull of each factor:
 *   XOR        sum lit = 1
 *   ATMOSTONE  sum lit <= 1
 *   OR         sum lit >= 1
 *   OROUT      lit_i <= lit_out (each input), lit_out <= sum lit_i
 *   PAIR       v <= u1, v <= u2, v >= u1 + u2 - 1 (v >= 0: its bound) */
static int hrep_build(const fg_graph *g, hrep *h) {
    memset(h, 0, sizeof *h);
    size_t rows = 0, terms = 0;
    for (int f = 0; f < g->n_factors; ++f) {
        int d = g->start[f + 1] - g->start[f];
        switch (g->type[f]) {
        case FG_OROUT: rows += (size_t)d; terms += 3 * (size_t)d; break;
        case FG_PAIR: rows += 3; terms += 7; break;
        default: rows += 1; terms += (size_t)d; break;
        }
    }
    h->cap = (int)rows;
    h->pool_cap = terms;
    h->rows = malloc((rows + 1) * sizeof *h->rows);
    h->var_pool = malloc((terms + 1) * sizeof *h->var_pool);
    h->neg_pool = malloc(terms + 1);
    h->a_pool = malloc((terms + 1) * sizeof *h->a_pool);
    if (!h->rows || !h->var_pool || !h->neg_pool || !h->a_pool) return -1;
    for (int f = 0; f < g->n_factors; ++f) {
        int s = g->start[f], d = g->start[f + 1] - s;
        const int *v = g->var + s;
        const char *ng = g->neg + s;
        hrow *r;
        switch (g->type[f]) {
        case FG_XOR:
        case FG_ATMOSTONE:
        case FG_OR:
            r = hrep_row(h, d, g->type[f] == FG_XOR ? 0 : g->type[f] == FG_ATMOSTONE ? -1 : 1,
                         1.0);
            if (!r) return -1;
            for (int j = 0; j < d; ++j) set_term(r, j, v[j], ng[j], 1.0);
            break;
        case FG_OROUT:
            for (int j = 0; j < d - 1; ++j) {
                r = hrep_row(h, 2, -1, 0.0);
                if (!r) return -1;
                set_term(r, 0, v[j], ng[j], 1.0);
                set_term(r, 1, v[d - 1], ng[d - 1], -1.0);
            }
            r = hrep_row(h, d, -1, 0.0);
            if (!r) return -1;
            set_term(r, 0, v[d - 1], ng[d - 1], 1.0);
            for (int j = 0; j < d - 1; ++j) set_term(r, j + 1, v[j], ng[j], -1.0);
            break;
        case FG_PAIR: {
            int out = -(1 + g->pair_index[f]);
            for (int j = 0; j < 2; ++j) {
                r = hrep_row(h, 2, -1, 0.0);
                if (!r) return -1;
                set_term(r, 0, out, false, 1.0);
                set_term(r, 1, v[j], false, -1.0);
            }
            r = hrep_row(h, 3, 1, -1.0);
            if (!r) return -1;
            set_term(r, 0, out, false, 1.0);
            set_term(r, 1, v[0], false, -1.0);
            set_term(r, 2, v[1], false, -1.0);
            break;
        }
        }
    }
    return 0;
}

/* The value of a row's left side at (u, v). */
static double row_activity(const hrow *r, const double *u, const double *v) {
    double s = 0.0;
    for (int k = 0; k < r->n; ++k) {
        double x = r->var[k] >= 0 ? u[r->var[k]] : v[-(1 + r->var[k])];
        s += r->a[k] * (r->neg[k] ? 1.0 - x : x);
    }
    return s;
}

static int compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* max theta.u + phi.v over the H-representation, by GLPK's dual simplex
 * with presolve. Returns 0 and the optimum, or -1. */
static int glpk_optimum(const fg_graph *g, const hrep *h, double *value) {
    int n = g->n_vars, a = g->n_pairs;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    double max = 0.0;
    for (int i = 0; i < n; ++i) max = fmax(max, fabs(g->theta[i]));
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] == FG_PAIR) max = fmax(max, fabs(g->param[f]));
    /* divide the objective by a power of two near its largest coefficient
     * (exact), so that GLPK's absolute tolerances are relative ones */
    int e = 0;
    if (max > 0.0) frexp(max, &e);
    double scale = ldexp(1.0, e);
    glp_add_cols(lp, n + a);
    for (int j = 1; j <= n + a; ++j) glp_set_col_bnds(lp, j, GLP_DB, 0.0, 1.0);
    for (int i = 0; i < n; ++i) glp_set_obj_coef(lp, i + 1, g->theta[i] / scale);
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] == FG_PAIR) glp_set_obj_coef(lp, n + g->pair_index[f] + 1, g->param[f] / scale);
    glp_add_rows(lp, h->n_rows + 1);
    glp_set_row_bnds(lp, h->n_rows + 1, GLP_FR, 0.0, 0.0); /* GLPK wants a row */
    size_t total = 0;
    for (int k = 0; k < h->n_rows; ++k) total += (size_t)h->rows[k].n;
    int *ia = malloc((total + 1) * sizeof *ia), *ja = malloc((total + 1) * sizeof *ja);
    double *ar = malloc((total + 1) * sizeof *ar);
    int *cols = malloc(((size_t)n + (size_t)a + 1) * sizeof *cols);
    double *coef = calloc((size_t)n + (size_t)a + 1, sizeof *coef);
    int *listed = calloc((size_t)n + (size_t)a + 1, sizeof *listed); /* row + 1 */
    int status = -1;
    if (ia && ja && ar && cols && coef && listed) {
        int ne = 0;
        for (int k = 0; k < h->n_rows; ++k) {
            const hrow *r = &h->rows[k];
            /* lit = 1 - u moves a to the right side; a variable twice in a
             * row has its coefficients merged (GLPK refuses duplicates) */
            double b = r->b;
            int nc = 0;
            for (int t = 0; t < r->n; ++t) {
                int col = r->var[t] >= 0 ? r->var[t] + 1 : n + (-(1 + r->var[t])) + 1;
                double c = r->a[t];
                if (r->neg[t]) {
                    b -= c;
                    c = -c;
                }
                if (listed[col] != k + 1) {
                    listed[col] = k + 1;
                    cols[nc++] = col;
                }
                coef[col] += c;
            }
            qsort(cols, (size_t)nc, sizeof *cols, compare_int);
            for (int t = 0; t < nc; ++t) {
                if (coef[cols[t]] != 0.0) {
                    ++ne;
                    ia[ne] = k + 1;
                    ja[ne] = cols[t];
                    ar[ne] = coef[cols[t]];
                }
                coef[cols[t]] = 0.0;
            }
            int type = r->sense < 0 ? GLP_UP : r->sense > 0 ? GLP_LO : GLP_FX;
            glp_set_row_bnds(lp, k + 1, type, b, b);
        }
        glp_load_matrix(lp, ne, ia, ja, ar);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.meth = GLP_DUALP;
        parm.presolve = GLP_ON;
        int rc = glp_simplex(lp, &parm);
        /* small problems: settle the optimum with GLPK's exact (rational)
         * simplex, from the basis just found */
        if (rc == 0 && glp_get_status(lp) == GLP_OPT && h->n_rows <= EXACT_MAX_ROWS) {
            parm.presolve = GLP_OFF;
            rc = glp_exact(lp, &parm);
        }
        if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
            double *u = malloc(((size_t)n + 1) * sizeof *u), *v = malloc(((size_t)a + 1) * sizeof *v);
            if (u && v) {
                for (int i = 0; i < n; ++i) u[i] = glp_get_col_prim(lp, i + 1);
                for (int k = 0; k < a; ++k) v[k] = glp_get_col_prim(lp, n + k + 1);
                double s = 0.0;
                for (int i = 0; i < n; ++i) s += g->theta[i] * u[i];
                for (int f = 0; f < g->n_factors; ++f)
                    if (g->type[f] == FG_PAIR) s += g->param[f] * v[g->pair_index[f]];
                *value = s;
                status = 0;
            }
            free(u);
            free(v);
        } else {
            printf("GLPK: glp_simplex returned %d, status %d\n", rc, glp_get_status(lp));
        }
    }
    free(ia);
    free(ja);
    free(ar);
    free(cols);
    free(coef);
    free(listed);
    glp_delete_prob(lp);
    return status;
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
    if (fg_read_file(c->path, &c->graphs, &c->n_graphs) != 0 || c->n_graphs < 1) return -1;
    c->glpk = calloc((size_t)c->n_graphs, sizeof *c->glpk);
    if (!c->glpk) return -1;
    double t0 = monotonic_seconds();
    for (int k = 0; k < c->n_graphs; ++k) {
        hrep h;
        int rc = hrep_build(&c->graphs[k], &h) == 0 ? glpk_optimum(&c->graphs[k], &h, &c->glpk[k])
                                                    : -1;
        hrep_free(&h);
        if (rc != 0) {
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
        if (g->type[f] == FG_PAIR) s = fmax(s, fabs(g->param[f]));
    return s;
}

static double score_l1(const fg_graph *g) {
    double s = 0.0;
    for (int i = 0; i < g->n_vars; ++i) s += fabs(g->theta[i]);
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] == FG_PAIR) s += fabs(g->param[f]);
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
 * n_pairs numbers, a blank line. False if the layout differs. */
static bool read_posteriors(const char **p, const fg_graph *g, double *u, double *v) {
    char line[256];
    line_reader r = {*p, *p + strlen(*p), 0};
    for (int i = 0; i < g->n_vars; ++i)
        if (!next_line(&r, line, sizeof line) || !parse_double(line, &u[i], NULL)) return false;
    if (!next_line(&r, line, sizeof line) || line[0] != '\0') return false;
    for (int k = 0; k < g->n_pairs; ++k)
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
        double *v = malloc(((size_t)g->n_pairs + 1) * sizeof *v);
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
                double x = v[g->pair_index[f]];
                s += g->param[f] * x;
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
        double *v = malloc(((size_t)g->n_pairs + 1) * sizeof *v);
        assert_non_null(u);
        assert_non_null(v);
        bool layout = read_posteriors(&p, g, u, v);
        hrep h;
        int built = hrep_build(g, &h);
        int violated = 0;
        double worst = 0.0;
        for (int r = 0; layout && built == 0 && r < h.n_rows; ++r) {
            const hrow *row = &h.rows[r];
            double act = row_activity(row, u, v), norm = 0.0;
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
        for (int j = 0; j < c->n_graphs; ++j) fg_free(&c->graphs[j]);
        free(c->graphs);
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
