/*
 * Max-product dynamic programming over a forest of units and factors (see
 * acyclic.h). Messages: a unit w sends its parent factor
 *   m_{w->f}(s) = score of state s + sum of its child factors' messages,
 * and a factor f sends its parent unit the max-marginals of its
 * configurations under its children's messages (maxmarg.c: its oracle
 * with the parent's states pushed on in turn). The assignment is then read
 * from the roots down: each root unit takes its best state, and each
 * factor's best configuration given its parent unit's state gives its
 * children's states.
 */
#include "acyclic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "maxmarg.h"
#include "units.h"

struct acyclic_plan {
    bool exact, lp_tight;
    int32_t n_nodes;    /* units, then factors (node n_units + f) */
    int32_t n_order;
    int32_t *order;     /* every node but the own XORs, each after its parent */
    int32_t *up;        /* per node: the incidence to its parent, -1 for a root */
    int32_t *msg_begin; /* per incidence: the offset of its messages */
    double *to_unit;    /* per incidence: the factor's message to the unit */
    double *to_factor;  /* per incidence: the unit's message to the factor */
    int32_t *state;     /* per unit: its state in the assignment */
    maxmarg mm;
};

void acyclic_free(acyclic_plan *p) {
    if (!p) return;
    free(p->order);
    free(p->up);
    free(p->msg_begin);
    free(p->to_unit);
    free(p->to_factor);
    free(p->state);
    maxmarg_free(&p->mm);
    free(p);
}

/* ---- the forest --------------------------------------------------------- */

static int32_t find_root(int32_t *uf, int32_t x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

/* Whether units and factors (own XORs aside) form a forest. */
static bool is_forest(const units *un, int32_t n_factors, int32_t *uf) {
    const int32_t n = un->n_units + n_factors;
    for (int32_t x = 0; x < n; ++x) uf[x] = x;
    for (int32_t k = 0; k < un->n_inc; ++k) {
        int32_t a = find_root(uf, un->inc_unit[k]);
        int32_t b = find_root(uf, un->n_units + un->inc_factor[k]);
        if (a == b) return false;
        uf[a] = b;
    }
    return true;
}

/* Whether every factor that touches a unit with whole[w] > 0 touches all
 * whole[w] of its states (variables appear once in a factor). `last` and
 * `links` have room for an entry per variable. */
static bool factors_cover_whole_units(const concord_graph *g, const int32_t *unit_of,
                                      const int32_t *whole, const bool *own, int32_t *last,
                                      int32_t *links) {
    for (int32_t i = 0; i < g->n_vars; ++i) last[i] = -1;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        if (own[f]) continue;
        const int32_t *var = g->link_var + g->factors[f].link_begin;
        const int32_t degree = g->factors[f].degree;
        for (int32_t j = 0; j < degree; ++j) {
            const int32_t w = unit_of[var[j]];
            if (last[w] != f) last[w] = f, links[w] = 0;
            links[w] += 1;
        }
        for (int32_t j = 0; j < degree; ++j) {
            const int32_t w = unit_of[var[j]];
            if (whole[w] > 0 && links[w] != whole[w]) return false;
        }
    }
    return true;
}

/* What the graph alone tells of whether units and factors (own XORs aside)
 * form a forest. */
typedef enum { GRAPH_CYCLIC, GRAPH_FOREST, GRAPH_UNDECIDED } graph_shape;

/* The shape told from the graph alone, before the units' lists are built:
 * most graphs are not forests, and building the lists first cost up to a
 * quarter of a first LP-MAP solve of AD3's small SRL graphs. Each
 * multi-variable is taken as one unit, named by its first state, and every
 * other variable as one: the units' own view of a multi-variable with its
 * own XOR, so that when every multi-variable has one the answer is exact. One
 * without is a unit only when the oracles say so (units.c); when every
 * factor that touches it touches all its states (UAI's tables), a cycle
 * through it passes just as well through one of its states, so a cycle
 * found holds either way; otherwise, and when no cycle is found, the
 * question is left to is_forest. `work` has room for five entries per
 * variable and one per factor, `own` (all false) for a flag per factor. */
static graph_shape shape_from_graph(const concord_graph *g, int32_t *work, bool *own) {
    const int32_t nv = g->n_vars;
    int32_t *uf = work, *unit_of = uf + nv + g->n_factors, *whole = unit_of + nv,
            *last = whole + nv, *links = last + nv;
    bool conditional = false; /* some multi-variable without its own XOR */
    for (int32_t i = 0; i < nv; ++i) unit_of[i] = i, whole[i] = 0;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        if (mv->one_hot_factor >= 0) own[mv->one_hot_factor] = true;
        else whole[mv->first] = mv->num_states, conditional = true;
        for (int32_t k = 0; k < mv->num_states; ++k) unit_of[mv->first + k] = mv->first;
    }
    if (conditional && !factors_cover_whole_units(g, unit_of, whole, own, last, links))
        return GRAPH_UNDECIDED;
    for (int32_t x = 0; x < nv + g->n_factors; ++x) uf[x] = x;
    for (int32_t i = 0; i < nv; ++i) last[i] = -1;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        if (own[f]) continue;
        const factor *fa = &g->factors[f];
        for (int32_t j = 0; j < fa->degree; ++j) {
            const int32_t w = unit_of[g->link_var[fa->link_begin + j]];
            if (last[w] == f) continue; /* one incidence per unit */
            last[w] = f;
            int32_t a = find_root(uf, w), b = find_root(uf, nv + f);
            if (a == b) return GRAPH_CYCLIC;
            uf[a] = b;
        }
    }
    return conditional ? GRAPH_UNDECIDED : GRAPH_FOREST;
}

/* Orders the forest breadth first from its roots (a unit where the tree
 * has one), recording each node's incidence to its parent. `seen` has
 * room for a flag per node. */
static void order_forest(const units *un, acyclic_plan *p, bool *seen) {
    const int32_t nu = un->n_units;
    memset(seen, 0, (size_t)p->n_nodes);
    int32_t head = 0, tail = 0;
    for (int32_t start = 0; start < p->n_nodes; ++start) {
        if (seen[start] || (start >= nu && un->own[start - nu] >= 0)) continue;
        /* a factor starts a tree only when it touches no unit */
        if (start >= nu && un->inc_begin[start - nu + 1] > un->inc_begin[start - nu]) continue;
        seen[start] = true;
        p->up[start] = -1;
        p->order[tail++] = start;
        while (head < tail) {
            const int32_t x = p->order[head++];
            const bool unit = x < nu;
            const int32_t b = unit ? un->unit_inc_begin[x] : un->inc_begin[x - nu];
            const int32_t e = unit ? un->unit_inc_begin[x + 1] : un->inc_begin[x - nu + 1];
            for (int32_t q = b; q < e; ++q) {
                const int32_t k = unit ? un->unit_inc[q] : q;
                const int32_t y = unit ? nu + un->inc_factor[k] : un->inc_unit[k];
                if (seen[y]) continue;
                seen[y] = true;
                p->up[y] = k;
                p->order[tail++] = y;
            }
        }
    }
    p->n_order = tail;
}

/* Whether every factor's message stays within MAXMARG_MAX_CALLS oracle
 * calls. */
static bool plan_enumeration(const units *un, const concord_graph *g, acyclic_plan *p) {
    for (int32_t f = 0; f < g->n_factors; ++f)
        if (un->own[f] < 0 && maxmarg_calls(&p->mm, f, p->up[un->n_units + f]) > MAXMARG_MAX_CALLS)
            return false;
    return true;
}

static void *zalloc(size_t n, size_t size, bool *failed) {
    void *q = calloc(n ? n : 1, size);
    if (!q) *failed = true;
    return q;
}

/* shape_from_graph with its own memory (GRAPH_UNDECIDED when out of it). */
static graph_shape graph_shape_of(const concord_graph *g) {
    const size_t nv = (size_t)g->n_vars, nf = (size_t)g->n_factors;
    int32_t *work = malloc((5 * nv + nf + 1) * sizeof *work);
    bool *own = calloc(nf + 1, sizeof *own);
    const graph_shape shape = work && own ? shape_from_graph(g, work, own) : GRAPH_UNDECIDED;
    free(work);
    free(own);
    return shape;
}

/* Builds the units and, when they and the factors form a forest, the plan
 * of its dynamic programming in p (else p stays a plan that is neither
 * exact nor tight). `shape` is what the graph alone told: GRAPH_FOREST
 * spares the test on the units. */
static int plan_if_forest(concord_solver *s, graph_shape shape, acyclic_plan *p) {
    int rc = units_build(s);
    if (rc) return rc;
    const units *un = s->units;
    const concord_graph *g = s->g;
    bool failed = false;
    p->n_nodes = un->n_units + g->n_factors;
    int32_t *uf = zalloc((size_t)p->n_nodes, sizeof(int32_t), &failed);
    if (uf && (shape == GRAPH_FOREST || is_forest(un, g->n_factors, uf)) &&
        !(rc = units_classify(s))) {
        size_t n_msg = 0;
        for (int32_t k = 0; k < un->n_inc; ++k) n_msg += (size_t)un->states[un->inc_unit[k]];
        const size_t ni = (size_t)un->n_inc;
        p->order = zalloc((size_t)p->n_nodes, sizeof(int32_t), &failed);
        p->up = zalloc((size_t)p->n_nodes, sizeof(int32_t), &failed);
        p->msg_begin = zalloc(ni + 1, sizeof(int32_t), &failed);
        p->to_unit = zalloc(n_msg, sizeof(double), &failed);
        p->to_factor = zalloc(n_msg, sizeof(double), &failed);
        p->state = zalloc((size_t)un->n_units, sizeof(int32_t), &failed);
        if (!failed && maxmarg_init(&p->mm, s, p->msg_begin)) failed = true;
        if (!failed) {
            int32_t offset = 0;
            for (int32_t k = 0; k < un->n_inc; ++k) {
                p->msg_begin[k] = offset;
                offset += un->states[un->inc_unit[k]];
            }
            p->msg_begin[un->n_inc] = offset;
            order_forest(un, p, (bool *)uf);
            p->exact = plan_enumeration(un, g, p);
            /* LP-MAP is integral when no incidence is enumerated */
            p->lp_tight = p->exact;
            for (int32_t k = 0; k < un->n_inc && p->lp_tight; ++k)
                p->lp_tight = !p->mm.enumerated[k];
        }
    }
    free(uf);
    if (rc) return rc;
    return failed ? solver_fail(s, CONCORD_ENOMEM, "out of memory") : CONCORD_OK;
}

int acyclic_prepare(concord_solver *s, bool *exact, bool *lp_tight) {
    if (!s->acyclic) {
        acyclic_plan *p = calloc(1, sizeof *p);
        if (!p) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
        const graph_shape shape = graph_shape_of(s->g);
        const int rc = shape == GRAPH_CYCLIC ? CONCORD_OK : plan_if_forest(s, shape, p);
        if (rc) {
            acyclic_free(p);
            return rc;
        }
        s->acyclic = p;
    }
    *exact = s->acyclic->exact;
    *lp_tight = s->acyclic->lp_tight;
    return CONCORD_OK;
}

/* ---- messages ----------------------------------------------------------- */

static double unit_score(const units *un, const double *theta, int32_t w, int32_t state) {
    if (un->multi[w]) return theta[un->first[w] + state];
    return state ? theta[un->first[w]] : 0.0;
}

/* The message of unit w to its parent factor: its scores plus its child
 * factors' messages. */
static void unit_message(acyclic_plan *p, const units *un, const double *theta, int32_t w) {
    const int32_t up = p->up[w];
    double *out = p->to_factor + p->msg_begin[up];
    for (int32_t t = 0; t < un->states[w]; ++t) out[t] = unit_score(un, theta, w, t);
    for (int32_t q = un->unit_inc_begin[w]; q < un->unit_inc_begin[w + 1]; ++q) {
        const int32_t k = un->unit_inc[q];
        if (k == up) continue;
        const double *x = p->to_unit + p->msg_begin[k];
        for (int32_t t = 0; t < un->states[w]; ++t) out[t] += x[t];
    }
}

int acyclic_solve(concord_solver *s, double *x, bool *feasible) {
    acyclic_plan *p = s->acyclic;
    const units *un = s->units;
    const double *theta = solver_theta(s);
    p->mm.phi = solver_phi(s);
    /* upward: children before parents */
    for (int32_t r = p->n_order - 1; r >= 0; --r) {
        const int32_t node = p->order[r], up = p->up[node];
        if (up < 0) continue;
        if (node < un->n_units) {
            unit_message(p, un, theta, node);
            continue;
        }
        const int32_t f = node - un->n_units;
        int rc = maxmarg_message(&p->mm, f, up, p->to_factor, p->to_unit + p->msg_begin[up]);
        if (rc) return solver_callback_failed(s, f, rc);
    }
    /* downward: each root unit at its best, then every factor's children */
    *feasible = true;
    for (int32_t r = 0; r < p->n_order; ++r) {
        const int32_t node = p->order[r], up = p->up[node];
        if (node >= un->n_units) {
            if (up < 0) continue; /* a factor over no unit */
            const int32_t f = node - un->n_units, first = un->inc_begin[f];
            double value;
            int rc = maxmarg_decide(&p->mm, f, up, p->state[un->inc_unit[up]], p->to_factor,
                                    &value);
            if (rc) return solver_callback_failed(s, f, rc);
            for (int32_t k = first; k < un->inc_begin[f + 1]; ++k)
                if (k != up) p->state[un->inc_unit[k]] = p->mm.best[k - first];
            continue;
        }
        if (up >= 0) continue; /* its parent factor decided */
        const int32_t w = node;
        double best = -INFINITY;
        p->state[w] = 0;
        for (int32_t t = 0; t < un->states[w]; ++t) {
            double b = unit_score(un, theta, w, t);
            for (int32_t q = un->unit_inc_begin[w]; q < un->unit_inc_begin[w + 1]; ++q)
                b += p->to_unit[p->msg_begin[un->unit_inc[q]] + t];
            if (b > best) best = b, p->state[w] = t;
        }
        if (best == -INFINITY) *feasible = false;
    }
    for (int32_t w = 0; w < un->n_units; ++w) units_set_state(un, w, p->state[w], x);
    return CONCORD_OK;
}

int acyclic_try_map(concord_solver *s, const concord_settings *settings, concord_info *info,
                    bool *done) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const int64_t first_call = s->map_calls;
    *done = false;
    concord_settings st;
    int rc = solver_settings(s, settings, &st);
    if (rc) return rc;
    if (!st.acyclic) return CONCORD_OK;
    bool exact, lp_tight;
    rc = acyclic_prepare(s, &exact, &lp_tight);
    if (rc || !lp_tight) return rc;
    *done = true;
    bool feasible;
    rc = acyclic_solve(s, s->round_u, &feasible);
    double value = -INFINITY;
    if (!rc && feasible) rc = solver_take_assignment(s, s->round_u, &value);
    concord_info out = {0};
    out.acyclic = true;
    out.iterations = 1; /* one pass, as for a separable graph */
    out.eta = st.eta;
    out.oracle_calls = s->map_calls - first_call;
    if (rc) {
        s->solved = false;
        s->mode = MODE_NONE;
        out.status = CONCORD_STATUS_CALLBACK_FAILED;
    } else if (!feasible || value == -INFINITY) {
        s->solved = false;
        s->mode = MODE_NONE;
        out.status = CONCORD_STATUS_INFEASIBLE;
        out.value = out.upper_bound = -INFINITY;
        rc = solver_fail(s, CONCORD_EINFEASIBLE,
                         "the constraints admit no solution (dynamic programming over the "
                         "acyclic graph found no allowed assignment)");
    } else {
        out.status = CONCORD_STATUS_INTEGRAL;
        out.integral = true;
        out.value = out.upper_bound = value;
        solver_state_at_solution(s);
        s->mode = MODE_MAP;
    }
    out.seconds = solver_seconds_since(&start);
    if (info) *info = out;
    return rc;
}
