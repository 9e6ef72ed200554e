/*
 * concord on UAI models, checked against references that share no code
 * with concord: the repository's small models (tests/data/uai), and AD3's
 * examples (../shared/data/ad3) and the UAI 2014 MAP instances
 * (../shared/data/uai2014), whose tests skip with a line naming the first
 * missing file when ../shared/data is absent. This file parses the model,
 * evidence and result files itself, builds the local-polytope LP with GLPK
 * (one simplex of joint states per table of two or more variables, one of
 * states per variable, marginalization constraints, zero potentials and
 * evidence fixing their variables to 0, objective the sum of the logs of
 * the allowed entries) and evaluates assignments as the sum of the natural
 * logs of their table entries. concord's LP-MAP value must equal GLPK's
 * optimum, its dual bound must not fall below it nor below any known
 * assignment (the .MAP files hold the best known ones; the repository's
 * models are small enough for a brute force to find the MAP), its decoded
 * assignment must be feasible and worth what this file computes, and the
 * CLI's --uai-map output must be a valid result file worth its JSON
 * map_value. Under AddressSanitizer the slowest instances are skipped.
 */
#include <errno.h>
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
#include <glpk.h>

#include "concord.h"
#include "child_process.h"
#include "testutil.h"

/* Relative tolerances (relative to max(1, |reference|)). */
#define LP_TOL 1e-5     /* concord's LP-MAP value vs GLPK's optimum */
#define BOUND_TOL 1e-6  /* a dual bound vs a value it must not fall below */
#define EVAL_TOL 1e-9   /* two evaluations of one assignment */

typedef struct instance {
    const char *path; /* under tests/data (repository) or ../shared/data */
    bool repository;  /* in the repository: small enough for a brute force */
    bool evidence;    /* PATH.evid holds its evidence */
    bool glpk;        /* its LP is small enough for GLPK in a few seconds */
    bool slow;        /* skipped under ASan */
} instance;

/* The repository's models (scripts/gen-test-data.py): a MARKOV grid with
 * zeros and evidence, a BAYES network with evidence in the older format, a
 * MARKOV model with a ternary table, repeated unary tables and a variable
 * in no larger table, a frustrated triangle (fractional LP-MAP). Their best
 * assignments are found by brute force. */
static const instance repository_models[] = {
    {"uai/grid3x3.uai", true, true, true, false},
    {"uai/bayes.uai", true, true, true, false},
    {"uai/mixed.uai", true, false, true, false},
    {"uai/frustrated.uai", true, false, true, false},
};

/* ../shared/data: AD3's examples, and UAI 2014 MAP instances with their
 * evidence and best known assignment (PATH.MAP). */
static const instance shared_models[] = {
    {"ad3/grid3x3.uai", false, false, true, false},
    {"ad3/grid4x4.uai", false, false, true, false},
    {"ad3/grid10x10.f2.wrap.uai", false, false, true, false},
    {"ad3/network.uai", false, false, true, false},
    {"ad3/smokers_10.uai", false, false, true, false},
    {"ad3/GEOM30a_3.uai", false, false, true, false},
    {"ad3/deer_rescaled_0034.K10.F1.25.model.uai", false, false, true, false},
    {"ad3/Family2Dominant.1.5loci.uai", false, false, true, false},
    {"ad3/10_14_s.binary.uai", false, false, true, false},
    {"ad3/or_chain_10.fg.uai", false, false, true, false},
    {"ad3/30markers.uai", false, false, true, true},
    {"uai2014/Grids_26.uai", false, true, true, false},
    {"uai2014/Grids_28.uai", false, true, true, false},
    {"uai2014/Grids_30.uai", false, true, true, false},
    {"uai2014/ObjectDetection_11.uai", false, true, false, true},
    {"uai2014/Promedas_11.uai", false, true, true, true},
    {"uai2014/Promedas_20.uai", false, true, true, false},
    {"uai2014/Promedas_30.uai", false, true, true, false},
    {"uai2014/ProteinFolding_11.uai", false, true, true, false},
    {"uai2014/Segmentation_12.uai", false, true, true, false},
    {"uai2014/Segmentation_14.uai", false, true, true, false},
    {"uai2014/wcsp_15.uai", false, true, true, false},
};

#define COUNT(list) ((int)(sizeof list / sizeof list[0]))

static double rel_tol(double tol, double reference) {
    return tol * (fabs(reference) > 1.0 ? fabs(reference) : 1.0);
}

/* The shared instances with evidence (UAI 2014) have a best known
 * assignment in PATH.MAP; the repository's get theirs by brute force. */
static bool has_best_known(const instance *in) { return in->repository || in->evidence; }

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool skipped(const instance *in) { return UNDER_ASAN && in->slow; }

static void data_path(char *buf, size_t size, const instance *in, const char *suffix) {
    int n = snprintf(buf, size, "%s/%s%s", in->repository ? CONCORD_TEST_DATA : CONCORD_SHARED_DATA,
                     in->path, suffix);
    assert_true(n > 0 && (size_t)n < size);
}

/* Skips the running test, naming the first missing file, unless every
 * file of the shared instances is there (models, evidence, .MAP). */
static void require_shared_files(const instance *list, int n) {
    for (int k = 0; k < n; ++k) {
        char relative[512];
        const char *suffixes[] = {"", ".evid", ".MAP"};
        for (int j = 0; j < (list[k].evidence ? 3 : 1); ++j) {
            snprintf(relative, sizeof relative, "%s%s", list[k].path, suffixes[j]);
            if (!list[k].repository) shared_data_path_or_skip(relative);
        }
    }
}

/* ------------------------------------------------------------------------
 * An independent reader for the UAI model, evidence and result formats
 * (whitespace-separated numbers; the files are trusted, so any surprise is
 * a test failure).
 * ------------------------------------------------------------------------ */

typedef struct cursor {
    const char *p;
} cursor;

static bool at_end(cursor *c) {
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') ++c->p;
    return *c->p == '\0';
}

static long next_long(cursor *c) {
    char *end;
    assert_false(at_end(c));
    errno = 0;
    long x = strtol(c->p, &end, 10);
    assert_true(end != c->p && errno == 0);
    assert_true(*end == '\0' || *end == ' ' || *end == '\t' || *end == '\n' || *end == '\r');
    c->p = end;
    return x;
}

static double next_double(cursor *c) {
    char *end;
    assert_false(at_end(c));
    double x = strtod(c->p, &end);
    assert_true(end != c->p);
    c->p = end;
    return x;
}

static size_t count_tokens(cursor c) {
    size_t n = 0;
    while (!at_end(&c)) {
        ++n;
        while (*c.p && *c.p != ' ' && *c.p != '\t' && *c.p != '\n' && *c.p != '\r') ++c.p;
    }
    return n;
}

typedef struct uai_model {
    int n;       /* variables */
    int *card;   /* their cardinalities */
    int c;       /* tables */
    int *arity;  /* per table */
    int **scope; /* per table: its variables */
    long *size;  /* per table: entries */
    double **table;
} uai_model;

static void model_parse(const char *text, uai_model *m) {
    cursor c = {text};
    assert_false(at_end(&c));
    assert_true(strncmp(c.p, "MARKOV", 6) == 0 || strncmp(c.p, "BAYES", 5) == 0);
    c.p += c.p[0] == 'M' ? 6 : 5;
    m->n = (int)next_long(&c);
    assert_true(m->n > 0);
    m->card = malloc((size_t)m->n * sizeof *m->card);
    assert_non_null(m->card);
    for (int i = 0; i < m->n; ++i) {
        m->card[i] = (int)next_long(&c);
        assert_true(m->card[i] > 0);
    }
    m->c = (int)next_long(&c);
    assert_true(m->c >= 0);
    size_t nc = (size_t)(m->c ? m->c : 1);
    m->arity = malloc(nc * sizeof *m->arity);
    m->scope = malloc(nc * sizeof *m->scope);
    m->size = malloc(nc * sizeof *m->size);
    m->table = malloc(nc * sizeof *m->table);
    assert_true(m->arity && m->scope && m->size && m->table);
    for (int f = 0; f < m->c; ++f) {
        m->arity[f] = (int)next_long(&c);
        assert_true(m->arity[f] >= 1 && m->arity[f] <= m->n);
        m->scope[f] = malloc((size_t)m->arity[f] * sizeof(int));
        assert_non_null(m->scope[f]);
        m->size[f] = 1;
        for (int j = 0; j < m->arity[f]; ++j) {
            int v = (int)next_long(&c);
            assert_true(v >= 0 && v < m->n);
            m->scope[f][j] = v;
            m->size[f] *= m->card[v];
        }
    }
    for (int f = 0; f < m->c; ++f) {
        assert_int_equal(next_long(&c), m->size[f]);
        m->table[f] = malloc((size_t)m->size[f] * sizeof(double));
        assert_non_null(m->table[f]);
        for (long e = 0; e < m->size[f]; ++e) {
            double x = next_double(&c);
            assert_true(isfinite(x) && x >= 0.0);
            m->table[f][e] = x;
        }
    }
    assert_true(at_end(&c));
}

static void model_free(uai_model *m) {
    for (int f = 0; f < m->c; ++f) {
        free(m->scope[f]);
        free(m->table[f]);
    }
    free(m->card);
    free(m->arity);
    free(m->scope);
    free(m->size);
    free(m->table);
}

/* Evidence ("E v1 x1 ..." or the older "1 E v1 x1 ...") into observed[]
 * (-1: not observed). */
static void evidence_parse(const char *text, const uai_model *m, int *observed) {
    for (int i = 0; i < m->n; ++i) observed[i] = -1;
    cursor c = {text};
    if (at_end(&c)) return;
    long first = next_long(&c);
    long pairs = first;
    if ((long)count_tokens(c) != 2 * first) {
        assert_int_equal(first, 1);
        pairs = next_long(&c);
    }
    assert_int_equal((long)count_tokens(c), 2 * pairs);
    for (long k = 0; k < pairs; ++k) {
        long v = next_long(&c), x = next_long(&c);
        assert_true(v >= 0 && v < m->n && x >= 0 && x < m->card[v]);
        observed[v] = (int)x;
    }
}

/* A result file: "MAP", then N and N states. */
static void result_parse(const char *text, const uai_model *m, int32_t *labels) {
    cursor c = {text};
    assert_false(at_end(&c));
    assert_true(strncmp(c.p, "MAP", 3) == 0);
    c.p += 3;
    assert_int_equal(next_long(&c), m->n);
    for (int i = 0; i < m->n; ++i) {
        long x = next_long(&c);
        assert_true(x >= 0 && x < m->card[i]);
        labels[i] = (int32_t)x;
    }
    assert_true(at_end(&c));
}

/* The natural log of the assignment's unnormalized probability: the sum
 * over all tables of the log of its entry (-inf when one is zero). */
static double log_prob(const uai_model *m, const int32_t *x) {
    double sum = 0.0;
    for (int f = 0; f < m->c; ++f) {
        long index = 0;
        for (int j = 0; j < m->arity[f]; ++j)
            index = index * m->card[m->scope[f][j]] + x[m->scope[f][j]];
        double p = m->table[f][index];
        if (p == 0.0) return -INFINITY;
        sum += log(p);
    }
    return sum;
}

/* ------------------------------------------------------------------------
 * The local-polytope LP, solved by GLPK
 * ------------------------------------------------------------------------ */

/* Column builder for glp_load_matrix (1-based triplets). */
typedef struct triplets {
    int *row, *col;
    double *val;
    size_t n, cap;
} triplets;

static void triplet_add(triplets *t, int row, int col, double val) {
    if (t->n + 1 >= t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->row = realloc(t->row, t->cap * sizeof *t->row);
        t->col = realloc(t->col, t->cap * sizeof *t->col);
        t->val = realloc(t->val, t->cap * sizeof *t->val);
        assert_true(t->row && t->col && t->val);
    }
    ++t->n; /* GLPK ignores index 0 */
    t->row[t->n] = row;
    t->col[t->n] = col;
    t->val[t->n] = val;
}

/* max  sum_i sum_s theta_is x_is + sum_f sum_e log(phi_fe) mu_fe
 * s.t. sum_s x_is = 1 per variable; per table of two or more variables:
 *      sum_e mu_fe = 1 and, for each position j and state s,
 *      sum_{e: e_j = s} mu_fe = x_{scope_j, s};  x, mu >= 0;
 *      x_is = 0 when evidence fixes another state or a unary table is 0
 *      at s; mu_fe = 0 when phi_fe = 0.
 * theta_is sums the logs of all unary tables of i at s. */
static double glpk_local_polytope(const uai_model *m, const int *observed) {
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    int *first_col = malloc((size_t)m->n * sizeof *first_col);
    assert_non_null(first_col);
    int cols = 0;
    for (int i = 0; i < m->n; ++i) {
        first_col[i] = cols + 1;
        cols += m->card[i];
    }
    glp_add_cols(lp, cols);
    for (int i = 0; i < m->n; ++i)
        for (int s = 0; s < m->card[i]; ++s) {
            int col = first_col[i] + s;
            if (observed[i] >= 0 && observed[i] != s) glp_set_col_bnds(lp, col, GLP_FX, 0.0, 0.0);
            else glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
        }
    for (int f = 0; f < m->c; ++f) {
        if (m->arity[f] != 1) continue;
        int i = m->scope[f][0];
        for (int s = 0; s < m->card[i]; ++s) {
            int col = first_col[i] + s;
            double p = m->table[f][s];
            if (p == 0.0) glp_set_col_bnds(lp, col, GLP_FX, 0.0, 0.0);
            else glp_set_obj_coef(lp, col, glp_get_obj_coef(lp, col) + log(p));
        }
    }
    for (int i = 0; i < m->n; ++i)
        for (int s = 0; s < m->card[i]; ++s) {
            int col = first_col[i] + s;
            if (glp_get_col_type(lp, col) == GLP_FX) glp_set_obj_coef(lp, col, 0.0);
        }

    triplets t = {0};
    int row = glp_add_rows(lp, m->n);
    for (int i = 0; i < m->n; ++i, ++row) {
        glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
        for (int s = 0; s < m->card[i]; ++s) triplet_add(&t, row, first_col[i] + s, 1.0);
    }
    int *digit = malloc((size_t)m->n * sizeof *digit);
    assert_non_null(digit);
    for (int f = 0; f < m->c; ++f) {
        int arity = m->arity[f];
        if (arity < 2) continue;
        int mu = glp_add_cols(lp, (int)m->size[f]);
        int sum_row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, sum_row, GLP_FX, 1.0, 1.0);
        /* marginalization rows: position j, state s at marg + offset[j] + s */
        int marg_rows = 0;
        for (int j = 0; j < arity; ++j) marg_rows += m->card[m->scope[f][j]];
        int marg = glp_add_rows(lp, marg_rows);
        for (int j = 0, r = marg; j < arity; ++j) {
            int v = m->scope[f][j];
            for (int s = 0; s < m->card[v]; ++s, ++r) {
                glp_set_row_bnds(lp, r, GLP_FX, 0.0, 0.0);
                triplet_add(&t, r, first_col[v] + s, -1.0);
            }
        }
        for (int j = 0; j < arity; ++j) digit[j] = 0;
        for (long e = 0; e < m->size[f]; ++e) {
            int col = mu + (int)e;
            double p = m->table[f][e];
            if (p == 0.0) {
                glp_set_col_bnds(lp, col, GLP_FX, 0.0, 0.0);
            } else {
                glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
                glp_set_obj_coef(lp, col, log(p));
            }
            triplet_add(&t, sum_row, col, 1.0);
            for (int j = 0, offset = 0; j < arity; ++j) {
                triplet_add(&t, marg + offset + digit[j], col, 1.0);
                offset += m->card[m->scope[f][j]];
            }
            for (int j = arity - 1; j >= 0; --j) {
                if (++digit[j] < m->card[m->scope[f][j]]) break;
                digit[j] = 0;
            }
        }
    }
    glp_load_matrix(lp, (int)t.n, t.row, t.col, t.val);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(lp, &parm);
    assert_int_equal(rc, 0);
    assert_int_equal(glp_get_status(lp), GLP_OPT);
    double optimum = glp_get_obj_val(lp);
    glp_delete_prob(lp);
    free(t.row);
    free(t.col);
    free(t.val);
    free(digit);
    free(first_col);
    return optimum;
}

/* ------------------------------------------------------------------------
 * Loading an instance both ways
 * ------------------------------------------------------------------------ */

typedef struct loaded {
    uai_model model;
    int *observed;
    concord_graph *graph;
    concord_solver *solver;
} loaded;

/* The graph has the shape the UAI semantics call for: per variable, the
 * states that evidence and zero unary entries leave; an XOR for each
 * variable in no table of two or more (added with the variables, first),
 * then one DENSE factor per such table, over the product of the kept
 * states. */
static void check_structure(const uai_model *m, const int *observed, const concord_graph *g) {
    int *kept = malloc((size_t)m->n * sizeof *kept);
    bool *in_table = calloc((size_t)m->n, sizeof *in_table);
    bool *zero = NULL;
    assert_true(kept && in_table);
    int n_xor = 0, n_dense = 0, expected_vars = 0;
    for (int i = 0; i < m->n; ++i) {
        zero = calloc((size_t)m->card[i], sizeof *zero);
        assert_non_null(zero);
        for (int f = 0; f < m->c; ++f)
            if (m->arity[f] == 1 && m->scope[f][0] == i)
                for (int s = 0; s < m->card[i]; ++s) zero[s] |= m->table[f][s] == 0.0;
        kept[i] = 0;
        for (int s = 0; s < m->card[i]; ++s)
            kept[i] += !zero[s] && (observed[i] < 0 || observed[i] == s);
        free(zero);
        expected_vars += kept[i];
        int32_t first, count;
        assert_int_equal(concord_multi_variable(g, i, &first, &count), CONCORD_OK);
        assert_int_equal(count, kept[i]);
    }
    for (int f = 0; f < m->c; ++f)
        if (m->arity[f] >= 2)
            for (int j = 0; j < m->arity[f]; ++j) in_table[m->scope[f][j]] = true;
    for (int i = 0; i < m->n; ++i) n_xor += !in_table[i];
    for (int f = 0; f < m->c; ++f) {
        if (m->arity[f] < 2) continue;
        long product = 1;
        for (int j = 0; j < m->arity[f]; ++j) product *= kept[m->scope[f][j]];
        int32_t first, count;
        assert_int_equal(concord_factor_additionals(g, n_xor + n_dense, &first, &count),
                         CONCORD_OK);
        assert_int_equal(count, product);
        n_dense += 1;
    }
    assert_int_equal(concord_num_variables(g), expected_vars);
    assert_int_equal(concord_num_factors(g), n_xor + n_dense);
    free(kept);
    free(in_table);
}

static void load(const instance *in, loaded *out) {
    char path[1024], evid[1024];
    data_path(path, sizeof path, in, "");
    data_path(evid, sizeof evid, in, ".evid");
    char *text = read_whole_file_or_fail(path, NULL);
    model_parse(text, &out->model);
    free(text);
    out->observed = malloc((size_t)out->model.n * sizeof *out->observed);
    assert_non_null(out->observed);
    bool has_evidence = in->evidence;
    if (has_evidence) {
        text = read_whole_file_or_fail(evid, NULL);
        evidence_parse(text, &out->model, out->observed);
        free(text);
    } else {
        for (int i = 0; i < out->model.n; ++i) out->observed[i] = -1;
    }
    char error[512];
    out->graph = NULL;
    int rc = concord_read_uai(path, has_evidence ? evid : NULL, &out->graph, error, sizeof error);
    if (rc != CONCORD_OK) print_error("%s\n", error);
    assert_int_equal(rc, CONCORD_OK);
    assert_int_equal(concord_num_multi_variables(out->graph), out->model.n);
    check_structure(&out->model, out->observed, out->graph);
    out->solver = new_solver_or_fail(out->graph);
}

static void unload(loaded *l) {
    concord_solver_free(l->solver);
    concord_graph_free(l->graph);
    free(l->observed);
    model_free(&l->model);
}

static int solve(concord_solver *s, concord_info *info) {
    int rc = concord_solver_map(s, NULL, info);
    if (rc != CONCORD_OK)
        print_error("solve: %s (%s)\n", concord_strerror(rc), concord_solver_last_error(s));
    return rc;
}

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

/* The best assignment that agrees with the evidence, by enumerating all
 * of them: its labels into best and its log probability (-inf when every
 * one is impossible). */
static double brute_force_map(const uai_model *m, const int *observed, int32_t *best) {
    int *digit = calloc((size_t)m->n, sizeof *digit), *radix = malloc((size_t)m->n * sizeof *radix);
    int32_t *x = malloc((size_t)m->n * sizeof *x);
    assert_true(digit && radix && x);
    for (int i = 0; i < m->n; ++i) radix[i] = observed[i] >= 0 ? 1 : m->card[i];
    double best_value = -INFINITY;
    do {
        for (int i = 0; i < m->n; ++i) x[i] = observed[i] >= 0 ? observed[i] : digit[i];
        double value = log_prob(m, x);
        if (value > best_value) {
            best_value = value;
            memcpy(best, x, (size_t)m->n * sizeof *x);
        }
    } while (odometer_next(digit, radix, m->n));
    free(digit);
    free(radix);
    free(x);
    return best_value;
}

static void lp_map_value_equals_the_glpk_optimum_on(const instance *list, int n) {
    printf("%-44s %18s %18s %18s %9s %7s %7s\n", "instance", "GLPK optimum", "concord value",
           "concord bound", "rel diff", "glpk s", "ad3 s");
    int failures = 0;
    for (int k = 0; k < n; ++k) {
        const instance *in = &list[k];
        if (!in->glpk) continue;
        if (skipped(in)) {
            printf("%-44s skipped under ASan (slow)\n", base_name(in->path));
            continue;
        }
        loaded l;
        load(in, &l);
        double t0 = monotonic_seconds();
        double optimum = glpk_local_polytope(&l.model, l.observed);
        double t1 = monotonic_seconds();
        concord_info info;
        int rc = solve(l.solver, &info);
        double t2 = monotonic_seconds();
        double diff = (info.value - optimum) / (fabs(optimum) > 1.0 ? fabs(optimum) : 1.0);
        bool ok = rc == CONCORD_OK && fabs(info.value - optimum) <= rel_tol(LP_TOL, optimum) &&
                  info.upper_bound >= optimum - rel_tol(BOUND_TOL, optimum);
        printf("%-44s %18.10f %18.10f %18.10f %9.1e %7.2f %7.2f%s\n", base_name(in->path),
               optimum, info.value, info.upper_bound, diff, t1 - t0, t2 - t1,
               ok ? "" : "  <-- FAILS");
        failures += !ok;
        unload(&l);
    }
    fflush(stdout);
    assert_int_equal(failures, 0);
}

static void lp_map_value_equals_the_glpk_local_polytope_optimum(void **state) {
    (void)state;
    lp_map_value_equals_the_glpk_optimum_on(repository_models, COUNT(repository_models));
}

static void lp_map_value_equals_the_glpk_local_polytope_optimum_on_shared_models(void **state) {
    (void)state;
    require_shared_files(shared_models, COUNT(shared_models));
    lp_map_value_equals_the_glpk_optimum_on(shared_models, COUNT(shared_models));
}

/* The best known assignment (the repository's: the brute force's optimum;
 * the shared ones: PATH.MAP) is worth to concord what this file computes,
 * the dual bound is not below it, and the decoded assignment is feasible,
 * worth what this file computes, and not above the bound; a brute force's
 * optimum is the MAP, so the decoded assignment is not above it either,
 * and reaches it when LP-MAP is integral. */
static void best_known_assignments_check_on(const instance *list, int n) {
    printf("%-24s %18s %18s %18s %7s %8s\n", "instance", "upper bound", "best known", "decoded",
           "iters", "status");
    int failures = 0;
    for (int k = 0; k < n; ++k) {
        const instance *in = &list[k];
        if (!has_best_known(in)) continue;
        if (skipped(in)) {
            printf("%-24s skipped under ASan (slow)\n", base_name(in->path));
            continue;
        }
        loaded l;
        load(in, &l);
        const uai_model *m = &l.model;
        concord_graph *g = l.graph;
        int32_t nv = concord_num_variables(g);
        double *x = malloc((size_t)nv * sizeof *x);
        int32_t *best = malloc((size_t)m->n * sizeof *best);
        int32_t *decoded = malloc((size_t)m->n * sizeof *decoded);
        assert_true(x && best && decoded);

        /* The best known assignment, evaluated here and by concord. */
        double best_value;
        if (in->repository) {
            best_value = brute_force_map(m, l.observed, best);
            assert_true(isfinite(best_value)); /* the repository's models are feasible */
        } else {
            char path[1024];
            data_path(path, sizeof path, in, ".MAP");
            char *text = read_whole_file_or_fail(path, NULL);
            result_parse(text, m, best);
            free(text);
            best_value = log_prob(m, best);
        }
        bool consistent = true;
        for (int i = 0; i < m->n; ++i)
            consistent &= l.observed[i] < 0 || l.observed[i] == best[i];
        int rc = concord_assignment_from_labels(g, best, x);
        concord_decoding d = {0};
        if (consistent && isfinite(best_value)) {
            assert_int_equal(rc, CONCORD_OK);
            assert_int_equal(concord_solver_evaluate(l.solver, x, &d), CONCORD_OK);
            assert_int_equal(d.violated, 0);
            if (!(fabs(d.value - best_value) <= rel_tol(EVAL_TOL, best_value))) {
                print_error("%s: concord evaluates the best known assignment to %.17g, "
                            "this file to %.17g\n",
                            in->path, d.value, best_value);
                failures += 1;
            }
        } else {
            /* Outside the evidence or impossible: concord must agree. */
            printf("%-24s best known assignment is %s\n", base_name(in->path),
                   consistent ? "impossible (a zero entry)" : "against the evidence");
            if (rc == CONCORD_OK) {
                assert_int_equal(concord_solver_evaluate(l.solver, x, &d), CONCORD_OK);
                assert_true(d.violated > 0);
            } else {
                assert_int_equal(rc, CONCORD_EINFEASIBLE);
            }
            best_value = -INFINITY;
        }

        /* The LP bound and the decoded assignment. */
        concord_info info;
        rc = solve(l.solver, &info);
        assert_int_equal(rc, CONCORD_OK);
        concord_decoding dec;
        assert_int_equal(concord_solver_decode(l.solver, &dec), CONCORD_OK);
        assert_int_equal(concord_solver_decoded_labels(l.solver, decoded), CONCORD_OK);
        double own = -INFINITY;
        bool in_range = true;
        for (int i = 0; i < m->n; ++i) {
            in_range &= decoded[i] >= 0 && decoded[i] < m->card[i];
            in_range &= l.observed[i] < 0 || l.observed[i] == decoded[i];
        }
        if (in_range) own = log_prob(m, decoded);
        bool ok = in_range && dec.violated == 0 && isfinite(own) &&
                  fabs(dec.value - own) <= rel_tol(EVAL_TOL, own) &&
                  info.upper_bound >= best_value - rel_tol(BOUND_TOL, best_value) &&
                  dec.value <= info.upper_bound + rel_tol(BOUND_TOL, info.upper_bound) &&
                  info.value <= info.upper_bound + rel_tol(LP_TOL, info.upper_bound);
        if (in->repository && ok) /* the brute force's optimum is the MAP */
            ok = own <= best_value + rel_tol(EVAL_TOL, best_value) &&
                 (!info.integral || fabs(own - best_value) <= rel_tol(EVAL_TOL, best_value));
        printf("%-24s %18.8f %18.8f %18.8f %7d %8s%s\n", base_name(in->path), info.upper_bound,
               best_value, dec.value, info.iterations, concord_status_name(info.status),
               ok ? "" : "  <-- FAILS");
        if (!ok)
            print_error("%s: decoded in range %d, violated %d, concord value %.17g, own %.17g\n",
                        in->path, in_range, dec.violated, dec.value, own);
        failures += !ok;
        free(x);
        free(best);
        free(decoded);
        unload(&l);
    }
    fflush(stdout);
    assert_int_equal(failures, 0);
}

static void best_known_assignments_respect_the_bound_and_decoding_is_feasible(void **state) {
    (void)state;
    best_known_assignments_check_on(repository_models, COUNT(repository_models));
}

static void best_known_assignments_respect_the_bound_on_shared_models(void **state) {
    (void)state;
    require_shared_files(shared_models, COUNT(shared_models));
    best_known_assignments_check_on(shared_models, COUNT(shared_models));
}

/* `concord solve MODEL --evid EVID --uai-map OUT --json`: OUT is a result
 * file ("MAP", N, N states in range that agree with the evidence) whose
 * value, computed here, is the JSON's map_value; for a repository model
 * that value is at most the brute force's optimum. */
static void cli_uai_map_output_check(const instance *in) {
    char model_path[1024], evid_path[1024];
    data_path(model_path, sizeof model_path, in, "");
    data_path(evid_path, sizeof evid_path, in, ".evid");
    assert_true(in->evidence);
    char dir[] = "/tmp/concord_uai_cli_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out_path[1100], json_path[1100];
    snprintf(out_path, sizeof out_path, "%s/out.MAP", dir);
    snprintf(json_path, sizeof json_path, "%s/out.json", dir);
    const char *argv[] = {CONCORD_BINARY, "solve", model_path, "--evid", evid_path,
                          "--uai-map", out_path, "--json", NULL};
    assert_int_equal(run_program(argv, NULL, json_path, NULL, 0), 0);

    char *json = read_whole_file_or_fail(json_path, NULL);
    const char *key = strstr(json, "\"map_value\":");
    assert_non_null(key);
    char *end;
    double map_value = strtod(key + strlen("\"map_value\":"), &end);
    assert_true(end != key + strlen("\"map_value\":"));
    assert_non_null(strstr(json, "\"violated\":0"));
    assert_null(strchr(strchr(json, '\n') + 1, '{')); /* one graph, one line */

    char *text = read_whole_file_or_fail(model_path, NULL);
    uai_model m;
    model_parse(text, &m);
    free(text);
    int *observed = malloc((size_t)m.n * sizeof *observed);
    int32_t *labels = malloc((size_t)m.n * sizeof *labels);
    assert_true(observed && labels);
    text = read_whole_file_or_fail(evid_path, NULL);
    evidence_parse(text, &m, observed);
    free(text);
    text = read_whole_file_or_fail(out_path, NULL);
    result_parse(text, &m, labels);
    free(text);
    int n_observed = 0;
    for (int i = 0; i < m.n; ++i) {
        if (observed[i] < 0) continue;
        n_observed += 1;
        assert_int_equal(labels[i], observed[i]);
    }
    assert_true(n_observed > 0); /* the instance does have evidence */
    double own = log_prob(&m, labels);
    printf("CLI on %s: map_value %.17g, this file's evaluation of --uai-map %.17g\n",
           base_name(in->path), map_value, own);
    assert_true(isfinite(own));
    assert_true(fabs(own - map_value) <= rel_tol(EVAL_TOL, own));
    if (in->repository) {
        double best = brute_force_map(&m, observed, labels);
        printf("CLI on %s: the brute force's optimum %.17g\n", base_name(in->path), best);
        assert_true(own <= best + rel_tol(EVAL_TOL, best));
    }

    free(json);
    free(observed);
    free(labels);
    model_free(&m);
    remove_tree(dir);
}

static void cli_uai_map_output_is_worth_its_json_map_value(void **state) {
    (void)state;
    cli_uai_map_output_check(&repository_models[0]); /* grid3x3.uai, with evidence */
}

static void cli_uai_map_output_is_worth_its_json_map_value_on_promedas_30(void **state) {
    (void)state;
    static const instance in = {"uai2014/Promedas_30.uai", false, true, true, false};
    require_shared_files(&in, 1);
    cli_uai_map_output_check(&in);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    glp_term_out(GLP_OFF);
    if (UNDER_ASAN) printf("AddressSanitizer build: the instances marked slow are skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lp_map_value_equals_the_glpk_local_polytope_optimum),
        cmocka_unit_test(best_known_assignments_respect_the_bound_and_decoding_is_feasible),
        cmocka_unit_test(cli_uai_map_output_is_worth_its_json_map_value),
        cmocka_unit_test(lp_map_value_equals_the_glpk_local_polytope_optimum_on_shared_models),
        cmocka_unit_test(best_known_assignments_respect_the_bound_on_shared_models),
        cmocka_unit_test(cli_uai_map_output_is_worth_its_json_map_value_on_promedas_30),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    glp_free_env();
    return rc;
}
