/*
 * Exact MAP (concord_solver_exact): dynamic programming when the graph is
 * a forest (acyclic.c), otherwise branch and bound over AD3, after Das,
 * Martins and Smith (2012) and AD3's --exact, with what that search lacks:
 * no depth limit, best-first order, pruning during a node's solve, and a
 * certificate.
 *
 * A node is a set of clamps (clamp.c): variables fixed at 0 or 1. Its
 * LP-MAP is solved by the ADMM loop, warm-started from its parent's
 * multipliers and consensus, with the progress callback of the solve
 * stopping it as soon as its dual bound (valid at any multipliers) falls
 * to the best value found plus the gap tolerance; before that, one dual
 * bound at the parent's multipliers may prune it without iterating. An
 * integral LP solution closes the node; otherwise an assignment decoded
 * from the LP solution (decode.c) may improve the best one, and the node
 * is split on its most fractional unit (units.h): a binary variable into
 * 0 and 1; a multi-variable into two sets of states of about equal LP
 * mass, each branch clamping the other set's states to 0 (its one-hot
 * constraint does the rest). The child on the side of the LP solution is
 * taken first. The upper bound on the MAP value is the highest of the
 * best value, the bounds of the open nodes (each inherits its parent's
 * bound), of the nodes pruned (each at most the best value plus the
 * tolerance when pruned) and of nodes left unresolved.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acyclic.h"
#include "clamp.h"
#include "solver.h"
#include "units.h"

/* Bytes of parents' states kept for warm starts at most. */
#define WARM_BYTES_CAP ((size_t)256 << 20)
/* Iterations between dual bounds in a node's solve (at most). */
enum { NODE_BOUND_EVERY = 10, REPORT_EVERY = 100, TIGHTENINGS = 2, STALLS = 20, SLOW_REPORTS = 3 };
/* The progress callback is also called once this many seconds have passed
 * since its last call, within a node's solve too: every REPORT_EVERY nodes
 * alone left a callback that watches for Ctrl-C unheard for a second on a
 * 30 x 30 grid, and for as long as a hundred nodes take on larger graphs. */
#define REPORT_SECONDS 0.1

/* A parent's ADMM state, shared by its children. */
typedef struct warm {
    int32_t refs;
    double eta_rel;
    double *lambda, *ubar; /* one block: n_links, then n_vars */
} warm;

/* One variable fixed at a value. */
typedef struct clamp_entry {
    int32_t var;
    int32_t value;
} clamp_entry;

/* The clamps a node adds to its parent's: clamps[begin .. begin + count),
 * and the parent's decision (-1: the root's). */
typedef struct decision {
    int32_t parent;
    int64_t begin;
    int32_t count;
} decision;

typedef struct node {
    double bound;     /* an upper bound on the node's MAP value */
    int32_t depth;
    int32_t decision; /* -1: the root */
    int64_t seq;      /* creation order */
    warm *warm;       /* NULL: start from the solver's current state */
} node;

/* How a node's solve ended. */
typedef enum node_end { NODE_PRUNED, NODE_INFEASIBLE, NODE_CLOSED, NODE_BRANCHED,
                        NODE_UNRESOLVED, NODE_STOPPED } node_end;

typedef struct bb {
    concord_solver *s;
    const concord_graph *g;
    const units *un;
    concord_settings st;
    struct timespec start;
    solver_gap gap; /* when the best value counts as optimal (exact_gap) */
    /* open nodes: a binary heap (best first) or a stack (depth first) */
    node *open;
    int64_t n_open, cap_open, next_seq;
    decision *decisions;
    int64_t n_decisions, cap_decisions;
    clamp_entry *clamps;
    int64_t n_clamps, cap_clamps;
    int32_t *applied; /* the variables clamped for the current node */
    int32_t n_applied;
    size_t warm_bytes;
    /* the best assignment */
    double *best_x;
    double best_value;
    bool have_best;
    /* the root's LP solution, returned when no assignment is found */
    double *root_u, *root_v;
    bool have_root;
    warm *root_warm;
    double pruned_bound;     /* the highest bound of a node pruned or closed */
    double unresolved_bound; /* the highest bound of a node left unresolved */
    int64_t heuristic_count;
    int64_t iterations, factor_solves, oracle_calls;
    double last_eta;
    concord_exact_info xi;
    int stop; /* why the search stopped early (UNSOLVED: it did not) */
    double next_report; /* seconds into the search: the progress is due */
    /* the node solve under way: its tolerance, last bound, stalled reports */
    double node_tol, node_last_bound, node_history[SLOW_REPORTS];
    double node_bound; /* the bound the node being solved started with */
    int32_t node_stalls, node_reports;
    /* branching work */
    int32_t *order;
    double *mass;
    double *link_vote, *votes; /* the factors' maximizers (node_bound) */
} bb;

static double elapsed(const bb *b) { return solver_seconds_since(&b->start); }

/* The bound at or below which a node cannot improve on the best value
 * enough to matter: the gap the rule allows at that value. */
static double cutoff(const bb *b) {
    if (!b->have_best) return -INFINITY;
    if (b->gap.linked_l1 == 0.0) return INFINITY; /* every value is optimal */
    return b->best_value + solver_gap_allowed(&b->gap, INFINITY, b->best_value - b->gap.free_best);
}

/* ---- memory ------------------------------------------------------------- */

static bool grow(void **p, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return true;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

static warm *warm_take(bb *b) {
    const concord_graph *g = b->g;
    const size_t bytes = ((size_t)g->n_links + (size_t)g->n_vars) * sizeof(double);
    if (b->warm_bytes + bytes > WARM_BYTES_CAP) return NULL;
    warm *w = malloc(sizeof *w);
    double *block = w ? malloc(bytes ? bytes : 1) : NULL;
    if (!block) {
        free(w);
        return NULL;
    }
    w->refs = 0;
    w->eta_rel = b->s->eta_rel;
    w->lambda = block;
    w->ubar = block + g->n_links;
    memcpy(w->lambda, b->s->lambda, (size_t)g->n_links * sizeof(double));
    memcpy(w->ubar, b->s->ubar, (size_t)g->n_vars * sizeof(double));
    b->warm_bytes += bytes;
    return w;
}

static void warm_release(bb *b, warm *w) {
    if (!w || --w->refs > 0) return;
    b->warm_bytes -= ((size_t)b->g->n_links + (size_t)b->g->n_vars) * sizeof(double);
    free(w->lambda);
    free(w);
}

/* ---- open nodes --------------------------------------------------------- */

static bool better(const node *x, const node *y) {
    if (x->bound != y->bound) return x->bound > y->bound;
    if (x->depth != y->depth) return x->depth > y->depth;
    return x->seq > y->seq;
}

static bool push_node(bb *b, node n) {
    if (!grow((void **)&b->open, &b->cap_open, b->n_open + 1, sizeof(node))) return false;
    if (n.warm) n.warm->refs += 1;
    int64_t k = b->n_open++;
    if (b->st.search == CONCORD_SEARCH_DEPTH_FIRST) {
        b->open[k] = n;
        return true;
    }
    while (k > 0 && better(&n, &b->open[(k - 1) / 2])) {
        b->open[k] = b->open[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    b->open[k] = n;
    return true;
}

static node pop_node(bb *b) {
    if (b->st.search == CONCORD_SEARCH_DEPTH_FIRST) return b->open[--b->n_open];
    node top = b->open[0], last = b->open[--b->n_open];
    int64_t k = 0;
    for (;;) {
        int64_t c = 2 * k + 1;
        if (c >= b->n_open) break;
        if (c + 1 < b->n_open && better(&b->open[c + 1], &b->open[c])) c += 1;
        if (!better(&b->open[c], &last)) break;
        b->open[k] = b->open[c];
        k = c;
    }
    if (b->n_open > 0) b->open[k] = last;
    return top;
}

/* The highest bound of an open node (-INFINITY when none). */
static double open_bound(const bb *b) {
    if (b->n_open == 0) return -INFINITY;
    if (b->st.search == CONCORD_SEARCH_BEST_FIRST) return b->open[0].bound;
    double best = -INFINITY;
    for (int64_t k = 0; k < b->n_open; ++k) best = fmax(best, b->open[k].bound);
    return best;
}

/* The upper bound on the MAP value now. */
static double upper_bound(const bb *b) {
    double ub = fmax(open_bound(b), fmax(b->pruned_bound, b->unresolved_bound));
    return b->have_best ? fmax(ub, b->best_value) : ub;
}

/* ---- clamps and warm starts --------------------------------------------- */

/* Fixes the variables of the node with decision d (and its ancestors'). */
static void apply_clamps(bb *b, int32_t d) {
    concord_solver *s = b->s;
    for (int32_t k = 0; k < b->n_applied; ++k) clamp_set(s, b->applied[k], -1);
    b->n_applied = 0;
    for (; d >= 0; d = b->decisions[d].parent) {
        const decision *dc = &b->decisions[d];
        for (int32_t k = 0; k < dc->count; ++k) {
            const clamp_entry *c = &b->clamps[dc->begin + k];
            clamp_set(s, c->var, c->value);
            b->applied[b->n_applied++] = c->var;
        }
    }
}

/* The state a node's solve starts from: its parent's when kept, with every
 * clamped variable's consensus at its value. */
static void prepare_state(bb *b, const node *n) {
    concord_solver *s = b->s;
    const concord_graph *g = b->g;
    if (n->warm) {
        memcpy(s->lambda, n->warm->lambda, (size_t)g->n_links * sizeof(double));
        memcpy(s->ubar, n->warm->ubar, (size_t)g->n_vars * sizeof(double));
        s->eta_rel = n->warm->eta_rel;
        s->mode = MODE_MAP;
    }
    for (int32_t k = 0; k < b->n_applied; ++k) s->ubar[b->applied[k]] = s->clamp[b->applied[k]];
}

/* The dual bound of the node at the current multipliers, without
 * iterating (as the ADMM loop computes it); the factors' maximizers vote:
 * b->votes[i] is the mean of variable i over its factors' maximizers (the
 * bound equals the value of an assignment exactly when they agree).
 * Returns 0 or a user oracle's error (its factor in *failed). */
static int node_bound(bb *b, double *bound, int32_t *failed) {
    concord_solver *s = b->s;
    const concord_graph *g = b->g;
    const double *theta = solver_theta(s), *phi = solver_phi(s);
    double sum = 0.0;
    for (int32_t f = 0; f < g->n_factors && sum > -INFINITY; ++f) {
        const factor *fa = &g->factors[f];
        for (int32_t j = 0; j < fa->degree; ++j) {
            const int32_t l = fa->link_begin + j, i = g->link_var[l];
            s->a[j] = theta[i] * s->inv_deg[i] + s->lambda[l];
        }
        double best;
        int rc = clamp_touches(s, f)
                     ? clamp_factor_map(s, f, s->a, phi + fa->add_begin, s->u, s->vmap, &best)
                     : solver_factor_map(s, f, s->a, phi + fa->add_begin, s->u, s->vmap, &best);
        if (rc) {
            *failed = f;
            return rc;
        }
        sum += best;
        for (int32_t j = 0; j < fa->degree; ++j) b->link_vote[fa->link_begin + j] = s->u[j];
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (s->deg[i] == 0) {
            sum += fmax(theta[i], 0.0);
            b->votes[i] = theta[i] > 0.0;
            continue;
        }
        double votes = 0.0;
        for (int32_t q = s->var_link_begin[i]; q < s->var_link_begin[i + 1]; ++q)
            votes += b->link_vote[s->var_links[q]];
        b->votes[i] = votes * s->inv_deg[i];
        double multipliers = 0.0;
        for (int32_t q = s->var_link_begin[i]; q < s->var_link_begin[i + 1]; ++q)
            multipliers += s->lambda[s->var_links[q]];
        sum += s->clamp[i] >= 0 ? -multipliers * s->clamp[i] : fmax(-multipliers, 0.0);
    }
    *bound = sum;
    return 0;
}

/* ---- the best assignment ------------------------------------------------ */

static void offer(bb *b, const double *x, double value) {
    if (value == -INFINITY || (b->have_best && value <= b->best_value)) return;
    memcpy(b->best_x, x, (size_t)b->g->n_vars * sizeof(double));
    b->best_value = value;
    b->have_best = true;
    b->xi.improvements += 1;
    b->xi.best_seconds = elapsed(b);
}

/* Decodes an assignment from the node's LP solution (concord_solver_decode,
 * stopped at the time limit) and offers it. The local search does not mend
 * violated factors by chains of moves here: branching reaches feasible
 * assignments anyway, and mending at every node made the search on AD3's
 * srl_fract_004 take 1.6 times as long. */
static int heuristic(bb *b) {
    concord_decoding dec;
    solver_deadline deadline = {.start = &b->start, .limit = b->st.time_limit};
    int rc = solver_decode(b->s, &deadline, false, &dec);
    if (rc) return rc;
    if (dec.violated == 0) offer(b, b->s->decoded, dec.value);
    return CONCORD_OK;
}

/* ---- branching ----------------------------------------------------------- */

typedef struct split {
    int32_t unit;
    double balance;  /* the smaller side's LP mass */
    int32_t n_first; /* a multi-variable's states order[0 .. n_first) form side A */
    int32_t n_free;
} split;

static int by_mass(const void *x, const void *y, void *ctx) {
    const double *mass = ctx;
    const int32_t a = *(const int32_t *)x, c = *(const int32_t *)y;
    if (mass[a] != mass[c]) return mass[a] > mass[c] ? -1 : 1;
    return (a > c) - (a < c);
}

/* Sorts idx[0..n) by decreasing mass[idx] (insertion sort: units are small,
 * and qsort has no context argument in C11). */
static void sort_by_mass(int32_t *idx, int32_t n, const double *mass) {
    for (int32_t i = 1; i < n; ++i) {
        int32_t x = idx[i], j = i;
        for (; j > 0 && by_mass(&idx[j - 1], &x, (void *)mass) > 0; --j) idx[j] = idx[j - 1];
        idx[j] = x;
    }
}

/* How a multi-variable would split: its free states by decreasing LP mass,
 * side A the prefix whose mass is closest to half. Returns the smaller
 * side's mass; the sorted states stay in b->order. */
static double multi_split(bb *b, int32_t w, const double *u, int32_t *n_first, int32_t *n_free) {
    const units *un = b->un;
    const int8_t *clamp = b->s->clamp;
    int32_t n = 0;
    double total = 0.0;
    for (int32_t t = 0; t < un->states[w]; ++t) {
        const int32_t i = un->first[w] + t;
        if (clamp[i] == 0) continue;
        b->mass[t] = fmax(u[i], 0.0);
        total += b->mass[t];
        b->order[n++] = t;
    }
    *n_free = n;
    *n_first = 0;
    if (n < 2) return 0.0;
    /* A one-hot variable's states hold mass 1; a relaxation stopped early
     * can leave less on them (0.9966 on one state, 0 on the others), and
     * splitting that state from the rest is then as balanced as its
     * distance to 1, not 0. */
    total = fmax(total, 1.0);
    sort_by_mass(b->order, n, b->mass);
    double run = 0.0, best = INFINITY, balance = 0.0;
    for (int32_t k = 1; k < n; ++k) {
        run += b->mass[b->order[k - 1]];
        const double miss = fabs(run - 0.5 * total);
        if (miss < best) {
            best = miss;
            *n_first = k;
            balance = fmin(run, total - run);
        }
    }
    return balance;
}

/* The unit to split: the most fractional one of the LP solution u with
 * fractionality above `slack` (a binary variable's distance to 0 or 1, a
 * multi-variable's mass outside its likeliest state, or that state's
 * distance to 1); unit -1 when none. */
static split choose_split(bb *b, const double *u, double slack) {
    const units *un = b->un;
    const int8_t *clamp = b->s->clamp;
    split best = {-1, 0.0, 0, 0};
    for (int32_t w = 0; w < un->n_units; ++w) {
        const int32_t i = un->first[w];
        if (!un->multi[w]) {
            if (clamp[i] >= 0) continue;
            const double frac = fmin(u[i], 1.0 - u[i]);
            if (frac > slack && frac > best.balance) best = (split){w, frac, 0, 0};
            continue;
        }
        /* integral: a state at 1 and the others at 0 (a relaxation stopped
         * early can hold a state at 1 beside another above 0, where the
         * one-hot constraint lies in DENSE factors the consensus has not
         * yet agreed with) */
        double top = 0.0, mass = 0.0;
        for (int32_t t = 0; t < un->states[w]; ++t) {
            if (clamp[i + t] == 0) continue;
            top = fmax(top, u[i + t]);
            mass += fmax(u[i + t], 0.0);
        }
        if (1.0 - top <= slack && mass - top <= slack) continue;
        int32_t n_first, n_free;
        const double balance = multi_split(b, w, u, &n_first, &n_free);
        if (n_free >= 2 && balance > best.balance) best = (split){w, balance, n_first, n_free};
    }
    return best;
}

/* A decision of `count` clamps with the given parent; returns its index
 * or -1 when out of memory. The clamps are appended afterwards. */
static int32_t new_decision(bb *b, int32_t parent, int32_t count) {
    if (b->n_decisions >= INT32_MAX ||
        !grow((void **)&b->decisions, &b->cap_decisions, b->n_decisions + 1, sizeof(decision)) ||
        !grow((void **)&b->clamps, &b->cap_clamps, b->n_clamps + count, sizeof(clamp_entry)))
        return -1;
    b->decisions[b->n_decisions] = (decision){parent, b->n_clamps, count};
    return (int32_t)b->n_decisions++;
}

static void add_clamp(bb *b, int32_t var, int value) {
    b->clamps[b->n_clamps++] = (clamp_entry){var, value};
}

/* The decision of one side of a multi-variable's split: its free states
 * order[zero_begin .. zero_end) at 0, and when the side keeps a single
 * free state (order[keep_begin .. keep_end)), that state at 1, which the
 * one-hot constraint implies: clamped, every factor sees it, while left
 * free the factors that do not know the constraint (DENSE, KNAPSACK)
 * could keep it fractional in the node's relaxation, where the unit,
 * with a single free state, was no longer split, and the node stayed
 * unresolved (its bound open above the optimum). Returns the decision's
 * index or -1 when out of memory. */
static int32_t one_hot_side(bb *b, const node *n, int32_t w, int32_t zero_begin,
                            int32_t zero_end, int32_t keep_begin, int32_t keep_end) {
    const int32_t first = b->un->first[w];
    const bool forced = keep_end - keep_begin == 1;
    const int32_t d = new_decision(b, n->decision, zero_end - zero_begin + (forced ? 1 : 0));
    if (d < 0) return -1;
    for (int32_t k = zero_begin; k < zero_end; ++k) add_clamp(b, first + b->order[k], 0);
    if (forced) add_clamp(b, first + b->order[keep_begin], 1);
    return d;
}

/* Opens the two children of node n split as sp says (u: its LP solution),
 * the child on the LP solution's side last (so taken first). Returns
 * CONCORD_OK or CONCORD_ENOMEM. */
static int branch(bb *b, const node *n, const split *sp, const double *u, double bound) {
    const units *un = b->un;
    const int32_t w = sp->unit;
    int32_t d[2];
    bool a_first; /* child 0 (side A, or value 1) is on the LP's side */
    if (!un->multi[w]) {
        const int32_t i = un->first[w];
        a_first = u[i] >= 0.5;
        if ((d[0] = new_decision(b, n->decision, 1)) < 0) return CONCORD_ENOMEM;
        add_clamp(b, i, 1);
        if ((d[1] = new_decision(b, n->decision, 1)) < 0) return CONCORD_ENOMEM;
        add_clamp(b, i, 0);
    } else {
        /* side A keeps order[0 .. n_first) (the other free states at 0) */
        double mass_a = 0.0, total = 0.0;
        for (int32_t k = 0; k < sp->n_free; ++k) {
            total += b->mass[b->order[k]];
            if (k < sp->n_first) mass_a += b->mass[b->order[k]];
        }
        a_first = mass_a >= 0.5 * total;
        if ((d[0] = one_hot_side(b, n, w, sp->n_first, sp->n_free, 0, sp->n_first)) < 0 ||
            (d[1] = one_hot_side(b, n, w, 0, sp->n_first, sp->n_first, sp->n_free)) < 0)
            return CONCORD_ENOMEM;
    }
    warm *ws = warm_take(b);
    for (int32_t c = 0; c < 2; ++c) {
        const int32_t which = a_first ? 1 - c : c; /* the preferred child last */
        node child = {bound, n->depth + 1, d[which], b->next_seq++, ws};
        if (!push_node(b, child)) return CONCORD_ENOMEM;
    }
    if (ws && ws->refs == 0) warm_release(b, ws);
    return CONCORD_OK;
}

/* Calls the progress callback (when there is one) with the search's
 * figures; returns what it returned. Within a node's solve, node_iterations
 * are its iterations so far and node_bound a bound on its subproblem (the
 * node is out of the open ones meanwhile); between nodes, 0 and -INFINITY. */
static int report(bb *b, int32_t node_iterations, double node_bound) {
    if (!b->st.progress) return 0;
    const double seconds = elapsed(b);
    b->next_report = seconds + REPORT_SECONDS;
    const int64_t iterations = b->iterations + node_iterations;
    concord_progress p = {(int32_t)(iterations > INT32_MAX ? INT32_MAX : iterations),
                          b->have_best ? b->best_value : -INFINITY,
                          fmax(upper_bound(b), node_bound),
                          0.0,
                          0.0,
                          b->last_eta,
                          seconds,
                          b->xi.nodes,
                          b->n_open};
    return b->st.progress(b->st.progress_context, &p);
}

/* Whether REPORT_SECONDS have passed since the last report. */
static bool report_due(const bb *b) { return b->st.progress && elapsed(b) >= b->next_report; }

/* ---- one node ----------------------------------------------------------- */

/* The node solve's progress callback: it stops the solve when the bound
 * falls to the cutoff (the node is pruned); when the bound has stalled with
 * the residuals below the tolerance (an inner solve that reports exactness
 * it does not have can leave the loop there); and when the bound falls too
 * slowly to reach the cutoff soon: the node is then split on its current
 * point, which costs less than solving it to the tolerance first (on AD3's
 * grid10x10 the search took 2.1 times fewer iterations, on parsing01 4
 * times fewer, the nodes about as many). The bound is valid whenever the
 * solve stops. It also passes the search's progress to the user's callback
 * when a report is due, and stops the search when that asks to. */
static int node_progress(void *context, const concord_progress *p) {
    bb *b = context;
    /* the node's bound: its solve's so far, or the one it started with */
    if (report_due(b) && report(b, p->iteration, fmin(p->upper_bound, b->node_bound))) {
        b->stop = CONCORD_STATUS_INTERRUPTED;
        return 1;
    }
    if (p->upper_bound <= cutoff(b)) return 1;
    const bool small = p->primal_residual <= b->node_tol && p->dual_residual <= b->node_tol;
    if (small && p->upper_bound >= b->node_last_bound) b->node_stalls += 1;
    else b->node_stalls = 0;
    b->node_last_bound = p->upper_bound;
    if (b->node_stalls >= STALLS) return 1;
    /* too slow to prune: over the last SLOW_REPORTS reports the bound fell
     * by less than half of what remains to the cutoff */
    const int32_t k = b->node_reports++ % SLOW_REPORTS;
    const double before = b->node_history[k];
    b->node_history[k] = p->upper_bound;
    return b->node_reports > SLOW_REPORTS && b->have_best &&
           before - p->upper_bound < 0.5 * (p->upper_bound - cutoff(b));
}

/* Runs the ADMM loop on the current node; its settings are the user's
 * with warm starts, a deadline and the cutoff. */
static int run_admm(bb *b, double tol, concord_info *info) {
    concord_settings node_st = b->st;
    node_st.warm_start = true;
    node_st.tol = tol;
    node_st.progress = node_progress;
    b->node_tol = tol;
    b->node_last_bound = INFINITY;
    b->node_stalls = 0;
    b->node_reports = 0;
    node_st.progress_context = b;
    if (node_st.bound_every > NODE_BOUND_EVERY) node_st.bound_every = NODE_BOUND_EVERY;
    if (b->st.time_limit > 0.0) {
        node_st.time_limit = b->st.time_limit - elapsed(b);
        if (node_st.time_limit <= 0.0) node_st.time_limit = 1e-9;
    }
    int rc = solver_admm(b->s, &node_st, false, NULL, info);
    b->iterations += info->iterations;
    b->factor_solves += info->factor_solves;
    b->oracle_calls += info->oracle_calls;
    b->last_eta = info->eta;
    return rc;
}

/* Splits node n on its most fractional unit in u beyond `slack` (else
 * beyond 0). When u gives nothing to split on although the node is not
 * closed (its solve stalled, or its bound is not yet tight), the split
 * comes from the factors' maximizers at the current multipliers: where
 * they disagree on a unit the bound is above every assignment's value,
 * and splitting that unit makes them agree. When they all agree too, the
 * node is left unresolved (its bound counts in the final bound). */
static int split_node(bb *b, node *n, const double *u, double slack, node_end *end) {
    split sp = choose_split(b, u, slack);
    if (sp.unit < 0 && slack > 0.0) sp = choose_split(b, u, 0.0);
    if (sp.unit < 0) {
        double bound;
        int32_t failed;
        int rc = node_bound(b, &bound, &failed);
        if (rc) return solver_callback_failed(b->s, failed, rc);
        u = b->votes;
        sp = choose_split(b, u, 0.0);
    }
    if (sp.unit < 0) {
        b->unresolved_bound = fmax(b->unresolved_bound, n->bound);
        *end = NODE_UNRESOLVED;
        return CONCORD_OK;
    }
    if (sp.n_free > 0) multi_split(b, sp.unit, u, &sp.n_first, &sp.n_free); /* its order again */
    *end = NODE_BRANCHED;
    return branch(b, n, &sp, u, n->bound);
}

/* Solves node n: prunes, closes or splits it. */
static int solve_node(bb *b, node *n, node_end *end) {
    concord_solver *s = b->s;
    apply_clamps(b, n->decision);
    bool nonempty = true;
    int32_t failed;
    int rc = clamp_faces_nonempty(s, &nonempty, &failed);
    if (rc) return solver_callback_failed(s, failed, rc);
    if (!nonempty) {
        *end = NODE_INFEASIBLE;
        return CONCORD_OK;
    }
    prepare_state(b, n);
    b->xi.nodes += 1;
    if (n->depth > b->xi.max_depth) b->xi.max_depth = n->depth;
    if (b->have_best && s->mode == MODE_MAP) {
        double bound;
        if ((rc = node_bound(b, &bound, &failed))) return solver_callback_failed(s, failed, rc);
        if (bound < n->bound) n->bound = bound;
        if (n->bound <= cutoff(b)) {
            b->pruned_bound = fmax(b->pruned_bound, n->bound);
            *end = NODE_PRUNED;
            return CONCORD_OK;
        }
    }
    concord_info info;
    double tol = b->st.tol;
    for (int32_t round = 0;; ++round) {
        b->node_bound = n->bound;
        rc = run_admm(b, tol, &info);
        if (rc == CONCORD_EINFEASIBLE) {
            *end = NODE_INFEASIBLE;
            return CONCORD_OK;
        }
        if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) return rc;
        /* a solve stopped early still has a valid bound (its multipliers') */
        if (info.upper_bound < n->bound) n->bound = info.upper_bound;
        if (n->depth == 0) b->xi.root_bound = n->bound;
        if (info.status == CONCORD_STATUS_TIME_LIMIT || b->stop == CONCORD_STATUS_INTERRUPTED) {
            *end = NODE_STOPPED;
            return CONCORD_OK;
        }
        if (n->bound <= cutoff(b)) {
            b->pruned_bound = fmax(b->pruned_bound, n->bound);
            *end = NODE_PRUNED;
            return CONCORD_OK;
        }
        if (!info.integral) break;
        offer(b, s->sol_u, info.value);
        if (n->bound <= cutoff(b)) {
            b->pruned_bound = fmax(b->pruned_bound, n->bound);
            *end = NODE_CLOSED;
            return CONCORD_OK;
        }
        /* an integral LP solution whose bound is not yet tight: solve on,
         * or split where the consensus is not yet integral */
        if (info.status == CONCORD_STATUS_INTEGRAL && round < TIGHTENINGS) {
            tol *= 0.01;
            continue;
        }
        return split_node(b, n, s->ubar, 0.0, end);
    }
    if (n->depth == 0 || (b->st.heuristic_every > 0 &&
                          ++b->heuristic_count % b->st.heuristic_every == 0)) {
        if ((rc = heuristic(b))) return rc;
        if (n->bound <= cutoff(b)) {
            b->pruned_bound = fmax(b->pruned_bound, n->bound);
            *end = NODE_PRUNED;
            return CONCORD_OK;
        }
    }
    return split_node(b, n, s->sol_u, fmin(10.0 * b->st.tol, 1e-3), end);
}

/* ---- the search --------------------------------------------------------- */

static int search(bb *b) {
    /* the root's bound before its solve, at the multipliers the solver
     * holds: a search stopped before that solve still has a finite bound */
    double root_bound;
    int32_t failed;
    int rc = node_bound(b, &root_bound, &failed);
    if (rc) return solver_callback_failed(b->s, failed, rc);
    node root = {root_bound, 0, -1, b->next_seq++, NULL};
    if (!push_node(b, root)) return CONCORD_ENOMEM;
    while (b->n_open > 0) {
        if (b->have_best && open_bound(b) <= cutoff(b)) { /* the rest is pruned */
            b->pruned_bound = fmax(b->pruned_bound, open_bound(b));
            b->xi.pruned += b->n_open;
            while (b->n_open > 0) warm_release(b, b->open[--b->n_open].warm);
            break;
        }
        if (b->st.node_limit > 0 && b->xi.nodes >= b->st.node_limit) {
            b->stop = CONCORD_STATUS_NODE_LIMIT;
            break;
        }
        if (solver_time_is_up(&b->start, b->st.time_limit)) {
            b->stop = CONCORD_STATUS_TIME_LIMIT;
            break;
        }
        node n = pop_node(b);
        const bool first = n.depth == 0;
        const double best_before = b->have_best ? b->best_value : -INFINITY;
        node_end end = NODE_BRANCHED;
        rc = solve_node(b, &n, &end);
        if (!rc && first) {
            b->have_root = true;
            memcpy(b->root_u, b->s->sol_u, (size_t)b->g->n_vars * sizeof(double));
            memcpy(b->root_v, b->s->sol_v, (size_t)b->g->n_add * sizeof(double));
            b->root_warm = warm_take(b);
            if (b->root_warm) b->root_warm->refs = 1;
        }
        if (!rc && end == NODE_STOPPED) { /* by the time limit or the progress callback */
            if (!push_node(b, n)) rc = CONCORD_ENOMEM;
            if (b->stop == CONCORD_STATUS_UNSOLVED) b->stop = CONCORD_STATUS_TIME_LIMIT;
        }
        if (end == NODE_PRUNED) b->xi.pruned += 1;
        if (end == NODE_INFEASIBLE) b->xi.infeasible += 1;
        warm_release(b, n.warm);
        if (rc) return rc;
        if (b->stop != CONCORD_STATUS_UNSOLVED) break;
        const bool improved = b->have_best && b->best_value > best_before;
        const bool due = improved || b->xi.nodes % REPORT_EVERY == 0 || report_due(b);
        if (due && report(b, 0, -INFINITY)) {
            b->stop = CONCORD_STATUS_INTERRUPTED;
            break;
        }
    }
    return CONCORD_OK;
}

static void bb_free(bb *b) {
    for (int64_t k = 0; k < b->n_open; ++k) warm_release(b, b->open[k].warm);
    warm_release(b, b->root_warm);
    free(b->open);
    free(b->decisions);
    free(b->clamps);
    free(b->applied);
    free(b->best_x);
    free(b->root_u);
    free(b->root_v);
    free(b->order);
    free(b->mass);
    free(b->link_vote);
    free(b->votes);
}

/* The solver after the search: no clamps, the root's multipliers (a warm
 * start for later solves), the best assignment (or the root's LP
 * solution) as its solution. */
static int finish(bb *b, int rc, concord_info *info) {
    concord_solver *s = b->s;
    const concord_graph *g = b->g;
    for (int32_t k = 0; k < b->n_applied; ++k) clamp_set(s, b->applied[k], -1);
    b->n_applied = 0;
    if (b->root_warm) {
        memcpy(s->lambda, b->root_warm->lambda, (size_t)g->n_links * sizeof(double));
        memcpy(s->ubar, b->root_warm->ubar, (size_t)g->n_vars * sizeof(double));
        s->eta_rel = b->root_warm->eta_rel;
        s->mode = MODE_MAP;
    }
    concord_info out = {0};
    out.iterations = (int32_t)(b->iterations > INT32_MAX ? INT32_MAX : b->iterations);
    out.factor_solves = b->factor_solves;
    out.oracle_calls = b->oracle_calls;
    out.eta = b->last_eta;
    out.upper_bound = upper_bound(b);
    b->xi.open = b->n_open;
    double value = -INFINITY;
    if (!rc && b->have_best) rc = solver_take_assignment(s, b->best_x, &value);
    if (rc) {
        out.status = rc == CONCORD_ECALLBACK ? CONCORD_STATUS_CALLBACK_FAILED
                     : rc == CONCORD_ENUMERIC ? CONCORD_STATUS_NUMERIC
                                              : CONCORD_STATUS_UNSOLVED;
        s->solved = false;
        s->mode = MODE_NONE;
    } else if (b->have_best) {
        out.value = value;
        out.integral = true;
        out.upper_bound = fmax(out.upper_bound, value);
        b->xi.gap = out.upper_bound - value;
        /* the bound is valid however the search stopped: a gap it closes is
         * a proof (a callback that asks to stop after the last node closed
         * it does not undo that) */
        const double free_best = b->gap.free_best;
        const bool closed =
            solver_gap_closed(&b->gap, out.upper_bound - free_best, value - free_best);
        out.status = closed ? CONCORD_STATUS_OPTIMAL
                     : b->stop != CONCORD_STATUS_UNSOLVED ? b->stop
                                                          : CONCORD_STATUS_MAX_ITER;
        if (!closed)
            rc = solver_fail(s, CONCORD_ENOTCONVERGED,
                             "exact MAP not proven: the best value %.17g is %.3g below the upper "
                             "bound after %lld nodes (%s)",
                             value, b->xi.gap, (long long)b->xi.nodes,
                             b->stop == CONCORD_STATUS_UNSOLVED
                                 ? "some node's bound could not be closed"
                                 : concord_status_name(b->stop));
    } else if (b->stop == CONCORD_STATUS_UNSOLVED && b->unresolved_bound == -INFINITY) {
        out.status = CONCORD_STATUS_INFEASIBLE;
        out.value = out.upper_bound = -INFINITY;
        b->xi.gap = INFINITY;
        s->solved = false;
        s->mode = MODE_NONE;
        rc = solver_fail(s, CONCORD_EINFEASIBLE,
                         "the constraints admit no solution: branch and bound found every "
                         "node infeasible (%lld nodes)",
                         (long long)b->xi.nodes);
    } else {
        /* no assignment: the root's LP solution when its solve ran, else
         * no solution at all */
        memcpy(s->sol_u, b->root_u, (size_t)g->n_vars * sizeof(double));
        memcpy(s->sol_v, b->root_v, (size_t)g->n_add * sizeof(double));
        s->solved = b->have_root;
        s->sol_integral = false;
        s->sol_from_admm = false;
        s->have_decoded = false;
        b->xi.gap = INFINITY;
        out.value = -INFINITY;
        out.status = b->stop != CONCORD_STATUS_UNSOLVED ? b->stop : CONCORD_STATUS_MAX_ITER;
        rc = solver_fail(s, CONCORD_ENOTCONVERGED,
                         b->have_root ? "exact MAP: no assignment found after %lld nodes (%s)"
                                      : "exact MAP: stopped after %lld nodes (%s) before the "
                                        "root's LP was solved: no solution",
                         (long long)b->xi.nodes, concord_status_name(out.status));
    }
    out.seconds = elapsed(b);
    s->exact_info = b->xi;
    s->has_exact_info = true;
    if (info) *info = out;
    return rc;
}

/* The acyclic case: one pass of dynamic programming. */
static int solve_acyclic(bb *b, concord_info *info) {
    concord_solver *s = b->s;
    const int64_t first_call = s->map_calls;
    bool feasible;
    int rc = acyclic_solve(s, b->best_x, &feasible);
    double value = -INFINITY;
    if (!rc && feasible) rc = solver_take_assignment(s, b->best_x, &value);
    if (!rc) {
        b->xi.acyclic = true;
        if (value > -INFINITY) {
            b->best_value = value;
            b->have_best = true;
            b->xi.root_bound = value;
            b->xi.improvements = 1;
            solver_state_at_solution(s); /* as after a search */
            s->mode = MODE_MAP;
        }
    }
    rc = finish(b, rc, info);
    if (info) {
        info->acyclic = b->xi.acyclic;
        info->iterations = 1; /* one pass */
        info->oracle_calls = s->map_calls - first_call;
    }
    return rc;
}

/* concord_solver_exact once begun. */
static int run_exact(concord_solver *s, const concord_settings *settings, concord_info *info) {
    int rc;
    bb b = {0};
    b.s = s;
    b.g = s->g;
    clock_gettime(CLOCK_MONOTONIC, &b.start);
    b.next_report = REPORT_SECONDS;
    if ((rc = solver_settings(s, settings, &b.st))) return rc;
    s->has_exact_info = false;
    if ((rc = units_build(s)) || (rc = units_classify(s))) return rc;
    if ((rc = clamp_reserve(s))) return solver_fail(s, rc, "out of memory");
    b.un = s->units;
    const concord_graph *g = s->g;
    const size_t nv = (size_t)(g->n_vars ? g->n_vars : 1);
    b.applied = malloc(nv * sizeof(int32_t));
    b.best_x = calloc(nv, sizeof(double));
    b.root_u = calloc(nv, sizeof(double));
    b.root_v = calloc((size_t)(g->n_add ? g->n_add : 1), sizeof(double));
    b.order = malloc((size_t)b.un->max_states * sizeof(int32_t));
    b.mass = malloc((size_t)b.un->max_states * sizeof(double));
    b.link_vote = malloc((size_t)(g->n_links ? g->n_links : 1) * sizeof(double));
    b.votes = malloc(nv * sizeof(double));
    if (!b.applied || !b.best_x || !b.root_u || !b.root_v || !b.order || !b.mass ||
        !b.link_vote || !b.votes) {
        bb_free(&b);
        return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    }
    /* AD3's rule with exact_gap (see solver_gap_rule): a gap of exact_gap
     * times the sum of |scores| called assignments 0.3 below an optimum of
     * 1.7 optimal beside scores of +-1e9 that cancel, and beside a
     * variable in no factor scored 1e12 one decoded at the root, 1.6 below
     * the optimum. */
    b.gap = solver_gap_rule(s, solver_theta(s), solver_phi(s), b.st.exact_gap);
    b.pruned_bound = b.unresolved_bound = -INFINITY;
    b.xi.root_bound = INFINITY;
    b.xi.gap = INFINITY;
    b.stop = CONCORD_STATUS_UNSOLVED;
    if (!b.st.warm_start) s->mode = MODE_NONE;
    if (b.st.acyclic) {
        bool exact, lp_tight;
        if ((rc = acyclic_prepare(s, &exact, &lp_tight))) {
            bb_free(&b);
            return rc;
        }
        if (exact) {
            rc = solve_acyclic(&b, info);
            bb_free(&b);
            return rc;
        }
    }
    rc = search(&b);
    rc = finish(&b, rc, info);
    bb_free(&b);
    return rc; /* on success, solver_end clears the node solves' own messages */
}

int concord_solver_exact(concord_solver *s, const concord_settings *settings,
                         concord_info *info) {
    int rc = solver_begin_solve(s, info);
    return rc ? rc : solver_end_solve(s, run_exact(s, settings, info), info);
}

int concord_solver_exact_info(const concord_solver *s, concord_exact_info *out) {
    if (!s || !out || solver_held_elsewhere(s) || !s->has_exact_info) return CONCORD_EINVAL;
    *out = s->exact_info;
    return CONCORD_OK;
}
