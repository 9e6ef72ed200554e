/*
 * SEQUENCE and SEQUENCE_BUDGET against their documented meaning (concord.h):
 * the test enumerates every state sequence of small random factors, with
 * its own encoding of the transition outputs, and checks the Viterbi
 * oracles (best score, ties, negative scores) and the active-set QP built
 * on them (see structured_check.h); then files with one such factor
 * (the repository's tests/data/fg/sequence*.fg, some with forbidden (-inf)
 * transitions, and AD3's sequence.fg and
 * sequence_budget.fg from ../shared/data, skipped when absent) are read
 * here, solved, and compared with a brute force over all their state
 * sequences; then malformed input is rejected with messages.
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

enum { MAX_LEN = 24 };

/* The test's own model of a sequence factor, from the documentation. */
typedef struct seq_model {
    int length, budget; /* budget -1: none */
    int states[MAX_LEN];
    int link[MAX_LEN];     /* first state indicator of each position */
    int block[MAX_LEN + 1]; /* first output of each transition block */
    int degree, n_add;
    bool forbidden[512]; /* per transition output: scored -inf when built */
} seq_model;

static void model_init(seq_model *m, int length, const int *states, int budget) {
    m->length = length;
    m->budget = budget;
    m->degree = m->n_add = 0;
    memset(m->forbidden, 0, sizeof m->forbidden);
    for (int i = 0; i < length; ++i) {
        m->states[i] = states[i];
        m->link[i] = m->degree;
        m->degree += states[i];
    }
    for (int i = 0; i <= length; ++i) {
        int before = i == 0 ? 1 : states[i - 1], after = i == length ? 1 : states[i];
        m->block[i] = m->n_add;
        m->n_add += before * after;
    }
}

/* The configuration of state sequence s. */
static void encode(const seq_model *m, const int *s, double *u, double *v) {
    for (int j = 0; j < m->degree; ++j) u[j] = 0.0;
    for (int k = 0; k < m->n_add; ++k) v[k] = 0.0;
    for (int i = 0; i < m->length; ++i) {
        u[m->link[i] + s[i]] = 1.0;
        int prev = i == 0 ? 0 : s[i - 1];
        v[m->block[i] + prev * m->states[i] + s[i]] = 1.0;
    }
    v[m->block[m->length] + s[m->length - 1]] = 1.0;
}

static int zeros(const seq_model *m, const int *s) {
    int z = 0;
    for (int i = 0; i < m->length; ++i) z += s[i] == 0;
    return z;
}

static bool uses_forbidden(const seq_model *m, const double *v) {
    for (int k = 0; k < m->n_add; ++k)
        if (v[k] == 1.0 && m->forbidden[k]) return true;
    return false;
}

/* Allowed: u one-hot at each position, at most `budget` positions in state
 * 0, and v exactly the transitions of that sequence. */
static bool seq_valid(const void *ctx, const double *u, const double *v) {
    const seq_model *m = ctx;
    int s[MAX_LEN];
    for (int i = 0; i < m->length; ++i) {
        int on = 0;
        for (int k = 0; k < m->states[i]; ++k) {
            double x = u[m->link[i] + k];
            if (x != 0.0 && x != 1.0) return false;
            if (x == 1.0) s[i] = k, ++on;
        }
        if (on != 1) return false;
    }
    if (m->budget >= 0 && zeros(m, s) > m->budget) return false;
    double eu[64], ev[512];
    encode(m, s, eu, ev);
    return memcmp(v, ev, (size_t)m->n_add * sizeof(double)) == 0 && !uses_forbidden(m, ev);
}

static void enumerate(const seq_model *m, config_list *c) {
    int s[MAX_LEN] = {0};
    configs_clear(c);
    for (;;) {
        if (m->budget < 0 || zeros(m, s) <= m->budget) {
            double *x = configs_push(c);
            encode(m, s, x, x + m->degree);
            if (uses_forbidden(m, x + m->degree)) c->count -= 1;
        }
        if (!odometer_next(s, m->states, m->length)) break;
    }
}

/* Random factors, with a random quarter of their transitions forbidden
 * (-inf) when `forbid`: a factor that leaves no sequence must be refused
 * as infeasible, with the graph unchanged. */
static void run_random(bool budgeted, bool forbid) {
    test_rng rng = {(budgeted ? 202u : 101u) + (forbid ? 1000u : 0u)};
    int refused = 0;
    config_list c;
    qp_totals totals = {0};
    for (int trial = 0; trial < 600; ++trial) {
        int length, states[MAX_LEN], forced, product;
        do { /* at most 300 sequences */
            length = 1 + rng_int(&rng, 6);
            forced = 0;
            product = 1;
            for (int i = 0; i < length; ++i) {
                states[i] = 1 + rng_int(&rng, 3);
                forced += states[i] == 1;
                product *= states[i];
            }
        } while (product > 300);
        int budget = budgeted ? forced + rng_int(&rng, length - forced + 1) : -1;
        seq_model m;
        model_init(&m, length, states, budget);
        double built[512];
        for (int k = 0; k < m.n_add; ++k) {
            m.forbidden[k] = forbid && rng_int(&rng, 4) == 0;
            built[k] = m.forbidden[k] ? -INFINITY : rng_int(&rng, 3) - 1.0;
        }
        configs_init(&c, m.degree, m.n_add);
        enumerate(&m, &c);

        concord_graph *g = concord_graph_new();
        assert_non_null(g);
        assert_int_equal(concord_add_variables(g, m.degree, NULL, NULL), CONCORD_OK);
        int32_t vars[64], nst[MAX_LEN];
        for (int j = 0; j < m.degree; ++j) vars[j] = j;
        for (int i = 0; i < length; ++i) nst[i] = states[i];
        int32_t id = -1;
        const int rc = budgeted
                           ? concord_add_sequence_budget(g, length, nst, vars, budget, built, &id)
                           : concord_add_sequence(g, length, nst, vars, built, &id);
        if (c.count == 0) {
            assert_int_equal(rc, CONCORD_EINFEASIBLE);
            assert_non_null(strstr(concord_last_error(g), "forbidden (-inf) output"));
            assert_int_equal(concord_num_factors(g), 0);
            assert_int_equal(concord_num_additionals(g), 0);
            refused += 1;
            configs_free(&c);
            concord_graph_free(g);
            continue;
        }
        assert_int_equal(rc, CONCORD_OK);
        assert_int_equal(concord_num_additionals(g), m.n_add);
        /* a forbidden transition is stored as 0, the others as given */
        for (int k = 0; k < m.n_add; ++k)
            assert_true(g->phi[k] == (m.forbidden[k] ? 0.0 : built[k]));
        const factor *f = &g->factors[id];
        check_oracle_and_qp(&rng, f, &c, seq_valid, &m, trial % 2 == 0, &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals(budgeted ? "SEQUENCE_BUDGET" : "SEQUENCE", 600 - refused, &totals);
    if (forbid) assert_true(refused > 0 && refused < 400); /* both branches were taken */
}

static void sequence_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_random(false, false);
}

static void sequence_budget_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_random(true, false);
}

static void forbidden_transitions_match_enumeration(void **state) {
    (void)state;
    run_random(false, true);
}

static void forbidden_transitions_with_budget_match_enumeration(void **state) {
    (void)state;
    run_random(true, true);
}

/* A budget at least the length does not constrain; a budget of 0 forbids
 * state 0 everywhere. */
static void budget_extremes(void **state) {
    (void)state;
    test_rng rng = {7};
    int states[3] = {3, 2, 3};
    for (int budget = 0; budget <= 4; ++budget) {
        seq_model m;
        model_init(&m, 3, states, budget);
        config_list c;
        configs_init(&c, m.degree, m.n_add);
        enumerate(&m, &c);
        assert_int_equal(c.count, budget == 0 ? 2 * 1 * 2 : (budget >= 3 ? 18 : c.count));
        concord_graph *g = concord_graph_new();
        concord_add_variables(g, m.degree, NULL, NULL);
        int32_t vars[8] = {0, 1, 2, 3, 4, 5, 6, 7}, nst[3] = {3, 2, 3};
        assert_int_equal(concord_add_sequence_budget(g, 3, nst, vars, budget, NULL, NULL),
                         CONCORD_OK);
        double a[8], b[64];
        for (int rep = 0; rep < 50; ++rep) {
            random_scores(&rng, a, m.degree, rep % 2);
            random_scores(&rng, b, m.n_add, rep % 2);
            check_map_oracle(&g->factors[0], &c, seq_valid, &m, a, b);
        }
        configs_free(&c);
        concord_graph_free(g);
    }
}

/* ---- LP-MAP of mixed graphs against GLPK ---- */

/* A SEQUENCE or SEQUENCE_BUDGET sharing its state variables with logic
 * factors: AD3's LP-MAP value and bound against GLPK on the local
 * polytope (the sequence's polytope as the hull of its sequences). In
 * every third graph a fifth of the transitions are forbidden (-inf), and
 * the hull is that of the sequences that avoid them. */
static void sequences_in_mixed_graphs_match_glpk(void **state) {
    (void)state;
    test_rng rng = {909};
    int solved = 0, fractional = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 150; ++trial) {
        int length = 2 + rng_int(&rng, 3), states[MAX_LEN], forced = 0;
        for (int i = 0; i < length; ++i) {
            states[i] = 2 + rng_int(&rng, 2);
            forced += states[i] == 1;
        }
        bool budgeted = trial % 2;
        int budget = budgeted ? rng_int(&rng, length) : -1;
        seq_model m;
        model_init(&m, length, states, budget);
        double theta[64], b[512], b_given[512];
        for (int j = 0; j < m.degree; ++j) theta[j] = rng_normal(&rng);
        random_scores(&rng, b, m.n_add, false);
        for (int k = 0; k < m.n_add; ++k) {
            m.forbidden[k] = trial % 3 == 0 && rng_int(&rng, 5) == 0;
            b_given[k] = m.forbidden[k] ? -INFINITY : b[k];
            if (m.forbidden[k]) b[k] = 0.0; /* no allowed sequence uses it */
        }
        config_list c;
        configs_init(&c, m.degree, m.n_add);
        enumerate(&m, &c);
        if (c.count == 0) {
            configs_free(&c);
            continue;
        }
        int32_t vars[64], nst[MAX_LEN];
        for (int j = 0; j < m.degree; ++j) vars[j] = j;
        for (int i = 0; i < length; ++i) nst[i] = states[i];

        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, m.degree, theta, NULL), CONCORD_OK);
        if (budgeted)
            assert_int_equal(
                concord_add_sequence_budget(g, length, nst, vars, budget, b_given, NULL),
                CONCORD_OK);
        else
            assert_int_equal(concord_add_sequence(g, length, nst, vars, b_given, NULL),
                             CONCORD_OK);
        lp_ref *lp = lp_ref_new(m.degree, theta);
        lp_ref_add_configs(lp, &c, vars, b);
        add_random_logic(&rng, g, lp, m.degree);
        check_lp_map_against_glpk(g, lp, trial, &solved, &fractional, &worst);
        lp_ref_free(lp);
        configs_free(&c);
        concord_graph_free(g);
    }
    printf("sequences with logic factors: %d feasible graphs (%d fractional LP-MAP), worst "
           "|value - GLPK| %.2e\n",
           solved, fractional, worst);
    assert_true(solved >= 50);
}

/* ---- AD3's files ---- */

/* The one-factor sequence files, read by the test itself. */
typedef struct seq_file {
    int n_vars;
    double theta[128];
    int vars[128];
    seq_model m;
    double b[1024];
} seq_file;

static void read_seq_file(const char *path, bool budgeted, seq_file *sf) {
    char *text = read_whole_file(path, NULL);
    assert_non_null(text);
    char *save = NULL, *tok = strtok_r(text, " \t\n", &save);
    sf->n_vars = atoi(tok);
    assert_int_equal(atoi(strtok_r(NULL, " \t\n", &save)), 1);
    for (int i = 0; i < sf->n_vars; ++i) sf->theta[i] = strtod(strtok_r(NULL, " \t\n", &save), NULL);
    assert_string_equal(strtok_r(NULL, " \t\n", &save), budgeted ? "SEQUENCE_BUDGET" : "SEQUENCE");
    int degree = atoi(strtok_r(NULL, " \t\n", &save));
    for (int j = 0; j < degree; ++j) sf->vars[j] = atoi(strtok_r(NULL, " \t\n", &save)) - 1;
    int length = atoi(strtok_r(NULL, " \t\n", &save));
    int budget = budgeted ? atoi(strtok_r(NULL, " \t\n", &save)) : -1;
    int states[MAX_LEN];
    for (int i = 0; i < length; ++i) states[i] = atoi(strtok_r(NULL, " \t\n", &save));
    model_init(&sf->m, length, states, budget);
    assert_int_equal(sf->m.degree, degree);
    for (int k = 0; k < sf->m.n_add; ++k) sf->b[k] = strtod(strtok_r(NULL, " \t\n", &save), NULL);
    assert_null(strtok_r(NULL, " \t\n", &save));
    free(text);
}

/* Best state sequence by enumeration; returns its value, *unique when the
 * runner-up is at least 1e-9 below. */
static double brute_force(const seq_file *sf, int *best_s, bool *unique) {
    const seq_model *m = &sf->m;
    int s[MAX_LEN] = {0};
    top_two top = {-INFINITY, -INFINITY};
    for (;;) {
        if (m->budget < 0 || zeros(m, s) <= m->budget) {
            double x = 0.0;
            for (int i = 0; i < m->length; ++i) {
                x += sf->theta[sf->vars[m->link[i] + s[i]]];
                int prev = i == 0 ? 0 : s[i - 1];
                x += sf->b[m->block[i] + prev * m->states[i] + s[i]];
            }
            x += sf->b[m->block[m->length] + s[m->length - 1]];
            if (top_two_offer(&top, x)) memcpy(best_s, s, sizeof s);
        }
        if (!odometer_next(s, m->states, m->length)) break;
    }
    *unique = top.best - top.second > 1e-9;
    return top.best;
}

static void solve_file(const char *path, const char *name, bool budgeted) {
    seq_file *sf = calloc(1, sizeof *sf);
    assert_non_null(sf);
    read_seq_file(path, budgeted, sf);
    int best_s[MAX_LEN];
    bool unique;
    double expected = brute_force(sf, best_s, &unique);

    concord_graph **graphs = read_single_graph_file(path);
    concord_graph *g = graphs[0];
    assert_int_equal(concord_num_factors(g), 1);
    assert_int_equal(concord_num_additionals(g), sf->m.n_add);
    double *u = malloc((size_t)concord_num_variables(g) * sizeof *u);
    assert_non_null(u);
    concord_info info = solve_to_brute_force_optimum(g, name, expected, unique, u);
    if (unique) {
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        for (int i = 0; i < sf->m.length; ++i)
            for (int k = 0; k < sf->m.states[i]; ++k)
                assert_true(u[sf->vars[sf->m.link[i] + k]] == (k == best_s[i] ? 1.0 : 0.0));
    }
    free(u);
    concord_free_graphs(graphs, 1);
    free(sf);
}

static void ad3_sequence_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_file(shared_data_path_or_skip("ad3/sequence.fg"), "sequence.fg", false);
}

static void ad3_sequence_budget_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_file(shared_data_path_or_skip("ad3/sequence_budget.fg"), "sequence_budget.fg", true);
}

/* The repository's own files (tests/data/fg), of the same layout: 7
 * positions of 2 to 4 states whose indicators are listed in a shuffled
 * order of the file's variables. */
static void repository_sequence_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_file(test_data_path("fg/sequence.fg"), "tests/data/fg/sequence.fg", false);
}

static void repository_sequence_budget_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_file(test_data_path("fg/sequence_budget.fg"), "tests/data/fg/sequence_budget.fg", true);
}

/* The same with about 30% of the transitions forbidden (-inf in the file;
 * the brute force adds the -inf and so never picks them). */
static void forbidden_transitions_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    solve_file(test_data_path("fg/sequence_forbidden.fg"), "tests/data/fg/sequence_forbidden.fg",
               false);
    solve_file(test_data_path("fg/sequence_budget_forbidden.fg"),
               "tests/data/fg/sequence_budget_forbidden.fg", true);
}

/* ---- errors ---- */

static void malformed_sequences_are_rejected(void **state) {
    (void)state;
    /* 3 variables: 2 positions with 2 and 1 states -> 2 + 2 + 1 = 5 scores */
    const char *head = "3\n1\n0\n0\n0\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 1 0 0 0 0 0\n", head);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512] = "";
    assert_int_equal(concord_read_buffer(buf, strlen(buf), "t.fg", CONCORD_FORMAT_FG, &graphs,
                                         &count, error, sizeof error, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_num_additionals(graphs[0]), 5);
    concord_free_graphs(graphs, count);

    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 1 0 0 0 0\n", head);
    expect_read_error(buf, "t.fg:6:");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 1 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "expected 8 fields");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 2 0 0 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "add up to 4");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 -2 3 2 2 1 0 0 0 0 0\n", head);
    expect_read_error(buf, "cannot be negated");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 0 2 1\n", head);
    expect_read_error(buf, "sequence length");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 x 0 0 0 0 0\n", head);
    expect_read_error(buf, "state count");
    snprintf(buf, sizeof buf, "%sSEQUENCE 3 1 2 3 2 2 1 0 0 nan 0 0\n", head);
    expect_read_error(buf, "transition score");
    snprintf(buf, sizeof buf, "%sSEQUENCE_BUDGET 3 1 2 3 2 -1 2 1 0 0 0 0 0\n", head);
    expect_read_error(buf, "budget");
    /* the single-state position is always in state 0: budget 0 is infeasible */
    snprintf(buf, sizeof buf, "%sSEQUENCE_BUDGET 3 1 2 3 2 0 2 1 0 0 0 0 0\n", head);
    expect_read_error(buf, "t.fg:6: SEQUENCE_BUDGET factor: 1 positions have a single state");
    snprintf(buf, sizeof buf, "%sSEQUENCE_BUDGET 3 1 2 3 2 1 2 1 0 0 0 0 0\n", head);
    assert_int_equal(concord_read_buffer(buf, strlen(buf), "t.fg", CONCORD_FORMAT_FG, &graphs,
                                         &count, error, sizeof error, NULL, NULL),
                     CONCORD_OK);
    concord_free_graphs(graphs, count);

    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 4, NULL, NULL);
    int32_t vars[4] = {0, 1, 2, 3}, st[2] = {2, 2}, zero[2] = {2, 0}, dup[4] = {0, 1, 1, 2};
    assert_int_equal(concord_add_sequence(g, 0, st, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_sequence(g, 2, zero, vars, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "0 states"));
    assert_int_equal(concord_add_sequence(g, 2, st, dup, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_sequence_budget(g, 2, st, vars, -1, NULL, NULL), CONCORD_EINVAL);
    double bad[8] = {0, 0, 0, 0, 0, INFINITY, 0, 0};
    assert_int_equal(concord_add_sequence(g, 2, st, vars, bad, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 0);
    assert_int_equal(concord_add_sequence_budget(g, 2, st, vars, 0, NULL, NULL), CONCORD_OK);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sequence_oracle_and_qp_match_enumeration),
        cmocka_unit_test(sequence_budget_oracle_and_qp_match_enumeration),
        cmocka_unit_test(forbidden_transitions_match_enumeration),
        cmocka_unit_test(forbidden_transitions_with_budget_match_enumeration),
        cmocka_unit_test(budget_extremes),
        cmocka_unit_test(sequences_in_mixed_graphs_match_glpk),
        cmocka_unit_test(ad3_sequence_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(ad3_sequence_budget_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(repository_sequence_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(repository_sequence_budget_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(forbidden_transitions_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(malformed_sequences_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
