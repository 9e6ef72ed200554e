/*
 * HEAD_AUTOMATON and GRANDPARENT_HEAD_AUTOMATON against their documented
 * meaning (concord.h): the test enumerates every modifier subset (and
 * grandparent) of small random automata, with its own table of sibling
 * pairs, and checks the oracles (best score, ties, negative scores) and the
 * active-set QP built on them (structured_check.h). Parser files
 * (the repository's tests/data/fg/parser.fg, and AD3's parsing01.fg and
 * parsing02.fg from ../shared/data, skipped when absent) also hold an
 * ARBORESCENCE factor: to look at the automata alone the test drops that
 * line (test_tree.c checks the tree alone and the whole graphs), loads the
 * head automata, compares their structure with its own reading of the
 * lines, checks the oracles of the smaller ones against enumeration with
 * the file's scores, and runs AD3 on the rest; the repository's parser is
 * also solved whole against GLPK. Malformed lines are rejected with
 * messages.
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

enum { MAX_MOD = 14, MAX_GP = 64 };

/* The test's model of an automaton: G grandparent links (0 for the plain
 * one), then n modifier links; outputs: G x n grandparent pairs, then the
 * sibling pairs (m, s), 0 <= m < s <= n+1, by m then s. */
typedef struct automaton {
    int G, n;
    int pair[MAX_MOD + 2][MAX_MOD + 2]; /* output index of sibling pair (m, s) */
    int degree, n_add;
} automaton;

static void automaton_init(automaton *t, int G, int n) {
    t->G = G;
    t->n = n;
    t->degree = G + n;
    t->n_add = G * n;
    for (int m = 0; m <= n; ++m)
        for (int s = m + 1; s <= n + 1; ++s) t->pair[m][s] = t->n_add++;
}

/* The configuration of grandparent g (ignored when G = 0) and the
 * modifiers set in `mods` (bit m-1 for modifier m). */
static void encode(const automaton *t, int g, unsigned mods, double *u, double *v) {
    for (int j = 0; j < t->degree; ++j) u[j] = 0.0;
    for (int k = 0; k < t->n_add; ++k) v[k] = 0.0;
    if (t->G) u[g] = 1.0;
    int prev = 0;
    for (int m = 1; m <= t->n; ++m) {
        if (!(mods >> (m - 1) & 1u)) continue;
        u[t->G + m - 1] = 1.0;
        if (t->G) v[g * t->n + m - 1] = 1.0;
        v[t->pair[prev][m]] = 1.0;
        prev = m;
    }
    v[t->pair[prev][t->n + 1]] = 1.0;
}

/* Allowed: 0/1 links, exactly one grandparent, and v exactly the pairs
 * and grandparent outputs of the chosen modifiers. */
static bool automaton_valid(const void *ctx, const double *u, const double *v) {
    const automaton *t = ctx;
    int g = -1, grandparents = 0;
    unsigned mods = 0;
    for (int j = 0; j < t->degree; ++j) {
        if (u[j] != 0.0 && u[j] != 1.0) return false;
        if (u[j] == 0.0) continue;
        if (j < t->G) g = j, ++grandparents;
        else mods |= 1u << (j - t->G);
    }
    if (t->G && grandparents != 1) return false;
    double eu[MAX_GP + MAX_MOD], ev[MAX_GP * MAX_MOD + (MAX_MOD + 2) * (MAX_MOD + 3) / 2];
    encode(t, g, mods, eu, ev);
    return memcmp(v, ev, (size_t)t->n_add * sizeof(double)) == 0;
}

static void enumerate(const automaton *t, config_list *c) {
    configs_clear(c);
    for (int g = 0; g < (t->G ? t->G : 1); ++g)
        for (unsigned mods = 0; mods < 1u << t->n; ++mods) {
            double *x = configs_push(c);
            encode(t, g, mods, x, x + t->degree);
        }
}

static const factor *add_automaton(concord_graph *g, const automaton *t) {
    int32_t vars[MAX_GP + MAX_MOD], id = -1;
    assert_int_equal(concord_add_variables(g, t->degree, NULL, NULL), CONCORD_OK);
    for (int j = 0; j < t->degree; ++j) vars[j] = t->degree - 1 - j; /* any order */
    if (t->G)
        assert_int_equal(concord_add_grandparent_head_automaton(g, t->G, t->n, vars, NULL, &id),
                         CONCORD_OK);
    else
        assert_int_equal(concord_add_head_automaton(g, t->n, t->n ? vars : NULL, NULL, &id),
                         CONCORD_OK);
    assert_int_equal(concord_num_additionals(g), t->n_add);
    return &g->factors[id];
}

static void run_random(bool grandparents) {
    test_rng rng = {grandparents ? 404u : 303u};
    config_list c;
    qp_totals totals = {0};
    for (int trial = 0; trial < 600; ++trial) {
        automaton t;
        automaton_init(&t, grandparents ? 1 + rng_int(&rng, 4) : 0, rng_int(&rng, 7));
        configs_init(&c, t.degree, t.n_add);
        enumerate(&t, &c);
        concord_graph *g = concord_graph_new();
        assert_non_null(g);
        const factor *f = add_automaton(g, &t);
        check_oracle_and_qp(&rng, f, &c, automaton_valid, &t, trial % 2 == 0, &totals);
        if (trial % 3 == 0) /* and with outputs forbidden (-inf) */
            check_with_forbidden_outputs(&rng, f, &c, automaton_valid, &t, trial % 2 == 0,
                                         &totals);
        configs_free(&c);
        concord_graph_free(g);
    }
    print_qp_totals(grandparents ? "GRANDPARENT_HEAD_AUTOMATON" : "HEAD_AUTOMATON", 600, &totals);
}

static void head_automaton_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_random(false);
}

static void grandparent_head_automaton_oracle_and_qp_match_enumeration(void **state) {
    (void)state;
    run_random(true);
}

/* ---- LP-MAP of small second-order parsers against GLPK ---- */

/* A turbo parser without the tree constraint on a sentence of w words:
 * arcs h -> m (h = 0..w, the root 0, m = 1..w, h != m); an XOR per word
 * over its heads; per head and side a head automaton over the arcs to the
 * words on that side, nearest first, with the arcs into the head as its
 * grandparents (plain automata for the root, whose left side is empty and
 * so gets a degree-0 automaton). AD3's LP-MAP value and bound against
 * GLPK on the local polytope (each automaton's polytope as the hull of its
 * configurations). */
static void small_parsers_match_glpk(void **state) {
    (void)state;
    test_rng rng = {808};
    int fractional = 0, total = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 60; ++trial) {
        const int w = 2 + rng_int(&rng, 2);
        int arc[5][5], n_arcs = 0;
        for (int h = 0; h <= w; ++h)
            for (int m = 1; m <= w; ++m) arc[h][m] = h == m ? -1 : n_arcs++;
        double theta[32], b[256];
        for (int j = 0; j < n_arcs; ++j) theta[j] = rng_normal(&rng);
        concord_graph *g = concord_graph_new();
        assert_int_equal(concord_add_variables(g, n_arcs, theta, NULL), CONCORD_OK);
        lp_ref *lp = lp_ref_new(n_arcs, theta);
        for (int m = 1; m <= w; ++m) {
            int32_t heads[8], k = 0;
            for (int h = 0; h <= w; ++h)
                if (h != m) heads[k++] = arc[h][m];
            assert_int_equal(concord_add_logic(g, CONCORD_XOR, k, heads, NULL, NULL), CONCORD_OK);
            lp_ref_add_sum(lp, k, heads, 1.0, 1.0);
        }
        for (int h = 0; h <= w; ++h)
            for (int side = 0; side < 2; ++side) {
                int32_t vars[16];
                int G = 0, n = 0;
                if (h > 0)
                    for (int gp = 0; gp <= w; ++gp)
                        if (gp != h) vars[G++] = arc[gp][h];
                if (side == 0)
                    for (int m = h + 1; m <= w; ++m) vars[G + n++] = arc[h][m];
                else
                    for (int m = h - 1; m >= 1; --m) vars[G + n++] = arc[h][m];
                automaton t;
                automaton_init(&t, G, n);
                random_scores(&rng, b, t.n_add, false);
                if (G)
                    assert_int_equal(
                        concord_add_grandparent_head_automaton(g, G, n, vars, b, NULL),
                        CONCORD_OK);
                else
                    assert_int_equal(concord_add_head_automaton(g, n, vars, b, NULL), CONCORD_OK);
                config_list c;
                configs_init(&c, t.degree, t.n_add);
                enumerate(&t, &c);
                lp_ref_add_configs(lp, &c, vars, b);
                configs_free(&c);
            }
        bool feasible = check_lp_map_against_glpk(g, lp, trial, &total, &fractional, &worst);
        assert_true(feasible);
        lp_ref_free(lp);
        concord_graph_free(g);
    }
    printf("small parsers (XOR heads + head automata): %d graphs (%d fractional LP-MAP), worst "
           "|value - GLPK| %.2e\n",
           total, fractional, worst);
}

/* ---- AD3's parsing files, without their ARBORESCENCE line ---- */

/* Splits text into lines in place. */
static int split_lines(char *text, char **lines, int cap) {
    int n = 0;
    for (char *p = text; *p && n < cap;) {
        lines[n++] = p;
        char *e = strchr(p, '\n');
        if (!e) break;
        *e = '\0';
        p = e + 1;
    }
    return n;
}

typedef struct ha_line {
    int G, n; /* G = 0: HEAD_AUTOMATON */
} ha_line;

static void parsing_file(const char *path, const char *name, int expect_automata) {
    char *text = read_whole_file_or_fail(path, NULL);
    const size_t size = strlen(text);
    enum { CAP = 4096 };
    char **lines = malloc(CAP * sizeof *lines);
    int n_lines = split_lines(text, lines, CAP);
    int n_vars = atoi(lines[0]), n_factors = atoi(lines[1]);
    assert_true(2 + n_vars + n_factors <= n_lines);
    double *theta = malloc((size_t)n_vars * sizeof *theta);
    for (int i = 0; i < n_vars; ++i) theta[i] = strtod(lines[2 + i], NULL);

    /* the stripped file and the test's reading of each automaton line */
    size_t cap = size + 1, len = 0; /* the kept lines are part of the file */
    char *out = malloc(cap);
    ha_line *info = calloc((size_t)n_factors, sizeof *info);
    int kept = 0, total_add = 0;
    for (int f = 0; f < n_factors; ++f) {
        const char *line = lines[2 + n_vars + f];
        if (strncmp(line, "ARBORESCENCE", 12) == 0) continue;
        char type[64];
        int degree, used;
        assert_int_equal(sscanf(line, "%63s %d%n", type, &degree, &used), 2);
        ha_line h = {0, degree};
        if (strcmp(type, "GRANDPARENT_HEAD_AUTOMATON") == 0) {
            const char *p = line + used;
            for (int j = 0; j <= degree; ++j) { /* skip the indices, read G */
                int x, k;
                assert_int_equal(sscanf(p, "%d%n", &x, &k), 1);
                p += k;
                if (j == degree) h.G = x;
            }
            h.n = degree - h.G;
        } else {
            assert_string_equal(type, "HEAD_AUTOMATON");
        }
        info[kept++] = h;
        total_add += h.G * h.n + (h.n + 1) * (h.n + 2) / 2;
        len += (size_t)snprintf(out + len, cap - len, "%s\n", line);
    }
    assert_int_equal(kept, expect_automata);
    /* header: counts and variable scores */
    size_t head_cap = (size_t)n_vars * 32 + 64, head_len = 0;
    char *buf = malloc(head_cap + len + 2);
    head_len += (size_t)snprintf(buf, head_cap, "%d\n%d\n", n_vars, kept);
    for (int i = 0; i < n_vars; ++i)
        head_len += (size_t)snprintf(buf + head_len, head_cap - head_len, "%s\n", lines[2 + i]);
    memcpy(buf + head_len, out, len);
    buf[head_len + len] = '\0';

    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    int rc = concord_read_buffer(buf, head_len + len, name, CONCORD_FORMAT_FG, &graphs, &count,
                                 error, sizeof error, NULL, NULL);
    if (rc) fail_msg("%s", error);
    assert_int_equal(count, 1);
    concord_graph *g = graphs[0];
    assert_int_equal(concord_num_factors(g), kept);
    assert_int_equal(concord_num_additionals(g), total_add);

    /* structure of every factor; oracles of the smaller ones by enumeration */
    int checked = 0, empty = 0;
    double a[MAX_GP + MAX_MOD];
    for (int f = 0; f < kept; ++f) {
        const factor *fa = &g->factors[f];
        assert_string_equal(fa->ops->name,
                            info[f].G ? "GRANDPARENT_HEAD_AUTOMATON" : "HEAD_AUTOMATON");
        assert_int_equal(fa->degree, info[f].G + info[f].n);
        assert_int_equal(fa->n_add, info[f].G * info[f].n + (info[f].n + 1) * (info[f].n + 2) / 2);
        empty += fa->degree == 0;
        if (info[f].n > 10 || info[f].G > MAX_GP || (info[f].G ? info[f].G : 1) << info[f].n > 2048)
            continue;
        automaton t;
        automaton_init(&t, info[f].G, info[f].n);
        config_list c;
        configs_init(&c, t.degree, t.n_add);
        enumerate(&t, &c);
        for (int j = 0; j < fa->degree; ++j) a[j] = theta[g->link_var[fa->link_begin + j]];
        check_map_oracle(fa, &c, automaton_valid, &t, a, concord_additional_scores(g) + fa->add_begin);
        configs_free(&c);
        ++checked;
    }
    /* Without the tree the relaxation is fractional; the adaptive penalty
     * oscillates on parsing01 (residuals stall near 1e-4), a fixed one
     * converges. */
    concord_settings s;
    concord_default_settings(&s);
    s.adapt_eta = false;
    concord_info inf;
    concord_solver *solver = new_solver_or_fail(g);
    rc = concord_solver_map(solver, &s, &inf);
    concord_solver_free(solver);
    assert_int_equal(rc, CONCORD_OK);
    assert_true(inf.value <= inf.upper_bound + 1e-5 * (1.0 + fabs(inf.upper_bound)));
    printf("%s without ARBORESCENCE: %d head automata (%d of degree 0), %d additionals; %d "
           "oracles checked by enumeration; AD3: %s, value %.6f, upper bound %.6f, %d "
           "iterations\n",
           name, kept, empty, total_add, checked, concord_status_name(inf.status), inf.value,
           inf.upper_bound, inf.iterations);
    concord_free_graphs(graphs, count);
    free(buf);
    free(out);
    free(info);
    free(theta);
    free(lines);
    free(text);
}

static void ad3_parsing01_head_automata_load_and_solve(void **state) {
    (void)state;
    parsing_file(shared_data_path_or_skip("ad3/parsing01.fg"), "parsing01.fg", 126);
}

static void ad3_parsing02_head_automata_load_and_solve(void **state) {
    (void)state;
    parsing_file(shared_data_path_or_skip("ad3/parsing02.fg"), "parsing02.fg", 64);
}

/* The repository's parser of the same layout (tests/data/fg/parser.fg: 5
 * tokens; for the root a HEAD_AUTOMATON per side, one of degree 0; for
 * every token a GRANDPARENT_HEAD_AUTOMATON per side, some without
 * modifiers). */
static void repository_parser_head_automata_load_and_solve(void **state) {
    (void)state;
    parsing_file(test_data_path("fg/parser.fg"), "tests/data/fg/parser.fg", 12);
}

/* ---- the repository's parser whole, against GLPK ---- */

/* Every dependency tree over the ARBORESCENCE line's arcs (k-th link: arc
 * head[k] -> mod[k]; tokens 1..length-1, root 0): one incoming arc per
 * token, every token reaching the root. */
static void enumerate_arborescences(int length, int n_arcs, const int *head, const int *mod,
                                    config_list *c) {
    enum { MAX_TOKENS = 8, MAX_IN = 8 };
    int incoming[MAX_TOKENS][MAX_IN], count[MAX_TOKENS] = {0}, choice[MAX_TOKENS] = {0};
    assert_true(length <= MAX_TOKENS);
    for (int k = 0; k < n_arcs; ++k) {
        assert_true(count[mod[k]] < MAX_IN);
        incoming[mod[k]][count[mod[k]]++] = k;
    }
    for (int m = 1; m < length; ++m) assert_true(count[m] > 0);
    for (;;) {
        int h[MAX_TOKENS];
        for (int m = 1; m < length; ++m) h[m] = head[incoming[m][choice[m]]];
        bool tree = true;
        for (int m = 1; m < length && tree; ++m) {
            int y = m, steps = 0;
            while (y != 0 && steps++ < length) y = h[y];
            tree = y == 0;
        }
        if (tree) {
            double *x = configs_push(c);
            for (int m = 1; m < length; ++m) x[incoming[m][choice[m]]] = 1.0;
        }
        int m = 1;
        while (m < length && ++choice[m] == count[m]) choice[m++] = 0;
        if (m == length) break;
    }
}

/* tests/data/fg/parser.fg whole (its tree and its 12 automata), read here
 * line by line: concord's LP-MAP value and bound against GLPK on the local
 * polytope, the tree's polytope the hull of the trees enumerated over its
 * arcs, each automaton's the hull of its configurations with the file's
 * scores. */
static void repository_parser_matches_glpk(void **state) {
    (void)state;
    const char *path = test_data_path("fg/parser.fg");
    char *text = read_whole_file_or_fail(path, NULL), *save = NULL;
    int n = atoi(strtok_r(text, " \n", &save)), m = atoi(strtok_r(NULL, " \n", &save));
    enum { MAX_LINKS = 64 };
    double theta[MAX_LINKS], b[MAX_GP * MAX_MOD + (MAX_MOD + 2) * (MAX_MOD + 3) / 2];
    assert_true(n <= MAX_LINKS);
    for (int i = 0; i < n; ++i) theta[i] = strtod(strtok_r(NULL, " \n", &save), NULL);
    lp_ref *lp = lp_ref_new(n, theta);
    int trees = 0, automata = 0;
    for (int f = 0; f < m; ++f) {
        char type[32];
        snprintf(type, sizeof type, "%s", strtok_r(NULL, " \n", &save));
        int degree = atoi(strtok_r(NULL, " \n", &save));
        int32_t vars[MAX_LINKS];
        assert_true(degree <= MAX_LINKS);
        for (int j = 0; j < degree; ++j) vars[j] = atoi(strtok_r(NULL, " \n", &save)) - 1;
        config_list c;
        if (!strcmp(type, "ARBORESCENCE")) {
            int length = atoi(strtok_r(NULL, " \n", &save)), head[MAX_LINKS], mod[MAX_LINKS];
            for (int k = 0; k < degree; ++k) {
                head[k] = atoi(strtok_r(NULL, " \n", &save));
                mod[k] = atoi(strtok_r(NULL, " \n", &save));
            }
            configs_init(&c, degree, 0);
            enumerate_arborescences(length, degree, head, mod, &c);
            print_message("parser.fg: %d trees over %d arcs\n", c.count, degree);
            lp_ref_add_configs(lp, &c, vars, NULL);
            ++trees;
        } else {
            int G = 0;
            if (!strcmp(type, "GRANDPARENT_HEAD_AUTOMATON")) G = atoi(strtok_r(NULL, " \n", &save));
            else assert_string_equal(type, "HEAD_AUTOMATON");
            assert_true(G <= MAX_GP && degree - G <= MAX_MOD);
            automaton t;
            automaton_init(&t, G, degree - G);
            for (int k = 0; k < t.n_add; ++k) b[k] = strtod(strtok_r(NULL, " \n", &save), NULL);
            configs_init(&c, t.degree, t.n_add);
            enumerate(&t, &c);
            lp_ref_add_configs(lp, &c, vars, b);
            ++automata;
        }
        configs_free(&c);
    }
    assert_null(strtok_r(NULL, " \n", &save));
    free(text);
    assert_int_equal(trees, 1);
    assert_int_equal(automata, 12);
    concord_graph **graphs = read_single_graph_file(path);
    int solved = 0, fractional = 0;
    double worst = 0.0;
    assert_true(check_lp_map_against_glpk(graphs[0], lp, 0, &solved, &fractional, &worst));
    print_message("parser.fg: LP-MAP %s, |value - GLPK| %.2e\n",
                  fractional ? "fractional" : "integral", worst);
    lp_ref_free(lp);
    concord_free_graphs(graphs, 1);
}

/* ---- errors ---- */

static void malformed_automata_are_rejected(void **state) {
    (void)state;
    const char *head = "3\n1\n0\n0\n0\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 0 1.5\n", head);
    expect_read_ok(buf, 1);
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 2 1 2 0 0 0 0 0 0\n", head);
    expect_read_ok(buf, 6);
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 3 1 2 3 1 0 0 0 0 0 0 0 0\n", head);
    expect_read_ok(buf, 2 + 6);
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 1 3 1 0.5\n", head);
    expect_read_ok(buf, 1);

    /* -inf forbids a sibling pair; forbidding every chain is infeasible */
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 2 1 2 0 -inf 0 0 -inf 0\n", head);
    expect_read_ok(buf, 6);
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 1 1 -inf -inf -inf\n", head);
    expect_read_error(buf, "t.fg:6: HEAD_AUTOMATON factor: every configuration uses a forbidden");
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 1 1 0 inf 0\n", head);
    expect_read_error(buf, "a score");
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 2 1 2 0 0 0 0 0\n", head);
    expect_read_error(buf, "t.fg:6: HEAD_AUTOMATON factor of degree 2: expected 6 fields");
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 0\n", head);
    expect_read_error(buf, "expected 1 field");
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 2 -1 2 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "cannot be negated");
    snprintf(buf, sizeof buf, "%sHEAD_AUTOMATON 2 1 1 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "more than once");
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 3 1 2 3 0 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "number of grandparents");
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 3 1 2 3 4 0 0\n", head);
    expect_read_error(buf, "number of grandparents");
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 3 1 2 3 1 0 0 0 0 0 0 0\n", head);
    expect_read_error(buf, "expected 9 fields");
    snprintf(buf, sizeof buf, "%sGRANDPARENT_HEAD_AUTOMATON 0 1\n", head);
    expect_read_error(buf, "no variables");

    concord_graph *g = concord_graph_new();
    concord_add_variables(g, 4, NULL, NULL);
    int32_t vars[4] = {0, 1, 2, 3};
    assert_int_equal(concord_add_head_automaton(g, -1, vars, NULL, NULL), CONCORD_EINVAL);
    assert_int_equal(concord_add_grandparent_head_automaton(g, 0, 2, vars, NULL, NULL),
                     CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "grandparents"));
    vars[3] = 9;
    assert_int_equal(concord_add_head_automaton(g, 4, vars, NULL, NULL), CONCORD_EINVAL);
    assert_non_null(strstr(concord_last_error(g), "out of range"));
    assert_int_equal(concord_num_factors(g), 0);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_automaton_oracle_and_qp_match_enumeration),
        cmocka_unit_test(grandparent_head_automaton_oracle_and_qp_match_enumeration),
        cmocka_unit_test(small_parsers_match_glpk),
        cmocka_unit_test(ad3_parsing01_head_automata_load_and_solve),
        cmocka_unit_test(ad3_parsing02_head_automata_load_and_solve),
        cmocka_unit_test(repository_parser_head_automata_load_and_solve),
        cmocka_unit_test(repository_parser_matches_glpk),
        cmocka_unit_test(malformed_automata_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
