/*
 * Training losses for a gold structure (u*, v*), with their gradients.
 *
 * LP-SparseMAP loss (a Fenchel-Young loss, LP-SparseMAP paper section 4):
 *   L = max over the local polytope of [theta.u + phi.v - |u|_w^2/2]
 *       - [theta.u* + phi.v* - |u*|_w^2/2],     gradient (u_hat - u*, v_hat - v*),
 * with |u|_w^2 = sum_i w_i u_i^2 (the regularization weights, 1 unless set).
 * Structured hinge with the Hamming cost, by cost-augmented LP-MAP:
 *   L = max over the local polytope of [theta.u + phi.v + Hamming(u, u*)]
 *       - [theta.u* + phi.v*],                   subgradient likewise,
 * where Hamming(u, u*) = sum_i u_i (1 - 2 u*_i) + u*_i, linear in u (it is
 * |u_i - u*_i| summed when u* is 0/1), so the augmented problem is LP-MAP
 * with scores theta + 1 - 2 u*. Both losses are written as sums of
 * differences between prediction and gold, so they are exactly zero when
 * the prediction equals the gold structure; they are clipped at zero
 * against solver round-off.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "solver.h"

/* How far a gold value may lie from its projection onto a factor's
 * polytope (gold_projects_onto_itself): a gold computed in float32 (soft
 * labels of a PyTorch model) is off by up to about 6e-8 per value, and a
 * sum constraint spreads the error of a sum over its values. */
#define GOLD_PROJECTION_SLACK 1e-6

/* The gold additional outputs: given, or each factor's best ones at u*,
 * where u* must be allowed by every factor that sees it 0/1. A factor that
 * sees a fractional u* and has additional outputs has no best ones of its
 * own (its best at u* rounded would be a wrong v*): they must be given.
 * Whether a fractional gold lies in the polytope is judged by
 * gold_in_every_factor and by the loss's sign (run_loss). */
static int gold_additionals(concord_solver *s, const double *u_gold, const double *v_gold,
                            double *v) {
    const concord_graph *g = s->g;
    if (v_gold) {
        if (g->n_add > 0) memcpy(v, v_gold, (size_t)g->n_add * sizeof(double));
        return CONCORD_OK;
    }
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        int32_t fractional = -1;
        for (int32_t j = 0; j < fa->degree && fractional < 0; ++j) {
            const int32_t i = g->link_var[fa->link_begin + j];
            if (u_gold[i] != 0.0 && u_gold[i] != 1.0) fractional = i;
        }
        if (fractional >= 0) {
            if (fa->n_add == 0) continue;
            return solver_fail(s, CONCORD_EINVAL,
                               "the gold structure is fractional (variable %d is %g) in factor "
                               "%d (%s), which has additional outputs: a fractional gold needs "
                               "them given (v_gold)",
                               fractional, u_gold[fractional], f, fa->ops->name);
        }
        double score;
        bool allowed;
        int rc = solver_factor_at(s, solver_phi(s), f, u_gold, &allowed, &score,
                                  v + fa->add_begin);
        if (rc) return solver_callback_failed(s, f, rc);
        if (!allowed)
            return solver_fail(s, CONCORD_EINVAL, "the gold structure violates factor %d (%s)",
                               f, fa->ops->name);
    }
    return CONCORD_OK;
}

/* Whether u* is its own projection onto the polytope of factor f, whose
 * QP at scores u* and unit weights is that projection
 * (factor_ops.qp_projects_exactly: the logic families and BUDGET); s->a
 * holds u* at f's links. */
static bool gold_projects_onto_itself(concord_solver *s, int32_t f) {
    const factor *fa = &s->g->factors[f];
    for (int32_t j = 0; j < fa->degree; ++j) s->d[j] = 1.0;
    qp_outcome out;
    factor_qp_variables(fa, NULL, s->g->link_neg + fa->link_begin, s->a, NULL, s->d, s->u,
                        NULL, 0, &s->buf, &out);
    for (int32_t j = 0; j < fa->degree; ++j)
        if (fabs(s->u[j] - s->a[j]) > GOLD_PROJECTION_SLACK) return false;
    return true;
}

/* Whether the gold (u*, v*) can lie in each factor's polytope. A factor
 * whose QP is an exact projection is judged exactly
 * (gold_projects_onto_itself). Any other factor by a necessary test: a
 * point of a convex hull of configurations y satisfies (u*, v*).(u*, v*)
 * <= max_y (u*, v*).y, since it is a mixture of the y, so a factor whose
 * MAP at the scores (u*, v*) scores less refuses it (one oracle call per
 * factor); it catches a gold far outside a factor, and the loss's sign
 * catches more. A gold 0/1 on a factor's links without v_gold was judged
 * by gold_additionals (the factor allows it), and costs no call here (a
 * single tree's hinge loss stays one oracle call). */
static int gold_in_every_factor(concord_solver *s, const double *u_gold, const double *v_gold,
                                const double *v_star) {
    const concord_graph *g = s->g;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        double self = 0.0, best;
        bool judged = !v_gold;
        for (int32_t j = 0; j < fa->degree; ++j) {
            s->a[j] = u_gold[g->link_var[fa->link_begin + j]];
            self += s->a[j] * s->a[j];
            judged &= s->a[j] == 0.0 || s->a[j] == 1.0;
        }
        if (judged) continue;
        if (fa->ops->qp_projects_exactly) {
            if (!gold_projects_onto_itself(s, f))
                return solver_fail(s, CONCORD_EINVAL,
                                   "the gold structure lies outside factor %d (%s): its values "
                                   "there are no point of the factor's polytope",
                                   f, fa->ops->name);
            continue;
        }
        const double *b = v_star + fa->add_begin;
        for (int32_t k = 0; k < fa->n_add; ++k) self += b[k] * b[k];
        const int rc = solver_factor_map(s, f, s->a, b, s->u, s->vmap, &best);
        if (rc) return solver_callback_failed(s, f, rc);
        if (self > best + 1e-9 * (1.0 + self))
            return solver_fail(s, CONCORD_EINVAL,
                               "the gold structure lies outside factor %d (%s): its values "
                               "there are no point of the factor's polytope",
                               f, fa->ops->name);
    }
    return CONCORD_OK;
}

static int check_gold(concord_solver *s, const double *u_gold, const double *v_gold) {
    const concord_graph *g = s->g;
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (!(u_gold[i] >= 0.0 && u_gold[i] <= 1.0))
            return solver_fail(s, CONCORD_EINVAL, "gold value of variable %d is %g, not in [0, 1]",
                               i, u_gold[i]);
    for (int32_t f = 0; v_gold && f < g->n_factors; ++f) {
        /* a user factor's additional outputs are reals in [-1, 1] */
        const factor *fa = &g->factors[f];
        const double lowest = fa->ops->real_additionals ? -1.0 : 0.0;
        for (int32_t k = fa->add_begin; k < fa->add_begin + fa->n_add; ++k) {
            if (!(v_gold[k] >= lowest && v_gold[k] <= 1.0))
                return solver_fail(s, CONCORD_EINVAL,
                                   "gold additional output %d (factor %d) is %g, not in [%g, 1]",
                                   k, f, v_gold[k], lowest);
            /* no allowed configuration uses a forbidden output: a gold
             * with weight there lies outside the factor's polytope (its
             * score there is -inf), whatever the slack check below sees */
            if (fa->forbidden && fa->forbidden[k - fa->add_begin] && v_gold[k] != 0.0)
                return solver_fail(s, CONCORD_EINVAL,
                                   "gold additional output %d (factor %d, %s) is %g, but the "
                                   "factor forbids that output (scored -inf when built): it "
                                   "must be 0",
                                   k, f, fa->ops->name, v_gold[k]);
        }
    }
    return CONCORD_OK;
}

/* The loss (not yet clipped at 0) and gradients from the differences
 * between the solution and the gold structure, under the solver's (not
 * cost-augmented) scores. */
static double finish(const concord_solver *s, const double *u_gold, const double *v_gold,
                     bool hinge, double *dtheta, double *dphi) {
    const concord_graph *g = s->g;
    const double *u = s->sol_u, *v = s->sol_v, *theta = solver_theta(s), *phi = solver_phi(s);
    double loss = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) {
        double diff = u[i] - u_gold[i];
        loss += theta[i] * diff;
        loss += hinge ? diff * (1.0 - 2.0 * u_gold[i])
                      : -0.5 * g->weight[i] * (u[i] * u[i] - u_gold[i] * u_gold[i]);
        if (dtheta) dtheta[i] = diff;
    }
    for (int32_t k = 0; k < g->n_add; ++k) {
        double diff = v[k] - v_gold[k];
        loss += phi[k] * diff;
        if (dphi) dphi[k] = diff;
    }
    return loss;
}

/* How far below 0 a converged solve can leave the loss of a gold structure
 * inside the local polytope (where both losses are >= 0: the maximum is
 * at least the value at the gold): each solution value is within a few
 * tol of the exact one (16 tol at most over the random graphs of the
 * differential tests), and the loss moves by |score| + w per unit of a
 * variable, |score| per unit of an additional output. */
static double loss_slack(const concord_solver *s, double tol) {
    double size = solver_score_l1(s->g, solver_theta(s), solver_phi(s));
    for (int32_t i = 0; i < s->g->n_vars; ++i) size += s->g->weight[i];
    return 100.0 * tol * size;
}

static int run_loss(concord_solver *s, const concord_settings *settings, const double *u_gold,
                    const double *v_gold, bool hinge, double *loss, double *dtheta,
                    double *dphi, concord_info *info) {
    int rc;
    const concord_graph *g = s->g;
    static const double no_variables = 0.0; /* u_gold of a graph without variables may be NULL */
    if (!u_gold && g->n_vars == 0) u_gold = &no_variables;
    if (!u_gold || !loss) return solver_fail(s, CONCORD_EINVAL, "loss: no gold structure or loss");
    if ((rc = check_gold(s, u_gold, v_gold))) return rc;
    double *v_star = malloc((size_t)(g->n_add ? g->n_add : 1) * sizeof *v_star);
    if (!v_star) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    rc = gold_additionals(s, u_gold, v_gold, v_star);
    if (!rc) rc = gold_in_every_factor(s, u_gold, v_gold, v_star);
    if (!rc) {
        const double *theta = NULL;
        if (hinge) {
            /* cost-augmented scores, for this solve only */
            const double *base = solver_theta(s);
            for (int32_t i = 0; i < g->n_vars; ++i)
                s->theta_work[i] = base[i] + 1.0 - 2.0 * u_gold[i];
            theta = s->theta_work;
        }
        rc = solver_admm(s, settings, !hinge, theta, info);
    }
    if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
        const double raw = finish(s, u_gold, v_star, hinge, dtheta, dphi);
        concord_settings st;
        solver_settings(s, settings, &st); /* checked by the solve */
        if (rc == CONCORD_OK && raw < -loss_slack(s, st.tol))
            /* a negative loss proves the gold outside the local polytope */
            rc = solver_fail(s, CONCORD_EINVAL,
                             "the gold structure lies outside the local polytope (its loss "
                             "would be %.6g < 0): a fractional gold must be a mixture of "
                             "structures the factors allow",
                             raw);
        else
            *loss = raw > 0.0 ? raw : 0.0;
    }
    free(v_star);
    return rc;
}

int concord_solver_loss_sparsemap(concord_solver *s, const concord_settings *settings,
                                  const double *u_gold, const double *v_gold, double *loss,
                                  double *dtheta, double *dphi, concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc
              : solver_end_solve(s, run_loss(s, settings, u_gold, v_gold, false, loss, dtheta,
                                             dphi, info),
                                 info);
}

int concord_solver_loss_hinge(concord_solver *s, const concord_settings *settings,
                              const double *u_gold, const double *v_gold, double *loss,
                              double *dtheta, double *dphi, concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc
              : solver_end_solve(s, run_loss(s, settings, u_gold, v_gold, true, loss, dtheta,
                                             dphi, info),
                                 info);
}
