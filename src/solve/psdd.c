/*
 * Projected subgradient dual decomposition (PSDD; Komodakis, Paragios and
 * Tziritas 2007), as the LP decoders tutorial (Martins 2014) presents it:
 * each factor f keeps multipliers lambda_f on its links, with
 * sum_f lambda_{f,i} = 0 for every variable; an iteration solves every
 * factor's MAP under the scores theta_i/deg_i + lambda_{f,i}, averages the
 * factors' copies u_{f,i} into ubar_i, and moves
 *   lambda_{f,i} <- lambda_{f,i} - eta_t (u_{f,i} - ubar_i),
 * the projected subgradient step (the projection onto sum_f lambda_{f,i}
 * = 0 is subtracting the mean, which ubar does). The sum of the factors'
 * MAP values is the dual, an upper bound on LP-MAP for any lambda. The
 * step: eta_t = eta / sqrt(t), or eta / (1 + k) after k rises of the
 * dual, or Polyak's gamma (dual - best value) / |g|^2 (gamma from 1,
 * halved whenever 20 iterations pass without a better bound: the best
 * value so far underestimates the optimum, and the full step then
 * overshoots forever), eta relative to the RMS of the link-level scores.
 * The primal estimate is the average of ubar weighted by the steps, which
 * tends to an LP-MAP solution (the averaged factor copies come to agree).
 * It is claimed as one only when it passes the test of AD3's stopping
 * rule: the averaged copies within tol of their consensus and its value
 * within tol * sum |scores| of the best bound. A bound that stalls before
 * that says nothing of the average: the run ends "stalled", not
 * converged.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util.h"
#include "solver.h"

/* Iterations over which the best bound must improve to go on. */
enum { STALL_WINDOW = 1000 };
/* Iterations without a better bound after which Polyak's factor halves. */
enum { POLYAK_PATIENCE = 20 };

typedef struct psdd_run {
    concord_solver *s;
    const concord_graph *g;
    concord_settings st;
    const double *theta, *phi;
    double scale;
    solver_gap gap;      /* when a value counts as optimal, and the scores' split */
    double *x;           /* a rounded assignment */
    double *best_x;      /* the best rounded assignment */
    double best_value;   /* its value (-INFINITY: none yet) */
    double *avg_u, *avg_v, weight; /* the step-weighted averages */
    double *avg_uf;      /* the step-weighted average of the factor copies */
    double *history;     /* best bound at each of the last STALL_WINDOW iterations */
    double polyak;       /* Polyak's step factor gamma */
    int64_t solves;
    struct timespec start;
} psdd_run;

/* Every factor's MAP under theta/deg + lambda into s->uf and s->v; the
 * dual without the variables in no factor (the dual is *linked +
 * r->gap.free_best) to *linked and the sum of its factor terms' magnitudes
 * to *size. Returns 0 or a user oracle's error (its factor in *failed). */
static int factor_maps(psdd_run *r, double *linked, double *size, int32_t *failed) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    double sum = 0.0, magnitude = 0.0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        for (int32_t j = 0; j < fa->degree; ++j) {
            const int32_t l = fa->link_begin + j, i = g->link_var[l];
            s->a[j] = r->theta[i] * s->inv_deg[i] + s->lambda[l];
        }
        double best;
        int rc = solver_factor_map(s, f, s->a, r->phi + fa->add_begin, s->uf + fa->link_begin,
                                   s->v + fa->add_begin, &best);
        if (rc) {
            *failed = f;
            return rc;
        }
        sum += best;
        if (isfinite(best)) magnitude += fabs(best);
    }
    r->solves += g->n_factors;
    *linked = sum;
    *size = magnitude;
    return 0;
}

/* ubar = the mean of the copies (a variable in no factor at its best);
 * returns the largest disagreement and the squared norm of the
 * subgradient (u_f - ubar over the links) in *norm2. */
static double average(psdd_run *r, double *norm2) {
    concord_solver *s = r->s;
    double largest = 0.0, sq = 0.0;
    for (int32_t i = 0; i < r->g->n_vars; ++i) {
        const int32_t b = s->var_link_begin[i], e = s->var_link_begin[i + 1];
        if (b == e) {
            s->ubar[i] = r->theta[i] > 0.0;
            continue;
        }
        /* copies that agree give their value exactly: sum * (1/deg) of
         * equal copies is not always it (deg 49), and agreement ends the
         * run */
        const double first = s->uf[s->var_links[b]];
        double sum = 0.0;
        bool equal = true;
        for (int32_t q = b; q < e; ++q) {
            sum += s->uf[s->var_links[q]];
            equal &= s->uf[s->var_links[q]] == first;
        }
        const double mean = equal ? first : sum * s->inv_deg[i];
        s->ubar[i] = mean;
        for (int32_t q = b; q < e; ++q) {
            const double gap = s->uf[s->var_links[q]] - mean;
            largest = fmax(largest, fabs(gap));
            sq += gap * gap;
        }
    }
    *norm2 = sq;
    return largest;
}

static void step(psdd_run *r, double eta) {
    concord_solver *s = r->s;
    for (int32_t l = 0; l < r->g->n_links; ++l)
        s->lambda[l] -= eta * (s->uf[l] - s->ubar[r->g->link_var[l]]);
}

/* Adds this iteration's copies, consensus and additional outputs to the
 * averages, weighted by the step eta. */
static void accumulate(psdd_run *r, double eta) {
    const concord_solver *s = r->s;
    for (int32_t l = 0; l < r->g->n_links; ++l) r->avg_uf[l] += eta * s->uf[l];
    for (int32_t i = 0; i < r->g->n_vars; ++i) r->avg_u[i] += eta * s->ubar[i];
    for (int32_t k = 0; k < r->g->n_add; ++k) r->avg_v[k] += eta * s->v[k];
    r->weight += eta;
}

/* The objective at the step-weighted average. */
static double average_value(const psdd_run *r) {
    double value = 0.0;
    for (int32_t i = 0; i < r->g->n_vars; ++i) value += r->theta[i] * r->avg_u[i];
    for (int32_t k = 0; k < r->g->n_add; ++k) value += r->phi[k] * r->avg_v[k];
    return value / r->weight;
}

/* The largest disagreement of the factors' averaged copies with the
 * averaged consensus (the average's primal residual). */
static double average_disagreement(const psdd_run *r) {
    const concord_graph *g = r->g;
    double largest = 0.0;
    for (int32_t l = 0; l < g->n_links; ++l)
        largest = fmax(largest, fabs(r->avg_uf[l] - r->avg_u[g->link_var[l]]));
    return largest / r->weight;
}

/* Whether the step-weighted average solves LP-MAP to the tolerances of
 * AD3's stopping rule: each factor's averaged copy (with its averaged
 * additional outputs, a point of its polytope) within tol of the averaged
 * consensus, and the average's value closing the gap to the best bound
 * (its factors' part, linked_bound). */
static bool average_solves_lp(const psdd_run *r, double linked_bound) {
    return r->weight > 0.0 && average_disagreement(r) <= r->st.tol &&
           solver_gap_closed(&r->gap, linked_bound, average_value(r) - r->gap.free_best);
}

/* Rounds ubar (a multi-variable to its largest state, any other variable
 * at 1/2) and keeps the assignment when it is allowed and the best so
 * far. Returns 0 or a user oracle's error (its factor in *failed). */
static int round_and_offer(psdd_run *r, int32_t *failed) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    for (int32_t i = 0; i < g->n_vars; ++i) r->x[i] = s->ubar[i] >= 0.5;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        int32_t top = 0;
        for (int32_t k = 1; k < mv->num_states; ++k)
            if (s->ubar[mv->first + k] > s->ubar[mv->first + top]) top = k;
        for (int32_t k = 0; k < mv->num_states; ++k) r->x[mv->first + k] = k == top;
    }
    double value;
    const int rc = solver_assignment_value(s, r->theta, r->phi, r->x, &value, failed);
    if (rc) return rc;
    if (value > r->best_value) {
        r->best_value = value;
        memcpy(r->best_x, r->x, (size_t)g->n_vars * sizeof(double));
    }
    return 0;
}

static double step_size(const psdd_run *r, int32_t t, int32_t rises, double dual, double norm2) {
    const double eta = r->st.psdd_eta * r->scale;
    switch (r->st.psdd_step) {
    case CONCORD_STEP_DECREASE: return eta / (1.0 + rises);
    case CONCORD_STEP_POLYAK:
        if (r->best_value > -INFINITY && norm2 > 0.0)
            return r->polyak * (dual - r->best_value) / norm2;
        return eta / sqrt((double)t);
    default: return eta / sqrt((double)t);
    }
}

/* The RMS of the non-zero link-level scores and additional scores, the
 * unit of the steps (1 when all are zero); and the gap rule with the
 * scores' split around the variables in no factor. */
static void scales(psdd_run *r) {
    r->scale = solver_link_scores(r->s, r->theta, r->phi);
    r->gap = solver_gap_rule(r->s, r->theta, r->phi, r->st.tol);
}

/* Multipliers to start from: the last solve's (AD3 or PSDD) with each
 * variable's made to sum to 0, or zeros. */
static void initial_multipliers(psdd_run *r) {
    concord_solver *s = r->s;
    const bool warm = r->st.warm_start && s->mode == MODE_MAP;
    if (warm) solver_warm_multipliers(s, r->scale);
    for (int32_t i = 0; i < r->g->n_vars; ++i) {
        const int32_t b = s->var_link_begin[i], e = s->var_link_begin[i + 1];
        double sum = 0.0;
        for (int32_t q = b; q < e && warm; ++q) sum += s->lambda[s->var_links[q]];
        for (int32_t q = b; q < e; ++q)
            s->lambda[s->var_links[q]] =
                warm ? s->lambda[s->var_links[q]] - sum * s->inv_deg[i] : 0.0;
    }
}

/* concord_solver_psdd once begun. */
static int run_psdd(concord_solver *s, const concord_settings *settings, concord_info *info) {
    int rc;
    psdd_run r = {.s = s, .g = s->g, .best_value = -INFINITY, .polyak = 1.0};
    const int64_t first_call = s->map_calls;
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    if ((rc = solver_settings(s, settings, &r.st))) return rc;
    const concord_graph *g = s->g;
    const size_t nv = (size_t)(g->n_vars ? g->n_vars : 1);
    r.x = malloc(nv * sizeof(double));
    r.best_x = malloc(nv * sizeof(double));
    r.avg_u = calloc(nv, sizeof(double));
    r.avg_v = calloc((size_t)(g->n_add ? g->n_add : 1), sizeof(double));
    r.avg_uf = calloc((size_t)(g->n_links ? g->n_links : 1), sizeof(double));
    r.history = malloc(STALL_WINDOW * sizeof(double));
    if (!r.x || !r.best_x || !r.avg_u || !r.avg_v || !r.avg_uf || !r.history) {
        rc = solver_fail(s, CONCORD_ENOMEM, "out of memory");
        goto done;
    }
    r.theta = solver_theta(s);
    r.phi = solver_phi(s);
    s->solved_own_revision = s->own_scores_revision;
    s->solved_graph_revision = g->scores_revision;
    scales(&r);
    initial_multipliers(&r);
    /* best_linked: the best dual, less r.gap.free_best */
    double best_linked = INFINITY, previous = INFINITY, eta = 0.0, disagreement = 0.0;
    int32_t rises = 0, t, failed = -1, improved_at = 0;
    int status = CONCORD_STATUS_MAX_ITER;
    bool agreed = false;
    for (t = 1; t <= r.st.max_iter; ++t) {
        double linked, size, norm2;
        if ((rc = factor_maps(&r, &linked, &size, &failed))) break;
        const double dual = linked + r.gap.free_best;
        if (linked < best_linked) best_linked = linked, improved_at = t;
        if (t - improved_at >= POLYAK_PATIENCE) r.polyak *= 0.5, improved_at = t;
        if (dual > previous) rises += 1;
        previous = dual;
        disagreement = average(&r, &norm2);
        if (solver_bound_proves_infeasible(linked, r.gap.linked_l1, size)) {
            status = CONCORD_STATUS_INFEASIBLE;
            break;
        }
        agreed = disagreement == 0.0;
        if (agreed || t % r.st.bound_every == 0) {
            if ((rc = round_and_offer(&r, &failed))) break;
            /* Copies that agree on a 0/1 point are every factor's best there,
             * a MAP, which the rounding has just offered. Agreeing on a
             * fractional point (KNAPSACK's vertices) they solve LP-MAP only,
             * and the subgradient, zero, would move nothing any more. */
            if (r.best_value > -INFINITY &&
                ((agreed && all_binary(s->ubar, g->n_vars)) ||
                 solver_gap_closed(&r.gap, best_linked, r.best_value - r.gap.free_best))) {
                status = CONCORD_STATUS_INTEGRAL; /* a certified MAP */
                break;
            }
            if (agreed || average_solves_lp(&r, best_linked)) {
                status = CONCORD_STATUS_FRACTIONAL;
                break;
            }
            if (r.st.progress) {
                concord_progress p = {t,
                                      r.best_value,
                                      best_linked + r.gap.free_best,
                                      disagreement,
                                      0.0,
                                      eta / r.scale,
                                      solver_seconds_since(&r.start),
                                      0,
                                      0};
                if (r.st.progress(r.st.progress_context, &p)) {
                    status = CONCORD_STATUS_INTERRUPTED;
                    break;
                }
            }
        }
        eta = step_size(&r, t, rises, dual, norm2);
        step(&r, eta);
        accumulate(&r, eta);
        /* A step moves the bound by about eta |g|^2 (g the disagreement):
         * when a window of steps this size could not move it by the least
         * progress that counts, its stalling says nothing (psdd_eta far too
         * small). */
        const bool steps_move_bound = STALL_WINDOW * eta * norm2 > r.gap.least_progress;
        int stop = solver_dual_stop(r.history, STALL_WINDOW, t, best_linked, r.gap.least_progress,
                                    steps_move_bound, r.st.time_limit, &r.start);
        if (stop != CONCORD_STATUS_UNSOLVED) {
            if (stop == CONCORD_STATUS_STALLED && average_solves_lp(&r, best_linked))
                stop = CONCORD_STATUS_FRACTIONAL;
            status = stop;
            break;
        }
    }
    if (t > r.st.max_iter) t = r.st.max_iter;
    concord_info out = {0};
    out.iterations = t;
    out.upper_bound = best_linked + r.gap.free_best;
    out.primal_residual = disagreement;
    out.eta = eta / r.scale;
    out.factor_solves = r.solves;
    bool handled;
    /* the message names the bound and floor of the factors alone */
    rc = solver_dual_end(s, rc, failed, status, t, best_linked, -r.gap.linked_l1, &out, &handled);
    if (!handled) {
        if (status == CONCORD_STATUS_INTEGRAL) {
            double value;
            if ((rc = solver_take_assignment(s, r.best_x, &value)) == CONCORD_OK) {
                out.value = value;
                out.integral = true;
            }
        } else {
            /* the step-weighted average; the copies themselves when they
             * agree (an LP-MAP solution) or no step was taken */
            const double w = r.weight > 0.0 && !agreed ? 1.0 / r.weight : 0.0;
            double value = 0.0;
            bool integral = true;
            for (int32_t i = 0; i < g->n_vars; ++i) {
                s->sol_u[i] = clip01(w > 0.0 ? r.avg_u[i] * w : s->ubar[i]); /* as LP-MAP's */
                value += r.theta[i] * s->sol_u[i];
                integral &= s->sol_u[i] == 0.0 || s->sol_u[i] == 1.0;
            }
            for (int32_t f = 0; f < g->n_factors; ++f) {
                const factor *fa = &g->factors[f];
                for (int32_t k = fa->add_begin; k < fa->add_begin + fa->n_add; ++k) {
                    const double mean = w > 0.0 ? r.avg_v[k] * w : s->v[k];
                    s->sol_v[k] = fa->ops->real_additionals ? clip_signed_unit(mean) : clip01(mean);
                    value += r.phi[k] * s->sol_v[k];
                }
            }
            s->solved = true;
            s->sol_integral = false;
            out.value = value;
            out.integral = integral;
            if (w > 0.0) out.primal_residual = average_disagreement(&r);
            if (status != CONCORD_STATUS_FRACTIONAL)
                rc = solver_fail(s, CONCORD_ENOTCONVERGED,
                                 "PSDD stopped (%s) after %d iterations, bound %.9g, best "
                                 "rounded value %.9g",
                                 concord_status_name(status), t, out.upper_bound, r.best_value);
        }
        if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
            s->mode = MODE_MAP; /* decode reads its multipliers */
            s->lambda_scale = r.scale;
        }
    }
    out.oracle_calls = s->map_calls - first_call;
    out.seconds = solver_seconds_since(&r.start);
    if (info) *info = out;
done:
    free(r.x);
    free(r.best_x);
    free(r.avg_u);
    free(r.avg_v);
    free(r.avg_uf);
    free(r.history);
    return rc;
}

int concord_solver_psdd(concord_solver *s, const concord_settings *settings,
                        concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc : solver_end_solve(s, run_psdd(s, settings, info), info);
}
