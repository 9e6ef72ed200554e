/*
 * The structured graph generators of bench/gen/structured_gen.h against
 * their documentation. The test reads each generated text with the
 * library's reader and also splits the tree and constraint lines itself;
 * from its own reading of the ARBORESCENCE arcs it derives what every
 * automaton's links and outputs must be, checks that each word has its
 * candidate heads (one head, the gold one, plus the nearest others) and
 * that a tree exists (every word reachable from the root). Sequence
 * graphs: the factors' links decode to the documented (sequence, position,
 * state) patterns, and on tiny graphs enumeration finds a labelling that
 * satisfies every ATMOSTONE, BUDGET and OR. Also: the same seed gives the
 * same text, another seed another text, and bad sizes write nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "concord.h"
#include "structured_gen.h"
#include "testutil.h"

/* The generated text of spec (NUL-terminated, malloc'd), or NULL when the
 * generator refuses; *size its length. */
static char *generate(const gen_spec *spec, size_t *size) {
    char *text = NULL;
    FILE *out = open_memstream(&text, size);
    assert_non_null(out);
    int rc = gen_write_fg(out, spec);
    assert_int_equal(fclose(out), 0);
    if (rc != 0) {
        assert_int_equal(rc, -1);
        assert_int_equal(*size, 0);
        free(text);
        return NULL;
    }
    return text;
}

/* The one graph in the generated text of spec. */
static concord_graph *generate_and_read(const gen_spec *spec, char **text) {
    size_t size;
    *text = generate(spec, &size);
    assert_non_null(*text);
    concord_graph **graphs;
    size_t count;
    char error[512] = "";
    int rc = concord_read_buffer(*text, size, "generated", CONCORD_FORMAT_FG, &graphs, &count,
                                 error, sizeof error, NULL, NULL);
    if (rc != CONCORD_OK) fail_msg("reading the generated graph: %s", error);
    assert_int_equal(count, 1);
    concord_graph *g = graphs[0];
    free(graphs);
    return g;
}

/* Line `index` (0-based) of text, copied into a malloc'd string. */
static char *text_line(const char *text, int index) {
    for (int k = 0; k < index; ++k) {
        text = strchr(text, '\n');
        assert_non_null(text);
        ++text;
    }
    size_t length = strcspn(text, "\n");
    char *line = malloc(length + 1);
    assert_non_null(line);
    memcpy(line, text, length);
    line[length] = '\0';
    return line;
}

/* Factor f's links (0-based variables) into a malloc'd array. */
static int32_t *factor_links(const concord_graph *g, int32_t f, int32_t *degree) {
    assert_int_equal(concord_factor_degree(g, f, degree), CONCORD_OK);
    int32_t *vars = malloc(((size_t)*degree + 1) * sizeof *vars);
    assert_non_null(vars);
    assert_int_equal(concord_factor_variables(g, f, vars, NULL), CONCORD_OK);
    return vars;
}

static int32_t factor_outputs(const concord_graph *g, int32_t f) {
    int32_t first, count;
    assert_int_equal(concord_factor_additionals(g, f, &first, &count), CONCORD_OK);
    return count;
}

/* ---- parsing ---- */

/* The arcs of a parsing graph's ARBORESCENCE line, as the test reads it:
 * variable v (0-based) is the arc head[v] -> mod[v]. */
typedef struct arcs {
    int length, count;
    int *head, *mod;
} arcs;

static void read_arcs(const char *line, int n_vars, arcs *a) {
    char *copy = strdup(line), *state;
    assert_non_null(copy);
    assert_string_equal(strtok_r(copy, " ", &state), "ARBORESCENCE");
    a->count = atoi(strtok_r(NULL, " ", &state));
    assert_int_equal(a->count, n_vars);
    for (int k = 0; k < a->count; ++k) assert_int_equal(atoi(strtok_r(NULL, " ", &state)), k + 1);
    a->length = atoi(strtok_r(NULL, " ", &state));
    a->head = malloc((size_t)a->count * sizeof(int));
    a->mod = malloc((size_t)a->count * sizeof(int));
    assert_true(a->head && a->mod);
    for (int k = 0; k < a->count; ++k) {
        a->head[k] = atoi(strtok_r(NULL, " ", &state));
        a->mod[k] = atoi(strtok_r(NULL, " ", &state));
    }
    assert_null(strtok_r(NULL, " ", &state));
    free(copy);
}

static int distance(int a, int b) { return a > b ? a - b : b - a; }

/* Word m's candidate heads are one head c plus the nearest positions other
 * than m and c: for some candidate c, no other position is nearer to m
 * than the farthest of the remaining candidates. */
static void check_candidates(const arcs *a, int m, int expected) {
    int n = a->length - 1, count = 0;
    int *is_candidate = calloc((size_t)n + 1, sizeof(int));
    assert_non_null(is_candidate);
    for (int k = 0; k < a->count; ++k)
        if (a->mod[k] == m) {
            assert_int_equal(is_candidate[a->head[k]], 0);
            is_candidate[a->head[k]] = 1;
            ++count;
        }
    assert_int_equal(count, expected);
    int nearest_other = n + 1; /* nearest position that is not a candidate */
    for (int p = 0; p <= n; ++p)
        if (p != m && !is_candidate[p] && distance(p, m) < nearest_other) nearest_other = distance(p, m);
    int found = 0;
    for (int c = 0; c <= n && !found; ++c) {
        if (!is_candidate[c]) continue;
        int farthest = 0;
        for (int p = 0; p <= n; ++p)
            if (is_candidate[p] && p != c && distance(p, m) > farthest) farthest = distance(p, m);
        found = farthest <= nearest_other;
    }
    assert_true(found);
    free(is_candidate);
}

/* Every word descends from the root over the arcs: a tree exists. */
static void check_reachable(const arcs *a) {
    int n = a->length - 1, reached = 1;
    int *seen = calloc((size_t)n + 1, sizeof(int));
    assert_non_null(seen);
    seen[0] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int k = 0; k < a->count; ++k)
            if (seen[a->head[k]] && !seen[a->mod[k]]) {
                seen[a->mod[k]] = changed = 1;
                ++reached;
            }
    }
    assert_int_equal(reached, n + 1);
    free(seen);
}

/* Factor f is head h's automaton on one side (side -1 left, +1 right):
 * its links are h's incoming arcs in order of head (for a word) and then
 * h's outgoing arcs on that side, nearest modifier first; its outputs are
 * the grandparent pairs and the sibling pairs. */
static void check_automaton(const concord_graph *g, const arcs *a, int32_t f, int h, int side) {
    int32_t degree;
    int32_t *links = factor_links(g, f, &degree);
    int k = 0, n_grandparents = 0, n_mods = 0;
    if (h > 0)
        for (int v = 0; v < a->count; ++v)
            if (a->mod[v] == h) {
                assert_true(k < degree);
                assert_int_equal(links[k++], v);
                ++n_grandparents;
            }
    for (int d = 1; d <= a->length; ++d) {
        int m = h + side * d;
        for (int v = 0; v < a->count; ++v)
            if (a->head[v] == h && a->mod[v] == m) {
                assert_true(k < degree);
                assert_int_equal(links[k++], v);
                ++n_mods;
            }
    }
    assert_int_equal(k, degree);
    assert_int_equal(factor_outputs(g, f),
                     n_grandparents * n_mods + (n_mods + 1) * (n_mods + 2) / 2);
    free(links);
}

static void parsing_graphs_have_the_documented_structure(void **state) {
    (void)state;
    static const int sentence_lengths[] = {1, 2, 3, 7, 20, 60};
    static const int candidates[] = {1, 2, 3, 8};
    for (size_t i = 0; i < sizeof sentence_lengths / sizeof *sentence_lengths; ++i)
        for (size_t j = 0; j < sizeof candidates / sizeof *candidates; ++j)
            for (uint64_t seed = 1; seed <= 3; ++seed) {
                int n = sentence_lengths[i], K = candidates[j], per_word = K < n ? K : n;
                gen_spec spec = {GEN_PARSING, seed * 1000003u, {n, K, 0}};
                char *text;
                concord_graph *g = generate_and_read(&spec, &text);
                assert_int_equal(concord_num_variables(g), n * per_word);
                assert_int_equal(concord_num_factors(g), 2 * n + 3);
                char *line = text_line(text, 2 + n * per_word);
                arcs a;
                read_arcs(line, n * per_word, &a);
                assert_int_equal(a.length, n + 1);
                for (int m = 1; m <= n; ++m) check_candidates(&a, m, per_word);
                check_reachable(&a);
                int32_t degree;
                free(factor_links(g, 0, &degree));
                assert_int_equal(degree, n * per_word);
                check_automaton(g, &a, 1, 0, -1);
                assert_int_equal(factor_outputs(g, 1), 1);
                check_automaton(g, &a, 2, 0, +1);
                for (int h = 1; h <= n; ++h) {
                    check_automaton(g, &a, 1 + 2 * h, h, -1);
                    check_automaton(g, &a, 2 + 2 * h, h, +1);
                }
                free(a.head);
                free(a.mod);
                free(line);
                free(text);
                concord_graph_free(g);
            }
}

/* ---- coupled sequences ---- */

typedef struct indicator {
    int sequence, position, state;
} indicator;

static indicator decode(int32_t var, int L, int S) {
    indicator x = {var / (L * S), var / S % L, var % S};
    return x;
}

/* The sequence graph's constraint factors, as the test reads them. */
typedef struct constraints {
    int n_couplings;
    int32_t (*coupled)[2];          /* the ATMOSTONEs' two variables */
    int *budget_state, *or_state;   /* per sequence */
} constraints;

/* Checks the factors of a sequence graph against the documented layout and
 * collects its constraints. */
static void check_sequence_factors(const concord_graph *g, const char *text, int M, int L, int S,
                                   constraints *c) {
    assert_int_equal(concord_num_variables(g), M * L * S);
    assert_int_equal(concord_num_factors(g), M + M * L + 2 * M);
    int32_t degree;
    for (int k = 0; k < M; ++k) {
        int32_t *links = factor_links(g, k, &degree);
        assert_int_equal(degree, L * S);
        for (int v = 0; v < L * S; ++v) assert_int_equal(links[v], k * L * S + v);
        assert_int_equal(factor_outputs(g, k), S + (L - 1) * S * S + S);
        free(links);
    }
    c->n_couplings = M * L;
    c->coupled = malloc((size_t)M * L * sizeof *c->coupled);
    c->budget_state = malloc((size_t)M * sizeof(int));
    c->or_state = malloc((size_t)M * sizeof(int));
    assert_true(c->coupled && c->budget_state && c->or_state);
    for (int j = 0; j < M * L; ++j) {
        int32_t *links = factor_links(g, M + j, &degree);
        assert_int_equal(degree, 2);
        indicator x = decode(links[0], L, S), y = decode(links[1], L, S);
        assert_int_not_equal(x.sequence, y.sequence);
        assert_int_equal(x.state, y.state);
        c->coupled[j][0] = links[0];
        c->coupled[j][1] = links[1];
        free(links);
    }
    for (int k = 0; k < M; ++k) {
        for (int which = 0; which < 2; ++which) {
            int32_t f = M + M * L + 2 * k + which;
            int32_t *links = factor_links(g, f, &degree);
            assert_int_equal(degree, L);
            indicator first = decode(links[0], L, S);
            for (int p = 0; p < L; ++p) {
                indicator x = decode(links[p], L, S);
                assert_int_equal(x.sequence, k);
                assert_int_equal(x.position, p);
                assert_int_equal(x.state, first.state);
            }
            (which ? c->or_state : c->budget_state)[k] = first.state;
            char *line = text_line(text, 2 + M * L * S + f);
            const char *last = strrchr(line, ' ');
            if (which)
                assert_int_equal(strncmp(line, "OR ", 3), 0);
            else
                assert_true(strncmp(line, "BUDGET ", 7) == 0 && strcmp(last, " 2") == 0);
            free(line);
            free(links);
        }
        assert_int_not_equal(c->budget_state[k], c->or_state[k]);
    }
}

/* Whether the labelling (a state per sequence and position) satisfies
 * every coupling, budget and OR. */
static int satisfies(const constraints *c, const int *label, int M, int L, int S) {
    for (int j = 0; j < c->n_couplings; ++j) {
        indicator x = decode(c->coupled[j][0], L, S), y = decode(c->coupled[j][1], L, S);
        if (label[x.sequence * L + x.position] == x.state &&
            label[y.sequence * L + y.position] == y.state)
            return 0;
    }
    for (int k = 0; k < M; ++k) {
        int budget_used = 0, or_met = 0;
        for (int p = 0; p < L; ++p) {
            budget_used += label[k * L + p] == c->budget_state[k];
            or_met |= label[k * L + p] == c->or_state[k];
        }
        if (budget_used > 2 || !or_met) return 0;
    }
    return 1;
}

static void free_constraints(constraints *c) {
    free(c->coupled);
    free(c->budget_state);
    free(c->or_state);
}

/* Generates and reads a sequence graph, checks its factors, and returns
 * its constraints in c. */
static void generate_sequence_graph(uint64_t seed, int M, int L, int S, constraints *c) {
    gen_spec spec = {GEN_SEQUENCES, seed, {M, L, S}};
    char *text;
    concord_graph *g = generate_and_read(&spec, &text);
    check_sequence_factors(g, text, M, L, S, c);
    free(text);
    concord_graph_free(g);
}

static void sequence_graphs_have_the_documented_structure(void **state) {
    (void)state;
    static const int sizes[][3] = {{2, 1, 2}, {2, 10, 5}, {3, 4, 7}, {5, 20, 10}, {10, 50, 20}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i)
        for (uint64_t seed = 1; seed <= 2; ++seed) {
            int M = sizes[i][0], L = sizes[i][1], S = sizes[i][2];
            constraints c;
            generate_sequence_graph(seed, M, L, S, &c);
            free_constraints(&c);
        }
}

/* On graphs small enough to enumerate, where the couplings bind (one or
 * two positions, two or three states), some labelling meets every
 * constraint. */
static void tiny_sequence_graphs_are_feasible(void **state) {
    (void)state;
    static const int sizes[][3] = {{2, 1, 2}, {3, 1, 2}, {2, 2, 2}, {3, 2, 2}, {2, 3, 3}, {3, 2, 3}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i)
        for (uint64_t seed = 1; seed <= 40; ++seed) {
            int M = sizes[i][0], L = sizes[i][1], S = sizes[i][2];
            constraints c;
            generate_sequence_graph(seed, M, L, S, &c);
            int label[16] = {0}, radix[16], feasible = 0;
            for (int k = 0; k < M * L; ++k) radix[k] = S;
            do feasible = satisfies(&c, label, M, L, S);
            while (!feasible && odometer_next(label, radix, M * L));
            assert_true(feasible);
            free_constraints(&c);
        }
}

/* ---- both shapes ---- */

static void same_seed_same_text_other_seed_other_text(void **state) {
    (void)state;
    gen_spec specs[] = {{GEN_PARSING, 7, {30, 5, 0}}, {GEN_SEQUENCES, 7, {4, 10, 6}}};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i) {
        size_t size_a, size_b, size_c;
        char *a = generate(&specs[i], &size_a), *b = generate(&specs[i], &size_b);
        specs[i].seed = 8;
        char *c = generate(&specs[i], &size_c);
        assert_true(a && b && c);
        assert_int_equal(size_a, size_b);
        assert_memory_equal(a, b, size_a);
        assert_true(size_a != size_c || memcmp(a, c, size_a) != 0);
        free(a);
        free(b);
        free(c);
    }
}

static void bad_sizes_write_nothing(void **state) {
    (void)state;
    static const gen_spec bad[] = {
        {GEN_PARSING, 1, {0, 3, 0}},         {GEN_PARSING, 1, {-4, 3, 0}},
        {GEN_PARSING, 1, {GEN_PARSING_MAX_WORDS + 1, 3, 0}},
        {GEN_PARSING, 1, {10, 0, 0}},        {GEN_SEQUENCES, 1, {1, 10, 5}},
        {GEN_SEQUENCES, 1, {2, 0, 5}},       {GEN_SEQUENCES, 1, {2, 10, 1}},
        {GEN_SEQUENCES, 1, {1000, 1000, 1000}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        size_t size;
        assert_null(generate(&bad[i], &size));
    }
    assert_int_equal(gen_parsing_fg(NULL, 1, 10, 3), -1);
    assert_int_equal(gen_sequences_fg(NULL, 1, 2, 10, 5), -1);
}

/* The suite holds the documented graphs, each with its own name. */
static void suite_is_as_documented(void **state) {
    (void)state;
    int parsing = 0, sequences = 0;
    for (int i = 0; i < gen_suite_count; ++i) {
        const gen_spec *s = &gen_suite[i];
        if (s->shape == GEN_PARSING) {
            ++parsing;
            assert_true(s->size[0] >= 10 && s->size[0] <= 100);
            assert_true(s->size[1] >= 3 && s->size[1] <= 8);
        } else {
            ++sequences;
            assert_true(s->size[0] >= 2 && s->size[0] <= 10);
            assert_true(s->size[1] >= 10 && s->size[1] <= 50);
            assert_true(s->size[2] >= 5 && s->size[2] <= 20);
        }
        char name[128], other[128];
        gen_name(s, name, sizeof name);
        for (int j = 0; j < i; ++j) {
            gen_name(&gen_suite[j], other, sizeof other);
            assert_string_not_equal(name, other);
        }
    }
    assert_int_equal(parsing, 26);
    assert_int_equal(sequences, 20);
    char name[128];
    gen_name(&gen_suite[14], name, sizeof name);
    assert_string_equal(name, "parsing_n050_K5_seed15");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parsing_graphs_have_the_documented_structure),
        cmocka_unit_test(sequence_graphs_have_the_documented_structure),
        cmocka_unit_test(tiny_sequence_graphs_are_feasible),
        cmocka_unit_test(same_seed_same_text_other_seed_other_text),
        cmocka_unit_test(bad_sizes_write_nothing),
        cmocka_unit_test(suite_is_as_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
