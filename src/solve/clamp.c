/*
 * Clamps for branch and bound (see clamp.h): variables fixed to 0 or 1, and
 * factors' MAP on the face where their clamped links hold their values
 * (solver_factor_map_held).
 */
#include "clamp.h"

#include <math.h>
#include <stdlib.h>

int clamp_reserve(concord_solver *s) {
    const concord_graph *g = s->g;
    if (!s->clamp) {
        s->clamp = malloc((size_t)(g->n_vars ? g->n_vars : 1));
        s->factor_clamps = calloc((size_t)(g->n_factors ? g->n_factors : 1), sizeof(int32_t));
        if (!s->clamp || !s->factor_clamps) {
            free(s->clamp);
            free(s->factor_clamps);
            s->clamp = NULL;
            s->factor_clamps = NULL;
            return CONCORD_ENOMEM;
        }
    }
    clamp_clear(s);
    return CONCORD_OK;
}

void clamp_clear(concord_solver *s) {
    if (!s->clamp) return;
    for (int32_t i = 0; i < s->g->n_vars; ++i) s->clamp[i] = -1;
    for (int32_t f = 0; f < s->g->n_factors; ++f) s->factor_clamps[f] = 0;
}

void clamp_set(concord_solver *s, int32_t i, int value) {
    const int was = s->clamp[i];
    s->clamp[i] = (int8_t)value;
    if ((was < 0) == (value < 0)) return;
    const int step = value < 0 ? -1 : 1;
    for (int32_t q = s->var_link_begin[i]; q < s->var_link_begin[i + 1]; ++q)
        s->factor_clamps[s->link_factor[s->var_links[q]]] += step;
}

int clamp_factor_map(concord_solver *s, int32_t f, const double *a, const double *b, double *u,
                     double *v, double *score) {
    const factor *fa = &s->g->factors[f];
    const int32_t *var = s->g->link_var + fa->link_begin;
    for (int32_t j = 0; j < fa->degree; ++j) s->held[j] = s->clamp[var[j]];
    return solver_factor_map_held(s, f, a, s->held, b, u, v, score);
}

int clamp_faces_nonempty(concord_solver *s, bool *nonempty, int32_t *failed) {
    const concord_graph *g = s->g;
    *nonempty = true;
    for (int32_t f = 0; f < g->n_factors && *nonempty; ++f) {
        if (!clamp_touches(s, f)) continue;
        const factor *fa = &g->factors[f];
        for (int32_t j = 0; j < fa->degree; ++j) s->a[j] = 0.0;
        double score;
        int rc = clamp_factor_map(s, f, s->a, solver_phi(s) + fa->add_begin, s->u, s->vmap,
                                  &score);
        if (rc) {
            *failed = f;
            return rc;
        }
        *nonempty = score > -INFINITY;
    }
    return 0;
}
