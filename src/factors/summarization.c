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
 * BINARY_TREE and BINARY_TREE_COUNTS: the same two recursions over nodes
 * of two states whose only link is the indicator of state 1; the count of
 * a node's subtree (its counted nodes in state 1) is scored by additional
 * outputs at any node that has count scores, and counts from a cap up may
 * share one bin (AD3's max_num_bins), which bounds the profiles' width.
 *
 * SEQUENCE_COMPRESSOR: a sentence of n words any subset of which is kept,
 * plus a sentence indicator that is on exactly when some word is kept.
 * Links: the n word indicators, then the sentence indicator. Additional
 * outputs: the pairs (m, s), 0 <= m < s <= n + 1, ordered by m then s, on
 * when m and s are consecutive in 0 -> kept words -> n + 1 (bigrams of the
 * compressed sentence, with 0 and n + 1 its boundaries): a HEAD_AUTOMATON
 * over the words with an OR output. Oracle: the best non-empty chain plus
 * the sentence score against the empty one, O(n^2).
 *
 * COMPRESSION_BUDGET: a chain of kept or dropped tokens with at most B
 * counted tokens kept, whose (kept, kept) transitions may be links (bigram
 * indicators) rather than additional outputs. Oracle: Viterbi over
 * (token, kept, count), O(L min(B, L)).
 *
 * In every family an additional output scored -inf is forbidden
 * (factor_ops.forbids): the oracles run on a copy of the scores with -inf
 * there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../graph.h"
#include "head_automaton.h"

typedef struct tree_params {
    int32_t n;            /* nodes */
    bool counts;          /* a count coordinate (the *_COUNTS families) */
    bool binary;          /* BINARY_TREE*: one link per node, on in state 1 */
    int32_t counted_state; /* the state a counted node counts in */
    int32_t cap;          /* counts of cap or more share bin cap */
    int32_t *states;      /* per node */
    int32_t *offset;      /* n + 1: link of each node's state 0 (binary: of the node);
                             [n] the first count link (GENERAL_TREE_COUNTS) */
    int32_t *parent;      /* per node (-1 at the root) */
    int32_t *edge;        /* additional index of each node's edge table ([0] unused) */
    int32_t *counted;     /* per node: 1 when it counts in counted_state */
    int32_t *count_at;    /* per node: additional index of its count scores, -1: none */
    int32_t *order;       /* breadth-first from the root: parents come first */
    int32_t *child_begin; /* n + 1, into children */
    int32_t *children;    /* each node's children, in index order */
    int32_t *size;        /* nodes in each subtree */
    int32_t *merged;      /* per non-root node: nodes of its parent's subtree merged
                             once it is (the parent, earlier siblings' subtrees, its own) */
    size_t *val_at;       /* offset of each node's value table: K x width */
    size_t *pick_at;      /* offset of each non-root node's choice table: K_parent x width */
    size_t *split_at;     /* counts: offset of each non-root node's split table:
                             K_parent x bins(merged) */
    size_t n_val, n_pick, n_split; /* table totals */
} tree_params;

static const tree_params *tree_of(const factor *f) { return (const tree_params *)f->params; }

/* Count bins of `nodes` nodes: counts 0..nodes, the last cap..nodes shared. */
static size_t bins(const tree_params *p, int32_t nodes) {
    return (size_t)(nodes < p->cap ? nodes : p->cap) + 1;
}

/* Count profile width of node i: the bins of its subtree, or a single column. */
static size_t width(const tree_params *p, int32_t i) {
    return p->counts ? bins(p, p->size[i]) : 1;
}

/* The score of node i in state k (a binary node's state 0 has no link). */
static inline double node_score(const tree_params *p, const double *a, int32_t i, int32_t k) {
    if (p->binary) return k ? a[p->offset[i]] : 0.0;
    return a[p->offset[i] + k];
}

/* The score of count bin c of node i's subtree: its count scores, or for
 * GENERAL_TREE_COUNTS the root's count links. */
static inline double count_score(const tree_params *p, const double *a, const double *b,
                                 int32_t i, size_t c) {
    if (p->count_at[i] >= 0) return b[p->count_at[i] + (int64_t)c];
    return !p->binary && i == 0 ? a[p->offset[p->n] + (int64_t)c] : 0.0;
}

static void clear(const factor *f, double *u, double *v) {
    for (int32_t j = 0; j < f->degree; ++j) u[j] = 0.0;
    for (int32_t k = 0; k < f->n_add; ++k) v[k] = 0.0;
}

/* Writes the configuration of the node states st (and, with counts, the
 * count bins cnt of every subtree) into u and v. */
static void write_tree(const factor *f, const int32_t *st, const int32_t *cnt, double *u,
                       double *v) {
    const tree_params *p = tree_of(f);
    clear(f, u, v);
    for (int32_t i = 0; i < p->n; ++i) {
        if (p->binary) u[p->offset[i]] = st[i];
        else u[p->offset[i] + st[i]] = 1.0;
        if (i > 0) v[p->edge[i] + st[p->parent[i]] * p->states[i] + st[i]] = 1.0;
    }
    if (!cnt) return;
    for (int32_t i = 0; i < p->n; ++i)
        if (p->count_at[i] >= 0) v[p->count_at[i] + cnt[i]] = 1.0;
    if (!p->binary) u[p->offset[p->n] + cnt[0]] = 1.0;
}

/* Max-product from the leaves up. Scratch: the node values (sum of K)
 * doubles, then the best child state per parent state and node, and the
 * decoded states. */
static double tree_map(const factor *f, const double *a, const double *b, double *u, double *v,
                       void *scratch) {
    const tree_params *p = tree_of(f);
    b = factor_allowed_scores(f, b, scratch);
    double *val = (double *)scratch;
    int32_t *pick = (int32_t *)(val + p->n_val), *st = pick + p->n_pick;
    for (int32_t i = 0; i < p->n; ++i)
        for (int32_t k = 0; k < p->states[i]; ++k) val[p->val_at[i] + k] = node_score(p, a, i, k);
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
    write_tree(f, st, NULL, u, v);
    return best;
}

/* The same recursion with the count bin of the subtree (the number of its
 * counted nodes in their counting state, cap and above sharing bin cap) as
 * a second coordinate. val_i[k][c]: best score of i's subtree with i in
 * state k and count bin c (-infinity when impossible), count scores of the
 * nodes below i included. A node's children are merged one at a time: the
 * child's best profile under parent state k, msg[c'] = max_j
 * val_child[j][c'] + edge(k, j) + the child's count score of c', is
 * max-plus convolved into the running profile (bins added, then capped);
 * pick records the child's state and split the pair of bins (running,
 * child) behind each merged bin, for the way down. Scratch: values, three
 * profiles of n + 1 doubles, then picks, splits, and the decoded states and
 * count bins. */
static double tree_counts_map(const factor *f, const double *a, const double *b, double *u,
                              double *v, void *scratch) {
    const tree_params *p = tree_of(f);
    b = factor_allowed_scores(f, b, scratch);
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
            const bool counts = p->counted[i] && k == p->counted_state;
            acc[counts ? bins(p, 1) - 1 : 0] = node_score(p, a, i, k);
            int32_t filled = 1; /* nodes merged */
            for (int32_t e = p->child_begin[i]; e < p->child_begin[i + 1]; ++e) {
                const int32_t ch = p->children[e], kc = p->states[ch];
                const size_t wc = width(p, ch), aw = bins(p, filled);
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
                    msg[c] = best + count_score(p, a, b, ch, c);
                    pk[c] = arg;
                }
                filled += p->size[ch];
                const size_t rw = bins(p, filled), cap = (size_t)p->cap;
                int32_t *sp = split + p->split_at[ch] + (size_t)k * rw;
                for (size_t c = 0; c < rw; ++c) {
                    next[c] = -INFINITY;
                    sp[c] = 0;
                }
                for (size_t c = 0; c + 2 <= aw + wc; ++c) {
                    const size_t lo = c + 1 > aw ? c + 1 - aw : 0, hi = c < wc - 1 ? c : wc - 1;
                    const size_t to = c < cap ? c : cap;
                    for (size_t cc = lo; cc <= hi; ++cc) {
                        double x = acc[c - cc] + msg[cc];
                        if (x > next[to]) {
                            next[to] = x;
                            sp[to] = (int32_t)((c - cc) * wc + cc);
                        }
                    }
                }
                double *swap = acc;
                acc = next;
                next = swap;
            }
            memcpy(val + p->val_at[i] + (size_t)k * wi, acc, wi * sizeof(double));
        }
    }
    /* The root: its state and count bin, with the root's count score. */
    const double *v0 = val + p->val_at[0];
    const size_t w0 = width(p, 0);
    double best = -INFINITY;
    st[0] = 0;
    cnt[0] = 0;
    for (int32_t k = 0; k < p->states[0]; ++k)
        for (size_t c = 0; c < w0; ++c) {
            double x = v0[(size_t)k * w0 + c] + count_score(p, a, b, 0, c);
            if (x > best) {
                best = x;
                st[0] = k;
                cnt[0] = (int32_t)c;
            }
        }
    /* Down: each node hands its count bin out to its children, last first. */
    for (int32_t t = 0; t < n; ++t) {
        const int32_t i = p->order[t], k = st[i];
        int32_t rest = cnt[i];
        for (int32_t e = p->child_begin[i + 1] - 1; e >= p->child_begin[i]; --e) {
            const int32_t ch = p->children[e];
            const size_t wc = width(p, ch);
            const int32_t *sp = split + p->split_at[ch] + (size_t)k * bins(p, p->merged[ch]);
            const int32_t code = sp[rest], c = code % (int32_t)wc;
            st[ch] = pick[p->pick_at[ch] + (size_t)k * wc + (size_t)c];
            cnt[ch] = c;
            rest = code / (int32_t)wc;
        }
    }
    write_tree(f, st, cnt, u, v);
    return best;
}

static size_t tree_scratch(const factor *f) {
    const tree_params *p = tree_of(f);
    size_t doubles = p->n_val + (p->counts ? 3 * ((size_t)p->n + 1) : 0);
    size_t ints = p->n_pick + p->n_split + 2 * (size_t)p->n;
    return doubles * sizeof(double) + ints * sizeof(int32_t);
}

/* States, edges and the count indicators (one, or one per scored node). */
static int32_t tree_config_size(const factor *f) {
    const tree_params *p = tree_of(f);
    int32_t count_outputs = p->counts && !p->binary;
    for (int32_t i = 0; i < p->n; ++i) count_outputs += p->count_at[i] >= 0;
    return 2 * p->n - 1 + count_outputs;
}

static const factor_ops general_tree_ops = {.name = "GENERAL_TREE",
                                            .map = tree_map,
                                            .scratch_bytes = tree_scratch,
                                            .config_size = tree_config_size,
                                            .forbids = FORBIDS_BY_SCORES};

static const factor_ops general_tree_counts_ops = {.name = "GENERAL_TREE_COUNTS",
                                                   .map = tree_counts_map,
                                                   .scratch_bytes = tree_scratch,
                                                   .config_size = tree_config_size,
                                                   .forbids = FORBIDS_BY_SCORES};

static const factor_ops binary_tree_ops = {.name = "BINARY_TREE",
                                           .map = tree_map,
                                           .scratch_bytes = tree_scratch,
                                           .config_size = tree_config_size,
                                           .forbids = FORBIDS_BY_SCORES};

static const factor_ops binary_tree_counts_ops = {.name = "BINARY_TREE_COUNTS",
                                                  .map = tree_counts_map,
                                                  .scratch_bytes = tree_scratch,
                                                  .config_size = tree_config_size,
                                                  .forbids = FORBIDS_BY_SCORES};

/* Largest count table (values, choices or splits) accepted. */
#define TREE_MAX_CELLS ((size_t)1 << 24)

/* What distinguishes the four tree families. */
typedef struct tree_kind {
    const factor_ops *ops;
    const int32_t *num_states; /* NULL: binary nodes */
    const bool *counted;       /* binary counts: the nodes that count (NULL: all) */
    const bool *has_count;     /* binary counts: the nodes with count scores */
    int32_t cap;
} tree_kind;

/* Lays out the parameters of a tree whose parents are in range; NULL when
 * out of memory. When some node is not a descendant of the root (the
 * parents have a cycle), *stray receives one and the tables are not laid
 * out (the caller frees the result). Count scores of binary trees follow
 * the edge tables: *n_add receives the number of additional outputs. */
static tree_params *tree_params_new(int32_t n, const int32_t *parents, const tree_kind *kind,
                                    int32_t *stray, int64_t *n_add) {
    size_t ints = 12 * (size_t)n + 2, sizes = 3 * (size_t)n;
    tree_params *p = malloc(sizeof *p + sizes * sizeof(size_t) + ints * sizeof(int32_t));
    if (!p) return NULL;
    p->n = n;
    p->counts = kind->ops->map == tree_counts_map;
    p->binary = !kind->num_states;
    p->counted_state = p->binary ? 1 : 0;
    p->cap = p->counts && kind->cap < n ? kind->cap : n;
    p->val_at = (size_t *)(p + 1);
    p->pick_at = p->val_at + n;
    p->split_at = p->pick_at + n;
    p->states = (int32_t *)(p->split_at + n);
    p->offset = p->states + n;
    p->parent = p->offset + n + 1;
    p->edge = p->parent + n;
    p->counted = p->edge + n;
    p->count_at = p->counted + n;
    p->order = p->count_at + n;
    p->child_begin = p->order + n;
    p->children = p->child_begin + n + 1;
    p->size = p->children + n;
    p->merged = p->size + n;
    memcpy(p->parent, parents, (size_t)n * sizeof(int32_t));
    int32_t at = 0;
    int64_t add = 0;
    for (int32_t i = 0; i <= n; ++i) {
        p->offset[i] = at;
        if (i == n) break;
        p->states[i] = p->binary ? 2 : kind->num_states[i];
        at += p->binary ? 1 : p->states[i];
        p->counted[i] = p->counts && (p->binary ? !kind->counted || kind->counted[i] : 1);
        p->count_at[i] = -1;
    }
    /* Each edge's table holds the product of two state counts, which int32
     * may not: summed in int64 (at most the largest count times their sum,
     * below 2^62), the caller refuses a total beyond INT32_MAX. */
    p->edge[0] = 0;
    for (int32_t i = 1; i < n; ++i) {
        p->edge[i] = add < INT32_MAX ? (int32_t)add : INT32_MAX;
        add += (int64_t)p->states[parents[i]] * p->states[i];
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
    /* count scores: each scored node's bins 0..size, node by node */
    for (int32_t i = 0; p->counts && p->binary && i < n; ++i)
        if (kind->has_count ? kind->has_count[i] : i == 0) {
            p->count_at[i] = add < INT32_MAX ? (int32_t)add : INT32_MAX;
            add += p->size[i] + 1;
        }
    *n_add = add;
    p->n_val = p->n_pick = p->n_split = 0;
    for (int32_t i = 0; i < n; ++i) {
        p->val_at[i] = p->n_val;
        p->n_val += (size_t)p->states[i] * width(p, i);
        int32_t filled = 1;
        for (int32_t e = p->child_begin[i]; e < p->child_begin[i + 1]; ++e) {
            int32_t ch = p->children[e];
            filled += p->size[ch];
            p->merged[ch] = filled;
            p->pick_at[ch] = p->n_pick;
            p->n_pick += (size_t)p->states[i] * width(p, ch);
            p->split_at[ch] = p->n_split;
            if (p->counts) p->n_split += (size_t)p->states[i] * bins(p, filled);
        }
    }
    p->merged[0] = n;
    p->pick_at[0] = p->split_at[0] = 0;
    return p;
}

static int add_tree(concord_graph *g, const tree_kind *kind, int32_t n, const int32_t *parents,
                    const int32_t *vars, const double *scores, int32_t *factor_id) {
    const char *name = kind->ops->name;
    const bool counts = kind->ops->map == tree_counts_map, binary = !kind->num_states;
    if (n < 1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor over %d nodes (must be >= 1)", name, n);
    if (!parents) return graph_fail(g, CONCORD_EINVAL, "%s factor: NULL parents array", name);
    if (n > INT32_MAX / 16)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: too many nodes (%d)", name, n);
    if (parents[0] != -1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: the root (node 0) has parent %d, not -1",
                          name, parents[0]);
    int64_t degree = counts && !binary ? (int64_t)n + 1 : 0;
    for (int32_t i = 0; i < n; ++i) {
        const int32_t k = binary ? 2 : kind->num_states[i];
        if (k < 1)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: node %d has %d states", name, i, k);
        if (i > 0 && (parents[i] < 0 || parents[i] >= n || parents[i] == i))
            return graph_fail(g, CONCORD_EINVAL,
                              "%s factor: node %d has parent %d (must be another node in [0, %d))",
                              name, i, parents[i], n);
        degree += binary ? 1 : k;
        if (degree > INT32_MAX)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: too many states", name);
    }
    int32_t stray = -1;
    int64_t n_add = 0;
    tree_params *p = tree_params_new(n, parents, kind, &stray, &n_add);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    if (stray >= 0) {
        free(p);
        return graph_fail(g, CONCORD_EINVAL,
                          "%s factor: the parents do not form a tree (node %d is not a "
                          "descendant of the root: they form a cycle)",
                          name, stray);
    }
    if (n_add > INT32_MAX) {
        free(p);
        return graph_fail(g, CONCORD_EINVAL, "%s factor: too many states", name);
    }
    /* The count tables grow as n^2 (a plain tree's stay within its links and
     * outputs): bound what an oracle call may touch. */
    if (counts &&
        (p->n_val > TREE_MAX_CELLS || p->n_pick > TREE_MAX_CELLS || p->n_split > TREE_MAX_CELLS)) {
        free(p);
        return graph_fail(g, CONCORD_EINVAL, "%s factor: dynamic programming tables too large",
                          name);
    }
    return graph_add_factor(g, kind->ops, (int32_t)degree, vars, NULL, false, (int32_t)n_add,
                            scores, p, factor_id);
}

int concord_add_general_tree(concord_graph *g, int32_t n_nodes, const int32_t *num_states,
                             const int32_t *parents, const int32_t *vars, const double *scores,
                             int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (!num_states)
        return graph_fail(g, CONCORD_EINVAL, "GENERAL_TREE factor: no num_states array");
    const tree_kind kind = {&general_tree_ops, num_states, NULL, NULL, 0};
    return add_tree(g, &kind, n_nodes, parents, vars, scores, factor_id);
}

int concord_add_general_tree_counts(concord_graph *g, int32_t n_nodes, const int32_t *num_states,
                                    const int32_t *parents, const int32_t *vars,
                                    const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (!num_states)
        return graph_fail(g, CONCORD_EINVAL, "GENERAL_TREE_COUNTS factor: no num_states array");
    const tree_kind kind = {&general_tree_counts_ops, num_states, NULL, NULL, n_nodes};
    return add_tree(g, &kind, n_nodes, parents, vars, scores, factor_id);
}

int concord_add_binary_tree(concord_graph *g, int32_t n_nodes, const int32_t *parents,
                            const int32_t *vars, const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    const tree_kind kind = {&binary_tree_ops, NULL, NULL, NULL, 0};
    return add_tree(g, &kind, n_nodes, parents, vars, scores, factor_id);
}

int concord_add_binary_tree_counts(concord_graph *g, int32_t n_nodes, const int32_t *parents,
                                   const bool *counted, const bool *has_count_scores,
                                   int32_t max_bins, const int32_t *vars, const double *scores,
                                   int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (max_bins < 0)
        return graph_fail(g, CONCORD_EINVAL,
                          "BINARY_TREE_COUNTS factor: max_bins %d (must be >= 1, or 0: none)",
                          max_bins);
    const tree_kind kind = {&binary_tree_counts_ops, NULL, counted, has_count_scores,
                            max_bins > 0 ? max_bins - 1 : n_nodes};
    return add_tree(g, &kind, n_nodes, parents, vars, scores, factor_id);
}

/* SEQUENCE_COMPRESSOR. Scratch: the chain values (n + 2 doubles). */
typedef struct compressor_params {
    int32_t n_words;
} compressor_params;

static double compressor_map(const factor *f, const double *a, const double *b, double *u,
                             double *v, void *scratch) {
    const int32_t n = ((const compressor_params *)f->params)->n_words;
    double *best = (double *)scratch;
    b = factor_allowed_scores(f, b, scratch);
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
                                                   .config_size = compressor_config_size,
                                                   .forbids = FORBIDS_BY_SCORES};

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

/* COMPRESSION_BUDGET. index[4 i + 2 prev + cur] says where transition i
 * (into position i; i = length is the stop) scores the pair (prev, cur):
 * an additional output (>= 0) or a bigram link (-1 - link). The start has
 * prev = 0 only, the stop cur = 0 only. */
typedef struct compression_params {
    int32_t length;
    int32_t columns;  /* count columns of the DP: min(budget, counted) + 1 */
    int32_t *counted; /* per position: 1 when kept tokens there count */
    int32_t *index;   /* 4 (length + 1) */
} compression_params;

static const compression_params *compression_of(const factor *f) {
    return (const compression_params *)f->params;
}

static inline double transition_score(const compression_params *p, const double *a,
                                      const double *b, int32_t i, int32_t prev, int32_t cur) {
    const int32_t at = p->index[4 * i + 2 * prev + cur];
    return at >= 0 ? b[at] : a[-1 - at];
}

/* Viterbi over (position, kept, count of counted kept tokens so far):
 * val[(i * 2 + s) * C + c], -infinity when impossible; predecessors are
 * recovered on the way back. Scratch: those values, then the decoded
 * states. */
static double compression_map(const factor *f, const double *a, const double *b, double *u,
                              double *v, void *scratch) {
    const compression_params *p = compression_of(f);
    b = factor_allowed_scores(f, b, scratch);
    const int32_t L = p->length, C = p->columns;
    double *val = (double *)scratch;
    int32_t *seq = (int32_t *)(val + (size_t)2 * (size_t)L * (size_t)C);
    for (size_t x = 0; x < (size_t)2 * (size_t)L * (size_t)C; ++x) val[x] = -INFINITY;
    for (int32_t s = 0; s < 2; ++s) {
        const int32_t c = s && p->counted[0];
        if (c < C) val[s * C + c] = transition_score(p, a, b, 0, 0, s) + (s ? a[0] : 0.0);
    }
    for (int32_t i = 1; i < L; ++i)
        for (int32_t s = 0; s < 2; ++s) {
            const int32_t up = s && p->counted[i];
            const double node = s ? a[i] : 0.0;
            double *cur = val + ((size_t)i * 2 + (size_t)s) * (size_t)C;
            for (int32_t c = 0; c + up < C; ++c)
                for (int32_t prev = 0; prev < 2; ++prev) {
                    const double x = val[((size_t)(i - 1) * 2 + (size_t)prev) * (size_t)C + c] +
                                     transition_score(p, a, b, i, prev, s) + node;
                    if (x > cur[c + up]) cur[c + up] = x;
                }
        }
    double best = -INFINITY;
    int32_t column = 0;
    seq[L - 1] = 0;
    for (int32_t s = 0; s < 2; ++s)
        for (int32_t c = 0; c < C; ++c) {
            const double x = val[((size_t)(L - 1) * 2 + (size_t)s) * (size_t)C + c] +
                             transition_score(p, a, b, L, s, 0);
            if (x > best) {
                best = x;
                seq[L - 1] = s;
                column = c;
            }
        }
    for (int32_t i = L - 1; i > 0; --i) {
        column -= seq[i] && p->counted[i];
        double from = -INFINITY;
        seq[i - 1] = 0;
        for (int32_t prev = 0; prev < 2; ++prev) {
            const double x = val[((size_t)(i - 1) * 2 + (size_t)prev) * (size_t)C + column] +
                             transition_score(p, a, b, i, prev, seq[i]);
            if (x > from) {
                from = x;
                seq[i - 1] = prev;
            }
        }
    }
    clear(f, u, v);
    for (int32_t i = 0; i <= L; ++i) {
        const int32_t prev = i > 0 ? seq[i - 1] : 0, cur = i < L ? seq[i] : 0;
        const int32_t at = p->index[4 * i + 2 * prev + cur];
        if (at >= 0) v[at] = 1.0;
        else u[-1 - at] = 1.0;
        if (i < L) u[i] = cur;
    }
    return best;
}

static size_t compression_scratch(const factor *f) {
    const compression_params *p = compression_of(f);
    return (size_t)2 * (size_t)p->length * (size_t)p->columns * sizeof(double) +
           (size_t)p->length * sizeof(int32_t);
}

/* The kept tokens and one pair per transition. */
static int32_t compression_config_size(const factor *f) {
    return 2 * compression_of(f)->length + 1;
}

static const factor_ops compression_budget_ops = {.name = "COMPRESSION_BUDGET",
                                                  .map = compression_map,
                                                  .scratch_bytes = compression_scratch,
                                                  .config_size = compression_config_size,
                                                  .forbids = FORBIDS_BY_SCORES};

int concord_add_compression_budget(concord_graph *g, int32_t length, int32_t budget,
                                   const bool *counted, int32_t n_bigrams,
                                   const int32_t *bigram_positions, const int32_t *vars,
                                   const double *scores, int32_t *factor_id) {
    static const char name[] = "COMPRESSION_BUDGET";
    if (!g) return CONCORD_EINVAL;
    if (length < 1 || length > INT32_MAX / 8)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: length %d (must be >= 1)", name, length);
    if (budget < 0)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: budget %d must be >= 0", name, budget);
    if (n_bigrams < 0 || n_bigrams > length + 1 || (n_bigrams > 0 && !bigram_positions))
        return graph_fail(g, CONCORD_EINVAL,
                          "%s factor: %d bigram positions (at most one per transition, %d)",
                          name, n_bigrams, length + 1);
    int32_t n_counted = 0;
    for (int32_t i = 0; i < length; ++i) n_counted += !counted || counted[i];
    const int32_t columns = (budget < n_counted ? budget : n_counted) + 1;
    if ((int64_t)2 * length * columns > (int64_t)1 << 24)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: budget table too large", name);
    compression_params *p =
        malloc(sizeof *p + ((size_t)length + 4 * ((size_t)length + 1)) * sizeof(int32_t));
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->length = length;
    p->columns = columns;
    p->counted = (int32_t *)(p + 1);
    p->index = p->counted + length;
    for (int32_t i = 0; i < length; ++i) p->counted[i] = !counted || counted[i];
    for (int32_t x = 0; x < 4 * (length + 1); ++x) p->index[x] = 0;
    for (int32_t k = 0; k < n_bigrams; ++k) {
        const int32_t pos = bigram_positions[k];
        if (pos < -1 || pos >= length || p->index[4 * (pos + 1)] < 0) {
            free(p);
            return graph_fail(g, CONCORD_EINVAL,
                              "%s factor: bigram position %d (must be distinct, in [-1, %d))",
                              name, pos, length);
        }
        p->index[4 * (pos + 1)] = -1 - (length + k); /* marks the transition for below */
    }
    int32_t add = 0;
    for (int32_t i = 0; i <= length; ++i) {
        const int32_t bigram = p->index[4 * i], last_prev = i > 0, last_cur = i < length;
        for (int32_t prev = 0; prev <= last_prev; ++prev)
            for (int32_t cur = 0; cur <= last_cur; ++cur)
                p->index[4 * i + 2 * prev + cur] =
                    bigram < 0 && prev == last_prev && cur == last_cur ? bigram : add++;
    }
    return graph_add_factor(g, &compression_budget_ops, length + n_bigrams, vars, NULL, false,
                            add, scores, p, factor_id);
}
