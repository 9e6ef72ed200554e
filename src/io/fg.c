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
        if (r->lx.n_tokens != 1 || token_to_double(t, &x[i])) {
            free(x);
            return reader_fail(r, CONCORD_EPARSE, "expected the score of variable %lld, found '%s'%s",
                               (long long)i + 1, token_text(t, buf, sizeof buf),
                               r->lx.n_tokens > 1 ? " and more" : "");
        }
        if (!isfinite(x[i])) {
            free(x);
            return reader_fail(r, CONCORD_EPARSE, "score of variable %lld is not finite (%s)",
                               (long long)i + 1, token_text(t, buf, sizeof buf));
        }
    }
    *scores = x;
    return CONCORD_OK;
}

typedef enum kind_of_type { KIND_LOGIC, KIND_BUDGET, KIND_KNAPSACK, KIND_PAIR } kind_of_type;

typedef struct fg_type {
    const char *name;
    kind_of_type kind;
    int logic;   /* concord_logic for KIND_LOGIC */
    int exact;   /* KIND_BUDGET */
} fg_type;

static const fg_type fg_types[] = {
    {"XOR", KIND_LOGIC, CONCORD_XOR, 0},
    {"XOROUT", KIND_LOGIC, CONCORD_XOROUT, 0},
    {"ATMOSTONE", KIND_LOGIC, CONCORD_ATMOSTONE, 0},
    {"OR", KIND_LOGIC, CONCORD_OR, 0},
    {"OROUT", KIND_LOGIC, CONCORD_OROUT, 0},
    {"ANDOUT", KIND_LOGIC, CONCORD_ANDOUT, 0},
    {"IMPLY", KIND_LOGIC, CONCORD_IMPLY, 0},
    {"BUDGET", KIND_BUDGET, 0, 0},
    {"BUDGET_EXACT", KIND_BUDGET, 0, 1},
    {"KNAPSACK", KIND_KNAPSACK, 0, 0},
    {"PAIR", KIND_PAIR, 0, 0},
};

static const fg_type *find_type(text_token t) {
    for (size_t k = 0; k < sizeof fg_types / sizeof fg_types[0]; ++k)
        if (strlen(fg_types[k].name) == (size_t)t.len &&
            memcmp(fg_types[k].name, t.s, (size_t)t.len) == 0)
            return &fg_types[k];
    return NULL;
}

/* Parameters after the links: how many tokens each kind expects. */
static int64_t param_count(const fg_type *type, int64_t degree) {
    switch (type->kind) {
    case KIND_LOGIC: return 0;
    case KIND_BUDGET: return 1;
    case KIND_KNAPSACK: return degree + 1;
    case KIND_PAIR: return 1;
    }
    return 0;
}

static int parse_number(reader *r, text_token t, const char *what, double *out) {
    char buf[64];
    if (token_to_double(t, out) || !isfinite(*out))
        return reader_fail(r, CONCORD_EPARSE, "expected %s (a finite number), found '%s'", what,
                           token_text(t, buf, sizeof buf));
    return CONCORD_OK;
}

static int read_factor(reader *r, concord_graph *g, int64_t n_vars, int32_t *vars,
                       bool *negated, double *numbers) {
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
    if (degree == 0) return reader_fail(r, CONCORD_EPARSE, "%s factor with no variables", type->name);
    int64_t expected = 2 + degree + param_count(type, degree);
    if (r->lx.n_tokens != expected)
        return reader_fail(r, CONCORD_EPARSE,
                           "%s factor of degree %lld: expected %lld fields after the type, found %d",
                           type->name, (long long)degree, (long long)expected - 1,
                           r->lx.n_tokens - 1);
    if (type->kind == KIND_PAIR && degree != 2)
        return reader_fail(r, CONCORD_EPARSE, "PAIR factor must have degree 2, not %lld",
                           (long long)degree);
    for (int64_t j = 0; j < degree; ++j) {
        int64_t index;
        text_token t = tok[2 + j];
        if (token_to_int(t, &index))
            return reader_fail(r, CONCORD_EPARSE, "%s factor: variable index '%s' is not an integer",
                               type->name, token_text(t, buf, sizeof buf));
        int neg = t.s[0] == '-';
        if (neg) index = -index;
        if (neg && type->kind == KIND_PAIR)
            return reader_fail(r, CONCORD_EPARSE,
                               "PAIR factor: variable index %s is negated; PAIR links cannot be "
                               "negated (AD3 drops the sign silently)",
                               token_text(t, buf, sizeof buf));
        if (index < 1 || index > n_vars)
            return reader_fail(r, CONCORD_EPARSE,
                               "%s factor: variable index %s out of range [1, %lld] (1-based)",
                               type->name, token_text(t, buf, sizeof buf), (long long)n_vars);
        vars[j] = (int32_t)(index - 1);
        negated[j] = neg;
    }
    int64_t n_params = param_count(type, degree);
    for (int64_t k = 0; k < n_params; ++k) {
        int rc = parse_number(r, tok[2 + degree + k],
                              type->kind == KIND_PAIR ? "the PAIR score"
                              : k == n_params - 1     ? "the budget"
                                                      : "a cost",
                              &numbers[k]);
        if (rc) return rc;
    }
    int rc = CONCORD_OK;
    int32_t d = (int32_t)degree;
    switch (type->kind) {
    case KIND_LOGIC:
        rc = concord_add_logic(g, (concord_logic)type->logic, d, vars, negated, NULL);
        break;
    case KIND_BUDGET:
        rc = concord_add_budget(g, d, vars, negated, numbers[0], type->exact, NULL);
        break;
    case KIND_KNAPSACK:
        rc = concord_add_knapsack(g, d, vars, negated, numbers, numbers[degree], NULL);
        break;
    case KIND_PAIR: rc = concord_add_pair(g, vars[0], vars[1], numbers[0], NULL); break;
    }
    return rc == CONCORD_OK ? CONCORD_OK : reader_fail_graph(r, g);
}

static int read_factors(reader *r, concord_graph *g, int64_t n_vars, int64_t n_factors) {
    int32_t *vars = NULL;
    bool *negated = NULL;
    double *numbers = NULL;
    int32_t cap = 0;
    int rc = CONCORD_OK;
    for (int64_t f = 0; f < n_factors && rc == CONCORD_OK; ++f) {
        if (!next_content_line(r, &rc)) {
            if (!rc)
                rc = reader_fail(r, CONCORD_EPARSE, "truncated file: expected %lld factors, found %lld",
                                 (long long)n_factors, (long long)f);
            break;
        }
        if (r->lx.n_tokens > cap) {
            cap = r->lx.n_tokens;
            free(vars), free(negated), free(numbers);
            vars = malloc((size_t)cap * sizeof *vars);
            negated = malloc((size_t)cap * sizeof *negated);
            numbers = malloc((size_t)cap * sizeof *numbers);
            if (!vars || !negated || !numbers) {
                rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
                break;
            }
        }
        rc = read_factor(r, g, n_vars, vars, negated, numbers);
    }
    free(vars), free(negated), free(numbers);
    return rc;
}

/* Reads one graph whose first line (the number of variables) is current. */
static int read_graph(reader *r) {
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
    return reader_push_graph(r, g);
}

int fg_read(reader *r) {
    for (;;) {
        int rc = CONCORD_OK;
        if (!next_content_line(r, &rc)) return rc;
        rc = read_graph(r);
        if (rc) return rc;
        int got = lexer_next_line(&r->lx);
        if (got < 0) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
        if (got > 0 && r->lx.n_tokens > 0) {
            char buf[64];
            reader_warn(r, "ignoring '%s' where a blank line should separate graphs (AD3 skips this line too)",
                        token_text(r->lx.tokens[0], buf, sizeof buf));
        }
    }
}
