/*
 * The solver: everything a solve produces or keeps besides the graph,
 * which it only reads. Sized once when it is created (the graph's
 * structure seen from its variables, multipliers, factor copies,
 * consensus, per-factor active sets, buffers, solution, backward vectors),
 * so that iterations and repeated solves allocate nothing; kept between
 * solves, so that a solve can start from the last one.
 */
#ifndef CONCORD_SOLVER_H
#define CONCORD_SOLVER_H

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "../graph.h"
#include "../qp/active_set.h"
#include "anderson.h"

/* What the solver's state holds (the kind of its last solve). */
typedef enum solve_mode { MODE_NONE = 0, MODE_MAP, MODE_SPARSE } solve_mode;

/* The sparse distribution of one factor (concord_solver_factor_distribution). */
typedef struct distribution {
    int32_t factor; /* -1: none */
    int32_t count;
    double *weight, *u, *v;
} distribution;

struct concord_solver {
    const concord_graph *g;
    uint64_t structure_revision; /* the graph's when this solver was made */
    int32_t n_factors;           /* and its factor count (the length of state) */

    /* The graph's structure seen from its variables. */
    int32_t *deg;            /* factors per variable */
    double *inv_deg;         /* 1/deg (0 for isolated variables) */
    double *reg_share;       /* w/deg: each copy's share of the variable's
                                LP-SparseMAP regularization weight w */
    int32_t *var_link_begin; /* CSR: the links of variable i are */
    int32_t *var_links;      /* var_links[var_link_begin[i] .. [i+1]) */
    int32_t *link_factor;
    int32_t max_degree;      /* the length of a, d, u and the factor buffers */
    bool has_callbacks;      /* some factor's calls may fail (user factors) */
    int64_t map_calls;       /* MAP oracle calls through solver_factor_map since
                                the solver was made (PSDD, MPLP and dynamic
                                programming report their solve's share) */
    atomic_bool busy;        /* inside a call that may run callbacks (solver_begin) */
    atomic_uintptr_t owner;  /* the thread running that call (its token), or 0 */
    uint64_t serial;         /* this solver's number among all made (never 0) */

    /* Scores: the solver's own where it has them, else the graph's. */
    double *own_theta, *own_phi;
    bool has_theta, has_phi;
    uint64_t own_scores_revision;

    /* The ADMM state, kept for warm starts. */
    double *lambda;     /* multipliers, one per link */
    double *uf;         /* factor solutions, variable space, one per link */
    double *ubar;       /* consensus */
    double *v;          /* factors' additional outputs */
    /* Flags are bool, not uint8_t: a store through a character type may
     * alias anything, which made the compiler reload every array pointer
     * after each flag set in the solver's inner loops. */
    bool *dirty;        /* factor inputs changed since its last solve */
    bool *v_pending;    /* per factor: its active set's last solve did not
                           write its additional outputs into v yet */
    bool *active;       /* variable must be revisited: a factor's copy of it
                           changed, or it moved last time */
    double *a_solved;   /* per link: the input of the factor's last solve */
    double *link_score; /* per link: theta_i / deg_i, set when a solve starts
                           (solver_link_scores) */
    double *slot_state; /* per link in variable-major order: lambda + eta ubar,
                           the vector the acceleration works on */
    int32_t *face;      /* per factor: the face code of its last closed-form QP */
    double *bound_input; /* per link: the factor's input at its last dual-bound term */
    double *bound_term;  /* per factor: that term, its best value there */
    active_set **state; /* per factor: its active set (NULL: closed form) */
    anderson *aa;       /* NULL when acceleration cannot pay on this graph */
    solve_mode mode;    /* what lambda, ubar, the active sets hold */
    double eta_rel;     /* the last solve's final penalty (relative) */
    double eta;         /* and absolute */
    double lambda_scale; /* the score scale lambda was computed at (0: none
                            yet); see solver_warm_multipliers */

    /* Work buffers for one factor at a time. */
    double *a, *d, *u;  /* inputs and output, variable space (max_degree) */
    double *vmap;       /* additional outputs of a MAP call */
    int8_t *held;       /* which links a MAP call holds (max_degree), and */
    double *held_a;     /* the scores pushing them (solver_factor_map_held) */
    factor_buffers buf;
    double *round_u, *round_v; /* candidate integral point */
    double *theta_work; /* the scores of a cost-augmented solve (hinge) */

    /* Results. */
    double *sol_u, *sol_v;
    bool solved;        /* sol_u, sol_v hold a solution */
    bool sol_integral;  /* it is integral (hence MAP-optimal for LP-MAP) */
    bool sol_converged; /* the ADMM solve behind it reached its tolerance
                           (not stopped by max_iter, a time limit or an
                           interrupt): the backward pass says so */
    bool sol_from_admm; /* it is the last ADMM solve's, whose active sets and
                           final inputs stand behind it (distribution.c) */
    int32_t sol_factors_solved; /* that solve solved the factors [0, this):
                                   a separable solve stopped early left the
                                   rest at their starting point */
    uint64_t solved_own_revision, solved_graph_revision; /* scores it had */
    double *decoded;
    bool have_decoded;
    distribution dist;
    double *backward_memory; /* the backward pass's link vectors, then the
                                scaled additional gradient */

    /* Exact inference and the dual methods, each made when first needed:
     * the units (units.c), clamps for branch and bound (clamp.c: per
     * variable -1 when free, else the value it is fixed at; per factor its
     * clamped links), the plan of max-product dynamic programming over an
     * acyclic graph (acyclic.c), the last branch and bound's statistics. */
    struct units *units;
    int8_t *clamp;
    int32_t *factor_clamps;
    struct acyclic_plan *acyclic;
    concord_exact_info exact_info;
    bool has_exact_info;

    atomic_bool in_batch; /* claimed by a running concord_solve_batch */
    char error[512];
    int callback_code; /* what a failing user callback returned in the last call, or 0 */
};

/* Whether s is not NULL and its graph's structure is the one it was made
 * for: a solver's buffers are sized by that structure, and once it changed
 * none of them is handed out. */
bool solver_is_current(const concord_solver *s);

/* Records a formatted message as the solver's last error; returns code. */
int solver_fail(concord_solver *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The scores the solver uses. */
static inline const double *solver_theta(const concord_solver *s) {
    return s->has_theta ? s->own_theta : s->g->theta;
}
static inline const double *solver_phi(const concord_solver *s) {
    return s->has_phi ? s->own_phi : s->g->phi;
}

/* Tells solver_begin that the calling thread's calls on s are a batch's
 * solve of s (NULL: none); returns the solver it named before (a batch
 * may run within a callback of another's solve). A solver a running batch
 * has claimed takes calls from that solve alone: an oracle of another
 * solver in the batch, or another thread, cannot reach it while a batch
 * thread may be solving it. */
const concord_solver *solver_set_batch_solve(const concord_solver *s);

/* CONCORD_EINVAL, with the refusal's message where the calling thread
 * reads it (concord_solver_last_error), when a call runs on s; otherwise
 * CONCORD_OK. */
int solver_refuse_if_busy(concord_solver *s);

/* Forgets the calling thread's refusal of a call on s, if it keeps one: a
 * batch's solve of s, on whatever thread, is the solver's last call. */
void solver_forget_refusal(const concord_solver *s);

/* Whether a batch holds s for another solve than this thread's, or a call
 * of another thread runs on it: its state may be changing, and the
 * functions that read a const solver give nothing (NULL, CONCORD_EINVAL
 * without a message). */
bool solver_held_elsewhere(const concord_solver *s);

/* solver_is_current, and not held elsewhere: what the functions that
 * hand out a const solver's arrays ask. */
bool solver_readable(const concord_solver *s);

/* Begins a public solver call (every public solver function that returns
 * a code begins with it): clears the last error (a call that succeeds
 * leaves none), then the solver is busy and its graph being solved until
 * solver_end. CONCORD_EINVAL with a message when the solver's graph
 * changed its structure since the solver was made; CONCORD_EINVAL, with
 * the message of concord_solver_last_error alone, while another call runs
 * on the solver (a callback's call on its own solver, which would change
 * the state the running call reads, or another thread's) or a batch holds
 * it; CONCORD_EINVAL when s is NULL. While it is busy, its graph refuses
 * to change (graph_unchanging). */
int solver_begin(concord_solver *s);

/* solver_begin for a solve: *info (unless NULL) first says the solve did
 * not run, so that a refused one leaves no stale or uninitialized info. */
int solver_begin_solve(concord_solver *s, concord_info *info);

/* Ends what solver_begin began; returns rc. A call that succeeded leaves
 * no message, not even that of a call a callback made and was refused. */
int solver_end(concord_solver *s, int rc);

/* solver_end for a solve begun by solver_begin_solve. A user oracle can
 * fail before the solve proper writes *info (the analysis of the graph
 * asks the oracles of factors over multi-variables; a loss asks for the
 * gold structure's outputs): that ends the solve as a failure during the
 * iterations does, *info saying "callback_failed" (not "unsolved") and no
 * solution left (not the previous solve's). */
int solver_end_solve(concord_solver *s, int rc, concord_info *info);

/* Whether the scores in use are those of the last solve. */
bool solver_scores_unchanged(const concord_solver *s);

/* The caching rule: link l's factor must be solved again when the link's
 * input a (theta_i/deg_i + lambda_l + eta ubar_i) left the one of the
 * factor's last solve by more than slack. Written as a flag update, not a
 * branch: which inputs move is as good as random from link to link. */
static inline void solver_mark_if_moved(concord_solver *s, int32_t l, double a, double slack) {
    s->dirty[s->link_factor[l]] |= fabs(a - s->a_solved[l]) > slack;
}

/* The QP weights of one factor's links (var: their variables): the
 * penalty eta for LP-MAP, eta + w/deg of the variable for LP-SparseMAP,
 * whose -1/2 sum_i w_i u_i^2 is split evenly among a variable's copies. */
static inline void solver_link_weights(const concord_solver *s, const int32_t *var, int32_t n,
                                       bool sparse, double eta, double *d) {
    for (int32_t j = 0; j < n; ++j) d[j] = sparse ? eta + s->reg_share[var[j]] : eta;
}

/* Factor f's best configuration among those that give each held link j
 * (held[j] >= 0) the value held[j] (0 or 1), under scores a (variable
 * space, every link) and additional scores b: its u and v, and its score
 * a.u + b.v in *score, -INFINITY when no configuration holds the links.
 * The oracle is asked with the held links scored +M when held at 1 and -M
 * at 0, M outweighing the other links' and the additional scores: a
 * vertex off the face loses at least M on a held link and gains less than
 * M on the others, when the vertices are 0/1. On a polytope with
 * fractional vertices (KNAPSACK) a vertex may leave a held link by a
 * sliver, and M grows until none does. Returns 0 or a user oracle's
 * error. */
int solver_factor_map_held(concord_solver *s, int32_t f, const double *a, const int8_t *held,
                           const double *b, double *u, double *v, double *score);

/* Evaluates factor f at the 0/1 point x (indexed by variable) under
 * additional scores phi: whether x restricted to f is allowed goes to
 * *allowed, and then the best additional score phi_f . v over the v allowed
 * with it to *score and that v to v (if not NULL; n_add entries): the
 * factor's configuration holding every link at x. Returns 0 or a user
 * oracle's error. */
int solver_factor_at(concord_solver *s, const double *phi, int32_t f, const double *x,
                     bool *allowed, double *score, double *v);

/* The value theta.x + sum_f phi_f.v_f of the 0/1 point x, each factor's
 * best additional outputs at x (solver_factor_at), or -INFINITY when some
 * factor does not allow x. Returns 0 or a user oracle's error (its factor
 * in *failed). */
int solver_assignment_value(concord_solver *s, const double *theta, const double *phi,
                            const double *x, double *value, int32_t *failed);

/* The error factor fa's last call through the solver's buffers reported
 * (a user callback's), or 0. */
static inline int solver_factor_failure(const concord_solver *s, const factor *fa) {
    return s->has_callbacks ? factor_failure(fa, s->buf.scratch) : 0;
}

/* The MAP oracle of factor f in variable space (factor_map_variables),
 * its score to *score; returns 0 or a user oracle's error. */
static inline int solver_factor_map(concord_solver *s, int32_t f, const double *a,
                                    const double *b, double *u, double *v, double *score) {
    const factor *fa = &s->g->factors[f];
    s->map_calls += 1;
    *score = factor_map_variables(fa, s->g->link_neg + fa->link_begin, a, b, u, v, &s->buf);
    return solver_factor_failure(s, fa);
}

/* The message for a user callback's error code `code` in factor f;
 * returns CONCORD_ECALLBACK. */
int solver_callback_failed(concord_solver *s, int32_t f, int code);

/* The message of a dual bound that proved the constraints infeasible
 * after `iterations`: its factors' part `bound` fell below `floor`, minus
 * the sum of the factors' |scores| (solver_gap's linked_l1); returns
 * CONCORD_EINFEASIBLE. */
int solver_infeasible(concord_solver *s, int32_t iterations, double bound, double floor);

/* Factor f's QP by the active set `state` (fresh or reset: the result is
 * then deterministic) at variable-space inputs a (degree), additional
 * scores phi and the weights in s->d, in literal space: s->buf.lit_u and
 * s->vmap receive the solution. Returns CONCORD_OK, or an error (with the
 * message) when the active set did not certify its solution or a
 * callback failed. */
int solver_active_set_qp(concord_solver *s, int32_t f, active_set *state, const double *a,
                         const double *phi);

/* The distribution behind (u, v) (u in variable space), the solution of
 * factor f's QP (a closed form's, or a user QP callback's) at
 * variable-space inputs a, additional scores phi and the weights in s->d:
 * the active set `state` (fresh) run on that QP, and, when it does not
 * certify a point within DISTRIBUTION_TOLERANCE of (u, v), once more on
 * the same QP with every weight below the scores' size raised to it and
 * the scores of those links raised by the difference times u. That QP has
 * the same solution (the gradient at it is the same, and a convex
 * problem's optimality is first order), but the point the active set
 * certifies no longer drifts along light links: with weights (1, 1e-12,
 * 1e-12) an XOR at a = (1, 1, 1), u = (5e-13, 0.5, 0.5), got the single
 * configuration (0, 1, 0), the objective differing by 1e-13 between the
 * two. Heavy weights are kept (lowering one would move its score by the
 * weight times the rounding of u). A mean still farther than the
 * tolerance is CONCORD_ENOTCONVERGED, with a message. May overwrite s->d;
 * s->buf.lit_u and s->vmap receive the distribution's mean. Otherwise
 * returns as solver_active_set_qp. */
int solver_distribution_qp(concord_solver *s, int32_t f, active_set *state, const double *a,
                           const double *phi, const double *u, const double *v);

/* Solves factor f's QP once more, from scratch, by the active set `state`
 * at its final inputs: those of its last solve, with that solve's weights.
 * Returns CONCORD_OK, or an error (with the message) when the active set
 * did not reach the solution or a callback failed. */
int solver_active_set_at_final_inputs(concord_solver *s, int32_t f, active_set *state);

/* Completes the face of factor f's solution in `state`, which holds the
 * factor's last solve (active_set_complete_face at that solve's inputs);
 * *complete says whether it is (false: stopped at
 * CONCORD_FACE_COMPLETION_LIMIT). Returns CONCORD_OK, or an error (with
 * the message) when out of memory or a callback failed. */
int solver_complete_face(concord_solver *s, int32_t f, active_set *state, bool *complete);

/* Oracle calls a solve of one factor's QP from scratch may make before it
 * must have certified its solution (distributions, single factors). */
enum { CERTIFY_ORACLE_CALLS = 1000 };

/* Copies the configurations of factor f's active set `state` and their
 * weights into the solver's distribution, in variable space; those of
 * weight 0 (the tied ones of a completed face, active_set_complete_face)
 * are left out. */
int solver_copy_distribution(concord_solver *s, int32_t f, const active_set *state);

/* Drops the last distribution (a new solve makes it stale). */
void solver_distribution_clear(concord_solver *s);

/* *out = *settings (NULL: the defaults), checked: CONCORD_OK, or
 * CONCORD_EINVAL with the message naming the setting. */
int solver_settings(concord_solver *s, const concord_settings *settings, concord_settings *out);

/* Wall seconds since *start (CLOCK_MONOTONIC). */
static inline double solver_seconds_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

/* Whether the time limit of `limit` seconds since *start (0: none) has
 * passed. */
static inline bool solver_time_is_up(const struct timespec *start, double limit) {
    return limit > 0.0 && solver_seconds_since(start) >= limit;
}

/* A time limit checked inside a loop whose steps may take nanoseconds (an
 * oracle call on a pair of variables) or seconds (thousands of calls on a
 * factor over thousands of variables): the clock is read once the links
 * handled since its last reading reach SOLVER_DEADLINE_WORK, so that cheap
 * steps do not pay for it and every expensive one is followed by a
 * reading. Once passed, the deadline stays passed. */
typedef struct solver_deadline {
    const struct timespec *start;
    double limit;  /* seconds since *start; 0: none */
    int64_t work;  /* links handled since the clock was last read */
    bool passed;
} solver_deadline;

enum { SOLVER_DEADLINE_WORK = 4096 };

/* Counts `links` more links handled; returns whether the deadline passed. */
static inline bool solver_deadline_passed(solver_deadline *d, int64_t links) {
    if (d->passed || d->limit <= 0.0) return d->passed;
    d->work += links;
    if (d->work < SOLVER_DEADLINE_WORK) return false;
    d->work = 0;
    d->passed = solver_time_is_up(d->start, d->limit);
    return d->passed;
}

/* Every point of the local polytope scores at least -l1 (l1 the sum of
 * |scores|): a dual bound below that proves the constraints infeasible,
 * once it is below by more than the rounding of the bound's terms (size:
 * the sum of their finite magnitudes, which LP-SparseMAP's multipliers and
 * warm-started multipliers can make far larger than l1; a term of -inf
 * makes the bound -inf). */
static inline bool solver_bound_proves_infeasible(double bound, double l1, double size) {
    const double scale = l1 > size ? l1 : size;
    return bound < -l1 - 1e-9 * (scale > 0.0 ? scale : 1.0);
}

/* The stopping tests PSDD and MPLP share, after iteration t: the best
 * dual bound fell by at most gap_tol over the last `window` iterations
 * (`history`, a ring of `window` entries, keeps them; it is updated here)
 * gives CONCORD_STATUS_STALLED, when `stall_counts` (the caller's steps
 * could have moved the bound that much); the settings' time limit since
 * start, CONCORD_STATUS_TIME_LIMIT; otherwise CONCORD_STATUS_UNSOLVED (go
 * on). */
int solver_dual_stop(double *history, int32_t window, int32_t t, double best_dual,
                     double gap_tol, bool stall_counts, double time_limit,
                     const struct timespec *start);

/* The end PSDD and MPLP share: the solver's results are void until they
 * set them; a user oracle's failure (rc, in factor `failed`) or a bound
 * that proved infeasibility (status; `bound` and `floor` as for
 * solver_infeasible) fills *out and returns the code with its message
 * (*handled true); otherwise nothing more (*handled false). */
int solver_dual_end(concord_solver *s, int rc, int32_t failed, int status, int32_t iterations,
                    double bound, double floor, concord_info *out, bool *handled);

/* concord_solver_decode after its checks, stopping its refinements where
 * the deadline (NULL: none) passes; without `mend`, the local search makes
 * single moves only (see decode.c). */
int solver_decode(concord_solver *s, solver_deadline *deadline, bool mend,
                  concord_decoding *result);

/* Makes the 0/1 assignment x (num_variables) the solver's solution: sol_u
 * is x, sol_v each factor's best additional outputs at x, *value theta . x
 * + phi . v (-INFINITY when some factor does not allow x; the solution is
 * then not marked solved). Also the decoded assignment. Returns
 * CONCORD_OK or a user oracle's failure (with the message). */
int solver_take_assignment(concord_solver *s, const double *x, double *value);

/* The state of a solution found without multipliers, by dynamic
 * programming: the consensus is the solution (a warm start for a later
 * solve, and what decoding starts from), each factor's copy of a variable
 * (concord_solver_links) the solution's value, each multiplier 0. */
void solver_state_at_solution(concord_solver *s);

/* The sum of |theta_i| and |phi_k|: it bounds |theta.u + phi.v| over the
 * whole box. */
double solver_score_l1(const concord_graph *g, const double *theta, const double *phi);

/* When a value counts as optimal beside a dual bound on it, in AD3's
 * LP-MAP, PSDD, MPLP and branch and bound (whose `tol` is exact_gap): the
 * gap within `tol` of the larger of the two,
 * or below `floor`, what moving the smallest-scored variable by `tol`
 * would change and at least the rounding error of sums of the scores.
 * Value and bound are the factors' parts (less the variables in no
 * factor, at their best in both, which would only widen the test). A gap
 * relative to the sum of |scores| instead let scores of +-1e6 that cancel
 * certify assignments 1.4 below an optimum of 3.9 (PSDD and MPLP, half of
 * such random graphs; branch and bound beside +-1e9) and stop AD3 at 0.19
 * against 0.31. */
typedef struct solver_gap {
    double tol, floor;
    double free_best;         /* the variables in no factor, at their best at
                                 every optimum of the local polytope and in
                                 every dual bound: sum of max(theta_i, 0)
                                 over them; a value less this is its
                                 factors' part */
    double linked_l1;         /* sum of |theta_i| over the other variables and
                                 of |phi_k|; a dual bound's factors' part
                                 proves infeasibility against it alone
                                 (against the whole sum, a variable in no
                                 factor scored 1e12 kept an infeasible graph
                                 from being recognized: max_iter); 0: every
                                 value is optimal */
    double free_rounding;     /* the rounding free_best's size brings to a
                                 sum of all the graph's terms, which a value
                                 less free_best keeps (allowed on top of the
                                 gap; 0 where values and bounds are summed
                                 over the factors' terms alone, as AD3's) */
    double least_score;       /* the least nonzero |theta_i| over the linked
                                 variables and |phi_k| (0: none) */
    double least_progress;    /* PSDD's and MPLP's least fall of the bound over
                                 their stall window that counts as progress:
                                 tol times the sum of the factors' |scores|
                                 (plus free_rounding). Their slow tails fall
                                 by less in practice at a fixed point of the
                                 descent; measured against the gap at the
                                 value instead, MPLP ran 7488 sweeps (10 s)
                                 on Promedas_11 instead of 24, and parsing01
                                 past a minute. */
} solver_gap;

/* The rule above, and the split of the scores, for theta, phi. */
solver_gap solver_gap_rule(const concord_solver *s, const double *theta, const double *phi,
                           double tol);

/* The gap the rule allows between a bound and a value (factors' parts;
 * an infinite one is left out of the size, and a value of -inf, no
 * assignment yet, allows the floor). Also branch and bound's margin for
 * pruning a node. */
double solver_gap_allowed(const solver_gap *gap, double linked_bound, double linked_value);

/* Whether the rule certifies the value (finite) against the bound. */
bool solver_gap_closed(const solver_gap *gap, double linked_bound, double linked_value);

/* Sets s->link_score to the link-level scores theta_i / deg_i and returns
 * the RMS of the nonzero ones and of phi (1 when all are zero): the score
 * scale, unit of AD3's penalty and PSDD's steps and the scale the
 * multipliers are kept in (see solver_warm_multipliers). */
double solver_link_scores(concord_solver *s, const double *theta, const double *phi);

/* Brings the multipliers a warm start keeps to the scale of the scores it
 * solves (scale, as lambda_scale was computed): LP-MAP is positively
 * homogeneous, scores times c have optimal multipliers times c, so they
 * are multiplied by scale / lambda_scale. Kept as they were, multipliers
 * of scores around 1e8 beside new scores of 1 took AD3 longer than
 * max_iter to unlearn (the penalty, relative to the new scale, moves them
 * by little more than the new scores per iteration). */
void solver_warm_multipliers(concord_solver *s, double scale);

/* The two ADMM solves (admm.c). */
int solver_admm(concord_solver *s, const concord_settings *settings, bool sparse,
                const double *theta, concord_info *info);

#endif /* CONCORD_SOLVER_H */
