/*
 * Reader for UAI competition models (MARKOV and BAYES) and evidence files
 * (see docs/formats.md).
 *
 * A model lists N variables with their cardinalities, C function scopes,
 * then C tables of non-negative potentials (row-major, the last variable of
 * the scope changing fastest). Scores are natural logs of the entries. A
 * state is removed from its variable when the evidence fixes another state
 * or when a unary table gives it probability zero; tables are then sliced
 * to the remaining states, and zero entries of larger tables become
 * forbidden joint states of a DENSE factor. Each UAI variable becomes one
 * multi-variable labelled with its remaining original states, in order, so
 * that decoded states map back to the file's numbering. Unary tables add to
 * the state scores (all of them, not just the last); a variable in no
 * larger table gets an XOR for its one-hot constraint.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../graph.h"
#include "readers.h"

typedef struct uai_model {
    int32_t n_vars;
    int32_t *card;
    int32_t n_funcs;
    int32_t *scope_size;
    int32_t **scope;
    double **table;      /* potentials as read */
    int64_t *table_size;
    int64_t *table_line; /* where each table starts, for messages */
} uai_model;

static void model_free(uai_model *m) {
    for (int32_t f = 0; f < m->n_funcs; ++f) {
        if (m->scope) free(m->scope[f]);
        if (m->table) free(m->table[f]);
    }
    free(m->card);
    free(m->scope_size);
    free(m->scope);
    free(m->table);
    free(m->table_size);
    free(m->table_line);
}

/* Grows *array (of `size`-byte elements, capacity *cap) to hold `need`;
 * arrays grow with what the file actually contains, so a huge declared
 * count in a short file is a truncation error, not a huge allocation. */
static int grow(void **array, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return 0;
    int64_t next = *cap ? 2 * *cap : 16;
    while (next < need) next *= 2;
    void *p = realloc(*array, (size_t)next * size);
    if (!p) return -1;
    *array = p;
    *cap = next;
    return 0;
}

/* The next token as an integer in [lo, hi]. */
static int next_int(reader *r, const char *what, int64_t lo, int64_t hi, int64_t *out) {
    text_token t;
    char buf[64];
    if (!lexer_next_token(&r->lx, &t))
        return reader_fail(r, CONCORD_EPARSE, "truncated file: expected %s", what);
    if (token_to_int(t, out) || *out < lo || *out > hi)
        return reader_fail(r, CONCORD_EPARSE, "expected %s (an integer in [%lld, %lld]), found '%s'",
                           what, (long long)lo, (long long)hi, token_text(t, buf, sizeof buf));
    return CONCORD_OK;
}

/* The most states a model may declare in all: its size in bytes, or this
 * many when it is smaller. */
enum { UAI_STATES_FLOOR = 1 << 16 };

static int read_header(reader *r, uai_model *m) {
    text_token t;
    char buf[64];
    if (!lexer_next_token(&r->lx, &t))
        return reader_fail(r, CONCORD_EPARSE, "empty file: expected MARKOV or BAYES");
    if (!((t.len == 6 && memcmp(t.s, "MARKOV", 6) == 0) ||
          (t.len == 5 && memcmp(t.s, "BAYES", 5) == 0)))
        return reader_fail(r, CONCORD_EPARSE, "expected MARKOV or BAYES, found '%s'",
                           token_text(t, buf, sizeof buf));
    int64_t n;
    int rc = next_int(r, "the number of variables", 1, INT32_MAX, &n);
    if (rc) return rc;
    /* Every state of a variable needs an entry in some table, so the
     * states cannot outnumber the model's bytes (a floor leaves room for
     * small models with variables in no table): a cardinality the input
     * cannot back is an error here, not a huge allocation later. */
    const int64_t max_states = r->size > UAI_STATES_FLOOR ? (int64_t)r->size : UAI_STATES_FLOOR;
    int64_t cap = 0, total = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t k;
        rc = next_int(r, "a cardinality", 1, INT32_MAX, &k);
        if (rc) return rc;
        total += k;
        if (total > max_states)
            return reader_fail(r, CONCORD_EPARSE,
                               "variable %lld has %lld states, %lld in all with the variables "
                               "before it: more than a model of %zu bytes can describe",
                               (long long)i, (long long)k, (long long)total, r->size);
        if (grow((void **)&m->card, &cap, i + 1, sizeof *m->card))
            return reader_fail(r, CONCORD_ENOMEM, "out of memory");
        m->card[i] = (int32_t)k;
    }
    m->n_vars = (int32_t)n;
    return CONCORD_OK;
}

enum { UAI_MAX_TABLE = 1 << 24 };

/* Makes room for function f in the per-function arrays. */
static int room_for_function(uai_model *m, int64_t f, int64_t *cap) {
    if (f < *cap) return 0;
    int64_t next = *cap ? 2 * *cap : 16;
    size_t n = (size_t)next;
    int32_t *size = realloc(m->scope_size, n * sizeof *size);
    if (size) m->scope_size = size;
    int32_t **scope = realloc(m->scope, n * sizeof *scope);
    if (scope) m->scope = scope;
    double **table = realloc(m->table, n * sizeof *table);
    if (table) m->table = table;
    int64_t *table_size = realloc(m->table_size, n * sizeof *table_size);
    if (table_size) m->table_size = table_size;
    int64_t *line = realloc(m->table_line, n * sizeof *line);
    if (line) m->table_line = line;
    if (!size || !scope || !table || !table_size || !line) return -1;
    *cap = next;
    return 0;
}

/* Reads the scope of function f. */
static int read_scope(reader *r, uai_model *m, int32_t f) {
    int64_t size;
    int rc = next_int(r, "a scope size", 1, m->n_vars, &size);
    if (rc) return rc;
    m->scope_size[f] = (int32_t)size;
    m->scope[f] = malloc((size_t)size * sizeof(int32_t));
    if (!m->scope[f]) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    int64_t entries = 1;
    for (int32_t j = 0; j < size; ++j) {
        int64_t v;
        rc = next_int(r, "a variable of the scope", 0, (int64_t)m->n_vars - 1, &v);
        if (rc) return rc;
        for (int32_t k = 0; k < j; ++k)
            if (m->scope[f][k] == v)
                return reader_fail(r, CONCORD_EPARSE,
                                   "function %d: variable %lld appears twice in its scope", f,
                                   (long long)v);
        m->scope[f][j] = (int32_t)v;
        entries *= m->card[v];
        if (entries > UAI_MAX_TABLE)
            return reader_fail(r, CONCORD_EPARSE, "function %d: table larger than %d entries", f,
                               UAI_MAX_TABLE);
    }
    m->table_size[f] = entries;
    return CONCORD_OK;
}

static int read_scopes(reader *r, uai_model *m) {
    int64_t c, cap = 0;
    int rc = next_int(r, "the number of functions", 0, INT32_MAX, &c);
    for (int64_t f = 0; f < c && !rc; ++f) {
        if (room_for_function(m, f, &cap)) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
        m->scope[f] = NULL;
        m->table[f] = NULL;
        m->n_funcs = (int32_t)f + 1;
        rc = read_scope(r, m, (int32_t)f);
    }
    return rc;
}

static int read_tables(reader *r, uai_model *m) {
    for (int32_t f = 0; f < m->n_funcs; ++f) {
        int64_t count;
        int rc = next_int(r, "the number of table entries", 0, INT64_MAX, &count);
        if (rc) return rc;
        m->table_line[f] = r->lx.line;
        if (count != m->table_size[f])
            return reader_fail(r, CONCORD_EPARSE,
                               "function %d: the table has %lld entries, its scope needs %lld", f,
                               (long long)count, (long long)m->table_size[f]);
        int64_t cap = 0;
        for (int64_t e = 0; e < count; ++e) {
            if (grow((void **)&m->table[f], &cap, e + 1, sizeof(double)))
                return reader_fail(r, CONCORD_ENOMEM, "out of memory");
            text_token t;
            char buf[64];
            double x;
            if (!lexer_next_token(&r->lx, &t))
                return reader_fail(r, CONCORD_EPARSE,
                                   "truncated file: function %d has %lld of its %lld entries", f,
                                   (long long)e, (long long)count);
            const int parsed = token_to_double(t, &x);
            if (parsed == TOKEN_UNDERFLOW)
                return reader_fail(r, CONCORD_EPARSE,
                                   "function %d: entry '%s' " TOKEN_UNDERFLOW_TEXT
                                   " (write 0 for a state that is impossible)",
                                   f, token_text(t, buf, sizeof buf));
            if (parsed == TOKEN_OVERFLOW)
                return reader_fail(r, CONCORD_EPARSE, "function %d: entry '%s' " TOKEN_OVERFLOW_TEXT,
                                   f, token_text(t, buf, sizeof buf));
            if (parsed || !isfinite(x))
                return reader_fail(r, CONCORD_EPARSE, "function %d: entry '%s' is not a finite decimal number",
                                   f, token_text(t, buf, sizeof buf));
            if (x < 0.0)
                return reader_fail(r, CONCORD_EPARSE, "function %d: negative potential %s", f,
                                   token_text(t, buf, sizeof buf));
            m->table[f][e] = x;
        }
    }
    text_token t;
    if (lexer_next_token(&r->lx, &t)) {
        char buf[64];
        return reader_fail(r, CONCORD_EPARSE, "unexpected '%s' after the last table",
                           token_text(t, buf, sizeof buf));
    }
    return CONCORD_OK;
}

/* Evidence: "E v1 x1 ... vE xE", or the older layout with a leading number
 * of samples (only one sample is accepted). Sets observed[v] = x. */
static int read_evidence(reader *r, const uai_model *m, int32_t *observed) {
    int64_t first;
    text_token t;
    if (!lexer_next_token(&r->lx, &t)) return CONCORD_OK; /* empty: no evidence */
    if (token_to_int(t, &first) || first < 0)
        return reader_fail(r, CONCORD_EPARSE, "expected the number of observed variables");
    /* Count the tokens to tell the two layouts apart. */
    text_lexer probe = r->lx;
    int64_t rest = 0;
    while (lexer_next_token(&probe, &t)) ++rest;
    int64_t n_obs = first;
    if (rest % 2 != 0 || rest / 2 != first) {
        if (first != 1)
            return reader_fail(r, CONCORD_EPARSE,
                               "expected %lld (variable, value) pairs after the count, found %lld "
                               "values (or, in the older layout, one sample: 1, then a count and "
                               "its pairs)",
                               (long long)first, (long long)rest);
        int rc = next_int(r, "the number of observed variables", 0, m->n_vars, &n_obs);
        if (rc) return rc;
        if ((rest - 1) % 2 != 0 || (rest - 1) / 2 != n_obs)
            return reader_fail(r, CONCORD_EPARSE,
                               "the count 1 is followed by %lld values: neither one (variable, "
                               "value) pair nor, in the older layout (one sample), a count and "
                               "that many pairs (here %lld, followed by %lld values)",
                               (long long)rest, (long long)n_obs, (long long)(rest - 1));
    }
    for (int64_t k = 0; k < n_obs; ++k) {
        int64_t v, x;
        int rc = next_int(r, "an observed variable", 0, (int64_t)m->n_vars - 1, &v);
        if (rc) return rc;
        rc = next_int(r, "an observed value", 0, (int64_t)m->card[v] - 1, &x);
        if (rc) return rc;
        if (observed[v] >= 0 && observed[v] != x)
            return reader_fail(r, CONCORD_EPARSE, "variable %lld is observed twice with different values",
                               (long long)v);
        observed[v] = (int32_t)x;
    }
    return CONCORD_OK;
}

typedef struct uai_states {
    int32_t *first_state; /* per variable: offset into the state arrays */
    int32_t *new_index;   /* per original state: its index among the kept, or -1 */
    double *score;        /* per original state: summed log unary potentials */
    int32_t *kept;        /* per variable: number of kept states */
    uint8_t *in_table;    /* per variable: in some table of two or more */
} uai_states;

static void states_free(uai_states *s) {
    free(s->first_state);
    free(s->new_index);
    free(s->score);
    free(s->kept);
    free(s->in_table);
}

/* Decides which states survive the evidence and the zeros of unary tables,
 * and sums the unary log potentials. */
static int choose_states(reader *r, const uai_model *m, const int32_t *observed, uai_states *s) {
    size_t nv = (size_t)m->n_vars;
    int64_t total = 0;
    s->first_state = malloc(nv * sizeof(int32_t));
    s->kept = calloc(nv, sizeof(int32_t));
    s->in_table = calloc(nv, 1);
    if (!s->first_state || !s->kept || !s->in_table) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int32_t i = 0; i < m->n_vars; ++i) {
        s->first_state[i] = (int32_t)total;
        total += m->card[i];
        if (total > INT32_MAX) return reader_fail(r, CONCORD_EPARSE, "too many states in all");
    }
    s->new_index = malloc((size_t)total * sizeof(int32_t));
    s->score = calloc((size_t)(total ? total : 1), sizeof(double));
    if (!s->new_index || !s->score) return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int64_t k = 0; k < total; ++k) s->new_index[k] = 0;
    for (int32_t i = 0; i < m->n_vars; ++i)
        if (observed[i] >= 0)
            for (int32_t x = 0; x < m->card[i]; ++x)
                if (x != observed[i]) s->new_index[s->first_state[i] + x] = -1;
    for (int32_t f = 0; f < m->n_funcs; ++f) {
        if (m->scope_size[f] > 1) {
            for (int32_t j = 0; j < m->scope_size[f]; ++j) s->in_table[m->scope[f][j]] = 1;
            continue;
        }
        int32_t i = m->scope[f][0];
        for (int32_t x = 0; x < m->card[i]; ++x) {
            double p = m->table[f][x];
            if (p == 0.0) s->new_index[s->first_state[i] + x] = -1;
            else s->score[s->first_state[i] + x] += log(p);
        }
    }
    for (int32_t i = 0; i < m->n_vars; ++i) {
        for (int32_t x = 0; x < m->card[i]; ++x) {
            int32_t *slot = &s->new_index[s->first_state[i] + x];
            if (*slot >= 0) *slot = s->kept[i]++;
        }
        if (s->kept[i] == 0) {
            r->lx.line = 0;
            return reader_fail(r, CONCORD_EINFEASIBLE,
                               "variable %d has no possible state left (evidence and zero "
                               "potentials exclude all %d)",
                               i, m->card[i]);
        }
    }
    return CONCORD_OK;
}

static int add_variables(reader *r, concord_graph *g, const uai_model *m, const uai_states *s,
                         int32_t *first_var) {
    int32_t max_card = 1;
    for (int32_t i = 0; i < m->n_vars; ++i)
        if (m->card[i] > max_card) max_card = m->card[i];
    double *scores = malloc((size_t)max_card * sizeof *scores);
    int32_t *labels = malloc((size_t)max_card * sizeof *labels);
    int rc = scores && labels ? CONCORD_OK : reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int32_t i = 0; i < m->n_vars && !rc; ++i) {
        for (int32_t x = 0; x < m->card[i]; ++x) {
            int32_t k = s->new_index[s->first_state[i] + x];
            if (k < 0) continue;
            scores[k] = s->score[s->first_state[i] + x];
            labels[k] = x;
        }
        if (graph_add_multi_variable(g, s->kept[i], scores, !s->in_table[i], labels,
                                     &first_var[i]))
            rc = reader_fail_graph(r, g);
    }
    free(scores);
    free(labels);
    return rc;
}

/* One DENSE factor per table of two or more variables, sliced to the kept
 * states; zero entries become forbidden joint states. */
static int add_tables(reader *r, concord_graph *g, const uai_model *m, const uai_states *s,
                      const int32_t *first_var) {
    int rc = CONCORD_OK;
    for (int32_t f = 0; f < m->n_funcs && !rc; ++f) {
        int32_t n = m->scope_size[f];
        if (n < 2) continue;
        const int32_t *scope = m->scope[f];
        int64_t entries = 1, degree = 0;
        int32_t *states = malloc((size_t)n * sizeof *states);
        int32_t *digit = calloc((size_t)n, sizeof *digit);
        for (int32_t j = 0; j < n && states; ++j) {
            states[j] = s->kept[scope[j]];
            entries *= states[j];
            degree += states[j];
        }
        int32_t *vars = malloc((size_t)degree * sizeof *vars);
        double *table = malloc((size_t)entries * sizeof *table);
        if (!states || !digit || !vars || !table) {
            rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
        } else {
            for (int32_t j = 0, at = 0; j < n; ++j)
                for (int32_t k = 0; k < states[j]; ++k) vars[at++] = first_var[scope[j]] + k;
            /* Walk the original table with an odometer; keep the entries
             * whose states all survive, in the same row-major order. */
            int64_t out = 0, allowed = 0;
            for (int64_t e = 0; e < m->table_size[f]; ++e) {
                int keep = 1;
                for (int32_t j = 0; j < n && keep; ++j)
                    keep = s->new_index[s->first_state[scope[j]] + digit[j]] >= 0;
                if (keep) {
                    double p = m->table[f][e];
                    table[out++] = p > 0.0 ? log(p) : -INFINITY;
                    allowed += p > 0.0;
                }
                for (int32_t j = n - 1; j >= 0; --j) {
                    if (++digit[j] < m->card[scope[j]]) break;
                    digit[j] = 0;
                }
            }
            if (allowed == 0) {
                r->lx.line = m->table_line[f];
                rc = reader_fail(r, CONCORD_EINFEASIBLE,
                                 "function %d gives probability zero to every state the "
                                 "evidence and the unary tables allow",
                                 f);
            } else if (concord_add_dense(g, n, states, vars, table, NULL)) {
                rc = reader_fail_graph(r, g);
            }
        }
        free(states);
        free(digit);
        free(vars);
        free(table);
    }
    return rc;
}

/* Keeps, in the reader, where each state of each UAI variable went (for
 * concord_reader_uai_states). */
static int record_states(reader *r, const uai_model *m, const uai_states *s,
                         const int32_t *first_var) {
    size_t nv = (size_t)m->n_vars;
    int64_t total = s->first_state[nv - 1] + m->card[nv - 1];
    free(r->uai_card);
    free(r->uai_first);
    free(r->uai_state_var);
    r->uai_vars = 0;
    r->uai_card = malloc(nv * sizeof *r->uai_card);
    r->uai_first = malloc(nv * sizeof *r->uai_first);
    r->uai_state_var = malloc((size_t)total * sizeof *r->uai_state_var);
    if (!r->uai_card || !r->uai_first || !r->uai_state_var)
        return reader_fail(r, CONCORD_ENOMEM, "out of memory");
    for (int32_t i = 0; i < m->n_vars; ++i) {
        r->uai_card[i] = m->card[i];
        r->uai_first[i] = s->first_state[i];
        for (int32_t x = 0; x < m->card[i]; ++x) {
            int32_t k = s->new_index[s->first_state[i] + x];
            r->uai_state_var[s->first_state[i] + x] = k < 0 ? -1 : first_var[i] + k;
        }
    }
    r->uai_vars = m->n_vars;
    return CONCORD_OK;
}

static int build_graph(reader *r, const uai_model *m, const int32_t *observed,
                       concord_graph **out) {
    uai_states s = {0};
    int32_t *first_var = malloc((size_t)m->n_vars * sizeof *first_var);
    concord_graph *g = concord_graph_new();
    int rc = first_var && g ? CONCORD_OK : reader_fail(r, CONCORD_ENOMEM, "out of memory");
    if (!rc) rc = choose_states(r, m, observed, &s);
    if (!rc) rc = add_variables(r, g, m, &s, first_var);
    if (!rc) rc = add_tables(r, g, m, &s, first_var);
    if (!rc) rc = record_states(r, m, &s, first_var);
    states_free(&s);
    free(first_var);
    if (rc) {
        concord_graph_free(g);
        return rc;
    }
    *out = g;
    return CONCORD_OK;
}

/* Reads the model in r, with the evidence in r->evidence (NULL: none):
 * one graph, then the end. */
int uai_next(reader *r, concord_graph **out) {
    if (r->graphs_read > 0) return CONCORD_OK;
    uai_model m = {0};
    int32_t *observed = NULL;
    int rc = read_header(r, &m);
    if (!rc) rc = read_scopes(r, &m);
    if (!rc) rc = read_tables(r, &m);
    if (!rc) {
        observed = malloc((size_t)m.n_vars * sizeof *observed);
        if (!observed) rc = reader_fail(r, CONCORD_ENOMEM, "out of memory");
        for (int32_t i = 0; i < m.n_vars && observed; ++i) observed[i] = -1;
    }
    if (!rc && r->evidence) rc = read_evidence(r->evidence, &m, observed);
    if (!rc) rc = build_graph(r, &m, observed, out);
    free(observed);
    model_free(&m);
    return rc;
}
