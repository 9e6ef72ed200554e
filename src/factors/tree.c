/*
 * TREE factor: dependency trees over a sentence whose node 0 is the root and
 * nodes 1..length-1 are the tokens. Each link is one candidate arc (head,
 * modifier); a configuration switches on one incoming arc per token so that
 * every token descends from the root. Arcs that were not given cannot be
 * used. Four variants, by two flags:
 *   - non-projective: the maximum arborescence by Chu-Liu-Edmonds, in the
 *     O(length^2) form of Tarjan (a dense matrix between super-nodes, a
 *     path grown one best entering arc at a time, every cycle contracted as
 *     soon as it closes; each contraction costs O(length * cycle size)),
 *     or, when at most half the possible arcs are given, in its O(m log m)
 *     form over leftist heaps of entering arcs (cle_uses_heaps);
 *   - non-projective, single root: the same algorithm over scores in Z x R
 *     ordered lexicographically, where every root arc carries -1 in the
 *     integer part. The best arborescence under that order first uses as
 *     few root arcs as possible (one: construction checks that a
 *     single-root tree exists), then scores best: still O(length^2), one run;
 *   - projective (no crossing arcs), with any number of root children or
 *     exactly one: Eisner's O(length^3) dynamic programme over complete and
 *     incomplete spans; the single-root form attaches one child to the root
 *     on top of root-free spans.
 * The factor has no additional outputs and only a MAP oracle: its weighted
 * QP goes through the generic active set. The public builder is here too,
 * with the construction-time check that a tree exists at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../graph.h"

/* Longest sentence accepted (nodes, root included): the oracle's scratch
 * holds several length x length tables. */
enum { TREE_MAX_LENGTH = 4096 };

typedef struct tree_params {
    int32_t length;  /* nodes, the root included */
    unsigned flags;  /* CONCORD_TREE_* */
    int32_t n_arcs;
    int32_t *head;   /* per link */
    int32_t *mod;    /* per link */
} tree_params;

static const tree_params *params_of(const factor *f) {
    return (const tree_params *)f->params;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Scratch is carved into arrays by one layout routine, run once to measure
 * (base NULL) and once to place the arrays. */
typedef struct carver {
    char *base;
    size_t used;
} carver;

static void *carve(carver *c, size_t count, size_t size) {
    size_t at = c->used;
    c->used += align8(count * size);
    return c->base ? c->base + at : NULL;
}

/* ------------------------------------------------------------------------
 * Non-projective trees: Chu-Liu-Edmonds / Tarjan in O(length^2)
 * ------------------------------------------------------------------------ */

/* Working state. Super-nodes are numbered 0..n-1 (the original nodes) and
 * n, n+1, ... (contracted cycles, at most n-2 of them). Live super-nodes
 * occupy slots 0..n-1; a contracted cycle takes the slot of one of its
 * members. The matrices are indexed [modifier slot * n + head slot] so that
 * the search for a best entering arc reads one contiguous row. A missing
 * arc (never given, into the root, a slot into itself, or out of a slot
 * that was merged away) has score -inf, so the search needs no other test;
 * `arc` and `pen` are read only where the score is finite, and `pen` only
 * in the single-root variant. */
typedef struct cle_work {
    double *w;        /* adjusted score of the best arc between two slots */
    int32_t *pen;     /* its integer (lexicographically dominant) part */
    int32_t *arc;     /* the original link achieving it */
    int32_t *node;    /* super-node in each slot */
    uint8_t *alive;   /* slot in use */
    uint8_t *state;   /* per slot: FRESH, ON_PATH, DONE, or IN_CYCLE */
    int32_t *path;    /* slots on the path being grown */
    int32_t *pos;     /* position of a slot on the path */
    int32_t *enter;   /* per super-node: its chosen entering link */
    double *enter_w;  /* and the adjusted score of that link */
    int32_t *enter_pen;
    int32_t *parent;  /* per super-node: the cycle it was contracted into */
    int32_t *final;   /* per super-node: its entering link in the result */
    int32_t *chosen;  /* per cycle: the member the cycle's entering link enters */
    double *in_w, *out_w; /* new row and column of a contracted cycle */
    int32_t *in_pen, *out_pen, *in_arc, *out_arc;
} cle_work;

enum { FRESH = 0, ON_PATH = 1, DONE = 2, IN_CYCLE = 3 };

/* The walk both forms share: from a fresh node, follow best entering arcs
 * backwards until a finished node (the whole path is finished) or a node
 * of the path itself (a cycle to contract). */
typedef struct cle_walk {
    uint8_t *state;
    int32_t *pos, *path;
    int32_t top;
} cle_walk;

enum { WALK_FINISHED, WALK_EXTENDED, WALK_CYCLE };

static void walk_push(cle_walk *k, int32_t v) {
    k->state[v] = ON_PATH;
    k->pos[v] = k->top;
    k->path[k->top++] = v;
}

/* Starts a walk at `start` unless a walk already reached it. */
static int walk_start(cle_walk *k, int32_t start) {
    if (k->state[start] != FRESH) return 0;
    k->top = 0;
    walk_push(k, start);
    return 1;
}

/* One step to `from` (< 0 when there is no entering arc). */
static int walk_to(cle_walk *k, int32_t from) {
    if (from < 0 || k->state[from] == DONE) {
        for (int32_t i = 0; i < k->top; ++i) k->state[k->path[i]] = DONE;
        return WALK_FINISHED;
    }
    if (k->state[from] == FRESH) {
        walk_push(k, from);
        return WALK_EXTENDED;
    }
    return WALK_CYCLE;
}

static size_t cle_layout(int32_t length, void *base, cle_work *w) {
    carver c = {base, 0};
    size_t n = (size_t)length, nn = n * n, nodes = 2 * n;
    w->w = carve(&c, nn, sizeof(double));
    w->pen = carve(&c, nn, sizeof(int32_t));
    w->arc = carve(&c, nn, sizeof(int32_t));
    w->node = carve(&c, n, sizeof(int32_t));
    w->alive = carve(&c, n, 1);
    w->state = carve(&c, n, 1);
    w->path = carve(&c, n, sizeof(int32_t));
    w->pos = carve(&c, n, sizeof(int32_t));
    w->enter = carve(&c, nodes, sizeof(int32_t));
    w->enter_w = carve(&c, nodes, sizeof(double));
    w->enter_pen = carve(&c, nodes, sizeof(int32_t));
    w->parent = carve(&c, nodes, sizeof(int32_t));
    w->final = carve(&c, nodes, sizeof(int32_t));
    w->chosen = carve(&c, nodes, sizeof(int32_t));
    w->in_w = carve(&c, n, sizeof(double));
    w->out_w = carve(&c, n, sizeof(double));
    w->in_pen = carve(&c, n, sizeof(int32_t));
    w->out_pen = carve(&c, n, sizeof(int32_t));
    w->in_arc = carve(&c, n, sizeof(int32_t));
    w->out_arc = carve(&c, n, sizeof(int32_t));
    return c.used;
}

/* (p1, w1) > (p2, w2) in the lexicographic order of Z x R; without the
 * single-root penalty only the scores count. */
static inline int beats(int single, int32_t p1, double w1, int32_t p2, double w2) {
    if (!single) return w1 > w2;
    return p1 > p2 || (p1 == p2 && w1 > w2);
}

/* Merges the cycle on path[first..top) into one super-node living in the
 * slot of path[first]. Arcs entering the cycle are rescored by the
 * difference with the cycle arc they would replace; of the arcs between
 * the cycle and another slot only the best survives. O(n * cycle size). */
static void cle_contract(cle_work *w, int single, int32_t n, int32_t first, int32_t top,
                         int32_t id) {
    const int32_t cs = w->path[first];
    for (int32_t i = first; i < top; ++i) {
        w->state[w->path[i]] = IN_CYCLE;
        w->parent[w->node[w->path[i]]] = id;
    }
    for (int32_t y = 0; y < n; ++y) {
        w->in_w[y] = w->out_w[y] = -INFINITY;
        w->in_pen[y] = w->out_pen[y] = 0;
        if (!w->alive[y] || w->state[y] == IN_CYCLE) continue;
        for (int32_t i = first; i < top; ++i) {
            const int32_t x = w->path[i], xn = w->node[x];
            const size_t into = (size_t)x * (size_t)n + (size_t)y; /* y -> x */
            if (w->w[into] > -INFINITY) {
                int32_t p = single ? w->pen[into] - w->enter_pen[xn] : 0;
                double s = w->w[into] - w->enter_w[xn];
                if (w->in_w[y] == -INFINITY || beats(single, p, s, w->in_pen[y], w->in_w[y])) {
                    w->in_arc[y] = w->arc[into];
                    w->in_pen[y] = p;
                    w->in_w[y] = s;
                }
            }
            const size_t out = (size_t)y * (size_t)n + (size_t)x; /* x -> y */
            if (w->w[out] > -INFINITY) {
                int32_t p = single ? w->pen[out] : 0;
                if (w->out_w[y] == -INFINITY || beats(single, p, w->w[out], w->out_pen[y], w->out_w[y])) {
                    w->out_arc[y] = w->arc[out];
                    w->out_pen[y] = p;
                    w->out_w[y] = w->w[out];
                }
            }
        }
    }
    for (int32_t y = 0; y < n; ++y) {
        if (!w->alive[y]) continue;
        const size_t into = (size_t)cs * (size_t)n + (size_t)y;
        const size_t out = (size_t)y * (size_t)n + (size_t)cs;
        w->w[into] = w->in_w[y];
        w->arc[into] = w->in_arc[y];
        w->w[out] = w->out_w[y];
        w->arc[out] = w->out_arc[y];
        if (single) {
            w->pen[into] = w->in_pen[y];
            w->pen[out] = w->out_pen[y];
        }
        /* the other members' columns: no arc leaves them any more */
        for (int32_t i = first + 1; i < top; ++i)
            w->w[(size_t)y * (size_t)n + (size_t)w->path[i]] = -INFINITY;
    }
    for (int32_t i = first + 1; i < top; ++i) w->alive[w->path[i]] = 0;
    w->node[cs] = id;
}

/* Expansion of the contracted solution, newest cycle first: a cycle's
 * entering link goes to the member holding its modifier; every other member
 * keeps its own. Super-nodes are numbered as in cle_work; parent[x] is the
 * cycle x was contracted into (-1 at the top), enter[x] the link x chose,
 * and final[] must hold the entering link of every top-level super-node.
 * Writes the tree's links into u (zeroed by the caller), returns its score. */
static double cle_expand(const tree_params *p, int32_t next_id, const int32_t *parent,
                         const int32_t *enter, int32_t *final, int32_t *chosen, const double *a,
                         double *u) {
    const int32_t n = p->length;
    for (int32_t x = next_id - 1; x >= 1; --x) {
        const int32_t c = parent[x];
        if (c >= 0) final[x] = chosen[c] == x ? final[c] : enter[x];
        if (x >= n) {
            int32_t y = final[x] >= 0 ? p->mod[final[x]] : -1;
            while (y >= 0 && parent[y] != x) y = parent[y];
            chosen[x] = y;
        }
    }
    double score = 0.0;
    for (int32_t m = 1; m < n; ++m) {
        int32_t k = final[m];
        if (k >= 0) u[k] = 1.0, score += a[k];
    }
    return score;
}

/* Best arborescence rooted at 0: writes its links into u (which the caller
 * zeroed) and returns its score. */
static double cle_solve(const tree_params *p, const double *a, double *u, void *scratch) {
    const int32_t n = p->length;
    const int single = (p->flags & CONCORD_TREE_SINGLE_ROOT) != 0;
    cle_work w;
    cle_layout(n, scratch, &w);
    for (size_t e = 0; e < (size_t)n * (size_t)n; ++e) w.w[e] = -INFINITY;
    for (int32_t k = 0; k < p->n_arcs; ++k) {
        size_t e = (size_t)p->mod[k] * (size_t)n + (size_t)p->head[k];
        w.arc[e] = k;
        w.w[e] = a[k];
        if (single) w.pen[e] = p->head[k] == 0 ? -1 : 0;
    }
    for (int32_t s = 0; s < n; ++s) {
        w.node[s] = s;
        w.alive[s] = 1;
        w.state[s] = FRESH;
    }
    w.state[0] = DONE;
    for (int32_t x = 0; x < 2 * n; ++x) w.parent[x] = w.enter[x] = -1;
    int32_t next_id = n;

    cle_walk walk = {w.state, w.pos, w.path, 0};
    for (int32_t start = 1; start < n; ++start) {
        if (!walk_start(&walk, start)) continue;
        int32_t v = start;
        for (;;) {
            const double *row_w = w.w + (size_t)v * (size_t)n;
            int32_t bh = -1, bp = 0;
            double bw = -INFINITY;
            if (single) {
                const int32_t *row_pen = w.pen + (size_t)v * (size_t)n;
                for (int32_t h = 0; h < n; ++h)
                    if (row_w[h] > -INFINITY && (bh < 0 || beats(1, row_pen[h], row_w[h], bp, bw)))
                        bh = h, bp = row_pen[h], bw = row_w[h];
            } else {
                for (int32_t h = 0; h < n; ++h)
                    if (row_w[h] > bw) bh = h, bw = row_w[h];
            }
            /* bh < 0 cannot happen: construction checked that the root
             * reaches every token, and contractions keep that true. */
            if (bh >= 0) {
                const int32_t id = w.node[v];
                w.enter[id] = w.arc[(size_t)v * (size_t)n + (size_t)bh];
                w.enter_w[id] = bw;
                w.enter_pen[id] = bp;
            }
            const int step = walk_to(&walk, bh);
            if (step == WALK_FINISHED) break;
            v = bh;
            if (step == WALK_EXTENDED) continue;
            /* bh is on the path: path[pos[bh]..top) closes a cycle. */
            const int32_t first = w.pos[bh];
            cle_contract(&w, single, n, first, walk.top, next_id++);
            v = w.path[first];
            w.state[v] = ON_PATH;
            walk.top = first + 1;
        }
    }

    for (int32_t s = 1; s < n; ++s)
        if (w.alive[s]) w.final[w.node[s]] = w.enter[w.node[s]];
    return cle_expand(p, next_id, w.parent, w.enter, w.final, w.chosen, a, u);
}

/* ------------------------------------------------------------------------
 * Non-projective trees over sparse arc sets: the same algorithm on heaps
 * ------------------------------------------------------------------------ */

/* With few arcs per token (AD3's parsing graphs keep about 6 of the 62
 * possible heads of a token) the length x length matrices cost more than
 * the arcs themselves. Here each super-node keeps its entering arcs in a
 * leftist heap ordered by adjusted score (pairs in Z x R for the single
 * root). Contracting a cycle merges its members' heaps after subtracting,
 * lazily, the score of the arc each member gives up (Tarjan 1977); arcs
 * that became internal to a super-node are dropped when they come up.
 * O(m log m) for m arcs. Super-nodes are numbered as in cle_work; `top`
 * maps each to the super-node that absorbed it (union-find). */
typedef struct cle_heap_work {
    int32_t *left, *right, *rank; /* per arc: the heap's links */
    double *key, *lazy;           /* per arc: adjusted score, and the part of it
                                     still owed to the arc's subtrees */
    int32_t *key_pen, *lazy_pen;  /* the same for the integer part */
    int32_t *heap;    /* per super-node: root arc of its heap (-1: empty) */
    int32_t *inserted; /* per token: arcs inserted into its heap so far */
    int32_t *top;     /* per super-node: union-find parent */
    uint8_t *state;   /* per super-node: FRESH, ON_PATH, DONE, IN_CYCLE */
    int32_t *path, *pos;
    int32_t *enter, *enter_pen, *parent, *final, *chosen;
    double *enter_w;
} cle_heap_work;

static size_t cle_heap_layout(int32_t length, int32_t n_arcs, void *base, cle_heap_work *w) {
    carver c = {base, 0};
    size_t m = (size_t)n_arcs, nodes = 2 * (size_t)length;
    w->left = carve(&c, m, sizeof(int32_t));
    w->right = carve(&c, m, sizeof(int32_t));
    w->rank = carve(&c, m, sizeof(int32_t));
    w->key = carve(&c, m, sizeof(double));
    w->lazy = carve(&c, m, sizeof(double));
    w->key_pen = carve(&c, m, sizeof(int32_t));
    w->lazy_pen = carve(&c, m, sizeof(int32_t));
    w->heap = carve(&c, nodes, sizeof(int32_t));
    w->inserted = carve(&c, (size_t)length, sizeof(int32_t));
    w->top = carve(&c, nodes, sizeof(int32_t));
    w->state = carve(&c, nodes, 1);
    w->path = carve(&c, nodes, sizeof(int32_t));
    w->pos = carve(&c, nodes, sizeof(int32_t));
    w->enter = carve(&c, nodes, sizeof(int32_t));
    w->enter_pen = carve(&c, nodes, sizeof(int32_t));
    w->parent = carve(&c, nodes, sizeof(int32_t));
    w->final = carve(&c, nodes, sizeof(int32_t));
    w->chosen = carve(&c, nodes, sizeof(int32_t));
    w->enter_w = carve(&c, nodes, sizeof(double));
    return c.used;
}

/* Whether the heap form pays: at most half of the possible arcs given. */
static int cle_uses_heaps(const tree_params *p) {
    return 2 * (int64_t)p->n_arcs <= (int64_t)p->length * (p->length - 1);
}

static inline int32_t heap_rank(const cle_heap_work *w, int32_t x) {
    return x < 0 ? 0 : w->rank[x];
}

/* Adds (dp, dw) to every key of the heap rooted at x. */
static inline void heap_add(cle_heap_work *w, int32_t x, int32_t dp, double dw) {
    w->key[x] += dw, w->lazy[x] += dw;
    w->key_pen[x] += dp, w->lazy_pen[x] += dp;
}

/* Passes x's pending addition on to its children. */
static inline void heap_push(cle_heap_work *w, int32_t x) {
    if (w->lazy[x] == 0.0 && w->lazy_pen[x] == 0) return;
    if (w->left[x] >= 0) heap_add(w, w->left[x], w->lazy_pen[x], w->lazy[x]);
    if (w->right[x] >= 0) heap_add(w, w->right[x], w->lazy_pen[x], w->lazy[x]);
    w->lazy[x] = 0.0, w->lazy_pen[x] = 0;
}

/* Merges two leftist heaps; the recursion follows right spines, whose
 * length is logarithmic. */
static int32_t heap_merge(cle_heap_work *w, int single, int32_t x, int32_t y) {
    if (x < 0) return y;
    if (y < 0) return x;
    if (beats(single, w->key_pen[y], w->key[y], w->key_pen[x], w->key[x])) {
        int32_t t = x;
        x = y, y = t;
    }
    heap_push(w, x);
    w->right[x] = heap_merge(w, single, w->right[x], y);
    if (heap_rank(w, w->left[x]) < heap_rank(w, w->right[x])) {
        int32_t t = w->left[x];
        w->left[x] = w->right[x], w->right[x] = t;
    }
    w->rank[x] = heap_rank(w, w->right[x]) + 1;
    return x;
}

/* Adds arc k to node m's heap. A list sorted best first along left links
 * is a leftist heap (every rank is 1), and inserting into it by a scan
 * is cheaper than merging while it is short: a token of a parsing graph
 * has a handful of candidate heads, and building the heaps by merges took
 * a third of a solve of AD3's parsing02. Longer lists take merges. */
enum { HEAP_SORTED_INSERTS = 16 };

static void heap_insert(cle_heap_work *w, int single, int32_t m, int32_t k) {
    if (++w->inserted[m] > HEAP_SORTED_INSERTS) {
        w->heap[m] = heap_merge(w, single, w->heap[m], k);
        return;
    }
    int32_t *link = &w->heap[m];
    while (*link >= 0 && !beats(single, w->key_pen[k], w->key[k], w->key_pen[*link], w->key[*link]))
        link = &w->left[*link];
    w->left[k] = *link;
    *link = k;
}

static int32_t find_top(cle_heap_work *w, int32_t x) {
    int32_t r = x;
    while (w->top[r] != r) r = w->top[r];
    while (w->top[x] != r) {
        int32_t next = w->top[x];
        w->top[x] = r;
        x = next;
    }
    return r;
}

/* cle_solve on heaps: the same path growing and contraction. */
static double cle_heap_solve(const tree_params *p, const double *a, double *u, void *scratch) {
    const int32_t n = p->length;
    const int single = (p->flags & CONCORD_TREE_SINGLE_ROOT) != 0;
    cle_heap_work w;
    cle_heap_layout(n, p->n_arcs, scratch, &w);
    for (int32_t m = 0; m < n; ++m) w.inserted[m] = 0;
    for (int32_t x = 0; x < 2 * n; ++x) {
        w.heap[x] = w.parent[x] = w.enter[x] = -1;
        w.top[x] = x;
        w.state[x] = FRESH;
    }
    for (int32_t k = 0; k < p->n_arcs; ++k) {
        w.left[k] = w.right[k] = -1;
        w.rank[k] = 1;
        w.key[k] = a[k], w.lazy[k] = 0.0;
        w.key_pen[k] = single && p->head[k] == 0 ? -1 : 0, w.lazy_pen[k] = 0;
        heap_insert(&w, single, p->mod[k], k);
    }
    w.state[0] = DONE;
    int32_t next_id = n;

    cle_walk walk = {w.state, w.pos, w.path, 0};
    for (int32_t start = 1; start < n; ++start) {
        if (!walk_start(&walk, start)) continue;
        int32_t v = start;
        for (;;) {
            /* v's best entering arc from another super-node; k < 0 cannot
             * happen (construction checked that the root reaches every
             * token, and contractions keep that true) */
            int32_t k = -1;
            while (w.heap[v] >= 0 && k < 0) {
                int32_t h = w.heap[v];
                heap_push(&w, h);
                w.heap[v] = heap_merge(&w, single, w.left[h], w.right[h]);
                if (find_top(&w, p->head[h]) != v) k = h;
            }
            if (k >= 0) {
                w.enter[v] = k;
                w.enter_w[v] = w.key[k];
                w.enter_pen[v] = w.key_pen[k];
            }
            const int32_t from = k >= 0 ? find_top(&w, p->head[k]) : -1;
            const int step = walk_to(&walk, from);
            if (step == WALK_FINISHED) break;
            v = from;
            if (step == WALK_EXTENDED) continue;
            /* from is on the path: path[pos[from]..top) closes a cycle */
            const int32_t first = w.pos[from], id = next_id++;
            for (int32_t i = first; i < walk.top; ++i) {
                const int32_t x = w.path[i];
                w.state[x] = IN_CYCLE;
                w.parent[x] = w.top[x] = id;
                if (w.heap[x] >= 0) {
                    heap_add(&w, w.heap[x], single ? -w.enter_pen[x] : 0, -w.enter_w[x]);
                    w.heap[id] = heap_merge(&w, single, w.heap[id], w.heap[x]);
                }
            }
            walk.top = first;
            walk_push(&walk, id);
            v = id;
        }
    }
    for (int32_t m = 1; m < n; ++m) {
        const int32_t t = find_top(&w, m);
        w.final[t] = w.enter[t];
    }
    return cle_expand(p, next_id, w.parent, w.enter, w.final, w.chosen, a, u);
}

/* ------------------------------------------------------------------------
 * Projective trees: Eisner's algorithm in O(length^3)
 * ------------------------------------------------------------------------ */

/* Spans [s, t] of the chart:
 *   right[s,t]  complete span headed at s (s has taken all its modifiers
 *               in (s, t]);
 *   left[s,t]   complete span headed at t;
 *   inc_right[s,t], inc_left[s,t]  incomplete spans: the best right[s,r] +
 *               left[r+1,t] joined by the arc s -> t, or t -> s (both use
 *               the same split).
 * Every maximisation runs over a split point r; so that each reads two
 * contiguous arrays, the tables are kept in the orientation it needs:
 * [s * n + t] for those read along their end t, [t * n + s] ("_t") for
 * those read along their start s, and the complete spans in both. Each
 * maximum's split point is kept for the backtrace, indexed [s * n + t]. */
typedef struct eisner_work {
    double *score; /* [h * n + m], -inf for arcs not given */
    int32_t *link; /* [h * n + m], the arc's link where its score is finite */
    double *right, *right_t, *left, *left_t, *inc_right, *inc_left_t;
    int32_t *split_right, *split_left, *split_inner;
    int32_t *stack;
} eisner_work;

enum { SPAN_RIGHT = 0, SPAN_LEFT, SPAN_INC_RIGHT, SPAN_INC_LEFT };

static size_t eisner_layout(int32_t length, void *base, eisner_work *w) {
    carver c = {base, 0};
    size_t n = (size_t)length, nn = n * n;
    w->score = carve(&c, nn, sizeof(double));
    w->link = carve(&c, nn, sizeof(int32_t));
    w->right = carve(&c, nn, sizeof(double));
    w->right_t = carve(&c, nn, sizeof(double));
    w->left = carve(&c, nn, sizeof(double));
    w->left_t = carve(&c, nn, sizeof(double));
    w->inc_right = carve(&c, nn, sizeof(double));
    w->inc_left_t = carve(&c, nn, sizeof(double));
    w->split_right = carve(&c, nn, sizeof(int32_t));
    w->split_left = carve(&c, nn, sizeof(int32_t));
    w->split_inner = carve(&c, nn, sizeof(int32_t));
    w->stack = carve(&c, 3 * (4 * n + 8), sizeof(int32_t));
    return c.used;
}

/* Switches arc h -> m on in u; returns its score. The backtrace only
 * follows finite chart entries, hence arcs that exist. */
static double mark_arc(const eisner_work *w, size_t n, int32_t h, int32_t m, const double *a,
                       double *u) {
    int32_t k = w->link[(size_t)h * n + (size_t)m];
    u[k] = 1.0;
    return a[k];
}

/* Fills the chart and returns the best projective tree's score (-inf if
 * there is none); when it is finite and u is not NULL, writes the tree's
 * links into u (zeroed by the caller) and returns the sum of their scores
 * instead, which is the same up to rounding. */
static double eisner_solve(const tree_params *p, const double *a, double *u, void *scratch) {
    const int32_t n = p->length;
    const size_t N = (size_t)n;
    const int single = (p->flags & CONCORD_TREE_SINGLE_ROOT) != 0;
    /* single root: the spans never include the root; it is attached last */
    const int32_t lo = single ? 1 : 0;
    eisner_work w;
    eisner_layout(n, scratch, &w);
    for (size_t e = 0; e < N * N; ++e) w.score[e] = -INFINITY;
    for (int32_t k = 0; k < p->n_arcs; ++k) {
        size_t e = (size_t)p->head[k] * N + (size_t)p->mod[k];
        w.score[e] = a[k];
        w.link[e] = k;
    }
    for (int32_t s = lo; s < n; ++s) {
        const size_t ss = (size_t)s * N + (size_t)s;
        w.right[ss] = w.right_t[ss] = w.left[ss] = w.left_t[ss] = 0.0;
    }
    for (int32_t width = 1; width < n - lo; ++width) {
        for (int32_t s = lo; s + width < n; ++s) {
            const int32_t t = s + width;
            const size_t st = (size_t)s * N + (size_t)t, ts = (size_t)t * N + (size_t)s;
            const double *right_s = w.right + (size_t)s * N;  /* right[s, .] */
            const double *left_t = w.left_t + (size_t)t * N;  /* left[., t] */
            double best = -INFINITY;
            int32_t arg = s;
            for (int32_t r = s; r < t; ++r) {
                double x = right_s[r] + left_t[r + 1];
                if (x > best) best = x, arg = r;
            }
            w.split_inner[st] = arg;
            w.inc_right[st] = best + w.score[st];
            w.inc_left_t[ts] = best + w.score[ts];
            /* left[s,t] = max over r in [s, t) of left[s,r] + inc_left[r,t] */
            const double *left_s = w.left + (size_t)s * N;
            const double *inc_left_t = w.inc_left_t + (size_t)t * N;
            best = -INFINITY, arg = s;
            for (int32_t r = s; r < t; ++r) {
                double x = left_s[r] + inc_left_t[r];
                if (x > best) best = x, arg = r;
            }
            w.left[st] = w.left_t[ts] = best;
            w.split_left[st] = arg;
            /* right[s,t] = max over r in (s, t] of inc_right[s,r] + right[r,t] */
            const double *inc_right_s = w.inc_right + (size_t)s * N;
            const double *right_t = w.right_t + (size_t)t * N;
            best = -INFINITY, arg = t;
            for (int32_t r = s + 1; r <= t; ++r) {
                double x = inc_right_s[r] + right_t[r];
                if (x > best) best = x, arg = r;
            }
            w.right[st] = w.right_t[ts] = best;
            w.split_right[st] = arg;
        }
    }
    int32_t *stack = w.stack, top = 0;
    double value, total = 0.0;
    if (!single) {
        value = w.right[N - 1];
        stack[top++] = SPAN_RIGHT, stack[top++] = 0, stack[top++] = n - 1;
    } else {
        value = -INFINITY;
        int32_t child = 1;
        for (int32_t r = 1; r < n; ++r) {
            double x = w.score[r] + w.left[N + (size_t)r] + w.right[r * N + N - 1];
            if (x > value) value = x, child = r;
        }
        if (u && value > -INFINITY) total += mark_arc(&w, N, 0, child, a, u);
        stack[top++] = SPAN_LEFT, stack[top++] = 1, stack[top++] = child;
        stack[top++] = SPAN_RIGHT, stack[top++] = child, stack[top++] = n - 1;
    }
    if (!u || value == -INFINITY) return value;
    while (top > 0) {
        const int32_t t = stack[--top], s = stack[--top], kind = stack[--top];
        if (s == t) continue;
        const size_t st = (size_t)s * N + (size_t)t;
        int32_t r;
        switch (kind) {
        case SPAN_RIGHT:
            r = w.split_right[st];
            stack[top++] = SPAN_INC_RIGHT, stack[top++] = s, stack[top++] = r;
            stack[top++] = SPAN_RIGHT, stack[top++] = r, stack[top++] = t;
            break;
        case SPAN_LEFT:
            r = w.split_left[st];
            stack[top++] = SPAN_LEFT, stack[top++] = s, stack[top++] = r;
            stack[top++] = SPAN_INC_LEFT, stack[top++] = r, stack[top++] = t;
            break;
        default:
            if (kind == SPAN_INC_RIGHT) total += mark_arc(&w, N, s, t, a, u);
            else total += mark_arc(&w, N, t, s, a, u);
            r = w.split_inner[st];
            stack[top++] = SPAN_RIGHT, stack[top++] = s, stack[top++] = r;
            stack[top++] = SPAN_LEFT, stack[top++] = r + 1, stack[top++] = t;
            break;
        }
    }
    return total;
}

/* ------------------------------------------------------------------------
 * The factor
 * ------------------------------------------------------------------------ */

static double tree_map(const factor *f, const double *a, const double *b, double *u,
                       double *v, void *scratch) {
    (void)b, (void)v;
    const tree_params *p = params_of(f);
    for (int32_t k = 0; k < f->degree; ++k) u[k] = 0.0;
    if (p->flags & CONCORD_TREE_PROJECTIVE) return eisner_solve(p, a, u, scratch);
    if (cle_uses_heaps(p)) return cle_heap_solve(p, a, u, scratch);
    return cle_solve(p, a, u, scratch);
}

static size_t tree_scratch_for(const tree_params *p) {
    cle_work c;
    cle_heap_work h;
    eisner_work e;
    if (p->flags & CONCORD_TREE_PROJECTIVE) return eisner_layout(p->length, NULL, &e);
    if (cle_uses_heaps(p)) return cle_heap_layout(p->length, p->n_arcs, NULL, &h);
    return cle_layout(p->length, NULL, &c);
}

static size_t tree_scratch(const factor *f) { return tree_scratch_for(params_of(f)); }

static int32_t tree_config_size(const factor *f) { return params_of(f)->length - 1; }

const factor_ops factor_tree_ops = {.name = "TREE",
                                    .map = tree_map,
                                    .scratch_bytes = tree_scratch,
                                    .config_size = tree_config_size};

/* ------------------------------------------------------------------------
 * Construction
 * ------------------------------------------------------------------------ */

/* Marks in `seen` the tokens reachable from `from` by the arcs (CSR out
 * lists), never entering or leaving through the root when skip_root;
 * returns how many were reached, `from` included. */
static int32_t reach(const tree_params *p, const int32_t *out_begin, const int32_t *out_arcs,
                     int32_t from, int skip_root, uint8_t *seen, int32_t *queue) {
    memset(seen, 0, (size_t)p->length);
    int32_t head = 0, tail = 0;
    seen[from] = 1;
    queue[tail++] = from;
    while (head < tail) {
        int32_t x = queue[head++];
        if (skip_root && x == 0) continue;
        for (int32_t j = out_begin[x]; j < out_begin[x + 1]; ++j) {
            int32_t m = p->mod[out_arcs[j]];
            if (!seen[m]) seen[m] = 1, queue[tail++] = m;
        }
    }
    return tail;
}

/* CONCORD_OK when some projective tree of the requested kind exists over
 * the arcs (Eisner's algorithm, O(length^3)), otherwise a message in g. */
static int check_projective_tree_exists(concord_graph *g, const tree_params *p) {
    int rc = CONCORD_OK;
    eisner_work e;
    void *scratch = malloc(eisner_layout(p->length, NULL, &e));
    double *zeros = calloc((size_t)p->n_arcs, sizeof(double));
    if (!scratch || !zeros) {
        rc = graph_fail(g, CONCORD_ENOMEM, "out of memory");
    } else if (eisner_solve(p, zeros, NULL, scratch) == -INFINITY) {
        rc = graph_fail(g, CONCORD_EINFEASIBLE,
                        "TREE factor: no projective %stree over the given arcs",
                        p->flags & CONCORD_TREE_SINGLE_ROOT ? "single-root " : "");
    }
    free(scratch);
    free(zeros);
    return rc;
}

/* CONCORD_OK when some tree of the requested kind exists over the arcs,
 * otherwise a message in g. */
static int check_tree_exists(concord_graph *g, const tree_params *p) {
    const int32_t n = p->length;
    int rc = CONCORD_OK;
    int32_t *out_begin = calloc((size_t)n + 1, sizeof(int32_t));
    int32_t *out_arcs = malloc((size_t)p->n_arcs * sizeof(int32_t));
    int32_t *queue = malloc((size_t)n * sizeof(int32_t));
    uint8_t *seen = malloc((size_t)n);
    if (!out_begin || !out_arcs || !queue || !seen) {
        rc = graph_fail(g, CONCORD_ENOMEM, "out of memory");
        goto done;
    }
    for (int32_t k = 0; k < p->n_arcs; ++k) out_begin[p->head[k] + 1] += 1;
    for (int32_t x = 0; x < n; ++x) out_begin[x + 1] += out_begin[x];
    for (int32_t k = 0; k < p->n_arcs; ++k) {
        int32_t h = p->head[k];
        out_arcs[out_begin[h]++] = k;
    }
    for (int32_t x = n; x > 0; --x) out_begin[x] = out_begin[x - 1];
    out_begin[0] = 0;
    /* every kind of tree needs every token reachable from the root; tested
     * first, in O(length + n_arcs), it spares the projective test's
     * O(length^3) when it fails (a long sentence given a few arcs took
     * minutes to be refused) */
    if (reach(p, out_begin, out_arcs, 0, 0, seen, queue) < n) {
        int32_t missing = 1;
        while (seen[missing]) ++missing;
        rc = graph_fail(g, CONCORD_EINFEASIBLE,
                        "TREE factor: no tree over the given arcs (token %d cannot be "
                        "reached from the root)",
                        missing);
        goto done;
    }
    if (p->flags & CONCORD_TREE_PROJECTIVE) {
        rc = check_projective_tree_exists(g, p);
        goto done;
    }
    if (!(p->flags & CONCORD_TREE_SINGLE_ROOT)) goto done;
    /* single root: some root child must reach every token by itself */
    rc = CONCORD_EINFEASIBLE;
    for (int32_t j = out_begin[0]; j < out_begin[1] && rc; ++j)
        if (reach(p, out_begin, out_arcs, p->mod[out_arcs[j]], 1, seen, queue) == n - 1)
            rc = CONCORD_OK;
    if (rc)
        graph_fail(g, rc,
                   "TREE factor: no single-root tree over the given arcs (no child of the root "
                   "reaches every token without another root arc)");
done:
    free(out_begin);
    free(out_arcs);
    free(queue);
    free(seen);
    return rc;
}

static int compare_int64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* CONCORD_OK when no arc is given twice (sorts the arcs' keys). */
static int check_distinct_arcs(concord_graph *g, const tree_params *p) {
    int64_t *key = malloc((size_t)p->n_arcs * sizeof *key);
    if (!key) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    for (int32_t k = 0; k < p->n_arcs; ++k) key[k] = (int64_t)p->head[k] * p->length + p->mod[k];
    qsort(key, (size_t)p->n_arcs, sizeof *key, compare_int64);
    int rc = CONCORD_OK;
    for (int32_t k = 1; k < p->n_arcs && !rc; ++k)
        if (key[k] == key[k - 1])
            rc = graph_fail(g, CONCORD_EINVAL, "TREE factor: arc %d -> %d given twice",
                            (int)(key[k] / p->length), (int)(key[k] % p->length));
    free(key);
    return rc;
}

int concord_add_tree(concord_graph *g, int32_t length, int32_t n_arcs, const int32_t *heads,
                     const int32_t *modifiers, const int32_t *vars, unsigned flags,
                     int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (flags & ~(unsigned)(CONCORD_TREE_PROJECTIVE | CONCORD_TREE_SINGLE_ROOT))
        return graph_fail(g, CONCORD_EINVAL, "TREE factor: unknown flags 0x%x", flags);
    if (length < 2 || length > TREE_MAX_LENGTH)
        return graph_fail(g, CONCORD_EINVAL,
                          "TREE factor: length %d must be in [2, %d] (the root and at least "
                          "one token)",
                          length, TREE_MAX_LENGTH);
    if (n_arcs < 1 || (int64_t)n_arcs > (int64_t)length * (length - 1))
        return graph_fail(g, CONCORD_EINVAL,
                          "TREE factor: %d arcs (a sentence of length %d has 1 to %lld)",
                          n_arcs, length, (long long)length * (length - 1));
    if (!heads || !modifiers || !vars)
        return graph_fail(g, CONCORD_EINVAL, "TREE factor: missing %s array",
                          !heads ? "head" : !modifiers ? "modifier" : "variable");
    tree_params *p = malloc(sizeof *p + 2 * (size_t)n_arcs * sizeof(int32_t));
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->length = length;
    p->flags = flags;
    p->n_arcs = n_arcs;
    p->head = (int32_t *)(p + 1);
    p->mod = p->head + n_arcs;
    int rc = CONCORD_OK;
    for (int32_t k = 0; k < n_arcs && !rc; ++k) {
        int32_t h = heads[k], m = modifiers[k];
        if (h < 0 || h >= length || m < 1 || m >= length || h == m)
            rc = graph_fail(g, CONCORD_EINVAL,
                            "TREE factor: arc %d (%d -> %d) is not an arc between nodes "
                            "0..%d (heads in [0, %d], modifiers in [1, %d], head != "
                            "modifier)",
                            k, h, m, length - 1, length - 1, length - 1);
        p->head[k] = h;
        p->mod[k] = m;
    }
    if (!rc) rc = check_distinct_arcs(g, p);
    if (!rc) rc = check_tree_exists(g, p);
    if (rc) {
        free(p);
        return rc;
    }
    return graph_add_factor(g, &factor_tree_ops, n_arcs, vars, NULL, false, 0, NULL, p,
                            factor_id);
}
