/*
 * The sparse distribution behind a factor's solution: the configurations
 * the active set combined and their weights. Factors without a closed form
 * keep it from the solve itself; for closed-form factors it is computed on
 * demand by running the generic active set once at the factor's final
 * inputs (the QP's solution u is unique, so it is the same point).
 */
#include <stdlib.h>
#include <string.h>

#include "workspace.h"

static void distribution_clear(concord_graph *g) {
    free(g->dist_weight);
    free(g->dist_u);
    free(g->dist_v);
    g->dist_weight = g->dist_u = g->dist_v = NULL;
    g->dist_count = 0;
    g->dist_factor = -1;
}

void graph_distribution_free(concord_graph *g) { distribution_clear(g); }

/* Copies the active set's configurations into the graph, in variable
 * space. */
static int copy_distribution(concord_graph *g, int32_t f, active_set *s) {
    const factor *fa = &g->factors[f];
    int32_t count = active_set_size(s), deg = fa->degree, n_add = fa->n_add;
    distribution_clear(g);
    g->dist_weight = malloc((size_t)(count ? count : 1) * sizeof(double));
    g->dist_u = calloc((size_t)(count ? count : 1) * (size_t)(deg ? deg : 1), sizeof(double));
    g->dist_v = calloc((size_t)(count ? count : 1) * (size_t)(n_add ? n_add : 1), sizeof(double));
    if (!g->dist_weight || !g->dist_u || !g->dist_v) {
        distribution_clear(g);
        return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    }
    const uint8_t *neg = g->link_neg + fa->link_begin;
    for (int32_t k = 0; k < count; ++k) {
        const int32_t *ones;
        int32_t n = active_set_config(s, k, &ones);
        double *u = g->dist_u + (size_t)k * (size_t)deg, *v = g->dist_v + (size_t)k * (size_t)n_add;
        for (int32_t j = 0; j < n; ++j) {
            if (ones[j] < deg) u[ones[j]] = 1.0;
            else v[ones[j] - deg] = 1.0;
        }
        for (int32_t j = 0; j < deg; ++j)
            if (neg[j]) u[j] = 1.0 - u[j];
        g->dist_weight[k] = active_set_weight(s, k);
    }
    g->dist_count = count;
    g->dist_factor = f;
    return CONCORD_OK;
}

int concord_factor_distribution(concord_graph *g, int32_t f, int32_t *count) {
    if (!g || !count) return CONCORD_EINVAL;
    if (f < 0 || f >= g->n_factors)
        return graph_fail(g, CONCORD_EINVAL, "factor %d out of range (the graph has %d)", f,
                          g->n_factors);
    admm_workspace *w = g->ws;
    if (!w || !g->sol_u)
        return graph_fail(g, CONCORD_EINVAL, "no solution: solve the graph first");
    const factor *fa = &g->factors[f];
    if (fa->ops->fractional_vertices)
        return graph_fail(g, CONCORD_EINVAL,
                          "factor %d (%s): its polytope has fractional vertices, so only its "
                          "marginals (the solution itself) are available",
                          f, fa->ops->name);
    int rc;
    if (w->state[f]) {
        rc = copy_distribution(g, f, w->state[f]);
    } else {
        /* A fresh active set at the final inputs of the factor. */
        active_set *s = active_set_new(fa);
        if (!s) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
        const int32_t b = fa->link_begin;
        workspace_link_weights(w, g->link_var + b, fa->degree, w->sparse, w->eta, w->d);
        for (int32_t j = 0; j < fa->degree; ++j)
            w->buf.lit_a[j] = literal_qp_input(g->link_neg[b + j], w->a_solved[b + j], w->d[j]);
        active_set_result r = active_set_solve(s, fa, w->buf.lit_a, g->phi + fa->add_begin, w->d,
                                               w->buf.lit_u, w->vmap, 1000, &w->buf);
        if (r.error)
            rc = graph_fail(g, r.error, "factor %d: out of memory in the active set", f);
        else if (!r.exact)
            rc = graph_fail(g, CONCORD_ENOTCONVERGED,
                            "factor %d: the active set did not certify its solution in %d "
                            "oracle calls", f, r.oracle_calls);
        else
            rc = copy_distribution(g, f, s);
        active_set_free(s);
    }
    if (rc == CONCORD_OK) *count = g->dist_count;
    return rc;
}

int concord_distribution_entry(const concord_graph *g, int32_t k, double *weight, double *u,
                               double *v) {
    if (!g || g->dist_factor < 0 || k < 0 || k >= g->dist_count) return CONCORD_EINVAL;
    const factor *fa = &g->factors[g->dist_factor];
    if (weight) *weight = g->dist_weight[k];
    if (u) memcpy(u, g->dist_u + (size_t)k * (size_t)fa->degree, (size_t)fa->degree * sizeof(double));
    if (v) memcpy(v, g->dist_v + (size_t)k * (size_t)fa->n_add, (size_t)fa->n_add * sizeof(double));
    return CONCORD_OK;
}
