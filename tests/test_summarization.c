/*
 * GENERAL_TREE, GENERAL_TREE_COUNTS and SEQUENCE_COMPRESSOR against their
 * documented meaning (concord.h): the test enumerates every configuration
 * of small random factors (random trees whose nodes are numbered in any
 * order), with its own encoding of the outputs, and checks the oracles
 * (best score, ties, negative scores) and the active-set QP built on them
 * (structured_check.h); then files with one tree factor (the
 * repository's tests/data/fg/general_tree*.fg, and AD3's general_tree.fg
 * and general_tree_counts.fg from ../shared/data, skipped when absent) are
 * read here, solved, and compared with a brute force over all their state
 * assignments, and the summarization graph of tests/data/fg/compressor.fg
 * with GLPK; then malformed input is rejected.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "concord.h"
#include "graph.h"
#include "structured_check.h"
#include "testutil.h"

enum { MAX_NODES = 24, MAX_WORDS = 10 };

/* ---- trees ---- */

typedef struct tree_model {
    int n, counts;
    int states[MAX_NODES], parent[MAX_NODES];
    int link[MAX_NODES + 1]; /* first state indicator of each node; [n]: count 0 */
    int block[MAX_NODES];    /* first output of each non-root node's table */
    int degree, n_add;
} tree_model;

static void tree_init(tree_model *t, int n, const int *states, const int *parent, bool counts) {
    t->n = n;
    t->counts = counts;
    t->degree = t->n_add = 0;
    for (int i = 0; i < n; ++i) {
        t->states[i] = states[i];
        t->parent[i] = parent[i];
        t->link[i] = t->degree;
        t->degree += states[i];
    }
    t->link[n] = t->degree;
    if (counts) t->degree += n + 1;
    for (int i = 1; i < n; ++i) {
        t->block[i] = t->n_add;
        t->n_add += states[parent[i]] * states[i];
    }
}

static void tree_encode(const tree_model *t, const int *s, double *u, double *v) {
    for (int j = 0; j < t->degree; ++j) u[j] = 0.0;
    for (int k = 0; k < t->n_add; ++k) v[k] = 0.0;
    int zeros = 0;
    for (int i = 0; i < t->n; ++i) {
        u[t->link[i] + s[i]] = 1.0;
        zeros += s[i] == 0;
        if (i > 0) v[t->block[i] + s[t->parent[i]] * t->states[i] + s[i]] = 1.0;
    }
    if (t->counts) u[t->link[t->n] + zeros] = 1.0;
}

/* Allowed: one state per node, v the edges of those states, and (counts)
 * exactly the count indicator of the number of nodes in state 0. */
static bool tree_valid(const void *ctx, const double *u, const double *v) {
    const tree_model *t = ctx;
    int s[MAX_NODES];
    for (int j = 0; j < t->degree; ++j)
        if (u[j] != 0.0 && u[j] != 1.0) return false;
    for (int i = 0; i < t->n; ++i) {
        int on = 0;
        for (int k = 0; k < t->states[i]; ++k)
            if (u[t->link[i] + k] == 1.0) s[i] = k, ++on;
        if (on != 1) return false;
    }
    double eu[256], ev[1024];
    tree_encode(t, s, eu, ev);
    return memcmp(u, eu, (size_t)t->degree * sizeof(double)) == 0 &&
           memcmp(v, ev, (size_t)t->n_add * sizeof(double)) == 0;
}

static void tree_enumerate(const tree_model *t, config_list *c) {
    int s[MAX_NODES] = {0};
    configs_clear(c);
    for (;;) {
        double *x = configs_push(c);
        tree_encode(t, s, x, x + t->degree);
        if (!odometer_next(s, t->states, t->n)) break;
    }
}

/* A random tree on n nodes rooted at 0, the others numbered at random. */
static void random_tree(test_rng *rng, int n, int *parent) {
    int label[MAX_NODES], grown[MAX_NODES];
    label[0] = 0;
    for (int i = 1; i < n; ++i) label[i] = i;
    for (int i = n - 1; i > 1; --i) { /* shuffle labels 1..n-1 */
        int j = 1 + rng_int(rng, i);
        int x = label[i];
        label[i] = label[j];
        label[j] = x;
    }
    /* grow: node k attaches to one of the nodes grown before it */
    grown[0] = -1;
    for (int k = 1; k < n; ++k) grown[k] = rng_int(rng, k);
    parent[0] = -1;
    for (int k = 1; k < n; ++k) parent[label[k]] = label[grown[k]];
}

static void run_trees(bool counts) {
    test_rng rng = {counts ? 606u : 505u};
    config_list c;
    qp_totals totals = {0};
    for (int trial = 0; trial < 600; ++trial) {
        int n, states[MAX_NODES], parent[MAX_NODES], product;
        do {
            n = 1 + rng_int(&rng, 6);
            product = 1;
            for (int i = 0; i < n; ++i) product *= states[i] = 1 + rng_int(&rng, 3);
        } while (product > 300);
        random_tree(&rng, n, parent);
        tree_model t;
        tree_init(&t, n, states, parent, counts);
        configs_init(&c, t.degree, t.n_add);
        tree_enumerate(&t, &c);

        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, t.degree, NULL, NULL), CONCORD_OK);
        int32_t vars[64], st[MAX_NODES], par[MAX_NODES], id = -1;
        for (int j = 0; j < t.degree; ++j) vars[j] = j;
        for (int i = 0; i < n; ++i) st[i] = states[i], par[i] = parent[i];
        if (counts)
            assert_int_equal(concord_add_general_tree_counts(g, n, st, par, vars, NULL, &id),
                             CONCORD_OK);
        else
            assert_int_equal(concord_add_general_tree(g, n, st, par, vars, NULL, &id), CONCORD_OK);
        assert_int_equal(concord_num_additionals(g), t.n_add);
        const factor *f = &g->factors[id];
        check_oracle_and_qp(&rng, f, &c, tree_valid, &t, trial % 2 == 0, &totals);
        if (trial % 3 == 0) /* and with outputs forbidden (-inf) */
            check_with_forbidden_outputs(&rng, f, &c, tree_valid, &t, trial % 2 == 0, &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals(counts ? "GENERAL_TREE_COUNTS" : "GENERAL_TREE", 600, &totals);
}

static void general_tree_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_trees(false);
}

static void general_tree_counts_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_trees(true);
}

/* ---- binary trees ---- */

typedef struct binary_tree_model {
    int n, counts, cap;
    int parent[MAX_NODES];
    bool counted[MAX_NODES], scored[MAX_NODES];
    bool below[MAX_NODES][MAX_NODES]; /* below[i][j]: j is in i's subtree */
    int count_at[MAX_NODES];          /* first count output of a scored node */
    int degree, n_add;
} binary_tree_model;

static void binary_tree_init(binary_tree_model *t, int n, const int *parent, bool counts,
                             const bool *counted, const bool *scored, int max_bins) {
    t->n = n;
    t->counts = counts;
    t->cap = counts && max_bins > 0 ? max_bins - 1 : n;
    t->degree = n;
    t->n_add = 4 * (n - 1);
    for (int i = 0; i < n; ++i) {
        t->parent[i] = parent[i];
        t->counted[i] = counts && counted[i];
        t->scored[i] = counts && scored[i];
        for (int j = 0; j < n; ++j) t->below[i][j] = false;
    }
    for (int j = 0; j < n; ++j)
        for (int i = j; i >= 0; i = t->parent[i]) t->below[i][j] = true;
    for (int i = 0; i < n; ++i) {
        int size = 0;
        for (int j = 0; j < n; ++j) size += t->below[i][j];
        t->count_at[i] = t->n_add;
        if (t->scored[i]) t->n_add += size + 1;
    }
}

/* u: the node states; v: the edge entries, then each scored node's count
 * bin (counts from the cap up in bin cap). */
static void binary_tree_encode(const binary_tree_model *t, const int *s, double *u, double *v) {
    for (int k = 0; k < t->n_add; ++k) v[k] = 0.0;
    for (int i = 0; i < t->n; ++i) {
        u[i] = s[i];
        if (i > 0) v[4 * (i - 1) + 2 * s[t->parent[i]] + s[i]] = 1.0;
        if (!t->scored[i]) continue;
        int count = 0;
        for (int j = 0; j < t->n; ++j) count += t->below[i][j] && t->counted[j] && s[j];
        v[t->count_at[i] + (count < t->cap ? count : t->cap)] = 1.0;
    }
}

static bool binary_tree_valid(const void *ctx, const double *u, const double *v) {
    const binary_tree_model *t = ctx;
    int s[MAX_NODES];
    for (int i = 0; i < t->n; ++i) {
        if (u[i] != 0.0 && u[i] != 1.0) return false;
        s[i] = u[i] == 1.0;
    }
    double eu[MAX_NODES], ev[1024];
    binary_tree_encode(t, s, eu, ev);
    return memcmp(v, ev, (size_t)t->n_add * sizeof(double)) == 0;
}

static void run_binary_trees(bool counts) {
    test_rng rng = {counts ? 808u : 707u};
    config_list c;
    qp_totals totals = {0};
    const int trials = 500;
    for (int trial = 0; trial < trials; ++trial) {
        int n = 1 + rng_int(&rng, 8), parent[MAX_NODES];
        random_tree(&rng, n, parent);
        bool counted[MAX_NODES], scored[MAX_NODES];
        for (int i = 0; i < n; ++i) {
            counted[i] = rng_int(&rng, 4) > 0;
            scored[i] = i == 0 || rng_int(&rng, 3) == 0;
        }
        /* no cap, a cap, a cap of one bin (every count alike) */
        int max_bins = trial % 3 == 0 ? 0 : 1 + rng_int(&rng, n + 1);
        binary_tree_model t;
        binary_tree_init(&t, n, parent, counts, counted, scored, max_bins);
        configs_init(&c, t.degree, t.n_add);
        int s[MAX_NODES] = {0}, two[MAX_NODES];
        for (int i = 0; i < n; ++i) two[i] = 2;
        for (;;) {
            double *x = configs_push(&c);
            binary_tree_encode(&t, s, x, x + t.degree);
            if (!odometer_next(s, two, n)) break;
        }
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, n, NULL, NULL), CONCORD_OK);
        int32_t vars[MAX_NODES], par[MAX_NODES], id = -1;
        for (int i = 0; i < n; ++i) vars[i] = n - 1 - i, par[i] = parent[i];
        if (counts)
            assert_int_equal(concord_add_binary_tree_counts(g, n, par, counted, scored, max_bins,
                                                            vars, NULL, &id),
                             CONCORD_OK);
        else
            assert_int_equal(concord_add_binary_tree(g, n, par, vars, NULL, &id), CONCORD_OK);
        assert_int_equal(concord_num_additionals(g), t.n_add);
        check_oracle_and_qp(&rng, &g->factors[id], &c, binary_tree_valid, &t, trial % 2 == 0,
                            &totals);
        if (trial % 3 == 0) /* and with outputs forbidden (-inf) */
            check_with_forbidden_outputs(&rng, &g->factors[id], &c, binary_tree_valid, &t,
                                         trial % 2 == 0, &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals(counts ? "BINARY_TREE_COUNTS" : "BINARY_TREE", trials, &totals);
}

static void binary_tree_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_binary_trees(false);
}

static void binary_tree_counts_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_binary_trees(true);
}

/* Three warm-started QPs on one BINARY_TREE_COUNTS factor (integer
 * scores, then a new d), whose configurations include u = 0: the third
 * once made the zero configuration enter an active set it depended on
 * ((1,0,1) = (0,0,1) + (1,0,0) - 0), because the active set measured
 * independence against the entering configuration's own squared norm, 0;
 * the weights came out NaN. */
static void binary_tree_counts_qp_after_a_change_of_d(void **state) {
    (void)state;
    int parent[3] = {-1, 0, 0};
    bool counted[3] = {false, true, false}, scored[3] = {true, false, false};
    binary_tree_model t;
    binary_tree_init(&t, 3, parent, true, counted, scored, 3);
    config_list c;
    configs_init(&c, t.degree, t.n_add);
    for (int x = 0; x < 8; ++x) {
        int s[3] = {x & 1, x >> 1 & 1, x >> 2 & 1};
        double *row = configs_push(&c);
        binary_tree_encode(&t, s, row, row + t.degree);
    }
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 3, NULL, NULL), CONCORD_OK);
    int32_t par[3] = {-1, 0, 0}, vars[3] = {0, 1, 2}, id;
    assert_int_equal(
        concord_add_binary_tree_counts(g, 3, par, counted, scored, 3, vars, NULL, &id),
        CONCORD_OK);
    const double a[3][3] = {{1, 2, -1}, {-1, 2, 1}, {3, -3, 3}};
    const double b[3][12] = {{-3, 3, 0, -1, 0, 0, 1, -3, -3, -2, 1, -1},
                             {-3, -1, 0, 2, 2, 3, 0, 1, 2, 0, -2, -3},
                             {3, -2, -1, 3, -3, -1, -1, 3, 1, -3, 0, 3}};
    const double d[3][3] = {{4, 4, 4}, {4, 4, 4},
                            {7.0850078937874112, 7.4020438141824956, 7.2219362891100012}};
    qp_checker q;
    qp_checker_init(&q, &g->factors[id]);
    for (int k = 0; k < 3; ++k) check_qp(&q, &c, binary_tree_valid, &t, a[k], b[k], d[k]);
    qp_checker_free(&q);
    configs_free(&c);
    concord_graph_free(g);
}

/* The defaults: counted NULL counts every node, has_count_scores NULL
 * scores the root only. */
static void binary_tree_counts_defaults(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 3, NULL, NULL), CONCORD_OK);
    int32_t par[3] = {-1, 0, 0}, vars[3] = {0, 1, 2}, id;
    assert_int_equal(concord_add_binary_tree_counts(g, 3, par, NULL, NULL, 0, vars, NULL, &id),
                     CONCORD_OK);
    assert_int_equal(concord_num_additionals(g), 8 + 4);
    assert_int_equal(concord_add_binary_tree_counts(g, 3, par, NULL, NULL, -1, vars, NULL, &id),
                     CONCORD_EINVAL);
    int32_t cycle[3] = {-1, 2, 1};
    assert_int_equal(concord_add_binary_tree(g, 3, cycle, vars, NULL, &id), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "cycle"));
    concord_graph_free(g);
}

/* ---- compression budget ---- */

enum { MAX_TOKENS = 9 };

typedef struct compression_model {
    int length, budget, n_bigrams;
    bool counted[MAX_TOKENS];
    int bigram[MAX_TOKENS + 1]; /* per transition: its bigram indicator's k, or -1 */
    int index[MAX_TOKENS + 1][2][2];
    int degree, n_add;
} compression_model;

static void compression_init(compression_model *t, int length, int budget, const bool *counted,
                             int n_bigrams, const int32_t *positions) {
    t->length = length;
    t->budget = budget;
    t->n_bigrams = n_bigrams;
    for (int i = 0; i < length; ++i) t->counted[i] = counted[i];
    for (int i = 0; i <= length; ++i) t->bigram[i] = -1;
    for (int k = 0; k < n_bigrams; ++k) t->bigram[positions[k] + 1] = k;
    t->n_add = 0;
    for (int i = 0; i <= length; ++i)
        for (int p = 0; p <= (i > 0); ++p)
            for (int q = 0; q <= (i < length); ++q) {
                bool is_bigram = t->bigram[i] >= 0 && p == (i > 0) && q == (i < length);
                t->index[i][p][q] = is_bigram ? -1 : t->n_add++;
            }
    t->degree = length + n_bigrams;
}

static void compression_encode(const compression_model *t, const int *s, double *u, double *v) {
    for (int j = 0; j < t->degree; ++j) u[j] = 0.0;
    for (int k = 0; k < t->n_add; ++k) v[k] = 0.0;
    for (int i = 0; i <= t->length; ++i) {
        int p = i > 0 ? s[i - 1] : 0, q = i < t->length ? s[i] : 0;
        if (i < t->length) u[i] = q;
        if (t->index[i][p][q] >= 0) v[t->index[i][p][q]] = 1.0;
        else u[t->length + t->bigram[i]] = 1.0;
    }
}

static bool compression_valid(const void *ctx, const double *u, const double *v) {
    const compression_model *t = ctx;
    int s[MAX_TOKENS], kept = 0;
    for (int i = 0; i < t->length; ++i) {
        if (u[i] != 0.0 && u[i] != 1.0) return false;
        s[i] = u[i] == 1.0;
        kept += s[i] && t->counted[i];
    }
    if (kept > t->budget) return false;
    double eu[2 * MAX_TOKENS + 1], ev[4 * MAX_TOKENS + 4];
    compression_encode(t, s, eu, ev);
    return memcmp(u, eu, (size_t)t->degree * sizeof(double)) == 0 &&
           memcmp(v, ev, (size_t)t->n_add * sizeof(double)) == 0;
}

static void compression_budget_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    test_rng rng = {909};
    config_list c;
    qp_totals totals = {0};
    const int trials = 500;
    for (int trial = 0; trial < trials; ++trial) {
        int length = 1 + rng_int(&rng, MAX_TOKENS - 1), budget = rng_int(&rng, length + 1);
        bool counted[MAX_TOKENS];
        for (int i = 0; i < length; ++i) counted[i] = rng_int(&rng, 4) > 0;
        int32_t positions[MAX_TOKENS + 1];
        int n_bigrams = 0;
        for (int pos = -1; pos < length; ++pos) /* in a random order */
            if (rng_int(&rng, 2)) positions[n_bigrams++] = pos;
        for (int k = n_bigrams - 1; k > 0; --k) {
            int j = rng_int(&rng, k + 1);
            int32_t x = positions[k];
            positions[k] = positions[j];
            positions[j] = x;
        }
        compression_model t;
        compression_init(&t, length, budget, counted, n_bigrams, positions);
        configs_init(&c, t.degree, t.n_add);
        for (unsigned kept = 0; kept < 1u << length; ++kept) {
            int s[MAX_TOKENS], used = 0;
            for (int i = 0; i < length; ++i) {
                s[i] = kept >> i & 1u;
                used += s[i] && counted[i];
            }
            if (used > budget) continue;
            double *x = configs_push(&c);
            compression_encode(&t, s, x, x + t.degree);
        }
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, t.degree, NULL, NULL), CONCORD_OK);
        int32_t vars[2 * MAX_TOKENS + 1], id = -1;
        for (int j = 0; j < t.degree; ++j) vars[j] = j;
        assert_int_equal(concord_add_compression_budget(g, length, budget, counted, n_bigrams,
                                                        positions, vars, NULL, &id),
                         CONCORD_OK);
        assert_int_equal(concord_num_additionals(g), t.n_add);
        assert_int_equal(t.n_add, 4 * length - n_bigrams);
        check_oracle_and_qp(&rng, &g->factors[id], &c, compression_valid, &t, trial % 2 == 0,
                            &totals);
        if (trial % 3 == 0) /* and with outputs forbidden (-inf) */
            check_with_forbidden_outputs(&rng, &g->factors[id], &c, compression_valid, &t,
                                         trial % 2 == 0, &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals("COMPRESSION_BUDGET", trials, &totals);
}

static void compression_budget_arguments_are_checked(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    assert_int_equal(concord_add_variables(g, 8, NULL, NULL), CONCORD_OK);
    int32_t vars[8] = {0, 1, 2, 3, 4, 5, 6, 7}, twice[2] = {1, 1}, out[1] = {4}, start[1] = {-1};
    assert_int_equal(concord_add_compression_budget(g, 4, 2, NULL, 2, twice, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "distinct"));
    assert_int_equal(concord_add_compression_budget(g, 4, 2, NULL, 1, out, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_add_compression_budget(g, 4, -1, NULL, 0, NULL, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_add_compression_budget(g, 0, 1, NULL, 0, NULL, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 0);
    assert_int_equal(concord_add_compression_budget(g, 4, 2, NULL, 1, start, vars, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_num_additionals(g), 15);
    concord_graph_free(g);
}

/* ---- sequence compressor ---- */

typedef struct compressor {
    int n; /* words */
    int pair[MAX_WORDS + 2][MAX_WORDS + 2];
    int degree, n_add;
} compressor;

static void compressor_init(compressor *t, int n) {
    t->n = n;
    t->degree = n + 1;
    t->n_add = 0;
    for (int m = 0; m <= n; ++m)
        for (int s = m + 1; s <= n + 1; ++s) t->pair[m][s] = t->n_add++;
}

static void compressor_encode(const compressor *t, unsigned kept, double *u, double *v) {
    for (int j = 0; j < t->degree; ++j) u[j] = 0.0;
    for (int k = 0; k < t->n_add; ++k) v[k] = 0.0;
    int prev = 0;
    for (int m = 1; m <= t->n; ++m)
        if (kept >> (m - 1) & 1u) {
            u[m - 1] = 1.0;
            v[t->pair[prev][m]] = 1.0;
            prev = m;
        }
    v[t->pair[prev][t->n + 1]] = 1.0;
    u[t->n] = kept != 0;
}

/* Allowed: 0/1 words, the sentence indicator their OR, v their bigrams. */
static bool compressor_valid(const void *ctx, const double *u, const double *v) {
    const compressor *t = ctx;
    unsigned kept = 0;
    for (int j = 0; j < t->degree; ++j)
        if (u[j] != 0.0 && u[j] != 1.0) return false;
    for (int m = 1; m <= t->n; ++m)
        if (u[m - 1] == 1.0) kept |= 1u << (m - 1);
    double eu[MAX_WORDS + 1], ev[(MAX_WORDS + 2) * (MAX_WORDS + 3) / 2];
    compressor_encode(t, kept, eu, ev);
    return u[t->n] == eu[t->n] && memcmp(v, ev, (size_t)t->n_add * sizeof(double)) == 0;
}

static void sequence_compressor_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    test_rng rng = {707};
    config_list c;
    qp_totals totals = {0};
    for (int trial = 0; trial < 600; ++trial) {
        compressor t;
        compressor_init(&t, rng_int(&rng, 8));
        configs_init(&c, t.degree, t.n_add);
        for (unsigned kept = 0; kept < 1u << t.n; ++kept) {
            double *x = configs_push(&c);
            compressor_encode(&t, kept, x, x + t.degree);
        }
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, t.degree, NULL, NULL), CONCORD_OK);
        int32_t vars[MAX_WORDS + 1], id = -1;
        for (int j = 0; j < t.degree; ++j) vars[j] = (j * 7) % t.degree; /* a permutation */
        if (t.degree % 7 == 0)
            for (int j = 0; j < t.degree; ++j) vars[j] = j;
        assert_int_equal(concord_add_sequence_compressor(g, t.n, vars, NULL, &id), CONCORD_OK);
        assert_int_equal(concord_num_additionals(g), t.n_add);
        const factor *f = &g->factors[id];
        check_oracle_and_qp(&rng, f, &c, compressor_valid, &t, trial % 2 == 0, &totals);
        if (trial % 3 == 0) /* and with outputs forbidden (-inf) */
            check_with_forbidden_outputs(&rng, f, &c, compressor_valid, &t, trial % 2 == 0,
                                         &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals("SEQUENCE_COMPRESSOR", 600, &totals);
}

/* ---- LP-MAP of mixed graphs against GLPK ---- */

/* A GENERAL_TREE or GENERAL_TREE_COUNTS sharing its variables with logic
 * factors (the counts scored too). */
static void trees_in_mixed_graphs_match_glpk(void **state) {
    (void)state;
    test_rng rng = {1010};
    int solved = 0, fractional = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 120; ++trial) {
        int n, states[MAX_NODES], parent[MAX_NODES], product;
        do {
            n = 2 + rng_int(&rng, 4);
            product = 1;
            for (int i = 0; i < n; ++i) product *= states[i] = 1 + rng_int(&rng, 3);
        } while (product > 100);
        random_tree(&rng, n, parent);
        bool counts = trial % 2;
        tree_model t;
        tree_init(&t, n, states, parent, counts);
        config_list c;
        configs_init(&c, t.degree, t.n_add);
        tree_enumerate(&t, &c);
        double theta[64], b[512];
        for (int j = 0; j < t.degree; ++j) theta[j] = rng_normal(&rng);
        random_scores(&rng, b, t.n_add, false);
        int32_t vars[64], st[MAX_NODES], par[MAX_NODES];
        for (int j = 0; j < t.degree; ++j) vars[j] = j;
        for (int i = 0; i < n; ++i) st[i] = states[i], par[i] = parent[i];
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, t.degree, theta, NULL), CONCORD_OK);
        if (counts)
            assert_int_equal(concord_add_general_tree_counts(g, n, st, par, vars, b, NULL),
                             CONCORD_OK);
        else
            assert_int_equal(concord_add_general_tree(g, n, st, par, vars, b, NULL), CONCORD_OK);
        lp_ref *lp = lp_ref_new(t.degree, theta);
        lp_ref_add_configs(lp, &c, vars, b);
        add_random_logic(&rng, g, lp, t.degree);
        check_lp_map_against_glpk(g, lp, trial, &solved, &fractional, &worst);
        lp_ref_free(lp);
        configs_free(&c);
        concord_graph_free(g);
    }
    printf("trees with logic factors: %d feasible graphs (%d fractional LP-MAP), worst |value - "
           "GLPK| %.2e\n",
           solved, fractional, worst);
    assert_true(solved >= 50);
}

/* The compressive summarization model: a SEQUENCE_COMPRESSOR per
 * sentence, a BUDGET on the kept words of the whole summary, at most one
 * of some pairs of sentences (redundancy). */
static void summaries_match_glpk(void **state) {
    (void)state;
    test_rng rng = {1111};
    int solved = 0, fractional = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 80; ++trial) {
        int n_sent = 2 + rng_int(&rng, 2), words[4], first[4], n_vars = 0;
        for (int k = 0; k < n_sent; ++k) {
            words[k] = 1 + rng_int(&rng, 4);
            first[k] = n_vars;
            n_vars += words[k] + 1;
        }
        double theta[64], b[128];
        for (int j = 0; j < n_vars; ++j) theta[j] = rng_normal(&rng) + 0.5;
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, n_vars, theta, NULL), CONCORD_OK);
        lp_ref *lp = lp_ref_new(n_vars, theta);
        int32_t all_words[64], n_words = 0;
        for (int k = 0; k < n_sent; ++k) {
            compressor t;
            compressor_init(&t, words[k]);
            random_scores(&rng, b, t.n_add, false);
            int32_t vars[MAX_WORDS + 1];
            for (int j = 0; j < t.degree; ++j) vars[j] = first[k] + j;
            for (int j = 0; j < words[k]; ++j) all_words[n_words++] = first[k] + j;
            assert_int_equal(concord_add_sequence_compressor(g, words[k], vars, b, NULL),
                             CONCORD_OK);
            config_list c;
            configs_init(&c, t.degree, t.n_add);
            for (unsigned kept = 0; kept < 1u << t.n; ++kept) {
                double *x = configs_push(&c);
                compressor_encode(&t, kept, x, x + t.degree);
            }
            lp_ref_add_configs(lp, &c, vars, b);
            configs_free(&c);
        }
        int budget = 1 + rng_int(&rng, n_words / 2 + 1);
        assert_int_equal(concord_add_budget(g, n_words, all_words, NULL, budget, false, NULL),
                         CONCORD_OK);
        lp_ref_add_sum(lp, n_words, all_words, -INFINITY, budget);
        int32_t pair[2] = {first[0] + words[0], first[1] + words[1]}; /* sentence indicators */
        assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, 2, pair, NULL, NULL), CONCORD_OK);
        lp_ref_add_sum(lp, 2, pair, -INFINITY, 1.0);
        check_lp_map_against_glpk(g, lp, trial, &solved, &fractional, &worst);
        lp_ref_free(lp);
        concord_graph_free(g);
    }
    printf("summaries (compressors + length budget + redundancy): %d graphs (%d fractional "
           "LP-MAP), worst |value - GLPK| %.2e\n",
           solved, fractional, worst);
    assert_int_equal(solved, 80);
}

/* ---- AD3's files ---- */

typedef struct tree_file {
    int n_vars;
    double theta[128];
    int vars[128];
    tree_model t;
    double b[1024];
} tree_file;

static void read_tree_file(const char *path, bool counts, tree_file *tf) {
    char *text = read_whole_file(path, NULL);
    assert_non_null(text);
    char *save = NULL;
    tf->n_vars = atoi(strtok_r(text, " \t\n", &save));
    assert_int_equal(atoi(strtok_r(NULL, " \t\n", &save)), 1);
    for (int i = 0; i < tf->n_vars; ++i) tf->theta[i] = strtod(strtok_r(NULL, " \t\n", &save), NULL);
    assert_string_equal(strtok_r(NULL, " \t\n", &save), counts ? "GENERAL_TREE_COUNTS" : "GENERAL_TREE");
    int degree = atoi(strtok_r(NULL, " \t\n", &save));
    for (int j = 0; j < degree; ++j) tf->vars[j] = atoi(strtok_r(NULL, " \t\n", &save)) - 1;
    int n = atoi(strtok_r(NULL, " \t\n", &save)), states[MAX_NODES], parent[MAX_NODES];
    for (int i = 0; i < n; ++i) states[i] = atoi(strtok_r(NULL, " \t\n", &save));
    for (int i = 0; i < n; ++i) parent[i] = atoi(strtok_r(NULL, " \t\n", &save));
    tree_init(&tf->t, n, states, parent, counts);
    assert_int_equal(tf->t.degree, degree);
    for (int k = 0; k < tf->t.n_add; ++k) tf->b[k] = strtod(strtok_r(NULL, " \t\n", &save), NULL);
    assert_null(strtok_r(NULL, " \t\n", &save));
    free(text);
}

/* Best state assignment by enumeration; *unique when the runner-up is at
 * least 1e-9 below. */
static double tree_brute_force(const tree_file *tf, int *best_s, bool *unique) {
    const tree_model *t = &tf->t;
    int s[MAX_NODES] = {0};
    top_two top = {-INFINITY, -INFINITY};
    for (;;) {
        double x = 0.0;
        int zeros = 0;
        for (int i = 0; i < t->n; ++i) {
            x += tf->theta[tf->vars[t->link[i] + s[i]]];
            zeros += s[i] == 0;
            if (i > 0) x += tf->b[t->block[i] + s[t->parent[i]] * t->states[i] + s[i]];
        }
        if (t->counts) x += tf->theta[tf->vars[t->link[t->n] + zeros]];
        if (top_two_offer(&top, x)) memcpy(best_s, s, sizeof s);
        if (!odometer_next(s, t->states, t->n)) break;
    }
    *unique = top.best - top.second > 1e-9;
    return top.best;
}

static void solve_tree_file(const char *path, const char *name, bool counts) {
    tree_file *tf = calloc(1, sizeof *tf);
    assert_non_null(tf);
    read_tree_file(path, counts, tf);
    int best_s[MAX_NODES];
    bool unique;
    double expected = tree_brute_force(tf, best_s, &unique);

    concord_graph **graphs = read_single_graph_file(path);
    concord_graph *g = graphs[0];
    assert_int_equal(concord_num_additionals(g), tf->t.n_add);
    double *u = malloc((size_t)concord_num_variables(g) * sizeof *u);
    assert_non_null(u);
    concord_info info = solve_to_brute_force_optimum(g, name, expected, unique, u);
    if (unique) {
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        for (int i = 0; i < tf->t.n; ++i)
            for (int k = 0; k < tf->t.states[i]; ++k)
                assert_true(u[tf->vars[tf->t.link[i] + k]] == (k == best_s[i] ? 1.0 : 0.0));
    }
    free(u);
    concord_free_graphs(graphs, 1);
    free(tf);
}

static void ad3_general_tree_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_tree_file(shared_data_path_or_skip("ad3/general_tree.fg"), "general_tree.fg", false);
}

static void ad3_general_tree_counts_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_tree_file(shared_data_path_or_skip("ad3/general_tree_counts.fg"),
                    "general_tree_counts.fg", true);
}

/* The repository's own files (tests/data/fg), of the same layout: trees
 * of 8 nodes not numbered parents first, indicators in a shuffled order. */
static void repository_general_tree_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_tree_file(test_data_path("fg/general_tree.fg"), "tests/data/fg/general_tree.fg", false);
}

static void repository_general_tree_counts_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_tree_file(test_data_path("fg/general_tree_counts.fg"),
                    "tests/data/fg/general_tree_counts.fg", true);
}

/* The count scores matter: a reward on every fourth count, one at a time,
 * moves the optimum of a GENERAL_TREE_COUNTS file at least once, and
 * concord follows the brute force with the same reward. */
static void count_scores_change_the_optimum_of(const char *path, const char *name,
                                               double reward) {
    tree_file *tf = calloc(1, sizeof *tf);
    read_tree_file(path, true, tf);
    int base_s[MAX_NODES], moved = 0;
    bool base_unique;
    double base = tree_brute_force(tf, base_s, &base_unique);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    assert_int_equal(concord_read_file(path, CONCORD_FORMAT_AUTO, &graphs, &count, error,
                                       sizeof error, NULL, NULL),
                     CONCORD_OK);
    for (int c = 0; c <= tf->t.n; c += 4) {
        int var = tf->vars[tf->t.link[tf->t.n] + c];
        double original = tf->theta[var];
        tf->theta[var] = reward;
        int best_s[MAX_NODES];
        bool unique;
        double expected = tree_brute_force(tf, best_s, &unique);
        moved += fabs(expected - base) > 1e-9;
        assert_int_equal(concord_set_variable_scores(graphs[0], var, 1, &reward), CONCORD_OK);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(graphs[0]);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        concord_solver_free(solver);
        assert_true(fabs(info.upper_bound - expected) <= 1e-6);
        if (info.integral) assert_true(fabs(info.value - expected) <= 1e-8);
        printf("%s with reward %.1f on count %d: value %.10f, upper bound %.10f, brute force "
               "%.10f, %s\n",
               name, reward, c, info.value, info.upper_bound, expected,
               concord_status_name(info.status));
        tf->theta[var] = original;
        assert_int_equal(concord_set_variable_scores(graphs[0], var, 1, &original), CONCORD_OK);
    }
    assert_true(moved > 0);
    concord_free_graphs(graphs, count);
    free(tf);
}

static void count_scores_change_the_optimum(void **state) {
    (void)state;
    count_scores_change_the_optimum_of(test_data_path("fg/general_tree_counts.fg"),
                                       "tests/data/fg/general_tree_counts.fg", 2.0);
}

static void count_scores_change_the_optimum_of_ad3_general_tree_counts(void **state) {
    (void)state;
    count_scores_change_the_optimum_of(shared_data_path_or_skip("ad3/general_tree_counts.fg"),
                                       "general_tree_counts.fg", 0.5);
}

/* tests/data/fg/compressor.fg, a summarization graph (three
 * SEQUENCE_COMPRESSOR factors, a BUDGET on the kept words, an ATMOSTONE on
 * two sentence indicators), read here line by line: concord's LP-MAP value
 * and bound against GLPK on the local polytope, each compressor's polytope
 * the hull of its enumerated configurations with the file's scores. */
static void repository_summarization_file_matches_glpk(void **state) {
    (void)state;
    const char *path = test_data_path("fg/compressor.fg");
    char *text = read_whole_file_or_fail(path, NULL), *save = NULL;
    int n = atoi(strtok_r(text, " \n", &save)), m = atoi(strtok_r(NULL, " \n", &save));
    double theta[64], b[(MAX_WORDS + 2) * (MAX_WORDS + 3) / 2];
    assert_true(n <= 64);
    for (int i = 0; i < n; ++i) theta[i] = strtod(strtok_r(NULL, " \n", &save), NULL);
    lp_ref *lp = lp_ref_new(n, theta);
    int compressors = 0;
    for (int f = 0; f < m; ++f) {
        char type[32];
        snprintf(type, sizeof type, "%s", strtok_r(NULL, " \n", &save));
        int degree = atoi(strtok_r(NULL, " \n", &save));
        int32_t vars[64];
        assert_true(degree <= 64);
        for (int j = 0; j < degree; ++j) {
            vars[j] = atoi(strtok_r(NULL, " \n", &save)) - 1;
            assert_true(vars[j] >= 0 && vars[j] < n); /* no negated links here */
        }
        if (!strcmp(type, "SEQUENCE_COMPRESSOR")) {
            compressor t;
            assert_true(degree - 1 <= MAX_WORDS);
            compressor_init(&t, degree - 1);
            for (int k = 0; k < t.n_add; ++k) b[k] = strtod(strtok_r(NULL, " \n", &save), NULL);
            config_list c;
            configs_init(&c, t.degree, t.n_add);
            for (unsigned kept = 0; kept < 1u << t.n; ++kept) {
                double *x = configs_push(&c);
                compressor_encode(&t, kept, x, x + t.degree);
            }
            lp_ref_add_configs(lp, &c, vars, b);
            configs_free(&c);
            ++compressors;
        } else if (!strcmp(type, "BUDGET")) {
            lp_ref_add_sum(lp, degree, vars, -INFINITY, atoi(strtok_r(NULL, " \n", &save)));
        } else {
            assert_string_equal(type, "ATMOSTONE");
            lp_ref_add_sum(lp, degree, vars, -INFINITY, 1.0);
        }
    }
    assert_null(strtok_r(NULL, " \n", &save));
    free(text);
    assert_int_equal(compressors, 3);
    concord_graph **graphs = read_single_graph_file(path);
    int solved = 0, fractional = 0;
    double worst = 0.0;
    assert_true(check_lp_map_against_glpk(graphs[0], lp, 0, &solved, &fractional, &worst));
    printf("compressor.fg: LP-MAP %s, |value - GLPK| %.2e\n",
           fractional ? "fractional" : "integral", worst);
    lp_ref_free(lp);
    concord_free_graphs(graphs, 1);
}

/* GENERAL_TREE_COUNTS tables grow as n^2: a 3000-node star fits (and its
 * oracle finds an optimum known by construction), a 7000-node star is
 * refused with a message instead of a huge allocation. */
static void large_counted_trees_are_bounded(void **state) {
    (void)state;
    enum { BIG = 7000 };
    int32_t *st = malloc(BIG * sizeof *st), *par = malloc(BIG * sizeof *par);
    for (int i = 0; i < BIG; ++i) st[i] = 2, par[i] = i ? 0 : -1;
    for (int n = 3000; n <= BIG; n += BIG - 3000) {
        const int degree = 3 * n + 1; /* 2 states per node, n + 1 counts */
        int32_t *vars = malloc((size_t)degree * sizeof *vars);
        for (int j = 0; j < degree; ++j) vars[j] = j;
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, degree, NULL, NULL), CONCORD_OK);
        int rc = concord_add_general_tree_counts(g, n, st, par, vars, NULL, NULL);
        if (n == BIG) {
            assert_int_equal(rc, CONCORD_EINVAL);
            assert_non_null(strstr(concord_last_error(g), "too large"));
        } else {
            assert_int_equal(rc, CONCORD_OK);
            const factor *f = &g->factors[0];
            /* state 1 scores 1 at every node and a count of 7 nodes in state
             * 0 scores 100: the best keeps exactly 7 nodes in state 0. */
            double *a = calloc((size_t)degree, sizeof *a), *b = calloc((size_t)f->n_add, sizeof *b);
            double *u = malloc((size_t)degree * sizeof *u), *v = malloc((size_t)f->n_add * sizeof *v);
            void *scratch = malloc(factor_scratch_bytes(f));
            for (int i = 0; i < n; ++i) a[2 * i + 1] = 1.0;
            a[2 * n + 7] = 100.0;
            double best = f->ops->map(f, a, b, u, v, scratch);
            assert_true(best == (double)(n - 7) + 100.0);
            assert_true(u[2 * n + 7] == 1.0);
            int zeros = 0;
            for (int i = 0; i < n; ++i) zeros += u[2 * i] == 1.0;
            assert_int_equal(zeros, 7);
            free(a), free(b), free(u), free(v), free(scratch);
        }
        free(vars);
        concord_graph_free(g);
    }
    free(st), free(par);
}

/* Two nodes of 65,536 states: their edge table (65,536^2 = 2^32 cells)
 * wrapped to 0 in int32 arithmetic, the factor was built with no
 * additional outputs and its oracle wrote past them; 65,536 x 65,537 wrapped
 * to 65,536. Refused, like any table beyond INT32_MAX. */
static void tree_edge_tables_beyond_int32_are_refused(void **state) {
    (void)state;
    const int32_t k = 65536, n_vars = 2 * k + 1;
    int32_t *vars = malloc((size_t)n_vars * sizeof *vars);
    for (int32_t j = 0; j < n_vars; ++j) vars[j] = j;
    const int32_t parents[2] = {-1, 0};
    const int32_t counts[2][2] = {{65536, 65536}, {65536, 65537}};
    for (int c = 0; c < 2; ++c) {
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, n_vars, NULL, NULL), CONCORD_OK);
        assert_int_equal(concord_add_general_tree(g, 2, counts[c], parents, vars, NULL, NULL),
                         CONCORD_EINVAL);
        assert_non_null(strstr(concord_last_error(g), "too many states"));
        assert_int_equal(concord_num_factors(g), 0);
        concord_graph_free(g);
    }
    free(vars);
}

/* ---- errors ---- */

static void malformed_summarization_factors_are_rejected(void **state) {
    (void)state;
    /* 9 variables; a tree 0 <- 1, 0 <- 2 with 2, 1, 2 states: 2 + 4 scores */
    const char *head = "9\n1\n0\n0\n0\n0\n0\n0\n0\n0\n0\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 -1 0 0 1 2 3 4 5 6\n", head);
    expect_read_ok(buf, 6);
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 -1 2 0 1 2 3 4 5 6\n", head);
    expect_read_ok(buf, 2 * 1 + 2 * 2);
    snprintf(buf, sizeof buf,
             "%sGENERAL_TREE_COUNTS 9 1 2 3 4 5 6 7 8 9 3 2 1 2 -1 0 0 1 2 3 4 5 6\n", head);
    expect_read_ok(buf, 6);
    snprintf(buf, sizeof buf, "%sSEQUENCE_COMPRESSOR 3 1 2 3 1 2 3 4 5 6\n", head);
    expect_read_ok(buf, 6);
    snprintf(buf, sizeof buf, "%sSEQUENCE_COMPRESSOR 1 9 0.5\n", head);
    expect_read_ok(buf, 1);

    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 -1 0 0 1 2 3 4 5\n", head);
    expect_read_error(buf, "t.fg:12: GENERAL_TREE factor of degree 5: expected 13 fields");
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 0 0 0 1 2 3 4 5 6\n", head);
    expect_read_error(buf, "root's parent");
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 -1 3 0 1 2 3 4 5 6\n", head);
    expect_read_error(buf, "a parent node (an integer in [0, 2])");
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 1 2 -1 2 1 1 2 3 4\n", head);
    expect_read_error(buf, "t.fg:12: GENERAL_TREE factor: the parents do not form a tree");
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 5 1 2 3 4 5 3 2 2 2 -1 0 0 1 2 3 4 5 6 7 8\n",
             head);
    expect_read_error(buf, "add up to 6, not to the 5 state indices");
    snprintf(buf, sizeof buf,
             "%sGENERAL_TREE_COUNTS 5 1 2 3 4 5 3 2 1 2 -1 0 0 1 2 3 4 5 6\n", head);
    expect_read_error(buf, "3 nodes need at least 7 indices");
    snprintf(buf, sizeof buf, "%sGENERAL_TREE 2 1 -2 1 2 0\n", head);
    expect_read_error(buf, "cannot be negated");
    snprintf(buf, sizeof buf, "%sSEQUENCE_COMPRESSOR 3 1 2 3 1 2 3 4 5\n", head);
    expect_read_error(buf, "expected 6 fields");

    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 8, NULL, NULL);
    int32_t vars[8] = {0, 1, 2, 3, 4, 5, 6, 7}, st[3] = {2, 1, 2};
    assert_int_equal(concord_add_general_tree(g, 3, st, (int32_t[]){-1, 0, 0}, vars, NULL, NULL),
                     CONCORD_OK);
    int32_t nine[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}; /* 5 states + 4 counts; 8 is out of range */
    assert_int_equal(concord_add_general_tree_counts(g, 3, st, (int32_t[]){-1, 2, 0}, nine, NULL,
                                                     NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "out of range"));
    assert_int_equal(concord_num_factors(g), 1);
    int32_t bad_root[3] = {0, 0, 0}, cycle[3] = {-1, 2, 1}, self[3] = {-1, 1, 0};
    assert_int_equal(concord_add_general_tree(g, 3, st, bad_root, vars, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "not -1"));
    assert_int_equal(concord_add_general_tree(g, 3, st, cycle, vars, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "cycle"));
    assert_int_equal(concord_add_general_tree(g, 3, st, self, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_general_tree(g, 0, st, cycle, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_sequence_compressor(g, -1, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 1);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(general_tree_oracle_and_qp_match_enumeration),
        cmocka_unit_test(general_tree_counts_oracle_and_qp_match_enumeration),
        cmocka_unit_test(sequence_compressor_oracle_and_qp_match_enumeration),
        cmocka_unit_test(binary_tree_oracle_and_qp_match_enumeration),
        cmocka_unit_test(binary_tree_counts_oracle_and_qp_match_enumeration),
        cmocka_unit_test(binary_tree_counts_qp_after_a_change_of_d),
        cmocka_unit_test(binary_tree_counts_defaults),
        cmocka_unit_test(compression_budget_oracle_and_qp_match_enumeration),
        cmocka_unit_test(compression_budget_arguments_are_checked),
        cmocka_unit_test(trees_in_mixed_graphs_match_glpk),
        cmocka_unit_test(summaries_match_glpk),
        cmocka_unit_test(ad3_general_tree_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(ad3_general_tree_counts_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(repository_general_tree_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(repository_general_tree_counts_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(count_scores_change_the_optimum),
        cmocka_unit_test(repository_summarization_file_matches_glpk),
        cmocka_unit_test(count_scores_change_the_optimum_of_ad3_general_tree_counts),
        cmocka_unit_test(large_counted_trees_are_bounded),
        cmocka_unit_test(tree_edge_tables_beyond_int32_are_refused),
        cmocka_unit_test(malformed_summarization_factors_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
