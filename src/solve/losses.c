/*
 * Training losses for a gold structure (u*, v*), with their gradients.
 *
 * LP-SparseMAP loss (a Fenchel-Young loss, LP-SparseMAP paper section 4):
 *   L = max over the local polytope of [theta.u + phi.v - |u|^2/2]
 *       - [theta.u* + phi.v* - |u*|^2/2],       gradient (u_hat - u*, v_hat - v*).
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

#include "workspace.h"

/* The gold additional outputs: given, or each factor's best ones at u*
 * (the gold structure must then be allowed by every factor). */
static int gold_additionals(concord_graph *g, const double *u_gold, const double *v_gold,
                            double *v) {
    if (v_gold) {
        memcpy(v, v_gold, (size_t)g->n_add * sizeof(double));
        return CONCORD_OK;
    }
    if (!g->ws && !(g->ws = workspace_build(g)))
        return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    for (int32_t f = 0; f < g->n_factors; ++f) {
        double score;
        const factor *fa = &g->factors[f];
        if (!workspace_factor_at(g, g->ws, f, u_gold, &score, v + fa->add_begin))
            return graph_fail(g, CONCORD_EINVAL,
                              "the gold structure violates factor %d (%s); pass its "
                              "additional outputs explicitly if it is fractional",
                              f, fa->ops->name);
    }
    return CONCORD_OK;
}

static int check_gold(concord_graph *g, const double *u_gold, const double *v_gold) {
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (!(u_gold[i] >= 0.0 && u_gold[i] <= 1.0))
            return graph_fail(g, CONCORD_EINVAL, "gold value of variable %d is %g, not in [0, 1]",
                              i, u_gold[i]);
    for (int32_t k = 0; v_gold && k < g->n_add; ++k)
        if (!(v_gold[k] >= 0.0 && v_gold[k] <= 1.0))
            return graph_fail(g, CONCORD_EINVAL,
                              "gold additional output %d is %g, not in [0, 1]", k, v_gold[k]);
    return CONCORD_OK;
}

/* Shared tail: gradients and the loss from the differences. `extra` adds
 * the per-variable term of each loss. */
static double finish(const concord_graph *g, const double *u_gold, const double *v_gold,
                     int hinge, double *dtheta, double *dphi) {
    const double *u = g->sol_u, *v = g->sol_v;
    double loss = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) {
        double diff = u[i] - u_gold[i];
        loss += g->theta[i] * diff;
        loss += hinge ? diff * (1.0 - 2.0 * u_gold[i]) : -0.5 * (u[i] * u[i] - u_gold[i] * u_gold[i]);
        if (dtheta) dtheta[i] = diff;
    }
    for (int32_t k = 0; k < g->n_add; ++k) {
        double diff = v[k] - v_gold[k];
        loss += g->phi[k] * diff;
        if (dphi) dphi[k] = diff;
    }
    return loss > 0.0 ? loss : 0.0;
}

typedef int (*solve_fn)(concord_graph *, const concord_settings *, concord_info *);

static int run_loss(concord_graph *g, const concord_settings *settings, const double *u_gold,
                    const double *v_gold, int hinge, double *loss, double *dtheta, double *dphi,
                    concord_info *info) {
    if (!g || !u_gold || !loss) return CONCORD_EINVAL;
    int rc = check_gold(g, u_gold, v_gold);
    if (rc) return rc;
    double *v_star = malloc((size_t)(g->n_add ? g->n_add : 1) * sizeof *v_star);
    double *saved = hinge ? malloc((size_t)(g->n_vars ? g->n_vars : 1) * sizeof *saved) : NULL;
    if (!v_star || (hinge && !saved)) {
        free(v_star);
        free(saved);
        return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    }
    rc = gold_additionals(g, u_gold, v_gold, v_star);
    if (!rc && hinge) {
        /* cost-augmented scores for the solve, restored right after */
        memcpy(saved, g->theta, (size_t)g->n_vars * sizeof *saved);
        for (int32_t i = 0; i < g->n_vars; ++i) g->theta[i] += 1.0 - 2.0 * u_gold[i];
    }
    if (!rc) {
        solve_fn solve = hinge ? concord_solve_map : concord_solve_sparse;
        rc = solve(g, settings, info);
        if (hinge) memcpy(g->theta, saved, (size_t)g->n_vars * sizeof *saved);
    }
    if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED)
        *loss = finish(g, u_gold, v_star, hinge, dtheta, dphi);
    free(v_star);
    free(saved);
    return rc;
}

int concord_loss_sparsemap(concord_graph *g, const concord_settings *settings,
                           const double *u_gold, const double *v_gold, double *loss,
                           double *dtheta, double *dphi, concord_info *info) {
    return run_loss(g, settings, u_gold, v_gold, 0, loss, dtheta, dphi, info);
}

int concord_loss_hinge(concord_graph *g, const concord_settings *settings, const double *u_gold,
                       const double *v_gold, double *loss, double *dtheta, double *dphi,
                       concord_info *info) {
    return run_loss(g, settings, u_gold, v_gold, 1, loss, dtheta, dphi, info);
}
