/*
 * HEAD_AUTOMATON and GRANDPARENT_HEAD_AUTOMATON: the second-order parts of
 * a turbo dependency parser (Martins et al. 2011, 2013). For one head and
 * one side of it, the links are the arcs from the head to its n candidate
 * modifiers, nearest first; any subset may be on, and the chosen modifiers
 * m_1 < ... < m_k form the chain 0 -> m_1 -> ... -> m_k -> n + 1 (0: the
 * head, n + 1: the end). The additional outputs are all the pairs (m, s),
 * 0 <= m < s <= n + 1, ordered by m then s: a pair is on when m and s are
 * consecutive in the chain (consecutive siblings). The grandparent
 * automaton also has G links for the arcs g -> head, of which exactly one
 * is on (the head has one head), and G x n outputs (g, m) on when g is that
 * grandparent and m a chosen modifier; they come before the sibling pairs.
 * The MAP oracle is a longest path over the chain positions, O(n^2), run
 * once per grandparent: O(G n^2); an output scored -inf is forbidden
 * (factor_ops.forbids). QPs come from the generic active set.
 * The public builders are here too.
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"
#include "head_automaton.h"

/* cur[k] = max(cur[k], base + row[k]), branch-free (see sequence.c; here a
 * loop: the rows are short suffixes). */
static inline void relax(double *restrict cur, const double *restrict row, double base,
                         int32_t n) {
    for (int32_t k = 0; k < n; ++k) {
        double x = base + row[k];
        cur[k] = x > cur[k] ? x : cur[k];
    }
}

double sibling_chain_best(int32_t n, const double *w, const double *sib, bool nonempty,
                          double *best) {
    /* best[s] gathers max over m < s of best[m] + sib(m, s) as each m pushes
     * to the positions after it; w[s-1] is added when s's turn comes. */
    for (int32_t s = 1; s <= n + 1; ++s) best[s] = -INFINITY;
    best[0] = 0.0;
    for (int32_t m = 0; m <= n; ++m) {
        if (m > 0) best[m] += w[m - 1];
        const int32_t last = nonempty && m == 0 ? n : n + 1;
        relax(best + m + 1, sib + sibling_pair(n, m, m + 1), best[m], last - m);
    }
    return best[n + 1];
}

/* The predecessor of s in a best chain of the forward pass that left
 * `best`: the first m < s maximizing best[m] + sib(m, s). */
static int32_t chain_predecessor(int32_t n, const double *sib, bool nonempty, const double *best,
                                 int32_t s) {
    int32_t m = nonempty && s == n + 1 ? 1 : 0, arg = m;
    double top = best[m] + sib[sibling_pair(n, m, s)];
    for (++m; m < s; ++m) {
        double x = best[m] + sib[sibling_pair(n, m, s)];
        if (x > top) {
            top = x;
            arg = m;
        }
    }
    return arg;
}

void sibling_chain_write(int32_t n, const double *sib, bool nonempty, const double *best,
                         double *u, double *v) {
    for (int32_t s = n + 1; s > 0;) {
        const int32_t arg = chain_predecessor(n, sib, nonempty, best, s);
        v[sibling_pair(n, arg, s)] = 1.0;
        if (arg > 0) u[arg - 1] = 1.0;
        s = arg;
    }
}

/* The positions of the best chain, increasing, into chain (at most n);
 * returns how many. */
static int32_t best_chain(int32_t n, const double *sib, const double *best, int32_t *chain) {
    int32_t k = 0;
    for (int32_t s = chain_predecessor(n, sib, false, best, n + 1); s > 0;
         s = chain_predecessor(n, sib, false, best, s))
        chain[k++] = s;
    for (int32_t i = 0; i < k / 2; ++i) {
        const int32_t t = chain[i];
        chain[i] = chain[k - 1 - i];
        chain[k - 1 - i] = t;
    }
    return k;
}

/* Appends the chain's positions m to ones from q on, as base + m - 1;
 * returns the new q. */
static int32_t chain_positions(const int32_t *chain, int32_t k, int32_t base, int32_t *ones,
                               int32_t q) {
    for (int32_t i = 0; i < k; ++i) ones[q++] = base + chain[i] - 1;
    return q;
}

/* Appends the chain's consecutive pairs (head and end included) to ones
 * from q on, as base + their pair index, increasing; returns the new q. */
static int32_t chain_pairs(int32_t n, const int32_t *chain, int32_t k, int32_t base,
                           int32_t *ones, int32_t q) {
    int32_t prev = 0;
    for (int32_t i = 0; i < k; ++i) {
        ones[q++] = base + (int32_t)sibling_pair(n, prev, chain[i]);
        prev = chain[i];
    }
    ones[q++] = base + (int32_t)sibling_pair(n, prev, n + 1);
    return q;
}

typedef struct automaton_params {
    int32_t n_grandparents; /* G (0 for HEAD_AUTOMATON) */
    int32_t n_modifiers;    /* n */
} automaton_params;

static const automaton_params *params_of(const factor *f) {
    return (const automaton_params *)f->params;
}

/* A factor's scratch: chain values first, n + 2 doubles for HEAD_AUTOMATON,
 * w (n) and two chain value arrays (n + 2 each) for the grandparent family
 * (see best_grandparent); then the best chain's positions (n int32), then
 * room for a configuration's ones (config_size), which map uses. */
static size_t value_doubles(const automaton_params *p) {
    const size_t n = (size_t)p->n_modifiers;
    return p->n_grandparents > 0 ? 3 * n + 4 : n + 2;
}

static int32_t *chain_area(const factor *f, void *scratch) {
    return (int32_t *)((double *)scratch + value_doubles(params_of(f)));
}

static size_t automaton_scratch(const factor *f) {
    const automaton_params *p = params_of(f);
    return value_doubles(p) * sizeof(double) +
           ((size_t)p->n_modifiers + (size_t)f->ops->config_size(f)) * sizeof(int32_t);
}

/* The configuration map would find, by its ones. */
static double automaton_map(const factor *f, const double *a, const double *b, double *u,
                            double *v, void *scratch) {
    return factor_map_by_ones(f, a, b, u, v, scratch,
                              chain_area(f, scratch) + params_of(f)->n_modifiers);
}

/* The best chain as the list of its ones. */
static int32_t head_automaton_map_ones(const factor *f, const double *a, const double *b,
                                       int32_t *ones, double *value, void *scratch) {
    const int32_t n = params_of(f)->n_modifiers;
    double *best = (double *)scratch;
    int32_t *chain = chain_area(f, scratch);
    b = factor_allowed_scores(f, b, scratch);
    *value = sibling_chain_best(n, a, b, false, best);
    const int32_t k = best_chain(n, b, best, chain);
    return chain_pairs(n, chain, k, f->degree, ones, chain_positions(chain, k, 0, ones, 0));
}

/* Modifiers and the pairs of their chain. */
static int32_t head_automaton_config_size(const factor *f) {
    return 2 * params_of(f)->n_modifiers + 1;
}

static const factor_ops head_automaton_ops = {.name = "HEAD_AUTOMATON",
                                              .map = automaton_map,
                                              .map_ones = head_automaton_map_ones,
                                              .scratch_bytes = automaton_scratch,
                                              .config_size = head_automaton_config_size,
                                              .forbids = FORBIDS_BY_SCORES};

/* For each grandparent g, the chain with modifier scores a + the (g, m)
 * scores; the best total with the arc g -> head wins. Returns it, with its
 * grandparent in *best_g and its chain values in the array *kept points
 * to. Scratch: w (n), two chain value arrays (n + 2 each: the best
 * grandparent's and the current). */
static double best_grandparent(const factor *f, const double *a, const double *b, void *scratch,
                               int32_t *best_g, double **kept) {
    const automaton_params *p = params_of(f);
    const int32_t G = p->n_grandparents, n = p->n_modifiers;
    double *w = (double *)scratch, *cur = w + n + n + 2;
    const double *am = a + G, *sib = b + (size_t)G * (size_t)n;
    double best = -INFINITY;
    *kept = w + n;
    *best_g = 0;
    for (int32_t g = 0; g < G; ++g) {
        const double *bg = b + (size_t)g * (size_t)n;
        for (int32_t m = 0; m < n; ++m) w[m] = am[m] + bg[m];
        double x = a[g] + sibling_chain_best(n, w, sib, false, cur);
        if (g == 0 || x > best) {
            best = x;
            *best_g = g;
            double *swap = *kept;
            *kept = cur;
            cur = swap;
        }
    }
    return best;
}

/* The best configuration as the list of its ones: the grandparent's arc,
 * the modifiers, their (g, m) outputs, the chain's pairs. */
static int32_t grandparent_map_ones(const factor *f, const double *a, const double *b,
                                    int32_t *ones, double *value, void *scratch) {
    const automaton_params *p = params_of(f);
    const int32_t G = p->n_grandparents, n = p->n_modifiers;
    int32_t best_g;
    double *kept;
    b = factor_allowed_scores(f, b, scratch);
    *value = best_grandparent(f, a, b, scratch, &best_g, &kept);
    int32_t *chain = chain_area(f, scratch);
    const int32_t k = best_chain(n, b + (size_t)G * (size_t)n, kept, chain);
    ones[0] = best_g;
    int32_t q = chain_positions(chain, k, G, ones, 1);
    q = chain_positions(chain, k, f->degree + best_g * n, ones, q);
    return chain_pairs(n, chain, k, f->degree + G * n, ones, q);
}

/* The grandparent, the modifiers, their (g, m) outputs and chain pairs. */
static int32_t grandparent_config_size(const factor *f) {
    return 3 * params_of(f)->n_modifiers + 2;
}

static const factor_ops grandparent_head_automaton_ops = {
    .name = "GRANDPARENT_HEAD_AUTOMATON",
    .map = automaton_map,
    .map_ones = grandparent_map_ones,
    .scratch_bytes = automaton_scratch,
    .config_size = grandparent_config_size,
    .forbids = FORBIDS_BY_SCORES};

static int add_automaton(concord_graph *g, const factor_ops *ops, int32_t n_grandparents,
                         int32_t n_modifiers, const int32_t *vars, const double *scores,
                         int32_t *factor_id) {
    if (n_modifiers < 0)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: %d modifiers", ops->name, n_modifiers);
    if (ops == &grandparent_head_automaton_ops && n_grandparents < 1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: %d grandparents (must be >= 1)",
                          ops->name, n_grandparents);
    int64_t n = n_modifiers;
    int64_t degree = (int64_t)n_grandparents + n;
    int64_t n_add = (int64_t)n_grandparents * n + (n + 1) * (n + 2) / 2;
    if (degree > INT32_MAX || n_add > INT32_MAX || 3 * n + 2 > INT32_MAX)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: too many modifiers (%d)", ops->name,
                          n_modifiers);
    automaton_params *p = malloc(sizeof *p);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->n_grandparents = n_grandparents;
    p->n_modifiers = n_modifiers;
    return graph_add_factor(g, ops, (int32_t)degree, vars, NULL, false, (int32_t)n_add, scores,
                            p, factor_id);
}

int concord_add_head_automaton(concord_graph *g, int32_t n_modifiers, const int32_t *vars,
                               const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_automaton(g, &head_automaton_ops, 0, n_modifiers, vars, scores,
                         factor_id);
}

int concord_add_grandparent_head_automaton(concord_graph *g, int32_t n_grandparents,
                                           int32_t n_modifiers, const int32_t *vars,
                                           const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_automaton(g, &grandparent_head_automaton_ops, n_grandparents,
                         n_modifiers, vars, scores, factor_id);
}
