/*
 * Acyclic graphs solved exactly by dynamic programming. Detection is exact:
 * hand-built trees, forests, isolated pieces, factors of degree > 2,
 * multi-variables (whose own XOR makes no cycle), a single cycle, two
 * factors over the same variables, a triangle of DENSE factors, and the
 * cases where dynamic programming is exact but LP-MAP is not integral
 * (an OR over two states of one multi-variable, a KNAPSACK), which
 * concord_solver_map must leave to ADMM. Then random forests against
 * brute force (ref_mgraph): in a forest whose factors touch each unit
 * once, LP-MAP is integral (GLPK's optimum of the local polytope equals
 * the brute-force MAP) and both concord_solver_map and concord_solver_exact
 * solve it in one pass; with factors that touch two states of a
 * multi-variable or KNAPSACK factors, exact still does, map does not; one
 * more factor closing a cycle turns both off (and exact MAP still equals
 * brute force, by branch and bound). Last, multi-variables without their
 * own XOR that no factor holds one-hot: the graph-level test must take
 * their states apart (a path) unless every factor covers them (a cycle).
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
#include "ref_graph.h"
#include "ref_mgraph.h"
#include "testutil.h"

/* ---- tolerances (and why) ------------------------------------------------
 * DP_TOL: dynamic programming's value against brute force, relative to
 *   sum |scores|: the same optimum summed in another order.
 * EXACT_TOL: branch and bound's value may fall short by its gap (1e-9 of
 *   sum |scores|) plus rounding.
 * LP_TOL: GLPK's exact simplex against brute force, rounding only.
 */
#define DP_TOL 1e-12
#define EXACT_TOL 2e-9
#define LP_TOL 1e-9

typedef struct verdict {
    bool map_acyclic, exact_acyclic;
    double map_value, exact_value;
    int map_rc, exact_rc;
} verdict;

static verdict solve_both(const mg_graph *g) {
    verdict v;
    concord_graph *cg = mg_build(g);
    assert_non_null(cg);
    concord_solver *s = new_solver_or_fail(cg);
    concord_info info;
    concord_exact_info xi;
    v.map_rc = concord_solver_map(s, NULL, &info);
    v.map_acyclic = info.acyclic;
    v.map_value = info.value;
    if (info.acyclic) {
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        assert_true(info.integral && info.iterations == 1 && info.value == info.upper_bound);
    }
    v.exact_rc = concord_solver_exact(s, NULL, &info);
    v.exact_value = info.value;
    assert_int_equal(concord_solver_exact_info(s, &xi), CONCORD_OK);
    v.exact_acyclic = xi.acyclic;
    assert_true(xi.acyclic == info.acyclic);
    if (xi.acyclic) assert_true(xi.nodes == 0);
    concord_settings off;
    concord_default_settings(&off);
    off.acyclic = false;
    concord_solver_map(s, &off, &info);
    assert_false(info.acyclic);
    concord_solver_exact(s, &off, &info);
    assert_false(info.acyclic);
    concord_solver_free(s);
    concord_graph_free(cg);
    return v;
}

/* ---- hand-built graphs ----------------------------------------------------- */

static int add_binary(mg_graph *g, int count, double score) {
    const int first = g->n_vars;
    for (int k = 0; k < count; ++k) g->theta[g->n_vars++] = score * (k % 2 ? -1.0 : 1.0) + 0.1 * k;
    return first;
}

static int add_multi(mg_graph *g, int states, bool xor) {
    const int m = g->n_multi++;
    g->multi_first[m] = g->n_vars;
    g->multi_states[m] = states;
    g->multi_xor[m] = xor;
    for (int t = 0; t < states; ++t) g->theta[g->n_vars++] = 0.3 * t - 0.2;
    return m;
}

static mg_factor *new_factor(mg_graph *g, mg_kind kind) {
    mg_factor *f = &g->factors[g->n_factors++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    return f;
}

static void pair(mg_graph *g, int a, int b, double score) {
    mg_factor *f = new_factor(g, MG_PAIR);
    f->degree = 2;
    f->vars[0] = a;
    f->vars[1] = b;
    f->n_add = 1;
    f->add[0] = score;
}

static void logic(mg_graph *g, ref_kind kind, int degree, const int *vars, double budget) {
    mg_factor *f = new_factor(g, MG_LOGIC);
    f->degree = degree;
    f->logic.kind = kind;
    f->logic.budget = budget;
    for (int j = 0; j < degree; ++j) {
        f->vars[j] = vars[j];
        f->logic.costs[j] = 1.0 + j;
    }
}

static void dense(mg_graph *g, int n, const int *ms) {
    mg_factor *f = new_factor(g, MG_DENSE);
    f->n_multi = n;
    int product = 1;
    for (int b = 0; b < n; ++b) {
        f->multi[b] = ms[b];
        for (int t = 0; t < g->multi_states[ms[b]]; ++t)
            f->vars[f->degree++] = g->multi_first[ms[b]] + t;
        product *= g->multi_states[ms[b]];
    }
    f->n_add = product;
    for (int a = 0; a < product; ++a) f->add[a] = sin(1.0 + a * 1.7 + n) * 2.0;
}

typedef struct hand_case {
    const char *name;
    void (*build)(mg_graph *g);
    bool map_acyclic, exact_acyclic;
} hand_case;

static void chain_of_pairs(mg_graph *g) {
    const int x = add_binary(g, 5, 0.5);
    for (int k = 0; k < 4; ++k) pair(g, x + k, x + k + 1, k % 2 ? -1.3 : 1.1);
}

static void triangle_of_pairs(mg_graph *g) {
    const int x = add_binary(g, 3, 0.4);
    pair(g, x, x + 1, -1.0);
    pair(g, x + 1, x + 2, -1.0);
    pair(g, x + 2, x, -1.0);
}

static void forest_with_isolated_pieces(mg_graph *g) {
    const int x = add_binary(g, 7, 0.7);
    pair(g, x, x + 1, 1.0);
    pair(g, x + 1, x + 2, -2.0);
    pair(g, x + 3, x + 4, -0.5); /* a second tree; x + 5, x + 6 in no factor */
    const int m = add_multi(g, 3, false);
    dense(g, 1, &m); /* a lone multi-variable with a table of its own */
}

static void xor_of_three_in_a_tree(mg_graph *g) {
    const int x = add_binary(g, 5, 0.3);
    const int v[3] = {x, x + 1, x + 2};
    logic(g, REF_XOR, 3, v, 0.0);
    pair(g, x + 2, x + 3, 0.8);
    pair(g, x + 3, x + 4, -0.6);
}

static void xor_of_three_closed_by_a_pair(mg_graph *g) {
    xor_of_three_in_a_tree(g);
    pair(g, g->factors[0].vars[0], g->factors[0].vars[1], 0.9);
}

static void multi_variables_in_a_chain(mg_graph *g) {
    const int a = add_multi(g, 3, true), b = add_multi(g, 4, true), c = add_multi(g, 2, true);
    const int ab[2] = {a, b}, bc[2] = {b, c};
    dense(g, 2, ab);
    dense(g, 2, bc);
}

static void dense_chain_without_xors(mg_graph *g) {
    const int a = add_multi(g, 2, false), b = add_multi(g, 3, false), c = add_multi(g, 3, false);
    const int ab[2] = {a, b}, bc[2] = {b, c};
    dense(g, 2, ab);
    dense(g, 2, bc);
}

static void dense_triangle_of(mg_graph *g, bool own_xors) {
    const int a = add_multi(g, 2, own_xors), b = add_multi(g, 3, own_xors),
              c = add_multi(g, 2, own_xors);
    const int ab[2] = {a, b}, bc[2] = {b, c}, ca[2] = {c, a};
    dense(g, 2, ab);
    dense(g, 2, bc);
    dense(g, 2, ca);
}

static void dense_triangle(mg_graph *g) { dense_triangle_of(g, true); }

static void dense_triangle_without_xors(mg_graph *g) { dense_triangle_of(g, false); }


/* A multi-variable held one-hot by a DENSE table over it alone, two of its
 * states joined to one binary variable by PAIRs: a cycle through the unit,
 * found by the full test (the PAIRs touch only some of its states). */
static void dense_held_states_closed_by_pairs(mg_graph *g) {
    const int a = add_multi(g, 3, false), x = add_binary(g, 1, 0.4);
    const int only_a[1] = {a};
    dense(g, 1, only_a);
    pair(g, g->multi_first[a], x, 1.5);
    pair(g, g->multi_first[a] + 1, x, -0.8);
}

static void or_over_two_states(mg_graph *g) {
    const int a = add_multi(g, 3, true), b = add_multi(g, 2, true);
    const int ab[2] = {a, b};
    dense(g, 2, ab);
    const int v[2] = {g->multi_first[a], g->multi_first[a] + 1};
    logic(g, REF_OR, 2, v, 0.0);
}

static void knapsack_in_a_tree(mg_graph *g) {
    const int x = add_binary(g, 5, 1.0);
    const int v[3] = {x, x + 1, x + 2};
    logic(g, REF_KNAPSACK, 3, v, 2.5);
    pair(g, x + 2, x + 3, 0.7);
    pair(g, x + 3, x + 4, -1.2);
}

static void a_factor_joining_three_trees(mg_graph *g) {
    const int x = add_binary(g, 6, 0.9);
    pair(g, x, x + 1, 1.0);
    pair(g, x + 2, x + 3, -1.0);
    pair(g, x + 4, x + 5, 0.5);
    const int v[3] = {x + 1, x + 3, x + 5};
    logic(g, REF_ATMOSTONE, 3, v, 0.0);
}

static void two_factors_over_one_pair(mg_graph *g) {
    const int x = add_binary(g, 2, 0.5);
    pair(g, x, x + 1, 1.0);
    pair(g, x, x + 1, -2.0);
}

static void structured_factors_in_a_tree(mg_graph *g) {
    const int a = add_multi(g, 2, false), b = add_multi(g, 3, false), c = add_multi(g, 2, true);
    mg_factor *f = new_factor(g, MG_SEQUENCE);
    f->n_multi = 2;
    f->multi[0] = a;
    f->multi[1] = b;
    for (int t = 0; t < 2; ++t) f->vars[f->degree++] = g->multi_first[a] + t;
    for (int t = 0; t < 3; ++t) f->vars[f->degree++] = g->multi_first[b] + t;
    f->n_add = 2 + 6 + 3;
    for (int k = 0; k < f->n_add; ++k) f->add[k] = cos(0.5 + k);
    const int bc[2] = {b, c};
    dense(g, 2, bc);
    const int x = add_binary(g, 4, 0.6);
    mg_factor *u = new_factor(g, MG_USER);
    u->degree = 3;
    u->vars[0] = x;
    u->vars[1] = x + 1;
    u->vars[2] = g->multi_first[c] + 1;
    u->n_add = 1;
    u->add[0] = 1.5;
    mg_factor *m = new_factor(g, MG_MATCHING);
    m->rows = 1;
    m->cols = 2;
    m->degree = 2;
    m->vars[0] = x + 2;
    m->vars[1] = x + 3;
}

static const hand_case hand_cases[] = {
    {"a chain of pairs", chain_of_pairs, true, true},
    {"a triangle of pairs", triangle_of_pairs, false, false},
    {"a forest with isolated pieces", forest_with_isolated_pieces, true, true},
    {"an XOR of three in a tree", xor_of_three_in_a_tree, true, true},
    {"an XOR of three closed by a pair", xor_of_three_closed_by_a_pair, false, false},
    {"multi-variables in a chain", multi_variables_in_a_chain, true, true},
    {"a DENSE chain without XORs", dense_chain_without_xors, true, true},
    {"a DENSE triangle", dense_triangle, false, false},
    {"a DENSE triangle without XORs", dense_triangle_without_xors, false, false},
    {"DENSE-held states closed by PAIRs", dense_held_states_closed_by_pairs, false, false},
    {"an OR over two states", or_over_two_states, false, true},
    {"a KNAPSACK in a tree", knapsack_in_a_tree, false, true},
    {"a factor joining three trees", a_factor_joining_three_trees, true, true},
    {"two factors over one pair", two_factors_over_one_pair, false, false},
    {"structured factors in a tree", structured_factors_in_a_tree, true, true},
};

static void detection_is_exact_on_hand_built_graphs(void **state) {
    (void)state;
    for (size_t c = 0; c < sizeof hand_cases / sizeof hand_cases[0]; ++c) {
        mg_graph g;
        memset(&g, 0, sizeof g);
        hand_cases[c].build(&g);
        double brute;
        assert_true(mg_brute_map(&g, &brute, NULL));
        const verdict v = solve_both(&g);
        const double l1 = mg_score_l1(&g);
        if (v.map_acyclic != hand_cases[c].map_acyclic ||
            v.exact_acyclic != hand_cases[c].exact_acyclic)
            fail_msg("%s: map acyclic %d (expected %d), exact acyclic %d (expected %d)",
                     hand_cases[c].name, v.map_acyclic, hand_cases[c].map_acyclic,
                     v.exact_acyclic, hand_cases[c].exact_acyclic);
        assert_int_equal(v.exact_rc, CONCORD_OK);
        if (fabs(v.exact_value - brute) > EXACT_TOL * l1)
            fail_msg("%s: exact %.17g, brute force %.17g", hand_cases[c].name, v.exact_value,
                     brute);
        if (v.map_acyclic && fabs(v.map_value - brute) > DP_TOL * l1)
            fail_msg("%s: map %.17g, brute force %.17g", hand_cases[c].name, v.map_value, brute);
    }
}

/* ---- random forests --------------------------------------------------------- */

typedef enum forest_kind {
    FOREST_TIGHT,   /* every factor touches each unit through one link */
    FOREST_LOOSE,   /* some factor touches two states of a multi-variable, or is a KNAPSACK */
    FOREST_CYCLIC   /* one more factor closes a cycle */
} forest_kind;

static int find(int *uf, int x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

/* A variable of unit u (units: multi-variables, then binary variables). */
static int var_of_unit(test_rng *rng, const mg_graph *g, int n_binary_first, int u) {
    if (u < g->n_multi) return g->multi_first[u] + rng_int(rng, g->multi_states[u]);
    return n_binary_first + (u - g->n_multi);
}

static void random_forest(test_rng *rng, forest_kind kind, mg_graph *g) {
    memset(g, 0, sizeof *g);
    const double magnitude = pow(10.0, -2.0 + 4.0 * rng_uniform(rng));
    const int n_multi = rng_int(rng, 4);
    long enumeration = 1;
    for (int m = 0; m < n_multi; ++m) {
        add_multi(g, 1 + rng_int(rng, 4), rng_int(rng, 2) == 0);
        enumeration *= g->multi_states[m];
    }
    int n_binary = 2 + rng_int(rng, 9);
    while ((enumeration << n_binary) > MG_MAX_ENUMERATION / 4) n_binary -= 1;
    const int binary_first = g->n_vars;
    for (int k = 0; k < n_binary; ++k) g->theta[g->n_vars++] = 0.0;
    for (int i = 0; i < g->n_vars; ++i) g->theta[i] = magnitude * rng_normal(rng);
    for (int m = 0; m < n_multi; ++m)
        if (!g->multi_xor[m]) dense(g, 1, &m); /* its one-hot, as a leaf */
    for (int f = 0; f < g->n_factors; ++f)
        for (int a = 0; a < g->factors[f].n_add; ++a)
            g->factors[f].add[a] = magnitude * rng_normal(rng);
    const int n_units = n_multi + n_binary;
    int uf[MG_MAX_VARS];
    for (int u = 0; u < n_units; ++u) uf[u] = u;
    const int want = g->n_factors + 1 + rng_int(rng, n_units);
    bool loose = false;
    for (int attempt = 0; attempt < 60 && g->n_factors < want && g->n_factors < MG_MAX_FACTORS - 2;
         ++attempt) {
        /* 1 to 3 units from distinct trees */
        int units[3], n = 1 + rng_int(rng, 3);
        for (int k = 0; k < n; ++k) units[k] = rng_int(rng, n_units);
        bool distinct = true;
        for (int a = 0; a < n; ++a)
            for (int b = a + 1; b < n; ++b)
                distinct &= find(uf, units[a]) != find(uf, units[b]);
        if (!distinct) continue;
        int all_multi = 1;
        for (int k = 0; k < n; ++k) all_multi &= units[k] < n_multi;
        const int pick = rng_int(rng, 5);
        if (pick == 0 && all_multi) {
            int links = 0;
            for (int k = 0; k < n; ++k) links += g->multi_states[units[k]];
            if (links > MG_MAX_LINKS) continue;
            dense(g, n, units);
            mg_factor *f = &g->factors[g->n_factors - 1];
            for (int a = 0; a < f->n_add; ++a)
                f->add[a] = rng_int(rng, 10) == 0 ? -INFINITY : magnitude * rng_normal(rng);
        } else if (pick == 1 && n == 2) {
            pair(g, var_of_unit(rng, g, binary_first, units[0]),
                 var_of_unit(rng, g, binary_first, units[1]), magnitude * rng_normal(rng));
        } else if (pick == 2) {
            mg_factor *f = new_factor(g, MG_USER);
            f->degree = n;
            for (int k = 0; k < n; ++k) {
                f->vars[k] = var_of_unit(rng, g, binary_first, units[k]);
                f->negated[k] = rng_int(rng, 3) == 0;
            }
            f->n_add = 1;
            f->add[0] = magnitude * rng_normal(rng);
        } else {
            static const ref_kind kinds[] = {REF_XOR,    REF_XOROUT, REF_ATMOSTONE,
                                             REF_OR,     REF_OROUT,  REF_ANDOUT,
                                             REF_IMPLY,  REF_BUDGET, REF_BUDGET_EXACT};
            const ref_kind rk = kinds[rng_int(rng, 9)];
            if ((rk == REF_OROUT || rk == REF_ANDOUT) && n < 2) continue;
            int vars[3];
            for (int k = 0; k < n; ++k) vars[k] = var_of_unit(rng, g, binary_first, units[k]);
            logic(g, rk, n, vars, rng_int(rng, n + 1));
            mg_factor *f = &g->factors[g->n_factors - 1];
            for (int k = 0; k < n; ++k) f->negated[k] = rng_int(rng, 3) == 0;
        }
        for (int k = 1; k < n; ++k) uf[find(uf, units[k])] = find(uf, units[0]);
    }
    if (kind == FOREST_LOOSE) {
        /* an OR over two states of a multi-variable, or a KNAPSACK over
         * variables of distinct trees */
        int m = -1;
        for (int q = 0; q < n_multi; ++q)
            if (g->multi_states[q] >= 3) m = q;
        if (m >= 0 && rng_int(rng, 2) == 0) {
            const int v[2] = {g->multi_first[m], g->multi_first[m] + 2};
            logic(g, REF_OR, 2, v, 0.0);
            loose = true;
        } else {
            int units[2] = {rng_int(rng, n_units), rng_int(rng, n_units)};
            if (find(uf, units[0]) != find(uf, units[1])) {
                const int v[2] = {var_of_unit(rng, g, binary_first, units[0]),
                                  var_of_unit(rng, g, binary_first, units[1])};
                logic(g, REF_KNAPSACK, 2, v, 1.5);
                loose = true;
            }
        }
        if (!loose) return random_forest(rng, kind, g);
    }
    if (kind == FOREST_CYCLIC) {
        /* a pair between two units of one tree closes a cycle */
        for (int attempt = 0; attempt < 200; ++attempt) {
            const int a = rng_int(rng, n_units), b = rng_int(rng, n_units);
            if (a == b || find(uf, a) != find(uf, b)) continue;
            pair(g, var_of_unit(rng, g, binary_first, a), var_of_unit(rng, g, binary_first, b),
                 magnitude * rng_normal(rng));
            return;
        }
        return random_forest(rng, kind, g);
    }
}

static void random_forests_match_brute_force(void **state) {
    (void)state;
    test_rng rng = {4242};
    static const char *const names[] = {"tight", "loose", "cyclic"};
    for (int kind = FOREST_TIGHT; kind <= FOREST_CYCLIC; ++kind) {
        int checked = 0, failures = 0;
        for (int draw = 0; draw < 400 && checked < 120; ++draw) {
            mg_graph g;
            random_forest(&rng, (forest_kind)kind, &g);
            double brute;
            if (!mg_brute_map(&g, &brute, NULL)) continue;
            checked += 1;
            const double l1 = mg_score_l1(&g);
            const verdict v = solve_both(&g);
            bool ok = v.exact_rc == CONCORD_OK && fabs(v.exact_value - brute) <= EXACT_TOL * l1;
            if (kind == FOREST_TIGHT) {
                double lp;
                ok &= mg_local_lp(&g, &lp) == REF_LP_OPTIMAL && fabs(lp - brute) <= LP_TOL * l1;
                ok &= v.map_acyclic && v.exact_acyclic && v.map_rc == CONCORD_OK &&
                      fabs(v.map_value - brute) <= DP_TOL * l1 &&
                      fabs(v.exact_value - brute) <= DP_TOL * l1;
            } else if (kind == FOREST_LOOSE) {
                ok &= !v.map_acyclic && v.exact_acyclic;
            } else {
                ok &= !v.map_acyclic && !v.exact_acyclic;
            }
            if (!ok) {
                printf("%s forest, draw %d: map %d (acyclic %d) %.17g, exact %d (acyclic %d) "
                       "%.17g, brute force %.17g\n",
                       names[kind], draw, v.map_rc, v.map_acyclic, v.map_value, v.exact_rc,
                       v.exact_acyclic, v.exact_value, brute);
                mg_print(&g);
                failures += 1;
            }
        }
        printf("%s forests: %d checked\n", names[kind], checked);
        assert_int_equal(failures, 0);
        assert_true(checked >= 100);
    }
}

/* An infeasible forest (two XORs force a variable both ways through a
 * chain of equalities) is reported infeasible by both solvers. */
static void an_infeasible_forest_is_reported(void **state) {
    (void)state;
    mg_graph g;
    memset(&g, 0, sizeof g);
    const int x = add_binary(&g, 2, 1.0);
    logic(&g, REF_XOR, 1, &x, 0.0); /* x = 1 */
    const int v[2] = {x, x + 1};
    logic(&g, REF_ANDOUT, 2, v, 0.0); /* x + 1 = x */
    int w = x + 1;
    logic(&g, REF_XOR, 1, &w, 0.0);
    g.factors[g.n_factors - 1].negated[0] = true; /* x + 1 = 0 */
    assert_false(mg_brute_map(&g, NULL, NULL));
    concord_graph *cg = mg_build(&g);
    concord_solver *s = new_solver_or_fail(cg);
    concord_info info;
    assert_int_equal(concord_solver_map(s, NULL, &info), CONCORD_EINFEASIBLE);
    assert_true(info.acyclic);
    assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
    assert_int_equal(concord_solver_exact(s, NULL, &info), CONCORD_EINFEASIBLE);
    assert_int_equal(info.status, CONCORD_STATUS_INFEASIBLE);
    concord_solver_free(s);
    concord_graph_free(cg);
}

/* The best of x over every 0/1 assignment of g's n variables: the variable
 * scores plus each PAIR's score where both ends are on (the graphs below
 * have PAIRs and ORs only; an OR's assignment needs one literal on). */
typedef struct small_graph {
    int n;
    double theta[4];
    int n_pairs, pair[4][2];
    double pair_score[4];
    int n_ors, or_vars[4][2];
} small_graph;

static double small_brute_force(const small_graph *sg) {
    double best = -INFINITY;
    for (int x = 0; x < 1 << sg->n; ++x) {
        bool ok = true;
        for (int k = 0; k < sg->n_ors; ++k)
            ok &= ((x >> sg->or_vars[k][0]) & 1) || ((x >> sg->or_vars[k][1]) & 1);
        if (!ok) continue;
        double value = 0.0;
        for (int i = 0; i < sg->n; ++i) value += ((x >> i) & 1) * sg->theta[i];
        for (int k = 0; k < sg->n_pairs; ++k)
            value += ((x >> sg->pair[k][0]) & (x >> sg->pair[k][1]) & 1) * sg->pair_score[k];
        if (value > best) best = value;
    }
    return best;
}

/* sg as a concord graph whose variables 0 and 1 are the two states of a
 * multi-variable without its own XOR (no factor holds them one-hot, so
 * they are two binary units). */
static concord_graph *small_graph_build(const small_graph *sg) {
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    int32_t first;
    assert_int_equal(concord_add_multi_variable(g, 2, sg->theta, false, &first), CONCORD_OK);
    assert_int_equal(concord_add_variables(g, sg->n - 2, sg->theta + 2, NULL), CONCORD_OK);
    for (int k = 0; k < sg->n_pairs; ++k)
        assert_int_equal(concord_add_pair(g, sg->pair[k][0], sg->pair[k][1], sg->pair_score[k],
                                          NULL),
                         CONCORD_OK);
    for (int k = 0; k < sg->n_ors; ++k)
        assert_int_equal(concord_add_logic(g, CONCORD_OR, 2,
                                           (int32_t[]){sg->or_vars[k][0], sg->or_vars[k][1]},
                                           NULL, NULL),
                         CONCORD_OK);
    return g;
}

/* Multi-variables without their own XOR, taken as one unit only when
 * every factor over them covers all their states: two PAIRs from its two
 * states to one variable form a path (its states are separate units),
 * two ORs over both its states a cycle (whether it is a unit or not). */
static void multi_variables_without_xor_are_taken_apart_or_whole(void **state) {
    (void)state;
    const small_graph path = {.n = 3, .theta = {0.4, -0.3, 0.2}, .n_pairs = 2,
                              .pair = {{0, 2}, {1, 2}}, .pair_score = {1.0, -1.0}};
    const small_graph cycle = {.n = 2, .theta = {-0.4, -0.7}, .n_ors = 2,
                               .or_vars = {{0, 1}, {0, 1}}};
    const small_graph *graphs[2] = {&path, &cycle};
    for (int c = 0; c < 2; ++c) {
        concord_graph *g = small_graph_build(graphs[c]);
        const double brute = small_brute_force(graphs[c]);
        concord_solver *s = new_solver_or_fail(g);
        concord_info info;
        assert_int_equal(concord_solver_map(s, NULL, &info), CONCORD_OK);
        assert_int_equal(info.acyclic, c == 0);
        if (c == 0) assert_true(fabs(info.value - brute) <= DP_TOL);
        assert_int_equal(concord_solver_exact(s, NULL, &info), CONCORD_OK);
        assert_int_equal(info.acyclic, c == 0);
        assert_true(fabs(info.value - brute) <= 1e-9);
        concord_solver_free(s);
        concord_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detection_is_exact_on_hand_built_graphs),
        cmocka_unit_test(random_forests_match_brute_force),
        cmocka_unit_test(an_infeasible_forest_is_reported),
        cmocka_unit_test(multi_variables_without_xor_are_taken_apart_or_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
