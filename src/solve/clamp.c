/*
 * Factors' MAP on the face where their clamped links hold their values (see
 * clamp.h). Why one M suffices on a polytope with 0/1 vertices: a vertex
 * off the face loses at least M on a clamped link against the vertices on
 * it, and gains at most sum |a_j| + sum |b_k| on the others, so with M
 * above twice that no vertex off the face can win.
 */
#include "clamp.h"

#include <math.h>
#include <stdlib.h>

#include "../util.h"

/* How often M grows (by GROWTH) before a face counts as empty. */
enum { MAX_PUSHES = 12 };
#define GROWTH 16.0

int clamp_reserve(concord_solver *s) {
    const concord_graph *g = s->g;
    if (!s->clamp) {
        s->clamp = malloc((size_t)(g->n_vars ? g->n_vars : 1));
        s->factor_clamps = calloc((size_t)(g->n_factors ? g->n_factors : 1), sizeof(int32_t));
        s->clamp_saved = malloc((size_t)s->max_degree * sizeof(double));
        if (!s->clamp || !s->factor_clamps || !s->clamp_saved) {
            free(s->clamp);
            free(s->factor_clamps);
            free(s->clamp_saved);
            s->clamp = NULL;
            s->factor_clamps = NULL;
            s->clamp_saved = NULL;
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

/* The push that dominates factor f's free scores x and additional
 * scores b. */
static double push_size(const concord_solver *s, const factor *fa, const double *x,
                        const double *b) {
    const int32_t *var = s->g->link_var + fa->link_begin;
    double sum = 0.0;
    for (int32_t j = 0; j < fa->degree; ++j)
        if (s->clamp[var[j]] < 0) sum += fabs(x[j]);
    for (int32_t k = 0; k < fa->n_add; ++k) sum += fabs(b[k]);
    return outweighing(sum);
}

int clamp_factor_map(concord_solver *s, int32_t f, double *a, const double *b, double *u,
                     double *v, double *score) {
    const factor *fa = &s->g->factors[f];
    const int32_t *var = s->g->link_var + fa->link_begin;
    double *saved = s->clamp_saved;
    for (int32_t j = 0; j < fa->degree; ++j) saved[j] = a[j];
    double push = push_size(s, fa, a, b);
    for (int32_t attempt = 0; attempt < MAX_PUSHES; ++attempt, push *= GROWTH) {
        for (int32_t j = 0; j < fa->degree; ++j)
            if (s->clamp[var[j]] >= 0) a[j] = s->clamp[var[j]] ? push : -push;
        double best;
        int rc = solver_factor_map(s, f, a, b, u, v, &best);
        if (rc) return rc;
        bool on_face = true;
        for (int32_t j = 0; j < fa->degree; ++j)
            if (s->clamp[var[j]] >= 0 && u[j] != (double)s->clamp[var[j]]) on_face = false;
        if (!on_face) continue;
        /* the score without the pushes, summed afresh */
        double sum = 0.0;
        for (int32_t j = 0; j < fa->degree; ++j) sum += saved[j] * u[j];
        for (int32_t k = 0; k < fa->n_add; ++k) sum += b[k] * v[k];
        *score = sum;
        return 0;
    }
    *score = -INFINITY;
    return 0;
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
