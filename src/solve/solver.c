/*
 * Creating and freeing solvers, their scores, results and messages, and
 * evaluating factors at integral points (see solver.h).
 */
#include "solver.h"

#include "acyclic.h"
#include "units.h"
#include "../util.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The acceleration memory a solver is created with: the default setting,
 * so that a solve with default settings allocates nothing. */
enum { DEFAULT_ACCELERATION = 8 };

/* The solvers made so far: each gets the next number (solver.serial). */
static atomic_uint_fast64_t solvers_made;

int solver_fail(concord_solver *s, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
    return code;
}

int solver_callback_failed(concord_solver *s, int32_t f, int code) {
    const factor *fa = &s->g->factors[f];
    s->callback_code = code == FACTOR_INVALID_OUTPUT ? 0 : code;
    if (code == FACTOR_INVALID_OUTPUT)
        return solver_fail(s, CONCORD_ECALLBACK,
                           "factor %d (%s): its callback wrote an invalid configuration (an "
                           "oracle's variable values must be 0 or 1, a QP's within [0, "
                           "1], additional values within [-1, 1])",
                           f, fa->ops->name);
    return solver_fail(s, CONCORD_ECALLBACK, "factor %d (%s): its callback returned error %d",
                       f, fa->ops->name, code);
}

/* The calling thread, as a token: the address of a variable of its own. */
static _Thread_local char this_thread;
static uintptr_t thread_token(void) { return (uintptr_t)&this_thread; }

/* The solver the calling thread solves for a batch, if any. */
static _Thread_local const concord_solver *batch_solve;

const concord_solver *solver_set_batch_solve(const concord_solver *s) {
    const concord_solver *before = batch_solve;
    batch_solve = s;
    return before;
}

bool solver_held_elsewhere(const concord_solver *s) {
    return (atomic_load(&s->in_batch) && batch_solve != s) ||
           (atomic_load(&s->busy) && atomic_load(&s->owner) != thread_token());
}

/* A call refused because another thread's call or a batch holds its
 * solver cannot write the solver's message, which that call owns: the
 * refusing thread keeps it (by the solver's serial number: an address may
 * be reused), and reads it as the solver's last error until its next call
 * on that solver is admitted. A callback's refused call on its own solver
 * writes the message as any failure does: its thread owns the call. */
enum { REFUSED_BUSY = 1, REFUSED_IN_BATCH };
static _Thread_local uint64_t refused_serial; /* 0: none */
static _Thread_local int refused_why;

static const char SOLVER_BUSY[] =
    "the solver is inside another call: a callback cannot call its own solver, nor another "
    "thread a solver in use";
static const char SOLVER_IN_BATCH[] =
    "the solver is held by a running batch: only the batch's solve of it may call it";

static int refuse_elsewhere(const concord_solver *s, int why) {
    refused_serial = s->serial;
    refused_why = why;
    return CONCORD_EINVAL;
}

const char *concord_solver_last_error(const concord_solver *s) {
    if (!s) return "";
    if (s->serial == refused_serial) return refused_why == REFUSED_BUSY ? SOLVER_BUSY
                                                                         : SOLVER_IN_BATCH;
    /* another thread's call may be writing the message */
    if (solver_held_elsewhere(s)) return atomic_load(&s->in_batch) ? SOLVER_IN_BATCH : SOLVER_BUSY;
    return s->error;
}

void solver_forget_refusal(const concord_solver *s) {
    if (refused_serial == s->serial) refused_serial = 0;
}

int concord_solver_callback_code(const concord_solver *s) {
    return s && !solver_held_elsewhere(s) ? s->callback_code : 0;
}

const concord_graph *concord_solver_graph(const concord_solver *s) { return s ? s->g : NULL; }

int solver_refuse_if_busy(concord_solver *s) {
    if (!atomic_load(&s->busy)) return CONCORD_OK;
    if (atomic_load(&s->owner) == thread_token())
        return solver_fail(s, CONCORD_EINVAL, "%s", SOLVER_BUSY);
    return refuse_elsewhere(s, REFUSED_BUSY);
}

/* CONCORD_OK when a call on s may begin: no batch holds it but for this
 * thread's solve of it, and no call runs on it. */
static int admit(concord_solver *s) {
    if (atomic_load(&s->in_batch) && batch_solve != s)
        return refuse_elsewhere(s, REFUSED_IN_BATCH);
    return solver_refuse_if_busy(s);
}

/* What solver_begin does once the solver is admitted and taken. */
static int enter_admitted(concord_solver *s) {
    solver_forget_refusal(s);
    s->error[0] = '\0';
    s->callback_code = 0;
    if (!solver_is_current(s))
        return solver_fail(s, CONCORD_EINVAL,
                           "the graph's structure changed since this solver was created "
                           "(create a new solver)");
    return CONCORD_OK;
}

/* The graph is const to its solvers: the counter of busy solvers is the
 * one field they write, atomically (solvers of one graph run on threads). */
static atomic_int *solving_counter(const concord_solver *s) {
    return (atomic_int *)&s->g->solving;
}

int solver_begin(concord_solver *s) {
    if (!s) return CONCORD_EINVAL;
    int rc = admit(s);
    if (rc) return rc;
    /* of two threads admitted at once (one solver used from two threads),
     * one begins; the other writes nothing */
    if (atomic_exchange(&s->busy, true)) return refuse_elsewhere(s, REFUSED_BUSY);
    atomic_store(&s->owner, thread_token());
    rc = enter_admitted(s);
    if (rc) {
        atomic_store(&s->owner, 0);
        atomic_store(&s->busy, false);
        return rc;
    }
    atomic_fetch_add(solving_counter(s), 1);
    return CONCORD_OK;
}

int solver_begin_solve(concord_solver *s, concord_info *info) {
    if (info) *info = (concord_info){.status = CONCORD_STATUS_UNSOLVED};
    return solver_begin(s);
}

int solver_end(concord_solver *s, int rc) {
    atomic_fetch_sub(solving_counter(s), 1);
    /* a callback's refused call on this solver left its message here */
    if (rc == CONCORD_OK) s->error[0] = '\0';
    atomic_store(&s->owner, 0);
    atomic_store(&s->busy, false);
    return rc;
}

int solver_end_solve(concord_solver *s, int rc, concord_info *info) {
    if (rc == CONCORD_ECALLBACK) {
        /* a failure during the solve proper did this already, and wrote *info */
        if (info) info->status = CONCORD_STATUS_CALLBACK_FAILED;
        s->mode = MODE_NONE;
        s->solved = false;
        s->sol_from_admm = false;
        s->have_decoded = false;
        solver_distribution_clear(s);
    }
    return solver_end(s, rc);
}

bool solver_scores_unchanged(const concord_solver *s) {
    return s->solved_own_revision == s->own_scores_revision &&
           ((s->has_theta && s->has_phi) || s->solved_graph_revision == s->g->scores_revision);
}

void solver_distribution_clear(concord_solver *s) {
    free(s->dist.weight);
    free(s->dist.u);
    free(s->dist.v);
    s->dist = (distribution){.factor = -1};
}

void concord_solver_free(concord_solver *s) {
    if (!s) return;
    free(s->deg);
    free(s->inv_deg);
    free(s->reg_share);
    free(s->var_link_begin);
    free(s->var_links);
    free(s->link_factor);
    free(s->own_theta);
    free(s->own_phi);
    free(s->lambda);
    free(s->uf);
    free(s->ubar);
    free(s->v);
    free(s->dirty);
    free(s->v_pending);
    free(s->active);
    free(s->a_solved);
    free(s->link_score);
    free(s->slot_state);
    free(s->face);
    free(s->bound_input);
    free(s->bound_term);
    for (int32_t f = 0; s->state && f < s->n_factors; ++f) active_set_free(s->state[f]);
    free(s->state);
    anderson_free(s->aa);
    free(s->a);
    free(s->d);
    free(s->u);
    free(s->vmap);
    free(s->held);
    free(s->held_a);
    free(s->buf.lit_a);
    free(s->buf.lit_u);
    free(s->buf.oracle_a);
    free(s->buf.oracle_u);
    free(s->buf.oracle_v);
    free(s->buf.scratch);
    free(s->round_u);
    free(s->round_v);
    free(s->theta_work);
    free(s->sol_u);
    free(s->sol_v);
    free(s->decoded);
    solver_distribution_clear(s);
    free(s->backward_memory);
    units_free(s->units);
    free(s->clamp);
    free(s->factor_clamps);
    acyclic_free(s->acyclic);
    free(s);
}

static void *alloc_array(size_t n, size_t size, bool *failed) {
    void *p = calloc(n ? n : 1, size);
    if (!p) *failed = true;
    return p;
}

/* Degrees, and the links grouped by variable (a counting sort). */
static void build_layout(concord_solver *s) {
    const concord_graph *g = s->g;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        for (int32_t l = fa->link_begin; l < fa->link_begin + fa->degree; ++l) {
            s->link_factor[l] = f;
            s->deg[g->link_var[l]] += 1;
        }
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        s->var_link_begin[i + 1] = s->var_link_begin[i] + s->deg[i];
        s->inv_deg[i] = s->deg[i] ? 1.0 / s->deg[i] : 0.0;
        s->reg_share[i] = g->weight[i] * s->inv_deg[i];
    }
    for (int32_t i = 0; i < g->n_vars; ++i) s->deg[i] = 0; /* a running cursor */
    for (int32_t l = 0; l < g->n_links; ++l) {
        int32_t i = g->link_var[l];
        s->var_links[s->var_link_begin[i] + s->deg[i]++] = l;
    }
}

int concord_solver_new(const concord_graph *g, concord_solver **out) {
    if (!out) return CONCORD_EINVAL;
    *out = NULL;
    if (!g) return CONCORD_EINVAL;
    concord_solver *s = calloc(1, sizeof *s);
    if (!s) return CONCORD_ENOMEM;
    s->g = g;
    s->structure_revision = g->structure_revision;
    s->n_factors = g->n_factors;
    s->dist.factor = -1;
    s->serial = atomic_fetch_add(&solvers_made, 1) + 1;
    atomic_init(&s->in_batch, false);
    atomic_init(&s->busy, false);
    atomic_init(&s->owner, 0);
    bool failed = false;
    const size_t nv = (size_t)g->n_vars, nl = (size_t)g->n_links, nf = (size_t)g->n_factors,
                 na = (size_t)g->n_add;
    s->deg = alloc_array(nv, sizeof(int32_t), &failed);
    s->inv_deg = alloc_array(nv, sizeof(double), &failed);
    s->reg_share = alloc_array(nv, sizeof(double), &failed);
    s->var_link_begin = alloc_array(nv + 1, sizeof(int32_t), &failed);
    s->var_links = alloc_array(nl, sizeof(int32_t), &failed);
    s->link_factor = alloc_array(nl, sizeof(int32_t), &failed);
    s->own_theta = alloc_array(nv, sizeof(double), &failed);
    s->own_phi = alloc_array(na, sizeof(double), &failed);
    s->lambda = alloc_array(nl, sizeof(double), &failed);
    s->uf = alloc_array(nl, sizeof(double), &failed);
    s->ubar = alloc_array(nv, sizeof(double), &failed);
    s->v = alloc_array(na, sizeof(double), &failed);
    s->dirty = alloc_array(nf, sizeof(bool), &failed);
    s->v_pending = alloc_array(nf, sizeof(bool), &failed);
    s->active = alloc_array(nv, sizeof(bool), &failed);
    s->a_solved = alloc_array(nl, sizeof(double), &failed);
    s->link_score = alloc_array(nl, sizeof(double), &failed);
    s->slot_state = alloc_array(nl, sizeof(double), &failed);
    s->face = alloc_array(nf, sizeof(int32_t), &failed);
    s->bound_input = alloc_array(nl, sizeof(double), &failed);
    s->bound_term = alloc_array(nf, sizeof(double), &failed);
    s->round_u = alloc_array(nv, sizeof(double), &failed);
    s->round_v = alloc_array(na, sizeof(double), &failed);
    s->theta_work = alloc_array(nv, sizeof(double), &failed);
    s->sol_u = alloc_array(nv, sizeof(double), &failed);
    s->sol_v = alloc_array(na, sizeof(double), &failed);
    s->decoded = alloc_array(nv, sizeof(double), &failed);
    s->backward_memory = alloc_array(7 * (nl ? nl : 1) + na, sizeof(double), &failed);
    int32_t max_degree = 1, max_add = 1;
    size_t max_scratch = 1;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        if (fa->degree > max_degree) max_degree = fa->degree;
        if (fa->n_add > max_add) max_add = fa->n_add;
        size_t bytes = factor_scratch_bytes(fa);
        if (bytes > max_scratch) max_scratch = bytes;
        s->has_callbacks |= fa->ops->failure != NULL;
    }
    s->max_degree = max_degree;
    s->a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->d = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->vmap = alloc_array((size_t)max_add, sizeof(double), &failed);
    s->held = alloc_array((size_t)max_degree, sizeof(int8_t), &failed);
    s->held_a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->buf.lit_a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->buf.lit_u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->buf.oracle_a = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->buf.oracle_u = alloc_array((size_t)max_degree, sizeof(double), &failed);
    s->buf.oracle_v = alloc_array((size_t)max_add, sizeof(double), &failed);
    s->buf.scratch = alloc_array(max_scratch, 1, &failed);
    s->state = alloc_array(nf, sizeof(active_set *), &failed);
    for (int32_t f = 0; !failed && f < g->n_factors; ++f)
        if (factor_needs_active_set(&g->factors[f]) &&
            !(s->state[f] = active_set_new(&g->factors[f])))
            failed = true;
    if (!failed) {
        build_layout(s);
        if (anderson_worthwhile(g->n_links) &&
            !(s->aa = anderson_new(g->n_vars, s->var_link_begin, DEFAULT_ACCELERATION)))
            failed = true;
    }
    if (failed) {
        concord_solver_free(s);
        return CONCORD_ENOMEM;
    }
    *out = s;
    return CONCORD_OK;
}

static int set_scores(concord_solver *s, const double *variable_scores,
                      const double *additional_scores) {
    const concord_graph *g = s->g;
    /* Both are checked before either is taken: on error nothing changes. */
    for (int32_t i = 0; variable_scores && i < g->n_vars; ++i)
        if (!score_in_range(variable_scores[i]))
            return solver_fail(s, CONCORD_EINVAL, "variable score %d (%g) %s", i,
                               variable_scores[i], score_problem(variable_scores[i]));
    const int32_t refused =
        additional_scores ? graph_take_additional_scores(g, 0, g->n_add, additional_scores,
                                                         s->own_phi)
                          : -1;
    if (refused >= 0)
        return solver_fail(s, CONCORD_EINVAL, "additional score %d (%g) %s", refused,
                           additional_scores[refused],
                           additional_score_problem(additional_scores[refused]));
    if (variable_scores && g->n_vars > 0)
        memcpy(s->own_theta, variable_scores, (size_t)g->n_vars * sizeof(double));
    s->has_theta = variable_scores != NULL;
    s->has_phi = additional_scores != NULL;
    s->own_scores_revision += 1;
    return CONCORD_OK;
}

int concord_solver_set_scores(concord_solver *s, const double *variable_scores,
                              const double *additional_scores) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, set_scores(s, variable_scores, additional_scores));
}

bool solver_is_current(const concord_solver *s) {
    return s && s->structure_revision == s->g->structure_revision;
}

bool solver_readable(const concord_solver *s) {
    return solver_is_current(s) && !solver_held_elsewhere(s);
}

const double *concord_solver_variable_scores(const concord_solver *s) {
    return solver_readable(s) ? solver_theta(s) : NULL;
}
const double *concord_solver_additional_scores(const concord_solver *s) {
    return solver_readable(s) ? solver_phi(s) : NULL;
}

const double *concord_solver_variables(const concord_solver *s) {
    return solver_readable(s) && s->solved ? s->sol_u : NULL;
}
const double *concord_solver_additionals(const concord_solver *s) {
    return solver_readable(s) && s->solved ? s->sol_v : NULL;
}

static int copy_links(concord_solver *s, double *multipliers, double *copies) {
    if (!s->solved || s->mode == MODE_NONE)
        return solver_fail(s, CONCORD_EINVAL, "no solution: solve first");
    const size_t n = (size_t)s->g->n_links * sizeof(double);
    if (multipliers && n) memcpy(multipliers, s->lambda, n);
    if (copies && n) memcpy(copies, s->uf, n);
    return CONCORD_OK;
}

int concord_solver_links(concord_solver *s, double *multipliers, double *copies) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, copy_links(s, multipliers, copies));
}

/* How often a held link's push grows (by HOLD_GROWTH) on a polytope with
 * fractional vertices before the face counts as empty. */
enum { MAX_PUSHES = 12 };
#define HOLD_GROWTH 16.0

int solver_factor_map_held(concord_solver *s, int32_t f, const double *a, const int8_t *held,
                           const double *b, double *u, double *v, double *score) {
    const factor *fa = &s->g->factors[f];
    *score = -INFINITY;
    double others = 0.0;
    for (int32_t j = 0; j < fa->degree; ++j)
        if (held[j] < 0) others += fabs(a[j]);
    for (int32_t k = 0; k < fa->n_add; ++k) others += fabs(b[k]);
    double push = outweighing(others);
    const int32_t attempts = fa->ops->fractional_vertices ? MAX_PUSHES : 1;
    for (int32_t attempt = 0; attempt < attempts; ++attempt, push *= HOLD_GROWTH) {
        for (int32_t j = 0; j < fa->degree; ++j)
            s->held_a[j] = held[j] < 0 ? a[j] : held[j] ? push : -push;
        double best;
        int rc = solver_factor_map(s, f, s->held_a, b, u, v, &best);
        if (rc) return rc;
        bool on_face = true;
        for (int32_t j = 0; j < fa->degree; ++j)
            if (held[j] >= 0 && u[j] != (double)held[j]) on_face = false;
        if (!on_face) continue;
        /* the score without the pushes, summed afresh */
        double sum = 0.0;
        for (int32_t j = 0; j < fa->degree; ++j) sum += a[j] * u[j];
        for (int32_t k = 0; k < fa->n_add; ++k) sum += b[k] * v[k];
        *score = sum;
        return 0;
    }
    return 0;
}

int solver_factor_at(concord_solver *s, const double *phi_all, int32_t f, const double *x,
                     bool *allowed, double *score, double *v) {
    const concord_graph *g = s->g;
    const factor *fa = &g->factors[f];
    for (int32_t j = 0; j < fa->degree; ++j) {
        s->held[j] = x[g->link_var[fa->link_begin + j]] > 0.5;
        s->a[j] = 0.0;
    }
    int rc = solver_factor_map_held(s, f, s->a, s->held, phi_all + fa->add_begin, s->u,
                                    v ? v : s->vmap, score);
    *allowed = *score > -INFINITY;
    return rc;
}

int solver_settings(concord_solver *s, const concord_settings *settings, concord_settings *out) {
    if (settings) *out = *settings;
    else concord_default_settings(out);
    char message[160];
    if (concord_check_settings(out, message, sizeof message))
        return solver_fail(s, CONCORD_EINVAL, "%s", message);
    return CONCORD_OK;
}

int solver_dual_stop(double *history, int32_t window, int32_t t, double best_dual,
                     double gap_tol, bool stall_counts, double time_limit,
                     const struct timespec *start) {
    const int32_t slot = t % window;
    const bool stalled = t > window && history[slot] - best_dual <= gap_tol;
    history[slot] = best_dual;
    if (stalled && stall_counts) return CONCORD_STATUS_STALLED;
    if (solver_time_is_up(start, time_limit))
        return CONCORD_STATUS_TIME_LIMIT;
    return CONCORD_STATUS_UNSOLVED;
}

int solver_infeasible(concord_solver *s, int32_t iterations, double bound, double floor) {
    return solver_fail(s, CONCORD_EINFEASIBLE,
                       "the constraints admit no solution: after %d iterations the dual bound "
                       "%.6g is below every feasible value (>= %.6g; the variables in no "
                       "factor aside)",
                       iterations, bound, floor);
}

int solver_dual_end(concord_solver *s, int rc, int32_t failed, int status, int32_t iterations,
                    double bound, double floor, concord_info *out, bool *handled) {
    s->mode = MODE_NONE;
    s->solved = false;
    s->sol_from_admm = false;
    s->have_decoded = false;
    *handled = true;
    if (rc) {
        out->status = CONCORD_STATUS_CALLBACK_FAILED;
        return solver_callback_failed(s, failed, rc);
    }
    if (status == CONCORD_STATUS_INFEASIBLE) {
        out->status = status;
        out->value = -INFINITY;
        return solver_infeasible(s, iterations, bound, floor);
    }
    *handled = false;
    out->status = status;
    return CONCORD_OK;
}

/* The RMS of the nonzero entries of x and y, computed directly where the
 * squares can neither overflow nor vanish (largest: their largest
 * magnitude, > 0) and with the entries divided by the largest elsewhere
 * (scores beyond 1e150 or below 1e-150). The direct sum is kept where it
 * is safe: its rounding decides the penalty's last bits, and the paths of
 * long solves (AD3's parsing01: 979 against 1371 iterations) with them. */
static double rms_nonzero(const double *x, int32_t nx, const double *y, int32_t ny,
                          double largest) {
    const double unit = largest > 1e-150 && largest < 1e150 ? 1.0 : largest;
    double sum = 0.0;
    int64_t count = 0;
    for (int32_t k = 0; k < nx; ++k)
        if (x[k] != 0.0) sum += (x[k] / unit) * (x[k] / unit), ++count;
    for (int32_t k = 0; k < ny; ++k)
        if (y[k] != 0.0) sum += (y[k] / unit) * (y[k] / unit), ++count;
    return unit * sqrt(sum / (double)count);
}

double solver_score_l1(const concord_graph *g, const double *theta, const double *phi) {
    double sum = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) sum += fabs(theta[i]);
    for (int32_t k = 0; k < g->n_add; ++k) sum += fabs(phi[k]);
    return sum;
}

/* The gap floor, in units of the rounding error of a sum of the scores. */
#define GAP_ROUNDING 1024.0

solver_gap solver_gap_rule(const concord_solver *s, const double *theta, const double *phi,
                           double tol) {
    double least = INFINITY, free_best = 0.0, free_l1 = 0.0, linked_l1 = 0.0;
    for (int32_t i = 0; i < s->g->n_vars; ++i) {
        const double x = fabs(theta[i]);
        if (s->deg[i] == 0) {
            free_best += theta[i] > 0.0 ? theta[i] : 0.0;
            free_l1 += x;
            continue;
        }
        linked_l1 += x;
        if (x > 0.0 && x < least) least = x;
    }
    for (int32_t k = 0; k < s->g->n_add; ++k) {
        const double x = fabs(phi[k]);
        linked_l1 += x;
        if (x > 0.0 && x < least) least = x;
    }
    const double smallest = isfinite(least) ? least : 0.0;
    const double terms = (double)s->g->n_vars + (double)s->g->n_factors;
    return (solver_gap){.tol = tol,
                        .floor = fmax(tol * smallest, GAP_ROUNDING * DBL_EPSILON * linked_l1),
                        .free_best = free_best,
                        .linked_l1 = linked_l1,
                        .free_rounding = terms * DBL_EPSILON * free_l1,
                        .least_score = smallest,
                        .least_progress = tol * linked_l1 + terms * DBL_EPSILON * free_l1};
}

double solver_gap_allowed(const solver_gap *gap, double linked_bound, double linked_value) {
    double size = 0.0;
    if (isfinite(linked_bound)) size = fabs(linked_bound);
    if (isfinite(linked_value)) size = fmax(size, fabs(linked_value));
    return fmax(gap->tol * size, gap->floor) + gap->free_rounding;
}

bool solver_gap_closed(const solver_gap *gap, double linked_bound, double linked_value) {
    if (!isfinite(linked_value)) return false;
    /* every factor's scores 0: every point is optimal, and a gap of the
     * multipliers' rounding (1e-17) would never close */
    if (gap->linked_l1 == 0.0) return true;
    return isfinite(linked_bound) &&
           fabs(linked_bound - linked_value) <= solver_gap_allowed(gap, linked_bound, linked_value);
}

double solver_link_scores(concord_solver *s, const double *theta, const double *phi) {
    const concord_graph *g = s->g;
    double largest = 0.0;
    for (int32_t l = 0; l < g->n_links; ++l) {
        const int32_t i = g->link_var[l];
        s->link_score[l] = theta[i] * s->inv_deg[i];
        largest = max_abs(largest, s->link_score[l]);
    }
    for (int32_t k = 0; k < g->n_add; ++k) largest = max_abs(largest, phi[k]);
    return largest > 0.0 ? rms_nonzero(s->link_score, g->n_links, phi, g->n_add, largest) : 1.0;
}

void solver_warm_multipliers(concord_solver *s, double scale) {
    if (!(s->lambda_scale > 0.0) || scale == s->lambda_scale) return;
    const double ratio = scale / s->lambda_scale;
    for (int32_t l = 0; l < s->g->n_links; ++l) s->lambda[l] *= ratio;
    s->lambda_scale = scale;
}

void solver_state_at_solution(concord_solver *s) {
    const concord_graph *g = s->g;
    memcpy(s->ubar, s->sol_u, (size_t)g->n_vars * sizeof(double));
    for (int32_t l = 0; l < g->n_links; ++l) {
        s->uf[l] = s->sol_u[g->link_var[l]];
        s->lambda[l] = 0.0;
    }
}

int solver_assignment_value(concord_solver *s, const double *theta, const double *phi,
                            const double *x, double *value, int32_t *failed) {
    const concord_graph *g = s->g;
    double sum = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) sum += theta[i] * x[i];
    *value = -INFINITY;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        bool allowed;
        double score;
        int rc = solver_factor_at(s, phi, f, x, &allowed, &score, NULL);
        if (rc) {
            *failed = f;
            return rc;
        }
        if (!allowed) return 0;
        sum += score;
    }
    *value = sum;
    return 0;
}

int solver_take_assignment(concord_solver *s, const double *x, double *value) {
    const concord_graph *g = s->g;
    const double *theta = solver_theta(s), *phi = solver_phi(s);
    double sum = 0.0;
    bool all_allowed = true;
    if (x != s->sol_u) memcpy(s->sol_u, x, (size_t)g->n_vars * sizeof(double));
    for (int32_t i = 0; i < g->n_vars; ++i) sum += theta[i] * x[i];
    for (int32_t f = 0; f < g->n_factors; ++f) {
        bool allowed;
        double score;
        int rc = solver_factor_at(s, phi, f, x, &allowed, &score,
                                  s->sol_v + g->factors[f].add_begin);
        if (rc) return solver_callback_failed(s, f, rc);
        all_allowed &= allowed;
        sum += score;
    }
    *value = all_allowed ? sum : -INFINITY;
    s->solved = all_allowed;
    s->sol_integral = all_allowed;
    s->sol_from_admm = false;
    s->solved_own_revision = s->own_scores_revision;
    s->solved_graph_revision = g->scores_revision;
    solver_distribution_clear(s);
    if (x != s->decoded) memcpy(s->decoded, x, (size_t)g->n_vars * sizeof(double));
    s->have_decoded = all_allowed;
    return CONCORD_OK;
}
