/*
 * The oracle and QP checks of structured_check.h. The reference QP solver
 * here is pairwise Frank-Wolfe (Lacoste-Julien and Jaggi 2015) over the
 * enumerated configurations with exact line search: it shares nothing with
 * the library's active set but the problem statement, and converges
 * linearly on a polytope given as a list of vertices.
 */
#include "structured_check.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glpk.h>

#include "qp/active_set.h"
#include "testutil.h"

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    assert_non_null(p);
    return p;
}

void configs_init(config_list *c, int32_t degree, int32_t n_add) {
    c->degree = degree;
    c->n_add = n_add;
    c->count = 0;
    c->cap = 0;
    c->x = NULL;
}

void configs_clear(config_list *c) { c->count = 0; }

double *configs_push(config_list *c) {
    size_t row = (size_t)c->degree + (size_t)c->n_add;
    if (c->count == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->x = realloc(c->x, (size_t)c->cap * (row ? row : 1) * sizeof(double));
        assert_non_null(c->x);
    }
    double *x = c->x + (size_t)c->count++ * row;
    for (size_t k = 0; k < row; ++k) x[k] = 0.0;
    return x;
}

void configs_free(config_list *c) {
    free(c->x);
    c->x = NULL;
    c->count = c->cap = 0;
}

static const double *config_row(const config_list *c, int32_t k) {
    return c->x + (size_t)k * ((size_t)c->degree + (size_t)c->n_add);
}

static double config_score(const config_list *c, int32_t k, const double *a, const double *b) {
    const double *x = config_row(c, k);
    double s = 0.0;
    for (int32_t i = 0; i < c->degree; ++i) s += a[i] * x[i];
    for (int32_t j = 0; j < c->n_add; ++j) s += b[j] * x[c->degree + j];
    return s;
}

static int32_t config_find(const config_list *c, const double *u, const double *v) {
    for (int32_t k = 0; k < c->count; ++k) {
        const double *x = config_row(c, k);
        if (memcmp(x, u, (size_t)c->degree * sizeof(double)) == 0 &&
            memcmp(x + c->degree, v, (size_t)c->n_add * sizeof(double)) == 0)
            return k;
    }
    return -1;
}

static double scores_scale(const factor *f, const double *a, const double *b, const double *d) {
    double s = 1.0, ma = 0.0, mb = 0.0, md = 0.0;
    for (int32_t i = 0; i < f->degree; ++i) {
        if (fabs(a[i]) > ma) ma = fabs(a[i]);
        if (d && d[i] > md) md = d[i];
    }
    for (int32_t k = 0; k < f->n_add; ++k)
        if (fabs(b[k]) > mb) mb = fabs(b[k]);
    return s + ma + mb + md;
}

/* The sparse form of the oracle names, in increasing order, exactly the
 * entries equal to 1 of the configuration map wrote into (u, v), with the
 * same score. */
static void check_map_ones(const factor *f, const double *a, const double *b, const double *u,
                           const double *v, double value, void *scratch) {
    const int32_t size = f->ops->config_size ? f->ops->config_size(f) : f->degree + f->n_add;
    int32_t *ones = xcalloc((size_t)size + 1, sizeof(int32_t));
    double got = NAN;
    const int32_t n = f->ops->map_ones(f, a, b, ones, &got, scratch);
    assert_true(n >= 0 && n <= size);
    assert_true(got == value);
    int32_t expected = 0;
    for (int32_t i = 0; i < f->degree; ++i) expected += u[i] == 1.0;
    for (int32_t k = 0; k < f->n_add; ++k) expected += v[k] == 1.0;
    assert_int_equal(n, expected);
    for (int32_t q = 0; q < n; ++q) {
        assert_true(q == 0 || ones[q] > ones[q - 1]);
        assert_true(ones[q] >= 0 && ones[q] < f->degree + f->n_add);
        const double x = ones[q] < f->degree ? u[ones[q]] : v[ones[q] - f->degree];
        assert_true(x == 1.0);
    }
    free(ones);
}

void check_map_oracle(const factor *f, const config_list *c, config_valid_fn valid,
                      const void *ctx, const double *a, const double *b) {
    assert_true(c->count > 0);
    size_t bytes = factor_scratch_bytes(f);
    void *scratch = malloc(bytes ? bytes : 1);
    assert_non_null(scratch);
    memset(scratch, 0xff, bytes); /* NaN doubles, -1 ints: no reliance on zeros */
    double *u = xcalloc((size_t)f->degree, sizeof(double));
    double *v = xcalloc((size_t)f->n_add, sizeof(double));
    for (int32_t i = 0; i < f->degree; ++i) u[i] = 0.5; /* the oracle must write all */
    for (int32_t k = 0; k < f->n_add; ++k) v[k] = 0.5;
    double got = f->ops->map(f, a, b, u, v, scratch);
    assert_true(valid(ctx, u, v));
    assert_true(config_find(c, u, v) >= 0);
    double own = 0.0, best = -INFINITY;
    for (int32_t i = 0; i < f->degree; ++i) own += a[i] * u[i];
    for (int32_t k = 0; k < f->n_add; ++k) own += b[k] * v[k];
    for (int32_t k = 0; k < c->count; ++k) {
        double s = config_score(c, k, a, b);
        if (s > best) best = s;
    }
    double tol = 1e-12 * scores_scale(f, a, b, NULL);
    if (!(fabs(got - own) <= tol && fabs(got - best) <= tol))
        fail_msg("%s oracle: returned %.17g, its configuration scores %.17g, best %.17g",
                 f->ops->name, got, own, best);
    if (f->ops->map_ones) check_map_ones(f, a, b, u, v, got, scratch);
    free(scratch);
    free(u);
    free(v);
}

void qp_checker_init(qp_checker *q, const factor *f) {
    q->f = f;
    q->state = active_set_new(f);
    assert_non_null(q->state);
    size_t deg = (size_t)f->degree, add = (size_t)f->n_add;
    q->buf.lit_a = xcalloc(deg, sizeof(double));
    q->buf.lit_u = xcalloc(deg, sizeof(double));
    q->buf.oracle_a = xcalloc(deg, sizeof(double));
    q->buf.oracle_u = xcalloc(deg, sizeof(double));
    q->buf.oracle_v = xcalloc(add, sizeof(double));
    q->buf.scratch = xcalloc(factor_scratch_bytes(f), 1);
    q->u = xcalloc(deg, sizeof(double));
    q->v = xcalloc(add, sizeof(double));
    q->fw_u = xcalloc(deg, sizeof(double));
}

void qp_checker_free(qp_checker *q) {
    active_set_free(q->state);
    free(q->buf.lit_a);
    free(q->buf.lit_u);
    free(q->buf.oracle_a);
    free(q->buf.oracle_u);
    free(q->buf.oracle_v);
    free(q->buf.scratch);
    free(q->u);
    free(q->v);
    free(q->fw_u);
}

/* Pairwise Frank-Wolfe over the listed configurations; returns the final
 * gap and writes u. ones/begin: each configuration's nonzero indices. */
static double pairwise_fw(const config_list *c, const int32_t *ones, const int32_t *begin,
                          const double *a, const double *b, const double *d, double tol,
                          int32_t max_iter, double *u, int32_t *iterations) {
    const int32_t n = c->count, deg = c->degree;
    double *w = xcalloc((size_t)n, sizeof(double)), *g = xcalloc((size_t)n, sizeof(double));
    double *delta = xcalloc((size_t)deg, sizeof(double));
    int32_t start = 0;
    for (int32_t k = 1; k < n; ++k)
        if (config_score(c, k, a, b) > config_score(c, start, a, b)) start = k;
    w[start] = 1.0;
    for (int32_t i = 0; i < deg; ++i) u[i] = config_row(c, start)[i];
    double gap = INFINITY;
    int32_t it;
    for (it = 0; it < max_iter; ++it) {
        int32_t s = -1, t = -1;
        double avg = 0.0;
        for (int32_t k = 0; k < n; ++k) {
            double x = 0.0;
            for (int32_t e = begin[k]; e < begin[k + 1]; ++e) {
                int32_t j = ones[e];
                x += j < deg ? a[j] - d[j] * u[j] : b[j - deg];
            }
            g[k] = x;
            avg += w[k] * x;
            if (s < 0 || x > g[s]) s = k;
            if (w[k] > 0.0 && (t < 0 || x < g[t])) t = k;
        }
        gap = g[s] - avg;
        if (gap <= tol || s == t) break;
        const double *xs = config_row(c, s), *xt = config_row(c, t);
        double curv = 0.0;
        for (int32_t i = 0; i < deg; ++i) {
            delta[i] = xs[i] - xt[i];
            curv += d[i] * delta[i] * delta[i];
        }
        double step = w[t];
        if (curv > 0.0 && (g[s] - g[t]) / curv < step) step = (g[s] - g[t]) / curv;
        w[s] += step;
        w[t] -= step;
        if (w[t] < 1e-300) w[t] = 0.0;
        for (int32_t i = 0; i < deg; ++i) u[i] += step * delta[i];
        if (it % 64 == 63) { /* shed accumulated rounding in u */
            for (int32_t i = 0; i < deg; ++i) u[i] = 0.0;
            for (int32_t k = 0; k < n; ++k)
                if (w[k] > 0.0)
                    for (int32_t i = 0; i < deg; ++i) u[i] += w[k] * config_row(c, k)[i];
        }
    }
    *iterations = it;
    free(w);
    free(g);
    free(delta);
    return gap;
}

qp_report check_qp(qp_checker *q, const config_list *c, config_valid_fn valid, const void *ctx,
                   const double *a, const double *b, const double *d) {
    const factor *f = q->f;
    const int32_t deg = f->degree, add = f->n_add;
    qp_report rep = {0};
    uint8_t *neg = xcalloc((size_t)deg, 1);
    qp_outcome out;
    factor_qp_variables(f, q->state, neg, a, b, d, q->u, q->v, 1000, &q->buf, &out);
    free(neg);
    assert_true(out.exact);

    /* The active configurations: valid, weights a distribution, mixing to (u, v). */
    double *mu = xcalloc((size_t)deg, sizeof(double)), *mv = xcalloc((size_t)add, sizeof(double));
    double *xu = xcalloc((size_t)deg, sizeof(double)), *xv = xcalloc((size_t)add, sizeof(double));
    double total = 0.0;
    rep.active = active_set_size(q->state);
    assert_true(rep.active >= 1);
    for (int32_t k = 0; k < rep.active; ++k) {
        active_set_config(q->state, k, xu, xv);
        double w = active_set_weight(q->state, k);
        assert_true(valid(ctx, xu, xv));
        assert_true(config_find(c, xu, xv) >= 0);
        assert_true(w >= 0.0);
        total += w;
        for (int32_t i = 0; i < deg; ++i) mu[i] += w * xu[i];
        for (int32_t j = 0; j < add; ++j) mv[j] += w * xv[j];
    }
    assert_true(fabs(total - 1.0) <= 1e-12);
    for (int32_t i = 0; i < deg; ++i) assert_true(fabs(mu[i] - q->u[i]) <= 1e-12);
    for (int32_t j = 0; j < add; ++j) assert_true(fabs(mv[j] - q->v[j]) <= 1e-12);

    /* Frank-Wolfe gap over every configuration. */
    const double scale = scores_scale(f, a, b, d);
    int32_t *begin = xcalloc((size_t)c->count + 1, sizeof(int32_t));
    int32_t *ones = xcalloc((size_t)c->count * (size_t)(deg + add), sizeof(int32_t));
    for (int32_t k = 0, at = 0; k < c->count; ++k) {
        const double *x = config_row(c, k);
        for (int32_t j = 0; j < deg + add; ++j)
            if (x[j] != 0.0) ones[at++] = j;
        begin[k + 1] = at;
    }
    double here = 0.0, best = -INFINITY;
    for (int32_t i = 0; i < deg; ++i) here += (a[i] - d[i] * q->u[i]) * q->u[i];
    for (int32_t j = 0; j < add; ++j) here += b[j] * q->v[j];
    for (int32_t k = 0; k < c->count; ++k) {
        double x = 0.0;
        for (int32_t e = begin[k]; e < begin[k + 1]; ++e) {
            int32_t j = ones[e];
            x += j < deg ? a[j] - d[j] * q->u[j] : b[j - deg];
        }
        if (x > best) best = x;
    }
    rep.gap = best - here;
    if (!(rep.gap <= 1e-9 * scale))
        fail_msg("%s QP: Frank-Wolfe gap %.3g (scale %.3g)", f->ops->name, rep.gap, scale);

    /* An independent solve. Its gap bounds its distance to the optimum:
     * gap >= 1/2 sum d (u - u*)^2, so 1e-14 x scale keeps it well within
     * the 1e-6 compared. */
    rep.fw_gap = pairwise_fw(c, ones, begin, a, b, d, 1e-14 * scale, 200000, q->fw_u,
                             &rep.fw_iter);
    for (int32_t i = 0; i < deg; ++i) {
        double diff = fabs(q->fw_u[i] - q->u[i]);
        if (diff > rep.u_diff) rep.u_diff = diff;
    }
    if (!(rep.u_diff <= 1e-6))
        fail_msg("%s QP: u differs from pairwise Frank-Wolfe by %.3g (FW gap %.3g after %d "
                 "iterations)",
                 f->ops->name, rep.u_diff, rep.fw_gap, rep.fw_iter);
    free(begin);
    free(ones);
    free(mu);
    free(mv);
    free(xu);
    free(xv);
    return rep;
}

void random_scores(test_rng *rng, double *x, int32_t n, bool integer) {
    for (int32_t k = 0; k < n; ++k)
        x[k] = integer ? (double)(rng_int(rng, 7) - 3) : 2.0 * rng_normal(rng);
}

void random_qp(test_rng *rng, double *a, int32_t degree, double *b, int32_t n_add, double *d,
               bool integer, bool new_d) {
    double scale = integer ? 1.0 : 0.1 + 1.9 * rng_uniform(rng);
    random_scores(rng, a, degree, integer);
    random_scores(rng, b, n_add, integer);
    for (int32_t i = 0; i < degree; ++i) a[i] *= scale;
    for (int32_t k = 0; k < n_add; ++k) b[k] *= scale;
    if (!new_d) return;
    bool uniform = rng_int(rng, 3) == 0;
    for (int32_t i = 0; i < degree; ++i) {
        double r = rng_uniform(rng);
        d[i] = integer ? (uniform ? 4.0 : 2.0 + 6.0 * r) : (uniform ? 1.0 : 0.5 + 1.5 * r);
    }
}

void check_oracle_and_qp(test_rng *rng, const factor *f, const config_list *c,
                         config_valid_fn valid, const void *ctx, bool integer,
                         qp_totals *totals) {
    double *a = xcalloc((size_t)c->degree, sizeof *a), *d = xcalloc((size_t)c->degree, sizeof *d);
    double *b = xcalloc((size_t)c->n_add, sizeof *b);
    for (int rep = 0; rep < 3; ++rep) {
        random_scores(rng, a, c->degree, integer);
        random_scores(rng, b, c->n_add, integer);
        check_map_oracle(f, c, valid, ctx, a, b);
    }
    qp_checker q;
    qp_checker_init(&q, f);
    for (int rep = 0; rep < 3; ++rep) {
        random_qp(rng, a, c->degree, b, c->n_add, d, integer, rep != 1);
        qp_report r = check_qp(&q, c, valid, ctx, a, b, d);
        if (r.gap > totals->worst_gap) totals->worst_gap = r.gap;
        if (r.u_diff > totals->worst_diff) totals->worst_diff = r.u_diff;
        totals->fw_iters += r.fw_iter;
        totals->active += r.active;
        ++totals->cases;
    }
    qp_checker_free(&q);
    free(a);
    free(b);
    free(d);
}

/* The test's validity checker, and no forbidden output on. */
typedef struct forbidding {
    config_valid_fn valid;
    const void *ctx;
    const uint8_t *forbidden;
    int32_t n_add;
} forbidding;

static bool valid_and_allowed(const void *ctx, const double *u, const double *v) {
    const forbidding *fb = ctx;
    for (int32_t k = 0; k < fb->n_add; ++k)
        if (fb->forbidden[k] && v[k] != 0.0) return false;
    return fb->valid(fb->ctx, u, v);
}

void check_with_forbidden_outputs(test_rng *rng, const factor *f, const config_list *c,
                                  config_valid_fn valid, const void *ctx, bool integer,
                                  qp_totals *totals) {
    assert_true(f->ops->forbids != FORBIDS_NOTHING && c->count > 0);
    if (f->n_add == 0) return;
    const size_t row = (size_t)c->degree + (size_t)c->n_add;
    uint8_t *mask = xcalloc((size_t)f->n_add, 1);
    const double *kept = c->x + (size_t)rng_int(rng, c->count) * row + c->degree;
    for (int32_t k = 0; k < f->n_add; ++k) mask[k] = kept[k] == 0.0 && rng_int(rng, 4) == 0;
    config_list allowed;
    configs_init(&allowed, c->degree, c->n_add);
    for (int32_t r = 0; r < c->count; ++r) {
        const double *x = c->x + (size_t)r * row;
        bool uses = false;
        for (int32_t k = 0; k < f->n_add; ++k) uses |= mask[k] && x[c->degree + k] != 0.0;
        if (!uses) memcpy(configs_push(&allowed), x, row * sizeof(double));
    }
    factor masked = *f;
    masked.forbidden = mask;
    const forbidding fb = {valid, ctx, mask, f->n_add};
    check_oracle_and_qp(rng, &masked, &allowed, valid_and_allowed, &fb, integer, totals);
    configs_free(&allowed);
    free(mask);
}

void print_qp_totals(const char *name, int n_factors, const qp_totals *t) {
    printf("%s: %d factors, %ld QPs; worst FW gap %.2e, worst |u - u_FW| %.2e, mean active "
           "set %.1f, mean FW iterations %.0f\n",
           name, n_factors, t->cases, t->worst_gap, t->worst_diff,
           (double)t->active / (double)t->cases, (double)t->fw_iters / (double)t->cases);
}

/* ---- the GLPK reference for LP-MAP ---- */

struct lp_ref {
    int32_t n_vars, n_cols, n_rows;
    double *obj;       /* per column */
    int32_t *col_kind; /* 0: variable in [0, 1]; 1: weight >= 0 */
    double *lo, *hi;   /* per row */
    int32_t n_nz, cap_nz, cap_cols, cap_rows;
    int *ia, *ja;      /* 1-based, GLPK's layout (index 0 unused) */
    double *ar;
};

static void grow(void **p, int32_t *cap, int32_t need, size_t size) {
    if (need <= *cap) return;
    int32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    *p = realloc(*p, (size_t)c * size);
    assert_non_null(*p);
    *cap = c;
}

static int32_t lp_col(lp_ref *lp, double obj, int32_t kind) {
    int32_t cap = lp->cap_cols;
    grow((void **)&lp->obj, &cap, lp->n_cols + 2, sizeof(double));
    cap = lp->cap_cols;
    grow((void **)&lp->col_kind, &cap, lp->n_cols + 2, sizeof(int32_t));
    lp->cap_cols = cap;
    lp->obj[lp->n_cols + 1] = obj;
    lp->col_kind[lp->n_cols + 1] = kind;
    return ++lp->n_cols;
}

static int32_t lp_row(lp_ref *lp, double lo, double hi) {
    int32_t cap = lp->cap_rows;
    grow((void **)&lp->lo, &cap, lp->n_rows + 2, sizeof(double));
    cap = lp->cap_rows;
    grow((void **)&lp->hi, &cap, lp->n_rows + 2, sizeof(double));
    lp->cap_rows = cap;
    lp->lo[lp->n_rows + 1] = lo;
    lp->hi[lp->n_rows + 1] = hi;
    return ++lp->n_rows;
}

static void lp_nz(lp_ref *lp, int32_t row, int32_t col, double x) {
    int32_t cap = lp->cap_nz;
    grow((void **)&lp->ia, &cap, lp->n_nz + 2, sizeof(int));
    cap = lp->cap_nz;
    grow((void **)&lp->ja, &cap, lp->n_nz + 2, sizeof(int));
    cap = lp->cap_nz;
    grow((void **)&lp->ar, &cap, lp->n_nz + 2, sizeof(double));
    lp->cap_nz = cap;
    ++lp->n_nz;
    lp->ia[lp->n_nz] = row;
    lp->ja[lp->n_nz] = col;
    lp->ar[lp->n_nz] = x;
}

lp_ref *lp_ref_new(int32_t n_vars, const double *theta) {
    lp_ref *lp = calloc(1, sizeof *lp);
    assert_non_null(lp);
    lp->n_vars = n_vars;
    for (int32_t i = 0; i < n_vars; ++i) lp_col(lp, theta[i], 0);
    return lp;
}

void lp_ref_free(lp_ref *lp) {
    free(lp->obj);
    free(lp->col_kind);
    free(lp->lo);
    free(lp->hi);
    free(lp->ia);
    free(lp->ja);
    free(lp->ar);
    free(lp);
}

void lp_ref_add_configs(lp_ref *lp, const config_list *c, const int32_t *vars, const double *b) {
    int32_t simplex = lp_row(lp, 1.0, 1.0), first_link = lp->n_rows + 1;
    for (int32_t j = 0; j < c->degree; ++j) {
        int32_t row = lp_row(lp, 0.0, 0.0); /* sum_c w_c u_c[j] - u_var = 0 */
        lp_nz(lp, row, vars[j] + 1, -1.0);
    }
    for (int32_t k = 0; k < c->count; ++k) {
        const double *x = config_row(c, k);
        double obj = 0.0;
        for (int32_t j = 0; j < c->n_add; ++j) obj += b[j] * x[c->degree + j];
        int32_t col = lp_col(lp, obj, 1);
        lp_nz(lp, simplex, col, 1.0);
        for (int32_t j = 0; j < c->degree; ++j)
            if (x[j] != 0.0) lp_nz(lp, first_link + j, col, x[j]);
    }
}

void lp_ref_add_sum(lp_ref *lp, int32_t n, const int32_t *vars, double lo, double hi) {
    int32_t row = lp_row(lp, lo, hi);
    for (int32_t j = 0; j < n; ++j) lp_nz(lp, row, vars[j] + 1, 1.0);
}

int lp_ref_solve(lp_ref *lp, double *value) {
    glp_prob *p = glp_create_prob();
    glp_set_obj_dir(p, GLP_MAX);
    glp_add_cols(p, lp->n_cols);
    for (int32_t j = 1; j <= lp->n_cols; ++j) {
        if (lp->col_kind[j] == 0) glp_set_col_bnds(p, j, GLP_DB, 0.0, 1.0);
        else glp_set_col_bnds(p, j, GLP_LO, 0.0, 0.0);
        glp_set_obj_coef(p, j, lp->obj[j]);
    }
    glp_add_rows(p, lp->n_rows);
    for (int32_t r = 1; r <= lp->n_rows; ++r) {
        double lo = lp->lo[r], hi = lp->hi[r];
        int type = lo == hi ? GLP_FX
                            : isinf(lo) ? (isinf(hi) ? GLP_FR : GLP_UP) : (isinf(hi) ? GLP_LO : GLP_DB);
        glp_set_row_bnds(p, r, type, isinf(lo) ? 0.0 : lo, isinf(hi) ? 0.0 : hi);
    }
    glp_load_matrix(p, lp->n_nz, lp->ia, lp->ja, lp->ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    int rc = glp_simplex(p, &parm);
    int ok = rc == 0 && glp_get_status(p) == GLP_OPT;
    if (!ok) assert_true(rc == GLP_ENOPFS || glp_get_status(p) == GLP_NOFEAS || rc == 0);
    if (ok) *value = glp_get_obj_val(p);
    glp_delete_prob(p);
    return ok;
}

bool check_lp_map_against_glpk(concord_graph *g, lp_ref *lp, int trial, int *solved,
                               int *fractional, double *worst) {
    double expected;
    if (!lp_ref_solve(lp, &expected)) return false;
    concord_settings s;
    concord_default_settings(&s);
    s.tol = 1e-8;
    s.max_iter = 50000;
    concord_info info;
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(solver, &s, &info), CONCORD_OK);
    concord_solver_free(solver);
    double err = fabs(info.value - expected), scale = 1.0 + fabs(expected);
    if (err > *worst) *worst = err;
    if (!(err <= 1e-5 * scale && info.upper_bound >= expected - 1e-7 * scale &&
          info.upper_bound - expected <= 1e-5 * scale))
        fail_msg("trial %d: AD3 value %.10g bound %.10g, GLPK %.10g", trial, info.value,
                 info.upper_bound, expected);
    ++*solved;
    *fractional += !info.integral;
    return true;
}

/* Adds 1 to 3 logic factors (XOR, ATMOSTONE, OR, BUDGET) over random
 * subsets of variables 0..n_vars-1, to the graph and to the LP. */
void add_random_logic(test_rng *rng, concord_graph *g, lp_ref *lp, int32_t n_vars) {
    int n_factors = 1 + rng_int(rng, 3);
    for (int f = 0; f < n_factors; ++f) {
        int32_t vars[8], size = 2 + rng_int(rng, 3);
        if (size > n_vars) size = n_vars;
        for (int j = 0; j < size; ++j) { /* distinct: rejection */
            bool dup;
            do {
                vars[j] = rng_int(rng, n_vars);
                dup = false;
                for (int k = 0; k < j; ++k) dup |= vars[k] == vars[j];
            } while (dup);
        }
        switch (rng_int(rng, 4)) {
        case 0:
            assert_int_equal(concord_add_logic(g, CONCORD_XOR, size, vars, NULL, NULL), CONCORD_OK);
            lp_ref_add_sum(lp, size, vars, 1.0, 1.0);
            break;
        case 1:
            assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, size, vars, NULL, NULL),
                             CONCORD_OK);
            lp_ref_add_sum(lp, size, vars, -INFINITY, 1.0);
            break;
        case 2:
            assert_int_equal(concord_add_logic(g, CONCORD_OR, size, vars, NULL, NULL), CONCORD_OK);
            lp_ref_add_sum(lp, size, vars, 1.0, INFINITY);
            break;
        default: {
            int budget = 1 + rng_int(rng, 2);
            assert_int_equal(concord_add_budget(g, size, vars, NULL, budget, false, NULL),
                             CONCORD_OK);
            lp_ref_add_sum(lp, size, vars, -INFINITY, budget);
        }
        }
    }
}

/* ---- AD3's files with one structured factor ---- */

concord_graph **read_single_graph_file(const char *path) {
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    int rc = concord_read_file(path, CONCORD_FORMAT_AUTO, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    if (rc) fail_msg("%s", error);
    assert_int_equal(count, 1);
    return graphs;
}

concord_info solve_to_brute_force_optimum(const concord_graph *g, const char *name,
                                          double expected, bool unique, double *u) {
    concord_info info;
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    memcpy(u, concord_solver_variables(solver), (size_t)concord_num_variables(g) * sizeof *u);
    concord_solver_free(solver);
    printf("%s: value %.10f, upper bound %.10f, brute force %.10f, %s, %d iterations%s\n", name,
           info.value, info.upper_bound, expected, concord_status_name(info.status),
           info.iterations, unique ? "" : " (optimum not unique)");
    assert_true(fabs(info.value - expected) <= 1e-8);
    assert_true(fabs(info.upper_bound - expected) <= 1e-6);
    return info;
}

/* ---- .fg syntax ---- */

void expect_read_error(const char *text, const char *needle) {
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512] = "";
    int rc = concord_read_buffer(text, strlen(text), "t.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                 error, sizeof error, NULL, NULL);
    if (rc == CONCORD_OK) {
        concord_free_graphs(graphs, count);
        fail_msg("accepted: %s", text);
    }
    if (!strstr(error, needle)) fail_msg("message '%s' lacks '%s'", error, needle);
}

void expect_read_ok(const char *text, int32_t n_add) {
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512] = "";
    int rc = concord_read_buffer(text, strlen(text), "t.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                 error, sizeof error, NULL, NULL);
    if (rc) fail_msg("%s", error);
    assert_int_equal(concord_num_additionals(graphs[0]), n_add);
    concord_free_graphs(graphs, count);
}
