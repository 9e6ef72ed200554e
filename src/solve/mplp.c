/*
 * MPLP (Globerson and Jaakkola 2007, in its generalized form for factors
 * of any size): block coordinate descent on the dual of the local polytope
 * over units (units.h),
 *   min over lambda of  sum_w max_s b_w(s)
 *                       + sum_f max_x [phi_f . v(x) - sum_{w in f} lambda_fw(x_w)],
 *   b_w(s) = score of unit w's state s + sum_{f touching w} lambda_fw(s).
 * The block of factor f is updated in closed form: with
 * lambda^{-f}_w = b_w - lambda_fw (what the rest of the graph says of w)
 * and mm_w(s) the max-marginal of f's configurations putting w in s under
 * the messages lambda^{-f} of f's other units (maxmarg.c),
 *   lambda_fw(s) <- -lambda^{-f}_w(s) + (mm_w(s) + lambda^{-f}_w(s)) / n_f,
 * n_f the number of f's units; the dual never increases. Over units whose
 * factors never switch on two of their states, this dual is that of the
 * local polytope of the binary variables (a solution of one is a solution
 * of the other), so the bound is an LP-MAP bound. The assignment of
 * largest beliefs is decoded after every sweep.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maxmarg.h"
#include "solver.h"
#include "units.h"

/* Sweeps over which the bound must decrease to go on. */
enum { STALL_WINDOW = 10 };

typedef struct mplp_run {
    concord_solver *s;
    const concord_graph *g;
    const units *un;
    concord_settings st;
    const double *theta, *phi;
    maxmarg mm;
    int32_t *msg_begin; /* per incidence (and per unit for beliefs: belief_begin) */
    int32_t *belief_begin;
    double *lambda;     /* per incidence and state */
    double *others;     /* per incidence and state: lambda^{-f} (or -lambda) */
    double *belief;     /* per unit and state */
    double *mm_out;     /* one unit's max-marginals */
    double *next;       /* one factor's new messages, per incidence and state */
    double *x, *best_x;
    double best_value;
    solver_gap gap; /* when an assignment counts as a MAP, and the scores' split */
    int64_t solves;
    struct timespec start;
    solver_deadline deadline; /* the time limit, read within sweeps */
} mplp_run;

static double unit_score(const mplp_run *r, int32_t w, int32_t t) {
    if (r->un->multi[w]) return r->theta[r->un->first[w] + t];
    return t ? r->theta[r->un->first[w]] : 0.0;
}

/* A - B where both may be -INFINITY (then 0: the state is impossible
 * either way). */
static double minus(double a, double b) { return a == -INFINITY && b == -INFINITY ? 0.0 : a - b; }

/* The update of factor f's block: its messages are all computed, then
 * taken, unless the deadline passes in between (the block then stays as it
 * was, and every message and belief consistent). Returns 0 or a user
 * oracle's error. */
static int update_factor(mplp_run *r, int32_t f) {
    const units *un = r->un;
    const int32_t first = un->inc_begin[f], last = un->inc_begin[f + 1], n = last - first;
    if (n == 0) return 0;
    const int32_t degree = r->g->factors[f].degree, msg_first = r->msg_begin[first];
    for (int32_t k = first; k < last; ++k) {
        const int32_t w = un->inc_unit[k];
        const double *b = r->belief + r->belief_begin[w], *lam = r->lambda + r->msg_begin[k];
        double *o = r->others + r->msg_begin[k];
        for (int32_t t = 0; t < un->states[w]; ++t) o[t] = minus(b[t], lam[t]);
    }
    for (int32_t k = first; k < last; ++k) {
        if (solver_deadline_passed(&r->deadline, degree)) return 0;
        int rc = maxmarg_message(&r->mm, f, k, r->others, r->mm_out);
        if (rc) return rc;
        const int32_t w = un->inc_unit[k];
        double *next = r->next + (r->msg_begin[k] - msg_first);
        const double *o = r->others + r->msg_begin[k];
        for (int32_t t = 0; t < un->states[w]; ++t) {
            const double through = r->mm_out[t] + o[t];
            next[t] = o[t] == -INFINITY ? 0.0 : -o[t] + through / n;
        }
    }
    for (int32_t k = first; k < last; ++k) {
        const int32_t w = un->inc_unit[k];
        double *b = r->belief + r->belief_begin[w], *lam = r->lambda + r->msg_begin[k];
        const double *next = r->next + (r->msg_begin[k] - msg_first),
                     *o = r->others + r->msg_begin[k];
        for (int32_t t = 0; t < un->states[w]; ++t) {
            lam[t] = next[t];
            b[t] = o[t] + lam[t];
        }
    }
    r->solves += 1;
    return 0;
}

/* The dual without the variables in no factor (the dual is *linked +
 * r->gap.free_best): every other unit's best belief plus every factor's
 * best reparametrized score, and the sum of those terms' magnitudes in *size.
 * Returns 0 or a user oracle's error (its factor in *failed). */
static int dual_value(mplp_run *r, double *linked, double *size, int32_t *failed) {
    const units *un = r->un;
    double sum = 0.0, magnitude = 0.0;
    for (int32_t w = 0; w < un->n_units; ++w) {
        if (r->s->deg[un->first[w]] == 0) continue; /* its best is in r->gap.free_best */
        const double *b = r->belief + r->belief_begin[w];
        double top = -INFINITY;
        for (int32_t t = 0; t < un->states[w]; ++t) top = fmax(top, b[t]);
        sum += top;
        if (isfinite(top)) magnitude += fabs(top);
    }
    /* a state no belief allows is out of every factor's reach (else its
     * -inf multiplier would count as +inf there) */
    for (int32_t k = 0; k < un->n_inc; ++k) {
        const int32_t w = un->inc_unit[k];
        const double *b = r->belief + r->belief_begin[w], *lam = r->lambda + r->msg_begin[k];
        double *o = r->others + r->msg_begin[k];
        for (int32_t t = 0; t < un->states[w]; ++t) o[t] = b[t] == -INFINITY ? -INFINITY : -lam[t];
    }
    for (int32_t f = 0; f < r->g->n_factors; ++f) {
        if (un->own[f] >= 0) continue;
        double best;
        int rc = maxmarg_decide(&r->mm, f, -1, 0, r->others, &best);
        if (rc) {
            *failed = f;
            return rc;
        }
        sum += best;
        if (isfinite(best)) magnitude += fabs(best);
    }
    *linked = sum;
    *size = magnitude;
    return 0;
}

/* The assignment of largest beliefs into r->x; when every factor allows
 * it and it beats the best so far, it becomes the best. Returns 0 or a
 * user oracle's error (its factor in *failed). */
static int decode_beliefs(mplp_run *r, int32_t *failed) {
    const units *un = r->un;
    for (int32_t w = 0; w < un->n_units; ++w) {
        const double *b = r->belief + r->belief_begin[w];
        int32_t top = 0;
        for (int32_t t = 1; t < un->states[w]; ++t)
            if (b[t] > b[top]) top = t;
        units_set_state(un, w, top, r->x);
    }
    double value;
    const int rc = solver_assignment_value(r->s, r->theta, r->phi, r->x, &value, failed);
    if (rc) return rc;
    if (value > r->best_value) {
        r->best_value = value;
        memcpy(r->best_x, r->x, (size_t)r->g->n_vars * sizeof(double));
    }
    return 0;
}

/* Per-link multipliers for decoding (concord_solver_decode completes
 * factors under theta_i/deg_i + lambda_l): factor f's share of unit w's
 * beliefs, b_w / n_w - lambda_fw (n_w: w's factors), which sum over w's
 * factors to its scores; a binary unit's link takes the difference of its
 * two states, a multi-variable's state link its state's share, and a
 * unit's own XOR nothing. */
static void link_multipliers(mplp_run *r) {
    concord_solver *s = r->s;
    const units *un = r->un;
    const concord_graph *g = r->g;
    for (int32_t l = 0; l < g->n_links; ++l) {
        const int32_t i = g->link_var[l];
        s->lambda[l] = -r->theta[i] * s->inv_deg[i];
    }
    for (int32_t k = 0; k < un->n_inc; ++k) {
        const int32_t f = un->inc_factor[k], w = un->inc_unit[k];
        const double n_w = (double)(un->unit_inc_begin[w + 1] - un->unit_inc_begin[w]);
        const double *b = r->belief + r->belief_begin[w], *lam = r->lambda + r->msg_begin[k];
        const int32_t begin = g->factors[f].link_begin;
        for (int32_t q = un->inc_link_begin[k]; q < un->inc_link_begin[k + 1]; ++q) {
            const int32_t l = begin + un->inc_link[q], i = g->link_var[l];
            double share;
            if (un->multi[w]) share = minus(b[i - un->first[w]] / n_w, lam[i - un->first[w]]);
            else share = minus(b[1] / n_w, lam[1]) - minus(b[0] / n_w, lam[0]);
            if (isfinite(share)) s->lambda[l] += share;
        }
    }
}

static void *zalloc(size_t n, size_t size, bool *failed) {
    void *q = calloc(n ? n : 1, size);
    if (!q) *failed = true;
    return q;
}

static void run_free(mplp_run *r) {
    maxmarg_free(&r->mm);
    free(r->msg_begin);
    free(r->belief_begin);
    free(r->lambda);
    free(r->others);
    free(r->belief);
    free(r->mm_out);
    free(r->next);
    free(r->x);
    free(r->best_x);
}

/* The run's memory and the messages at zero. */
static int prepare(mplp_run *r) {
    const units *un = r->un;
    bool failed = false;
    size_t n_msg = 0, n_belief = 0, factor_msg = 0;
    for (int32_t f = 0; f < r->g->n_factors; ++f) {
        size_t msg = 0;
        for (int32_t k = un->inc_begin[f]; k < un->inc_begin[f + 1]; ++k)
            msg += (size_t)un->states[un->inc_unit[k]];
        n_msg += msg;
        if (msg > factor_msg) factor_msg = msg;
    }
    for (int32_t w = 0; w < un->n_units; ++w) n_belief += (size_t)un->states[w];
    r->msg_begin = zalloc((size_t)un->n_inc + 1, sizeof(int32_t), &failed);
    r->belief_begin = zalloc((size_t)un->n_units + 1, sizeof(int32_t), &failed);
    r->lambda = zalloc(n_msg, sizeof(double), &failed);
    r->others = zalloc(n_msg, sizeof(double), &failed);
    r->belief = zalloc(n_belief, sizeof(double), &failed);
    r->mm_out = zalloc((size_t)un->max_states, sizeof(double), &failed);
    r->next = zalloc(factor_msg, sizeof(double), &failed);
    r->x = zalloc((size_t)r->g->n_vars, sizeof(double), &failed);
    r->best_x = zalloc((size_t)r->g->n_vars, sizeof(double), &failed);
    if (failed || maxmarg_init(&r->mm, r->s, r->msg_begin)) return CONCORD_ENOMEM;
    r->mm.phi = r->phi;
    int32_t offset = 0;
    for (int32_t k = 0; k < un->n_inc; ++k) {
        r->msg_begin[k] = offset;
        offset += un->states[un->inc_unit[k]];
    }
    r->msg_begin[un->n_inc] = offset;
    offset = 0;
    for (int32_t w = 0; w < un->n_units; ++w) {
        r->belief_begin[w] = offset;
        for (int32_t t = 0; t < un->states[w]; ++t) r->belief[offset + t] = unit_score(r, w, t);
        offset += un->states[w];
    }
    r->belief_begin[un->n_units] = offset;
    return CONCORD_OK;
}

/* MPLP needs every factor's max-marginals from its oracle, linearly. */
static int check_graph(mplp_run *r) {
    const units *un = r->un;
    for (int32_t k = 0; k < un->n_inc; ++k) {
        if (!r->mm.enumerated[k]) continue;
        const int32_t f = un->inc_factor[k];
        const factor *fa = &r->g->factors[f];
        return solver_fail(r->s, CONCORD_EINVAL,
                           fa->ops->fractional_vertices
                               ? "MPLP: factor %d (%s) has fractional vertices"
                               : "MPLP: factor %d (%s) may switch on two states of one "
                                 "multi-variable",
                           f, fa->ops->name);
    }
    return CONCORD_OK;
}

/* A stop short of a certificate, the solver holding the best assignment
 * (value *value) and the multipliers: concord's decoder, a local search
 * from that assignment and from sequential fixing, may find a better one
 * whose value meets the bound. Rounding the beliefs unit by unit misses it
 * where beliefs tie (two states of equal belief: it takes the first, in
 * every unit alike): two variables that must differ, tied in both states,
 * stalled at value 0 under a bound of log 2. */
static int decode_to_bound(mplp_run *r, double linked_bound, int *status, double *value) {
    concord_decoding decoded;
    int rc = solver_decode(r->s, &r->deadline, true, &decoded);
    if (rc || decoded.violated > 0 || !(decoded.value > *value)) return rc;
    memcpy(r->x, r->s->decoded, (size_t)r->g->n_vars * sizeof(double));
    rc = solver_take_assignment(r->s, r->x, value);
    if (!rc && solver_gap_closed(&r->gap, linked_bound, *value - r->gap.free_best))
        *status = CONCORD_STATUS_INTEGRAL;
    return rc;
}

/* concord_solver_mplp once begun. */
static int run_mplp(concord_solver *s, const concord_settings *settings, concord_info *info) {
    int rc;
    mplp_run r = {.s = s, .g = s->g, .best_value = -INFINITY};
    const int64_t first_call = s->map_calls;
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    if ((rc = solver_settings(s, settings, &r.st))) return rc;
    r.deadline = (solver_deadline){.start = &r.start, .limit = r.st.time_limit};
    if ((rc = units_build(s)) || (rc = units_classify(s))) return rc;
    r.un = s->units;
    r.theta = solver_theta(s);
    r.phi = solver_phi(s);
    if ((rc = prepare(&r)) || (rc = check_graph(&r))) {
        run_free(&r);
        return rc == CONCORD_ENOMEM ? solver_fail(s, rc, "out of memory") : rc;
    }
    const concord_graph *g = s->g;
    r.gap = solver_gap_rule(s, r.theta, r.phi, r.st.tol);
    s->solved_own_revision = s->own_scores_revision;
    s->solved_graph_revision = g->scores_revision;
    double history[STALL_WINDOW], best_linked = INFINITY; /* the best dual, less r.gap.free_best */
    int status = CONCORD_STATUS_MAX_ITER;
    int32_t t, failed = -1;
    for (t = 1; t <= r.st.max_iter; ++t) {
        for (int32_t f = 0; f < g->n_factors && !rc && !r.deadline.passed; ++f)
            if (r.un->own[f] < 0 && (rc = update_factor(&r, f))) failed = f;
        double linked, size;
        if (rc || (rc = dual_value(&r, &linked, &size, &failed)) ||
            (rc = decode_beliefs(&r, &failed)))
            break;
        best_linked = fmin(best_linked, linked);
        if (solver_bound_proves_infeasible(linked, r.gap.linked_l1, size)) {
            status = CONCORD_STATUS_INFEASIBLE;
            break;
        }
        if (solver_gap_closed(&r.gap, best_linked, r.best_value - r.gap.free_best)) {
            status = CONCORD_STATUS_INTEGRAL;
            break;
        }
        if (r.deadline.passed) { /* within the sweep */
            status = CONCORD_STATUS_TIME_LIMIT;
            break;
        }
        if (r.st.progress) {
            concord_progress p = {t,   r.best_value, best_linked + r.gap.free_best, 0.0, 0.0,
                                  0.0, solver_seconds_since(&r.start), 0, 0};
            if (r.st.progress(r.st.progress_context, &p)) {
                status = CONCORD_STATUS_INTERRUPTED;
                break;
            }
        }
        const int stop = solver_dual_stop(history, STALL_WINDOW, t, best_linked,
                                          r.gap.least_progress, true,
                                          r.st.time_limit, &r.start);
        if (stop != CONCORD_STATUS_UNSOLVED) {
            status = stop;
            break;
        }
    }
    if (t > r.st.max_iter) t = r.st.max_iter;
    concord_info out = {0};
    out.iterations = t;
    out.upper_bound = best_linked + r.gap.free_best;
    out.factor_solves = r.solves;
    bool handled;
    /* the message names the bound and floor of the factors alone */
    rc = solver_dual_end(s, rc, failed, status, t, best_linked, -r.gap.linked_l1, &out, &handled);
    if (!handled) {
        const bool found = r.best_value > -INFINITY;
        double value = -INFINITY;
        rc = solver_take_assignment(s, found ? r.best_x : r.x, &value);
        if (!rc) {
            /* the solution stands even when some factor disallows it */
            s->solved = true;
            s->sol_integral = false; /* until certified below (the decoder reads it) */
            link_multipliers(&r);
            s->lambda_scale = solver_link_scores(s, r.theta, r.phi);
            memcpy(s->ubar, s->sol_u, (size_t)g->n_vars * sizeof(double));
            s->mode = MODE_MAP;
            if (status == CONCORD_STATUS_STALLED || status == CONCORD_STATUS_MAX_ITER)
                rc = decode_to_bound(&r, best_linked, &status, &value);
            s->sol_integral = status == CONCORD_STATUS_INTEGRAL;
            out.status = status;
            out.value = value;
            out.integral = true;
            if (!rc && status != CONCORD_STATUS_INTEGRAL)
                rc = solver_fail(s, CONCORD_ENOTCONVERGED,
                                 "MPLP stopped (%s) after %d iterations, bound %.9g, best "
                                 "value %.9g",
                                 concord_status_name(status), t, out.upper_bound, value);
        }
    }
    out.oracle_calls = s->map_calls - first_call;
    out.seconds = solver_seconds_since(&r.start);
    if (info) *info = out;
    run_free(&r);
    return rc;
}

int concord_solver_mplp(concord_solver *s, const concord_settings *settings,
                        concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc : solver_end_solve(s, run_mplp(s, settings, info), info);
}
