/*
 * ADMM on the local polytope (docs/design.md, "The ADMM loop"): AD3 for
 * LP-MAP and the same loop for LP-SparseMAP, which only changes the
 * factors' weights.
 *
 * Each factor keeps a copy u_f of its variables; consensus ubar and
 * multipliers lambda tie the copies together. One iteration is a list of
 * named steps, each a function below:
 *   factor step     u_f = argmax over M_f of a.u + phi.v - 1/2 sum d_i u_i^2,
 *                   a_i = theta_i/deg_i + lambda_{f,i} + eta ubar_i,
 *                   d_i = eta (LP-MAP) or w_i/deg_i + eta (LP-SparseMAP,
 *                   whose -1/2 sum_i w_i u_i^2 is split evenly among the
 *                   copies; w_i = 1 unless concord_set_regularization);
 *   consensus and   ubar_i <- ubar_i + alpha (mean_f u_{f,i} - ubar_i);
 *   dual update     lambda_{f,i} -= eta (uhat_{f,i} - ubar_i), with the
 *                   over-relaxed uhat = ubar_old + alpha (u_{f,i} - ubar_old),
 *                   and the residuals, in one pass over the variables;
 *   termination     small residuals, exact inner solves, and for LP-MAP a
 *                   small gap to the dual bound;
 *   dual bound      sum_f max_{M_f} (theta/deg + lambda_f).u + phi.v (plus
 *                   max(0, -sum_f lambda_{f,i}) per variable, valid for any
 *                   lambda), every bound_every iterations and every
 *                   BOUND_RECHECK while the residuals are small, with the
 *                   progress callback;
 *   penalty update  residual balancing;
 *   acceleration    Anderson extrapolation of the per-link state
 *                   lambda + eta ubar (anderson.c), every third iteration,
 *                   LP-MAP's from iteration 40 on, LP-SparseMAP's at once.
 * The LP-MAP penalty is eta_abs = eta * scale, where scale is the RMS of
 * the link-level scores, which makes the iterates invariant to rescaling
 * the scores (LP-SparseMAP is not scale-invariant: its unit is
 * max(scale, 1)). A factor whose inputs did not change since its last
 * solve is not solved again (its multipliers and variables did not move).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util.h"
#include "acyclic.h"
#include "clamp.h"
#include "solver.h"

enum { ADAPT_EVERY = 10, MAX_ADAPTATIONS = 30, BOUND_RECHECK = 5 };
/* after MAX_ADAPTATIONS changes, the wait before the next one: this many
 * iterations, doubled with each further change (see penalty_step) */
enum { LATE_ADAPT_WAIT = 1000, LATE_ADAPT_DOUBLINGS = 20 };
/* this many changes in a row, each in the direction opposite to the one
 * before, are a cycle: the late schedule begins (see penalty_step) */
enum { CYCLE_REVERSALS = 6 };
/* the first iterations adapt the penalty more often and by larger steps */
enum { EARLY_ITERATIONS = 40, EARLY_ADAPT_EVERY = 5 };
/* LP-MAP's acceleration begins once those early iterations are over: it
 * pays in the linear tail of a solve, while in the first iterations (faces
 * of the polytope still being found, the penalty still changing and
 * restarting its history) its extrapolations broke the factor caching and
 * added vector work, and solves that end within them (most sequence
 * graphs, parsing02) were up to twice as slow with it. LP-SparseMAP's
 * objective is strongly concave, its iteration contracts from the start,
 * and its acceleration begins at once (started at 40, a 20 x 20
 * LP-matching took 422 iterations instead of 119; docs/design.md). */
enum { LP_MAP_ACCELERATION_START = EARLY_ITERATIONS };
#define CACHE_FRACTION 0.01

/* After an iteration whose residuals were within tol while some active-set
 * solve was not exact, such solves get at least FINISHING_ORACLE_CALLS
 * oracle calls. One call per iteration (max_inner_iter's default) keeps
 * iterations cheap while the inputs move; but near the end the input of a
 * factor with many near-tied configurations (LP-SparseMAP at small scores)
 * still moves a little at every iteration, and a single call, spent
 * entering a configuration, never also certifies the set: with scores
 * times 0.1, LP-SparseMAP on AD3's parsing01 did not converge in 20,000
 * iterations and on 10 of bench_structured's 46 graphs not in 100,000,
 * with their residuals at 1e-9; with the finishing calls, 170 iterations
 * and none. At their own scores LP-MAP and LP-SparseMAP iterate as before
 * but for a few graphs (docs/performance.md). */
enum { FINISHING_ORACLE_CALLS = 10 };

static int32_t finishing_oracle_calls(const concord_settings *st) {
    return st->max_inner_iter > FINISHING_ORACLE_CALLS ? st->max_inner_iter
                                                       : FINISHING_ORACLE_CALLS;
}

/* How a solve ended. */
typedef enum outcome {
    CONVERGED,
    STOPPED_MAX_ITER,
    STOPPED_TIME_LIMIT,
    STOPPED_INTERRUPTED,
    FAILED_NUMERIC,
    FAILED_INFEASIBLE,
    FAILED_CALLBACK,
    FAILED_MEMORY
} outcome;

/* One solve: the settings, scales and counters its steps share. */
typedef struct admm_run {
    concord_solver *s;
    const concord_graph *g;
    const double *theta, *phi; /* the scores solved for */
    concord_settings st;
    bool sparse;
    double scale;          /* the unit of the penalty */
    double eta_rel, eta;   /* the penalty, relative and absolute */
    double factors_eta;    /* the penalty of the last factor step (absolute) */
    double cache_fraction; /* CACHE_FRACTION, 0 once caching ended (end_factor_caching) */
    double cache_slack;    /* see set_penalty */
    solver_gap gap;        /* when the LP-MAP value counts as optimal, and the
                              scores' split around the variables in no factor */
    double linked_bound;   /* best dual bound so far, less gap.free_best */
    int32_t last_bound;    /* iteration of the last bound */
    int32_t adaptations;   /* penalty changes so far */
    int32_t last_direction; /* of the last change: +1 up, -1 down, 0 none */
    int32_t reversals;     /* changes in a row against the one before */
    int64_t next_adaptation; /* no change before this iteration */
    int64_t solves, oracle_calls;
    double primal, dual;   /* the last iteration's residuals (max) */
    double primal_sq, change_sq; /* and their squares summed, for the RMS */
    int32_t failed_factor; /* a factor whose callback failed (callback_error), whose
                              active set ran out of memory, or whose SparseMAP solve
                              was not certified; -1: none */
    int callback_error;
    int32_t reached;       /* the factors [0, reached) were solved (a separable
                              solve stopped early leaves the rest unsolved) */
    int32_t iteration;     /* the current one, for the acceleration's calls */
    int32_t oracle_calls_per_solve; /* an active-set solve's budget this
                                       iteration (FINISHING_ORACLE_CALLS) */
    bool accelerating;     /* the acceleration has begun (see acceleration_start) */
    bool bound_terms_kept; /* the solver's bound_term hold this solve's (see dual_bound) */
    struct timespec start;
} admm_run;

/* theta.u + phi.v, minus sum_i w_i u_i^2 / 2 for LP-SparseMAP. */
static double objective(const admm_run *r, const double *u, const double *v) {
    double value = 0.0;
    for (int32_t i = 0; i < r->g->n_vars; ++i) value += r->theta[i] * u[i];
    for (int32_t k = 0; k < r->g->n_add; ++k) value += r->phi[k] * v[k];
    if (r->sparse)
        for (int32_t i = 0; i < r->g->n_vars; ++i) value -= 0.5 * r->g->weight[i] * u[i] * u[i];
    return value;
}

/* LP-MAP weighs every link alike (d_i = eta): s->d is filled once per
 * penalty rather than once per factor solve. */
static void set_penalty(admm_run *r, double eta_rel) {
    r->eta_rel = eta_rel;
    r->eta = eta_rel * r->scale;
    /* A factor is solved again only when an input moved by more than this:
     * its output would move by at most CACHE_FRACTION * tol (LP-SparseMAP
     * divides it per variable, see variable_slack). */
    r->cache_slack = r->cache_fraction * r->st.tol * r->eta;
    if (!r->sparse)
        for (int32_t j = 0; j < r->s->max_degree; ++j) r->s->d[j] = r->eta;
}

/* The cache slack of the links of variable i (deg of them). An
 * LP-SparseMAP copy contracts toward its fixed point by eta / (w/deg +
 * eta) per iteration (w: the variable's regularization weight), so a
 * consensus held still by the cache lies (1 + deg eta / w) times its last
 * step from it: the slack shrinks by that factor, or, the penalty in units
 * of scores of 1e8, solves stopped 40 tol from their answer. */
static inline double variable_slack(const admm_run *r, int32_t i, int32_t deg) {
    return r->sparse ? r->cache_slack / (1.0 + deg * r->eta / r->g->weight[i]) : r->cache_slack;
}

/* The acceleration's vector: lambda_l + eta ubar_i, link by link in
 * variable-major order (a variable's links are one block). */
static void fill_slot_state(admm_run *r) {
    concord_solver *s = r->s;
    for (int32_t i = 0; i < r->g->n_vars; ++i) {
        const double consensus = r->eta * s->ubar[i];
        for (int32_t q = s->var_link_begin[i]; q < s->var_link_begin[i + 1]; ++q)
            s->slot_state[q] = s->lambda[s->var_links[q]] + consensus;
    }
}

/* ADMM's fixed points are optimal because its dual update keeps
 * sum_f lambda_{f,i} = 0 for every variable i. Multipliers left by MPLP
 * need not satisfy it (its dual bound allows any), and a warm start from
 * them settled on a fixed point with the gap open; a warm start projects
 * the multipliers onto it. */
static void center_multipliers(concord_solver *s) {
    for (int32_t i = 0; i < s->g->n_vars; ++i) {
        const int32_t begin = s->var_link_begin[i], end = s->var_link_begin[i + 1];
        double sum = 0.0;
        for (int32_t q = begin; q < end; ++q) sum += s->lambda[s->var_links[q]];
        const double mean = sum * s->inv_deg[i];
        for (int32_t q = begin; q < end; ++q) s->lambda[s->var_links[q]] -= mean;
    }
}

/* The state a solve starts from: the last solve's (warm) or a cold one
 * (zero multipliers, consensus 1/2, empty active sets, the settings'
 * penalty). A variable in no factor takes its best value once and for
 * all; every factor is solved in the first iteration. */
static void start(admm_run *r, bool warm) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    const double score_rms = solver_link_scores(s, r->theta, r->phi);
    r->scale = r->sparse ? fmax(score_rms, 1.0) : score_rms;
    set_penalty(r, warm && s->eta_rel > 0.0 ? s->eta_rel : r->st.eta);
    r->factors_eta = r->eta;
    if (warm) {
        solver_warm_multipliers(s, r->scale);
        center_multipliers(s);
    } else {
        for (int32_t l = 0; l < g->n_links; ++l) s->lambda[l] = 0.0;
        for (int32_t i = 0; i < g->n_vars; ++i) s->ubar[i] = 0.5;
        for (int32_t f = 0; f < g->n_factors; ++f)
            if (s->state[f]) active_set_reset(s->state[f]);
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (s->deg[i] == 0)
            s->ubar[i] = r->sparse ? clip01(r->theta[i] / g->weight[i]) : (r->theta[i] > 0.0);
        s->active[i] = s->deg[i] > 0;
    }
    memset(s->dirty, 1, (size_t)g->n_factors);
    memset(s->v_pending, 0, (size_t)g->n_factors);
    r->gap = solver_gap_rule(s, r->theta, r->phi, r->st.tol);
    r->gap.free_rounding = 0.0; /* linked_value and the bound sum the factors' terms alone */
    r->linked_bound = INFINITY;
}

/* The first k' >= k with flags[k'] set, or n. Eight clear flags are
 * skipped at a time: on large graphs most factors are cached and most
 * variables quiet, and testing flag by flag spent a fifth of the solve on
 * AD3's mln_large in mispredicted branches. */
_Static_assert(sizeof(bool) == 1, "next_set reads eight flags as one 64-bit word");

static inline int32_t next_set(const bool *flags, int32_t k, int32_t n) {
    for (; k + 8 <= n; k += 8) {
        uint64_t word;
        memcpy(&word, flags + k, sizeof word);
        if (!word) continue;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return k + (int32_t)(__builtin_ctzll(word) >> 3);
#else
        break;
#endif
    }
    while (k < n && !flags[k]) ++k;
    return k;
}

/* Writes into s->v the additional outputs the factor step left to the
 * active sets: they are read only by the objective, near the end of a
 * solve and at its end, while writing them at every factor solve cost a
 * twentieth of a solve on the generated sequence graphs (a sequence has
 * L S^2 transitions, of which a configuration uses L + 1). */
static void write_pending_additionals(const admm_run *r) {
    concord_solver *s = r->s;
    const int32_t n = r->g->n_factors;
    for (int32_t f = next_set(s->v_pending, 0, n); f < n; f = next_set(s->v_pending, f + 1, n)) {
        active_set_additionals(s->state[f], s->v + r->g->factors[f].add_begin);
        s->v_pending[f] = false;
    }
}

/* The LP-MAP value at the current consensus and factor outputs without the
 * variables in no factor (the value is this + r->gap.free_best), which the gap
 * test compares with the dual bound's part. */
static double linked_value(const admm_run *r) {
    write_pending_additionals(r);
    double value = 0.0;
    for (int32_t i = 0; i < r->g->n_vars; ++i)
        if (r->s->deg[i] > 0) value += r->theta[i] * r->s->ubar[i];
    for (int32_t k = 0; k < r->g->n_add; ++k) value += r->phi[k] * r->s->v[k];
    return value;
}

/* What the copies' disagreement is worth at the multipliers:
 * sum over the links of lambda_l (u_l - ubar_i). */
static double disagreement_value(const admm_run *r) {
    const concord_graph *g = r->g;
    double sum = 0.0;
    for (int32_t l = 0; l < g->n_links; ++l)
        sum += r->s->lambda[l] * (r->s->uf[l] - r->s->ubar[g->link_var[l]]);
    return sum;
}

/* LP-MAP's condition (4) of convergence (docs/design.md, stopping): the
 * value at the consensus within the allowed gap of the best bound, and so
 * is what the copies' disagreement is worth at the multipliers. The
 * copies, each in its factor's polytope, are worth value + that at the
 * multipliers, never more than the bound there; the consensus, up to tol
 * outside the polytopes, may be worth more than the optimum, and on a
 * graph whose value is far below its scores the gap against it alone
 * closed with the bound and the value 1.3e-5 of the optimum above it. */
static bool gap_closed(const admm_run *r) {
    const double value = linked_value(r);
    if (!solver_gap_closed(&r->gap, r->linked_bound, value)) return false;
    return r->gap.linked_l1 == 0.0 || /* every point optimal (solver_gap_closed) */
           fabs(disagreement_value(r)) <= solver_gap_allowed(&r->gap, r->linked_bound, value);
}

/* Solves factor f's QP at the current multipliers and consensus, with
 * the weights in s->d (LP-SparseMAP's are set here, LP-MAP's by
 * set_penalty). Only the variables whose copy changed need revisiting: a
 * variable left alone last iteration has every copy equal to its
 * consensus, so if they stay put its update is a no-op (on mostly integral
 * graphs, most copies stay put). Inlined into the factor step, which then
 * loads the solver's arrays once per iteration instead of once per factor
 * (coref: -3% instructions). */
static inline __attribute__((always_inline)) void
solve_factor(concord_solver *s, const double *phi, int32_t f, double eta, bool sparse,
             int32_t max_inner, qp_outcome *out) {
    const concord_graph *g = s->g;
    const factor *fa = &g->factors[f];
    const int32_t begin = fa->link_begin, n = fa->degree;
    const int32_t *var = g->link_var + begin;
    const uint8_t *neg = g->link_neg + begin;
    const double *lambda = s->lambda + begin, *score = s->link_score + begin;
    const double *ubar = s->ubar;
    double *lit_a = s->buf.lit_a, *d = s->d, *a_solved = s->a_solved + begin;
    if (sparse) solver_link_weights(s, var, n, true, eta, d);
    for (int32_t j = 0; j < n; ++j) {
        const double a = score[j] + eta * ubar[var[j]] + lambda[j];
        a_solved[j] = a;
        lit_a[j] = literal_qp_input(neg[j], a, d[j]);
    }
    const double *b = phi + fa->add_begin;
    double *v = s->v + fa->add_begin;
    if (fa->ops->qp) {
        /* a closed form writes its additional outputs at once */
        factor_qp_literals(fa, NULL, lit_a, b, d, s->buf.lit_u, v, max_inner, &s->buf, out);
    } else {
        /* an active set's are written when read (see write_pending_additionals) */
        const bool defer_v = fa->n_add > 0;
        factor_qp_literals(fa, s->state[f], lit_a, b, d, s->buf.lit_u, defer_v ? NULL : v,
                           max_inner, &s->buf, out);
        s->v_pending[f] = defer_v;
    }
    /* without branches: whether a copy moved is as good as random */
    double *uf = s->uf + begin;
    const double *lit_u = s->buf.lit_u;
    for (int32_t j = 0; j < n; ++j) {
        const double u = variable_value(neg[j], lit_u[j]);
        s->active[var[j]] |= u != uf[j];
        uf[j] = u;
    }
    s->face[f] = out->face;
}

/* Records a failure of factor f's solve (a callback's error or an active
 * set out of memory); returns whether there was one. */
static inline bool factor_failed(admm_run *r, int32_t f, const qp_outcome *out) {
    const int callback_error = solver_factor_failure(r->s, &r->g->factors[f]);
    if (!callback_error && !out->error) return false;
    r->failed_factor = f;
    r->callback_error = callback_error;
    return true;
}

/* The outcome of a solve a factor's failure ended. */
static outcome failure_outcome(const admm_run *r) {
    return r->callback_error ? FAILED_CALLBACK : FAILED_MEMORY;
}

/* The factor step: every factor whose inputs moved is solved again.
 * Returns how many inner solves were inexact (each is resumed at the next
 * iteration); a callback's failure is left in r. */
static int32_t factor_step(admm_run *r) {
    concord_solver *s = r->s;
    const double *phi = r->phi, eta = r->eta;
    const bool sparse = r->sparse;
    const int32_t n = r->g->n_factors, max_inner = r->oracle_calls_per_solve;
    int32_t inexact = 0, solves = 0;
    int64_t oracle_calls = 0;
    for (int32_t f = next_set(s->dirty, 0, n); f < n; f = next_set(s->dirty, f + 1, n)) {
        qp_outcome out;
        solve_factor(s, phi, f, eta, sparse, max_inner, &out);
        ++solves;
        oracle_calls += out.oracle_calls;
        if (factor_failed(r, f, &out)) break;
        s->dirty[f] = !out.exact;
        inexact += !out.exact;
    }
    r->solves += solves;
    r->oracle_calls += oracle_calls;
    r->factors_eta = eta;
    return inexact;
}

/* a few units in the last place of a consensus value in [0, 1] */
#define SPARSE_ROUNDING_MOVE (4.0 * DBL_EPSILON)

/* The residuals of one iteration, summed over the variables revisited. */
typedef struct residuals {
    double primal, change;       /* largest |u_f - ubar|, |change of ubar| */
    double primal_sq, change_sq; /* their squares summed over the links */
    bool finite;
} residuals;

/* LP-SparseMAP's measure of a move of ubar_i, for its dual residual
 * (see consensus_and_dual_step): the move over the variable's weight, and
 * none for a move within rounding of ubar (in [0, 1]). Beside scores far
 * above the weights (1e200 times), the penalty is as large and the last
 * bits of ubar, which the factors' solves leave jittering, kept that
 * residual above tol for ever, at the answer. */
static inline double sparse_move(const admm_run *r, int32_t i, double moved) {
    return moved <= SPARSE_ROUNDING_MOVE ? 0.0 : moved / r->g->weight[i];
}

/* The consensus and dual update of variable i; with `accelerate`, it
 * keeps the variable's block of the acceleration's vector up to date and
 * tells the acceleration when it changed (compiled twice, with it a
 * constant). Keeping the block here, where the multipliers are written
 * anyway, costs a store per link; rebuilding the blocks before each
 * acceleration step cost 4% of the instructions of a solve of
 * srl_fract_003. */
static inline __attribute__((always_inline)) void
update_variable(admm_run *r, int32_t i, int32_t t, const bool accelerate, residuals *res) {
    concord_solver *s = r->s;
    const double eta = r->eta, alpha = r->st.relaxation;
    const int32_t *links = s->var_links + s->var_link_begin[i];
    const int32_t deg = s->deg[i];
    const double slack = variable_slack(r, i, deg);
    double *lambda = s->lambda;
    const double *uf = s->uf;
    double old = s->ubar[i], sum = 0.0;
    for (int32_t k = 0; k < deg; ++k) sum += uf[links[k]];
    double mean = sum * s->inv_deg[i];
    double now = old + alpha * (mean - old);
    if (s->clamp && s->clamp[i] >= 0) now = s->clamp[i]; /* branch and bound fixed it */
    if (!isfinite(now)) res->finite = false;
    double moved = fabs(now - old);
    if (r->sparse) moved = sparse_move(r, i, moved);
    if (moved > res->change) res->change = moved;
    res->change_sq += deg * moved * moved;
    s->ubar[i] = now;
    bool still = now != old;
    const double base = r->theta[i] * s->inv_deg[i] + eta * now, consensus = eta * now;
    double *slots = s->slot_state + s->var_link_begin[i];
    for (int32_t k = 0; k < deg; ++k) {
        int32_t l = links[k];
        double copy = uf[l];
        double gap = fabs(copy - now);
        res->primal = gap > res->primal ? gap : res->primal;
        res->primal_sq += gap * gap;
        /* branch-free updates: which links move is unpredictable */
        double step = eta * (old + alpha * (copy - old) - now);
        lambda[l] -= step;
        still |= step != 0.0;
        solver_mark_if_moved(s, l, base + lambda[l], slack);
        if (accelerate) slots[k] = lambda[l] + consensus;
    }
    if (accelerate && still) anderson_changed(s->aa, i, t);
    s->active[i] = still;
}

/* The consensus and dual update of one iteration, with its residuals, in
 * one pass over the variables that must be revisited. Returns false when a
 * value became non-finite. */
static bool consensus_and_dual_step(admm_run *r, int32_t t) {
    concord_solver *s = r->s;
    const int32_t n = r->g->n_vars;
    residuals res = {0.0, 0.0, 0.0, 0.0, true};
    if (r->accelerating && anderson_running(s->aa)) {
        for (int32_t i = next_set(s->active, 0, n); i < n; i = next_set(s->active, i + 1, n))
            update_variable(r, i, t, true, &res);
    } else {
        for (int32_t i = next_set(s->active, 0, n); i < n; i = next_set(s->active, i + 1, n))
            update_variable(r, i, t, false, &res);
    }
    r->primal = res.primal;
    /* LP-MAP is scale-invariant: its dual residual is relative to the
     * scores' scale. LP-SparseMAP's -w u^2/2 has curvature w at any scale,
     * and a consensus still moving by delta lies about (1 + deg eta / w)
     * delta from its fixed point: measured with the relative penalty,
     * solves beside scores of 1e5 stopped 0.04 from their answer at tol
     * 1e-6, and with the change not divided by w (update_variable), solves
     * with every weight 1e-4 stopped 0.015 from theirs. */
    r->dual = (r->sparse ? r->eta : r->eta_rel) * res.change;
    r->primal_sq = res.primal_sq;
    r->change_sq = res.change_sq;
    return res.finite;
}

/* Lagrangian dual bound at the current multipliers without the variables
 * in no factor (the bound is *linked + r->gap.free_best), and the sum of the
 * magnitudes of its factors' terms in *size unless size is NULL (the
 * variables' terms are about 0: a variable's multipliers sum to 0); returns
 * 0, or a callback's error, which is left in r. A factor's term is its MAP
 * value at its input, and is computed again only when that input changed
 * since the solve's previous bound: late in a solve most multipliers stand
 * still, and the MAP calls were a third of mln_large's solve. */
static int dual_bound(admm_run *r, double *linked, double *size) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    double sum = 0.0, magnitude = 0.0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        double *input = s->bound_input + fa->link_begin;
        bool unchanged = r->bound_terms_kept;
        for (int32_t j = 0; j < fa->degree; ++j) {
            const int32_t l = fa->link_begin + j;
            s->a[j] = s->link_score[l] + s->lambda[l];
            unchanged &= s->a[j] == input[j];
        }
        if (!unchanged) {
            const int rc =
                clamp_touches(s, f)
                    ? clamp_factor_map(s, f, s->a, r->phi + fa->add_begin, s->u, s->vmap,
                                       &s->bound_term[f])
                    : solver_factor_map(s, f, s->a, r->phi + fa->add_begin, s->u, s->vmap,
                                        &s->bound_term[f]);
            if (rc) {
                r->callback_error = rc;
                r->failed_factor = f;
                return rc;
            }
            memcpy(input, s->a, (size_t)fa->degree * sizeof(double));
        }
        const double best = s->bound_term[f];
        sum += best;
        if (isfinite(best)) magnitude += fabs(best);
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (s->deg[i] == 0) continue;
        double multipliers = 0.0;
        for (int32_t k = s->var_link_begin[i]; k < s->var_link_begin[i + 1]; ++k)
            multipliers += s->lambda[s->var_links[k]];
        if (s->clamp && s->clamp[i] >= 0) sum -= multipliers * s->clamp[i];
        else sum += multipliers < 0.0 ? -multipliers : 0.0;
    }
    *linked = sum;
    if (size) *size = magnitude;
    r->bound_terms_kept = true;
    return 0;
}

/* The dual bound a solve reports, the free variables' best included. On a
 * graph whose factors' scores are all 0 their part is worth 0 at every
 * point, which makes 0 its bound unless the graph is infeasible: the
 * multipliers' bounds lie about their size times tol above it (3e-7 on a
 * random graph, whose bound then stood that far above its value) or, by
 * rounding, a few ulps below. */
static double reported_bound(const admm_run *r) {
    const double linked = r->gap.linked_l1 == 0.0 ? 0.0 : r->linked_bound;
    return linked + r->gap.free_best;
}

/* The dual-bound step: a new bound, then the progress callback. Returns
 * CONVERGED when the bound closes the gap of a solve whose residuals are
 * small, the outcome that ends the solve otherwise, or -1 to go on. */
static int bound_step(admm_run *r, int32_t t, bool small) {
    double linked, size;
    if (dual_bound(r, &linked, &size)) return FAILED_CALLBACK;
    r->last_bound = t;
    if (linked < r->linked_bound) r->linked_bound = linked;
    if (solver_bound_proves_infeasible(linked, r->gap.linked_l1, size)) return FAILED_INFEASIBLE;
    if (small && gap_closed(r)) return CONVERGED;
    if (r->st.progress) {
        write_pending_additionals(r);
        concord_progress p = {t, objective(r, r->s->ubar, r->s->v),
                              reported_bound(r), r->primal, r->dual, r->eta_rel,
                              solver_seconds_since(&r->start), 0, 0};
        if (r->st.progress(r->st.progress_context, &p)) return STOPPED_INTERRUPTED;
    }
    return -1;
}

/* Residual balancing (Boyd et al. 2011, 3.4.1) on the RMS residuals, which
 * are less noisy than the per-link maxima used for stopping. The penalty
 * rises when the primal residual dominates twentyfold and falls when the
 * dual one dominates tenfold: symmetric thresholds make it oscillate, and a
 * hundredfold (tried first) left it too low on parsing and Promedas graphs,
 * where the primal residual stays 10-50 times the dual for thousands of
 * iterations. It moves by 2, but during the first EARLY_ITERATIONS (checked
 * every EARLY_ADAPT_EVERY), where the initial penalty is often far off, by
 * the square root of the residuals' ratio: the primal residual goes as
 * 1/eta and the dual as eta, so that factor would balance them. Every
 * change restarts the acceleration's history, so reaching the right
 * penalty in fewer changes matters.
 *
 * The factor is clipped to [2, 4], except at the first check, which
 * corrects the initial penalty, a guess that can be off by far more: there
 * it may reach 16 (AD3's coref: residuals 150 to 1 at iteration 5; clipped
 * at 4, its penalty stayed too low for the whole early phase, 214
 * iterations against 156). Later in the early phase the ratios are noisier,
 * the faces of the solution still being found, and the clip at 4 keeps
 * them from throwing the penalty about. Measured over nine initial
 * penalties in docs/design.md. */
enum { FIRST_BALANCING_MAX = 16 };
static double balancing_step(double ratio, bool first_check) {
    return fmin(fmax(sqrt(ratio), 2.0), first_check ? FIRST_BALANCING_MAX : 4.0);
}

/* LP-SparseMAP's first EARLY_ITERATIONS move the penalty when either
 * residual dominates eightfold. Its objective is strongly concave and its
 * iteration contracts from the start, so balancing the residuals early
 * pays; with the later thresholds a step clipped at 4 left them 10 times
 * apart for tens of iterations. Over 500 random logic graphs this took 11%
 * fewer iterations, over the generated parsers and sequences, AD3's graphs
 * and the UAI instances 11–16% (82 graphs better, 9 worse); LP-MAP's
 * counts went both ways (docs/design.md). At most EARLY_ITERATIONS /
 * EARLY_ADAPT_EVERY changes can come of it, so it cannot make the penalty
 * cycle. */
static const double SPARSE_EARLY_BALANCE = 8.0;

/* The factor the penalty moves by at the check of iteration t (1: none). */
static double penalty_factor(double primal_rms, double dual_rms, double eta_rel,
                             double eta_rel_min, int32_t t, bool sparse) {
    const bool early = t <= EARLY_ITERATIONS, first = t == EARLY_ADAPT_EVERY;
    const bool narrow = early && sparse;
    const double raise_at = narrow ? SPARSE_EARLY_BALANCE : 20.0;
    const double lower_at = narrow ? SPARSE_EARLY_BALANCE : 10.0;
    if (primal_rms > raise_at * dual_rms && eta_rel < CONCORD_MAX_ETA)
        return early ? balancing_step(primal_rms / dual_rms, first) : 2.0;
    if (dual_rms > lower_at * primal_rms && eta_rel > eta_rel_min)
        return early ? 1.0 / balancing_step(dual_rms / primal_rms, first) : 0.5;
    return 1.0;
}

/* The least relative penalty. LP-SparseMAP's dual residual is absolute
 * (see consensus_and_dual_step), so the floor is on its absolute penalty:
 * relative, it kept the penalty so large beside scores beyond 1e9 that no
 * solve settled within max_iter. LP-MAP's is CONCORD_MIN_ETA, or, when
 * the least score is smaller still against the scale, that score: a
 * variable whose score is all that moves it, its copies agreeing, moves
 * by about its score over the penalty per iteration, and held at 1e-4
 * beside scores 1e11 times its own it crept for millions of iterations
 * with the residuals at 1e-17 and the gap open. Never below
 * LEAST_LP_MAP_ETA: the acceleration's per-link state lambda + eta ubar
 * gives ubar back to rounding over eta (see apply_slot_state). */
#define LEAST_LP_MAP_ETA 1e-10
static double least_penalty(const admm_run *r) {
    if (r->sparse) return CONCORD_MIN_ETA / r->scale;
    const double least = r->gap.least_score / r->scale;
    return least > 0.0 ? fmax(fmin(CONCORD_MIN_ETA, least), LEAST_LP_MAP_ETA) : CONCORD_MIN_ETA;
}

/* LP-MAP's residuals are small and its copies agree to this fraction of
 * tol: see penalty_step. */
#define DRIFT_AGREEMENT 1e-3

/* A new penalty: every factor's input moves, and the acceleration
 * restarts. */
static void change_penalty(admm_run *r, double eta_rel) {
    set_penalty(r, eta_rel);
    memset(r->s->dirty, 1, (size_t)r->g->n_factors);
    if (r->accelerating) {
        fill_slot_state(r);
        anderson_restart(r->s->aa, r->s->slot_state);
    }
}

/* The penalty update. ADMM converges for any fixed penalty, while
 * rebalancing at a steady rate can cycle; so after MAX_ADAPTATIONS changes
 * the wait before the next one is LATE_ADAPT_WAIT iterations, doubled with
 * each further change: the penalty stays put for ever longer stretches,
 * yet one left far off once the first changes are spent is still mended
 * (with a hard cap, solves sat at max_iter with one residual 10-1000 times
 * the other; docs/design.md). A cycle shorter than that, the penalty going
 * up and down between two values, starts the late schedule at once after
 * CYCLE_REVERSALS reversals in a row: each change restarts the
 * acceleration's history, and AD3's srl_fract_004 at an initial 0.476
 * swung between 0.24 and 0.48 for 1,600 iterations (1,941 in all; 1,212
 * now). After two reversals, most of the random graphs of
 * bench/penalty_sweep.py took more iterations: a reversal or two is the
 * balancing at work, not a cycle.
 *
 * While `drifting` (LP-MAP's residuals within tol, its copies agreeing
 * within DRIFT_AGREEMENT * tol, its gap open) the penalty halves at every
 * check down to its floor, whatever the residuals' ratio, neither waiting
 * nor counting: what is left to move is variables scored far below the
 * penalty, at their score over the penalty per iteration (see
 * least_penalty). Balanced, or on the late schedule, such solves took
 * 55,458 iterations, or sat at max_iter with both residuals at 5e-12,
 * instead of 353 and 1,922. Copies that still disagree by about tol are
 * not that case: there the gap is open by their disagreement, and a falling
 * penalty widens it (a hard random graph whose primal residual stood at
 * 0.99 tol went from 80,167 iterations to max_iter). A fall cannot start a
 * cycle: the rule is left once the copies move apart. On AD3's graphs, the
 * UAI instances and the generated ones it never comes into play. */
static void penalty_step(admm_run *r, int32_t t, bool drifting) {
    const bool early = t <= EARLY_ITERATIONS;
    if (!r->st.adapt_eta || t % (early ? EARLY_ADAPT_EVERY : ADAPT_EVERY) != 0) return;
    const double floor = least_penalty(r);
    if (drifting) {
        if (r->eta_rel > floor) change_penalty(r, fmax(0.5 * r->eta_rel, floor));
        return;
    }
    if (t < r->next_adaptation) return;
    const double n_links = (double)r->g->n_links;
    const double step = penalty_factor(sqrt(r->primal_sq / n_links),
                                       r->eta_rel * sqrt(r->change_sq / n_links), r->eta_rel,
                                       floor, t, r->sparse);
    if (step == 1.0) return;
    change_penalty(r, fmin(fmax(r->eta_rel * step, floor), CONCORD_MAX_ETA));
    const int32_t direction = step > 1.0 ? 1 : -1;
    r->reversals = direction == -r->last_direction ? r->reversals + 1 : 0;
    r->last_direction = direction;
    if (r->reversals >= CYCLE_REVERSALS && r->adaptations < MAX_ADAPTATIONS - 1)
        r->adaptations = MAX_ADAPTATIONS - 1;
    r->adaptations += 1;
    const int32_t late = r->adaptations - MAX_ADAPTATIONS;
    if (late >= 0) {
        const int doublings = late < LATE_ADAPT_DOUBLINGS ? late : LATE_ADAPT_DOUBLINGS;
        r->next_adaptation = t + ((int64_t)LATE_ADAPT_WAIT << doublings);
    }
}

/* The acceleration rewrote variable i's per-link state: its consensus and
 * multipliers follow, it becomes active when it moved, and the factors
 * whose input moved become dirty. The state is written back as consensus
 * and multipliers give it (which rounds it). */
static void apply_slot_state(void *context, int32_t i) {
    admm_run *r = context;
    concord_solver *s = r->s;
    const int32_t begin = s->var_link_begin[i], end = s->var_link_begin[i + 1];
    double *z = s->slot_state;
    const double eta = r->eta;
    double sum = 0.0;
    for (int32_t q = begin; q < end; ++q) sum += z[q];
    const double ub = s->clamp && s->clamp[i] >= 0 ? s->clamp[i] : sum * s->inv_deg[i] / eta;
    bool moved = ub != s->ubar[i];
    s->ubar[i] = ub;
    const double base = r->theta[i] * s->inv_deg[i] + eta * ub;
    const double slack = variable_slack(r, i, s->deg[i]);
    for (int32_t q = begin; q < end; ++q) {
        const int32_t l = s->var_links[q];
        const double next = z[q] - eta * ub;
        moved |= next != s->lambda[l];
        s->lambda[l] = next;
        z[q] = next + eta * ub;
        solver_mark_if_moved(s, l, base + next, slack);
    }
    if (moved) {
        s->active[i] = true;
        anderson_changed(s->aa, i, r->iteration);
    }
}

/* The iteration after which the acceleration begins (0: before the
 * first). */
static int32_t acceleration_start(const admm_run *r) {
    return r->sparse ? 0 : LP_MAP_ACCELERATION_START;
}

/* Starts the acceleration from the current state unless the settings or
 * the graph leave it off. */
static void begin_acceleration(admm_run *r) {
    concord_solver *s = r->s;
    if (r->st.acceleration == 0 || !s->aa) return;
    fill_slot_state(r);
    anderson_begin(s->aa, r->st.acceleration, s->slot_state);
    r->accelerating = true;
}

/* The acceleration step, when one is due, on the per-link state the
 * consensus step keeps up to date: the variables it extrapolates (or
 * restores) go back into consensus and multipliers. It begins after
 * acceleration_start; when its memory grows, it restarts from the whole
 * state. */
static void acceleration_step(admm_run *r, int32_t t) {
    concord_solver *s = r->s;
    if (!r->accelerating) {
        if (t == acceleration_start(r)) begin_acceleration(r);
        return;
    }
    if (anderson_due(s->aa, t)) {
        r->iteration = t;
        anderson_step(s->aa, s->slot_state, apply_slot_state, r);
    }
    if (anderson_grows(s->aa, t)) {
        fill_slot_state(r);
        anderson_restart(s->aa, s->slot_state);
    }
}

/* Ends the factor caching for the rest of an LP-MAP solve whose residuals
 * are small but whose gap is still open: every factor is solved again, and
 * from then on whenever its input moves at all. A factor left alone while
 * its input drifts by less than the cache slack is off by up to
 * CACHE_FRACTION * tol, which the residuals allow but the gap, relative to
 * a value far smaller than the scores (terms that cancel), may not: such
 * solves stalled at max_iter with residuals of 1e-8. */
static void end_factor_caching(admm_run *r) {
    if (r->cache_fraction == 0.0) return;
    r->cache_fraction = 0.0;
    r->cache_slack = 0.0;
    memset(r->s->dirty, 1, (size_t)r->g->n_factors);
}

/* The termination step after iteration t, whose factor step left
 * `inexact` inner solves inexact. Converged: small residuals (within tol,
 * every inner solve exact) and for LP-MAP the value within gap_tol of the
 * best dual bound, recomputed when stale. Also ends the factor caching of
 * an LP-MAP solve whose residuals are small but whose gap is open, gives
 * settled but inexact active sets more oracle calls, runs the bound step
 * when due, and reads the time limit. Returns the outcome that ends the
 * solve, or -1 to go on; *small says whether the residuals were small. */
static int termination_step(admm_run *r, int32_t t, int32_t inexact, bool *small) {
    const concord_settings *st = &r->st;
    const bool settled = r->primal <= st->tol && r->dual <= st->tol;
    *small = settled && inexact == 0;
    r->oracle_calls_per_solve = settled && inexact > 0 ? finishing_oracle_calls(st)
                                                       : st->max_inner_iter;
    if (*small && (r->sparse || gap_closed(r))) return CONVERGED;
    if (*small && !r->sparse) end_factor_caching(r);
    if (t % st->bound_every == 0 || (*small && t - r->last_bound >= BOUND_RECHECK)) {
        const int ended = bound_step(r, t, *small);
        if (ended >= 0) return ended;
    }
    if (solver_time_is_up(&r->start, st->time_limit)) return STOPPED_TIME_LIMIT;
    return -1;
}

/* The loop: returns how it ended, with the iterations run in *iterations. */
static outcome iterate(admm_run *r, int32_t *iterations) {
    const concord_settings *st = &r->st;
    int32_t t;
    outcome end = STOPPED_MAX_ITER;
    r->oracle_calls_per_solve = st->max_inner_iter;
    for (t = 1; t <= st->max_iter; ++t) {
        const int32_t inexact = factor_step(r);
        if (r->failed_factor >= 0) {
            end = failure_outcome(r);
            break;
        }
        if (!consensus_and_dual_step(r, t)) {
            end = FAILED_NUMERIC;
            break;
        }
        bool small;
        const int ended = termination_step(r, t, inexact, &small);
        if (ended >= 0) {
            end = (outcome)ended;
            break;
        }
        penalty_step(r, t, small && !r->sparse && r->primal <= DRIFT_AGREEMENT * st->tol);
        acceleration_step(r, t);
    }
    *iterations = t > st->max_iter ? st->max_iter : t;
    return end;
}

/* Whether no variable has two factors: the problem then separates. */
static bool separable(const concord_solver *s) {
    for (int32_t i = 0; i < s->g->n_vars; ++i)
        if (s->deg[i] > 1) return false;
    return true;
}

/* After a step of a separable solve that counts as `work` links: the time
 * limit, and every bound_every steps the progress callback. A factor's
 * MAP counts its links; a round of oracle calls, whose cost is unknown (a
 * user's oracle may take seconds) and at least an oracle call and the
 * active set's QP, counts SOLVER_DEADLINE_WORK: the clock is read after
 * each. Returns -1 to go on, or the outcome that ends the solve. The
 * value and the bound are not known before every factor is solved: the
 * callback sees -inf and +inf. */
static int separable_pause(admm_run *r, solver_deadline *deadline, int32_t work,
                           int32_t *steps, int32_t iterations) {
    if (solver_deadline_passed(deadline, work)) return STOPPED_TIME_LIMIT;
    if (r->st.progress && ++*steps % r->st.bound_every == 0) {
        concord_progress p = {iterations, -INFINITY, INFINITY, 0.0, 0.0, 0.0,
                              solver_seconds_since(&r->start), 0, 0};
        if (r->st.progress(r->st.progress_context, &p)) return STOPPED_INTERRUPTED;
    }
    return -1;
}

/* Puts the vertex that factor f's MAP oracle gave (LP-MAP's part of the
 * solution, or LP-SparseMAP's in place of its QP) into its active set,
 * which would otherwise hold a cold start's nothing or an earlier solve's
 * configurations: the distribution, the backward pass and a warm start
 * read the solution from there (for LP-MAP, only when a solve stopped
 * early and its solution is not integral). */
static void hold_vertex(admm_run *r, int32_t f) {
    concord_solver *s = r->s;
    const factor *fa = &r->g->factors[f];
    const int32_t b = fa->link_begin;
    const uint8_t *neg = r->g->link_neg + b;
    for (int32_t j = 0; j < fa->degree; ++j)
        s->buf.lit_u[j] = neg[j] ? 1.0 - s->uf[b + j] : s->uf[b + j];
    solver_link_weights(s, r->g->link_var + b, fa->degree, true, r->eta, s->d);
    active_set_hold_vertex(s->state[f], s->d, s->buf.lit_u, s->v + fa->add_begin);
}

/* Whether LP-SparseMAP's scores (their scale) are beyond 1/DBL_EPSILON
 * times the least weight of factor fa's variables, or of 1, the least unit
 * of that scale, for a factor without variables. Measured against 1 alone,
 * a factor whose weights were 1e6 took its MAP vertex at scores 1e16 in
 * place of its QP's solution. */
static bool huge_beside_weights(const admm_run *r, const factor *fa) {
    double least = fa->degree > 0 ? INFINITY : 1.0;
    for (int32_t l = fa->link_begin; l < fa->link_begin + fa->degree; ++l)
        least = fmin(least, r->g->weight[r->g->link_var[l]]);
    return r->scale * DBL_EPSILON >= least;
}

/* Solves a separable graph exactly: LP-MAP by each factor's MAP oracle
 * (the LP over one polytope has a vertex optimum), LP-SparseMAP by each
 * factor's QP with d = w (the penalty is 0: SparseMAP itself), resumed
 * until exact within max_iter rounds of max_inner_iter oracle calls. When
 * the scores are beyond 1/DBL_EPSILON times the weights of a factor's
 * variables (see huge_beside_weights), w |u|^2 / 2 is below their
 * rounding: the closed forms still find the QP's solution (they work
 * relative to a reference score), but the active set, which weighs
 * configurations by their huge scores, would not, and those factors are
 * solved by their MAP oracle (a vertex of the polytope, which their active
 * set then holds). A solve stopped early keeps the best point its last
 * factor reached (the factors after it keep their starting point). */
static outcome solve_separable(admm_run *r, int32_t *iterations) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    set_penalty(r, 0.0);
    r->factors_eta = r->eta;
    *iterations = 1;
    solver_deadline deadline = {.start = &r->start, .limit = r->st.time_limit};
    int32_t steps = 0;
    int end = -1;
    for (int32_t f = 0; f < g->n_factors && end < 0; ++f) {
        const factor *fa = &g->factors[f];
        const bool by_qp =
            r->sparse && !(factor_needs_active_set(fa) && huge_beside_weights(r, fa));
        const int32_t b = fa->link_begin;
        if (by_qp) {
            qp_outcome out = {0};
            for (int32_t round = 0; round < r->st.max_iter && !out.exact && end < 0; ++round) {
                solve_factor(s, r->phi, f, r->eta, true, r->st.max_inner_iter, &out);
                r->oracle_calls += out.oracle_calls;
                if (round + 1 > *iterations) *iterations = round + 1;
                if (factor_failed(r, f, &out)) return failure_outcome(r);
                if (!out.exact)
                    end = separable_pause(r, &deadline, SOLVER_DEADLINE_WORK, &steps, *iterations);
            }
            r->solves += 1;
            if (!out.exact && end < 0) {
                r->failed_factor = f; /* not certified within the cap */
                end = STOPPED_MAX_ITER;
            }
        } else {
            for (int32_t j = 0; j < fa->degree; ++j) {
                s->a[j] = r->theta[g->link_var[b + j]];
                s->a_solved[b + j] = s->a[j];
            }
            double best;
            int rc = clamp_touches(s, f)
                         ? clamp_factor_map(s, f, s->a, r->phi + fa->add_begin, s->uf + b,
                                            s->v + fa->add_begin, &best)
                         : solver_factor_map(s, f, s->a, r->phi + fa->add_begin, s->uf + b,
                                             s->v + fa->add_begin, &best);
            r->solves += 1;
            if (rc) {
                r->callback_error = rc;
                r->failed_factor = f;
                return FAILED_CALLBACK;
            }
            if (s->state[f]) hold_vertex(r, f); /* a factor without one has a closed form */
        }
        for (int32_t j = 0; j < fa->degree; ++j) s->ubar[g->link_var[b + j]] = s->uf[b + j];
        if (end < 0 && f + 1 < g->n_factors)
            end = separable_pause(r, &deadline, fa->degree, &steps, *iterations);
        if (end >= 0) r->reached = f + 1;
    }
    if (end >= 0) return (outcome)end;
    r->primal = r->dual = 0.0;
    return CONVERGED;
}

/* Rounds a near-integral solution when every factor allows the rounded
 * point; the additional outputs are then the factors' own at that point.
 * Returns 0 (with *rounded saying whether it did) or a callback's error. */
static int round_if_integral(admm_run *r, bool *rounded) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    const double slack = 10.0 * r->st.tol < 1e-3 ? 10.0 * r->st.tol : 1e-3;
    *rounded = false;
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (fabs(s->sol_u[i] - round(s->sol_u[i])) > slack) return 0;
    for (int32_t i = 0; i < g->n_vars; ++i) s->round_u[i] = round(s->sol_u[i]);
    for (int32_t f = 0; f < g->n_factors; ++f) {
        bool allowed;
        double score;
        int rc = solver_factor_at(s, r->phi, f, s->round_u, &allowed, &score,
                                  s->round_v + g->factors[f].add_begin);
        if (rc) {
            r->callback_error = rc;
            r->failed_factor = f;
            return rc;
        }
        if (!allowed) return 0;
    }
    memcpy(s->sol_u, s->round_u, (size_t)g->n_vars * sizeof(double));
    memcpy(s->sol_v, s->round_v, (size_t)g->n_add * sizeof(double));
    *rounded = true;
    return 0;
}

/* The end of a solve in the solver: the final bound (unless the state did
 * not move since the last one), the solution and its integrality, and the
 * state a warm start, decoding and the backward pass read. Returns the
 * outcome, FAILED_CALLBACK when an oracle failed on the way. */
static outcome keep_solution(admm_run *r, outcome end, int32_t t, bool *integral) {
    concord_solver *s = r->s;
    const concord_graph *g = r->g;
    const bool failed = end == FAILED_CALLBACK || end == FAILED_MEMORY || end == FAILED_NUMERIC;
    if (!failed && !(end == CONVERGED && r->last_bound == t)) {
        double linked;
        if (dual_bound(r, &linked, NULL)) end = FAILED_CALLBACK;
        else if (linked < r->linked_bound) r->linked_bound = linked;
    }
    write_pending_additionals(r);
    /* The consensus is a mean of values in [0, 1], which rounding can
     * leave an ulp outside (1 + 2^-52, where log(1 - u) is NaN); the
     * solution lies in the box. */
    for (int32_t i = 0; i < g->n_vars; ++i) s->sol_u[i] = clip01(s->ubar[i]);
    memcpy(s->sol_v, s->v, (size_t)g->n_add * sizeof(double));
    *integral = false;
    if (!failed && round_if_integral(r, integral)) end = FAILED_CALLBACK;
    s->sol_integral = *integral;
    s->sol_converged = end == CONVERGED;
    s->solved = !failed && end != FAILED_CALLBACK; /* no NaN handed out as a solution */
    s->sol_from_admm = s->solved;
    s->sol_factors_solved = r->reached;
    /* a graph proven infeasible keeps its last iterate readable (as AD3
     * returns it), but it is no solution: decoding, distributions,
     * backward and warm starts refuse it (a decoding violated the
     * constraints) */
    s->mode = failed || end == FAILED_CALLBACK || end == FAILED_INFEASIBLE
                  ? MODE_NONE
                  : (r->sparse ? MODE_SPARSE : MODE_MAP);
    /* the penalty goes on from where it stands; the factors' solutions
     * are read again (distribution, backward) at the one they were solved
     * at: a solve stopped at max_iter may have changed it after its last
     * factor step, and the distributions computed at the new one lay up to
     * 0.14 from the solution */
    s->eta_rel = r->eta_rel;
    s->eta = r->factors_eta;
    s->lambda_scale = r->scale;
    s->have_decoded = false;
    solver_distribution_clear(s);
    return end;
}

/* The status of a solve that ended so after t iterations (in *out) and its
 * return code, with the solver's message. */
static int outcome_status(admm_run *r, outcome end, int32_t t, concord_info *out) {
    concord_solver *s = r->s;
    switch (end) {
    case CONVERGED:
        out->status = out->integral ? CONCORD_STATUS_INTEGRAL : CONCORD_STATUS_FRACTIONAL;
        return CONCORD_OK;
    case STOPPED_MAX_ITER:
        out->status = CONCORD_STATUS_MAX_ITER;
        if (r->failed_factor >= 0)
            return solver_fail(s, CONCORD_ENOTCONVERGED,
                               "factor %d: its active set did not certify its SparseMAP "
                               "solution in %d rounds of %d oracle calls (the solution is the "
                               "best point it reached)",
                               r->failed_factor, t, r->st.max_inner_iter);
        return solver_fail(s, CONCORD_ENOTCONVERGED,
                           "not converged after %d iterations (primal residual %.3g, dual "
                           "%.3g)",
                           t, r->primal, r->dual);
    case STOPPED_TIME_LIMIT:
        out->status = CONCORD_STATUS_TIME_LIMIT;
        return solver_fail(s, CONCORD_ENOTCONVERGED,
                           "stopped at the time limit (%g s) after %d iterations",
                           r->st.time_limit, t);
    case STOPPED_INTERRUPTED:
        out->status = CONCORD_STATUS_INTERRUPTED;
        return solver_fail(s, CONCORD_ENOTCONVERGED,
                           "stopped by the progress callback after %d iterations", t);
    case FAILED_NUMERIC:
        out->status = CONCORD_STATUS_NUMERIC;
        return solver_fail(s, CONCORD_ENUMERIC, "non-finite values after %d iterations", t);
    case FAILED_INFEASIBLE:
        out->status = CONCORD_STATUS_INFEASIBLE;
        out->integral = false;
        return solver_infeasible(s, t, r->linked_bound, -r->gap.linked_l1);
    case FAILED_CALLBACK:
        out->status = CONCORD_STATUS_CALLBACK_FAILED;
        out->integral = false;
        return solver_callback_failed(s, r->failed_factor, r->callback_error);
    case FAILED_MEMORY:
        out->status = CONCORD_STATUS_UNSOLVED;
        out->integral = false;
        return solver_fail(s, CONCORD_ENOMEM, "factor %d: out of memory for its active set",
                           r->failed_factor);
    }
    return CONCORD_OK;
}

/* The end of a solve: the solution kept in the solver, the info and the
 * return code. */
static int finish(admm_run *r, outcome end, int32_t t, concord_info *info) {
    bool integral;
    end = keep_solution(r, end, t, &integral);
    concord_info out = {0};
    out.iterations = t;
    out.value = objective(r, r->s->sol_u, r->s->sol_v);
    /* an infeasible graph's is the bound that proved it */
    out.upper_bound =
        end == FAILED_INFEASIBLE ? r->linked_bound + r->gap.free_best : reported_bound(r);
    out.primal_residual = r->primal;
    out.dual_residual = r->dual;
    out.integral = integral;
    out.eta = r->eta_rel;
    out.factor_solves = r->solves;
    out.oracle_calls = r->oracle_calls;
    const int rc = outcome_status(r, end, t, &out);
    out.seconds = solver_seconds_since(&r->start);
    if (info) *info = out;
    return rc;
}

int solver_admm(concord_solver *s, const concord_settings *settings, bool sparse,
                const double *theta, concord_info *info) {
    admm_run r = {.s = s, .g = s->g, .sparse = sparse, .failed_factor = -1,
                  .reached = s->g->n_factors,
                  .cache_fraction = CACHE_FRACTION};
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    if (settings) r.st = *settings;
    else concord_default_settings(&r.st);
    char message[160];
    if (concord_check_settings(&r.st, message, sizeof message))
        return solver_fail(s, CONCORD_EINVAL, "%s", message);
    if (r.st.acceleration > 0 && s->aa && !anderson_reserve(s->aa, r.st.acceleration))
        return solver_fail(s, CONCORD_ENOMEM, "out of memory for the acceleration");
    r.theta = theta ? theta : solver_theta(s);
    r.phi = solver_phi(s);
    s->solved_own_revision = s->own_scores_revision;
    s->solved_graph_revision = s->g->scores_revision;
    const bool warm = r.st.warm_start && s->mode == (sparse ? MODE_SPARSE : MODE_MAP);
    start(&r, warm);
    int32_t t = 0;
    outcome end;
    if (separable(s)) {
        end = solve_separable(&r, &t);
    } else {
        if (acceleration_start(&r) == 0) begin_acceleration(&r);
        end = iterate(&r, &t);
    }
    return finish(&r, end, t, info);
}

int concord_solver_map(concord_solver *s, const concord_settings *settings, concord_info *info) {
    int rc = solver_begin_solve(s, info);
    if (rc) return rc;
    bool done; /* an acyclic graph solved exactly */
    rc = acyclic_try_map(s, settings, info, &done);
    return solver_end_solve(s, rc || done ? rc : solver_admm(s, settings, false, NULL, info),
                            info);
}

int concord_solver_sparse(concord_solver *s, const concord_settings *settings,
                          concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc : solver_end_solve(s, solver_admm(s, settings, true, NULL, info), info);
}
