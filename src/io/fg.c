/*
 * Reader for AD3's .fg factor graph format (see docs/formats.md).
 *
 * Per graph: the number of variables N, the number of factors M, N lines
 * of variable scores, M factor lines "TYPE DEGREE i1 ... iDEGREE [params]"
 * with 1-based indices ('-' negates a link of a logic or budget factor).
 * Graphs are separated by one line. Unlike AD3, the reader validates every
 * line strictly and reports file:line for anything wrong; blank and
 * comment-only lines inside a graph are skipped. The line right after a
 * graph is AD3's separator: when it is not blank, AD3 silently swallows it
 * (its own srl_fract_003.fg ends with such a line); we skip it with a
 * warning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "readers.h"

/* Reads the next line with tokens; 0 at end of input. */
static int next_content_line(reader *r, int *rc) {
    for (;;) {
        int got = lexer_next_line(&r->lx);
        if (got < 0) {
            *rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
            return 0;
        }
        if (got == 0) return 0;
        if (r->lx.n_tokens > 0) return 1;
    }
}

/* Parses the current line as a single count. */
static int parse_count(reader *r, const char *what, int64_t limit, int64_t *out) {
    char buf[64];
    if (r->lx.n_tokens != 1 || token_to_int(r->lx.tokens[0], out) || *out < 0 || *out > limit)
        return reader_fail(r, CONCORD_EPARSE, "expected %s (an integer in [0, %lld]), found '%s'%s",
                           what, (long long)limit, token_text(r->lx.tokens[0], buf, sizeof buf),
                           r->lx.n_tokens > 1 ? " and more" : "");
    return CONCORD_OK;
}

static int read_count(reader *r, const char *what, int64_t limit, int64_t *out) {
    int rc = CONCORD_OK;
    if (!next_content_line(r, &rc))
        return rc ? rc : reader_fail(r, CONCORD_EPARSE, "truncated file: expected %s", what);
    return parse_count(r, what, limit, out);
}

static int read_scores(reader *r, int64_t n, double **scores) {
    double *x = malloc(sizeof(double));
    size_t cap = 1;
    if (!x) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; ++i) {
        int rc = CONCORD_OK;
        if (!next_content_line(r, &rc)) {
            free(x);
            return rc ? rc : reader_fail(r, CONCORD_EPARSE,
                                         "truncated file: expected %lld variable scores, found %lld",
                                         (long long)n, (long long)i);
        }
        if ((size_t)i == cap) {
            double *p = realloc(x, 2 * cap * sizeof *p);
            if (!p) {
                free(x);
                return reader_fail(r, CONCORD_ENOMEM, "out of memory");
            }
            x = p;
            cap *= 2;
        }
        char buf[64];
        text_token t = r->lx.tokens[0];
        const int parsed = r->lx.n_tokens == 1 ? token_to_double(t, &x[i]) : -1;
        if (parsed == TOKEN_UNDERFLOW || parsed == TOKEN_OVERFLOW) {
            free(x);
            return reader_fail(r, CONCORD_EPARSE, "score of variable %lld (%s) %s",
                               (long long)i + 1, token_text(t, buf, sizeof buf),
                               parsed == TOKEN_UNDERFLOW ? TOKEN_UNDERFLOW_TEXT
                                                         : TOKEN_OVERFLOW_TEXT);
        }
        if (parsed) {
            free(x);
            return reader_fail(r, CONCORD_EPARSE,
                               "expected the score of variable %lld (a decimal number), "
                               "found '%s'%s",
                               (long long)i + 1, token_text(t, buf, sizeof buf),
                               r->lx.n_tokens > 1 ? " and more" : "");
        }
        /* checked here, where the line is known (the graph checks them all at once) */
        if (!score_in_range(x[i])) {
            const char *problem = score_problem(x[i]);
            free(x);
            return reader_fail(r, CONCORD_EPARSE, "score of variable %lld (%s) %s",
                               (long long)i + 1, token_text(t, buf, sizeof buf), problem);
        }
    }
    *scores = x;
    return CONCORD_OK;
}

/* A factor line being read: its type, links, and the tokens after them. */
typedef struct factor_line {
    const struct fg_type *type;
    int32_t degree;
    int32_t *vars;
    bool *negated;
    const text_token *params;
    int32_t n_params;
    double *numbers; /* room for n_params values */
    int64_t *seen;   /* per variable: the serial of the last line using it */
    int64_t serial;
} factor_line;

typedef int (*build_fn)(reader *r, concord_graph *g, factor_line *line);

typedef struct fg_type {
    const char *name;
    build_fn build;
    bool negatable; /* '-' allowed on indices */
    int variant;    /* concord_logic for logic types; 1 for BUDGET_EXACT */
} fg_type;

static int expect_params(reader *r, const factor_line *line, int64_t count, const char *what) {
    if (line->n_params == count) return CONCORD_OK;
    if (count == 0)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor of degree %d: nothing may follow its indices, found %d "
                           "more field%s",
                           line->type->name, line->degree, line->n_params,
                           line->n_params == 1 ? "" : "s");
    return reader_fail(r, CONCORD_EPARSE,
                       "%s factor of degree %d: expected %lld field%s after the indices (%s), "
                       "found %d",
                       line->type->name, line->degree, (long long)count, count == 1 ? "" : "s",
                       what, line->n_params);
}

/* Parses params[from, from+count) as finite numbers (or -inf when allowed:
 * the scores of the families where -inf forbids an output). */
static int parse_numbers(reader *r, factor_line *line, int32_t from, int32_t count,
                         const char *what, bool allow_minus_inf) {
    char buf[64];
    for (int32_t k = 0; k < count; ++k) {
        text_token t = line->params[from + k];
        double x;
        const int parsed = token_to_double(t, &x);
        if (parsed == TOKEN_UNDERFLOW || parsed == TOKEN_OVERFLOW)
            return reader_fail(r, CONCORD_EPARSE, "%s factor: %s '%s' %s", line->type->name,
                               what, token_text(t, buf, sizeof buf),
                               parsed == TOKEN_UNDERFLOW ? TOKEN_UNDERFLOW_TEXT
                                                         : TOKEN_OVERFLOW_TEXT);
        if (parsed || !(isfinite(x) || (allow_minus_inf && x == -INFINITY)))
            return reader_fail(r, CONCORD_EPARSE, "%s factor: expected %s (a finite decimal number), found '%s'",
                               line->type->name, what, token_text(t, buf, sizeof buf));
        line->numbers[from + k] = x;
    }
    return CONCORD_OK;
}

static int parse_positive_int(reader *r, const factor_line *line, int32_t at, const char *what,
                              int64_t limit, int64_t *out) {
    char buf[64];
    text_token t = line->params[at];
    if (token_to_int(t, out) || *out < 1 || *out > limit)
        return reader_fail(r, CONCORD_EPARSE, "%s factor: expected %s (an integer in [1, %lld]), found '%s'",
                           line->type->name, what, (long long)limit, token_text(t, buf, sizeof buf));
    return CONCORD_OK;
}

static int build_logic(reader *r, concord_graph *g, factor_line *line) {
    int rc = expect_params(r, line, 0, "none");
    if (!rc) rc = concord_add_logic(g, (concord_logic)line->type->variant, line->degree, line->vars,
                                    line->negated, NULL);
    return rc;
}

static int build_budget(reader *r, concord_graph *g, factor_line *line) {
    int rc = expect_params(r, line, 1, "the budget");
    if (!rc) rc = parse_numbers(r, line, 0, 1, "the budget", false);
    if (!rc) rc = concord_add_budget(g, line->degree, line->vars, line->negated, line->numbers[0],
                                     line->type->variant == 1, NULL);
    return rc;
}

static int build_knapsack(reader *r, concord_graph *g, factor_line *line) {
    int rc = expect_params(r, line, (int64_t)line->degree + 1, "one cost per index, then the budget");
    if (!rc) rc = parse_numbers(r, line, 0, line->degree, "a cost", false);
    for (int32_t j = 0; j < line->degree && !rc; ++j)
        if (line->numbers[j] < 0.0)
            rc = reader_fail(r, CONCORD_EPARSE, "KNAPSACK factor: cost %d is %g (costs must be >= 0)",
                             j + 1, line->numbers[j]);
    if (!rc) rc = parse_numbers(r, line, line->degree, 1, "the budget", false);
    if (!rc) rc = concord_add_knapsack(g, line->degree, line->vars, line->negated, line->numbers,
                                       line->numbers[line->degree], NULL);
    return rc;
}

static int build_pair(reader *r, concord_graph *g, factor_line *line) {
    if (line->degree != 2)
        return reader_fail(r, CONCORD_EPARSE, "PAIR factor must have degree 2, not %d", line->degree);
    int rc = expect_params(r, line, 1, "the score of both on");
    if (!rc) rc = parse_numbers(r, line, 0, 1, "the PAIR score", false);
    if (!rc) rc = concord_add_pair(g, line->vars[0], line->vars[1], line->numbers[0], NULL);
    return rc;
}

/* DENSE: the number of multi-variables m, their state counts, then one
 * score per joint state (-inf forbids it). */
static int build_dense(reader *r, concord_graph *g, factor_line *line) {
    if (line->n_params < 1) return expect_params(r, line, 1, "the number of multi-variables");
    int64_t m, entries = 1, states_total = 0;
    int rc = parse_positive_int(r, line, 0, "the number of multi-variables", line->degree, &m);
    if (rc) return rc;
    if (line->n_params < 1 + m)
        return expect_params(r, line, 1 + m, "the number of multi-variables and their state counts");
    int32_t *states = malloc((size_t)m * sizeof *states);
    if (!states) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int64_t j = 0; j < m && !rc; ++j) {
        int64_t k;
        rc = parse_positive_int(r, line, (int32_t)(1 + j), "a state count", line->degree, &k);
        states[j] = (int32_t)k;
        states_total += k;
        entries *= k;
        if (!rc && entries > line->n_params)
            rc = expect_params(r, line, 1 + m + entries, "the table of joint scores");
    }
    if (!rc && states_total != line->degree)
        rc = reader_fail(r, CONCORD_EPARSE,
                         "DENSE factor: the state counts add up to %lld, not to the degree %d",
                         (long long)states_total, line->degree);
    if (!rc) rc = expect_params(r, line, 1 + m + entries, "the table of joint scores");
    if (!rc) rc = parse_numbers(r, line, (int32_t)(1 + m), (int32_t)entries, "a joint score", true);
    if (!rc) rc = concord_add_dense(g, (int32_t)m, states, line->vars, line->numbers + 1 + m, NULL);
    free(states);
    return rc;
}

/* ---- Structured factors: trees and matchings ----------------------------
 *
 *   ARBORESCENCE D i1 .. iD  LENGTH  h1 m1 .. hD mD
 *       AD3's tree factor, read as AD3 does: LENGTH counts the root 0, link
 *       k is the arc hk -> mk; non-projective, any number of root children.
 *   TREE D i1 .. iD  LENGTH  h1 m1 .. hD mD  [PROJECTIVE] [SINGLE_ROOT]
 *       concord's extension: the same layout, then optional flag words
 *       selecting the projective and/or single-root variants.
 *   MATCHING D i1 .. iD  ROWS COLS  [EVERY_ROW | EVERY_COL | PERFECT]
 *       a bipartite matching; D = ROWS * COLS links in row-major order
 *       (link i * COLS + j pairs row i with column j). Without a flag each
 *       row and column is matched at most once.
 * Links of these factors cannot be negated. */

/* ---- Structured factors: sequences, head automata, summarization ----
 * Layouts after the indices (see docs/formats.md):
 *   SEQUENCE             L, L state counts, transition scores
 *   SEQUENCE_BUDGET      L, B, L state counts, transition scores
 *   HEAD_AUTOMATON       (d+1)(d+2)/2 sibling scores (d = degree, may be 0)
 *   GRANDPARENT_HEAD_AUTOMATON  G, G x (d-G) grandparent scores, then
 *                        (d-G+1)(d-G+2)/2 sibling scores
 *   GENERAL_TREE[_COUNTS]  n, n state counts, n parents, edge scores
 *   SEQUENCE_COMPRESSOR  d(d+1)/2 pair scores
 * A score of -inf forbids its output. */

/* Parses params[at] as an integer in [lo, hi]. */
static int parse_int_in(reader *r, const factor_line *line, int32_t at, const char *what,
                        int64_t lo, int64_t hi, int64_t *out) {
    char buf[64];
    text_token t = line->params[at];
    if (token_to_int(t, out) || *out < lo || *out > hi)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor: expected %s (an integer in [%lld, %lld]), found '%s'",
                           line->type->name, what, (long long)lo, (long long)hi,
                           token_text(t, buf, sizeof buf));
    return CONCORD_OK;
}

static int token_is(text_token t, const char *word) {
    return strlen(word) == (size_t)t.len && memcmp(word, t.s, (size_t)t.len) == 0;
}

/* Flag words params[from..n_params) as bits; `names` lists (word, bit)
 * pairs. Each word may appear once. */
typedef struct flag_word {
    const char *word;
    unsigned bit;
} flag_word;

static int parse_flags(reader *r, const factor_line *line, int32_t from, const flag_word *names,
                       size_t n_names, const char *valid, unsigned *flags) {
    char buf[64];
    *flags = 0;
    for (int32_t k = from; k < line->n_params; ++k) {
        size_t w = 0;
        while (w < n_names && !token_is(line->params[k], names[w].word)) ++w;
        if (w == n_names)
            return reader_fail(r, CONCORD_EPARSE, "%s factor: unknown option '%s' (expected %s)",
                               line->type->name, token_text(line->params[k], buf, sizeof buf),
                               valid);
        if (*flags & names[w].bit)
            return reader_fail(r, CONCORD_EPARSE, "%s factor: option %s given twice",
                               line->type->name, names[w].word);
        *flags |= names[w].bit;
    }
    return CONCORD_OK;
}

/* ARBORESCENCE (variant 0, no options) and TREE (variant 1). */
static int build_tree(reader *r, concord_graph *g, factor_line *line) {
    const int64_t fixed = 1 + 2 * (int64_t)line->degree;
    const char *what = "the sentence length counting the root, then a head and a modifier "
                       "per index";
    if (line->n_params < fixed || (line->type->variant == 0 && line->n_params != fixed))
        return expect_params(r, line, fixed, what);
    int64_t length;
    int rc = parse_int_in(r, line, 0, "the sentence length counting the root", 2, 4096, &length);
    if (rc) return rc;
    /* every token needs an arc: a length the line's arcs cannot cover
     * would only size the oracle's O(length^2) work memory */
    if (length - 1 > line->degree)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor: a tree over %lld tokens needs at least %lld arcs, %d "
                           "given",
                           line->type->name, (long long)length - 1, (long long)length - 1,
                           line->degree);
    static const flag_word names[] = {{"PROJECTIVE", CONCORD_TREE_PROJECTIVE},
                                      {"SINGLE_ROOT", CONCORD_TREE_SINGLE_ROOT}};
    unsigned flags = 0;
    rc = parse_flags(r, line, (int32_t)fixed, names, 2, "PROJECTIVE or SINGLE_ROOT", &flags);
    if (rc) return rc;
    int32_t *heads = malloc(2 * (size_t)line->degree * sizeof *heads);
    if (!heads) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    int32_t *mods = heads + line->degree;
    for (int32_t k = 0; k < line->degree && !rc; ++k) {
        int64_t h, m;
        rc = parse_int_in(r, line, 1 + 2 * k, "a head", 0, length - 1, &h);
        if (!rc) rc = parse_int_in(r, line, 2 + 2 * k, "a modifier", 1, length - 1, &m);
        heads[k] = (int32_t)h;
        mods[k] = (int32_t)m;
    }
    if (!rc)
        rc = concord_add_tree(g, (int32_t)length, line->degree, heads, mods, line->vars, flags,
                              NULL);
    free(heads);
    return rc;
}

static int build_matching(reader *r, concord_graph *g, factor_line *line) {
    if (line->n_params < 2) return expect_params(r, line, 2, "the numbers of rows and columns");
    int64_t rows, cols;
    int rc = parse_positive_int(r, line, 0, "the number of rows", line->degree, &rows);
    if (!rc) rc = parse_positive_int(r, line, 1, "the number of columns", line->degree, &cols);
    if (rc) return rc;
    if (rows * cols != line->degree)
        return reader_fail(r, CONCORD_EPARSE,
                           "MATCHING factor: %lld rows x %lld columns need %lld indices, not %d",
                           (long long)rows, (long long)cols, (long long)(rows * cols),
                           line->degree);
    static const flag_word names[] = {{"EVERY_ROW", CONCORD_MATCHING_EVERY_ROW},
                                      {"EVERY_COL", CONCORD_MATCHING_EVERY_COL},
                                      {"PERFECT", CONCORD_MATCHING_PERFECT}};
    unsigned flags = 0;
    rc = parse_flags(r, line, 2, names, 3, "EVERY_ROW, EVERY_COL or PERFECT", &flags);
    if (!rc && line->n_params > 3)
        rc = reader_fail(r, CONCORD_EPARSE, "MATCHING factor: at most one option");
    if (!rc) rc = concord_add_matching(g, (int32_t)rows, (int32_t)cols, line->vars, flags, NULL);
    return rc;
}
/* ---- end of structured factors: trees and matchings ---- */
/* Reads `count` state counts from params[from]; they must add up to
 * `states_total`. Returns them (malloc'ed) in *states. */
static int parse_state_counts(reader *r, const factor_line *line, int32_t from, int64_t count,
                              int64_t states_total, int32_t **states) {
    int32_t *k = malloc((size_t)(count > 0 ? count : 1) * sizeof *k);
    if (!k) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    int64_t sum = 0;
    int rc = CONCORD_OK;
    for (int64_t j = 0; j < count && !rc; ++j) {
        int64_t x;
        rc = parse_positive_int(r, line, (int32_t)(from + j), "a state count", line->degree, &x);
        k[j] = (int32_t)x;
        sum += x;
    }
    if (!rc && sum != states_total)
        rc = reader_fail(r, CONCORD_EPARSE,
                         "%s factor: the state counts add up to %lld, not to the %lld state "
                         "indices",
                         line->type->name, (long long)sum, (long long)states_total);
    if (rc) {
        free(k);
        return rc;
    }
    *states = k;
    return CONCORD_OK;
}

/* SEQUENCE / SEQUENCE_BUDGET (variant 1): the length L, the budget, L state
 * counts adding up to the degree, then the start, transition and stop
 * scores. */
static int build_sequence(reader *r, concord_graph *g, factor_line *line) {
    const bool budgeted = line->type->variant == 1;
    const int32_t head = budgeted ? 2 : 1;
    if (line->n_params < head)
        return expect_params(r, line, head, budgeted ? "the length and the budget" : "the length");
    int64_t length, budget = -1;
    int rc = parse_positive_int(r, line, 0, "the sequence length", line->degree, &length);
    if (!rc && budgeted) rc = parse_int_in(r, line, 1, "the budget", 0, INT32_MAX, &budget);
    if (rc) return rc;
    if (line->n_params < head + length)
        return expect_params(r, line, head + length,
                             budgeted ? "the length, the budget and the state counts"
                                      : "the length and the state counts");
    int32_t *states;
    rc = parse_state_counts(r, line, head, length, line->degree, &states);
    if (rc) return rc;
    int64_t n_add = states[0] + states[length - 1];
    for (int64_t i = 1; i < length; ++i) n_add += (int64_t)states[i - 1] * states[i];
    rc = expect_params(r, line, head + length + n_add,
                       budgeted ? "the length, the budget, the state counts and the transition scores"
                                : "the length, the state counts and the transition scores");
    if (!rc) rc = parse_numbers(r, line, (int32_t)(head + length), (int32_t)n_add,
                                "a transition score", true);
    const double *scores = line->numbers + head + length;
    if (!rc && budgeted)
        rc = concord_add_sequence_budget(g, (int32_t)length, states, line->vars, (int32_t)budget,
                                         scores, NULL);
    else if (!rc)
        rc = concord_add_sequence(g, (int32_t)length, states, line->vars, scores, NULL);
    free(states);
    return rc;
}

/* HEAD_AUTOMATON: the (d+1)(d+2)/2 sibling scores. GRANDPARENT_HEAD_AUTOMATON
 * (variant 1): the number G of grandparent arcs (the first G indices), the
 * G x (d-G) grandparent scores, then the sibling scores of the d-G
 * modifiers. */
static int build_head_automaton(reader *r, concord_graph *g, factor_line *line) {
    const bool grand = line->type->variant == 1;
    int64_t n_grand = 0;
    int rc = CONCORD_OK;
    if (grand) {
        if (line->n_params < 1) return expect_params(r, line, 1, "the number of grandparents");
        rc = parse_positive_int(r, line, 0, "the number of grandparents", line->degree, &n_grand);
        if (rc) return rc;
    }
    const int64_t head = grand ? 1 : 0, n = line->degree - n_grand;
    const int64_t n_add = n_grand * n + (n + 1) * (n + 2) / 2;
    rc = expect_params(r, line, head + n_add,
                       grand ? "the number of grandparents, the grandparent scores and the "
                               "sibling scores"
                             : "the sibling scores");
    if (!rc) rc = parse_numbers(r, line, (int32_t)head, (int32_t)n_add, "a score", true);
    if (rc) return rc;
    if (grand)
        return concord_add_grandparent_head_automaton(g, (int32_t)n_grand, (int32_t)n, line->vars,
                                                      line->numbers + head, NULL);
    return concord_add_head_automaton(g, (int32_t)n, line->vars, line->numbers, NULL);
}

/* GENERAL_TREE / GENERAL_TREE_COUNTS (variant 1): the number of nodes n,
 * their state counts, their parents (-1 for node 0, the root), then the
 * edge scores. With counts the last n + 1 indices are the count
 * indicators. */
static int build_general_tree(reader *r, concord_graph *g, factor_line *line) {
    const bool counts = line->type->variant == 1;
    if (line->n_params < 1) return expect_params(r, line, 1, "the number of nodes");
    int64_t n;
    int rc = parse_positive_int(r, line, 0, "the number of nodes", line->degree, &n);
    if (rc) return rc;
    const int64_t state_links = line->degree - (counts ? n + 1 : 0);
    if (state_links < n)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor of degree %d: %lld nodes need at least %lld indices",
                           line->type->name, line->degree, (long long)n,
                           (long long)(counts ? 2 * n + 1 : n));
    if (line->n_params < 1 + 2 * n)
        return expect_params(r, line, 1 + 2 * n,
                             "the number of nodes, the state counts and the parents");
    int32_t *states, *parents = malloc((size_t)n * sizeof *parents);
    if (!parents) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    rc = parse_state_counts(r, line, 1, n, state_links, &states);
    if (rc) {
        free(parents);
        return rc;
    }
    int64_t n_add = 0;
    for (int64_t i = 0; i < n && !rc; ++i) {
        int64_t x;
        rc = i == 0 ? parse_int_in(r, line, (int32_t)(1 + n), "the root's parent", -1, -1, &x)
                    : parse_int_in(r, line, (int32_t)(1 + n + i), "a parent node", 0, n - 1, &x);
        parents[i] = (int32_t)x;
        if (!rc && i > 0) n_add += (int64_t)states[x] * states[i];
    }
    if (!rc)
        rc = expect_params(r, line, 1 + 2 * n + n_add,
                           "the number of nodes, the state counts, the parents and the edge "
                           "scores");
    if (!rc) rc = parse_numbers(r, line, (int32_t)(1 + 2 * n), (int32_t)n_add, "an edge score",
                                true);
    const double *scores = line->numbers + 1 + 2 * n;
    if (!rc && counts)
        rc = concord_add_general_tree_counts(g, (int32_t)n, states, parents, line->vars, scores,
                                             NULL);
    else if (!rc)
        rc = concord_add_general_tree(g, (int32_t)n, states, parents, line->vars, scores, NULL);
    free(states);
    free(parents);
    return rc;
}

/* SEQUENCE_COMPRESSOR: d-1 word indices and the sentence index, then the
 * d(d+1)/2 pair scores. */
static int build_sequence_compressor(reader *r, concord_graph *g, factor_line *line) {
    const int64_t d = line->degree;
    int rc = expect_params(r, line, d * (d + 1) / 2, "one score per pair of consecutive words");
    if (!rc) rc = parse_numbers(r, line, 0, line->n_params, "a pair score", true);
    if (!rc) rc = concord_add_sequence_compressor(g, line->degree - 1, line->vars, line->numbers,
                                                  NULL);
    return rc;
}

/* ---- (end of structured factors: sequences, head automata, summarization) ---- */

static const fg_type fg_types[] = {
    {"XOR", build_logic, true, CONCORD_XOR},
    {"XOROUT", build_logic, true, CONCORD_XOROUT},
    {"ATMOSTONE", build_logic, true, CONCORD_ATMOSTONE},
    {"OR", build_logic, true, CONCORD_OR},
    {"OROUT", build_logic, true, CONCORD_OROUT},
    {"ANDOUT", build_logic, true, CONCORD_ANDOUT},
    {"IMPLY", build_logic, true, CONCORD_IMPLY},
    {"BUDGET", build_budget, true, 0},
    {"BUDGET_EXACT", build_budget, true, 1},
    {"KNAPSACK", build_knapsack, true, 0},
    {"PAIR", build_pair, false, 0},
    {"DENSE", build_dense, false, 0},
    /* structured factors: trees and matchings */
    {"ARBORESCENCE", build_tree, false, 0},
    {"TREE", build_tree, false, 1},
    {"MATCHING", build_matching, false, 0},
    /* structured factors: sequences, head automata, summarization */
    {"SEQUENCE", build_sequence, false, 0},
    {"SEQUENCE_BUDGET", build_sequence, false, 1},
    {"HEAD_AUTOMATON", build_head_automaton, false, 0},
    {"GRANDPARENT_HEAD_AUTOMATON", build_head_automaton, false, 1},
    {"GENERAL_TREE", build_general_tree, false, 0},
    {"GENERAL_TREE_COUNTS", build_general_tree, false, 1},
    {"SEQUENCE_COMPRESSOR", build_sequence_compressor, false, 0},
};

static const fg_type *find_type(text_token t) {
    for (size_t k = 0; k < sizeof fg_types / sizeof fg_types[0]; ++k)
        if (strlen(fg_types[k].name) == (size_t)t.len &&
            memcmp(fg_types[k].name, t.s, (size_t)t.len) == 0)
            return &fg_types[k];
    return NULL;
}

static int read_factor(reader *r, concord_graph *g, int64_t n_vars, factor_line *line) {
    const text_token *tok = r->lx.tokens;
    char buf[64];
    const fg_type *type = find_type(tok[0]);
    if (!type)
        return reader_fail(r, CONCORD_EPARSE, "unknown factor type '%s'",
                           token_text(tok[0], buf, sizeof buf));
    int64_t degree;
    if (r->lx.n_tokens < 2 || token_to_int(tok[1], &degree) || degree < 0)
        return reader_fail(r, CONCORD_EPARSE, "%s factor: expected its degree (an integer >= 1)",
                           type->name);
    /* AD3's parsers write HEAD_AUTOMATON 0 for a head without candidate
     * modifiers on one side: a constant factor with one sibling output. */
    bool empty_ok = type->build == build_head_automaton && type->variant == 0;
    if (degree == 0 && !empty_ok)
        return reader_fail(r, CONCORD_EPARSE, "%s factor with no variables", type->name);
    if (degree > r->lx.n_tokens - 2)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor of degree %lld: expected %lld variable indices, found %d",
                           type->name, (long long)degree, (long long)degree, r->lx.n_tokens - 2);
    for (int64_t j = 0; j < degree; ++j) {
        int64_t index;
        text_token t = tok[2 + j];
        if (token_to_int(t, &index))
            return reader_fail(r, CONCORD_EPARSE, "%s factor: variable index '%s' is not an integer",
                               type->name, token_text(t, buf, sizeof buf));
        int neg = t.s[0] == '-';
        if (neg) index = -index;
        if (neg && !type->negatable)
            return reader_fail(r, CONCORD_EPARSE,
                               "%s factor: variable index %s is negated; %s links cannot be "
                               "negated%s",
                               type->name, token_text(t, buf, sizeof buf), type->name,
                               type->build == build_pair ? " (AD3 drops the sign silently)" : "");
        if (index < 1 || index > n_vars)
            return reader_fail(r, CONCORD_EPARSE,
                               "%s factor: variable index %s out of range [1, %lld] (1-based)",
                               type->name, token_text(t, buf, sizeof buf), (long long)n_vars);
        line->vars[j] = (int32_t)(index - 1);
        line->negated[j] = neg;
    }
    line->serial += 1; /* marks this line's variables in `seen` */
    for (int64_t j = 0; j < degree; ++j) {
        if (line->seen[line->vars[j]] == line->serial)
            return reader_fail(r, CONCORD_EPARSE, "%s factor: variable %d appears more than once",
                               type->name, line->vars[j] + 1);
        line->seen[line->vars[j]] = line->serial;
    }
    line->type = type;
    line->degree = (int32_t)degree;
    line->params = tok + 2 + degree;
    line->n_params = r->lx.n_tokens - 2 - (int32_t)degree;
    int rc = type->build(r, g, line);
    if (rc == CONCORD_OK || rc == CONCORD_EPARSE || rc == CONCORD_ENOMEM) return rc;
    return reader_fail_graph(r, g);
}

static int read_factors(reader *r, concord_graph *g, int64_t n_vars, int64_t n_factors) {
    factor_line line = {0};
    int32_t cap = 0;
    int rc = CONCORD_OK;
    line.seen = calloc((size_t)(n_vars ? n_vars : 1), sizeof *line.seen);
    if (!line.seen) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int64_t f = 0; f < n_factors && rc == CONCORD_OK; ++f) {
        if (!next_content_line(r, &rc)) {
            if (!rc)
                rc = reader_fail(r, CONCORD_EPARSE, "truncated file: expected %lld factors, found %lld",
                                 (long long)n_factors, (long long)f);
            break;
        }
        if (r->lx.n_tokens > cap) {
            cap = r->lx.n_tokens;
            free(line.vars), free(line.negated), free(line.numbers);
            line.vars = malloc((size_t)cap * sizeof *line.vars);
            line.negated = malloc((size_t)cap * sizeof *line.negated);
            line.numbers = malloc((size_t)cap * sizeof *line.numbers);
            if (!line.vars || !line.negated || !line.numbers) {
                rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
                break;
            }
        }
        rc = read_factor(r, g, n_vars, &line);
    }
    free(line.vars), free(line.negated), free(line.numbers), free(line.seen);
    return rc;
}

/* Reads one graph whose first line (the number of variables) is current.
 * Nothing is allocated for the declared counts before their lines are
 * read: a count the input cannot back ends as a truncated file. */
static int read_graph(reader *r, concord_graph **out) {
    int64_t n_vars, n_factors;
    int rc = parse_count(r, "the number of variables", INT32_MAX, &n_vars);
    if (!rc) rc = read_count(r, "the number of factors", INT32_MAX, &n_factors);
    double *scores = NULL;
    if (!rc) rc = read_scores(r, n_vars, &scores);
    if (rc) return rc;
    concord_graph *g = concord_graph_new();
    if (!g) {
        free(scores);
        return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    }
    rc = concord_add_variables(g, (int32_t)n_vars, scores, NULL);
    free(scores);
    if (rc) rc = reader_fail_graph(r, g);
    if (!rc) rc = read_factors(r, g, n_vars, n_factors);
    if (rc) {
        concord_graph_free(g);
        return rc;
    }
    *out = g;
    return CONCORD_OK;
}

int fg_next(reader *r, concord_graph **g) {
    int rc = CONCORD_OK;
    if (!next_content_line(r, &rc)) return rc; /* the end of the input, or a failure */
    rc = read_graph(r, g);
    if (rc) return rc;
    int got = lexer_next_line(&r->lx);
    if (got < 0) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    if (got > 0 && r->lx.n_tokens > 0) {
        char buf[64];
        reader_warn(r, "ignoring '%s' where a blank line should separate graphs (AD3 skips this line too)",
                    token_text(r->lx.tokens[0], buf, sizeof buf));
    }
    return CONCORD_OK;
}
