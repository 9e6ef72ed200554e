/*
 * libFuzzer target for the C API itself: the input is a program for a
 * small interpreter. Each op-code byte picks a call (add variables, add a
 * factor of any kind, set scores or weights, create or free a solver,
 * solve, backward, decode, evaluate, distributions, losses, a factor
 * alone, a batch) and the bytes after it its arguments, out-of-range
 * indices, repeated variables, negative sizes and NaN, infinite or huge
 * scores included. Every call must return a defined code, and what
 * succeeds must keep the header's promises: solutions finite and in
 * [0, 1], decodings 0/1 and agreeing with evaluate, losses finite and not
 * negative, gradients finite, solvers made before a change of the graph's
 * structure refusing to work. A broken promise traps.
 *
 * Arrays are malloc'ed at the exact length the header says the library
 * reads, so that AddressSanitizer catches a read past it; sizes are kept
 * small (solves too: max_iter, node_limit and backward_max_iter below 64)
 * so that an input runs in milliseconds.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "concord.h"

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint8_t byte(input *in) {
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}

static bool flag(input *in) { return byte(in) & 1; }

/* A size that decides an array's length: 0 .. max, sometimes negative. */
static int32_t size_arg(input *in, int32_t max) {
    const uint8_t b = byte(in);
    static const int32_t odd[] = {-1, -2, INT32_MIN, 0};
    if (b >= 248) return odd[b & 3];
    return (int32_t)(b % (uint32_t)(max + 1));
}

/* An index among `limit` items: mostly valid, sometimes just past the
 * end, negative or huge. */
static int32_t index_arg(input *in, int32_t limit) {
    const uint8_t b = byte(in);
    static const int32_t odd[] = {-1, INT32_MIN, INT32_MAX, 1 << 30, -2, 4096, 4097, 65536};
    if (b >= 232) {
        if (b >= 240) return odd[b & 7];
        return limit + (b & 7);
    }
    return limit > 0 ? (int32_t)(b % (uint32_t)limit) : (int32_t)(b & 3);
}

static double real_arg(input *in) {
    const uint8_t b = byte(in);
    static const double odd[] = {NAN,     INFINITY, -INFINITY, 1e300,   -1e300, 1e301,
                                 1e-300,  1e-310,   -1e-310,   DBL_MAX, DBL_MIN, 0.5,
                                 1e6,     1e-6,     1e7,       1e-7,    2.0,     -0.0,
                                 1e150,   -1e150,   3.0,       100.0,   -100.0,  1.0,
                                 -1.0,    0.25,     1e-12,     1e12,    0.0,     -0.5,
                                 1e-100,  -7.0};
    if (b < 160) return (b - 80) / 16.0;
    if (b < 192) return odd[b - 160];
    /* raw bits: any double at all */
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | byte(in);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* Arrays of the length the library is to read (at least one byte, so a
 * read of an empty array is caught too); NULL sometimes, where `null_ok`
 * or to see that a missing array is refused. Freed at the end of the op. */
enum { MAX_SCRATCH = 16 };
static void *scratch[MAX_SCRATCH];
static int n_scratch;

static void *alloc(int64_t n, size_t size) {
    if (n_scratch == MAX_SCRATCH) __builtin_trap(); /* an op asked for too many */
    void *p = malloc(n > 0 ? (size_t)n * size : 1);
    if (!p) abort();
    scratch[n_scratch++] = p;
    return p;
}

static void free_scratch(void) {
    while (n_scratch) free(scratch[--n_scratch]);
}

static int32_t *ints(input *in, int64_t n, int32_t limit) {
    int32_t *a = alloc(n, sizeof *a);
    for (int64_t i = 0; i < n; ++i) a[i] = index_arg(in, limit);
    return a;
}

/* Sizes in 1 .. max, or rarely 0 or negative. */
static int32_t *sizes(input *in, int64_t n, int32_t max) {
    int32_t *a = alloc(n, sizeof *a);
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t b = byte(in);
        a[i] = b >= 250 ? (int32_t)(b - 251) : 1 + (int32_t)(b % (uint32_t)max);
    }
    return a;
}

static double *reals(input *in, int64_t n, bool null_ok) {
    if (null_ok && byte(in) < 64) return NULL;
    double *a = alloc(n, sizeof *a);
    for (int64_t i = 0; i < n; ++i) a[i] = real_arg(in);
    return a;
}

static bool *bools(input *in, int64_t n) {
    if (byte(in) < 64) return NULL;
    bool *a = alloc(n, sizeof *a);
    for (int64_t i = 0; i < n; ++i) a[i] = flag(in);
    return a;
}

static int64_t nonneg(int32_t x) { return x > 0 ? x : 0; }

/* ---- user factors: the box [0, 1]^d, whose oracle switches on every
 * output of positive score; `user` says how it misbehaves ---- */
enum { USER_GOOD, USER_FAILS, USER_NAN, USER_OUT_OF_RANGE, USER_MODES };

typedef struct user_factor {
    int32_t degree, n_add;
    int mode;
} user_factor;

enum { MAX_USER = 64 };
static user_factor users[MAX_USER];
static int n_users;

static int box_map(void *user, const double *a, const double *b, double *u, double *v,
                   double *value) {
    const user_factor *f = user;
    if (f->mode == USER_FAILS && f->degree > 0 && a[0] > 0.5) return 7;
    *value = 0.0;
    for (int32_t i = 0; i < f->degree; ++i) {
        u[i] = a[i] > 0.0;
        *value += u[i] * a[i];
    }
    for (int32_t k = 0; k < f->n_add; ++k) {
        v[k] = b[k] > 0.0;
        *value += v[k] * b[k];
    }
    if (f->mode == USER_NAN && f->degree > 0) u[0] = NAN;
    if (f->mode == USER_OUT_OF_RANGE && f->degree > 0) u[0] = 2.0;
    return 0;
}

static int box_qp(void *user, const double *a, const double *b, const double *w, double *u,
                  double *v) {
    const user_factor *f = user;
    if (f->mode == USER_FAILS && f->degree > 0 && a[0] > 0.5) return 7;
    for (int32_t i = 0; i < f->degree; ++i) u[i] = fmin(1.0, fmax(0.0, a[i] / w[i]));
    for (int32_t k = 0; k < f->n_add; ++k) v[k] = b[k] > 0.0;
    if (f->mode == USER_NAN && f->degree > 0) u[0] = NAN;
    if (f->mode == USER_OUT_OF_RANGE && f->degree > 0) u[0] = -1.0;
    return 0;
}

/* ---- the interpreter's state ---- */
enum { SLOTS = 4 };
typedef struct state {
    concord_graph *g;
    concord_solver *s[SLOTS];
    uint64_t made_at[SLOTS]; /* the structure version each solver saw */
    uint64_t version;        /* bumped by every change of structure */
    bool user_factors;       /* additional values then lie in [-1, 1] */
} state;

static bool stale(const state *st, int k) { return st->made_at[k] != st->version; }

static void check_code(int rc) {
    if (rc < CONCORD_OK || rc > CONCORD_ECALLBACK) __builtin_trap();
}

static void check_in(const double *x, int32_t n, double lo, double hi) {
    for (int32_t i = 0; i < n; ++i)
        if (!(x[i] >= lo && x[i] <= hi)) __builtin_trap();
}

static void check_finite(const double *x, int32_t n) {
    for (int32_t i = 0; i < n; ++i)
        if (!isfinite(x[i])) __builtin_trap();
}

static double largest_magnitude(const double *x, int64_t n) {
    double largest = 0.0;
    for (int64_t i = 0; x && i < n; ++i) largest = fmax(largest, fabs(x[i]));
    return largest;
}

/* A backward pass's products: finite when du and dv are far enough below
 * DBL_MAX that the Jacobian (entries up to 1 / CONCORD_MIN_REGULARIZATION,
 * summed over a few thousand links) cannot carry them past it; never NaN. */
static void check_products(const double *du, int32_t n, const double *dv, int32_t n_add,
                           const double *x, int32_t count) {
    const bool must_be_finite =
        fmax(largest_magnitude(du, n), largest_magnitude(dv, n_add)) <= 1e290;
    for (int32_t i = 0; i < count; ++i)
        if (isnan(x[i]) || (must_be_finite && !isfinite(x[i]))) __builtin_trap();
}

/* After a solve: the code, the status and the solution it left. */
static void check_solve(const state *st, int k, int rc, const concord_info *info,
                        bool may_lack_solution) {
    check_code(rc);
    if (info->status < CONCORD_STATUS_UNSOLVED || info->status > CONCORD_STATUS_STALLED)
        __builtin_trap();
    concord_solver *s = st->s[k];
    if (stale(st, k)) {
        if (rc != CONCORD_EINVAL || concord_solver_variables(s) ||
            concord_solver_variable_scores(s))
            __builtin_trap();
        return;
    }
    /* a numerical failure leaves no solution to read */
    if (info->status == CONCORD_STATUS_NUMERIC && concord_solver_variables(s)) __builtin_trap();
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) return;
    const double *u = concord_solver_variables(s), *v = concord_solver_additionals(s);
    if (!u) {
        if (!may_lack_solution) __builtin_trap();
        return;
    }
    const int32_t n_add = concord_num_additionals(st->g);
    check_in(u, concord_num_variables(st->g), 0.0, 1.0);
    if (n_add > 0 && !v) __builtin_trap();
    if (n_add > 0) check_in(v, n_add, st->user_factors ? -1.0 : 0.0, 1.0);
}

/* The progress callback: tries what the header says a busy solver and
 * its graph refuse, and stops the solve after `stop_after` calls. */
typedef struct progress_ctx {
    concord_solver *s;
    concord_graph *g;
    int stop_after, calls;
} progress_ctx;

static int on_progress(void *context, const concord_progress *p) {
    progress_ctx *c = context;
    if (isnan(p->value) || isnan(p->upper_bound)) __builtin_trap();
    if (concord_add_variables(c->g, 1, NULL, NULL) != CONCORD_EINVAL) __builtin_trap();
    if (concord_solver_decode(c->s, NULL) != CONCORD_EINVAL) __builtin_trap();
    if (concord_solver_map(c->s, NULL, NULL) != CONCORD_EINVAL) __builtin_trap();
    return ++c->calls >= c->stop_after;
}

/* For batches, whose solvers run on several threads: no shared state. */
static int stop_at_iteration(void *context, const concord_progress *p) {
    return p->iteration >= *(const int *)context;
}

static void read_settings(input *in, concord_settings *s) {
    concord_default_settings(s);
    const uint8_t b = byte(in);
    s->max_iter = b == 255 ? 0 : 1 + b % 64;
    s->node_limit = 1 + byte(in) % 16;
    s->backward_max_iter = 1 + byte(in) % 64;
    if (!flag(in)) return; /* the rest at their defaults */
    static const double tols[] = {1e-6, 1e-3, 0.1, 1e-12, 0.0, 1.0, NAN, -1e-3};
    static const double etas[] = {0.1, 1.0, 1e-4, 1e4, 1e-5, 1e5, NAN, 10.0};
    s->tol = tols[byte(in) & 7];
    s->eta = etas[byte(in) & 7];
    s->adapt_eta = flag(in);
    s->relaxation = 1.0 + (byte(in) % 9) / 8.0;
    s->bound_every = size_arg(in, 30);
    s->max_inner_iter = size_arg(in, 8);
    s->acceleration = size_arg(in, 17);
    s->warm_start = flag(in);
    static const double limits[] = {0.0, 0.0, 0.0, 1e-3, 0.05, -1.0, NAN, INFINITY};
    s->time_limit = limits[byte(in) & 7];
    static const double btols[] = {1e-10, 1e-6, 1e-3, 0.0, -1.0, NAN, INFINITY, 1e-300};
    s->backward_tol = btols[byte(in) & 7];
    s->backward_power = flag(in);
    s->acyclic = flag(in);
    s->search = (concord_search)(byte(in) % 3);
    static const double gaps[] = {1e-9, 0.0, 0.1, 0.999, 1.0, -1e-9, NAN, 1e-3};
    s->exact_gap = gaps[byte(in) & 7];
    s->heuristic_every = size_arg(in, 4);
    s->psdd_step = (concord_step_rule)(byte(in) % 4);
    static const double psdd_etas[] = {1.0, 0.1, 10.0, 1e-12, 1e-13, 0.0, NAN, 1e6};
    s->psdd_eta = psdd_etas[byte(in) & 7];
}

/* A solver slot: 0 .. SLOTS-1 for those in use; NULL when empty. */
static int slot(input *in) { return byte(in) % SLOTS; }

/* Adds one factor (op-codes 0 .. 18) with arguments from the bytes. */
static int add_factor(input *in, state *st, int op) {
    concord_graph *g = st->g;
    const int32_t n = concord_num_variables(g);
    int32_t f;
    switch (op) {
    case 0: { /* logic */
        const concord_logic kind = (concord_logic)(byte(in) % 9);
        const int32_t d = size_arg(in, 10);
        int32_t *vars = ints(in, d, n);
        return concord_add_logic(g, kind, d, vars, bools(in, d), &f);
    }
    case 1: {
        const int32_t d = size_arg(in, 10);
        int32_t *vars = ints(in, d, n);
        const bool *neg = bools(in, d);
        const double budget = flag(in) ? real_arg(in) : byte(in) % 6;
        return concord_add_budget(g, d, vars, neg, budget, flag(in), &f);
    }
    case 2: {
        const int32_t d = size_arg(in, 10);
        int32_t *vars = ints(in, d, n);
        const bool *neg = bools(in, d);
        const double *costs = reals(in, d, false);
        return concord_add_knapsack(g, d, vars, neg, costs, real_arg(in), &f);
    }
    case 3: {
        const int32_t a = index_arg(in, n), b = index_arg(in, n);
        return concord_add_pair(g, a, b, real_arg(in), &f);
    }
    case 4: { /* DENSE over up to 3 variables of up to 7 states */
        const int32_t nv = size_arg(in, 3);
        int32_t *states = sizes(in, nv, 7);
        int64_t total = 0, joint = 1;
        for (int32_t i = 0; i < nv; ++i) total += nonneg(states[i]), joint *= nonneg(states[i]);
        int32_t *vars = ints(in, total, n);
        const double *scores = reals(in, nv > 0 ? joint : 0, true);
        return concord_add_dense(g, nv, states, vars, scores, &f);
    }
    case 5: {
        static const int32_t lengths[] = {2, 3, 4, 5, 6, 1, 0, -1, 4096, 4097, INT32_MAX, 7};
        const int32_t length = lengths[byte(in) % 12];
        const int32_t arcs = size_arg(in, 24);
        const int32_t limit = length > 0 && length < 16 ? length : 8;
        int32_t *heads = ints(in, arcs, limit), *mods = ints(in, arcs, limit);
        int32_t *vars = ints(in, arcs, n);
        return concord_add_tree(g, length, arcs, heads, mods, vars, byte(in) % 5, &f);
    }
    case 6: {
        const int32_t rows = size_arg(in, 5), cols = size_arg(in, 5);
        int32_t *vars = ints(in, nonneg(rows) * nonneg(cols), n);
        return concord_add_matching(g, rows, cols, vars, byte(in) % 5, &f);
    }
    case 7:
    case 8: { /* SEQUENCE, SEQUENCE_BUDGET */
        const int32_t length = size_arg(in, 5);
        int32_t *states = sizes(in, length, 5);
        int64_t total = 0, add = 0;
        for (int32_t i = 0; i < length; ++i) {
            total += nonneg(states[i]);
            add += i == 0 ? nonneg(states[i]) : nonneg(states[i - 1]) * nonneg(states[i]);
        }
        if (length > 0) add += nonneg(states[length - 1]);
        int32_t *vars = ints(in, total, n);
        const double *scores = reals(in, add, true);
        if (op == 7) return concord_add_sequence(g, length, states, vars, scores, &f);
        return concord_add_sequence_budget(g, length, states, vars, size_arg(in, 6), scores, &f);
    }
    case 9: {
        const int32_t m = size_arg(in, 10);
        const int64_t add = (nonneg(m) + 1) * (nonneg(m) + 2) / 2;
        int32_t *vars = flag(in) ? ints(in, m, n) : NULL;
        return concord_add_head_automaton(g, m, vars, reals(in, add, true), &f);
    }
    case 10: {
        const int32_t gp = size_arg(in, 4), m = size_arg(in, 8);
        const int64_t add = nonneg(gp) * nonneg(m) + (nonneg(m) + 1) * (nonneg(m) + 2) / 2;
        int32_t *vars = ints(in, nonneg(gp) + nonneg(m), n);
        return concord_add_grandparent_head_automaton(g, gp, m, vars, reals(in, add, true), &f);
    }
    case 11:
    case 12: { /* GENERAL_TREE, GENERAL_TREE_COUNTS */
        const int32_t nodes = size_arg(in, 5);
        int32_t *states = sizes(in, nodes, 4);
        int32_t *parents = alloc(nodes, sizeof *parents);
        for (int32_t i = 0; i < nodes; ++i)
            parents[i] = flag(in) ? index_arg(in, nodes) : i - 1; /* a chain, or anything */
        int64_t total = 0, add = 0;
        for (int32_t i = 0; i < nodes; ++i) {
            total += nonneg(states[i]);
            if (i > 0 && parents[i] >= 0 && parents[i] < nodes)
                add += nonneg(states[parents[i]]) * nonneg(states[i]);
        }
        if (op == 12) total += nonneg(nodes) + 1;
        int32_t *vars = ints(in, total, n);
        const double *scores = reals(in, add, true);
        if (op == 11) return concord_add_general_tree(g, nodes, states, parents, vars, scores, &f);
        return concord_add_general_tree_counts(g, nodes, states, parents, vars, scores, &f);
    }
    case 13:
    case 14: { /* BINARY_TREE, BINARY_TREE_COUNTS */
        const int32_t nodes = size_arg(in, 7);
        int32_t *parents = alloc(nodes, sizeof *parents);
        for (int32_t i = 0; i < nodes; ++i) parents[i] = flag(in) ? index_arg(in, nodes) : i - 1;
        int32_t *vars = ints(in, nodes, n);
        if (op == 13)
            return concord_add_binary_tree(g, nodes, parents, vars,
                                           reals(in, 4 * (nonneg(nodes) - 1), true), &f);
        const bool *counted = bools(in, nodes), *has_counts = bools(in, nodes);
        const int32_t bins = size_arg(in, 4);
        /* counts: at most size_i + 1 <= nodes + 1 per node */
        const int64_t add = 4 * (nonneg(nodes) - 1) + nonneg(nodes) * (nonneg(nodes) + 1);
        double *scores = reals(in, add, true);
        return concord_add_binary_tree_counts(g, nodes, parents, counted, has_counts, bins, vars,
                                              scores, &f);
    }
    case 15: {
        const int32_t length = size_arg(in, 6), budget = size_arg(in, 6);
        const bool *counted = bools(in, length);
        const int32_t nb = size_arg(in, 7);
        int32_t *pos = alloc(nb, sizeof *pos);
        for (int32_t i = 0; i < nb; ++i) { /* in [-1, length], or anything */
            const int32_t p = index_arg(in, length + 1);
            pos[i] = p == INT32_MIN ? p : p - 1;
        }
        int32_t *vars = ints(in, nonneg(length) + nonneg(nb), n);
        /* 4 length - n_bigrams, or the most a bad n_bigrams could ask */
        double *scores = reals(in, 4 * nonneg(length) + 2, true);
        return concord_add_compression_budget(g, length, budget, counted, nb, pos, vars, scores,
                                              &f);
    }
    case 16: {
        const int32_t words = size_arg(in, 10);
        int32_t *vars = ints(in, nonneg(words) + 1, n);
        const int64_t add = (nonneg(words) + 1) * (nonneg(words) + 2) / 2;
        return concord_add_sequence_compressor(g, words, vars, reals(in, add, true), &f);
    }
    case 17: { /* a user factor */
        if (n_users == MAX_USER) return CONCORD_EINVAL;
        const int32_t d = size_arg(in, 6), a = size_arg(in, 3);
        int32_t *vars = ints(in, d, n);
        const bool *neg = bools(in, d);
        const double *scores = reals(in, a, true);
        user_factor *u = &users[n_users];
        u->degree = d;
        u->n_add = a;
        u->mode = byte(in) % 8 < 5 ? USER_GOOD : byte(in) % USER_MODES; /* mostly good */
        const int rc = concord_add_factor(g, d, vars, neg, a, scores,
                                          byte(in) == 0 ? NULL : box_map, u, &f);
        if (rc == CONCORD_OK) ++n_users, st->user_factors = true;
        return rc;
    }
    default: { /* a closed-form QP for a factor, or none */
        const int32_t which = index_arg(in, concord_num_factors(g));
        return concord_set_factor_qp(g, which, flag(in) ? box_qp : NULL);
    }
    }
}

/* Values for a solve's gold or an evaluation: 0/1 mostly. */
static double *assignment(input *in, int32_t n, bool fractional) {
    double *x = alloc(n, sizeof *x);
    for (int32_t i = 0; i < n; ++i) {
        const uint8_t b = byte(in);
        x[i] = b < 240 || !fractional ? (double)(b & 1) : real_arg(in);
    }
    return x;
}

static void decode_and_check(state *st, int k) {
    concord_solver *s = st->s[k];
    concord_decoding dec;
    const int rc = concord_solver_decode(s, &dec);
    check_code(rc);
    if (rc != CONCORD_OK) return;
    const int32_t n = concord_num_variables(st->g);
    const double *x = concord_solver_decoded(s);
    if (!x) __builtin_trap();
    for (int32_t i = 0; i < n; ++i)
        if (x[i] != 0.0 && x[i] != 1.0) __builtin_trap();
    if (dec.violated < 0 || isnan(dec.value) || (dec.violated == 0 && !isfinite(dec.value)))
        __builtin_trap();
    double *copy = alloc(n, sizeof *copy);
    memcpy(copy, x, (size_t)n * sizeof *copy);
    concord_decoding again;
    if (concord_solver_evaluate(s, copy, &again) != CONCORD_OK) __builtin_trap();
    if (again.violated != dec.violated) __builtin_trap();
    if (dec.violated == 0 && !(fabs(again.value - dec.value) <= 1e-9 * (1 + fabs(dec.value))))
        __builtin_trap();
    const int32_t n_add = concord_num_additionals(st->g), n_multi = concord_num_multi_variables(st->g);
    double *v = alloc(n_add, sizeof *v);
    check_code(concord_solver_decoded_additionals(s, n_add ? v : NULL));
    int32_t *labels = alloc(n_multi, sizeof *labels);
    if (concord_solver_decoded_labels(s, labels) != CONCORD_OK) __builtin_trap();
    check_code(concord_assignment_from_labels(st->g, labels, copy));
}

static void check_distribution(concord_solver *s, int32_t count, int32_t degree, int32_t n_add,
                               bool user) {
    double *u = alloc(degree, sizeof *u), *v = alloc(n_add, sizeof *v);
    double total = 0.0;
    for (int32_t k = 0; k < count; ++k) {
        double w;
        if (concord_solver_distribution_entry(s, k, &w, u, v) != CONCORD_OK) __builtin_trap();
        if (!(w >= 0.0 && w <= 1.0 + 1e-9)) __builtin_trap();
        check_in(u, degree, 0.0, 1.0);
        check_in(v, n_add, user ? -1.0 : 0.0, 1.0);
        total += w;
    }
    if (count > 0 && !(fabs(total - 1.0) <= 1e-6)) __builtin_trap();
    if (concord_solver_distribution_entry(s, count, NULL, NULL, NULL) != CONCORD_EINVAL)
        __builtin_trap();
}

/* One solver op on slot k (which holds a solver). */
static void solver_op(input *in, state *st, int k, int op) {
    concord_solver *s = st->s[k];
    concord_graph *g = st->g;
    const int32_t n = concord_num_variables(g), n_add = concord_num_additionals(g);
    concord_settings settings;
    read_settings(in, &settings);
    progress_ctx ctx = {s, g, 1 + byte(in) % 4, 0};
    if (byte(in) < 32) {
        settings.progress = on_progress;
        settings.progress_context = &ctx;
    }
    concord_info info;
    memset(&info, 0, sizeof info);
    switch (op) {
    case 0: check_solve(st, k, concord_solver_map(s, &settings, &info), &info, false); break;
    case 1: check_solve(st, k, concord_solver_sparse(s, &settings, &info), &info, false); break;
    case 2: {
        const int rc = concord_solver_exact(s, &settings, &info);
        check_solve(st, k, rc, &info, rc == CONCORD_ENOTCONVERGED);
        concord_exact_info ei;
        check_code(concord_solver_exact_info(s, &ei));
        break;
    }
    case 3: check_solve(st, k, concord_solver_psdd(s, &settings, &info), &info, false); break;
    case 4: check_solve(st, k, concord_solver_mplp(s, &settings, &info), &info, false); break;
    case 5: { /* backward */
        const double *du = flag(in) ? reals(in, n, false) : assignment(in, n, false);
        const double *dv = reals(in, n_add, true);
        double *dtheta = alloc(n, sizeof *dtheta), *dphi = flag(in) ? alloc(n_add, 8) : NULL;
        concord_backward_info bi;
        const int rc = concord_solver_backward(s, &settings, du, dv, dtheta, dphi, &bi);
        check_code(rc);
        if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
            check_products(du, n, dv, n_add, dtheta, n);
            if (dphi) check_products(du, n, dv, n_add, dphi, n_add);
        }
        break;
    }
    case 6: decode_and_check(st, k); break;
    case 7: { /* evaluate an assignment from the bytes */
        const double *x = assignment(in, n, true);
        bool binary = true;
        for (int32_t i = 0; i < n; ++i) binary &= x[i] == 0.0 || x[i] == 1.0;
        concord_decoding dec;
        const int rc = concord_solver_evaluate(s, x, &dec);
        check_code(rc);
        if (!stale(st, k) && (rc == CONCORD_OK) != binary && rc != CONCORD_ECALLBACK)
            __builtin_trap();
        if (rc == CONCORD_OK && (isnan(dec.value) || (dec.violated == 0) != isfinite(dec.value)))
            __builtin_trap();
        break;
    }
    case 8: { /* a factor's distribution */
        const int32_t f = index_arg(in, concord_num_factors(g));
        int32_t count = -1, degree = 0, first = 0, fadd = 0;
        const int rc = concord_solver_factor_distribution(s, f, &count);
        check_code(rc);
        if (rc != CONCORD_OK) break;
        if (concord_factor_degree(g, f, &degree) != CONCORD_OK ||
            concord_factor_additionals(g, f, &first, &fadd) != CONCORD_OK)
            __builtin_trap();
        if (count < 1) __builtin_trap();
        check_distribution(s, count, degree, fadd, st->user_factors);
        break;
    }
    case 9:
    case 10: { /* losses */
        const double *gold = assignment(in, n, true);
        const double *vgold = flag(in) ? NULL : reals(in, n_add, false);
        double loss = NAN, *dtheta = flag(in) ? alloc(n, 8) : NULL;
        double *dphi = flag(in) ? alloc(n_add, 8) : NULL;
        const int rc = op == 9 ? concord_solver_loss_sparsemap(s, &settings, gold, vgold, &loss,
                                                               dtheta, dphi, &info)
                               : concord_solver_loss_hinge(s, &settings, gold, vgold, &loss,
                                                           dtheta, dphi, &info);
        check_code(rc);
        if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
            if (!(isfinite(loss) && loss >= 0.0)) __builtin_trap();
            if (dtheta) check_finite(dtheta, n);
            if (dphi) check_finite(dphi, n_add);
        }
        break;
    }
    case 11:
    case 12: { /* a factor alone: MAP, QP */
        const int32_t f = index_arg(in, concord_num_factors(g));
        int32_t degree = 0, first = 0, fadd = 0;
        const bool valid = concord_factor_degree(g, f, &degree) == CONCORD_OK &&
                           concord_factor_additionals(g, f, &first, &fadd) == CONCORD_OK;
        const double *a = reals(in, degree, false), *b = reals(in, fadd, true);
        double *u = alloc(degree, sizeof *u), *v = flag(in) ? alloc(fadd, 8) : NULL;
        const double lo = st->user_factors ? -1.0 : 0.0;
        if (op == 11) {
            double value = NAN;
            const int rc = concord_solver_factor_map(s, f, a, b, u, v, &value);
            check_code(rc);
            if (rc == CONCORD_OK) {
                if (!valid || isnan(value)) __builtin_trap();
                check_in(u, degree, 0.0, 1.0);
                if (v) check_in(v, fadd, lo, 1.0);
            }
        } else {
            const double *w = flag(in) ? NULL : reals(in, degree, false);
            int32_t count = -1;
            const bool want = flag(in);
            const int rc =
                concord_solver_factor_qp(s, f, a, b, w, u, v, want ? &count : NULL);
            check_code(rc);
            if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
                if (!valid) __builtin_trap();
                check_in(u, degree, 0.0, 1.0);
                if (v) check_in(v, fadd, lo, 1.0);
                if (rc == CONCORD_OK && want) check_distribution(s, count, degree, fadd,
                                                                 st->user_factors);
            }
        }
        break;
    }
    case 13: { /* the solver's own scores, or the graph's again */
        const double *theta = reals(in, n, true), *phi = reals(in, n_add, true);
        check_code(concord_solver_set_scores(s, theta, phi));
        break;
    }
    default: { /* multipliers and copies */
        int64_t total = 0;
        for (int32_t f = 0, d; f < concord_num_factors(g); ++f)
            if (concord_factor_degree(g, f, &d) == CONCORD_OK) total += d;
        double *m = alloc(total, sizeof *m), *c = alloc(total, sizeof *c);
        const int rc = concord_solver_links(s, m, c);
        check_code(rc);
        if (rc == CONCORD_OK) {
            check_finite(m, (int32_t)total);
            /* copies are the iterates' factor solutions, which only the
             * returned solution clips: means of 0/1 values, up to rounding */
            check_in(c, (int32_t)total, -1e-9, 1.0 + 1e-9);
        }
        break;
    }
    }
}

static void batch_op(input *in, state *st) {
    concord_solver *list[3];
    const size_t count = byte(in) % 4;
    for (size_t i = 0; i < count; ++i) list[i] = st->s[slot(in)];
    concord_settings settings;
    read_settings(in, &settings);
    int stop = 1 + byte(in) % 8;
    if (flag(in)) {
        settings.progress = stop_at_iteration;
        settings.progress_context = &stop;
    }
    const concord_algorithm algorithm = (concord_algorithm)(byte(in) % 6);
    concord_info infos[3];
    const int rc = concord_solve_batch(list, count, algorithm, &settings, infos, 1 + flag(in));
    check_code(rc);
    bool bad = algorithm > CONCORD_ALGORITHM_MPLP;
    for (size_t i = 0; i < count; ++i) {
        bad |= list[i] == NULL;
        for (size_t j = 0; j < i; ++j) bad |= list[i] == list[j];
    }
    if (bad && rc != CONCORD_EINVAL) __builtin_trap();
    if (bad) return;
    for (size_t i = 0; i < count; ++i) {
        int k = 0;
        while (st->s[k] != list[i]) ++k;
        check_solve(st, k, stale(st, k) ? CONCORD_EINVAL : CONCORD_OK, &infos[i], true);
    }
}

enum { MAX_VARIABLES = 2000 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    input in = {data, size};
    state st;
    memset(&st, 0, sizeof st);
    st.g = concord_graph_new();
    if (!st.g) return 0;
    n_users = 0;
    while (in.n > 0) {
        const uint8_t op = byte(&in);
        concord_graph *g = st.g;
        const int32_t n = concord_num_variables(g);
        if (op < 64) { /* 19 kinds of factors and QPs, more often than the rest */
            const int rc = add_factor(&in, &st, op % 19);
            check_code(rc);
            if (rc == CONCORD_OK) ++st.version;
            else if (concord_last_error(g)[0] == '\0') __builtin_trap();
        } else if (op < 80) {
            if (n >= MAX_VARIABLES) continue;
            const int32_t count = size_arg(&in, 12);
            const double *scores = reals(&in, count, true);
            int32_t first = -1;
            const bool binary = flag(&in);
            const int rc = binary ? concord_add_variables(g, count, scores, &first)
                                  : concord_add_multi_variable(g, count, scores, flag(&in),
                                                               &first);
            check_code(rc);
            if (rc == CONCORD_OK) {
                if (!binary || count > 0) ++st.version; /* adding none changes nothing */
                if (first != n) __builtin_trap();
            }
        } else if (op < 88) { /* scores and weights of the graph */
            const int what = byte(&in) % 3;
            const int32_t first = index_arg(&in, n + 1);
            const int32_t count = size_arg(&in, 16);
            const double *x = reals(&in, count, false);
            if (what == 0) {
                check_code(concord_set_variable_scores(g, first, count, x));
            } else if (what == 1) {
                check_code(concord_set_additional_scores(g, first, count, x));
            } else {
                const double *w = concord_regularization(g);
                bool changes = false;
                for (int32_t i = 0; i < count && first >= 0 && (int64_t)first + count <= n; ++i)
                    changes |= w[first + i] != x[i];
                const int rc = concord_set_regularization(g, first, count, x);
                check_code(rc);
                if (rc == CONCORD_OK && changes) ++st.version;
            }
        } else if (op < 96) { /* a new solver in a slot */
            const int k = slot(&in);
            concord_solver_free(st.s[k]);
            st.s[k] = NULL;
            const int rc = concord_solver_new(g, &st.s[k]);
            check_code(rc);
            if (rc == CONCORD_OK && !st.s[k]) __builtin_trap();
            st.made_at[k] = st.version;
        } else if (op < 100) {
            const int k = slot(&in);
            concord_solver_free(st.s[k]);
            st.s[k] = NULL;
        } else if (op < 104) {
            batch_op(&in, &st);
        } else if (op < 112) { /* queries of the graph */
            const int32_t i = index_arg(&in, concord_num_factors(g));
            int32_t a = 0, b = 0, d = 0;
            check_code(concord_factor_additionals(g, i, &a, &b));
            if (concord_factor_degree(g, i, &d) == CONCORD_OK) {
                int32_t *vars = alloc(d, sizeof *vars);
                bool *neg = alloc(d, sizeof *neg);
                if (concord_factor_variables(g, i, vars, neg) != CONCORD_OK) __builtin_trap();
                for (int32_t j = 0; j < d; ++j)
                    if (vars[j] < 0 || vars[j] >= n) __builtin_trap();
            }
            const int32_t m = index_arg(&in, concord_num_multi_variables(g));
            if (concord_multi_variable(g, m, &a, &b) == CONCORD_OK) {
                if (a < 0 || b < 1 || (int64_t)a + b > n) __builtin_trap();
                check_code(concord_multi_variable_labels(g, m, alloc(b, sizeof(int32_t))));
            }
        } else {
            const int k = slot(&in);
            if (st.s[k]) solver_op(&in, &st, k, (op - 112) % 15);
        }
        free_scratch();
    }
    for (int k = 0; k < SLOTS; ++k) concord_solver_free(st.s[k]);
    concord_graph_free(st.g);
    return 0;
}
