/*
 * The sparse distribution behind a factor's solution: the configurations
 * the active set combined and their weights. Factors solved by the active
 * set keep it from the solve itself; for closed-form factors it is computed
 * on demand by running the generic active set once, on a problem with the
 * same solution (solver_distribution_qp).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "solver.h"

/* Factor f's QP by the active set `state` at the literal inputs in
 * s->buf.lit_a and the weights in s->d (see solver_active_set_qp): the
 * code, with its message. */
static int literal_qp(concord_solver *s, int32_t f, active_set *state, const double *phi) {
    const active_set_result r =
        active_set_solve(state, &s->g->factors[f], s->buf.lit_a, phi, s->d, s->buf.lit_u,
                         s->vmap, CERTIFY_ORACLE_CALLS, &s->buf);
    if (r.callback_error) return solver_callback_failed(s, f, r.callback_error);
    if (r.error) return solver_fail(s, r.error, "factor %d: out of memory in the active set", f);
    if (!r.exact)
        return solver_fail(s, CONCORD_ENOTCONVERGED,
                           "factor %d: the active set did not certify its solution in %d "
                           "oracle calls",
                           f, r.oracle_calls);
    return CONCORD_OK;
}

int solver_active_set_qp(concord_solver *s, int32_t f, active_set *state, const double *a,
                         const double *phi) {
    const factor *fa = &s->g->factors[f];
    const uint8_t *neg = s->g->link_neg + fa->link_begin;
    for (int32_t j = 0; j < fa->degree; ++j)
        s->buf.lit_a[j] = literal_qp_input(neg[j], a[j], s->d[j]);
    return literal_qp(s, f, state, phi);
}

/* How far a distribution's mean may lie from the solution it is behind.
 * The active set certifies its gap to about 1e-12 of the scores' size s,
 * which bounds the distance of its point from the solution by about
 * sqrt(2e-12 s / w) along a link of weight w: 1.4e-6 at w = s, and 1.2e-5
 * was seen over 140,000 distributions of random factors in converged
 * solves. Gross drifts (0.1 to 0.5 along links weighted 1e12 below the
 * scores) are what this catches. */
#define DISTRIBUTION_TOLERANCE 1e-4

/* How far the active set's last point (in s->buf.lit_u and s->vmap) lies
 * from the solution (u, v) of factor f (u in variable space). */
static double distance_from(const concord_solver *s, const factor *fa, const double *u,
                            const double *v) {
    const uint8_t *neg = s->g->link_neg + fa->link_begin;
    double off = 0.0;
    for (int32_t j = 0; j < fa->degree; ++j)
        off = fmax(off, fabs(variable_value(neg[j], s->buf.lit_u[j]) - u[j]));
    for (int32_t k = 0; k < fa->n_add; ++k) off = fmax(off, fabs(s->vmap[k] - v[k]));
    return off;
}

int solver_distribution_qp(concord_solver *s, int32_t f, active_set *state, const double *a,
                           const double *phi, const double *u, const double *v) {
    const factor *fa = &s->g->factors[f];
    int rc = solver_active_set_qp(s, f, state, a, phi);
    if (rc == CONCORD_OK && distance_from(s, fa, u, v) <= DISTRIBUTION_TOLERANCE) return rc;
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) return rc;
    /* the same solution with the light weights raised to the scores' size */
    double size = 0.0;
    for (int32_t j = 0; j < fa->degree; ++j) size = max_abs(size, a[j]);
    for (int32_t k = 0; k < fa->n_add; ++k) size = max_abs(size, phi[k]);
    if (!(size > 0.0 && isfinite(size))) size = 1.0;
    const uint8_t *neg = s->g->link_neg + fa->link_begin;
    double *lit_a = s->buf.lit_a, *d = s->d;
    for (int32_t j = 0; j < fa->degree; ++j) {
        lit_a[j] = literal_qp_input(neg[j], a[j], d[j]);
        if (d[j] >= size) continue;
        lit_a[j] += (size - d[j]) * variable_value(neg[j], u[j]);
        d[j] = size;
    }
    active_set_reset(state);
    rc = literal_qp(s, f, state, phi);
    if (rc) return rc;
    const double off = distance_from(s, fa, u, v);
    if (!(off <= DISTRIBUTION_TOLERANCE))
        return solver_fail(s, CONCORD_ENOTCONVERGED,
                           "factor %d: no distribution found behind its solution: the active "
                           "set's mean lies %.3g from it (its weights are too far apart)",
                           f, off);
    return CONCORD_OK;
}

int solver_active_set_at_final_inputs(concord_solver *s, int32_t f, active_set *state) {
    const concord_graph *g = s->g;
    const factor *fa = &g->factors[f];
    const int32_t b = fa->link_begin;
    active_set_reset(state);
    solver_link_weights(s, g->link_var + b, fa->degree, s->mode == MODE_SPARSE, s->eta, s->d);
    return solver_active_set_qp(s, f, state, s->a_solved + b, solver_phi(s) + fa->add_begin);
}

int solver_complete_face(concord_solver *s, int32_t f, active_set *state, bool *complete) {
    const factor *fa = &s->g->factors[f];
    const int32_t b = fa->link_begin;
    const uint8_t *neg = s->g->link_neg + b;
    /* the weights the state was solved with: the penalty may have moved
     * after the factor's last solve (a solve stopped at max_iter) */
    const double *d = active_set_weights(state);
    for (int32_t j = 0; j < fa->degree; ++j)
        s->buf.lit_a[j] = literal_qp_input(neg[j], s->a_solved[b + j], d[j]);
    const active_set_result r = active_set_complete_face(state, fa, s->buf.lit_a,
                                                         solver_phi(s) + fa->add_begin, &s->buf);
    if (r.callback_error) return solver_callback_failed(s, f, r.callback_error);
    if (r.error) return solver_fail(s, r.error, "factor %d: out of memory in the active set", f);
    *complete = r.exact;
    return CONCORD_OK;
}

/* Room for `count` configurations of factor f in the solver's distribution,
 * which then belongs to f. */
static int alloc_distribution(concord_solver *s, int32_t f, int32_t count) {
    const factor *fa = &s->g->factors[f];
    size_t rows = (size_t)(count ? count : 1);
    solver_distribution_clear(s);
    distribution *d = &s->dist;
    d->weight = malloc(rows * sizeof(double));
    d->u = calloc(rows * (size_t)(fa->degree ? fa->degree : 1), sizeof(double));
    d->v = calloc(rows * (size_t)(fa->n_add ? fa->n_add : 1), sizeof(double));
    if (!d->weight || !d->u || !d->v) {
        solver_distribution_clear(s);
        return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    }
    d->count = count;
    d->factor = f;
    return CONCORD_OK;
}

int solver_copy_distribution(concord_solver *s, int32_t f, const active_set *state) {
    const factor *fa = &s->g->factors[f];
    const int32_t size = active_set_size(state), deg = fa->degree, n_add = fa->n_add;
    int32_t count = 0;
    for (int32_t k = 0; k < size; ++k) count += active_set_weight(state, k) > 0.0;
    int rc = alloc_distribution(s, f, count);
    if (rc) return rc;
    distribution *d = &s->dist;
    const uint8_t *neg = s->g->link_neg + fa->link_begin;
    for (int32_t k = 0, row = 0; k < size; ++k) {
        if (!(active_set_weight(state, k) > 0.0)) continue;
        double *u = d->u + (size_t)row * (size_t)deg, *v = d->v + (size_t)row * (size_t)n_add;
        active_set_config(state, k, u, v);
        for (int32_t j = 0; j < deg; ++j)
            if (neg[j]) u[j] = 1.0 - u[j];
        d->weight[row++] = active_set_weight(state, k);
    }
    return CONCORD_OK;
}

/* An integral solution is one configuration of every factor (the solve
 * checked that each allows it): its distribution is that configuration with
 * weight 1, whatever small weights the active set left elsewhere before the
 * solution was rounded. */
static int copy_integral_solution(concord_solver *s, int32_t f) {
    const concord_graph *g = s->g;
    const factor *fa = &g->factors[f];
    int rc = alloc_distribution(s, f, 1);
    if (rc) return rc;
    distribution *d = &s->dist;
    d->weight[0] = 1.0;
    for (int32_t j = 0; j < fa->degree; ++j) d->u[j] = s->sol_u[g->link_var[fa->link_begin + j]];
    memcpy(d->v, s->sol_v + fa->add_begin, (size_t)fa->n_add * sizeof(double));
    return CONCORD_OK;
}

/* concord_solver_factor_distribution once begun (it may run f's oracle). */
static int factor_distribution(concord_solver *s, int32_t f, int32_t *count) {
    int rc;
    const concord_graph *g = s->g;
    if (!count) return solver_fail(s, CONCORD_EINVAL, "no count pointer");
    if (f < 0 || f >= g->n_factors)
        return solver_fail(s, CONCORD_EINVAL, "factor %d out of range (the graph has %d)", f,
                           g->n_factors);
    if (!s->solved || s->mode == MODE_NONE)
        return solver_fail(s, CONCORD_EINVAL, "no solution: solve first");
    const factor *fa = &g->factors[f];
    if (fa->ops->fractional_vertices)
        return solver_fail(s, CONCORD_EINVAL,
                           "factor %d (%s): its polytope has fractional vertices, so only its "
                           "marginals (the solution itself) are available",
                           f, fa->ops->name);
    if (!s->sol_integral && !s->sol_from_admm)
        return solver_fail(s, CONCORD_EINVAL,
                           "no distribution behind this solution: factor distributions follow "
                           "AD3 and LP-SparseMAP solves, and certified MAPs (not PSDD's "
                           "average, MPLP's uncertified assignment or an exact search's root "
                           "relaxation)");
    if (s->sol_integral) {
        rc = copy_integral_solution(s, f);
    } else if (f >= s->sol_factors_solved) {
        return solver_fail(s, CONCORD_EINVAL,
                           "factor %d: the solve stopped before it reached this factor, "
                           "whose part of the solution is its starting point, with no "
                           "distribution behind it",
                           f);
    } else if (s->state[f] && !fa->ops->qp) {
        rc = solver_copy_distribution(s, f, s->state[f]);
    } else {
        /* A fresh active set at the final inputs of the factor. */
        active_set *state = active_set_new(fa);
        if (!state) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
        const int32_t b = fa->link_begin;
        solver_link_weights(s, g->link_var + b, fa->degree, s->mode == MODE_SPARSE, s->eta, s->d);
        rc = solver_distribution_qp(s, f, state, s->a_solved + b, solver_phi(s) + fa->add_begin,
                                    s->uf + b, s->v + fa->add_begin);
        if (!rc) rc = solver_copy_distribution(s, f, state);
        active_set_free(state);
    }
    if (rc == CONCORD_OK) *count = s->dist.count;
    return rc;
}

int concord_solver_factor_distribution(concord_solver *s, int32_t f, int32_t *count) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, factor_distribution(s, f, count));
}

int concord_solver_distribution_entry(const concord_solver *s, int32_t k, double *weight,
                                      double *u, double *v) {
    if (!s || solver_held_elsewhere(s) || s->dist.factor < 0 || k < 0 || k >= s->dist.count)
        return CONCORD_EINVAL;
    const factor *fa = &s->g->factors[s->dist.factor];
    if (weight) *weight = s->dist.weight[k];
    if (u)
        memcpy(u, s->dist.u + (size_t)k * (size_t)fa->degree,
               (size_t)fa->degree * sizeof(double));
    if (v)
        memcpy(v, s->dist.v + (size_t)k * (size_t)fa->n_add, (size_t)fa->n_add * sizeof(double));
    return CONCORD_OK;
}
