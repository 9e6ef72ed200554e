/*
 * One factor on its own, at scores the caller gives: its MAP oracle, and
 * its weighted QP (SparseMAP of the factor when the weights are 1) with the
 * sparse distribution behind the solution. The solver lends its buffers;
 * the solver's own state (solution, multipliers, active sets) is left as
 * it was, apart from its last distribution.
 */
#include "solver.h"

#include <stdlib.h>

#include "../util.h"

/* Checks f and the scores; b receives the additional scores to use: the
 * solver's, or a copy of b_in in *copy (to free) with 0 at the factor's
 * forbidden outputs, where b_in may hold -inf. */
static int check_inputs(concord_solver *s, int32_t f, const double *a, const double *b_in,
                        const double **b, double **copy) {
    const concord_graph *g = s->g;
    *copy = NULL;
    if (f < 0 || f >= g->n_factors)
        return solver_fail(s, CONCORD_EINVAL, "factor %d out of range (the graph has %d)", f,
                           g->n_factors);
    const factor *fa = &g->factors[f];
    if (!a && fa->degree > 0) return solver_fail(s, CONCORD_EINVAL, "no variable scores");
    for (int32_t j = 0; j < fa->degree; ++j)
        if (!score_in_range(a[j]))
            return solver_fail(s, CONCORD_EINVAL, "variable score %d (%g) %s", j, a[j],
                               score_problem(a[j]));
    *b = solver_phi(s) + fa->add_begin;
    if (!b_in || fa->n_add == 0) return CONCORD_OK;
    *copy = malloc((size_t)fa->n_add * sizeof(double));
    if (!*copy) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    const int32_t refused = graph_take_additional_scores(g, fa->add_begin, fa->n_add, b_in, *copy);
    if (refused >= 0)
        return solver_fail(s, CONCORD_EINVAL, "additional score %d (%g) %s", refused,
                           b_in[refused], additional_score_problem(b_in[refused]));
    *b = *copy;
    return CONCORD_OK;
}

/* The factor's MAP at checked scores. */
static int factor_map_at(concord_solver *s, int32_t f, const double *a, const double *b,
                         double *u, double *v, double *value) {
    double best;
    int rc = solver_factor_map(s, f, a, b, u ? u : s->u, v ? v : s->vmap, &best);
    if (rc) return solver_callback_failed(s, f, rc);
    if (value) *value = best;
    return CONCORD_OK;
}

/* The factor's weighted QP at checked scores. */
static int factor_qp_at(concord_solver *s, int32_t f, const double *variable_scores,
                        const double *b, const double *weights, double *u, double *v,
                        int32_t *count) {
    const factor *fa = &s->g->factors[f];
    if (!u && fa->degree > 0) return solver_fail(s, CONCORD_EINVAL, "no output array u");
    int32_t lightest = 0, heaviest = 0;
    for (int32_t j = 0; j < fa->degree; ++j) {
        s->d[j] = weights ? weights[j] : 1.0;
        /* the scores' range: a subnormal weight divides a score into NaN */
        if (!(s->d[j] >= 1e-300 && s->d[j] <= 1e300))
            return solver_fail(s, CONCORD_EINVAL, "weight %d (%g) must be between 1e-300 and 1e300",
                               j, s->d[j]);
        if (s->d[j] < s->d[lightest]) lightest = j;
        if (s->d[j] > s->d[heaviest]) heaviest = j;
    }
    /* the closed forms work relative to a reference score, scaled by the
     * weights' inverses: spread wider than this, the scaled scores
     * overflow into a NaN solution (1e-300 beside 1e300) */
    if (fa->degree > 0 && s->d[heaviest] > 1e300 * s->d[lightest])
        return solver_fail(s, CONCORD_EINVAL,
                           "weight %d (%g) is more than 1e300 times weight %d (%g)", heaviest,
                           s->d[heaviest], lightest, s->d[lightest]);
    if (count && fa->ops->fractional_vertices)
        return solver_fail(s, CONCORD_EINVAL,
                           "factor %d (%s): its polytope has fractional vertices, so its "
                           "solution has no distribution",
                           f, fa->ops->name);
    const uint8_t *neg = s->g->link_neg + fa->link_begin;
    double *out_v = v ? v : s->vmap;
    int rc;
    if (fa->ops->qp) {
        qp_outcome out;
        factor_qp_variables(fa, NULL, neg, variable_scores, b, s->d, u, out_v, 0, &s->buf,
                            &out);
        rc = solver_factor_failure(s, fa);
        if (rc) return solver_callback_failed(s, f, rc);
        if (!count) return CONCORD_OK;
    }
    active_set *state = active_set_new(fa);
    if (!state) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    rc = fa->ops->qp ? solver_distribution_qp(s, f, state, variable_scores, b, u, out_v)
                     : solver_active_set_qp(s, f, state, variable_scores, b);
    if ((!rc || rc == CONCORD_ENOTCONVERGED) && !fa->ops->qp) {
        /* uncertified, the best point reached; the active set's mean may
         * leave the box by an ulp */
        for (int32_t j = 0; j < fa->degree; ++j)
            u[j] = clip01(variable_value(neg[j], s->buf.lit_u[j]));
        for (int32_t k = 0; v && k < fa->n_add; ++k) v[k] = s->vmap[k];
    }
    if (!rc && count) {
        rc = solver_copy_distribution(s, f, state);
        if (!rc) *count = s->dist.count;
    }
    active_set_free(state);
    return rc;
}

/* concord_solver_factor_map once begun. */
static int factor_map_alone(concord_solver *s, int32_t f, const double *variable_scores,
                            const double *additional_scores, double *u, double *v,
                            double *value) {
    const double *b;
    double *copy;
    int rc = check_inputs(s, f, variable_scores, additional_scores, &b, &copy);
    if (!rc) rc = factor_map_at(s, f, variable_scores, b, u, v, value);
    free(copy);
    return rc;
}

/* concord_solver_factor_qp once begun. */
static int factor_qp_alone(concord_solver *s, int32_t f, const double *variable_scores,
                           const double *additional_scores, const double *weights, double *u,
                           double *v, int32_t *count) {
    const double *b;
    double *copy;
    int rc = check_inputs(s, f, variable_scores, additional_scores, &b, &copy);
    if (!rc) rc = factor_qp_at(s, f, variable_scores, b, weights, u, v, count);
    free(copy);
    return rc;
}

int concord_solver_factor_map(concord_solver *s, int32_t f, const double *variable_scores,
                              const double *additional_scores, double *u, double *v,
                              double *value) {
    int rc = solver_begin(s);
    return rc ? rc
              : solver_end(s, factor_map_alone(s, f, variable_scores, additional_scores, u, v,
                                               value));
}

int concord_solver_factor_qp(concord_solver *s, int32_t f, const double *variable_scores,
                             const double *additional_scores, const double *weights, double *u,
                             double *v, int32_t *count) {
    int rc = solver_begin(s);
    return rc ? rc
              : solver_end(s, factor_qp_alone(s, f, variable_scores, additional_scores, weights,
                                              u, v, count));
}
