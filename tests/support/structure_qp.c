/*
 * Enumerated-structure references for structured factors (see
 * structure_qp.h): MAP by scanning the list, the active-set QP checked by
 * its own configurations and by the Frank-Wolfe gap, and an independent
 * pairwise Frank-Wolfe solver.
 */
#include "structure_qp.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "qp/active_set.h"

void structure_list_init(structure_list *s, int32_t dim) {
    s->dim = dim;
    s->count = 0;
    s->cap = 0;
    s->x = NULL;
}

void structure_list_clear(structure_list *s) { s->count = 0; }

void structure_list_push(structure_list *s, const uint8_t *x) {
    size_t need = (size_t)(s->count + 1) * (size_t)s->dim;
    if (need > (size_t)s->cap) {
        size_t grown = 2 * need < 4096 ? 4096 : 2 * need;
        s->x = realloc(s->x, grown);
        assert_non_null(s->x);
        s->cap = (int32_t)grown;
    }
    memcpy(s->x + (size_t)s->count * (size_t)s->dim, x, (size_t)s->dim);
    s->count += 1;
}

void structure_list_free(structure_list *s) {
    free(s->x);
    s->x = NULL;
    s->count = s->cap = 0;
}

static double dot01(const uint8_t *x, const double *a, int32_t dim) {
    double sum = 0.0;
    for (int32_t i = 0; i < dim; ++i)
        if (x[i]) sum += a[i];
    return sum;
}

int32_t structure_best(const structure_list *s, const double *a, double *best) {
    int32_t arg = -1;
    for (int32_t k = 0; k < s->count; ++k) {
        double v = dot01(s->x + (size_t)k * (size_t)s->dim, a, s->dim);
        if (arg < 0 || v > *best) arg = k, *best = v;
    }
    return arg;
}

static double max_abs(const double *a, int32_t n) {
    double m = 0.0;
    for (int32_t i = 0; i < n; ++i)
        if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

void check_structured_map(const factor *f, const double *a, const structure_list *all,
                          structure_valid_fn valid, const void *context) {
    const int32_t n = f->degree;
    double *u = calloc((size_t)n, sizeof *u);
    double v[1] = {0.0}, b[1] = {0.0};
    size_t bytes = factor_scratch_bytes(f);
    void *scratch = malloc(bytes ? bytes : 1);
    uint8_t *x = malloc((size_t)n);
    assert_true(u && scratch && x);
    double got = f->ops->map(f, a, b, u, v, scratch);
    for (int32_t i = 0; i < n; ++i) {
        assert_true(u[i] == 0.0 || u[i] == 1.0);
        x[i] = u[i] == 1.0;
    }
    assert_true(valid(x, context));
    double best = 0.0;
    assert_true(structure_best(all, a, &best) >= 0);
    double scale = 1.0 + max_abs(a, n) * n;
    assert_true(fabs(dot01(x, a, n) - got) <= 1e-12 * scale);
    assert_true(fabs(got - best) <= 1e-12 * scale);
    free(u);
    free(scratch);
    free(x);
}

/* Asserts that the active set's state after a solve is a valid convex
 * combination of structures averaging to u, and that u is optimal. */
static void check_solution(const factor *f, const active_set *state, const double *a,
                           const double *d, const double *u, const structure_list *all,
                           structure_valid_fn valid, const void *context) {
    const int32_t n = f->degree;
    double *avg = calloc((size_t)n, sizeof *avg), *grad = malloc((size_t)n * sizeof *grad);
    double *cu = malloc((size_t)n * sizeof *cu);
    uint8_t *x = malloc((size_t)n);
    assert_true(avg && grad && cu && x);
    int32_t size = active_set_size(state);
    assert_true(size >= 1);
    double total = 0.0;
    for (int32_t k = 0; k < size; ++k) {
        double w = active_set_weight(state, k);
        assert_true(w >= 0.0);
        total += w;
        active_set_config(state, k, cu, NULL); /* no additional outputs */
        for (int32_t i = 0; i < n; ++i) {
            assert_true(cu[i] == 0.0 || cu[i] == 1.0);
            x[i] = cu[i] == 1.0;
        }
        assert_true(valid(x, context));
        for (int32_t i = 0; i < n; ++i)
            if (x[i]) avg[i] += w;
    }
    assert_true(fabs(total - 1.0) <= 1e-12);
    for (int32_t i = 0; i < n; ++i) assert_true(fabs(avg[i] - u[i]) <= 1e-12);
    for (int32_t i = 0; i < n; ++i) grad[i] = a[i] - d[i] * u[i];
    double best = 0.0;
    structure_best(all, grad, &best);
    double at_u = 0.0;
    for (int32_t i = 0; i < n; ++i) at_u += grad[i] * u[i];
    double scale = 1.0 + max_abs(a, n) * n;
    assert_true(best - at_u <= 1e-9 * scale);
    free(avg);
    free(grad);
    free(cu);
    free(x);
}

void check_structured_qp(const factor *f, const double *a, const double *a2, const double *d,
                         const structure_list *all, structure_valid_fn valid,
                         const void *context, bool compare_fw) {
    const int32_t n = f->degree;
    size_t bytes = factor_scratch_bytes(f);
    factor_buffers buf = {
        .lit_a = malloc((size_t)n * sizeof(double)),
        .lit_u = malloc((size_t)n * sizeof(double)),
        .oracle_a = malloc((size_t)n * sizeof(double)),
        .oracle_u = malloc((size_t)n * sizeof(double)),
        .oracle_v = malloc(sizeof(double) * (size_t)(f->n_add ? f->n_add : 1)),
        .scratch = malloc(bytes ? bytes : 1),
    };
    uint8_t *neg = calloc((size_t)n, 1);
    double *u = malloc((size_t)n * sizeof *u), *ufw = malloc((size_t)n * sizeof *ufw);
    double b[1] = {0.0}, v[1] = {0.0};
    active_set *state = active_set_new(f);
    assert_true(state && buf.lit_a && buf.lit_u && buf.oracle_a && buf.oracle_u &&
                buf.oracle_v && buf.scratch && neg && u && ufw);
    for (int round = 0; round < 2; ++round) {
        const double *scores = round == 0 ? a : a2;
        if (!scores) break;
        qp_outcome out;
        factor_qp_variables(f, state, neg, scores, b, d, u, v, 10000, &buf, &out);
        assert_true(out.exact);
        check_solution(f, state, scores, d, u, all, valid, context);
        if (compare_fw) {
            /* with d >= 1/2, a gap g bounds |u - u*|^2 by 4 g */
            double tol = 1e-14 * (1.0 + max_abs(scores, n));
            double gap = structure_frank_wolfe(all, scores, d, ufw, tol, 50000);
            assert_true(gap <= tol);
            for (int32_t i = 0; i < n; ++i) assert_true(fabs(u[i] - ufw[i]) <= 1e-6);
        }
    }
    active_set_free(state);
    free(buf.lit_a), free(buf.lit_u), free(buf.oracle_a), free(buf.oracle_u);
    free(buf.oracle_v), free(buf.scratch);
    free(neg), free(u), free(ufw);
}

double structure_frank_wolfe(const structure_list *all, const double *a, const double *d,
                             double *u, double tol, int32_t max_iter) {
    const int32_t n = all->dim, m = all->count;
    double *w = calloc((size_t)m, sizeof *w), *grad = malloc((size_t)n * sizeof *grad);
    double *score = malloc((size_t)m * sizeof *score);
    assert_true(w && grad && score && m > 0);
    double best0 = 0.0;
    int32_t start = structure_best(all, a, &best0);
    w[start] = 1.0;
    for (int32_t i = 0; i < n; ++i) u[i] = all->x[(size_t)start * (size_t)n + (size_t)i];
    double gap = INFINITY;
    for (int32_t it = 0; it < max_iter; ++it) {
        for (int32_t i = 0; i < n; ++i) grad[i] = a[i] - d[i] * u[i];
        int32_t to = -1, away = -1;
        for (int32_t k = 0; k < m; ++k) {
            score[k] = dot01(all->x + (size_t)k * (size_t)n, grad, n);
            if (to < 0 || score[k] > score[to]) to = k;
            if (w[k] > 0.0 && (away < 0 || score[k] < score[away])) away = k;
        }
        if (to < 0 || away < 0) break;
        double at_u = 0.0;
        for (int32_t i = 0; i < n; ++i) at_u += grad[i] * u[i];
        gap = score[to] - at_u;
        if (gap <= tol || to == away) break;
        /* move weight from `away` to `to`: u += g (x_to - x_away) */
        const uint8_t *xt = all->x + (size_t)to * (size_t)n;
        const uint8_t *xa = all->x + (size_t)away * (size_t)n;
        double slope = score[to] - score[away], curv = 0.0;
        for (int32_t i = 0; i < n; ++i) {
            double dir = (double)xt[i] - (double)xa[i];
            curv += d[i] * dir * dir;
        }
        if (!(slope > 0.0) || !(curv > 0.0)) break;
        double step = slope / curv;
        if (step > w[away]) step = w[away];
        w[to] += step;
        w[away] -= step;
        if (w[away] < 1e-300) w[away] = 0.0;
        /* u from the weights, so that rounding does not accumulate */
        for (int32_t i = 0; i < n; ++i) u[i] = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            if (w[k] == 0.0) continue;
            const uint8_t *x = all->x + (size_t)k * (size_t)n;
            for (int32_t i = 0; i < n; ++i)
                if (x[i]) u[i] += w[k];
        }
    }
    free(w);
    free(grad);
    free(score);
    return gap;
}

int read_fg(const char *text, concord_graph ***graphs, size_t *count, char *error, size_t size) {
    return concord_read_buffer(text, strlen(text), "test.fg", CONCORD_FORMAT_FG, graphs, count,
                               error, size, NULL, NULL);
}
