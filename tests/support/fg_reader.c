/*
 * The tests' own .fg reader (see fg_reader.h).
 */
#include "fg_reader.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *const type_names[] = {
    [FG_XOR] = "XOR",
    [FG_XOROUT] = "XOROUT",
    [FG_ATMOSTONE] = "ATMOSTONE",
    [FG_OR] = "OR",
    [FG_OROUT] = "OROUT",
    [FG_ANDOUT] = "ANDOUT",
    [FG_IMPLY] = "IMPLY",
    [FG_BUDGET] = "BUDGET",
    [FG_BUDGET_EXACT] = "BUDGET_EXACT",
    [FG_KNAPSACK] = "KNAPSACK",
    [FG_PAIR] = "PAIR",
    [FG_ARBORESCENCE] = "ARBORESCENCE",
    [FG_HEAD_AUTOMATON] = "HEAD_AUTOMATON",
    [FG_GRANDPARENT_HEAD_AUTOMATON] = "GRANDPARENT_HEAD_AUTOMATON",
    [FG_SEQUENCE] = "SEQUENCE",
    [FG_SEQUENCE_BUDGET] = "SEQUENCE_BUDGET",
};
enum { N_TYPES = sizeof type_names / sizeof type_names[0] };

const char *fg_type_name(fg_type type) { return type_names[type]; }

/* ---- growable arrays ---- */

typedef struct buffer {
    void *data;
    size_t used, cap; /* in elements */
} buffer;

/* Room for one more element of `size` bytes; false when out of memory. */
static bool reserve(buffer *b, size_t size) {
    if (b->used < b->cap) return true;
    size_t cap = b->cap ? 2 * b->cap : 64;
    void *more = realloc(b->data, cap * size);
    if (!more) return false;
    b->data = more;
    b->cap = cap;
    return true;
}

static bool push_int(buffer *b, int x) {
    if (!reserve(b, sizeof x)) return false;
    ((int *)b->data)[b->used++] = x;
    return true;
}

static bool push_double(buffer *b, double x) {
    if (!reserve(b, sizeof x)) return false;
    ((double *)b->data)[b->used++] = x;
    return true;
}

static bool push_char(buffer *b, char x) {
    if (!reserve(b, sizeof x)) return false;
    ((char *)b->data)[b->used++] = x;
    return true;
}

/* ---- lines and numbers ---- */

typedef struct line_reader {
    char *p; /* the rest of the (mutable) text */
    const char *name;
    int line;
} line_reader;

static bool only_blank(const char *s) {
    for (; *s; ++s)
        if (*s != ' ' && *s != '\t') return false;
    return true;
}

/* The next line, cut at its newline; NULL at the end of the text. */
static char *raw_line(line_reader *r) {
    if (!*r->p) return NULL;
    char *line = r->p, *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        r->p = nl + 1;
    } else {
        r->p = line + strlen(line);
    }
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r') line[len - 1] = '\0';
    r->line += 1;
    return line;
}

/* The next line with something on it once its comment is cut; NULL at the
 * end of the text. */
static char *content_line(line_reader *r) {
    char *line;
    while ((line = raw_line(r))) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        if (!only_blank(line)) return line;
    }
    return NULL;
}

/* Whether only blank and comment lines remain. */
static bool at_end(const line_reader *r) {
    const char *s = r->p;
    bool in_comment = false;
    for (; *s; ++s) {
        if (*s == '\n') in_comment = false;
        else if (*s == '#') in_comment = true;
        else if (!in_comment && *s != ' ' && *s != '\t' && *s != '\r') return false;
    }
    return true;
}

/* The next integer after *p, moving *p past it. */
static bool next_long(const char **p, long *out) {
    char *end;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (end == *p || errno) return false;
    *out = v;
    *p = end;
    return true;
}

/* The next finite number after *p, moving *p past it. */
static bool next_double(const char **p, double *out) {
    char *end;
    errno = 0;
    double v = strtod(*p, &end);
    if (end == *p || errno || !isfinite(v)) return false;
    *out = v;
    *p = end;
    return true;
}

/* ---- one graph ---- */

typedef struct graph_buffers {
    buffer var, neg, ints, reals, scores;
} graph_buffers;

static int bad(const line_reader *r, const char *what) {
    printf("%s:%d: %s\n", r->name, r->line, what);
    return FG_READ_ERROR;
}

/* n integers of the line into ints, each in [lo, hi]; their sum into *sum
 * (may be NULL). */
static bool read_ints(const char **p, graph_buffers *w, long n, long lo, long hi, long *sum) {
    long total = 0;
    for (long k = 0; k < n; ++k) {
        long x;
        if (!next_long(p, &x) || x < lo || x > hi || !push_int(&w->ints, (int)x)) return false;
        total += x;
    }
    if (sum) *sum = total;
    return true;
}

/* n numbers of the line into `into` (the scores or the reals), each >= lo. */
static bool read_doubles(const char **p, buffer *into, long n, double lo) {
    for (long k = 0; k < n; ++k) {
        double x;
        if (!next_double(p, &x) || x < lo || !push_double(into, x)) return false;
    }
    return true;
}

static bool read_scores(const char **p, graph_buffers *w, long n) {
    return read_doubles(p, &w->scores, n, -INFINITY);
}

static bool negatable(fg_type t) { return t <= FG_KNAPSACK; }

/* The factor on `line` (its type already known) into the buffers. */
static int read_factor(line_reader *r, const fg_graph *g, fg_type t, const char *p,
                       graph_buffers *w) {
    long degree;
    long min_degree = t == FG_HEAD_AUTOMATON ? 0 : t == FG_OROUT || t == FG_ANDOUT || t == FG_PAIR ? 2 : 1;
    if (!next_long(&p, &degree) || degree < min_degree || degree > g->n_vars ||
        (t == FG_PAIR && degree != 2))
        return bad(r, "bad degree");
    size_t first = w->var.used;
    for (long j = 0; j < degree; ++j) {
        long index;
        if (!next_long(&p, &index) || index == 0 || labs(index) > g->n_vars ||
            (index < 0 && !negatable(t)))
            return bad(r, "bad variable index");
        int v = (int)labs(index) - 1;
        for (size_t k = first; k < w->var.used; ++k)
            if (((int *)w->var.data)[k] == v) return bad(r, "a variable twice in one factor");
        if (!push_int(&w->var, v) || !push_char(&w->neg, index < 0)) return FG_READ_ERROR;
    }
    long x, sum;
    switch (t) {
    case FG_BUDGET:
    case FG_BUDGET_EXACT:
        if (!read_ints(&p, w, 1, 0, t == FG_BUDGET_EXACT ? degree : 1L << 30, NULL))
            return bad(r, "bad budget");
        break;
    case FG_KNAPSACK:
        if (!read_doubles(&p, &w->reals, degree + 1, 0.0))
            return bad(r, "expected D costs and a budget, all >= 0");
        break;
    case FG_PAIR:
        if (!read_scores(&p, w, 1)) return bad(r, "expected the PAIR score");
        break;
    case FG_ARBORESCENCE: {
        if (!read_ints(&p, w, 1, 2, 1L << 20, NULL)) return bad(r, "bad LENGTH");
        long length = ((int *)w->ints.data)[w->ints.used - 1];
        for (long a = 0; a < degree; ++a) {
            long h, m;
            if (!next_long(&p, &h) || !next_long(&p, &m) || h < 0 || h >= length || m < 1 ||
                m >= length || h == m || !push_int(&w->ints, (int)h) || !push_int(&w->ints, (int)m))
                return bad(r, "bad arc");
        }
        break;
    }
    case FG_HEAD_AUTOMATON:
        if (!read_scores(&p, w, (degree + 1) * (degree + 2) / 2))
            return bad(r, "expected (D+1)(D+2)/2 scores");
        break;
    case FG_GRANDPARENT_HEAD_AUTOMATON: {
        if (!read_ints(&p, w, 1, 1, degree, &x)) return bad(r, "bad number of grandparents");
        long n = degree - x;
        if (!read_scores(&p, w, x * n + (n + 1) * (n + 2) / 2))
            return bad(r, "expected G*N + (N+1)(N+2)/2 scores");
        break;
    }
    case FG_SEQUENCE:
    case FG_SEQUENCE_BUDGET: {
        long length;
        if (!next_long(&p, &length) || length < 1 || length > degree || !push_int(&w->ints, (int)length))
            return bad(r, "bad sequence length");
        if (t == FG_SEQUENCE_BUDGET && !read_ints(&p, w, 1, 0, 1L << 20, NULL))
            return bad(r, "bad budget");
        size_t first_state = w->ints.used;
        if (!read_ints(&p, w, length, 1, degree, &sum) || sum != degree)
            return bad(r, "the state counts must add up to the degree");
        const int *k = (const int *)w->ints.data + first_state;
        long n_scores = k[0] + k[length - 1];
        for (long q = 1; q < length; ++q) n_scores += (long)k[q - 1] * k[q];
        if (!read_scores(&p, w, n_scores)) return bad(r, "missing transition scores");
        break;
    }
    default: break;
    }
    if (!only_blank(p)) return bad(r, "unexpected fields at the end of the factor");
    return FG_READ_OK;
}

static void free_graph(fg_graph *g) {
    free(g->theta);
    free(g->type);
    free(g->start);
    free(g->var);
    free(g->neg);
    free(g->int_start);
    free(g->ints);
    free(g->real_start);
    free(g->reals);
    free(g->score_start);
    free(g->scores);
    memset(g, 0, sizeof *g);
}

static int read_graph(line_reader *r, fg_graph *g) {
    memset(g, 0, sizeof *g);
    const char *line;
    long n, m;
    if (!(line = content_line(r)) || !next_long(&line, &n) || n < 0 || !only_blank(line) ||
        !(line = content_line(r)) || !next_long(&line, &m) || m < 0 || !only_blank(line))
        return bad(r, "expected the numbers of variables and factors");
    g->n_vars = (int)n;
    g->n_factors = (int)m;
    g->theta = calloc((size_t)n + 1, sizeof *g->theta);
    g->type = calloc((size_t)m + 1, sizeof *g->type);
    g->start = calloc((size_t)m + 1, sizeof *g->start);
    g->int_start = calloc((size_t)m + 1, sizeof *g->int_start);
    g->real_start = calloc((size_t)m + 1, sizeof *g->real_start);
    g->score_start = calloc((size_t)m + 1, sizeof *g->score_start);
    if (!g->theta || !g->type || !g->start || !g->int_start || !g->real_start || !g->score_start)
        return FG_READ_ERROR;
    for (long i = 0; i < n; ++i)
        if (!(line = content_line(r)) || !next_double(&line, &g->theta[i]) || !only_blank(line))
            return bad(r, "expected a variable's score");
    graph_buffers w;
    memset(&w, 0, sizeof w);
    int rc = FG_READ_OK;
    for (long f = 0; f < m && rc == FG_READ_OK; ++f) {
        char *text = content_line(r);
        if (!text) {
            rc = bad(r, "missing factors");
            break;
        }
        char *save, *word = strtok_r(text, " \t", &save);
        int t = 0;
        while (t < N_TYPES && strcmp(word, type_names[t])) ++t;
        if (t == N_TYPES) {
            printf("%s:%d: factor type %s is not read by the tests' reader\n", r->name, r->line,
                   word);
            rc = FG_READ_UNSUPPORTED;
            break;
        }
        g->type[f] = (fg_type)t;
        g->start[f] = (int)w.var.used;
        g->int_start[f] = (int)w.ints.used;
        g->real_start[f] = (int)w.reals.used;
        g->score_start[f] = (int)w.scores.used;
        rc = read_factor(r, g, (fg_type)t, save, &w);
    }
    g->start[m] = (int)w.var.used;
    g->int_start[m] = (int)w.ints.used;
    g->real_start[m] = (int)w.reals.used;
    g->score_start[m] = (int)w.scores.used;
    g->n_additionals = (int)w.scores.used;
    g->var = w.var.data;
    g->neg = w.neg.data;
    g->ints = w.ints.data;
    g->reals = w.reals.data;
    g->scores = w.scores.data;
    return rc;
}

int fg_read_text(const char *text, const char *name, fg_graph **graphs, int *count) {
    *graphs = NULL;
    *count = 0;
    char *copy = strdup(text);
    if (!copy) return FG_READ_ERROR;
    line_reader r = {copy, name, 0};
    int rc = FG_READ_OK;
    buffer list = {0};
    while (rc == FG_READ_OK && !at_end(&r)) {
        if (!reserve(&list, sizeof(fg_graph))) {
            rc = FG_READ_ERROR;
            break;
        }
        fg_graph *g = (fg_graph *)list.data + list.used++;
        rc = read_graph(&r, g);
        const char *separator = raw_line(&r);
        if (rc == FG_READ_OK && separator && !only_blank(separator))
            printf("%s:%d: skipping '%s' after graph %zu (AD3 swallows this line)\n", name, r.line,
                   separator, list.used);
    }
    free(copy);
    if (rc == FG_READ_OK && list.used == 0) rc = bad(&r, "no graph");
    if (rc != FG_READ_OK) {
        fg_free_graphs(list.data, (int)list.used);
        return rc;
    }
    *graphs = list.data;
    *count = (int)list.used;
    return FG_READ_OK;
}

int fg_read_path(const char *path, fg_graph **graphs, int *count) {
    char *text = read_whole_file(path, NULL);
    if (!text) {
        *graphs = NULL;
        *count = 0;
        printf("cannot read %s\n", path);
        return FG_READ_ERROR;
    }
    int rc = fg_read_text(text, path, graphs, count);
    free(text);
    return rc;
}

void fg_free_graphs(fg_graph *graphs, int count) {
    for (int k = 0; k < count; ++k) free_graph(&graphs[k]);
    free(graphs);
}
