/*
 * Multi-valued and structured test graphs (see ref_mgraph.h): their
 * meaning, brute-force MAP, the local-polytope LP by GLPK, random graphs.
 */
#include "ref_mgraph.h"

#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_graph.h"

/* ---- meaning -------------------------------------------------------------- */

int mg_tree_arcs(int length, int *heads, int *modifiers) {
    int n = 0;
    for (int h = 0; h < length; ++h)
        for (int m = 1; m < length; ++m)
            if (h != m) heads[n] = h, modifiers[n++] = m;
    return n;
}

/* The state of each block of links (a multi-variable's states, in the
 * factor's order) at lx: -1 unless exactly one is on. */
static bool block_states(const mg_factor *f, const mg_graph *g, const int *lx, int *state) {
    int offset = 0;
    for (int b = 0; b < f->n_multi; ++b) {
        const int k = g->multi_states[f->multi[b]];
        int on = 0;
        for (int t = 0; t < k; ++t)
            if (lx[offset + t]) on += 1, state[b] = t;
        if (on != 1) return false;
        offset += k;
    }
    return true;
}

static bool tree_allowed(int length, const int *lx) {
    int heads[16], mods[16], parent[8];
    int n = mg_tree_arcs(length, heads, mods);
    for (int m = 0; m < length; ++m) parent[m] = -1;
    for (int a = 0; a < n; ++a) {
        if (!lx[a]) continue;
        if (parent[mods[a]] >= 0) return false;
        parent[mods[a]] = heads[a];
    }
    for (int m = 1; m < length; ++m) {
        int x = m, steps = 0;
        while (x != 0 && steps <= length) {
            if (parent[x] < 0) return false;
            x = parent[x];
            steps += 1;
        }
        if (x != 0) return false;
    }
    return true;
}

double mg_factor_score(const mg_factor *f, const mg_graph *g, const int *lx) {
    int lit[MG_MAX_LINKS], state[4];
    for (int j = 0; j < f->degree; ++j) lit[j] = f->negated[j] ? 1 - lx[j] : lx[j];
    switch (f->kind) {
    case MG_LOGIC: {
        ref_factor r = f->logic;
        r.degree = f->degree;
        for (int j = 0; j < f->degree; ++j) r.negated[j] = f->negated[j];
        return ref_allowed(&r, lx, NULL) ? 0.0 : -INFINITY;
    }
    case MG_PAIR: return lx[0] && lx[1] ? f->add[0] : 0.0;
    case MG_USER: {
        int on = 0;
        for (int j = 0; j < f->degree; ++j) on += lit[j];
        if (on > 2) return -INFINITY;
        int both = f->degree >= 2 ? lit[0] && lit[1] : lit[0];
        return both ? f->add[0] : 0.0;
    }
    case MG_DENSE: {
        if (!block_states(f, g, lx, state)) return -INFINITY;
        int index = 0;
        for (int b = 0; b < f->n_multi; ++b)
            index = index * g->multi_states[f->multi[b]] + state[b];
        return f->add[index];
    }
    case MG_SEQUENCE: {
        if (!block_states(f, g, lx, state)) return -INFINITY;
        double s = f->add[state[0]];
        int offset = g->multi_states[f->multi[0]];
        for (int b = 1; b < f->n_multi; ++b) {
            const int kp = g->multi_states[f->multi[b - 1]], k = g->multi_states[f->multi[b]];
            s += f->add[offset + state[b - 1] * k + state[b]];
            offset += kp * k;
        }
        return s + f->add[offset + state[f->n_multi - 1]];
    }
    case MG_MATCHING: {
        for (int r = 0; r < f->rows; ++r) {
            int on = 0;
            for (int c = 0; c < f->cols; ++c) on += lx[r * f->cols + c];
            if (on > 1) return -INFINITY;
        }
        for (int c = 0; c < f->cols; ++c) {
            int on = 0;
            for (int r = 0; r < f->rows; ++r) on += lx[r * f->cols + c];
            if (on > 1) return -INFINITY;
        }
        return 0.0;
    }
    case MG_TREE: return tree_allowed(f->length, lx) ? 0.0 : -INFINITY;
    default: return -INFINITY;
    }
}

double mg_value(const mg_graph *g, const int *x) {
    double value = 0.0;
    for (int i = 0; i < g->n_vars; ++i) value += g->theta[i] * x[i];
    for (int m = 0; m < g->n_multi; ++m) {
        if (!g->multi_xor[m]) continue;
        int on = 0;
        for (int t = 0; t < g->multi_states[m]; ++t) on += x[g->multi_first[m] + t];
        if (on != 1) return -INFINITY;
    }
    for (int k = 0; k < g->n_factors; ++k) {
        const mg_factor *f = &g->factors[k];
        int lx[MG_MAX_LINKS];
        for (int j = 0; j < f->degree; ++j) lx[j] = x[f->vars[j]];
        value += mg_factor_score(f, g, lx);
    }
    return value;
}

/* ---- building ------------------------------------------------------------- */

/* The user factor's oracle: the best set of at most two literals, the
 * additional output on when the first two literals are (the first alone
 * at degree 1). */
static int user_oracle(void *user, const double *a, const double *b, double *u, double *v,
                       double *value) {
    const int degree = *(const int *)user;
    double best = -INFINITY;
    unsigned best_mask = 0;
    for (unsigned mask = 0; mask < (1u << degree); ++mask) {
        if (__builtin_popcount(mask) > 2) continue;
        double s = 0.0;
        for (int j = 0; j < degree; ++j)
            if ((mask >> j) & 1u) s += a[j];
        const unsigned first = degree >= 2 ? 3u : 1u;
        if ((mask & first) == first) s += b[0];
        if (s > best) best = s, best_mask = mask;
    }
    for (int j = 0; j < degree; ++j) u[j] = (best_mask >> j) & 1u;
    const unsigned first = degree >= 2 ? 3u : 1u;
    v[0] = (best_mask & first) == first;
    *value = best;
    return 0;
}

static const int user_degrees[MG_MAX_LINKS + 1] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

static int build_factor(concord_graph *cg, const mg_graph *g, const mg_factor *f) {
    int32_t vars[MG_MAX_LINKS];
    for (int j = 0; j < f->degree; ++j) vars[j] = f->vars[j];
    const ref_factor *r = &f->logic;
    switch (f->kind) {
    case MG_LOGIC:
        switch (r->kind) {
        case REF_XOR: return concord_add_logic(cg, CONCORD_XOR, f->degree, vars, f->negated, NULL);
        case REF_XOROUT:
            return concord_add_logic(cg, CONCORD_XOROUT, f->degree, vars, f->negated, NULL);
        case REF_ATMOSTONE:
            return concord_add_logic(cg, CONCORD_ATMOSTONE, f->degree, vars, f->negated, NULL);
        case REF_OR: return concord_add_logic(cg, CONCORD_OR, f->degree, vars, f->negated, NULL);
        case REF_OROUT:
            return concord_add_logic(cg, CONCORD_OROUT, f->degree, vars, f->negated, NULL);
        case REF_ANDOUT:
            return concord_add_logic(cg, CONCORD_ANDOUT, f->degree, vars, f->negated, NULL);
        case REF_IMPLY:
            return concord_add_logic(cg, CONCORD_IMPLY, f->degree, vars, f->negated, NULL);
        case REF_BUDGET:
        case REF_BUDGET_EXACT:
            return concord_add_budget(cg, f->degree, vars, f->negated, r->budget,
                                      r->kind == REF_BUDGET_EXACT, NULL);
        case REF_KNAPSACK:
            return concord_add_knapsack(cg, f->degree, vars, f->negated, r->costs, r->budget,
                                        NULL);
        default: return CONCORD_EINVAL;
        }
    case MG_PAIR: return concord_add_pair(cg, vars[0], vars[1], f->add[0], NULL);
    case MG_USER:
        return concord_add_factor(cg, f->degree, vars, f->negated, 1, f->add, user_oracle,
                                  (void *)&user_degrees[f->degree], NULL);
    case MG_DENSE:
    case MG_SEQUENCE: {
        int32_t states[4];
        for (int b = 0; b < f->n_multi; ++b) states[b] = g->multi_states[f->multi[b]];
        if (f->kind == MG_DENSE)
            return concord_add_dense(cg, f->n_multi, states, vars, f->add, NULL);
        return concord_add_sequence(cg, f->n_multi, states, vars, f->add, NULL);
    }
    case MG_MATCHING: return concord_add_matching(cg, f->rows, f->cols, vars, 0, NULL);
    case MG_TREE: {
        int32_t heads[16], mods[16];
        int h[16], m[16];
        int n = mg_tree_arcs(f->length, h, m);
        for (int a = 0; a < n; ++a) heads[a] = h[a], mods[a] = m[a];
        return concord_add_tree(cg, f->length, n, heads, mods, vars, 0, NULL);
    }
    default: return CONCORD_EINVAL;
    }
}

concord_graph *mg_build(const mg_graph *g) {
    concord_graph *cg = concord_graph_new();
    if (!cg) return NULL;
    /* variables in order: multi-variables own consecutive ids */
    int rc = CONCORD_OK;
    for (int i = 0; i < g->n_vars && rc == CONCORD_OK;) {
        int m = -1;
        for (int q = 0; q < g->n_multi; ++q)
            if (g->multi_first[q] == i) m = q;
        if (m >= 0) {
            rc = concord_add_multi_variable(cg, g->multi_states[m], g->theta + i, g->multi_xor[m],
                                            NULL);
            i += g->multi_states[m];
        } else {
            rc = concord_add_variables(cg, 1, g->theta + i, NULL);
            i += 1;
        }
    }
    for (int k = 0; k < g->n_factors && rc == CONCORD_OK; ++k)
        rc = build_factor(cg, g, &g->factors[k]);
    if (rc != CONCORD_OK) {
        fprintf(stderr, "mg_build: %s\n", concord_last_error(cg));
        concord_graph_free(cg);
        return NULL;
    }
    return cg;
}

/* ---- brute force ---------------------------------------------------------- */

/* The units of enumeration: multi-variables, then every other variable. */
static int enumeration_units(const mg_graph *g, int *first, int *states) {
    int n = 0;
    bool in_multi[MG_MAX_VARS] = {false};
    for (int m = 0; m < g->n_multi; ++m) {
        first[n] = g->multi_first[m];
        states[n++] = g->multi_states[m];
        for (int t = 0; t < g->multi_states[m]; ++t) in_multi[g->multi_first[m] + t] = true;
    }
    for (int i = 0; i < g->n_vars; ++i)
        if (!in_multi[i]) first[n] = i, states[n++] = -2; /* a binary variable */
    return n;
}

bool mg_brute_map(const mg_graph *g, double *value, int *x) {
    int first[MG_MAX_VARS], states[MG_MAX_VARS], radix[MG_MAX_VARS], digit[MG_MAX_VARS];
    const int n = enumeration_units(g, first, states);
    for (int u = 0; u < n; ++u) radix[u] = states[u] == -2 ? 2 : states[u], digit[u] = 0;
    int xs[MG_MAX_VARS];
    bool found = false;
    double best = -INFINITY;
    do {
        memset(xs, 0, sizeof xs);
        for (int u = 0; u < n; ++u) {
            if (states[u] == -2) xs[first[u]] = digit[u];
            else xs[first[u] + digit[u]] = 1;
        }
        const double v = mg_value(g, xs);
        if (v > -INFINITY && (!found || v > best)) {
            found = true;
            best = v;
            if (x) memcpy(x, xs, (size_t)g->n_vars * sizeof *x);
        }
    } while (odometer_next(digit, radix, n));
    if (value) *value = best;
    return found;
}

/* ---- the local-polytope LP ----------------------------------------------- */

typedef struct triplets {
    int n, cap;
    int *row, *col;
    double *val;
} triplets;

static int put(triplets *t, int row, int col, double val) {
    if (t->n + 1 >= t->cap) {
        int cap = t->cap ? 2 * t->cap : 1024;
        int *r = realloc(t->row, (size_t)(cap + 1) * sizeof *r);
        if (r) t->row = r;
        int *c = realloc(t->col, (size_t)(cap + 1) * sizeof *c);
        if (c) t->col = c;
        double *v = realloc(t->val, (size_t)(cap + 1) * sizeof *v);
        if (v) t->val = v;
        if (!r || !c || !v) return -1;
        t->cap = cap;
    }
    t->n += 1; /* GLPK's arrays are 1-based */
    t->row[t->n] = row;
    t->col[t->n] = col;
    t->val[t->n] = val;
    return 0;
}

/* The rows of factor f: V-representation (weights of its allowed
 * configurations, summing to 1, whose mixture is its variables), or for
 * KNAPSACK its continuous polytope. Returns 0 or -1. */
static int factor_rows(glp_prob *lp, triplets *t, const mg_graph *g, const mg_factor *f) {
    const int d = f->degree;
    if (f->kind == MG_LOGIC && f->logic.kind == REF_KNAPSACK) {
        /* sum costs * literals <= budget, negated literals 1 - u */
        double rhs = f->logic.budget;
        for (int j = 0; j < d; ++j)
            if (f->negated[j]) rhs -= f->logic.costs[j];
        const int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_UP, 0.0, rhs);
        for (int j = 0; j < d; ++j)
            if (put(t, row, 1 + f->vars[j], f->negated[j] ? -f->logic.costs[j] : f->logic.costs[j]))
                return -1;
        return 0;
    }
    const int sum_row = glp_add_rows(lp, 1 + d);
    glp_set_row_bnds(lp, sum_row, GLP_FX, 1.0, 1.0);
    for (int j = 0; j < d; ++j) {
        glp_set_row_bnds(lp, sum_row + 1 + j, GLP_FX, 0.0, 0.0);
        if (put(t, sum_row + 1 + j, 1 + f->vars[j], 1.0)) return -1;
    }
    int lx[MG_MAX_LINKS];
    for (unsigned mask = 0; mask < (1u << d); ++mask) {
        for (int j = 0; j < d; ++j) lx[j] = (int)((mask >> j) & 1u);
        const double score = mg_factor_score(f, g, lx);
        if (score == -INFINITY) continue;
        const int col = glp_add_cols(lp, 1);
        glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
        glp_set_obj_coef(lp, col, score);
        if (put(t, sum_row, col, 1.0)) return -1;
        for (int j = 0; j < d; ++j)
            if (lx[j] && put(t, sum_row + 1 + j, col, -1.0)) return -1;
    }
    return 0;
}

int mg_local_lp(const mg_graph *g, double *value) {
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    triplets t = {0};
    glp_add_cols(lp, g->n_vars);
    for (int i = 0; i < g->n_vars; ++i) {
        glp_set_col_bnds(lp, 1 + i, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(lp, 1 + i, g->theta[i]);
    }
    int failed = 0;
    for (int m = 0; m < g->n_multi && !failed; ++m) {
        if (!g->multi_xor[m]) continue;
        const int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
        for (int s = 0; s < g->multi_states[m]; ++s)
            failed |= put(&t, row, 1 + g->multi_first[m] + s, 1.0);
    }
    for (int k = 0; k < g->n_factors && !failed; ++k)
        failed |= factor_rows(lp, &t, g, &g->factors[k]);
    int status = REF_LP_ERROR;
    if (!failed) {
        glp_load_matrix(lp, t.n, t.row, t.col, t.val);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        int rc = glp_simplex(lp, &parm);
        if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
            parm.presolve = GLP_OFF;
            rc = glp_exact(lp, &parm);
        }
        const int st = glp_get_status(lp);
        if (rc == GLP_ENOPFS || st == GLP_NOFEAS) status = REF_LP_INFEASIBLE;
        else if (rc == 0 && st == GLP_OPT) status = REF_LP_OPTIMAL;
        if (status == REF_LP_OPTIMAL) *value = glp_get_obj_val(lp);
    }
    glp_delete_prob(lp);
    free(t.row);
    free(t.col);
    free(t.val);
    return status;
}

double mg_score_l1(const mg_graph *g) {
    double s = 0.0;
    for (int i = 0; i < g->n_vars; ++i) s += fabs(g->theta[i]);
    for (int k = 0; k < g->n_factors; ++k)
        for (int a = 0; a < g->factors[k].n_add; ++a)
            if (isfinite(g->factors[k].add[a])) s += fabs(g->factors[k].add[a]);
    return s;
}

/* ---- random graphs -------------------------------------------------------- */

typedef struct drawer {
    test_rng *rng;
    double magnitude, low; /* scores: normal times magnitude, some times low */
    bool integer;
} drawer;

static double draw_score(drawer *d) {
    if (d->integer) return (double)(rng_int(d->rng, 7) - 3) * d->magnitude;
    double m = rng_int(d->rng, 4) == 0 ? d->low : d->magnitude;
    return rng_normal(d->rng) * m;
}

/* Draws `count` distinct variables from 0..n-1 into vars. */
static void draw_vars(test_rng *rng, int n, int count, int *vars) {
    int pool[MG_MAX_VARS];
    for (int i = 0; i < n; ++i) pool[i] = i;
    for (int j = 0; j < count; ++j) {
        int r = j + rng_int(rng, n - j);
        int tmp = pool[j];
        pool[j] = pool[r];
        pool[r] = tmp;
        vars[j] = pool[j];
    }
}

/* A factor over the multi-variables ms (DENSE or SEQUENCE). */
static void multi_factor(drawer *d, mg_graph *g, mg_kind kind, int n, const int *ms) {
    mg_factor *f = &g->factors[g->n_factors++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->n_multi = n;
    int product = 1;
    for (int b = 0; b < n; ++b) {
        f->multi[b] = ms[b];
        for (int t = 0; t < g->multi_states[ms[b]]; ++t)
            f->vars[f->degree++] = g->multi_first[ms[b]] + t;
        product *= g->multi_states[ms[b]];
    }
    if (kind == MG_DENSE) {
        f->n_add = product;
        bool allowed = false;
        for (int a = 0; a < product; ++a) {
            f->add[a] = rng_int(d->rng, 8) == 0 ? -INFINITY : draw_score(d);
            allowed |= f->add[a] > -INFINITY;
        }
        if (!allowed) f->add[rng_int(d->rng, product)] = draw_score(d);
    } else {
        f->n_add = g->multi_states[ms[0]] + g->multi_states[ms[n - 1]];
        for (int b = 1; b < n; ++b) f->n_add += g->multi_states[ms[b - 1]] * g->multi_states[ms[b]];
        /* one transition in eight forbidden (-inf), never those of the
         * all-state-0 path, which keeps some sequence allowed */
        bool on_path[MG_MAX_ADD] = {false};
        int at = g->multi_states[ms[0]];
        on_path[0] = true;
        for (int b = 1; b < n; ++b) {
            on_path[at] = true;
            at += g->multi_states[ms[b - 1]] * g->multi_states[ms[b]];
        }
        on_path[at] = true;
        for (int a = 0; a < f->n_add; ++a)
            f->add[a] = !on_path[a] && rng_int(d->rng, 8) == 0 ? -INFINITY : draw_score(d);
    }
}

void mg_random_graph(test_rng *rng, unsigned kinds, mg_graph *out) {
    memset(out, 0, sizeof *out);
    drawer d = {rng, pow(10.0, -3.0 + 6.0 * rng_uniform(rng)), 0.0, rng_int(rng, 5) == 0};
    d.low = rng_int(rng, 6) == 0 ? d.magnitude * 1e-10 : d.magnitude;
    if (rng_int(rng, 8) == 0) d.magnitude = 1e4, d.low = 1e-6;
    const bool multi = kinds & ((1u << MG_DENSE) | (1u << MG_SEQUENCE));
    long enumeration = 1;
    int n_vars = 0;
    /* multi-variables */
    const int n_multi = multi ? 1 + rng_int(rng, 4) : 0;
    for (int m = 0; m < n_multi; ++m) {
        const int k = 1 + rng_int(rng, rng_int(rng, 3) == 0 ? 4 : 3);
        out->multi_first[m] = n_vars;
        out->multi_states[m] = k;
        out->multi_xor[m] = rng_int(rng, 2) == 0;
        n_vars += k;
        enumeration *= k;
    }
    out->n_multi = n_multi;
    /* binary variables, as many as brute force affords */
    int n_binary = rng_int(rng, 9);
    while (enumeration << n_binary > MG_MAX_ENUMERATION / 8) n_binary -= 1;
    n_vars += n_binary;
    /* structured factors over fresh variables */
    if ((kinds & (1u << MG_MATCHING)) && rng_int(rng, 3) == 0 && n_vars + 6 <= MG_MAX_VARS &&
        (enumeration << (n_binary + 6)) <= MG_MAX_ENUMERATION) {
        mg_factor *f = &out->factors[out->n_factors++];
        memset(f, 0, sizeof *f);
        f->kind = MG_MATCHING;
        f->rows = 2;
        f->cols = 2 + rng_int(rng, 2);
        f->degree = f->rows * f->cols;
        for (int j = 0; j < f->degree; ++j) f->vars[j] = n_vars + j;
        n_vars += f->degree;
        n_binary += f->degree;
    }
    if ((kinds & (1u << MG_TREE)) && rng_int(rng, 3) == 0 && n_vars + 9 <= MG_MAX_VARS) {
        const bool room = (enumeration << (n_binary + 9)) <= MG_MAX_ENUMERATION;
        const int length = room ? 3 + rng_int(rng, 2) : 3;
        if ((enumeration << (n_binary + (length == 3 ? 4 : 9))) <= MG_MAX_ENUMERATION) {
            mg_factor *f = &out->factors[out->n_factors++];
            memset(f, 0, sizeof *f);
            f->kind = MG_TREE;
            f->length = length;
            int h[16], mo[16];
            f->degree = mg_tree_arcs(length, h, mo);
            for (int j = 0; j < f->degree; ++j) f->vars[j] = n_vars + j;
            n_vars += f->degree;
            n_binary += f->degree;
        }
    }
    out->n_vars = n_vars;
    for (int i = 0; i < n_vars; ++i) out->theta[i] = draw_score(&d);
    /* multi-variables without their XOR are covered by a DENSE or SEQUENCE */
    for (int m = 0; m < n_multi; ++m) {
        if (out->multi_xor[m]) continue;
        int ms[3] = {m, -1, -1}, n = 1;
        for (int q = 0; q < n_multi && n < 3; ++q)
            if (q != m && rng_int(rng, 2) == 0) ms[n++] = q;
        int links = 0;
        for (int b = 0; b < n; ++b) links += out->multi_states[ms[b]];
        while (links > MG_MAX_LINKS) links -= out->multi_states[ms[--n]];
        const bool sequence = (kinds & (1u << MG_SEQUENCE)) && rng_int(rng, 3) == 0;
        multi_factor(&d, out, sequence || !(kinds & (1u << MG_DENSE)) ? MG_SEQUENCE : MG_DENSE,
                     n, ms);
    }
    /* more factors */
    const int want = out->n_factors + rng_int(rng, 2 + n_vars / 2);
    for (int attempt = 0; attempt < 40 && out->n_factors < want &&
                          out->n_factors < MG_MAX_FACTORS;
         ++attempt) {
        const mg_kind kind = (mg_kind)rng_int(rng, MG_NUM_KINDS);
        if (!(kinds & (1u << kind)) || kind == MG_MATCHING || kind == MG_TREE) continue;
        if ((kind == MG_DENSE || kind == MG_SEQUENCE)) {
            if (n_multi == 0) continue;
            int ms[3], n = 1 + rng_int(rng, n_multi < 3 ? n_multi : 3);
            draw_vars(rng, n_multi, n, ms);
            int links = 0;
            for (int b = 0; b < n; ++b) links += out->multi_states[ms[b]];
            while (links > MG_MAX_LINKS) links -= out->multi_states[ms[--n]];
            multi_factor(&d, out, kind, n, ms);
            continue;
        }
        if (n_vars < 2 && kind == MG_PAIR) continue;
        mg_factor *f = &out->factors[out->n_factors];
        memset(f, 0, sizeof *f);
        f->kind = kind;
        const double neg = rng_int(rng, 3) * 0.25;
        if (kind == MG_PAIR) {
            f->degree = 2;
            f->n_add = 1;
            f->add[0] = draw_score(&d);
        } else if (kind == MG_USER) {
            f->degree = 1 + rng_int(rng, n_vars < 4 ? n_vars : 4);
            f->n_add = 1;
            f->add[0] = draw_score(&d);
        } else {
            const ref_kind rk = (ref_kind)rng_int(rng, REF_PAIR); /* every logic kind */
            const int dmin = rk == REF_OROUT || rk == REF_ANDOUT ? 2 : 1;
            if (n_vars < dmin) continue;
            f->degree = dmin + rng_int(rng, (n_vars < 5 ? n_vars : 5) - dmin + 1);
            f->logic.kind = rk;
            if (rk == REF_BUDGET) f->logic.budget = rng_int(rng, f->degree + 1);
            if (rk == REF_BUDGET_EXACT) f->logic.budget = rng_int(rng, f->degree + 1);
            if (rk == REF_KNAPSACK) {
                double total = 0.0;
                for (int j = 0; j < f->degree; ++j)
                    total += f->logic.costs[j] = (double)rng_int(rng, 5);
                f->logic.budget = floor(rng_uniform(rng) * (total + 1.0));
            }
        }
        draw_vars(rng, n_vars, f->degree, f->vars);
        if (kind != MG_PAIR)
            for (int j = 0; j < f->degree; ++j) f->negated[j] = rng_uniform(rng) < neg;
        out->n_factors += 1;
    }
}

void mg_print(const mg_graph *g) {
    printf("  mg_graph: %d variables, multi-variables:", g->n_vars);
    for (int m = 0; m < g->n_multi; ++m)
        printf(" [%d..%d%s]", g->multi_first[m], g->multi_first[m] + g->multi_states[m] - 1,
               g->multi_xor[m] ? " xor" : "");
    printf("\n  theta:");
    for (int i = 0; i < g->n_vars; ++i) printf(" %.17g", g->theta[i]);
    printf("\n");
    static const char *names[MG_NUM_KINDS] = {"LOGIC",    "PAIR",     "DENSE", "USER",
                                              "SEQUENCE", "MATCHING", "TREE"};
    for (int k = 0; k < g->n_factors; ++k) {
        const mg_factor *f = &g->factors[k];
        printf("  %s", names[f->kind]);
        if (f->kind == MG_LOGIC)
            printf("(%s budget %g)", ref_kind_name(f->logic.kind), f->logic.budget);
        printf(" vars");
        for (int j = 0; j < f->degree; ++j) printf(" %s%d", f->negated[j] ? "-" : "", f->vars[j]);
        if (f->n_add) {
            printf(" add");
            for (int a = 0; a < f->n_add; ++a) printf(" %.17g", f->add[a]);
        }
        printf("\n");
    }
}
