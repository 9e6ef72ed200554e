/*
 * DENSE tables over two variables for the active-set tests (see
 * pair_table.h).
 */
#include "pair_table.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "graph.h"

void pair_table_init(pair_table *t, int k, double scale, test_rng *rng) {
    t->k = k;
    const size_t links = 2 * (size_t)k, joint = (size_t)k * (size_t)k;
    t->a = malloc(links * sizeof(double));
    t->d = malloc(links * sizeof(double));
    t->b = malloc(joint * sizeof(double));
    t->u = malloc(links * sizeof(double));
    t->v = malloc(joint * sizeof(double));
    assert_true(t->a && t->d && t->b && t->u && t->v);
    for (size_t i = 0; i < links; ++i) {
        t->a[i] = scale * (2.0 * rng_uniform(rng) - 1.0);
        t->d[i] = 0.5 + 1.5 * rng_uniform(rng);
    }
    for (size_t c = 0; c < joint; ++c) t->b[c] = scale * (2.0 * rng_uniform(rng) - 1.0);
    t->g = concord_graph_new();
    assert_non_null(t->g);
    int32_t states[2] = {k, k}, *vars = malloc(links * sizeof(int32_t));
    assert_non_null(vars);
    for (int j = 0; j < 2; ++j)
        assert_int_equal(concord_add_multi_variable(t->g, k, NULL, false, NULL), CONCORD_OK);
    for (size_t i = 0; i < links; ++i) vars[i] = (int32_t)i;
    assert_int_equal(concord_add_dense(t->g, 2, states, vars, t->b, NULL), CONCORD_OK);
    free(vars);
    const factor *f = &t->g->factors[0];
    t->state = active_set_new(f);
    assert_non_null(t->state);
    t->buf.lit_a = malloc(links * sizeof(double));
    t->buf.lit_u = malloc(links * sizeof(double));
    t->buf.oracle_a = malloc(links * sizeof(double));
    t->buf.oracle_u = malloc(links * sizeof(double));
    t->buf.oracle_v = malloc(joint * sizeof(double));
    t->buf.scratch = malloc(factor_scratch_bytes(f) + 1);
    assert_true(t->buf.lit_a && t->buf.lit_u && t->buf.oracle_a && t->buf.oracle_u &&
                t->buf.oracle_v && t->buf.scratch);
}

void pair_table_free(pair_table *t) {
    active_set_free(t->state);
    concord_graph_free(t->g);
    free(t->a), free(t->d), free(t->b), free(t->u), free(t->v);
    free(t->buf.lit_a), free(t->buf.lit_u), free(t->buf.oracle_a), free(t->buf.oracle_u);
    free(t->buf.oracle_v), free(t->buf.scratch);
}

qp_outcome pair_table_solve(pair_table *t, int32_t max_iter) {
    const factor *f = &t->g->factors[0];
    qp_outcome out;
    factor_qp_variables(f, t->state, t->g->link_neg + f->link_begin, t->a, t->b, t->d, t->u,
                        t->v, max_iter, &t->buf, &out);
    return out;
}

void pair_table_assert_distribution(const pair_table *t) {
    const int k = t->k;
    double *u = calloc(2 * (size_t)k, sizeof(double));
    double *v = calloc((size_t)k * (size_t)k, sizeof(double));
    assert_true(u && v);
    double total = 0.0;
    const int32_t size = active_set_size(t->state);
    assert_true(size >= 1 && size <= 2 * k + 1);
    double *cu = malloc(2 * (size_t)k * sizeof(double));
    double *cv = malloc((size_t)k * (size_t)k * sizeof(double));
    assert_true(cu && cv);
    for (int32_t s = 0; s < size; ++s) {
        const double w = active_set_weight(t->state, s);
        active_set_config(t->state, s, cu, cv);
        assert_true(w >= 0.0);
        /* one state of each variable, and the table entry of the two */
        int first = -1, second = -1, on = 0;
        for (int i = 0; i < k; ++i) {
            if (cu[i] == 1.0) first = i, ++on;
            if (cu[k + i] == 1.0) second = i, ++on;
        }
        assert_int_equal(on, 2);
        assert_true(first >= 0 && second >= 0);
        for (int c = 0; c < k * k; ++c) assert_true(cv[c] == (c == first * k + second));
        u[first] += w, u[k + second] += w, v[first * k + second] += w;
        total += w;
    }
    free(cu);
    free(cv);
    assert_true(fabs(total - 1.0) <= 1e-12);
    for (int i = 0; i < 2 * k; ++i) assert_true(fabs(u[i] - t->u[i]) <= 1e-9);
    for (int c = 0; c < k * k; ++c) assert_true(fabs(v[c] - t->v[c]) <= 1e-9);
    free(u);
    free(v);
}

double pair_table_relative_gap(const pair_table *t) {
    const int k = t->k;
    double here = 0.0, scale = 1.0, best = -INFINITY;
    for (int i = 0; i < 2 * k; ++i) {
        here += (t->a[i] - t->d[i] * t->u[i]) * t->u[i];
        scale += (fabs(t->a[i]) + t->d[i] * t->u[i]) * t->u[i];
    }
    for (int c = 0; c < k * k; ++c) {
        here += t->b[c] * t->v[c];
        scale += fabs(t->b[c]) * t->v[c];
    }
    for (int x = 0; x < k; ++x)
        for (int y = 0; y < k; ++y) {
            double s = t->b[x * k + y] + t->a[x] - t->d[x] * t->u[x] + t->a[k + y] -
                       t->d[k + y] * t->u[k + y];
            best = fmax(best, s);
        }
    return (best - here) / scale;
}
