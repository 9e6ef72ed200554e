/*
 * The extended formulations of ref_extended_lp.h, solved by GLPK.
 */
#include "ref_extended_lp.h"

#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * The H-representation of the logic factors
 * ------------------------------------------------------------------------ */

void hrep_free(hrep *h) {
    free(h->rows);
    free(h->var_pool);
    free(h->neg_pool);
    free(h->a_pool);
    memset(h, 0, sizeof *h);
}

/* A row of n terms (filled by set_term) with the pools sized up front by
 * hrep_build. */
static hrow *hrep_row(hrep *h, int n, int sense, double b) {
    hrow *r = &h->rows[h->n_rows++];
    r->n = n;
    r->var = h->var_pool + h->pool_used;
    r->neg = h->neg_pool + h->pool_used;
    r->a = h->a_pool + h->pool_used;
    h->pool_used += (size_t)n;
    r->sense = sense;
    r->b = b;
    return r;
}

static void set_term(hrow *r, int k, int var, bool neg, double a) {
    r->var[k] = var;
    r->neg[k] = (char)neg;
    r->a[k] = a;
}

/* lit_i <= lit_D (sign +1: OROUT) or lit_D <= lit_i (sign -1: ANDOUT) for
 * each input i of the factor's d links. */
static void output_bounds(hrep *h, int d, const int *v, const char *ng, double sign) {
    for (int j = 0; j < d - 1; ++j) {
        hrow *r = hrep_row(h, 2, -1, 0.0);
        set_term(r, 0, v[j], ng[j], sign);
        set_term(r, 1, v[d - 1], ng[d - 1], -sign);
    }
}

/* sum of the inputs + out_coef * lit_D (sense) b. */
static void inputs_and_output(hrep *h, int d, const int *v, const char *ng, double out_coef,
                              int sense, double b) {
    hrow *r = hrep_row(h, d, sense, b);
    for (int j = 0; j < d - 1; ++j) set_term(r, j, v[j], ng[j], 1.0);
    set_term(r, d - 1, v[d - 1], ng[d - 1], out_coef);
}

int hrep_build(const fg_graph *g, hrep *h) {
    memset(h, 0, sizeof *h);
    size_t rows = 0, terms = 0;
    for (int f = 0; f < g->n_factors; ++f) {
        size_t d = (size_t)(g->start[f + 1] - g->start[f]);
        rows += d + 1;
        terms += 3 * d + 1;
    }
    h->cap = (int)rows;
    h->pool_cap = terms;
    h->rows = malloc((rows + 1) * sizeof *h->rows);
    h->var_pool = malloc((terms + 1) * sizeof *h->var_pool);
    h->neg_pool = malloc(terms + 1);
    h->a_pool = malloc((terms + 1) * sizeof *h->a_pool);
    if (!h->rows || !h->var_pool || !h->neg_pool || !h->a_pool) return -1;
    for (int f = 0; f < g->n_factors; ++f) {
        int s = g->start[f], d = g->start[f + 1] - s;
        const int *v = g->var + s;
        const char *ng = g->neg + s;
        const int *ints = g->ints + g->int_start[f];
        hrow *r;
        int sense = 0;
        double b = 1.0;
        switch (g->type[f]) {
        case FG_XOROUT: inputs_and_output(h, d, v, ng, -1.0, 0, 0.0); break;
        case FG_OROUT:
            output_bounds(h, d, v, ng, 1.0);
            inputs_and_output(h, d, v, ng, -1.0, 1, 0.0);
            break;
        case FG_ANDOUT:
            output_bounds(h, d, v, ng, -1.0);
            inputs_and_output(h, d, v, ng, -1.0, -1, d - 2);
            break;
        case FG_IMPLY: inputs_and_output(h, d, v, ng, -1.0, -1, d - 2); break;
        case FG_PAIR: {
            int out = -(1 + g->score_start[f]);
            for (int j = 0; j < 2; ++j) {
                r = hrep_row(h, 2, -1, 0.0);
                set_term(r, 0, out, false, 1.0);
                set_term(r, 1, v[j], false, -1.0);
            }
            r = hrep_row(h, 3, 1, -1.0);
            set_term(r, 0, out, false, 1.0);
            set_term(r, 1, v[0], false, -1.0);
            set_term(r, 2, v[1], false, -1.0);
            break;
        }
        case FG_XOR:
        case FG_ATMOSTONE:
        case FG_OR:
        case FG_BUDGET:
        case FG_BUDGET_EXACT:
            if (g->type[f] == FG_ATMOSTONE || g->type[f] == FG_BUDGET) sense = -1;
            if (g->type[f] == FG_OR) sense = 1;
            if (g->type[f] == FG_BUDGET || g->type[f] == FG_BUDGET_EXACT) b = ints[0];
            r = hrep_row(h, d, sense, b);
            for (int j = 0; j < d; ++j) set_term(r, j, v[j], ng[j], 1.0);
            break;
        case FG_KNAPSACK: {
            const double *costs = g->reals + g->real_start[f];
            r = hrep_row(h, d, -1, costs[d]);
            for (int j = 0; j < d; ++j) set_term(r, j, v[j], ng[j], costs[j]);
            break;
        }
        default: break; /* structured: extended formulations below */
        }
    }
    return 0;
}

double hrow_activity(const hrow *r, const double *u, const double *v) {
    double s = 0.0;
    for (int k = 0; k < r->n; ++k) {
        double x = r->var[k] >= 0 ? u[r->var[k]] : v[-(1 + r->var[k])];
        s += r->a[k] * (r->neg[k] ? 1.0 - x : x);
    }
    return s;
}

/* ------------------------------------------------------------------------
 * A linear program being built: columns in [0, 1] (1-based, GLPK's
 * numbering), rows with a sense and a right side, and the nonzeros
 * ------------------------------------------------------------------------ */

typedef struct lp_model {
    int n_cols, n_rows, n_nz;
    int cap_cols, cap_rows, cap_nz;
    double *obj;        /* per column */
    int *row_sense;     /* per row: -1 <=, 0 =, +1 >= */
    double *row_b;      /* per row */
    int *ia, *ja;       /* per nonzero */
    double *ar;
    bool failed;        /* out of memory: the model is incomplete */
} lp_model;

/* Grows *p (elements of `size` bytes, capacity *cap) to hold index `need`. */
static bool grow(void **p, int *cap, int need, size_t size) {
    if (need < *cap) return true;
    int c = *cap ? 2 * *cap : 256;
    while (c <= need) c *= 2;
    void *more = realloc(*p, (size_t)c * size);
    if (!more) return false;
    *p = more;
    *cap = c;
    return true;
}

static int new_col(lp_model *m, double obj) {
    int cap = m->cap_cols;
    if (!grow((void **)&m->obj, &cap, m->n_cols + 1, sizeof *m->obj)) {
        m->failed = true;
        return 0;
    }
    m->cap_cols = cap;
    m->obj[++m->n_cols] = obj;
    return m->n_cols;
}

static int new_row(lp_model *m, int sense, double b) {
    int cap = m->cap_rows;
    bool ok = grow((void **)&m->row_sense, &cap, m->n_rows + 1, sizeof *m->row_sense);
    cap = m->cap_rows;
    ok = ok && grow((void **)&m->row_b, &cap, m->n_rows + 1, sizeof *m->row_b);
    if (!ok) {
        m->failed = true;
        return 0;
    }
    m->cap_rows = cap;
    ++m->n_rows;
    m->row_sense[m->n_rows] = sense;
    m->row_b[m->n_rows] = b;
    return m->n_rows;
}

static void term(lp_model *m, int row, int col, double a) {
    if (m->failed) return;
    int cap = m->cap_nz;
    bool ok = grow((void **)&m->ia, &cap, m->n_nz + 1, sizeof *m->ia);
    cap = m->cap_nz;
    ok = ok && grow((void **)&m->ja, &cap, m->n_nz + 1, sizeof *m->ja);
    cap = m->cap_nz;
    ok = ok && grow((void **)&m->ar, &cap, m->n_nz + 1, sizeof *m->ar);
    if (!ok) {
        m->failed = true;
        return;
    }
    m->cap_nz = cap;
    ++m->n_nz;
    m->ia[m->n_nz] = row;
    m->ja[m->n_nz] = col;
    m->ar[m->n_nz] = a;
}

static void model_free(lp_model *m) {
    free(m->obj);
    free(m->row_sense);
    free(m->row_b);
    free(m->ia);
    free(m->ja);
    free(m->ar);
}

/* The columns of variable i and of additional output k. */
static int u_col(int i) { return i + 1; }
static int v_col(const fg_graph *g, int k) { return g->n_vars + k + 1; }

/* ------------------------------------------------------------------------
 * The factors' formulations
 * ------------------------------------------------------------------------ */

static void add_hrep_rows(lp_model *m, const fg_graph *g, const hrep *h) {
    for (int k = 0; k < h->n_rows; ++k) {
        const hrow *r = &h->rows[k];
        double b = r->b; /* a literal 1 - x moves its coefficient to the right side */
        for (int t = 0; t < r->n; ++t)
            if (r->neg[t]) b -= r->a[t];
        int row = new_row(m, r->sense, b);
        for (int t = 0; t < r->n; ++t) {
            int col = r->var[t] >= 0 ? u_col(r->var[t]) : v_col(g, -(1 + r->var[t]));
            term(m, row, col, r->neg[t] ? -r->a[t] : r->a[t]);
        }
    }
}

/* ARBORESCENCE: one head per token; the cuts that make every token
 * reachable from the root are added as they are needed, by add_tree_cuts. */
static void add_one_head_per_token(lp_model *m, const fg_graph *g, int f) {
    const int *var = g->var + g->start[f];
    int n_arcs = g->start[f + 1] - g->start[f];
    int length = g->ints[g->int_start[f]];
    const int *arc = g->ints + g->int_start[f] + 1; /* head, modifier pairs */
    for (int w = 1; w < length; ++w) {
        int row = new_row(m, 0, 1.0);
        for (int a = 0; a < n_arcs; ++a)
            if (arc[2 * a + 1] == w) term(m, row, u_col(var[a]), 1.0);
    }
}

/* A flow from position 0 through positions 1..n to n+1 of the DAG whose
 * edges j -> s (0 <= j < s <= n+1, ordered by j then s) are the columns
 * edge[]: source_col's value (a constant 1 when source_col is 0) leaves
 * position 0, and both the inflow and the outflow of position m are the
 * column node[m - 1]. */
static void add_sibling_chain(lp_model *m, int n, int source_col, const int *node,
                              const int *edge) {
    int out0 = new_row(m, 0, source_col ? 0.0 : 1.0);
    if (source_col) term(m, out0, source_col, -1.0);
    int first = m->n_rows + 1; /* inflow of m: first + 2(m-1), outflow: the next row */
    for (int p = 1; p <= n; ++p)
        for (int side = 0; side < 2; ++side) term(m, new_row(m, 0, 0.0), node[p - 1], -1.0);
    int e = 0;
    for (int j = 0; j <= n; ++j)
        for (int s = j + 1; s <= n + 1; ++s, ++e) {
            term(m, j == 0 ? out0 : first + 2 * (j - 1) + 1, edge[e], 1.0);
            if (s <= n) term(m, first + 2 * (s - 1), edge[e], 1.0);
        }
}

static int add_head_automaton(lp_model *m, const fg_graph *g, int f) {
    int d = g->start[f + 1] - g->start[f], n_edges = (d + 1) * (d + 2) / 2;
    int *node = malloc(((size_t)d + 1) * sizeof *node);
    int *edge = malloc((size_t)n_edges * sizeof *edge);
    if (!node || !edge) {
        free(node);
        free(edge);
        return -1;
    }
    for (int p = 0; p < d; ++p) node[p] = u_col(g->var[g->start[f] + p]);
    for (int e = 0; e < n_edges; ++e) edge[e] = v_col(g, g->score_start[f] + e);
    add_sibling_chain(m, d, 0, node, edge);
    free(node);
    free(edge);
    return 0;
}

static int add_grandparent_head_automaton(lp_model *m, const fg_graph *g, int f) {
    const int *var = g->var + g->start[f];
    int d = g->start[f + 1] - g->start[f], n_gp = g->ints[g->int_start[f]], n = d - n_gp;
    int n_edges = (n + 1) * (n + 2) / 2, first_out = g->score_start[f];
    int first_sibling = first_out + n_gp * n;
    int *node = malloc(((size_t)n + 1) * sizeof *node);
    int *edge = malloc((size_t)n_edges * sizeof *edge);
    int *sibling_row = malloc((size_t)n_edges * sizeof *sibling_row);
    if (!node || !edge || !sibling_row) {
        free(node);
        free(edge);
        free(sibling_row);
        return -1;
    }
    int one_gp = new_row(m, 0, 1.0);
    for (int gp = 0; gp < n_gp; ++gp) term(m, one_gp, u_col(var[gp]), 1.0);
    for (int p = 0; p < n; ++p) {
        int row = new_row(m, 0, 0.0); /* sum over gp of output (gp, p) = u_p */
        term(m, row, u_col(var[n_gp + p]), -1.0);
        for (int gp = 0; gp < n_gp; ++gp) term(m, row, v_col(g, first_out + gp * n + p), 1.0);
    }
    for (int e = 0; e < n_edges; ++e) {
        sibling_row[e] = new_row(m, 0, 0.0); /* sibling output = sum over the copies */
        term(m, sibling_row[e], v_col(g, first_sibling + e), -1.0);
    }
    for (int gp = 0; gp < n_gp; ++gp) {
        for (int p = 0; p < n; ++p) node[p] = v_col(g, first_out + gp * n + p);
        for (int e = 0; e < n_edges; ++e) {
            edge[e] = new_col(m, 0.0);
            term(m, sibling_row[e], edge[e], 1.0);
        }
        add_sibling_chain(m, n, u_col(var[gp]), node, edge);
    }
    free(node);
    free(edge);
    free(sibling_row);
    return 0;
}

/* SEQUENCE, and SEQUENCE_BUDGET: the trellis of (position, state, count),
 * the count (positions in state 0 so far) tracked only when the budget is
 * below the length, so that counts above the budget have no node. */
static int add_sequence(lp_model *m, const fg_graph *g, int f) {
    const int *ints = g->ints + g->int_start[f], *var = g->var + g->start[f];
    int length = ints[0], budget = g->type[f] == FG_SEQUENCE_BUDGET ? ints[1] : length;
    const int *states = ints + (g->type[f] == FG_SEQUENCE_BUDGET ? 2 : 1);
    bool counted = budget < length;
    int n_counts = counted ? budget + 1 : 1;
    int *first_state = malloc(((size_t)length + 1) * sizeof *first_state);
    if (!first_state) return -1;
    first_state[0] = 0;
    for (int p = 0; p < length; ++p) first_state[p + 1] = first_state[p] + states[p];
    /* rows: per (position, state) the link to u, then per count the node's
     * balance (inflow - outflow = 0) */
    int per_state = 1 + n_counts;
    int first = m->n_rows + 1;
    for (int i = 0; i < first_state[length]; ++i) {
        term(m, new_row(m, 0, 0.0), u_col(var[i]), -1.0);
        for (int c = 0; c < n_counts; ++c) new_row(m, 0, 0.0);
    }
    int start_sum = new_row(m, 0, 1.0);
    int out = g->score_start[f]; /* the next additional output */
#define LINK_ROW(p, k) (first + (first_state[p] + (k)) * per_state)
#define NODE_ROW(p, k, c) (LINK_ROW(p, k) + 1 + (c))
#define STEP(k, c) ((c) + (counted && (k) == 0))
    for (int k = 0; k < states[0]; ++k, ++out) {
        int sum = new_row(m, 0, 0.0);
        term(m, sum, v_col(g, out), -1.0);
        int c = STEP(k, 0);
        if (c >= n_counts) continue;
        int edge = new_col(m, 0.0);
        term(m, sum, edge, 1.0);
        term(m, start_sum, edge, 1.0);
        term(m, LINK_ROW(0, k), edge, 1.0);
        term(m, NODE_ROW(0, k, c), edge, 1.0);
    }
    for (int p = 1; p < length; ++p)
        for (int from = 0; from < states[p - 1]; ++from)
            for (int k = 0; k < states[p]; ++k, ++out) {
                int sum = new_row(m, 0, 0.0);
                term(m, sum, v_col(g, out), -1.0);
                for (int c0 = 0; c0 < n_counts; ++c0) {
                    int c = STEP(k, c0);
                    if (c >= n_counts) continue;
                    int edge = new_col(m, 0.0);
                    term(m, sum, edge, 1.0);
                    term(m, NODE_ROW(p - 1, from, c0), edge, -1.0);
                    term(m, LINK_ROW(p, k), edge, 1.0);
                    term(m, NODE_ROW(p, k, c), edge, 1.0);
                }
            }
    for (int k = 0; k < states[length - 1]; ++k, ++out) {
        int sum = new_row(m, 0, 0.0);
        term(m, sum, v_col(g, out), -1.0);
        for (int c = 0; c < n_counts; ++c) {
            int edge = new_col(m, 0.0);
            term(m, sum, edge, 1.0);
            term(m, NODE_ROW(length - 1, k, c), edge, -1.0);
        }
    }
#undef LINK_ROW
#undef NODE_ROW
#undef STEP
    free(first_state);
    return 0;
}

/* ------------------------------------------------------------------------
 * Solving
 * ------------------------------------------------------------------------ */

/* The program of g, its objective divided by a power of two near its
 * largest coefficient (exactly), so that GLPK's absolute tolerances are
 * relative ones. */
static int build_model(const fg_graph *g, lp_model *m) {
    double largest = 0.0;
    for (int i = 0; i < g->n_vars; ++i) largest = fmax(largest, fabs(g->theta[i]));
    for (int k = 0; k < g->n_additionals; ++k) largest = fmax(largest, fabs(g->scores[k]));
    int e = 0;
    if (largest > 0.0) frexp(largest, &e);
    double scale = ldexp(1.0, -e);
    for (int i = 0; i < g->n_vars; ++i) new_col(m, g->theta[i] * scale);
    for (int k = 0; k < g->n_additionals; ++k) new_col(m, g->scores[k] * scale);
    hrep h;
    int rc = hrep_build(g, &h);
    if (rc == 0) add_hrep_rows(m, g, &h);
    hrep_free(&h);
    for (int f = 0; f < g->n_factors && rc == 0; ++f) switch (g->type[f]) {
        case FG_ARBORESCENCE: add_one_head_per_token(m, g, f); break;
        case FG_HEAD_AUTOMATON: rc = add_head_automaton(m, g, f); break;
        case FG_GRANDPARENT_HEAD_AUTOMATON: rc = add_grandparent_head_automaton(m, g, f); break;
        case FG_SEQUENCE:
        case FG_SEQUENCE_BUDGET: rc = add_sequence(m, g, f); break;
        default: break;
        }
    return rc == 0 && !m->failed ? 0 : -1;
}

static glp_prob *load(const lp_model *m, const fg_graph *g, bool integral) {
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_cols(lp, m->n_cols);
    for (int j = 1; j <= m->n_cols; ++j) {
        if (integral && j <= g->n_vars) glp_set_col_kind(lp, j, GLP_BV);
        else glp_set_col_bnds(lp, j, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(lp, j, m->obj[j]);
    }
    glp_add_rows(lp, m->n_rows + 1);
    for (int r = 1; r <= m->n_rows; ++r) {
        int s = m->row_sense[r];
        glp_set_row_bnds(lp, r, s < 0 ? GLP_UP : s > 0 ? GLP_LO : GLP_FX, m->row_b[r], m->row_b[r]);
    }
    glp_set_row_bnds(lp, m->n_rows + 1, GLP_FR, 0.0, 0.0); /* GLPK wants a row */
    glp_load_matrix(lp, m->n_nz, m->ia, m->ja, m->ar);
    return lp;
}

/* ------------------------------------------------------------------------
 * The arborescences' cuts
 * ------------------------------------------------------------------------ */

/* One ARBORESCENCE's arcs as a flow network with the capacities of the
 * current solution, and the work arrays of a max flow over it. */
typedef struct flow_net {
    int n_nodes, n_arcs;
    const int *arc; /* head, modifier pairs */
    double *cap, *flow;
    int *out_start, *out_arc, *in_start, *in_arc; /* arcs by head, by modifier */
    int *pred;  /* BFS: the arc reaching a node, + 1 (forward) or -(1 + arc) (backward) */
    int *queue;
    char *seen, *in_cut;
} flow_net;

static void net_free(flow_net *n) {
    free(n->cap);
    free(n->flow);
    free(n->out_start);
    free(n->out_arc);
    free(n->in_start);
    free(n->in_arc);
    free(n->pred);
    free(n->queue);
    free(n->seen);
    free(n->in_cut);
}

/* Lists the arcs by `end` (0: head, 1: modifier) into start/list; false
 * when out of memory. */
static bool bucket(const int *arc, int n_arcs, int n_nodes, int end, int *start, int *list) {
    memset(start, 0, ((size_t)n_nodes + 1) * sizeof *start);
    for (int a = 0; a < n_arcs; ++a) start[arc[2 * a + end] + 1] += 1;
    for (int v = 0; v < n_nodes; ++v) start[v + 1] += start[v];
    int *fill = malloc(((size_t)n_nodes + 1) * sizeof *fill);
    if (!fill) return false;
    memcpy(fill, start, ((size_t)n_nodes + 1) * sizeof *fill);
    for (int a = 0; a < n_arcs; ++a) list[fill[arc[2 * a + end]]++] = a;
    free(fill);
    return true;
}

static bool net_init(flow_net *n, const fg_graph *g, int f) {
    memset(n, 0, sizeof *n);
    n->n_nodes = g->ints[g->int_start[f]];
    n->n_arcs = g->start[f + 1] - g->start[f];
    n->arc = g->ints + g->int_start[f] + 1;
    size_t v = (size_t)n->n_nodes + 1, a = (size_t)n->n_arcs + 1;
    n->cap = malloc(a * sizeof *n->cap);
    n->flow = malloc(a * sizeof *n->flow);
    n->out_start = malloc(v * sizeof *n->out_start);
    n->in_start = malloc(v * sizeof *n->in_start);
    n->out_arc = malloc(a * sizeof *n->out_arc);
    n->in_arc = malloc(a * sizeof *n->in_arc);
    n->pred = malloc(v * sizeof *n->pred);
    n->queue = malloc(v * sizeof *n->queue);
    n->seen = malloc(v);
    n->in_cut = malloc(v);
    if (!n->cap || !n->flow || !n->out_start || !n->in_start || !n->out_arc || !n->in_arc ||
        !n->pred || !n->queue || !n->seen || !n->in_cut)
        return false;
    return bucket(n->arc, n->n_arcs, n->n_nodes, 0, n->out_start, n->out_arc) &&
           bucket(n->arc, n->n_arcs, n->n_nodes, 1, n->in_start, n->in_arc);
}

/* Residual capacities below this are taken as none (rounding noise). */
#define RESIDUAL_EPS 1e-15

/* Breadth-first search from the root in the residual network; whether
 * `sink` is reached (seen[] marks the nodes reached). */
static bool residual_search(flow_net *n, int sink) {
    memset(n->seen, 0, (size_t)n->n_nodes);
    int head = 0, tail = 0;
    n->queue[tail++] = 0;
    n->seen[0] = 1;
    while (head < tail) {
        int x = n->queue[head++];
        for (int k = n->out_start[x]; k < n->out_start[x + 1]; ++k) {
            int a = n->out_arc[k], y = n->arc[2 * a + 1];
            if (!n->seen[y] && n->cap[a] - n->flow[a] > RESIDUAL_EPS) {
                n->seen[y] = 1;
                n->pred[y] = 1 + a;
                n->queue[tail++] = y;
            }
        }
        for (int k = n->in_start[x]; k < n->in_start[x + 1]; ++k) {
            int a = n->in_arc[k], y = n->arc[2 * a];
            if (!n->seen[y] && n->flow[a] > RESIDUAL_EPS) {
                n->seen[y] = 1;
                n->pred[y] = -(1 + a);
                n->queue[tail++] = y;
            }
        }
    }
    return n->seen[sink];
}

/* Augments flow from the root to sink (Edmonds-Karp) until it reaches
 * `enough` or no path is left; the flow reached. */
static double max_flow(flow_net *n, int sink, double enough) {
    memset(n->flow, 0, (size_t)n->n_arcs * sizeof *n->flow);
    double total = 0.0;
    while (total < enough && residual_search(n, sink)) {
        double b = INFINITY;
        for (int y = sink; y != 0;) {
            int p = n->pred[y], a = p > 0 ? p - 1 : -(1 + p);
            b = fmin(b, p > 0 ? n->cap[a] - n->flow[a] : n->flow[a]);
            y = p > 0 ? n->arc[2 * a] : n->arc[2 * a + 1];
        }
        for (int y = sink; y != 0;) {
            int p = n->pred[y], a = p > 0 ? p - 1 : -(1 + p);
            n->flow[a] += p > 0 ? b : -b;
            y = p > 0 ? n->arc[2 * a] : n->arc[2 * a + 1];
        }
        total += b;
    }
    return total;
}

/* The value of column j in the last solution. */
static double col_value(glp_prob *lp, int j, bool integral) {
    return integral ? round(glp_mip_col_val(lp, j)) : glp_get_col_prim(lp, j);
}

/* For each ARBORESCENCE of g and each token k to which the arcs, at the
 * capacities of the last solution, carry a flow below 1 - tol from the
 * root: the cut sum of the arcs entering S >= 1, S the nodes the root does
 * not reach in the residual network of a maximum flow (k is in S), is
 * violated (its left side is that flow); it is added to lp, and the tokens
 * of S are not searched again in this pass. Returns the number of cuts
 * added, or -1 when out of memory. */
static int add_tree_cuts(glp_prob *lp, const fg_graph *g, bool integral, double tol) {
    int added = 0;
    for (int f = 0; f < g->n_factors; ++f) {
        if (g->type[f] != FG_ARBORESCENCE) continue;
        const int *var = g->var + g->start[f];
        flow_net n;
        int *ind = malloc(((size_t)(g->start[f + 1] - g->start[f]) + 1) * sizeof *ind);
        double *one = malloc(((size_t)(g->start[f + 1] - g->start[f]) + 1) * sizeof *one);
        if (!ind || !one || !net_init(&n, g, f)) {
            free(ind);
            free(one);
            net_free(&n);
            return -1;
        }
        for (int a = 0; a < n.n_arcs; ++a) n.cap[a] = fmax(0.0, col_value(lp, u_col(var[a]), integral));
        memset(n.in_cut, 0, (size_t)n.n_nodes);
        for (int k = 1; k < n.n_nodes; ++k) {
            if (n.in_cut[k] || max_flow(&n, k, 1.0) >= 1.0 - tol) continue;
            residual_search(&n, k);
            int len = 0;
            for (int a = 0; a < n.n_arcs; ++a)
                if (n.seen[n.arc[2 * a]] && !n.seen[n.arc[2 * a + 1]]) {
                    ind[++len] = u_col(var[a]);
                    one[len] = 1.0;
                }
            for (int v = 1; v < n.n_nodes; ++v)
                if (!n.seen[v]) n.in_cut[v] = 1;
            int row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_LO, 1.0, 0.0);
            glp_set_mat_row(lp, row, len, ind, one);
            added += 1;
        }
        net_free(&n);
        free(ind);
        free(one);
    }
    return added;
}

/* Violations up to this much of a cut are left to the final check. */
#define CUT_TOL 1e-9
/* The final check, at the exact simplex's optimum. */
#define FINAL_CUT_TOL 1e-12
/* Passes of cuts at most (each adds at least one violated cut). */
#define MAX_CUT_PASSES 10000

/* Whether g has a factor with an extended formulation (flows). */
static bool has_structured_factor(const fg_graph *g) {
    for (int f = 0; f < g->n_factors; ++f)
        if (g->type[f] >= FG_ARBORESCENCE) return true;
    return false;
}

/* LP: the simplex with presolve, then after each pass of cuts the dual
 * simplex warm-started from the last basis, until no cut is violated by
 * more than CUT_TOL; then, when small enough, the exact simplex and a last
 * check of the cuts at FINAL_CUT_TOL (back to the simplex if one is
 * violated). The first solve is primal on graphs with flows (measured on
 * parsing01.fg: 0.7 s, the dual simplex 13.5 s) and dual on the others
 * (mln_large.fg: 25 s, the primal simplex 410 s), pricing there by
 * Dantzig's rule (mln_large.fg: 16 s, against 20 s with the default
 * projected steepest edge, which stays the faster on graphs with flows).
 * Returns REF_EXT_OPTIMAL, REF_EXT_INFEASIBLE or REF_EXT_ERROR. */
static int solve_lp(glp_prob *lp, const fg_graph *g) {
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    bool flows = has_structured_factor(g);
    parm.meth = flows ? GLP_PRIMAL : GLP_DUALP;
    parm.pricing = flows ? GLP_PT_PSE : GLP_PT_STD;
    parm.presolve = GLP_ON;
    parm.tol_bnd = 1e-9;
    parm.tol_dj = 1e-9;
    for (int pass = 0; pass < MAX_CUT_PASSES; ++pass) {
        int rc = glp_simplex(lp, &parm);
        parm.meth = GLP_DUALP;
        parm.presolve = GLP_OFF;
        if (rc == GLP_ENOPFS || (rc == 0 && glp_get_status(lp) == GLP_NOFEAS))
            return REF_EXT_INFEASIBLE;
        if (rc != 0 || glp_get_status(lp) != GLP_OPT) return REF_EXT_ERROR;
        int cuts = add_tree_cuts(lp, g, false, CUT_TOL);
        if (cuts < 0) return REF_EXT_ERROR;
        if (cuts > 0) continue;
        if (glp_get_num_rows(lp) > REF_EXT_EXACT_MAX_ROWS) return REF_EXT_OPTIMAL;
        rc = glp_exact(lp, &parm);
        if (rc == 0 && glp_get_status(lp) == GLP_NOFEAS) return REF_EXT_INFEASIBLE;
        if (rc != 0 || glp_get_status(lp) != GLP_OPT) return REF_EXT_ERROR;
        cuts = add_tree_cuts(lp, g, false, FINAL_CUT_TOL);
        if (cuts <= 0) return cuts == 0 ? REF_EXT_OPTIMAL : REF_EXT_ERROR;
    }
    return REF_EXT_ERROR;
}

/* MIP: branch and cut to a zero gap, again after each pass of cuts (an
 * integral solution violates a cut when some token is not reached from
 * the root). */
static int solve_mip(glp_prob *lp, const fg_graph *g) {
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.mip_gap = 0.0;
    parm.tol_int = 1e-9;
    parm.tol_obj = 1e-12;
    for (int pass = 0; pass < MAX_CUT_PASSES; ++pass) {
        int rc = glp_intopt(lp, &parm);
        if (rc == GLP_ENOPFS || (rc == 0 && glp_mip_status(lp) == GLP_NOFEAS))
            return REF_EXT_INFEASIBLE;
        if (rc != 0 || glp_mip_status(lp) != GLP_OPT) return REF_EXT_ERROR;
        int cuts = add_tree_cuts(lp, g, true, 0.5);
        if (cuts <= 0) return cuts == 0 ? REF_EXT_OPTIMAL : REF_EXT_ERROR;
    }
    return REF_EXT_ERROR;
}

int ref_extended_lp_graph(const fg_graph *g, bool integral, double *value, double *u,
                          double *v) {
    lp_model m = {0};
    if (build_model(g, &m) != 0) {
        model_free(&m);
        return REF_EXT_ERROR;
    }
    glp_prob *lp = load(&m, g, integral);
    model_free(&m);
    int status = integral ? solve_mip(lp, g) : solve_lp(lp, g);
    if (status == REF_EXT_OPTIMAL) {
        double s = 0.0;
        for (int j = 1; j <= g->n_vars + g->n_additionals; ++j) {
            double x = col_value(lp, j, integral);
            bool is_u = j <= g->n_vars;
            s += x * (is_u ? g->theta[j - 1] : g->scores[j - 1 - g->n_vars]);
            if (is_u && u) u[j - 1] = x;
            if (!is_u && v) v[j - 1 - g->n_vars] = x;
        }
        *value = s;
    }
    glp_delete_prob(lp);
    return status;
}

int ref_extended_lp(const char *fg_text, bool integral, double *value, double *u) {
    fg_graph *graphs;
    int count;
    int rc = fg_read_text(fg_text, "ref_extended_lp", &graphs, &count);
    if (rc == FG_READ_UNSUPPORTED) return REF_EXT_UNSUPPORTED;
    if (rc != FG_READ_OK) return REF_EXT_ERROR;
    int status = count == 1 ? ref_extended_lp_graph(&graphs[0], integral, value, u, NULL)
                            : REF_EXT_ERROR;
    fg_free_graphs(graphs, count);
    return status;
}
