/*
 * ADMM on the local polytope (DESIGN.md section 1): AD3 for LP-MAP and the
 * same loop for LP-SparseMAP, which only changes the factors' weights.
 *
 * Each factor keeps a copy u_f of its variables; consensus ubar and
 * multipliers lambda tie the copies together. One iteration:
 *   factor step     u_f = argmax over M_f of a.u + phi.v - 1/2 sum d_i u_i^2,
 *                   a_i = theta_i/deg_i + lambda_{f,i} + eta ubar_i,
 *                   d_i = eta (LP-MAP) or 1/deg_i + eta (LP-SparseMAP, whose
 *                   objective -1/2 |u|^2 is split evenly among the copies);
 *   consensus step  ubar_i <- ubar_i + alpha (mean_f u_{f,i} - ubar_i);
 *   multiplier step lambda_{f,i} -= eta (uhat_{f,i} - ubar_i), with the
 *                   over-relaxed uhat = ubar_old + alpha (u_{f,i} - ubar_old).
 * The LP-MAP penalty is eta_abs = eta * scale, where scale is the RMS of
 * the link-level scores, which makes the iterates invariant to rescaling
 * the scores (LP-SparseMAP is not scale-invariant: its unit is
 * max(scale, 1)). A factor whose inputs did not change since its last solve is not
 * solved again (its multipliers and variables did not move). Stopping is
 * per link: max |u_{f,i} - ubar_i| <= tol and eta * max |change of ubar|
 * <= tol, and for LP-MAP also |bound - value| <= tol * sum |scores|. The
 * LP-MAP dual bound sum_f max_{M_f} (theta/deg + lambda_f).u + phi.v
 * (plus max(0, -sum_f lambda_{f,i}) per variable, valid for any lambda) is
 * computed every bound_every iterations and at the end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util.h"
#include "anderson.h"
#include "workspace.h"

enum { ADAPT_EVERY = 10, MAX_ADAPTATIONS = 30, BOUND_RECHECK = 5 };
/* the first iterations adapt the penalty more often and by larger steps */
enum { EARLY_ITERATIONS = 40, EARLY_ADAPT_EVERY = 5 };
/* the range the relative penalty adapts within */
static const double ETA_REL_MIN = 1e-4, ETA_REL_MAX = 1e4;
#define CACHE_FRACTION 0.01

void concord_default_settings(concord_settings *s) {
    s->max_iter = 100000;
    s->tol = 1e-6;
    s->eta = 0.1;
    s->adapt_eta = true;
    s->relaxation = 1.0;
    s->bound_every = 25;
    s->max_inner_iter = 10;
    s->backward_tol = 1e-10;
    s->backward_max_iter = 1000;
    s->backward_power = false;
    s->acceleration = 8;
    s->verbosity = 0;
}

/* Sets the link-level scores theta_i / deg_i and returns the RMS of the
 * non-zero ones and of phi: the unit of the penalty. */
static double link_scores(const concord_graph *g, admm_workspace *w) {
    double sum = 0.0;
    int64_t count = 0;
    for (int32_t l = 0; l < g->n_links; ++l) {
        int32_t i = g->link_var[l];
        double x = g->theta[i] * w->inv_deg[i];
        w->link_score[l] = x;
        if (x != 0.0) sum += x * x, ++count;
    }
    for (int32_t k = 0; k < g->n_add; ++k)
        if (g->phi[k] != 0.0) sum += g->phi[k] * g->phi[k], ++count;
    double scale = count ? sqrt(sum / (double)count) : 1.0;
    return scale > 0.0 && isfinite(scale) ? scale : 1.0;
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

/* LP-MAP weighs every link alike (d_i = eta): w->d is filled once per
 * penalty rather than once per factor solve. */
static void fill_uniform_weights(admm_workspace *w, double eta) {
    for (int32_t j = 0; j < w->max_degree; ++j) w->d[j] = eta;
}

/* Solves factor f's QP at the current multipliers and consensus; returns
 * whether the solve was exact and counts its oracle calls. LP-SparseMAP's
 * weights are set here; LP-MAP's must be in w->d already
 * (fill_uniform_weights). Only the
 * variables whose copy changed need revisiting: a variable left alone last
 * iteration has every copy equal to its consensus, so if they stay put its
 * update is a no-op (on mostly integral graphs, most copies stay put).
 * Inlined into the loop, which then loads the workspace's arrays once per
 * iteration instead of once per factor (coref: -3% instructions). */
static inline __attribute__((always_inline)) bool solve_factor(const concord_graph *g,
                                                                admm_workspace *w, int32_t f,
                                                                double eta, int sparse,
                                                                int32_t max_inner,
                                                                int64_t *oracle_calls) {
    const factor *fa = &g->factors[f];
    const int32_t begin = fa->link_begin, n = fa->degree;
    const int32_t *var = g->link_var + begin;
    const uint8_t *neg = g->link_neg + begin;
    const double *lambda = w->lambda + begin, *score = w->link_score + begin;
    const double *ubar = w->ubar;
    double *lit_a = w->buf.lit_a, *d = w->d, *a_solved = w->a_solved + begin;
    if (sparse) workspace_link_weights(w, var, n, 1, eta, d);
    for (int32_t j = 0; j < n; ++j) {
        const double a = score[j] + eta * ubar[var[j]] + lambda[j];
        a_solved[j] = a;
        lit_a[j] = literal_qp_input(neg[j], a, d[j]);
    }
    qp_outcome out;
    factor_qp_literals(fa, w->state[f], lit_a, g->phi + fa->add_begin, d, w->buf.lit_u,
                       w->v + fa->add_begin, max_inner, &w->buf, &out);
    /* without branches: whether a copy moved is as good as random */
    double *uf = w->uf + begin;
    const double *lit_u = w->buf.lit_u;
    for (int32_t j = 0; j < n; ++j) {
        const double u = variable_value(neg[j], lit_u[j]);
        w->active[var[j]] |= u != uf[j];
        uf[j] = u;
    }
    w->face[f] = out.face;
    *oracle_calls += out.oracle_calls;
    return out.exact;
}

/* Lagrangian dual bound at the current multipliers. */
static double dual_bound(const concord_graph *g, admm_workspace *w) {
    double bound = 0.0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        for (int32_t j = 0; j < fa->degree; ++j) {
            int32_t l = fa->link_begin + j;
            w->a[j] = w->link_score[l] + w->lambda[l];
        }
        bound += factor_map_variables(fa, g->link_neg + fa->link_begin, w->a,
                                      g->phi + fa->add_begin, w->u, w->vmap, &w->buf);
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (w->deg[i] == 0) {
            bound += g->theta[i] > 0.0 ? g->theta[i] : 0.0;
            continue;
        }
        double sum = 0.0;
        for (int32_t k = w->var_link_begin[i]; k < w->var_link_begin[i + 1]; ++k)
            sum += w->lambda[w->var_links[k]];
        bound += sum < 0.0 ? -sum : 0.0;
    }
    return bound;
}

/* Sum of |scores|: bounds |objective| over the whole box. */
static double score_l1(const concord_graph *g) {
    double sum = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) sum += fabs(g->theta[i]);
    for (int32_t k = 0; k < g->n_add; ++k) sum += fabs(g->phi[k]);
    return sum;
}

/* The objective at the current consensus and factor outputs. */
static double current_value(const concord_graph *g, const admm_workspace *w) {
    double value = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) value += g->theta[i] * w->ubar[i];
    for (int32_t k = 0; k < g->n_add; ++k) value += g->phi[k] * w->v[k];
    return value;
}

static double objective(const concord_graph *g, const double *u, const double *v) {
    double value = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) value += g->theta[i] * u[i];
    for (int32_t k = 0; k < g->n_add; ++k) value += g->phi[k] * v[k];
    return value;
}

/* Residual balancing (Boyd et al. 2011, 3.4.1) on the RMS residuals, which
 * are less noisy than the per-link maxima used for stopping. The penalty
 * rises when the primal residual dominates twentyfold and falls when the
 * dual one dominates tenfold: symmetric thresholds make it oscillate, and a
 * hundredfold (tried first) left it too low on parsing and Promedas graphs,
 * where the primal residual stays 10-50 times the dual for thousands of
 * iterations. It moves by 2, but during the first EARLY_ITERATIONS (checked
 * every EARLY_ADAPT_EVERY), where the initial penalty is often far off, by
 * the square root of the residuals' ratio clipped to [2, 4]: the primal
 * residual goes as 1/eta and the dual as eta, so that factor would balance
 * them. Every change restarts the acceleration's history, so reaching the
 * right penalty in fewer changes matters (coref at the default penalty:
 * 237 -> 156 iterations; docs/performance.md). */
static double balancing_step(double ratio) { return fmin(fmax(sqrt(ratio), 2.0), 4.0); }

static double adapt_penalty(double primal_rms, double dual_rms, double eta_rel, int early) {
    if (primal_rms > 20.0 * dual_rms && eta_rel < ETA_REL_MAX)
        return early ? balancing_step(primal_rms / dual_rms) : 2.0;
    if (dual_rms > 10.0 * primal_rms && eta_rel > ETA_REL_MIN)
        return early ? 1.0 / balancing_step(dual_rms / primal_rms) : 0.5;
    return 1.0;
}

static double seconds_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

int concord_check_settings(const concord_settings *s, char *error, size_t error_size) {
    char message[128] = "";
    if (!s) snprintf(message, sizeof message, "no settings");
    else if (s->max_iter < 1)
        snprintf(message, sizeof message, "max_iter must be >= 1 (got %d)", s->max_iter);
    else if (!(s->tol > 0.0) || !isfinite(s->tol))
        snprintf(message, sizeof message, "tol must be positive and finite (got %g)", s->tol);
    else if (!(s->eta > 0.0) || !isfinite(s->eta))
        snprintf(message, sizeof message, "eta must be positive and finite (got %g)", s->eta);
    else if (!(s->relaxation >= 1.0 && s->relaxation < 2.0))
        snprintf(message, sizeof message, "relaxation must be in [1, 2) (got %g)", s->relaxation);
    else if (s->max_inner_iter < 1)
        snprintf(message, sizeof message, "max_inner_iter must be >= 1 (got %d)",
                 s->max_inner_iter);
    else if (s->bound_every < 1)
        snprintf(message, sizeof message, "bound_every must be >= 1 (got %d)", s->bound_every);
    else if (!(s->backward_tol > 0.0) || !isfinite(s->backward_tol))
        snprintf(message, sizeof message, "backward_tol must be positive and finite (got %g)",
                 s->backward_tol);
    else if (s->acceleration < 0 || s->acceleration > ANDERSON_MAX_MEMORY)
        snprintf(message, sizeof message, "acceleration must be in [0, %d] (got %d)",
                 ANDERSON_MAX_MEMORY, s->acceleration);
    else if (s->backward_max_iter < 1)
        snprintf(message, sizeof message, "backward_max_iter must be >= 1 (got %d)",
                 s->backward_max_iter);
    if (!message[0]) return CONCORD_OK;
    if (error && error_size) snprintf(error, error_size, "%s", message);
    return CONCORD_EINVAL;
}

static int check_settings(concord_graph *g, const concord_settings *s) {
    char message[128];
    if (concord_check_settings(s, message, sizeof message))
        return graph_fail(g, CONCORD_EINVAL, "%s", message);
    return CONCORD_OK;
}

/* Rounds a near-integral consensus when every factor allows the rounded
 * point; the additional outputs are then the factors' own at that point.
 * Returns whether it did. */
static int round_if_integral(const concord_graph *g, admm_workspace *w, double tol) {
    double slack = 10.0 * tol < 1e-3 ? 10.0 * tol : 1e-3;
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (fabs(g->sol_u[i] - round(g->sol_u[i])) > slack) return 0;
    for (int32_t i = 0; i < g->n_vars; ++i) w->round_u[i] = round(g->sol_u[i]);
    for (int32_t f = 0; f < g->n_factors; ++f) {
        double score;
        const factor *fa = &g->factors[f];
        if (!workspace_factor_at(g, w, f, w->round_u, &score, w->round_v + fa->add_begin))
            return 0;
    }
    memcpy(g->sol_u, w->round_u, (size_t)g->n_vars * sizeof(double));
    memcpy(g->sol_v, w->round_v, (size_t)g->n_add * sizeof(double));
    return 1;
}

/* Whether no variable has two factors: the problem then separates. */
static int separable(const concord_graph *g, const admm_workspace *w) {
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (w->deg[i] > 1) return 0;
    return 1;
}

/* Solves a separable graph exactly: LP-MAP by each factor's MAP oracle
 * (the LP over one polytope has a vertex optimum), LP-SparseMAP by each
 * factor's QP with d = 1 (the penalty is 0: SparseMAP itself). */
static int solve_separable(const concord_graph *g, admm_workspace *w, int sparse, double *eta,
                           int64_t *solves, int64_t *oracle_calls) {
    *eta = 0.0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        const int32_t b = fa->link_begin;
        if (sparse) {
            bool exact = false;
            for (int32_t round = 0; round < 1000 && !exact; ++round)
                exact = solve_factor(g, w, f, 0.0, 1, 100, oracle_calls);
            if (!exact) return 0;
        } else {
            for (int32_t j = 0; j < fa->degree; ++j) {
                w->a[j] = g->theta[g->link_var[b + j]];
                w->a_solved[b + j] = w->a[j];
            }
            factor_map_variables(fa, g->link_neg + b, w->a, g->phi + fa->add_begin, w->uf + b,
                                 w->v + fa->add_begin, &w->buf);
        }
        *solves += 1;
        for (int32_t j = 0; j < fa->degree; ++j) w->ubar[g->link_var[b + j]] = w->uf[b + j];
    }
    return 1;
}

/* The objective: theta.u + phi.v, minus |u|^2 / 2 for LP-SparseMAP. */
static double mode_objective(const concord_graph *g, const double *u, const double *v,
                             int sparse) {
    double value = objective(g, u, v);
    if (sparse)
        for (int32_t i = 0; i < g->n_vars; ++i) value -= 0.5 * u[i] * u[i];
    return value;
}

static int admm_solve(concord_graph *g, const concord_settings *settings, int sparse,
                      concord_info *info) {
    if (!g) return CONCORD_EINVAL;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    concord_settings s;
    if (settings) {
        s = *settings;
    } else {
        concord_default_settings(&s);
    }
    int rc = check_settings(g, &s);
    if (rc) return rc;
    if (!g->ws && !(g->ws = workspace_build(g)))
        return graph_fail(g, CONCORD_ENOMEM, "out of memory building the solver workspace");
    if (!g->sol_u) {
        g->sol_u = malloc((size_t)(g->n_vars ? g->n_vars : 1) * sizeof(double));
        g->sol_v = malloc((size_t)(g->n_add ? g->n_add : 1) * sizeof(double));
        if (!g->sol_u || !g->sol_v) {
            graph_invalidate(g);
            return graph_fail(g, CONCORD_ENOMEM, "out of memory for the solution");
        }
    }
    admm_workspace *w = g->ws;
    const double score_rms = link_scores(g, w);
    const double scale = sparse ? fmax(score_rms, 1.0) : score_rms;
    const double alpha = s.relaxation;
    double eta_rel = s.eta;
    double eta = eta_rel * scale;
    if (!sparse) fill_uniform_weights(w, eta);

    for (int32_t l = 0; l < g->n_links; ++l) w->lambda[l] = 0.0;
    for (int32_t i = 0; i < g->n_vars; ++i) {
        /* a variable in no factor takes its best value once and for all */
        w->ubar[i] = w->deg[i] ? 0.5 : (sparse ? clip01(g->theta[i]) : (g->theta[i] > 0.0));
        w->active[i] = w->deg[i] > 0;
    }
    memset(w->dirty, 1, (size_t)g->n_factors);
    for (int32_t f = 0; f < g->n_factors; ++f)
        if (w->state[f]) active_set_reset(w->state[f]);

    concord_info out = {0};
    out.upper_bound = INFINITY;
    int converged = 0, numeric = 0, infeasible = 0;
    int32_t t, adaptations = 0, last_bound = 0;
    /* Every point of the polytope scores at least -l1: a dual bound below
     * that proves the constraints infeasible. It also sets the scale of
     * the gap test. */
    const double l1 = score_l1(g);
    const double gap_tol = s.tol * (l1 > 0.0 ? l1 : 1.0);
    int64_t solves = 0, oracle_calls = 0;
    double primal = INFINITY, dual = INFINITY;
    if (separable(g, w)) {
        /* No variable is shared: each factor alone is exact in one step. */
        t = 1;
        converged = solve_separable(g, w, sparse, &eta, &solves, &oracle_calls);
        primal = dual = 0.0;
        numeric = !converged;
    }
    anderson *aa = NULL;
    if (!converged && s.acceleration > 0 && anderson_worthwhile(g)) {
        if (w->anderson && w->anderson_memory != s.acceleration) {
            anderson_free(w->anderson);
            w->anderson = NULL;
        }
        if (!w->anderson && !(w->anderson = anderson_new(g, s.acceleration)))
            return graph_fail(g, CONCORD_ENOMEM, "out of memory for the acceleration");
        w->anderson_memory = s.acceleration;
        aa = w->anderson;
        anderson_begin(aa, w, eta);
    }
    for (t = 1; !converged && !numeric && t <= s.max_iter; ++t) {
        /* A factor is solved again only when an input moved by more than
         * this: its output would move by at most CACHE_FRACTION * tol. */
        const double cache_slack = CACHE_FRACTION * s.tol * eta;
        int32_t inexact = 0;
        for (int32_t f = next_set(w->dirty, 0, g->n_factors); f < g->n_factors;
             f = next_set(w->dirty, f + 1, g->n_factors)) {
            bool exact = solve_factor(g, w, f, eta, sparse, s.max_inner_iter, &oracle_calls);
            ++solves;
            /* an inexact inner solve is resumed next iteration */
            w->dirty[f] = !exact;
            inexact += !exact;
        }
        primal = 0.0;
        double change = 0.0, primal_sq = 0.0, change_sq = 0.0;
        for (int32_t i = next_set(w->active, 0, g->n_vars); i < g->n_vars;
             i = next_set(w->active, i + 1, g->n_vars)) {
            const int32_t *links = w->var_links + w->var_link_begin[i];
            const int32_t deg = w->deg[i];
            double old = w->ubar[i], sum = 0.0;
            for (int32_t k = 0; k < deg; ++k) sum += w->uf[links[k]];
            double mean = sum * w->inv_deg[i];
            double now = old + alpha * (mean - old);
            if (!isfinite(now)) numeric = 1;
            double moved = fabs(now - old);
            if (moved > change) change = moved;
            change_sq += deg * moved * moved;
            w->ubar[i] = now;
            int still = now != old;
            const double base = g->theta[i] * w->inv_deg[i] + eta * now;
            for (int32_t k = 0; k < deg; ++k) {
                int32_t l = links[k];
                double uf = w->uf[l];
                double r = fabs(uf - now);
                primal = r > primal ? r : primal;
                primal_sq += r * r;
                /* branch-free updates: which links move is unpredictable */
                double step = eta * (old + alpha * (uf - old) - now);
                w->lambda[l] -= step;
                still |= step != 0.0;
                workspace_mark_if_moved(w, l, base + w->lambda[l], cache_slack);
            }
            if (still && aa) anderson_moved(aa, i, t);
            w->active[i] = still;
        }
        dual = eta_rel * change;
        if (numeric) break;
        /* Converged: small residuals, every inner solve exact, and the value
         * within gap_tol of the best dual bound, recomputed when stale. */
        const int small = primal <= s.tol && dual <= s.tol && inexact == 0;
        if (small && (sparse || fabs(out.upper_bound - current_value(g, w)) <= gap_tol)) {
            converged = 1;
            break;
        }
        if (t % s.bound_every == 0 || (small && t - last_bound >= BOUND_RECHECK)) {
            double bound = dual_bound(g, w);
            last_bound = t;
            if (bound < out.upper_bound) out.upper_bound = bound;
            if (s.verbosity > 0)
                fprintf(stderr, "iter %6d  primal %.3e  dual %.3e  eta %.3g  bound %.12g  solves %lld\n",
                        t, primal, dual, eta_rel, bound, (long long)solves);
            if (bound < -l1 - 1e-9 * (l1 > 0.0 ? l1 : 1.0)) {
                infeasible = 1;
                break;
            }
            if (small && fabs(out.upper_bound - current_value(g, w)) <= gap_tol) {
                converged = 1;
                break;
            }
        }
        /* The penalty adapts a bounded number of times: ADMM converges for
         * any fixed penalty, while unbounded rebalancing can cycle. */
        const int early = t <= EARLY_ITERATIONS;
        if (s.adapt_eta && t % (early ? EARLY_ADAPT_EVERY : ADAPT_EVERY) == 0 &&
            adaptations < MAX_ADAPTATIONS) {
            double factor_step = adapt_penalty(sqrt(primal_sq / (double)g->n_links),
                                               eta_rel * sqrt(change_sq / (double)g->n_links),
                                               eta_rel, early);
            if (factor_step != 1.0) {
                eta_rel = fmin(fmax(eta_rel * factor_step, ETA_REL_MIN), ETA_REL_MAX);
                eta = eta_rel * scale;
                if (!sparse) fill_uniform_weights(w, eta);
                memset(w->dirty, 1, (size_t)g->n_factors);
                adaptations += 1;
                if (aa) anderson_restart(aa, w, eta, t);
            }
        }
        if (aa) anderson_after(aa, w, eta, t, cache_slack);
    }
    if (t > s.max_iter) t = s.max_iter;
    if (aa && s.verbosity > 0) anderson_report(aa, stderr);

    /* the bound is final unless the state moved since it was computed
     * (convergence found in the iteration that computed it leaves it so) */
    if (!(converged && last_bound == t)) {
        double bound = dual_bound(g, w);
        if (bound < out.upper_bound) out.upper_bound = bound;
    }
    memcpy(g->sol_u, w->ubar, (size_t)g->n_vars * sizeof(double));
    memcpy(g->sol_v, w->v, (size_t)g->n_add * sizeof(double));
    out.integral = !numeric && round_if_integral(g, w, s.tol);
    g->sol_integral = out.integral;
    out.value = mode_objective(g, g->sol_u, g->sol_v, sparse);
    w->sparse = sparse;
    w->eta = eta;
    graph_distribution_free(g);
    out.iterations = t;
    out.primal_residual = primal;
    out.dual_residual = dual;
    out.eta = eta_rel;
    out.factor_solves = solves;
    out.oracle_calls = oracle_calls;
    if (numeric) {
        out.status = CONCORD_STATUS_NUMERIC;
        rc = graph_fail(g, CONCORD_ENUMERIC, "non-finite values after %d iterations", t);
    } else if (infeasible) {
        out.status = CONCORD_STATUS_INFEASIBLE;
        out.integral = false;
        rc = graph_fail(g, CONCORD_EINFEASIBLE,
                        "the constraints admit no solution: after %d iterations the dual bound "
                        "%.6g is below every feasible value (>= %.6g)",
                        t, out.upper_bound, -l1);
    } else if (converged) {
        out.status = out.integral ? CONCORD_STATUS_INTEGRAL : CONCORD_STATUS_FRACTIONAL;
        rc = CONCORD_OK;
    } else {
        out.status = CONCORD_STATUS_MAX_ITER;
        rc = graph_fail(g, CONCORD_ENOTCONVERGED,
                        "not converged after %d iterations (primal residual %.3g, dual %.3g)",
                        t, primal, dual);
    }
    out.seconds = seconds_since(&start);
    if (info) *info = out;
    return rc;
}

int concord_solve_map(concord_graph *g, const concord_settings *settings,
                      concord_info *info) {
    return admm_solve(g, settings, 0, info);
}

int concord_solve_sparse(concord_graph *g, const concord_settings *settings,
                         concord_info *info) {
    return admm_solve(g, settings, 1, info);
}
