/*
 * The MATCHING factor against brute force. For each option set (partial,
 * every row, every column, perfect) and hundreds of random grids up to
 * 4 x 5 with integer (tied) or real scores of both signs: the test
 * enumerates every assignment of a column or nothing to each row, keeps
 * those its own checker accepts, and requires the MAP oracle and the
 * active-set QP to be optimal over exactly those (tests/support/
 * structure_qp.h). Also: argument checks, the .fg syntax, a file with
 * every option set (tests/data/fg/matching.fg), and LP-MAP of a
 * MATCHING alone and of the same problem written with XOR and ATMOSTONE
 * factors (the bipartite matching polytope is integral: both must find the
 * best matching).
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

enum { MAX_SIDE = 6, MAX_CELLS = MAX_SIDE * MAX_SIDE };

typedef struct grid {
    int rows, cols;
    unsigned flags;
} grid;

/* The test's own definition, from the header's words: every row and every
 * column used at most once; every row (EVERY_ROW) and/or every column
 * (EVERY_COL) exactly once. */
static bool is_matching(const uint8_t *x, const void *context) {
    const grid *s = context;
    int row_use[MAX_SIDE] = {0}, col_use[MAX_SIDE] = {0};
    for (int i = 0; i < s->rows; ++i)
        for (int j = 0; j < s->cols; ++j)
            if (x[i * s->cols + j]) row_use[i]++, col_use[j]++;
    for (int i = 0; i < s->rows; ++i) {
        if (row_use[i] > 1) return false;
        if ((s->flags & CONCORD_MATCHING_EVERY_ROW) && row_use[i] != 1) return false;
    }
    for (int j = 0; j < s->cols; ++j) {
        if (col_use[j] > 1) return false;
        if ((s->flags & CONCORD_MATCHING_EVERY_COL) && col_use[j] != 1) return false;
    }
    return true;
}

/* An odometer over (column or none) per row, filtered by is_matching. */
static void enumerate_matchings(const grid *s, structure_list *out) {
    int choice[MAX_SIDE] = {0}; /* 0: none, j+1: column j */
    uint8_t x[MAX_CELLS];
    structure_list_clear(out);
    for (;;) {
        memset(x, 0, sizeof x);
        for (int i = 0; i < s->rows; ++i)
            if (choice[i]) x[i * s->cols + choice[i] - 1] = 1;
        if (is_matching(x, s)) structure_list_push(out, x);
        int i = 0;
        while (i < s->rows && ++choice[i] == s->cols + 1) choice[i++] = 0;
        if (i == s->rows) break;
    }
}

/* A random shape the option set allows, up to 4 x 5 (or 5 x 4). */
static void random_grid(test_rng *rng, grid *s, unsigned flags) {
    s->flags = flags;
    for (;;) {
        s->rows = 1 + rng_int(rng, 5);
        s->cols = 1 + rng_int(rng, 5);
        if (s->rows * s->cols > 20) continue;
        if ((flags & CONCORD_MATCHING_EVERY_ROW) && s->rows > s->cols) continue;
        if ((flags & CONCORD_MATCHING_EVERY_COL) && s->cols > s->rows) continue;
        return;
    }
}

static void random_scores(test_rng *rng, double *a, int n, bool integers) {
    for (int i = 0; i < n; ++i)
        a[i] = integers ? (double)(rng_int(rng, 7) - 4) : 2.0 * rng_normal(rng) - 0.5;
}

static void run_variant(unsigned flags, int trials, uint64_t seed) {
    test_rng rng = {seed};
    structure_list all;
    structure_list_init(&all, 0);
    int fw = 0;
    for (int trial = 0; trial < trials; ++trial) {
        grid s;
        random_grid(&rng, &s, flags);
        const int n = s.rows * s.cols;
        all.dim = n;
        enumerate_matchings(&s, &all);
        assert_true(all.count > 0);
        concord_graph *g = concord_graph_new();
        int32_t vars[MAX_CELLS];
        /* the factor's links in a scrambled variable order */
        assert_int_equal(concord_add_variables(g, n, NULL, NULL), 0);
        for (int k = 0; k < n; ++k) vars[k] = n - 1 - k;
        assert_int_equal(concord_add_matching(g, s.rows, s.cols, vars, flags, NULL), CONCORD_OK);
        const factor *f = &g->factors[0];
        double a[MAX_CELLS], a2[MAX_CELLS], d[MAX_CELLS];
        random_scores(&rng, a, n, trial % 2 == 0);
        check_structured_map(f, a, &all, is_matching, &s);
        for (int k = 0; k < n; ++k) {
            d[k] = 0.5 + 1.5 * rng_uniform(&rng);
            a2[k] = a[k] + 0.3 * rng_normal(&rng);
        }
        bool compare = all.count <= 400;
        fw += compare;
        check_structured_qp(f, a, a2, d, &all, is_matching, &s, compare);
        concord_graph_free(g);
    }
    structure_list_free(&all);
    print_message("flags %u: %d grids checked (%d against Frank-Wolfe)\n", flags, trials, fw);
}

static void partial_matching_matches_brute_force(void **state) {
    (void)state;
    run_variant(0, 500, 51);
}

static void every_row_matching_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_MATCHING_EVERY_ROW, 500, 52);
}

static void every_col_matching_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_MATCHING_EVERY_COL, 500, 53);
}

static void perfect_matching_matches_brute_force(void **state) {
    (void)state;
    run_variant(CONCORD_MATCHING_PERFECT, 500, 54);
}

/* All scores negative: the best partial matching is empty; a perfect one
 * must still match everything. */
static void negative_scores_leave_rows_unmatched(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t vars[9];
    concord_add_variables(g, 9, NULL, NULL);
    for (int k = 0; k < 9; ++k) vars[k] = k;
    assert_int_equal(concord_add_matching(g, 3, 3, vars, 0, NULL), 0);
    assert_int_equal(concord_add_matching(g, 3, 3, vars, CONCORD_MATCHING_PERFECT, NULL), 0);
    double a[9], u[9], v[1], b[1] = {0.0};
    for (int k = 0; k < 9; ++k) a[k] = -1.0 - k;
    size_t b0 = factor_scratch_bytes(&g->factors[0]), b1 = factor_scratch_bytes(&g->factors[1]);
    void *scratch = malloc(b0 > b1 ? b0 : b1);
    assert_true(g->factors[0].ops->map(&g->factors[0], a, b, u, v, scratch) == 0.0);
    for (int k = 0; k < 9; ++k) assert_true(u[k] == 0.0);
    /* perfect: a[i][j] = -1 - 3i - j, so every permutation sums to -15 */
    assert_true(g->factors[1].ops->map(&g->factors[1], a, b, u, v, scratch) == -15.0);
    free(scratch);
    concord_graph_free(g);
}

static void bad_matching_arguments_are_rejected(void **state) {
    (void)state;
    concord_graph *g = concord_graph_new();
    int32_t vars[12];
    concord_add_variables(g, 12, NULL, NULL);
    for (int k = 0; k < 12; ++k) vars[k] = k;
    assert_int_equal(concord_add_matching(NULL, 3, 4, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_matching(g, 0, 4, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_matching(g, 3, -1, vars, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_matching(g, 3, 4, vars, 4, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "flags"));
    assert_int_equal(concord_add_matching(g, 3, 4, NULL, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_matching(g, 4, 3, vars, CONCORD_MATCHING_EVERY_ROW, NULL),
                     CONCORD_EINFEASIBLE);
    assert_int_equal(concord_add_matching(g, 3, 4, vars, CONCORD_MATCHING_EVERY_COL, NULL),
                     CONCORD_EINFEASIBLE);
    assert_int_equal(concord_add_matching(g, 3, 4, vars, CONCORD_MATCHING_PERFECT, NULL),
                     CONCORD_EINFEASIBLE);
    int32_t repeated[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10};
    assert_int_equal(concord_add_matching(g, 3, 4, repeated, 0, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_num_factors(g), 0);
    int32_t id = -1;
    assert_int_equal(concord_add_matching(g, 3, 4, vars, CONCORD_MATCHING_EVERY_ROW, &id), 0);
    assert_int_equal(id, 0);
    concord_graph_free(g);
}

/* LP-MAP of a MATCHING alone, and of the same constraints as XOR per row
 * and ATMOSTONE per column: both polytopes are integral, so both give the
 * best matching. */
static void matching_and_its_lp_formulation_agree(void **state) {
    (void)state;
    test_rng rng = {61};
    structure_list all;
    structure_list_init(&all, 0);
    for (int trial = 0; trial < 40; ++trial) {
        grid s = {2 + rng_int(&rng, 3), 0, CONCORD_MATCHING_EVERY_ROW};
        s.cols = s.rows + rng_int(&rng, 2);
        const int n = s.rows * s.cols;
        all.dim = n;
        enumerate_matchings(&s, &all);
        double theta[MAX_CELLS], best = 0.0;
        random_scores(&rng, theta, n, false);
        structure_best(&all, theta, &best);
        int32_t vars[MAX_CELLS];
        for (int k = 0; k < n; ++k) vars[k] = k;

        concord_graph *g = concord_graph_new();
        concord_add_variables(g, n, theta, NULL);
        assert_int_equal(concord_add_matching(g, s.rows, s.cols, vars, s.flags, NULL), 0);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(g);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        assert_true(info.integral);
        assert_true(fabs(info.value - best) <= 1e-9 * (1.0 + fabs(best)));
        concord_solver_free(solver);
        concord_graph_free(g);

        g = concord_graph_new();
        concord_add_variables(g, n, theta, NULL);
        for (int i = 0; i < s.rows; ++i)
            assert_int_equal(concord_add_logic(g, CONCORD_XOR, s.cols, vars + i * s.cols, NULL,
                                               NULL),
                             0);
        for (int j = 0; j < s.cols; ++j) {
            int32_t col[MAX_SIDE];
            for (int i = 0; i < s.rows; ++i) col[i] = i * s.cols + j;
            assert_int_equal(concord_add_logic(g, CONCORD_ATMOSTONE, s.rows, col, NULL, NULL), 0);
        }
        concord_settings set;
        concord_default_settings(&set);
        set.max_iter = 50000;
        solver = new_solver_or_fail(g);
        assert_int_equal(concord_solver_map(solver, &set, &info), CONCORD_OK);
        assert_true(fabs(info.value - best) <= 1e-4 * (1.0 + fabs(best)));
        concord_solver_free(solver);
        concord_graph_free(g);
    }
    structure_list_free(&all);
}

/* 2 x 3 grid: row 0 prefers column 2, row 1 column 2 more strongly. */
static const char *const grid_vars = "6\n1\n0.5\n-1\n2\n-1\n0.2\n3\n";

static void fg_matching_reads_with_options(void **state) {
    (void)state;
    struct {
        const char *options;
        double expect[6];
    } cases[] = {
        {"", {1, 0, 0, 0, 0, 1}},
        {" EVERY_ROW", {1, 0, 0, 0, 0, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char text[256], error[256];
        concord_graph **graphs;
        size_t count;
        snprintf(text, sizeof text, "%sMATCHING 6 1 2 3 4 5 6 2 3%s\n", grid_vars,
                 cases[c].options);
        assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
        assert_ptr_equal(graphs[0]->factors[0].ops, &factor_matching_ops);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(graphs[0]);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        const double *u = concord_solver_variables(solver);
        for (int k = 0; k < 6; ++k) assert_true(u[k] == cases[c].expect[k]);
        concord_solver_free(solver);
        concord_free_graphs(graphs, count);
    }
    /* 3 x 2 written as the transpose, every column matched */
    char text[256], error[256];
    concord_graph **graphs;
    size_t count;
    snprintf(text, sizeof text, "6\n1\n0.5\n-1\n-1\n0.2\n2\n3\nMATCHING 6 1 2 3 4 5 6 3 2 EVERY_COL\n");
    assert_int_equal(read_fg(text, &graphs, &count, error, sizeof error), CONCORD_OK);
    concord_info info;
    concord_solver *solver = new_solver_or_fail(graphs[0]);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    const double *u = concord_solver_variables(solver);
    double expect[6] = {1, 0, 0, 0, 0, 1};
    for (int k = 0; k < 6; ++k) assert_true(u[k] == expect[k]);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
}

static void fg_matching_errors_name_the_line(void **state) {
    (void)state;
    static const char *const bad[] = {
        "MATCHING 6 1 2 3 4 5 6 2\n",                 /* no column count */
        "MATCHING 6 1 2 3 4 5 6 2 2\n",               /* 2 x 2 is not 6 */
        "MATCHING 6 1 2 3 4 5 6 2 3 SOME\n",          /* unknown option */
        "MATCHING 6 1 2 3 4 5 6 2 3 PERFECT\n",       /* not square */
        "MATCHING 6 1 2 3 4 5 6 2 3 EVERY_ROW EVERY_ROW\n",
        "MATCHING 6 1 2 3 4 5 6 2 3 EVERY_ROW EVERY_COL\n",
        "MATCHING 6 1 2 3 4 5 -6 2 3\n",              /* negated link */
        "MATCHING 6 1 2 3 4 5 5 2 3\n",               /* repeated variable */
        "MATCHING 6 1 2 3 4 5 6 0 3\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        char text[256], error[256];
        concord_graph **graphs;
        size_t count;
        snprintf(text, sizeof text, "%s%s", grid_vars, bad[k]);
        int rc = read_fg(text, &graphs, &count, error, sizeof error);
        assert_true(rc == CONCORD_EPARSE || rc == CONCORD_EINVAL);
        assert_non_null(strstr(error, "test.fg:9"));
    }
}

/* tests/data/fg/matching.fg: one MATCHING per option set (EVERY_ROW 2 x 3,
 * EVERY_COL 3 x 2, PERFECT 3 x 3, none 3 x 4; links in a shuffled
 * variable order), read here line by line; LP-MAP over each (a single
 * matching factor: an integral polytope) is the best of the matchings the
 * test enumerates, and the solution is such a matching. */
static void matching_file_solves_every_option_to_brute_force(void **state) {
    (void)state;
    const char *path = test_data_path("fg/matching.fg");
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
        double theta[MAX_CELLS], a[MAX_CELLS];
        int link_var[MAX_CELLS];
        char *save_words;
        const int degree = read_one_factor_graph(gi ? NULL : text, &save, "MATCHING", MAX_CELLS,
                                                 theta, link_var, &save_words);
        grid s = {0, 0, 0};
        s.rows = atoi(strtok_r(NULL, " ", &save_words));
        s.cols = atoi(strtok_r(NULL, " ", &save_words));
        assert_true(s.rows <= MAX_SIDE && s.cols <= MAX_SIDE && s.rows * s.cols == degree);
        const char *option = strtok_r(NULL, " ", &save_words);
        if (!option) s.flags = 0;
        else if (!strcmp(option, "EVERY_ROW")) s.flags = CONCORD_MATCHING_EVERY_ROW;
        else if (!strcmp(option, "EVERY_COL")) s.flags = CONCORD_MATCHING_EVERY_COL;
        else if (!strcmp(option, "PERFECT")) s.flags = CONCORD_MATCHING_PERFECT;
        else fail_msg("unexpected option %s", option);
        assert_null(strtok_r(NULL, " ", &save_words));
        seen |= 1u << s.flags;
        for (int k = 0; k < degree; ++k) a[k] = theta[link_var[k]];
        all.dim = degree;
        enumerate_matchings(&s, &all);
        double best = 0.0;
        assert_true(structure_best(&all, a, &best) >= 0);
        concord_info info;
        concord_solver *solver = new_solver_or_fail(graphs[gi]);
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        print_message("matching.fg graph %zu (%d x %d, flags %u): %d matchings, best %.10f; "
                      "concord %s, value %.10f, upper bound %.10f\n",
                      gi + 1, s.rows, s.cols, s.flags, all.count, best,
                      concord_status_name(info.status), info.value, info.upper_bound);
        assert_true(info.integral);
        assert_true(fabs(info.value - best) <= 1e-9 * (1.0 + fabs(best)));
        assert_true(fabs(info.upper_bound - best) <= 1e-6 * (1.0 + fabs(best)));
        const double *u = concord_solver_variables(solver);
        uint8_t x[MAX_CELLS];
        double at = 0.0;
        for (int k = 0; k < degree; ++k) {
            x[k] = u[link_var[k]] == 1.0;
            at += x[k] * a[k];
        }
        assert_true(is_matching(x, &s));
        assert_true(fabs(at - best) <= 1e-9 * (1.0 + fabs(best)));
        concord_solver_free(solver);
    }
    /* the four option sets: none, EVERY_ROW, EVERY_COL, PERFECT */
    assert_int_equal(seen, 1u << 0 | 1u << CONCORD_MATCHING_EVERY_ROW |
                               1u << CONCORD_MATCHING_EVERY_COL | 1u << CONCORD_MATCHING_PERFECT);
    structure_list_free(&all);
    concord_free_graphs(graphs, count);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(partial_matching_matches_brute_force),
        cmocka_unit_test(every_row_matching_matches_brute_force),
        cmocka_unit_test(every_col_matching_matches_brute_force),
        cmocka_unit_test(perfect_matching_matches_brute_force),
        cmocka_unit_test(negative_scores_leave_rows_unmatched),
        cmocka_unit_test(bad_matching_arguments_are_rejected),
        cmocka_unit_test(matching_and_its_lp_formulation_agree),
        cmocka_unit_test(fg_matching_reads_with_options),
        cmocka_unit_test(fg_matching_errors_name_the_line),
        cmocka_unit_test(matching_file_solves_every_option_to_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
