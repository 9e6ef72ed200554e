/*
 * SEQUENCE and SEQUENCE_BUDGET: a chain of positions, each in one of its
 * own number of states, scored by the states and by the transitions
 * between consecutive positions (the linear-chain model of sequence
 * labelling, as in AD3's dense and summarization examples). The links are
 * the state indicators, position by position; the additional outputs are
 * the transitions: start -> first position, each pair of consecutive
 * positions (row-major, previous state first), last position -> stop. A
 * configuration is one state per position with the L + 1 transitions it
 * uses. SEQUENCE_BUDGET also allows at most B positions in state 0 (AD3's
 * convention: state 0 is the state that counts). Both families have a MAP
 * oracle only (Viterbi in O(sum_i K_{i-1} K_i), times B + 1 with a budget;
 * a budget of at least the length is no constraint and costs nothing);
 * their QP is the generic active set's. A transition scored -inf when the
 * factor is built is forbidden (factor_ops.forbids): the dynamic programs
 * run on a copy of the scores with -inf there. The public builders are
 * here too, so that the whole family lives in one file.
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"

typedef struct sequence_params {
    int32_t length;
    int32_t budget;     /* most positions in state 0; -1: no budget */
    int32_t *states;    /* state count of each position */
    int32_t *offset;    /* link of each position's state 0; [length] = degree */
    int32_t *edge;      /* additional index of each transition block (length+1):
                           [0] start, [i] positions i-1 -> i, [length] stop */
} sequence_params;

static const sequence_params *params_of(const factor *f) {
    return (const sequence_params *)f->params;
}

/* Budget columns the DP needs: counts 0..budget, or none when the budget
 * cannot bind. */
static int32_t budget_columns(const sequence_params *p) {
    return p->budget >= 0 && p->budget < p->length ? p->budget + 1 : 0;
}

/* The configuration of the state sequence s (one state per position) as
 * the increasing indices of its entries equal to 1: the L state
 * indicators, then the L + 1 transitions as degree + their index. Returns
 * their count, 2L + 1. */
static int32_t sequence_ones(const factor *f, const int32_t *s, int32_t *ones) {
    const sequence_params *p = params_of(f);
    const int32_t L = p->length;
    int32_t prev = 0;
    for (int32_t i = 0; i < L; ++i) {
        ones[i] = p->offset[i] + s[i];
        ones[L + i] = f->degree + p->edge[i] + prev * p->states[i] + s[i]; /* start: prev = 0 */
        prev = s[i];
    }
    ones[2 * L] = f->degree + p->edge[L] + prev;
    return 2 * L + 1;
}

/* cur[k] = max(cur[k], base + row[k]): the Viterbi inner loop, branch-free
 * (a select compiles to maxsd; a data-dependent branch with a back-pointer
 * store runs twice as slow), which is why the predecessors are recovered
 * on the way back instead of being recorded. Written four at a time: at
 * -O2 gcc vectorizes such straight-line groups (maxpd) but not a loop of
 * unknown length, and the generated sequence graphs solved 11% faster.
 * (The head automata's rows are short suffixes: there the same form cost
 * 7%.) */
static inline void relax(double *restrict cur, const double *restrict row, double base,
                         int32_t n) {
    int32_t k = 0;
    for (; k + 4 <= n; k += 4) {
        double x0 = base + row[k], x1 = base + row[k + 1], x2 = base + row[k + 2],
               x3 = base + row[k + 3];
        cur[k] = x0 > cur[k] ? x0 : cur[k];
        cur[k + 1] = x1 > cur[k + 1] ? x1 : cur[k + 1];
        cur[k + 2] = x2 > cur[k + 2] ? x2 : cur[k + 2];
        cur[k + 3] = x3 > cur[k + 3] ? x3 : cur[k + 3];
    }
    for (; k < n; ++k) {
        double x = base + row[k];
        cur[k] = x > cur[k] ? x : cur[k];
    }
}

/* The first l maximizing val[l * stride] + t[l * step]. */
static int32_t argmax_strided(const double *val, size_t stride, const double *t, size_t step,
                              int32_t n) {
    int32_t arg = 0;
    double best = val[0] + t[0];
    for (int32_t l = 1; l < n; ++l) {
        double x = val[(size_t)l * stride] + t[(size_t)l * step];
        if (x > best) {
            best = x;
            arg = l;
        }
    }
    return arg;
}

/* Plain Viterbi: returns the best score and leaves the best state sequence
 * in seq. Scratch: the best prefix score of every (position, state)
 * (indexed like the links). */
static double viterbi(const factor *f, const double *a, const double *b, int32_t *seq,
                      void *scratch) {
    const sequence_params *p = params_of(f);
    const int32_t L = p->length;
    double *val = (double *)scratch;
    for (int32_t k = 0; k < p->states[0]; ++k) val[k] = a[k] + b[k];
    for (int32_t i = 1; i < L; ++i) {
        const int32_t kp = p->states[i - 1], kc = p->states[i];
        const double *t = b + p->edge[i], *prev = val + p->offset[i - 1];
        double *cur = val + p->offset[i];
        for (int32_t k = 0; k < kc; ++k) cur[k] = prev[0] + t[k];
        for (int32_t l = 1; l < kp; ++l) relax(cur, t + (size_t)l * (size_t)kc, prev[l], kc);
        const double *ai = a + p->offset[i];
        for (int32_t k = 0; k < kc; ++k) cur[k] += ai[k];
    }
    const double *last = val + p->offset[L - 1], *stop = b + p->edge[L];
    seq[L - 1] = argmax_strided(last, 1, stop, 1, p->states[L - 1]);
    const double best = last[seq[L - 1]] + stop[seq[L - 1]];
    for (int32_t i = L - 1; i > 0; --i)
        seq[i - 1] = argmax_strided(val + p->offset[i - 1], 1, b + p->edge[i] + seq[i],
                                    (size_t)p->states[i], p->states[i - 1]);
    return best;
}

/* Viterbi with the number c of positions in state 0 so far as a second
 * coordinate, c = 0..budget (C = budget + 1 columns): at position i,
 * val[c * K_i + k] is the best score of a prefix ending in state k with c
 * positions in state 0, -infinity when none does. Count-major rows keep
 * the inner loop over the states, as in plain Viterbi: from count c,
 * non-zero states stay at c and state 0 moves to c + 1. Returns the best
 * score and leaves the best sequence in seq. Scratch: those values
 * (degree x C). */
static double viterbi_budget(const factor *f, const double *a, const double *b, int32_t *seq,
                             void *scratch) {
    const sequence_params *p = params_of(f);
    const int32_t L = p->length, C = budget_columns(p);
    double *val = (double *)scratch;
    {
        const int32_t k0 = p->states[0];
        for (size_t x = 0; x < (size_t)C * (size_t)k0; ++x) val[x] = -INFINITY;
        for (int32_t k = 1; k < k0; ++k) val[k] = a[k] + b[k]; /* count 0 */
        if (C > 1) val[k0] = a[0] + b[0];                     /* count 1, state 0 */
    }
    for (int32_t i = 1; i < L; ++i) {
        const int32_t kp = p->states[i - 1], kc = p->states[i];
        const double *t = b + p->edge[i], *ai = a + p->offset[i];
        const double *prev = val + (size_t)p->offset[i - 1] * (size_t)C;
        double *cur = val + (size_t)p->offset[i] * (size_t)C;
        for (size_t x = 0; x < (size_t)C * (size_t)kc; ++x) cur[x] = -INFINITY;
        for (int32_t c = 0; c < C; ++c) {
            const double *from = prev + (size_t)c * (size_t)kp;
            double *stay = cur + (size_t)c * (size_t)kc;
            double *up = c + 1 < C ? stay + kc : NULL; /* state 0 of count c + 1 */
            for (int32_t l = 0; l < kp; ++l) {
                const double base = from[l], *row = t + (size_t)l * (size_t)kc;
                if (base == -INFINITY) continue; /* no prefix: nothing to push */
                relax(stay + 1, row + 1, base, kc - 1);
                if (up && base + row[0] > up[0]) up[0] = base + row[0];
            }
        }
        for (int32_t c = 0; c < C; ++c)
            for (int32_t k = 0; k < kc; ++k) cur[(size_t)c * (size_t)kc + (size_t)k] += ai[k];
    }
    const int32_t kl = p->states[L - 1];
    const double *last = val + (size_t)p->offset[L - 1] * (size_t)C, *stop = b + p->edge[L];
    int32_t c = 0;
    double best = -INFINITY;
    seq[L - 1] = 0;
    for (int32_t cc = 0; cc < C; ++cc)
        for (int32_t l = 0; l < kl; ++l) {
            double x = last[(size_t)cc * (size_t)kl + (size_t)l] + stop[l];
            if (x > best) {
                best = x;
                seq[L - 1] = l;
                c = cc;
            }
        }
    for (int32_t i = L - 1; i > 0; --i) {
        c -= seq[i] == 0;
        if (c < 0) c = 0; /* only with non-finite scores: keep a valid sequence */
        const int32_t kp = p->states[i - 1];
        seq[i - 1] = argmax_strided(val + (size_t)p->offset[i - 1] * (size_t)C + (size_t)c * (size_t)kp,
                                    1, b + p->edge[i] + seq[i], (size_t)p->states[i], kp);
    }
    return best;
}

/* The DP table's cells: degree times the budget columns (at least one). */
static size_t table_cells(const factor *f) {
    const int32_t columns = budget_columns(params_of(f));
    return (size_t)f->degree * (size_t)(columns > 0 ? columns : 1);
}

/* Scratch: the DP table, the decoded sequence (L), then room for a
 * configuration's ones (2L + 1), which sequence_map uses. */
static int32_t *decoded_sequence(const factor *f, void *scratch) {
    return (int32_t *)((double *)scratch + table_cells(f));
}

static int32_t sequence_map_ones(const factor *f, const double *a, const double *b,
                                 int32_t *ones, double *value, void *scratch) {
    int32_t *seq = decoded_sequence(f, scratch);
    b = factor_allowed_scores(f, b, scratch);
    *value = budget_columns(params_of(f)) > 0 ? viterbi_budget(f, a, b, seq, scratch)
                                              : viterbi(f, a, b, seq, scratch);
    return sequence_ones(f, seq, ones);
}

static double sequence_map(const factor *f, const double *a, const double *b, double *u,
                           double *v, void *scratch) {
    return factor_map_by_ones(f, a, b, u, v, scratch,
                              decoded_sequence(f, scratch) + params_of(f)->length);
}

static size_t sequence_scratch(const factor *f) {
    return table_cells(f) * sizeof(double) +
           (3 * (size_t)params_of(f)->length + 1) * sizeof(int32_t);
}

/* One state per position and L + 1 transitions. */
static int32_t sequence_config_size(const factor *f) { return 2 * params_of(f)->length + 1; }

static const factor_ops sequence_ops = {.name = "SEQUENCE",
                                        .map = sequence_map,
                                        .map_ones = sequence_map_ones,
                                        .scratch_bytes = sequence_scratch,
                                        .config_size = sequence_config_size,
                                        .forbids = FORBIDS_BY_SCORES};

static const factor_ops sequence_budget_ops = {.name = "SEQUENCE_BUDGET",
                                               .map = sequence_map,
                                               .map_ones = sequence_map_ones,
                                               .scratch_bytes = sequence_scratch,
                                               .config_size = sequence_config_size,
                                               .forbids = FORBIDS_BY_SCORES};

/* Largest DP table (cells of the budgeted Viterbi) a builder accepts. */
#define SEQUENCE_MAX_CELLS ((int64_t)1 << 24)

static int add_sequence(concord_graph *g, const factor_ops *ops, int32_t length,
                        const int32_t *num_states, const int32_t *vars, int32_t budget,
                        const double *scores, int32_t *factor_id) {
    const char *name = ops->name;
    if (length < 1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: length %d (must be >= 1)", name, length);
    if (!num_states) return graph_fail(g, CONCORD_EINVAL, "%s factor: NULL num_states", name);
    int64_t degree = 0, n_add = 0, forced = 0;
    for (int32_t i = 0; i < length; ++i) {
        int32_t k = num_states[i];
        if (k < 1)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: position %d has %d states", name, i, k);
        degree += k;
        n_add += (int64_t)(i > 0 ? num_states[i - 1] : 1) * k;
        forced += k == 1; /* a single state is state 0 */
        if (degree > INT32_MAX || n_add > INT32_MAX)
            return graph_fail(g, CONCORD_EINVAL, "%s factor: too many states or transitions",
                              name);
    }
    n_add += num_states[length - 1];
    if (n_add > INT32_MAX)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: too many transitions", name);
    if (budget < -1 || (ops == &sequence_budget_ops && budget < 0))
        return graph_fail(g, CONCORD_EINVAL, "%s factor: budget %d must be >= 0", name, budget);
    if (budget >= 0 && forced > budget)
        return graph_fail(g, CONCORD_EINFEASIBLE,
                          "%s factor: %lld positions have a single state (state 0) but the "
                          "budget allows %d in state 0",
                          name, (long long)forced, budget);
    if (budget >= 0 && budget < length && degree * ((int64_t)budget + 1) > SEQUENCE_MAX_CELLS)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: budget table too large", name);
    size_t ints = 3 * (size_t)length + 2;
    sequence_params *p = malloc(sizeof *p + ints * sizeof(int32_t));
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->length = length;
    p->budget = budget;
    p->states = (int32_t *)(p + 1);
    p->offset = p->states + length;
    p->edge = p->offset + length + 1;
    int32_t at = 0, add = 0;
    for (int32_t i = 0; i <= length; ++i) {
        p->offset[i] = at;
        p->edge[i] = add;
        if (i < length) {
            p->states[i] = num_states[i];
            at += num_states[i];
            add += (i > 0 ? num_states[i - 1] : 1) * num_states[i];
        }
    }
    return graph_add_factor(g, ops, (int32_t)degree, vars, NULL, false, (int32_t)n_add, scores,
                            p, factor_id);
}

int concord_add_sequence(concord_graph *g, int32_t length, const int32_t *num_states,
                         const int32_t *vars, const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_sequence(g, &sequence_ops, length, num_states, vars, -1, scores,
                        factor_id);
}

int concord_add_sequence_budget(concord_graph *g, int32_t length, const int32_t *num_states,
                                const int32_t *vars, int32_t budget, const double *scores,
                                int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    return add_sequence(g, &sequence_budget_ops, length, num_states, vars, budget,
                        scores, factor_id);
}
