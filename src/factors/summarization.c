/*
 * The factors of AD3's compressive summarization models (Almeida and
 * Martins 2013), each with a dynamic-programming MAP oracle; their QPs come
 * from the generic active set. The public builders are here too.
 *
 * GENERAL_TREE: a Markov random field shaped as a rooted tree. Node i has
 * num_states[i] states and a parent (node 0 is the root, parent -1; the
 * others may be numbered in any order as long as the parents form a tree).
 * Links: the state indicators, node by node. Additional outputs: for each
 * non-root node in index order, the table (parent state, node state),
 * row-major with the parent's state first, on for the pair the
 * configuration uses. A configuration is one state per node with the n - 1
 * edges it uses. Oracle: max-product from the leaves up, O(sum over edges
 * of K_parent K_node).
 *
 * GENERAL_TREE_COUNTS: a GENERAL_TREE that also reports how many nodes are
 * in state 0: after the state indicators come n + 1 count indicators
 * (count 0, 1, ..., n), exactly one of which is on, so that the count's
 * score is a link score (e.g. a length penalty on the summary). Oracle: the
 * same recursion over (state, count within the subtree), children merged
 * one at a time by max-plus convolution of their count profiles: O(K^2 n)
 * for the messages of a node with K states and O(K n^2) for the merges.
 *
 * SEQUENCE_COMPRESSOR: a sentence of n words any subset of which is kept,
 * plus a sentence indicator that is on exactly when some word is kept.
 * Links: the n word indicators, then the sentence indicator. Additional
 * outputs: the pairs (m, s), 0 <= m < s <= n + 1, ordered by m then s, on
 * when m and s are consecutive in 0 -> kept words -> n + 1 (bigrams of the
 * compressed sentence, with 0 and n + 1 its boundaries): a HEAD_AUTOMATON
 * over the words with an OR output. Oracle: the best non-empty chain plus
 * the sentence score against the empty one, O(n^2).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../graph.h"
#include "head_automaton.h"

typedef struct tree_params {
    int32_t n;            /* nodes */
    int32_t counts;       /* GENERAL_TREE_COUNTS */
    int32_t *states;      /* per node */
    int32_t *offset;      /* n + 1: link of each node's state 0; [n] the first count link */
    int32_t *parent;      /* per node (-1 at the root) */
    int32_t *edge;        /* additional index of each node's edge table ([0] unused) */
    int32_t *order;       /* breadth-first from the root: parents come first */
    int32_t *child_begin; /* n + 1, into children */
    int32_t *children;    /* each node's children, in index order */
    int32_t *size;        /* nodes in each subtree */
    int32_t *merged;      /* per non-root node: nodes of its parent's subtree merged
                             once it is (the parent, earlier siblings' subtrees, its own) */
    size_t *val_at;       /* offset of each node's value table: K x width */
    size_t *pick_at;      /* offset of each non-root node's choice table: K_parent x width */
    size_t *split_at;     /* counts: offset of each non-root node's split table:
                             K_parent x (merged + 1) */
    size_t n_val, n_pick, n_split; /* table totals */
} tree_params;

static const tree_params *tree_of(const factor *f) { return (const tree_params *)f->params; }

/* Count profile width of node i: counts 0..size, or a single column. */
static size_t width(const tree_params *p, int32_t i) {
    return p->counts ? (size_t)p->size[i] + 1 : 1;
}

static void clear(const factor *f, double *u, double *v) {
    for (int32_t j = 0; j < f->degree; ++j) u[j] = 0.0;
    for (int32_t k = 0; k < f->n_add; ++k) v[k] = 0.0;
}

/* Writes the configuration of the node states st into u and v. */
static void write_tree(const factor *f, const int32_t *st, double *u, double *v) {
    const tree_params *p = tree_of(f);
    clear(f, u, v);
    for (int32_t i = 0; i < p->n; ++i) {
        u[p->offset[i] + st[i]] = 1.0;
        if (i > 0) v[p->edge[i] + st[p->parent[i]] * p->states[i] + st[i]] = 1.0;
    }
}

/* Max-product from the leaves up. Scratch: the node values (sum of K)
 * doubles, then the best child state per parent state and node, and the
 * decoded states. */
static double tree_map(const factor *f, const double *a, const double *b, double *u, double *v,
                       void *scratch) {
    const tree_params *p = tree_of(f);
    double *val = (double *)scratch;
    int32_t *pick = (int32_t *)(val + p->n_val), *st = pick + p->n_pick;
    for (int32_t i = 0; i < p->n; ++i)
        for (int32_t k = 0; k < p->states[i]; ++k) val[p->val_at[i] + k] = a[p->offset[i] + k];
    for (int32_t t = p->n - 1; t > 0; --t) {
        const int32_t i = p->order[t], par = p->parent[i], ki = p->states[i];
        const double *vi = val + p->val_at[i], *tab = b + p->edge[i];
        double *vp = val + p->val_at[par];
        int32_t *pk = pick + p->pick_at[i];
        for (int32_t k = 0; k < p->states[par]; ++k) {
            const double *row = tab + (size_t)k * (size_t)ki;
            int32_t arg = 0;
            double best = vi[0] + row[0];
            for (int32_t j = 1; j < ki; ++j)
                if (vi[j] + row[j] > best) {
                    best = vi[j] + row[j];
                    arg = j;
                }
            pk[k] = arg;
            vp[k] += best;
        }
    }
    const double *v0 = val + p->val_at[0];
    st[0] = 0;
    for (int32_t k = 1; k < p->states[0]; ++k)
        if (v0[k] > v0[st[0]]) st[0] = k;
    double best = v0[st[0]];
    for (int32_t t = 1; t < p->n; ++t) {
        const int32_t i = p->order[t];
        st[i] = pick[p->pick_at[i] + (size_t)st[p->parent[i]]];
    }
    write_tree(f, st, u, v);
    return best;
}

/* The same recursion with the number of state-0 nodes in the subtree as a
 * second coordinate. val_i[k][c]: best score of i's subtree with i in
 * state k and c of its nodes in state 0 (-infinity when impossible). A
 * node's children are merged one at a time: the child's best profile under
 * parent state k, msg[c'] = max_j val_child[j][c'] + edge(k, j), is
 * max-plus convolved into the running profile; pick and split record the
 * arg-maxes for the way down. Scratch: values, three profiles of n + 1
 * doubles, then picks, splits, and the decoded states and counts. */
static double tree_counts_map(const factor *f, const double *a, const double *b, double *u,
                              double *v, void *scratch) {
    const tree_params *p = tree_of(f);
    const int32_t n = p->n;
    double *val = (double *)scratch, *acc = val + p->n_val, *next = acc + n + 1,
           *msg = next + n + 1;
    int32_t *pick = (int32_t *)(msg + n + 1), *split = pick + p->n_pick, *st = split + p->n_split,
            *cnt = st + n;
    for (int32_t t = n - 1; t >= 0; --t) {
        const int32_t i = p->order[t], ki = p->states[i];
        const size_t wi = width(p, i);
        for (int32_t k = 0; k < ki; ++k) {
            for (size_t c = 0; c < wi; ++c) acc[c] = -INFINITY;
            acc[k == 0] = a[p->offset[i] + k];
            size_t filled = 1; /* nodes merged: counts 0..filled */
            for (int32_t e = p->child_begin[i]; e < p->child_begin[i + 1]; ++e) {
                const int32_t ch = p->children[e], kc = p->states[ch];
                const size_t wc = width(p, ch);
                const double *vc = val + p->val_at[ch];
                const double *row = b + p->edge[ch] + (size_t)k * (size_t)kc;
                int32_t *pk = pick + p->pick_at[ch] + (size_t)k * wc;
                for (size_t c = 0; c < wc; ++c) {
                    int32_t arg = 0;
                    double best = vc[c] + row[0];
                    for (int32_t j = 1; j < kc; ++j) {
                        double x = vc[(size_t)j * wc + c] + row[j];
                        if (x > best) {
                            best = x;
                            arg = j;
                        }
                    }
                    msg[c] = best;
                    pk[c] = arg;
                }
                const size_t total = filled + wc - 1;
                int32_t *sp = split + p->split_at[ch] + (size_t)k * (total + 1);
                for (size_t c = 0; c <= total; ++c) {
                    size_t lo = c > filled ? c - filled : 0, hi = c < wc - 1 ? c : wc - 1;
                    double best = -INFINITY;
                    int32_t arg = (int32_t)lo;
                    for (size_t cc = lo; cc <= hi; ++cc) {
                        double x = acc[c - cc] + msg[cc];
                        if (x > best) {
                            best = x;
                            arg = (int32_t)cc;
                        }
                    }
                    next[c] = best;
                    sp[c] = arg;
                }
                double *swap = acc;
                acc = next;
                next = swap;
                filled = total;
            }
            memcpy(val + p->val_at[i] + (size_t)k * wi, acc, wi * sizeof(double));
        }
    }
    /* The root: its state and the total count, scored by the count links. */
    const double *v0 = val + p->val_at[0], *count_score = a + p->offset[n];
    const size_t w0 = width(p, 0);
    double best = -INFINITY;
    st[0] = 0;
    cnt[0] = 0;
    for (int32_t k = 0; k < p->states[0]; ++k)
        for (size_t c = 0; c < w0; ++c) {
            double x = v0[(size_t)k * w0 + c] + count_score[c];
            if (x > best) {
                best = x;
                st[0] = k;
                cnt[0] = (int32_t)c;
            }
        }
    /* Down: each node hands its count out to its children, last first. */
    for (int32_t t = 0; t < n; ++t) {
        const int32_t i = p->order[t], k = st[i];
        int32_t rest = cnt[i];
        for (int32_t e = p->child_begin[i + 1] - 1; e >= p->child_begin[i]; --e) {
            const int32_t ch = p->children[e];
            const size_t wc = width(p, ch);
            const int32_t *sp = split + p->split_at[ch] + (size_t)k * ((size_t)p->merged[ch] + 1);
            int32_t c = sp[rest];
            st[ch] = pick[p->pick_at[ch] + (size_t)k * wc + (size_t)c];
            cnt[ch] = c;
            rest -= c;
        }
    }
    write_tree(f, st, u, v);
    u[p->offset[n] + cnt[0]] = 1.0;
    return best;
}

static size_t tree_scratch(const factor *f) {
    const tree_params *p = tree_of(f);
    size_t doubles = p->n_val + (p->counts ? 3 * ((size_t)p->n + 1) : 0);
    size_t ints = p->n_pick + p->n_split + 2 * (size_t)p->n;
    return doubles * sizeof(double) + ints * sizeof(int32_t);
}

/* States, edges and (counts) one count indicator. */
static int32_t tree_config_size(const factor *f) {
    const tree_params *p = tree_of(f);
    return 2 * p->n - 1 + p->counts;
}

static const factor_ops general_tree_ops = {.name = "GENERAL_TREE",
                                            .map = tree_map,
                                            .scratch_bytes = tree_scratch,
                                            .config_size = tree_config_size};

static const factor_ops general_tree_counts_ops = {.name = "GENERAL_TREE_COUNTS",
                                                   .map = tree_counts_map,
                                                   .scratch_bytes = tree_scratch,
                                                   .config_size = tree_config_size};

/* Largest GENERAL_TREE_COUNTS table (values, choices or splits) accepted. */
#define TREE_MAX_CELLS ((size_t)1 << 24)

/* Lays out the parameters of a tree whose parents are in range; NULL when
 * out of memory. When some node is not a descendant of the root (the
 * parents have a cycle), *stray receives one and the tables are not laid
 * out (the caller frees the result). */
static tree_params *tree_params_new(int32_t n, const int32_t *num_states, const int32_t *parents,
                                    bool counts, int32_t *stray) {
    size_t ints = 10 * (size_t)n + 2, sizes = 3 * (size_t)n;
    tree_params *p = malloc(sizeof *p + sizes * sizeof(size_t) + ints * sizeof(int32_t));
    if (!p) return NULL;
    p->n = n;
    p->counts = counts;
    p->val_at = (size_t *)(p + 1);
    p->pick_at = p->val_at + n;
    p->split_at = p->pick_at + n;
    p->states = (int32_t *)(p->split_at + n);
    p->offset = p->states + n;
    p->parent = p->offset + n + 1;
    p->edge = p->parent + n;
    p->order = p->edge + n;
    p->child_begin = p->order + n;
    p->children = p->child_begin + n + 1;
    p->size = p->children + n;
    p->merged = p->size + n;
    memcpy(p->states, num_states, (size_t)n * sizeof(int32_t));
    memcpy(p->parent, parents, (size_t)n * sizeof(int32_t));
    int32_t at = 0, add = 0;
    for (int32_t i = 0; i <= n; ++i) {
        p->offset[i] = at;
        if (i < n) at += num_states[i];
    }
    p->edge[0] = 0;
    for (int32_t i = 1; i < n; ++i) {
        p->edge[i] = add;
        add += num_states[parents[i]] * num_states[i];
    }
    /* children in index order (counting sort by parent) */
    for (int32_t i = 0; i <= n; ++i) p->child_begin[i] = 0;
    for (int32_t i = 1; i < n; ++i) p->child_begin[parents[i] + 1] += 1;
    for (int32_t i = 0; i < n; ++i) p->child_begin[i + 1] += p->child_begin[i];
    for (int32_t i = 0; i < n; ++i) p->size[i] = p->child_begin[i]; /* cursor */
    for (int32_t i = 1; i < n; ++i) p->children[p->size[parents[i]]++] = i;
    /* breadth-first order */
    int32_t head = 0, tail = 0;
    p->order[tail++] = 0;
    while (head < tail) {
        int32_t i = p->order[head++];
        for (int32_t e = p->child_begin[i]; e < p->child_begin[i + 1]; ++e)
            p->order[tail++] = p->children[e];
    }
    if (tail < n) {
        for (int32_t i = 0; i < n; ++i) p->size[i] = 0;
        for (int32_t t = 0; t < tail; ++t) p->size[p->order[t]] = 1;
        for (int32_t i = 0; i < n && *stray < 0; ++i)
            if (!p->size[i]) *stray = i;
        return p;
    }
    for (int32_t i = 0; i < n; ++i) p->size[i] = 1;
    for (int32_t t = n - 1; t > 0; --t) p->size[parents[p->order[t]]] += p->size[p->order[t]];
    p->n_val = p->n_pick = p->n_split = 0;
    for (int32_t i = 0; i < n; ++i) {
        p->val_at[i] = p->n_val;
        p->n_val += (size_t)num_states[i] * width(p, i);
        int32_t filled = 1;
        for (int32_t e = p->child_begin[i]; e < p->child_begin[i + 1]; ++e) {
            int32_t ch = p->children[e];
            filled += p->size[ch];
            p->merged[ch] = filled;
            p->pick_at[ch] = p->n_pick;
            p->n_pick += (size_t)num_states[i] * width(p, ch);
            p->split_at[ch] = p->n_split;
            if (counts) p->n_split += (size_t)num_states[i] * ((size_t)filled + 1);
        }
    }
    p->merged[0] = n;
    p->pick_at[0] = p->split_at[0] = 0;
    return p;
}

static int add_tree(concord_graph *g, const factor_ops *ops, int32_t n, const int32_t *num_states,
                    const int32_t *parents, const int32_t *vars, const double *scores,
                    int32_t *factor_id) {
    const char *name = ops->name;
    const bool counts = ops == &general_tree_counts_ops;
    if (n < 1 || !num_states || !parents)
        return graph_fail(g, CONCORD_EINVAL, "%s factor over %d nodes (must be >= 1)", name, n);
    if (n > INT32_MAX / 16)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: too many nodes (%d)", name, n);
    if (parents[0] != -1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: the root (node 0) has parent %d, not -1",
                          name, parents[0]);
    int64_t degree = counts ? (int64_t)n + 1 : 0, n_add = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (num_states[i] < 1)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: node %d has %d states", name, i,
                              num_states[i]);
        if (i > 0 && (parents[i] < 0 || parents[i] >= n || parents[i] == i))
            return graph_fail(g, CONCORD_EINVAL,
                              "%s factor: node %d has parent %d (must be another node in [0, %d))",
                              name, i, parents[i], n);
        degree += num_states[i];
        if (i > 0) n_add += (int64_t)num_states[parents[i]] * num_states[i];
        if (degree > INT32_MAX || n_add > INT32_MAX)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: too many states", name);
    }
    int32_t stray = -1;
    tree_params *p = tree_params_new(n, num_states, parents, counts, &stray);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    if (stray >= 0) {
        free(p);
        return graph_fail(g, CONCORD_EINVAL,
                          "%s factor: the parents do not form a tree (node %d is not a "
                          "descendant of the root: they form a cycle)",
                          name, stray);
    }
    /* The count tables grow as n^2 (a plain tree's stay within its links and
     * outputs): bound what an oracle call may touch. */
    if (counts &&
        (p->n_val > TREE_MAX_CELLS || p->n_pick > TREE_MAX_CELLS || p->n_split > TREE_MAX_CELLS)) {
        free(p);
        return graph_fail(g, CONCORD_EINVAL, "%s factor: dynamic programming tables too large",
                          name);
    }
    return graph_add_factor(g, ops, (int32_t)degree, vars, NULL, false, (int32_t)n_add, scores,
                            p, factor_id);
}

int concord_add_general_tree(concord_graph *g, int32_t n_nodes, const int32_t *num_states,
                             const int32_t *parents, const int32_t *vars, const double *scores,
                             int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_tree(g, &general_tree_ops, n_nodes, num_states, parents, vars, scores,
                    factor_id);
}

int concord_add_general_tree_counts(concord_graph *g, int32_t n_nodes, const int32_t *num_states,
                                    const int32_t *parents, const int32_t *vars,
                                    const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_tree(g, &general_tree_counts_ops, n_nodes, num_states, parents, vars,
                    scores, factor_id);
}

/* SEQUENCE_COMPRESSOR. Scratch: the chain values (n + 2 doubles). */
typedef struct compressor_params {
    int32_t n_words;
} compressor_params;

static double compressor_map(const factor *f, const double *a, const double *b, double *u,
                             double *v, void *scratch) {
    const int32_t n = ((const compressor_params *)f->params)->n_words;
    double *best = (double *)scratch;
    clear(f, u, v);
    const int64_t empty_pair = sibling_pair(n, 0, n + 1);
    const double empty = b[empty_pair];
    if (n > 0) {
        double kept = a[n] + sibling_chain_best(n, a, b, true, best);
        if (kept > empty) {
            sibling_chain_write(n, b, true, best, u, v);
            u[n] = 1.0;
            return kept;
        }
    }
    v[empty_pair] = 1.0;
    return empty;
}

static size_t compressor_scratch(const factor *f) {
    return ((size_t)((const compressor_params *)f->params)->n_words + 2) * sizeof(double);
}

/* Words, the sentence indicator and the pairs of the chain. */
static int32_t compressor_config_size(const factor *f) {
    return 2 * ((const compressor_params *)f->params)->n_words + 2;
}

static const factor_ops sequence_compressor_ops = {.name = "SEQUENCE_COMPRESSOR",
                                                   .map = compressor_map,
                                                   .scratch_bytes = compressor_scratch,
                                                   .config_size = compressor_config_size};

int concord_add_sequence_compressor(concord_graph *g, int32_t n_words, const int32_t *vars,
                                    const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    int64_t n = n_words;
    if (n < 0 || (n + 1) * (n + 2) / 2 > INT32_MAX)
        return graph_fail(g, CONCORD_EINVAL, "SEQUENCE_COMPRESSOR factor: %d words", n_words);
    compressor_params *p = malloc(sizeof *p);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->n_words = n_words;
    return graph_add_factor(g, &sequence_compressor_ops, n_words + 1, vars, NULL, false,
                            (int32_t)((n + 1) * (n + 2) / 2), scores, p, factor_id);
}
