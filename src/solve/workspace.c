/*
 * Building and freeing the solver workspace, and evaluating factors at
 * integral points (see workspace.h).
 */
#include "workspace.h"

#include "anderson.h"

#include <math.h>
#include <stdlib.h>

void admm_workspace_free(admm_workspace *w) {
    if (!w) return;
    free(w->deg);
    free(w->inv_deg);
    free(w->var_link_begin);
    free(w->var_links);
    free(w->link_factor);
    free(w->lambda);
    free(w->uf);
    free(w->face);
    free(w->ubar);
    free(w->v);
    free(w->round_u);
    free(w->round_v);
    free(w->dirty);
    free(w->active);
    free(w->a_solved);
    free(w->link_score);
    free(w->a);
    free(w->d);
    free(w->u);
    free(w->b);
    free(w->vmap);
    free(w->buf.lit_a);
    free(w->buf.lit_u);
    free(w->buf.oracle_a);
    free(w->buf.oracle_u);
    free(w->buf.oracle_v);
    free(w->buf.scratch);
    for (int32_t f = 0; w->state && f < w->n_states; ++f) active_set_free(w->state[f]);
    free(w->state);
    free(w->backward_memory);
    anderson_free(w->anderson);
    free(w);
}

static void *alloc_array(size_t n, size_t size, int *failed) {
    void *p = calloc(n ? n : 1, size);
    if (!p) *failed = 1;
    return p;
}

admm_workspace *workspace_build(const concord_graph *g) {
    int failed = 0;
    admm_workspace *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    size_t nv = (size_t)g->n_vars, nl = (size_t)g->n_links;
    w->deg = alloc_array(nv, sizeof(int32_t), &failed);
    w->inv_deg = alloc_array(nv, sizeof(double), &failed);
    w->var_link_begin = alloc_array(nv + 1, sizeof(int32_t), &failed);
    w->var_links = alloc_array(nl, sizeof(int32_t), &failed);
    w->link_factor = alloc_array(nl, sizeof(int32_t), &failed);
    w->lambda = alloc_array(nl, sizeof(double), &failed);
    w->uf = alloc_array(nl, sizeof(double), &failed);
    w->ubar = alloc_array(nv, sizeof(double), &failed);
    w->v = alloc_array((size_t)g->n_add, sizeof(double), &failed);
    w->round_u = alloc_array(nv, sizeof(double), &failed);
    w->round_v = alloc_array((size_t)g->n_add, sizeof(double), &failed);
    w->dirty = alloc_array((size_t)g->n_factors, sizeof(bool), &failed);
    w->active = alloc_array(nv, sizeof(bool), &failed);
    w->a_solved = alloc_array(nl, sizeof(double), &failed);
    w->link_score = alloc_array(nl, sizeof(double), &failed);
    w->face = alloc_array((size_t)g->n_factors, sizeof(int32_t), &failed);
    int32_t max_degree = 1, max_add = 1;
    size_t max_scratch = 1;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        if (fa->degree > max_degree) max_degree = fa->degree;
        if (fa->n_add > max_add) max_add = fa->n_add;
        size_t s = factor_scratch_bytes(fa);
        if (s > max_scratch) max_scratch = s;
    }
    w->max_degree = max_degree;
    w->a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->d = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->b = alloc_array((size_t)max_add, sizeof(double), &failed);
    w->vmap = alloc_array((size_t)max_add, sizeof(double), &failed);
    w->buf.lit_a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->buf.lit_u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->buf.oracle_a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->buf.oracle_u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    w->buf.oracle_v = alloc_array((size_t)max_add, sizeof(double), &failed);
    w->buf.scratch = alloc_array(max_scratch, 1, &failed);
    w->state = alloc_array((size_t)g->n_factors, sizeof(active_set *), &failed);
    if (w->state) w->n_states = g->n_factors;
    for (int32_t f = 0; f < g->n_factors && !failed; ++f)
        if (!g->factors[f].ops->qp && !(w->state[f] = active_set_new(&g->factors[f])))
            failed = 1;
    if (failed) {
        admm_workspace_free(w);
        return NULL;
    }
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        for (int32_t l = fa->link_begin; l < fa->link_begin + fa->degree; ++l) {
            w->link_factor[l] = f;
            w->deg[g->link_var[l]] += 1;
        }
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        w->var_link_begin[i + 1] = w->var_link_begin[i] + w->deg[i];
        w->inv_deg[i] = w->deg[i] ? 1.0 / w->deg[i] : 0.0;
    }
    /* Counting sort of links by variable, using deg as a running cursor. */
    for (int32_t i = 0; i < g->n_vars; ++i) w->deg[i] = 0;
    for (int32_t l = 0; l < g->n_links; ++l) {
        int32_t i = g->link_var[l];
        w->var_links[w->var_link_begin[i] + w->deg[i]++] = l;
    }
    return w;
}


bool workspace_factor_at(const concord_graph *g, admm_workspace *w, int32_t f,
                         const double *x, double *score, double *v) {
    const factor *fa = &g->factors[f];
    const double *phi = g->phi + fa->add_begin;
    double big = 1.0;
    for (int32_t k = 0; k < fa->n_add; ++k) big += 2.0 * fabs(phi[k]);
    for (int32_t j = 0; j < fa->degree; ++j)
        w->a[j] = x[g->link_var[fa->link_begin + j]] > 0.5 ? big : -big;
    double *out_v = v ? v : w->vmap;
    factor_map_variables(fa, g->link_neg + fa->link_begin, w->a, phi, w->u, out_v, &w->buf);
    for (int32_t j = 0; j < fa->degree; ++j)
        if (w->u[j] != (x[g->link_var[fa->link_begin + j]] > 0.5 ? 1.0 : 0.0)) return false;
    double sum = 0.0;
    for (int32_t k = 0; k < fa->n_add; ++k) sum += phi[k] * out_v[k];
    *score = sum;
    return true;
}
