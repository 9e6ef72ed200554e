/*
 * Graph-level references (see ref_graph.h): GLPK local-polytope LP,
 * brute-force MAP, distance to a factor polytope, random graphs. Everything
 * here takes the meaning of factors from ref_allowed (ref_semantics.c) and
 * nothing from the library.
 */
#include "ref_graph.h"

#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------ */

int ref_graph_num_additionals(const ref_graph *rg) {
    int a = 0;
    for (int f = 0; f < rg->n_factors; ++f) a += ref_num_additionals(&rg->factors[f]);
    return a;
}

/* The objective coefficients c[0..n_vars+additionals) of the LP. */
static void objective_coefficients(const ref_graph *rg, double *c) {
    for (int i = 0; i < rg->n_vars; ++i) c[i] = rg->theta[i];
    int k = rg->n_vars;
    for (int f = 0; f < rg->n_factors; ++f)
        if (rg->factors[f].kind == REF_PAIR) c[k++] = rg->factors[f].score;
}

double ref_graph_score_scale(const ref_graph *rg) {
    double c[REF_MAX_VARS + REF_MAX_FACTORS], s = 0.0;
    objective_coefficients(rg, c);
    for (int j = 0; j < rg->n_vars + ref_graph_num_additionals(rg); ++j)
        if (fabs(c[j]) > s) s = fabs(c[j]);
    return s;
}

double ref_graph_score_l1(const ref_graph *rg) {
    double c[REF_MAX_VARS + REF_MAX_FACTORS], s = 0.0;
    objective_coefficients(rg, c);
    for (int j = 0; j < rg->n_vars + ref_graph_num_additionals(rg); ++j) s += fabs(c[j]);
    return s;
}

void ref_graph_scale_scores(ref_graph *rg, double factor) {
    for (int i = 0; i < rg->n_vars; ++i) rg->theta[i] *= factor;
    for (int f = 0; f < rg->n_factors; ++f)
        if (rg->factors[f].kind == REF_PAIR) rg->factors[f].score *= factor;
}

/* A power of two >= the largest |c| (1 if all zero): dividing by it is
 * exact and brings the objective to GLPK's tolerances' scale (its dual
 * feasibility tolerance is absolute, so 1e-9 scores would look optimal
 * anywhere). */
static double power_of_two_scale(const double *c, int n) {
    double m = 0.0;
    for (int j = 0; j < n; ++j)
        if (fabs(c[j]) > m) m = fabs(c[j]);
    if (m == 0.0 || !isfinite(m)) return 1.0;
    int e;
    frexp(m, &e); /* m = f * 2^e, f in [0.5, 1) */
    return ldexp(1.0, e);
}

/* Every allowed configuration of a factor, as bit masks: bit j (j < degree)
 * is variable j, bit degree + k is additional k. Returns the count, or -1
 * when out of memory; *out is malloc'ed. */
static int allowed_configurations(const ref_factor *f, unsigned **out) {
    int d = f->degree, a = ref_num_additionals(f), bits = d + a;
    if (d < 1 || d > REF_MAX_DEGREE || bits > 20) return -1;
    unsigned total = 1u << bits;
    unsigned *list = malloc((size_t)total * sizeof *list);
    if (!list) return -1;
    int count = 0;
    int x[REF_MAX_DEGREE], y[4] = {0, 0, 0, 0};
    for (unsigned m = 0; m < total; ++m) {
        for (int j = 0; j < d; ++j) x[j] = (int)((m >> j) & 1u);
        for (int k = 0; k < a; ++k) y[k] = (int)((m >> (d + k)) & 1u);
        if (ref_allowed(f, x, y)) list[count++] = m;
    }
    *out = list;
    return count;
}

/* ------------------------------------------------------------------------
 * GLPK problem assembly
 * ------------------------------------------------------------------------ */

typedef struct lp_builder {
    glp_prob *lp;
    int *ia, *ja;
    double *ar;
    int ne, cap; /* entries are 1-based: ia[1..ne] */
    int failed;
} lp_builder;

static void lb_init(lp_builder *b) {
    memset(b, 0, sizeof *b);
    b->lp = glp_create_prob();
}

static void lb_entry(lp_builder *b, int row, int col, double value) {
    if (b->failed || value == 0.0) return;
    if (b->ne + 1 >= b->cap) {
        int cap = b->cap ? 2 * b->cap : 256;
        int *ia = realloc(b->ia, (size_t)cap * sizeof *ia);
        if (ia) b->ia = ia;
        int *ja = realloc(b->ja, (size_t)cap * sizeof *ja);
        if (ja) b->ja = ja;
        double *ar = realloc(b->ar, (size_t)cap * sizeof *ar);
        if (ar) b->ar = ar;
        if (!ia || !ja || !ar) {
            b->failed = 1;
            return;
        }
        b->cap = cap;
    }
    b->ne += 1;
    b->ia[b->ne] = row;
    b->ja[b->ne] = col;
    b->ar[b->ne] = value;
}

static int lb_add_rows(lp_builder *b, int count, int type, double lb, double ub) {
    int first = glp_add_rows(b->lp, count);
    for (int r = first; r < first + count; ++r) glp_set_row_bnds(b->lp, r, type, lb, ub);
    return first;
}

static int lb_add_cols(lp_builder *b, int count, int type, double lb, double ub) {
    int first = glp_add_cols(b->lp, count);
    for (int c = first; c < first + count; ++c) glp_set_col_bnds(b->lp, c, type, lb, ub);
    return first;
}

/* Loads the matrix and frees the builder's arrays; returns the problem (or
 * NULL on failure, the problem then deleted). */
static glp_prob *lb_finish(lp_builder *b) {
    if (!b->failed) glp_load_matrix(b->lp, b->ne, b->ia, b->ja, b->ar);
    free(b->ia);
    free(b->ja);
    free(b->ar);
    if (b->failed) {
        glp_delete_prob(b->lp);
        return NULL;
    }
    return b->lp;
}

/* The rows tying column `cols[j]` (j < degree: the factor's variables;
 * degree + k: its additionals) to the factor's polytope. V-representation:
 * weights w_c >= 0 summing to 1 and cols[j] - sum_c w_c config_c[j] = 0.
 * KNAPSACK: one row sum_j costs_j lit_j <= budget (lit = 1 - u if negated).
 * Returns 0, or -1 on failure. */
static int add_factor_polytope(lp_builder *b, const ref_factor *f, const int *cols) {
    int d = f->degree;
    if (f->kind == REF_KNAPSACK) {
        /* a negated link gets a column for its literal, lit + u = 1, so
         * that no rounding enters the knapsack row */
        int row = lb_add_rows(b, 1, GLP_UP, 0.0, f->budget);
        for (int j = 0; j < d; ++j) {
            int lit = cols[j];
            if (f->negated[j]) {
                lit = lb_add_cols(b, 1, GLP_DB, 0.0, 1.0);
                int tie = lb_add_rows(b, 1, GLP_FX, 1.0, 1.0);
                lb_entry(b, tie, lit, 1.0);
                lb_entry(b, tie, cols[j], 1.0);
            }
            lb_entry(b, row, lit, f->costs[j]);
        }
        return 0;
    }
    unsigned *configs;
    int count = allowed_configurations(f, &configs);
    if (count < 0) return -1;
    int bits = d + ref_num_additionals(f);
    int sum_row = lb_add_rows(b, 1, GLP_FX, 1.0, 1.0);
    int link_row = lb_add_rows(b, bits, GLP_FX, 0.0, 0.0);
    for (int j = 0; j < bits; ++j) lb_entry(b, link_row + j, cols[j], 1.0);
    if (count > 0) {
        int first = lb_add_cols(b, count, GLP_LO, 0.0, 0.0);
        for (int c = 0; c < count; ++c) {
            lb_entry(b, sum_row, first + c, 1.0);
            for (int j = 0; j < bits; ++j)
                if ((configs[c] >> j) & 1u) lb_entry(b, link_row + j, first + c, -1.0);
        }
    }
    free(configs);
    return 0;
}

/* Simplex from the current basis, then GLPK's exact (rational) simplex to
 * settle the answer. Returns REF_LP_*. GLPK's floating-point simplex
 * cycled for ever on a few degenerate LPs whose objective mixes 1e-9 and
 * 1e6 (seeds of test_lp_random other than its own): it is cut off at
 * SIMPLEX_ITERATIONS, 30 times the most any of the fifteen seeds' LPs
 * took (665), and tried again from the standard basis, then solved by the
 * exact simplex from there. */
enum { SIMPLEX_ITERATIONS = 20000 };
static int solve_lp(glp_prob *lp, bool exact) {
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    parm.it_lim = SIMPLEX_ITERATIONS;
    if (glp_simplex(lp, &parm) != 0) {
        glp_std_basis(lp);
        if (glp_simplex(lp, &parm) != 0) {
            glp_std_basis(lp);
            if (glp_exact(lp, &parm) != 0) return REF_LP_ERROR;
        }
    }
    if (exact && glp_exact(lp, &parm) != 0) return REF_LP_ERROR;
    switch (glp_get_status(lp)) {
    case GLP_OPT: return REF_LP_OPTIMAL;
    case GLP_NOFEAS: return REF_LP_INFEASIBLE;
    default: return REF_LP_ERROR;
    }
}

/* The local-polytope LP: columns 1..n_vars are u, then the additionals v,
 * then the factors' weights. The objective is divided by *scale (a power of
 * two). */
static glp_prob *build_local_lp(const ref_graph *rg, double *scale) {
    int n = rg->n_vars, a = ref_graph_num_additionals(rg);
    if (n < 0 || n > REF_MAX_VARS || rg->n_factors < 0 || rg->n_factors > REF_MAX_FACTORS)
        return NULL;
    double c[REF_MAX_VARS + REF_MAX_FACTORS];
    objective_coefficients(rg, c);
    *scale = power_of_two_scale(c, n + a);
    lp_builder b;
    lb_init(&b);
    glp_set_obj_dir(b.lp, GLP_MAX);
    lb_add_rows(&b, 1, GLP_FR, 0.0, 0.0); /* GLPK refuses a problem with no rows */
    if (n + a > 0) lb_add_cols(&b, n + a, GLP_DB, 0.0, 1.0);
    for (int j = 0; j < n + a; ++j) glp_set_obj_coef(b.lp, j + 1, c[j] / *scale);
    int next_add = n + 1;
    for (int k = 0; k < rg->n_factors && !b.failed; ++k) {
        const ref_factor *f = &rg->factors[k];
        int cols[REF_MAX_DEGREE + 4];
        for (int j = 0; j < f->degree; ++j) {
            if (f->vars[j] < 0 || f->vars[j] >= n) b.failed = 1;
            cols[j] = f->vars[j] + 1;
        }
        for (int j = 0; j < ref_num_additionals(f); ++j) cols[f->degree + j] = next_add++;
        if (!b.failed && add_factor_polytope(&b, f, cols) != 0) b.failed = 1;
    }
    return lb_finish(&b);
}

int ref_local_lp(const ref_graph *rg, double *value, double *u, double *v) {
    double scale;
    glp_prob *lp = build_local_lp(rg, &scale);
    if (!lp) return REF_LP_ERROR;
    int status = solve_lp(lp, true);
    if (status == REF_LP_OPTIMAL) {
        int n = rg->n_vars, a = ref_graph_num_additionals(rg);
        double uu[REF_MAX_VARS], vv[REF_MAX_FACTORS];
        for (int i = 0; i < n; ++i) uu[i] = glp_get_col_prim(lp, i + 1);
        for (int k = 0; k < a; ++k) vv[k] = glp_get_col_prim(lp, n + k + 1);
        if (value) *value = ref_objective(rg, uu, vv);
        if (u) memcpy(u, uu, (size_t)n * sizeof *u);
        if (v && a > 0) memcpy(v, vv, (size_t)a * sizeof *v);
    }
    glp_delete_prob(lp);
    return status;
}

int ref_local_lp_ranges(const ref_graph *rg, double value, double slack, double *lo,
                        double *hi) {
    double scale;
    glp_prob *lp = build_local_lp(rg, &scale);
    if (!lp) return REF_LP_ERROR;
    int n = rg->n_vars, a = ref_graph_num_additionals(rg);
    double c[REF_MAX_VARS + REF_MAX_FACTORS];
    objective_coefficients(rg, c);
    /* objective / scale >= (value - slack) / scale as a row */
    int row = glp_add_rows(lp, 1);
    int ind[REF_MAX_VARS + REF_MAX_FACTORS + 1];
    double val[REF_MAX_VARS + REF_MAX_FACTORS + 1];
    int len = 0;
    for (int j = 0; j < n + a; ++j) {
        if (c[j] == 0.0) continue;
        len += 1;
        ind[len] = j + 1;
        val[len] = c[j] / scale;
    }
    glp_set_mat_row(lp, row, len, ind, val);
    glp_set_row_bnds(lp, row, GLP_LO, (value - slack) / scale, 0.0);
    for (int j = 0; j < n + a; ++j) glp_set_obj_coef(lp, j + 1, 0.0);
    int status = REF_LP_OPTIMAL;
    for (int j = 0; j < n + a && status == REF_LP_OPTIMAL; ++j) {
        glp_set_obj_coef(lp, j + 1, 1.0);
        for (int dir = 0; dir < 2 && status == REF_LP_OPTIMAL; ++dir) {
            glp_set_obj_dir(lp, dir == 0 ? GLP_MIN : GLP_MAX);
            status = solve_lp(lp, false);
            if (status != REF_LP_OPTIMAL) break;
            double x = glp_get_col_prim(lp, j + 1);
            if (dir == 0) lo[j] = x;
            else hi[j] = x;
        }
        glp_set_obj_coef(lp, j + 1, 0.0);
    }
    glp_delete_prob(lp);
    return status;
}

/* ------------------------------------------------------------------------
 * Distance to a factor's polytope
 * ------------------------------------------------------------------------ */

double ref_distance_to_factor(const ref_factor *f, const double *u_f, const double *v_f) {
    int d = f->degree, a = ref_num_additionals(f), bits = d + a;
    if (d < 1 || d > REF_MAX_DEGREE) return -1.0;
    double target[REF_MAX_DEGREE + 4];
    for (int j = 0; j < d; ++j) target[j] = u_f[j];
    for (int k = 0; k < a; ++k) target[d + k] = v_f[k];
    for (int j = 0; j < bits; ++j)
        if (!isfinite(target[j])) return INFINITY;

    /* minimize t subject to a point p of M_f with |p_j - target_j| <= t:
     * p_j + t >= target_j and p_j - t <= target_j. Column 1 is t; columns
     * 2..bits+1 are p, tied to M_f by add_factor_polytope. */
    lp_builder b;
    lb_init(&b);
    glp_set_obj_dir(b.lp, GLP_MIN);
    lb_add_cols(&b, 1, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(b.lp, 1, 1.0);
    int first = lb_add_cols(&b, bits, GLP_DB, 0.0, 1.0);
    int cols[REF_MAX_DEGREE + 4];
    for (int j = 0; j < bits; ++j) cols[j] = first + j;
    int up = lb_add_rows(&b, bits, GLP_LO, 0.0, 0.0);
    int down = lb_add_rows(&b, bits, GLP_UP, 0.0, 0.0);
    for (int j = 0; j < bits; ++j) {
        glp_set_row_bnds(b.lp, up + j, GLP_LO, target[j], 0.0);
        glp_set_row_bnds(b.lp, down + j, GLP_UP, 0.0, target[j]);
        lb_entry(&b, up + j, cols[j], 1.0);
        lb_entry(&b, up + j, 1, 1.0);
        lb_entry(&b, down + j, cols[j], 1.0);
        lb_entry(&b, down + j, 1, -1.0);
    }
    if (add_factor_polytope(&b, f, cols) != 0) b.failed = 1;
    glp_prob *lp = lb_finish(&b);
    if (!lp) return -1.0;
    int status = solve_lp(lp, true);
    /* infeasible only when M_f is empty: every point is infinitely far */
    double t = status == REF_LP_OPTIMAL     ? glp_get_col_prim(lp, 1)
               : status == REF_LP_INFEASIBLE ? INFINITY
                                             : -1.0;
    glp_delete_prob(lp);
    return t;
}

double ref_graph_max_distance(const ref_graph *rg, const double *u, const double *v,
                              int *worst) {
    double max = 0.0;
    int k = 0, arg = -1;
    for (int f = 0; f < rg->n_factors; ++f) {
        const ref_factor *fac = &rg->factors[f];
        double uf[REF_MAX_DEGREE];
        for (int j = 0; j < fac->degree; ++j) uf[j] = u[fac->vars[j]];
        int a = ref_num_additionals(fac);
        double t = ref_distance_to_factor(fac, uf, a > 0 ? v + k : NULL);
        k += a;
        if (t < 0.0) {
            if (worst) *worst = f;
            return -1.0;
        }
        if (arg < 0 || t > max) {
            max = t;
            arg = f;
        }
    }
    if (worst) *worst = arg;
    return max;
}

/* ------------------------------------------------------------------------
 * Brute-force MAP
 * ------------------------------------------------------------------------ */

bool ref_brute_map(const ref_graph *rg, double *value, int *x) {
    int n = rg->n_vars, nf = rg->n_factors;
    if (n < 0 || n > 24) return false;
    /* Per factor, over the masks of its variables: the best additional
     * score among the allowed additionals (-inf: no allowed completion). */
    double *best[REF_MAX_FACTORS];
    int ok = 1;
    for (int f = 0; f < nf; ++f) best[f] = NULL;
    for (int f = 0; f < nf && ok; ++f) {
        const ref_factor *fac = &rg->factors[f];
        int d = fac->degree, a = ref_num_additionals(fac);
        double add_score[4] = {0, 0, 0, 0};
        if (fac->kind == REF_PAIR) add_score[0] = fac->score;
        best[f] = malloc(((size_t)1 << d) * sizeof(double));
        if (!best[f]) {
            ok = 0;
            break;
        }
        int xs[REF_MAX_DEGREE], ys[4];
        for (unsigned m = 0; m < (1u << d); ++m) {
            for (int j = 0; j < d; ++j) xs[j] = (int)((m >> j) & 1u);
            double b = -INFINITY;
            for (unsigned ym = 0; ym < (1u << a); ++ym) {
                double s = 0.0;
                for (int k = 0; k < a; ++k) {
                    ys[k] = (int)((ym >> k) & 1u);
                    s += ys[k] * add_score[k];
                }
                if (ref_allowed(fac, xs, ys) && s > b) b = s;
            }
            best[f][m] = b;
        }
    }
    /* Enumerate in Gray-code order, keeping each factor's mask and the
     * number of violated factors up to date; the objective is summed afresh
     * for feasible assignments only (no drift from incremental updates). */
    unsigned mask[REF_MAX_FACTORS];
    int xs[24];
    int violated = 0;
    bool found = false;
    double best_value = -INFINITY;
    if (ok) {
        memset(xs, 0, sizeof xs);
        for (int f = 0; f < nf; ++f) {
            mask[f] = 0;
            if (best[f][0] == -INFINITY) violated += 1;
        }
        uint64_t total = (uint64_t)1 << n;
        for (uint64_t step = 0; step < total; ++step) {
            if (step > 0) {
                int i = 0; /* the bit that changes: lowest set bit of step */
                while (!((step >> i) & 1u)) ++i;
                xs[i] ^= 1;
                for (int f = 0; f < nf; ++f) {
                    const ref_factor *fac = &rg->factors[f];
                    for (int j = 0; j < fac->degree; ++j) {
                        if (fac->vars[j] != i) continue;
                        bool was = best[f][mask[f]] == -INFINITY;
                        mask[f] ^= 1u << j;
                        bool now = best[f][mask[f]] == -INFINITY;
                        violated += (int)now - (int)was;
                    }
                }
            }
            if (violated) continue;
            double s = 0.0;
            for (int i = 0; i < n; ++i) s += rg->theta[i] * xs[i];
            for (int f = 0; f < nf; ++f) s += best[f][mask[f]];
            if (!found || s > best_value) {
                found = true;
                best_value = s;
                if (x) memcpy(x, xs, (size_t)n * sizeof *x);
            }
        }
    }
    for (int f = 0; f < nf; ++f) free(best[f]);
    if (value) *value = best_value;
    return ok && found;
}

double ref_assignment_value(const ref_graph *rg, const int *x) {
    double value = 0.0;
    for (int i = 0; i < rg->n_vars; ++i) value += rg->theta[i] * x[i];
    for (int k = 0; k < rg->n_factors; ++k) {
        const ref_factor *f = &rg->factors[k];
        int xs[REF_MAX_DEGREE], y[1];
        for (int j = 0; j < f->degree; ++j) xs[j] = x[f->vars[j]];
        y[0] = f->kind == REF_PAIR && xs[0] && xs[1];
        if (!ref_allowed(f, xs, y)) return -INFINITY;
        if (f->kind == REF_PAIR) value += f->score * y[0];
    }
    return value;
}

/* ------------------------------------------------------------------------
 * Random graphs
 * ------------------------------------------------------------------------ */

static double random_magnitude(test_rng *rng) {
    /* 10^U(-9, 6), with the extremes themselves now and then */
    int pick = rng_int(rng, 10);
    if (pick == 0) return 1e-9;
    if (pick == 1) return 1e6;
    return pow(10.0, -9.0 + 15.0 * rng_uniform(rng));
}

typedef enum score_mode { SCORES_GAUSS, SCORES_INTEGER, SCORES_REPEATED, SCORES_MIXED } score_mode;

static double random_score(test_rng *rng, score_mode mode, double magnitude,
                           const double *repeated) {
    switch (mode) {
    case SCORES_GAUSS: return magnitude * rng_normal(rng);
    case SCORES_INTEGER: return magnitude * (double)(rng_int(rng, 7) - 3);
    case SCORES_REPEATED: return repeated[rng_int(rng, 3)];
    case SCORES_MIXED:
    default: return random_magnitude(rng) * rng_normal(rng);
    }
}

static int max_degree_of(ref_kind kind) {
    switch (kind) {
    case REF_XOR:
    case REF_ATMOSTONE:
    case REF_XOROUT:
    case REF_BUDGET_EXACT: return 12; /* few allowed configurations */
    case REF_PAIR: return 2;
    default: return 8; /* OR-like: up to 2^d allowed configurations */
    }
}

static int min_degree_of(ref_kind kind) {
    return kind == REF_PAIR || kind == REF_OROUT || kind == REF_ANDOUT ? 2 : 1;
}

/* Picks a uniformly random allowed literal pattern of a logic factor (its
 * negations cleared while enumerating), returned as bits. */
static unsigned random_allowed_pattern(test_rng *rng, const ref_factor *f) {
    ref_factor plain = *f;
    memset(plain.negated, 0, sizeof plain.negated);
    unsigned *configs;
    int count = allowed_configurations(&plain, &configs);
    if (count <= 0) return 0;
    unsigned m = configs[rng_int(rng, count)];
    free(configs);
    return m;
}

static int literal_count(const ref_factor *f, const int *x0, double *cost) {
    int count = 0;
    double c = 0.0;
    for (int j = 0; j < f->degree; ++j) {
        int lit = f->negated[j] ? 1 - x0[f->vars[j]] : x0[f->vars[j]];
        count += lit;
        c += lit * f->costs[j];
    }
    if (cost) *cost = c;
    return count;
}

void ref_random_graph(test_rng *rng, int max_vars, ref_graph *out) {
    memset(out, 0, sizeof *out);
    if (max_vars > REF_MAX_VARS) max_vars = REF_MAX_VARS;
    if (max_vars < 1) max_vars = 1;
    int size_class = rng_int(rng, 20);
    int n = size_class < 3    ? 1 + rng_int(rng, 4 < max_vars ? 4 : max_vars)
            : size_class < 15 ? 5 + rng_int(rng, 10)
                              : 15 + rng_int(rng, 6);
    if (n > max_vars) n = max_vars;
    out->n_vars = n;

    /* scores */
    score_mode mode = (score_mode)(rng_int(rng, 20) < 9    ? SCORES_GAUSS
                                   : rng_int(rng, 3) == 0 ? SCORES_REPEATED
                                   : rng_int(rng, 2) == 0 ? SCORES_INTEGER
                                                           : SCORES_MIXED);
    double magnitude = random_magnitude(rng);
    double repeated[3] = {magnitude, -magnitude, magnitude * (double)(rng_int(rng, 3) - 1)};
    for (int i = 0; i < n; ++i) out->theta[i] = random_score(rng, mode, magnitude, repeated);

    /* the kinds this graph uses: all of them, or a few */
    bool kinds[REF_NUM_KINDS];
    int subset = rng_int(rng, 3) == 0;
    for (int k = 0; k < REF_NUM_KINDS; ++k) kinds[k] = !subset;
    if (subset) {
        int how_many = 1 + rng_int(rng, 3);
        for (int t = 0; t < how_many; ++t) kinds[rng_int(rng, REF_NUM_KINDS)] = true;
    }

    /* some variables stay out of every factor */
    bool isolated[REF_MAX_VARS];
    int n_linked = 0;
    int linked[REF_MAX_VARS];
    for (int i = 0; i < n; ++i) {
        isolated[i] = n > 2 && rng_int(rng, 8) == 0;
        if (!isolated[i]) linked[n_linked++] = i;
    }

    bool planted = rng_int(rng, 10) < 7;
    int x0[REF_MAX_VARS];
    for (int i = 0; i < n; ++i) x0[i] = rng_int(rng, 2);
    double neg_prob = (double)rng_int(rng, 3) * 0.25; /* 0, 0.25, 0.5 */
    int degree1_bias = rng_int(rng, 4) == 0;          /* many degree-1 factors */

    int want = n_linked == 0 ? 0 : rng_int(rng, 2 * n_linked + 2);
    if (want > REF_MAX_FACTORS) want = REF_MAX_FACTORS;
    for (int attempt = 0; attempt < 8 * want && out->n_factors < want; ++attempt) {
        ref_kind kind = (ref_kind)rng_int(rng, REF_NUM_KINDS);
        if (!kinds[kind]) continue;
        int dmin = min_degree_of(kind), dmax = max_degree_of(kind);
        if (dmax > n_linked) dmax = n_linked;
        if (dmax < dmin) continue;
        int d;
        if (degree1_bias && dmin == 1 && rng_int(rng, 2) == 0) d = 1;
        else if (rng_int(rng, 3) == 0) d = dmin + rng_int(rng, dmax - dmin + 1);
        else d = dmin + rng_int(rng, (dmax < dmin + 4 ? dmax : dmin + 4) - dmin + 1);

        ref_factor *f = &out->factors[out->n_factors];
        memset(f, 0, sizeof *f);
        f->kind = kind;
        f->degree = d;
        /* distinct variables: a partial Fisher-Yates shuffle of `linked` */
        int pool[REF_MAX_VARS];
        memcpy(pool, linked, (size_t)n_linked * sizeof *pool);
        for (int j = 0; j < d; ++j) {
            int r = j + rng_int(rng, n_linked - j);
            int tmp = pool[j];
            pool[j] = pool[r];
            pool[r] = tmp;
            f->vars[j] = pool[j];
        }
        if (kind != REF_PAIR)
            for (int j = 0; j < d; ++j) f->negated[j] = rng_uniform(rng) < neg_prob;

        switch (kind) {
        case REF_PAIR: f->score = random_score(rng, mode, magnitude, repeated); break;
        case REF_BUDGET:
        case REF_BUDGET_EXACT: {
            int count = literal_count(f, x0, NULL);
            if (planted)
                f->budget = kind == REF_BUDGET_EXACT ? count : count + rng_int(rng, d - count + 1);
            else
                f->budget = rng_int(rng, d + 1);
            break;
        }
        case REF_KNAPSACK: {
            double total = 0.0;
            int integer_costs = rng_int(rng, 2);
            /* costs and budgets on a grid of 2^-10, so that sums of costs
             * are exact and a budget planted equal to a cost is tight in
             * exact arithmetic too (not just in rounded sums) */
            for (int j = 0; j < d; ++j) {
                f->costs[j] = integer_costs ? (double)rng_int(rng, 5)
                                            : floor(2048.0 * rng_uniform(rng)) / 1024.0;
                total += f->costs[j];
            }
            double cost;
            literal_count(f, x0, &cost);
            int tight = rng_int(rng, 4) == 0;
            if (planted)
                f->budget = tight ? cost
                                  : cost + floor(1024.0 * rng_uniform(rng) * (total - cost)) / 1024.0;
            else
                f->budget = tight ? (double)rng_int(rng, 3)
                                  : floor(1024.0 * rng_uniform(rng) * total) / 1024.0;
            break;
        }
        default:
            if (planted) {
                ref_factor probe = *f;
                for (int j = 0; j < d; ++j) probe.negated[j] = false;
                int xs[REF_MAX_DEGREE];
                for (int j = 0; j < d; ++j)
                    xs[j] = f->negated[j] ? 1 - x0[f->vars[j]] : x0[f->vars[j]];
                if (!ref_allowed(&probe, xs, NULL)) {
                    unsigned lits = random_allowed_pattern(rng, f);
                    for (int j = 0; j < d; ++j)
                        f->negated[j] = (bool)(((lits >> j) & 1u) != (unsigned)x0[f->vars[j]]);
                }
            }
            break;
        }
        out->n_factors += 1;
    }
}

/* ------------------------------------------------------------------------
 * Printing
 * ------------------------------------------------------------------------ */

void ref_graph_print(FILE *fp, const ref_graph *rg) {
    fprintf(fp, "ref_graph g = {.n_vars = %d, .theta = {", rg->n_vars);
    for (int i = 0; i < rg->n_vars; ++i) fprintf(fp, "%s%.17g", i ? ", " : "", rg->theta[i]);
    fprintf(fp, "}, .n_factors = %d, .factors = {\n", rg->n_factors);
    for (int k = 0; k < rg->n_factors; ++k) {
        const ref_factor *f = &rg->factors[k];
        fprintf(fp, "  {.kind = REF_%s, .degree = %d, .vars = {", ref_kind_name(f->kind),
                f->degree);
        for (int j = 0; j < f->degree; ++j) fprintf(fp, "%s%d", j ? ", " : "", f->vars[j]);
        fprintf(fp, "}, .negated = {");
        for (int j = 0; j < f->degree; ++j) fprintf(fp, "%s%d", j ? ", " : "", f->negated[j]);
        fprintf(fp, "}");
        if (f->kind == REF_BUDGET || f->kind == REF_BUDGET_EXACT || f->kind == REF_KNAPSACK)
            fprintf(fp, ", .budget = %.17g", f->budget);
        if (f->kind == REF_KNAPSACK) {
            fprintf(fp, ", .costs = {");
            for (int j = 0; j < f->degree; ++j)
                fprintf(fp, "%s%.17g", j ? ", " : "", f->costs[j]);
            fprintf(fp, "}");
        }
        if (f->kind == REF_PAIR) fprintf(fp, ", .score = %.17g", f->score);
        fprintf(fp, "},\n");
    }
    fprintf(fp, "}};\n");
}
