/*
 * The TREE factor against brute force. For each variant (non-projective or
 * projective, any number of root children or exactly one) and hundreds of
 * random small sentences with complete or random arc sets: the test
 * enumerates every head assignment over the given arcs, keeps those its
 * own checker accepts as trees of the variant, and requires the factor's
 * MAP oracle and its active-set QP to be optimal over exactly those (see
 * tests/support/structure_qp.h). Construction must fail with
 * CONCORD_EINFEASIBLE exactly when the enumeration finds no tree. Also: the
 * builder's argument checks, the .fg syntax (AD3's ARBORESCENCE and
 * concord's TREE), files (every TREE variant in tests/data/fg/trees.fg
 * against brute force; parsing graphs, the repository's parser.fg and AD3's
 * from ../shared/data, skipped when absent), and LP-MAP on small graphs
 * mixing a tree with BUDGET and XOR factors, checked by brute force.
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
#include "structure_qp.h"
#include "testutil.h"

enum { MAX_LEN = 8, MAX_ARCS = MAX_LEN * MAX_LEN };

/* A sentence and its candidate arcs, as the test knows them. */
typedef struct sentence {
    int length;
    unsigned flags;
    int n_arcs;
    int32_t head[MAX_ARCS], mod[MAX_ARCS];
} sentence;

/* The test's own definition of a valid tree, from the header's words: each
 * token has exactly one head among the given arcs, every token reaches the
 * root by following heads, a single root when asked, and when projective
 * every token strictly between an arc's ends descends from its head. */
static bool is_tree(const uint8_t *x, const void *context) {
    const sentence *s = context;
    int head[MAX_LEN];
    for (int m = 0; m < s->length; ++m) head[m] = -1;
    int root_children = 0;
    for (int k = 0; k < s->n_arcs; ++k) {
        if (!x[k]) continue;
        if (head[s->mod[k]] >= 0) return false;
        head[s->mod[k]] = s->head[k];
        root_children += s->head[k] == 0;
    }
    for (int m = 1; m < s->length; ++m)
        if (head[m] < 0) return false;
    for (int m = 1; m < s->length; ++m) {
        int y = m, steps = 0;
        while (y != 0 && steps++ < s->length) y = head[y];
        if (y != 0) return false;
    }
    if ((s->flags & CONCORD_TREE_SINGLE_ROOT) && root_children != 1) return false;
    if (s->flags & CONCORD_TREE_PROJECTIVE) {
        for (int m = 1; m < s->length; ++m) {
            int h = head[m], lo = h < m ? h : m, hi = h < m ? m : h;
            for (int k = lo + 1; k < hi; ++k) {
                int y = k;
                while (y != 0 && y != h) y = head[y];
                if (y != h) return false;
            }
        }
    }
    return true;
}

/* Every valid tree over the sentence's arcs: an odometer over one chosen
 * incoming arc per token, filtered by is_tree. */
static void enumerate_trees(const sentence *s, structure_list *out) {
    int incoming[MAX_LEN][MAX_ARCS], count[MAX_LEN] = {0}, choice[MAX_LEN] = {0};
    for (int k = 0; k < s->n_arcs; ++k) incoming[s->mod[k]][count[s->mod[k]]++] = k;
    structure_list_clear(out);
    for (int m = 1; m < s->length; ++m)
        if (count[m] == 0) return;
    uint8_t x[MAX_ARCS];
    for (;;) {
        memset(x, 0, sizeof x);
        for (int m = 1; m < s->length; ++m) x[incoming[m][choice[m]]] = 1;
        if (is_tree(x, s)) structure_list_push(out, x);
        int m = 1;
        while (m < s->length && ++choice[m] == count[m]) choice[m++] = 0;
        if (m == s->length) break;
    }
}

/* A random sentence: complete arcs or each arc kept with probability
 * keep, listed in a random order. */
static void random_sentence(test_rng *rng, sentence *s, int length, unsigned flags,
                            double keep) {
    s->length = length;
    s->flags = flags;
    s->n_arcs = 0;
    for (int h = 0; h < length; ++h)
        for (int m = 1; m < length; ++m)
            if (h != m && rng_uniform(rng) < keep) {
                s->head[s->n_arcs] = h;
                s->mod[s->n_arcs] = m;
                s->n_arcs++;
            }
    for (int k = s->n_arcs - 1; k > 0; --k) {
        int j = rng_int(rng, k + 1);
        int32_t th = s->head[k], tm = s->mod[k];
        s->head[k] = s->head[j], s->mod[k] = s->mod[j];
        s->head[j] = th, s->mod[j] = tm;
    }
}

static void random_scores(test_rng *rng, double *a, int n, bool integers) {
    for (int i = 0; i < n; ++i)
        a[i] = integers ? (double)(rng_int(rng, 7) - 3) : 2.0 * rng_normal(rng);
}

/* Builds the sentence's TREE over fresh variables; returns the code. */
static int build_tree(concord_graph *g, const sentence *s) {
    int32_t vars[MAX_ARCS];
    int32_t first = 0;
    if (s->n_arcs > 0) assert_int_equal(concord_add_variables(g, s->n_arcs, NULL, &first), 0);
    for (int k = 0; k < s->n_arcs; ++k) vars[k] = first + k;
    return concord_add_tree(g, s->length, s->n_arcs, s->head, s->mod, vars, s->flags, NULL);
}

/* One variant: `trials` random sentences of 1..max_tokens tokens. */
static void run_variant(unsigned flags, int trials, int max_tokens, uint64_t seed) {
    test_rng rng = {seed};
    structure_list all;
    structure_list_init(&all, 0);
    int checked = 0, infeasible = 0, fw = 0;
    for (int trial = 0; trial < trials; ++trial) {
        sentence s;
        int length = 2 + rng_int(&rng, max_tokens);
        double keep = trial % 3 == 0 ? 1.1 : (trial % 3 == 1 ? 0.7 : 0.45);
        random_sentence(&rng, &s, length, flags, keep);
        if (s.n_arcs == 0) continue;
        all.dim = s.n_arcs;
        enumerate_trees(&s, &all);
        concord_graph *g = concord_graph_new();
        int rc = build_tree(g, &s);
        if (all.count == 0) {
            assert_int_equal(rc, CONCORD_EINFEASIBLE);
            assert_non_null(strstr(concord_last_error(g), "no "));
            assert_int_equal(concord_num_factors(g), 0);
            ++infeasible;
            concord_graph_free(g);
            continue;
        }
        assert_int_equal(rc, CONCORD_OK);
        const factor *f = &g->factors[0];
        double a[MAX_ARCS], a2[MAX_ARCS], d[MAX_ARCS];
        bool integers = trial % 2 == 0;
        random_scores(&rng, a, s.n_arcs, integers);
        check_structured_map(f, a, &all, is_tree, &s);
        for (int k = 0; k < s.n_arcs; ++k) {
            d[k] = 0.5 + 1.5 * rng_uniform(&rng);
            a2[k] = a[k] + 0.3 * rng_normal(&rng);
        }
        bool compare = all.count <= 400;
        fw += compare;
        check_structured_qp(f, a, a2, d, &all, is_tree, &s, compare);
        ++checked;
        concord_graph_free(g);
    }
    structure_list_free(&all);
    print_message("flags %u: %d sentences checked (%d against Frank-Wolfe), %d infeasible\n",
                  flags, checked, fw, infeasible);
    assert_true(checked >= 500);
}

static void nonprojective_multi_root_matches_brute_force(void **state) {
    (void)state;
    run_variant(0, 620, 5, 11);
}

static void nonprojective_single_root_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_TREE_SINGLE_ROOT, 660, 5, 12);
}

static void projective_multi_root_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_TREE_PROJECTIVE, 640, 5, 13);
}

static void projective_single_root_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_TREE_PROJECTIVE | CONCORD_TREE_SINGLE_ROOT, 680, 5, 14);
}

/* Six tokens, all variants: the MAP oracle, and the QP by its own
 * certificate (the Frank-Wolfe gap over up to 16807 trees); the
 * independent Frank-Wolfe solve only where there are few trees. */
static void six_tokens_map_matches_brute_force(void **state) {
    (void)state;
    test_rng rng = {21};
    structure_list all;
    structure_list_init(&all, 0);
    for (int trial = 0; trial < 400; ++trial) {
        sentence s;
        unsigned flags = (unsigned)(trial % 4);
        random_sentence(&rng, &s, 7, flags, trial % 8 < 4 ? 1.1 : 0.6);
        all.dim = s.n_arcs;
        enumerate_trees(&s, &all);
        concord_graph *g = concord_graph_new();
        int rc = build_tree(g, &s);
        assert_int_equal(rc, all.count ? CONCORD_OK : CONCORD_EINFEASIBLE);
        if (rc == CONCORD_OK) {
            double a[MAX_ARCS], d[MAX_ARCS];
            random_scores(&rng, a, s.n_arcs, trial % 2 == 0);
            check_structured_map(&g->factors[0], a, &all, is_tree, &s);
            for (int k = 0; k < s.n_arcs; ++k) d[k] = 0.5 + 1.5 * rng_uniform(&rng);
            check_structured_qp(&g->factors[0], a, NULL, d, &all, is_tree, &s, all.count <= 400);
        }
        concord_graph_free(g);
    }
    structure_list_free(&all);
}

/* A chain of three tokens can only be reached one way; a fourth token with
 * no incoming arc makes every variant infeasible; a projective tree may be
 * impossible where a non-projective one exists. */
static void infeasible_arc_sets_are_rejected(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t vars[8];
    concord_add_variables(g, 8, NULL, NULL);
    for (int k = 0; k < 8; ++k) vars[k] = k;
    int32_t h1[3] = {0, 1, 2}, m1[3] = {1, 2, 4};
    assert_int_equal(concord_add_tree(g, 5, 3, h1, m1, vars, 0, NULL), CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g), "token 3"));
    /* only 0 -> 2 -> 1 -> 3 ... with 0->2 crossing 1->3: 0->2, 2->1, 1->3 */
    int32_t h2[3] = {0, 2, 1}, m2[3] = {2, 1, 3};
    assert_int_equal(concord_add_tree(g, 4, 3, h2, m2, vars, 0, NULL), CONCORD_OK);
    assert_int_equal(concord_add_tree(g, 4, 3, h2, m2, vars, CONCORD_TREE_PROJECTIVE, NULL),
                     CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g), "projective"));
    /* two root arcs and nothing else: only a two-root tree */
    int32_t h3[2] = {0, 0}, m3[2] = {1, 2};
    assert_int_equal(concord_add_tree(g, 3, 2, h3, m3, vars, 0, NULL), CONCORD_OK);
    assert_int_equal(concord_add_tree(g, 3, 2, h3, m3, vars, CONCORD_TREE_SINGLE_ROOT, NULL),
                     CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g), "single-root"));
    /* a projective tree over the longest sentence given a single arc: the
     * token it leaves unreached is named at once (Eisner's O(length^3)
     * search took minutes to say only that no tree exists) */
    int32_t h4[1] = {0}, m4[1] = {1};
    assert_int_equal(concord_add_tree(g, 4096, 1, h4, m4, vars, CONCORD_TREE_PROJECTIVE, NULL),
                     CONCORD_EINFEASIBLE);
    assert_non_null(strstr(concord_last_error(g), "token 2 cannot be reached"));
    assert_int_equal(concord_num_factors(g), 2);
    concord_graph_free(g);
}

static void bad_tree_arguments_are_rejected(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 6, NULL, NULL);
    int32_t vars[4] = {0, 1, 2, 3}, h[4] = {0, 0, 1, 2}, m[4] = {1, 2, 2, 1};
    assert_int_equal(concord_add_tree(NULL, 3, 4, h, m, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_tree(g, 3, 4, h, m, vars, 4, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "flags"));
    assert_int_equal(concord_add_tree(g, 1, 4, h, m, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_tree(g, 3, 0, h, m, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_tree(g, 3, 4, NULL, m, vars, 0, NULL), CONCORD_EINVAL);
    int32_t self[4] = {1, 2, 1, 1};
    assert_int_equal(concord_add_tree(g, 3, 4, h, self, vars, 0, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "1 -> 1"));
    int32_t into_root[4] = {1, 2, 2, 0};
    assert_int_equal(concord_add_tree(g, 3, 4, h, into_root, vars, 0, NULL), CONCORD_EINVAL);
    int32_t out_of_range[4] = {0, 0, 1, 3};
    assert_int_equal(concord_add_tree(g, 3, 4, out_of_range, m, vars, 0, NULL), CONCORD_EINVAL);
    int32_t twice_h[4] = {0, 0, 1, 0}, twice_m[4] = {1, 2, 2, 1};
    assert_int_equal(concord_add_tree(g, 3, 4, twice_h, twice_m, vars, 0, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "twice"));
    int32_t same_var[4] = {0, 1, 2, 2};
    assert_int_equal(concord_add_tree(g, 3, 4, h, m, same_var, 0, NULL), CONCORD_EINVAL);
    int32_t bad_var[4] = {0, 1, 2, 6};
    assert_int_equal(concord_add_tree(g, 3, 4, h, m, bad_var, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 0);
    assert_int_equal(concord_add_tree(g, 3, 4, h, m, vars, 3, NULL), CONCORD_OK);
    concord_graph_free(g);
}

/* ------------------------------------------------------------------------
 * The tree inside graphs: LP-MAP against brute force
 * ------------------------------------------------------------------------ */

typedef struct budget_xor {
    int n_budget, budget_vars[6];
    double budget;
    int n_xor, xor_vars[4];
} budget_xor;

/* Best assignment of the arc variables that is a tree and satisfies the
 * BUDGET (at most) and XOR (exactly one) factors; -inf if none. */
static double brute_force(const sentence *s, const double *theta, const budget_xor *c) {
    double best = -INFINITY;
    uint8_t x[MAX_ARCS];
    for (uint32_t mask = 0; mask < (1u << s->n_arcs); ++mask) {
        for (int k = 0; k < s->n_arcs; ++k) x[k] = (mask >> k) & 1;
        if (!is_tree(x, s)) continue;
        int on = 0;
        for (int j = 0; j < c->n_budget; ++j) on += x[c->budget_vars[j]];
        if (on > c->budget) continue;
        on = 0;
        for (int j = 0; j < c->n_xor; ++j) on += x[c->xor_vars[j]];
        if (on != 1) continue;
        double value = 0.0;
        for (int k = 0; k < s->n_arcs; ++k) value += x[k] * theta[k];
        if (value > best) best = value;
    }
    return best;
}

static void tree_with_budget_and_xor_solves_to_brute_force(void **state) {
    (void)state;
    test_rng rng = {31};
    int integral = 0, total = 0;
    for (int trial = 0; trial < 120; ++trial) {
        sentence s;
        unsigned flags = (unsigned)(trial % 4);
        random_sentence(&rng, &s, 4, flags, 1.1); /* 9 arcs */
        budget_xor c;
        c.n_budget = 3 + rng_int(&rng, 3);
        c.budget = 1 + rng_int(&rng, 2);
        c.n_xor = 2 + rng_int(&rng, 2);
        int perm[MAX_ARCS];
        for (int k = 0; k < s.n_arcs; ++k) perm[k] = k;
        for (int k = s.n_arcs - 1; k > 0; --k) {
            int j = rng_int(&rng, k + 1), t = perm[k];
            perm[k] = perm[j], perm[j] = t;
        }
        for (int j = 0; j < c.n_budget; ++j) c.budget_vars[j] = perm[j];
        for (int j = 0; j < c.n_xor; ++j) c.xor_vars[j] = perm[s.n_arcs - 1 - j];
        double theta[MAX_ARCS];
        random_scores(&rng, theta, s.n_arcs, trial % 2 == 0);
        double best = brute_force(&s, theta, &c);
        if (best == -INFINITY) continue;

        concord_graph *g = concord_graph_new();
        int32_t vars[MAX_ARCS], bv[6], xv[4];
        assert_int_equal(concord_add_variables(g, s.n_arcs, theta, NULL), 0);
        for (int k = 0; k < s.n_arcs; ++k) vars[k] = k;
        for (int j = 0; j < c.n_budget; ++j) bv[j] = c.budget_vars[j];
        for (int j = 0; j < c.n_xor; ++j) xv[j] = c.xor_vars[j];
        assert_int_equal(concord_add_tree(g, s.length, s.n_arcs, s.head, s.mod, vars, flags, NULL),
                         0);
        assert_int_equal(concord_add_budget(g, c.n_budget, bv, NULL, c.budget, false, NULL), 0);
        assert_int_equal(concord_add_logic(g, CONCORD_XOR, c.n_xor, xv, NULL, NULL), 0);
        concord_settings set;
        concord_default_settings(&set);
        set.max_iter = 20000;
        concord_info info;
        concord_solver *solver = new_solver_or_fail(g);
        int rc = concord_solver_map(solver, &set, &info);
        assert_int_equal(rc, CONCORD_OK);
        double scale = 1.0;
        for (int k = 0; k < s.n_arcs; ++k) scale += fabs(theta[k]);
        /* the LP is a relaxation: its bound never falls below the best */
        assert_true(info.upper_bound >= best - 1e-6 * scale);
        ++total;
        if (info.integral) {
            ++integral;
            const double *u = concord_solver_variables(solver);
            uint8_t x[MAX_ARCS];
            for (int k = 0; k < s.n_arcs; ++k) x[k] = u[k] > 0.5;
            assert_true(is_tree(x, &s));
            assert_true(fabs(info.value - best) <= 1e-6 * scale);
            assert_true(fabs(info.upper_bound - best) <= 1e-4 * scale);
        }
        concord_solver_free(solver);
        concord_graph_free(g);
    }
    print_message("tree + budget + xor: %d graphs, %d integral\n", total, integral);
    assert_true(total >= 60);
    assert_true(integral >= total / 2);
}

/* A TREE alone: the LP is the tree polytope, so LP-MAP is the best tree. */
static void tree_alone_solves_to_its_map(void **state) {
    (void)state;
    test_rng rng = {41};
    structure_list all;
    structure_list_init(&all, 0);
    for (int trial = 0; trial < 40; ++trial) {
        sentence s;
        random_sentence(&rng, &s, 5, (unsigned)(trial % 4), 1.1);
        all.dim = s.n_arcs;
        enumerate_trees(&s, &all);
        double theta[MAX_ARCS], best = 0.0;
        random_scores(&rng, theta, s.n_arcs, false);
        structure_best(&all, theta, &best);
        concord_graph *g = concord_graph_new();
        int32_t vars[MAX_ARCS];
        concord_add_variables(g, s.n_arcs, theta, NULL);
        for (int k = 0; k < s.n_arcs; ++k) vars[k] = k;
        assert_int_equal(concord_add_tree(g, s.length, s.n_arcs, s.head, s.mod, vars, s.flags,
                                          NULL),
                         0);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(g);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        concord_solver_free(solver);
        assert_true(info.integral);
        assert_true(fabs(info.value - best) <= 1e-9 * (1.0 + fabs(best)));
        concord_graph_free(g);
    }
    structure_list_free(&all);
}

/* ------------------------------------------------------------------------
 * .fg syntax
 * ------------------------------------------------------------------------ */

/* The three arcs of a sentence of two tokens: 0->1, 0->2, 1->2, 2->1. */
static const char *const tree_vars = "4\n1\n1.0\n0.5\n2.0\n3.0\n";

static void fg_arborescence_reads_as_ad3(void **state) {
    (void)state;
    char text[512], error[256];
    concord_graph **graphs;
    size_t count;
    snprintf(text, sizeof text, "%sARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 1\n", tree_vars);
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
    assert_int_equal(count, 1);
    concord_graph *g = graphs[0];
    assert_int_equal(concord_num_factors(g), 1);
    assert_ptr_equal(g->factors[0].ops, &factor_tree_ops);
    concord_info info;
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    /* best: 0->1 and 1->2 (3.0) versus 0->2, 2->1 (3.5): the latter */
    const double *u = concord_solver_variables(solver);
    assert_true(u[0] == 0.0 && u[1] == 1.0 && u[2] == 0.0 && u[3] == 1.0);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
    /* AD3's tree allows several root children */
    snprintf(text, sizeof text, "4\n1\n1.0\n0.5\n-2.0\n-3.0\nARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 1\n");
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
    solver = new_solver_or_fail(graphs[0]);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    u = concord_solver_variables(solver);
    assert_true(u[0] == 1.0 && u[1] == 1.0 && u[2] == 0.0 && u[3] == 0.0);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
}

static void fg_tree_flags_select_the_variant(void **state) {
    (void)state;
    char text[512], error[256];
    concord_graph **graphs;
    size_t count;
    snprintf(text, sizeof text,
             "4\n1\n1.0\n0.5\n-2.0\n-3.0\nTREE 4 1 2 3 4 3 0 1 0 2 1 2 2 1 SINGLE_ROOT\n");
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
    concord_info info;
    concord_solver *solver = new_solver_or_fail(graphs[0]);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    const double *u = concord_solver_variables(solver);
    assert_true(u[0] == 1.0 && u[1] == 0.0 && u[2] == 1.0 && u[3] == 0.0);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
    /* projective: 0->2 2->1 1->3 crosses */
    snprintf(text, sizeof text,
             "3\n1\n0\n0\n0\nTREE 3 1 2 3 4 0 2 2 1 1 3 PROJECTIVE\n");
    /* the reader reports a builder's refusal as a parse error, with the
     * builder's message and the line */
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_EPARSE);
    assert_non_null(strstr(error, "test.fg:6"));
    assert_non_null(strstr(error, "projective"));
    snprintf(text, sizeof text,
             "3\n1\n0\n0\n0\nTREE 3 1 2 3 4 0 2 2 1 1 3 SINGLE_ROOT PROJECTIVE\n");
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_EPARSE);
    snprintf(text, sizeof text, "3\n1\n0\n0\n0\nTREE 3 1 2 3 4 0 2 2 1 1 3\n");
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
    concord_free_graphs(graphs, count);
}

static void fg_tree_errors_name_the_line(void **state) {
    (void)state;
    static const char *const bad[] = {
        "ARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2\n",         /* a pair short */
        "ARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 1 9\n",   /* one field too many */
        "ARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 1 PROJECTIVE\n", /* AD3 has no flags */
        "ARBORESCENCE 4 1 2 3 4 x 0 1 0 2 1 2 2 1\n",     /* length not a number */
        "ARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 x\n",     /* modifier not a number */
        "ARBORESCENCE 4 1 2 3 4 3 0 1 0 2 1 2 2 3\n",     /* modifier out of range */
        "ARBORESCENCE 4 1 2 3 -4 3 0 1 0 2 1 2 2 1\n",    /* negated link */
        "TREE 4 1 2 3 4 3 0 1 0 2 1 2 2 1 PLANAR\n",      /* unknown flag */
        "TREE 4 1 2 3 4 3 0 1 0 2 1 2 2 1 PROJECTIVE PROJECTIVE\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        char text[512], error[256];
        concord_graph **graphs;
        size_t count;
        snprintf(text, sizeof text, "%s%s", tree_vars, bad[k]);
        int rc = read_fg(text, &graphs, &count, error, sizeof error);
        assert_true(rc == CONCORD_EPARSE || rc == CONCORD_EINVAL);
        assert_non_null(strstr(error, "test.fg:7"));
    }
}

/* The ARBORESCENCE line of a parser file as a sentence: its length and,
 * per link, the arc's head and modifier (the test's own reading). */
static void sentence_from_line(const char *line, sentence *s) {
    char *copy = strdup(line), *save = NULL;
    assert_string_equal(strtok_r(copy, " ", &save), "ARBORESCENCE");
    s->n_arcs = atoi(strtok_r(NULL, " ", &save));
    assert_true(s->n_arcs <= MAX_ARCS);
    for (int k = 0; k < s->n_arcs; ++k) strtok_r(NULL, " ", &save);
    s->length = atoi(strtok_r(NULL, " ", &save));
    assert_true(s->length <= MAX_LEN);
    s->flags = 0;
    for (int k = 0; k < s->n_arcs; ++k) {
        s->head[k] = atoi(strtok_r(NULL, " ", &save));
        s->mod[k] = atoi(strtok_r(NULL, " ", &save));
    }
    assert_null(strtok_r(NULL, " ", &save));
    free(copy);
}

/* A parsing graph's ARBORESCENCE alone (the file's variable scores and
 * that line): it reads with `degree` links, every token must be reachable
 * over its pruned arcs, the oracle's best tree has `tokens` arcs, and
 * LP-MAP over the tree polytope is its value. With `brute_force` (small
 * sentences), that value is also the best over the trees enumerated here. */
static void parsing_tree_reads_and_solves(const char *path, int32_t degree, int tokens,
                                          bool brute_force) {
    size_t size;
    char *data = read_whole_file_or_fail(path, &size);
    sentence sent = {0};
    /* lines: N, M, N scores, then factors; keep the scores and the tree */
    char *text = malloc(size + 64), *out = text;
    assert_non_null(text);
    char *line = data, *next;
    long n_vars = -1, lineno = 0;
    for (; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        ++lineno;
        if (lineno == 1) {
            n_vars = strtol(line, NULL, 10);
            out += sprintf(out, "%s\n1\n", line);
        } else if (lineno >= 3 && lineno < 3 + n_vars) {
            out += sprintf(out, "%s\n", line);
        } else if (strncmp(line, "ARBORESCENCE ", 13) == 0) {
            out += sprintf(out, "%s\n", line);
            if (brute_force) sentence_from_line(line, &sent);
            break;
        }
    }
    char error[256];
    concord_graph **graphs;
    size_t count;
    assert_int_equal(concord_read_buffer(text, (size_t)(out - text), "parsing01-tree.fg",
                                         CONCORD_FORMAT_FG, &graphs, &count, error,
                                         sizeof error, NULL, NULL),
                     CONCORD_OK);
    concord_graph *g = graphs[0];
    const factor *f = &g->factors[0];
    assert_int_equal(f->degree, degree);
    double *a = malloc((size_t)f->degree * sizeof *a), *u = malloc((size_t)f->degree * sizeof *u);
    void *scratch = malloc(factor_scratch_bytes(f));
    for (int32_t j = 0; j < f->degree; ++j) a[j] = g->theta[g->link_var[f->link_begin + j]];
    double v[1], b[1] = {0.0};
    double best = f->ops->map(f, a, b, u, v, scratch);
    int on = 0;
    for (int32_t j = 0; j < f->degree; ++j) on += u[j] == 1.0;
    assert_int_equal(on, tokens); /* one head per token */
    if (brute_force) {
        structure_list all;
        structure_list_init(&all, sent.n_arcs);
        enumerate_trees(&sent, &all);
        double enumerated = 0.0;
        assert_true(structure_best(&all, a, &enumerated) >= 0);
        print_message("%s: the best of %d trees scores %.10f, the oracle's %.10f\n", path,
                      all.count, enumerated, best);
        assert_true(fabs(best - enumerated) <= 1e-12 * (1.0 + fabs(enumerated)));
        structure_list_free(&all);
    }
    concord_info info;
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    concord_solver_free(solver);
    assert_true(info.integral);
    assert_true(fabs(info.value - best) <= 1e-9 * (1.0 + fabs(best)));
    free(a), free(u), free(scratch), free(text), free(data);
    concord_free_graphs(graphs, count);
}

/* AD3's parsing01.fg: 354 arcs, 62 tokens (63 counting the root). */
static void ad3_parsing_tree_reads_and_solves(void **state) {
    (void)state;
    parsing_tree_reads_and_solves(shared_data_path_or_skip("ad3/parsing01.fg"), 354, 62, false);
}

/* The repository's parser: 23 arcs, 5 tokens, small enough to enumerate. */
static void repository_parsing_tree_reads_and_solves(void **state) {
    (void)state;
    parsing_tree_reads_and_solves(test_data_path("fg/parser.fg"), 23, 5, true);
}

/* A parsing graph whole (AD3's three: tree, head automata, OROUT of
 * degree 2, PAIR...; the repository's parser.fg): LP-MAP must converge.
 * The certificate needs no reference solver: a dual bound is an upper
 * bound on every feasible value, so when the solution is integral,
 * feasible for every factor (concord_solver_evaluate, which asks each
 * factor's own MAP oracle whether the point is allowed) and scores within
 * the tolerance of the bound, it is a MAP assignment; when it is
 * fractional the bound must still hold above the relaxed value. (The
 * repository's parser is also checked against GLPK in
 * test_head_automaton.c.) */
static void parsing_graph_solves_with_a_certified_gap(const char *path, const char *name) {
    char error[256];
    concord_graph **graphs;
    size_t count;
    int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    if (rc != CONCORD_OK) fail_msg("%s", error);
    assert_int_equal(count, 1);
    concord_graph *g = graphs[0];
    concord_info info;
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    double l1 = 0.0;
    for (int32_t i = 0; i < concord_num_variables(g); ++i)
        l1 += fabs(concord_variable_scores(g)[i]);
    for (int32_t i = 0; i < concord_num_additionals(g); ++i)
        l1 += fabs(concord_additional_scores(g)[i]);
    assert_true(info.upper_bound >= info.value - 1e-6 * l1);
    if (info.integral) {
        concord_decoding at;
        assert_int_equal(concord_solver_evaluate(solver, concord_solver_variables(solver), &at),
                         CONCORD_OK);
        assert_int_equal(at.violated, 0);
        assert_true(fabs(at.value - info.value) <= 1e-9 * l1);
        assert_true(info.upper_bound - at.value <= 1e-6 * l1);
    }
    print_message("%s: %s, value %.10g, bound %.10g, %d iterations\n", name,
                  concord_status_name(info.status), info.value, info.upper_bound,
                  info.iterations);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
}

static void ad3_parsing_graphs_solve_with_a_certified_gap(void **state) {
    (void)state;
    static const char *const names[] = {"parsing01.fg", "parsing02.fg", "parsing_excerpt.fg"};
    enum { N_NAMES = sizeof names / sizeof names[0] };
    char paths[N_NAMES][1024];
    for (size_t k = 0; k < N_NAMES; ++k) {
        char relative[64];
        snprintf(relative, sizeof relative, "ad3/%s", names[k]);
        snprintf(paths[k], sizeof paths[k], "%s", shared_data_path_or_skip(relative));
    }
    for (size_t k = 0; k < N_NAMES; ++k)
        parsing_graph_solves_with_a_certified_gap(paths[k], names[k]);
}

static void repository_parsing_graph_solves_with_a_certified_gap(void **state) {
    (void)state;
    parsing_graph_solves_with_a_certified_gap(test_data_path("fg/parser.fg"),
                                              "tests/data/fg/parser.fg");
}

/* tests/data/fg/trees.fg: one TREE per variant (no option, SINGLE_ROOT,
 * PROJECTIVE, both), read here line by line; LP-MAP over each (a single
 * tree factor: an integral polytope) is the best of the trees of that
 * variant the test enumerates over the line's arcs, and the solution is
 * that tree. */
static void tree_file_solves_every_variant_to_brute_force(void **state) {
    (void)state;
    const char *path = test_data_path("fg/trees.fg");
    char *text = read_whole_file_or_fail(path, NULL), *save = NULL;
    concord_graph **graphs;
    size_t count;
    char error[256];
    int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    if (rc != CONCORD_OK) fail_msg("%s", error);
    assert_int_equal(count, 4);
    structure_list all;
    structure_list_init(&all, 0);
    unsigned seen = 0;
    for (size_t gi = 0; gi < count; ++gi) {
        double theta[MAX_ARCS], a[MAX_ARCS];
        int link_var[MAX_ARCS];
        char *save_words;
        sentence s = {0};
        s.n_arcs = read_one_factor_graph(gi ? NULL : text, &save, "TREE", MAX_ARCS, theta,
                                         link_var, &save_words);
        s.length = atoi(strtok_r(NULL, " ", &save_words));
        assert_true(s.length <= MAX_LEN);
        for (int k = 0; k < s.n_arcs; ++k) {
            s.head[k] = atoi(strtok_r(NULL, " ", &save_words));
            s.mod[k] = atoi(strtok_r(NULL, " ", &save_words));
            a[k] = theta[link_var[k]];
        }
        for (char *word; (word = strtok_r(NULL, " ", &save_words));) {
            if (!strcmp(word, "PROJECTIVE")) s.flags |= CONCORD_TREE_PROJECTIVE;
            else if (!strcmp(word, "SINGLE_ROOT")) s.flags |= CONCORD_TREE_SINGLE_ROOT;
            else fail_msg("unexpected word %s", word);
        }
        seen |= 1u << s.flags;
        all.dim = s.n_arcs;
        enumerate_trees(&s, &all);
        double best = 0.0;
        int32_t arg = structure_best(&all, a, &best);
        assert_true(arg >= 0);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(graphs[gi]);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        print_message("trees.fg graph %zu (flags %u): %d trees, best %.10f; concord %s, value "
                      "%.10f, upper bound %.10f\n",
                      gi + 1, s.flags, all.count, best, concord_status_name(info.status),
                      info.value, info.upper_bound);
        assert_true(info.integral);
        assert_true(fabs(info.value - best) <= 1e-9 * (1.0 + fabs(best)));
        assert_true(fabs(info.upper_bound - best) <= 1e-6 * (1.0 + fabs(best)));
        const double *u = concord_solver_variables(solver);
        double at = 0.0;
        uint8_t x[MAX_ARCS];
        for (int k = 0; k < s.n_arcs; ++k) {
            x[k] = u[link_var[k]] == 1.0;
            at += x[k] * a[k];
        }
        assert_true(is_tree(x, &s)); /* a tree of this variant, scoring the best */
        assert_true(fabs(at - best) <= 1e-9 * (1.0 + fabs(best)));
        concord_solver_free(solver);
    }
    assert_int_equal(seen, 0xfu); /* all four variants */
    structure_list_free(&all);
    concord_free_graphs(graphs, count);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nonprojective_multi_root_matches_brute_force),
        cmocka_unit_test(nonprojective_single_root_matches_brute_force),
        cmocka_unit_test(projective_multi_root_matches_brute_force),
        cmocka_unit_test(projective_single_root_matches_brute_force),
        cmocka_unit_test(six_tokens_map_matches_brute_force),
        cmocka_unit_test(infeasible_arc_sets_are_rejected),
        cmocka_unit_test(bad_tree_arguments_are_rejected),
        cmocka_unit_test(tree_with_budget_and_xor_solves_to_brute_force),
        cmocka_unit_test(tree_alone_solves_to_its_map),
        cmocka_unit_test(fg_arborescence_reads_as_ad3),
        cmocka_unit_test(fg_tree_flags_select_the_variant),
        cmocka_unit_test(fg_tree_errors_name_the_line),
        cmocka_unit_test(ad3_parsing_tree_reads_and_solves),
        cmocka_unit_test(ad3_parsing_graphs_solve_with_a_certified_gap),
        cmocka_unit_test(repository_parsing_tree_reads_and_solves),
        cmocka_unit_test(repository_parsing_graph_solves_with_a_certified_gap),
        cmocka_unit_test(tree_file_solves_every_variant_to_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
