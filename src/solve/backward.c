/*
 * The LP-SparseMAP backward pass (LP-SparseMAP paper, Proposition 3),
 * computed from the final state of the forward ADMM without unrolling.
 *
 * The value function F(theta, phi) = max over the local polytope of
 * theta.u + phi.v - 1/2 sum_i w_i u_i^2 is convex with gradient (u, v), so
 * the Jacobian of the solution is F's Hessian: symmetric, and the same
 * linear map serves as Jacobian-vector and vector-Jacobian product. In the
 * space of factor copies (one entry per link) with the metric
 * W = diag(w/deg), let A be the consensus subspace (copies of one vector
 * u) and B the product of the tangent spaces of the faces holding each
 * factor's solution. A change dtheta of the scores moves the copies' linear
 * term by W (dtheta / w). For a direction (du, dv), with
 * r_f = P_f (du / w) + c_f and c_f the factor's own response to dv_f,
 *   dz = Proj_{A cap B}(r)    (W-orthogonal),
 * dtheta is the consensus value of dz and dphi_f = G_f dz_f (v's slope on
 * the face). The projection onto the intersection is computed either by
 * conjugate gradients on Piziak's parallel-sum formula
 *   Proj_{A cap B} = 2 P_A (P_A + P_B)^+ P_B,
 * (P_A + P_B is W-self-adjoint and positive semidefinite; CG needs about
 * the square root of the iterations of the alternative), or by the
 * alternating projections (P_A P_B)^k r of the paper's Algorithm 2.
 * Both run on (du, dv) scaled by the power of two that brings its largest
 * entry to [1, 2) (the products are linear in it): their squared norms
 * would overflow or underflow at the far ends of the doubles.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util.h"
#include "solver.h"

typedef struct backward {
    const concord_graph *g;
    concord_solver *w;
    double *w_link; /* per link: the metric */
    double *r, *y, *res, *dir, *mdir, *tmp;
} backward;

/* Applies one factor's face derivative to x (and y) on its links. */
static void face(backward *bw, int32_t f, const double *x, const double *y, double *du,
                 double *dv) {
    const concord_graph *g = bw->g;
    concord_solver *w = bw->w;
    const factor *fa = &g->factors[f];
    int32_t b = fa->link_begin;
    factor_face_jvp_variables(fa, w->state[f], w->face[f], g->link_neg + b, w->uf + b,
                              solver_phi(w) + fa->add_begin, bw->w_link + b, x + b,
                              y ? y + fa->add_begin : NULL, du + b, dv ? dv + fa->add_begin : NULL,
                              &w->buf);
}

/* out = P_B x: every factor's projection onto its face's tangent space. */
static void project_faces(backward *bw, const double *x, double *out) {
    for (int32_t f = 0; f < bw->g->n_factors; ++f) face(bw, f, x, NULL, out, NULL);
}

/* out = P_A x: each variable's links take the mean of their values (the
 * links of one variable share one weight, so this is W-orthogonal). */
static void project_consensus(backward *bw, const double *x, double *out) {
    const concord_solver *w = bw->w;
    for (int32_t i = 0; i < bw->g->n_vars; ++i) {
        const int32_t *links = w->var_links + w->var_link_begin[i];
        double sum = 0.0;
        for (int32_t k = 0; k < w->deg[i]; ++k) sum += x[links[k]];
        double mean = sum * w->inv_deg[i];
        for (int32_t k = 0; k < w->deg[i]; ++k) out[links[k]] = mean;
    }
}

static double dot_w(const backward *bw, const double *x, const double *y) {
    double sum = 0.0;
    for (int32_t l = 0; l < bw->g->n_links; ++l) sum += bw->w_link[l] * x[l] * y[l];
    return sum;
}

/* dz = 2 P_A y with (P_A + P_B) y = P_B r, by conjugate gradients. */
static void intersect_cg(backward *bw, const concord_settings *s, concord_backward_info *out) {
    const int32_t n = bw->g->n_links;
    project_faces(bw, bw->r, bw->res); /* b = P_B r; y = 0, residual = b */
    memset(bw->y, 0, (size_t)n * sizeof(double));
    memcpy(bw->dir, bw->res, (size_t)n * sizeof(double));
    /* The residual is relative to r, the size of the answer's scale
     * (|dz| <= |r|), not to b: where b is rounding (r on vertices, whose
     * derivative is 0), CG on that rounding broke down with a curvature of
     * 0 after steps of 1e15 and returned garbage for the 0 it should. */
    const double reference = dot_w(bw, bw->r, bw->r);
    const double target = s->backward_tol * s->backward_tol * reference;
    double rs = dot_w(bw, bw->res, bw->res);
    int32_t it = 0;
    while (rs > target && it < s->backward_max_iter) {
        project_consensus(bw, bw->dir, bw->mdir);
        project_faces(bw, bw->dir, bw->tmp);
        for (int32_t l = 0; l < n; ++l) bw->mdir[l] += bw->tmp[l];
        double curvature = dot_w(bw, bw->dir, bw->mdir);
        if (!(curvature > 0.0)) break;
        double alpha = rs / curvature;
        for (int32_t l = 0; l < n; ++l) {
            bw->y[l] += alpha * bw->dir[l];
            bw->res[l] -= alpha * bw->mdir[l];
        }
        double next = dot_w(bw, bw->res, bw->res);
        for (int32_t l = 0; l < n; ++l) bw->dir[l] = bw->res[l] + next / rs * bw->dir[l];
        rs = next;
        ++it;
    }
    project_consensus(bw, bw->y, bw->tmp);
    for (int32_t l = 0; l < n; ++l) bw->tmp[l] *= 2.0;
    out->iterations = it;
    out->residual = reference > 0.0 ? sqrt(rs / reference) : 0.0;
    out->converged = rs <= target;
}

/* dz = lim (P_A P_B)^k r, the paper's power iteration. */
static void intersect_power(backward *bw, const concord_settings *s,
                            concord_backward_info *out) {
    const int32_t n = bw->g->n_links;
    memcpy(bw->tmp, bw->r, (size_t)n * sizeof(double));
    double scale = sqrt(dot_w(bw, bw->r, bw->r)), change = 0.0;
    int32_t it = 0;
    for (; it < s->backward_max_iter; ++it) {
        project_faces(bw, bw->tmp, bw->y);
        project_consensus(bw, bw->y, bw->res);
        for (int32_t l = 0; l < n; ++l) bw->y[l] = bw->res[l] - bw->tmp[l];
        change = sqrt(dot_w(bw, bw->y, bw->y));
        memcpy(bw->tmp, bw->res, (size_t)n * sizeof(double));
        if (change <= s->backward_tol * scale) {
            ++it;
            out->converged = true;
            break;
        }
    }
    out->iterations = it;
    out->residual = scale > 0.0 ? change / scale : 0.0;
}

/* concord_solver_backward once begun. */
static int run_backward(concord_solver *w, const concord_settings *settings, const double *du,
                        const double *dv, double *dtheta, double *dphi,
                        concord_backward_info *info) {
    double no_variables = 0.0; /* du and dtheta of a graph without variables may be NULL */
    if (w->g->n_vars == 0) {
        if (!du) du = &no_variables;
        if (!dtheta) dtheta = &no_variables;
    }
    if (!du || !dtheta) return solver_fail(w, CONCORD_EINVAL, "backward: du and dtheta are required");
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    concord_settings s;
    if (settings) s = *settings;
    else concord_default_settings(&s);
    char message[128];
    if (concord_check_settings(&s, message, sizeof message))
        return solver_fail(w, CONCORD_EINVAL, "%s", message);
    if (!w->solved || w->mode != MODE_SPARSE)
        return solver_fail(w, CONCORD_EINVAL,
                           "backward needs the state of a forward pass: solve with "
                           "concord_solver_sparse first");
    if (w->sol_factors_solved < w->g->n_factors)
        return solver_fail(w, CONCORD_EINVAL,
                           "backward: the solve stopped before it reached factor %d, whose "
                           "part of the solution is its starting point, not a function of "
                           "the scores (solve again with a larger max_iter or time_limit)",
                           w->sol_factors_solved);
    if (!solver_scores_unchanged(w))
        return solver_fail(w, CONCORD_EINVAL,
                           "backward: the scores changed since the forward pass (solve again)");
    const concord_graph *g = w->g;
    const double du_largest = largest_magnitude(g->n_vars, du),
                 dv_largest = largest_magnitude(dv ? g->n_add : 0, dv);
    if (!(du_largest <= DBL_MAX && dv_largest <= DBL_MAX)) {
        for (int32_t i = 0; i < g->n_vars; ++i)
            if (!isfinite(du[i]))
                return solver_fail(w, CONCORD_EINVAL, "backward: du[%d] is %g (must be finite)",
                                   i, du[i]);
        for (int32_t k = 0; dv && k < g->n_add; ++k)
            if (!isfinite(dv[k]))
                return solver_fail(w, CONCORD_EINVAL, "backward: dv[%d] is %g (must be finite)",
                                   k, dv[k]);
    }
    /* du and dv go in times `up`, a power of two that brings the largest
     * entry into [1, 2) (2^1000 at most, to stay finite), and the products
     * come out times its inverse: both exact */
    const double up = power_of_two_unit(fmax(du_largest, dv_largest)), down = 1.0 / up;
    const size_t nl = (size_t)(g->n_links ? g->n_links : 1);
    backward bw = {g, w, w->backward_memory, w->backward_memory + nl, w->backward_memory + 2 * nl,
                   w->backward_memory + 3 * nl, w->backward_memory + 4 * nl,
                   w->backward_memory + 5 * nl, w->backward_memory + 6 * nl};
    for (int32_t l = 0; l < g->n_links; ++l) bw.w_link[l] = w->reg_share[g->link_var[l]];
    int32_t incomplete_faces = 0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        if (!w->state[f]) continue;
        /* a user factor solved by its own QP: its active set first */
        int rc = g->factors[f].ops->qp ? solver_active_set_at_final_inputs(w, f, w->state[f])
                                       : CONCORD_OK;
        bool complete = true;
        if (!rc) rc = solver_complete_face(w, f, w->state[f], &complete);
        if (rc) return rc;
        incomplete_faces += !complete;
        const int jvp =
            active_set_prepare_jvp(w->state[f], bw.w_link + g->factors[f].link_begin);
        if (jvp == CONCORD_ENOMEM) return solver_fail(w, jvp, "out of memory");
        if (jvp)
            return solver_fail(w, CONCORD_ENUMERIC,
                               "factor %d: its active configurations are degenerate", f);
    }

    /* r = P (du / w) + c, with c the factors' responses to dv (both scaled) */
    if (dv) {
        double *scaled_dv = w->backward_memory + 7 * nl;
        for (int32_t k = 0; k < g->n_add; ++k) scaled_dv[k] = dv[k] * up;
        memset(bw.tmp, 0, nl * sizeof(double));
        for (int32_t f = 0; f < g->n_factors; ++f) face(&bw, f, bw.tmp, scaled_dv, bw.r, NULL);
    } else {
        memset(bw.r, 0, nl * sizeof(double));
    }
    for (int32_t l = 0; l < g->n_links; ++l) {
        const int32_t i = g->link_var[l];
        bw.r[l] += du[i] * up / g->weight[i];
    }

    concord_backward_info out = {0};
    out.incomplete_faces = incomplete_faces;
    if (s.backward_power) intersect_power(&bw, &s, &out);
    else intersect_cg(&bw, &s, &out);
    /* bw.tmp now holds dz, constant over each variable's links */
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (w->deg[i] > 0) {
            dtheta[i] = bw.tmp[w->var_links[w->var_link_begin[i]]] * down;
        } else {
            double u = w->sol_u[i]; /* clip(theta / w): slope 1/w strictly inside */
            dtheta[i] = u > 0.0 && u < 1.0 ? du[i] / g->weight[i] : 0.0;
        }
    }
    if (dphi) {
        for (int32_t f = 0; f < g->n_factors; ++f) {
            const factor *fa = &g->factors[f];
            if (!fa->n_add) continue;
            face(&bw, f, bw.tmp, NULL, bw.y, dphi);
            for (int32_t k = fa->add_begin; k < fa->add_begin + fa->n_add; ++k)
                dphi[k] *= down;
        }
    }
    out.seconds = solver_seconds_since(&start);
    if (info) *info = out;
    const char *forward_stopped = "the forward pass it differentiates stopped before "
                                  "converging: the products are those of its last iterate";
    if (!out.converged)
        return solver_fail(w, CONCORD_ENOTCONVERGED,
                           "backward: %s stopped at %d iterations with relative residual "
                           "%.3g%s%s",
                           s.backward_power ? "the power iteration" : "conjugate gradients",
                           out.iterations, out.residual, w->sol_converged ? "" : "; ",
                           w->sol_converged ? "" : forward_stopped);
    if (!w->sol_converged)
        return solver_fail(w, CONCORD_ENOTCONVERGED, "backward: %s", forward_stopped);
    return CONCORD_OK;
}

int concord_solver_backward(concord_solver *w, const concord_settings *settings,
                            const double *du, const double *dv, double *dtheta, double *dphi,
                            concord_backward_info *info) {
    int rc = solver_begin(w);
    return rc ? rc : solver_end(w, run_backward(w, settings, du, dv, dtheta, dphi, info));
}
