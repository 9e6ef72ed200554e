/*
 * Factor semantics for the test references (see ref_semantics.h).
 */
#include "ref_semantics.h"

#include <stdio.h>

const char *ref_kind_name(ref_kind kind) {
    static const char *names[REF_NUM_KINDS] = {
        "XOR", "XOROUT", "ATMOSTONE", "OR", "OROUT", "ANDOUT",
        "IMPLY", "BUDGET", "BUDGET_EXACT", "KNAPSACK", "PAIR"};
    return kind < REF_NUM_KINDS ? names[kind] : "?";
}

int ref_num_additionals(const ref_factor *f) { return f->kind == REF_PAIR ? 1 : 0; }

bool ref_allowed(const ref_factor *f, const int *x, const int *y) {
    int lit[REF_MAX_DEGREE];
    int n = f->degree, sum = 0, rest = 0, all_rest = 1;
    double cost = 0.0;
    for (int j = 0; j < n; ++j) {
        lit[j] = f->negated[j] ? 1 - x[j] : x[j];
        sum += lit[j];
        cost += f->costs[j] * lit[j];
        if (j < n - 1) {
            rest += lit[j];
            all_rest &= lit[j];
        }
    }
    int last = lit[n - 1];
    switch (f->kind) {
    case REF_XOR: return sum == 1;
    case REF_XOROUT: return rest <= 1 && last == rest;
    case REF_ATMOSTONE: return sum <= 1;
    case REF_OR: return sum >= 1;
    case REF_OROUT: return last == (rest > 0);
    case REF_ANDOUT: return last == all_rest;
    case REF_IMPLY: return !all_rest || last;
    case REF_BUDGET: return sum <= f->budget;
    case REF_BUDGET_EXACT: return sum == f->budget;
    case REF_KNAPSACK: return cost <= f->budget;
    case REF_PAIR: return y[0] == (x[0] && x[1]);
    default: return false;
    }
}

concord_graph *ref_build_single_factor(ref_graph *rg, const double *b) {
    ref_factor *f = &rg->factors[0];
    rg->n_vars = f->degree;
    rg->n_factors = 1;
    if (f->kind == REF_PAIR) f->score = b[0];
    return ref_build(rg);
}

concord_graph *ref_build(const ref_graph *rg) {
    concord_graph *g = concord_graph_new();
    if (!g) return NULL;
    int rc = concord_add_variables(g, rg->n_vars, rg->theta, NULL);
    for (int k = 0; k < rg->n_factors && rc == CONCORD_OK; ++k) {
        const ref_factor *f = &rg->factors[k];
        int32_t vars[REF_MAX_DEGREE];
        for (int j = 0; j < f->degree; ++j) vars[j] = f->vars[j];
        switch (f->kind) {
        case REF_XOR: rc = concord_add_logic(g, CONCORD_XOR, f->degree, vars, f->negated, NULL); break;
        case REF_XOROUT: rc = concord_add_logic(g, CONCORD_XOROUT, f->degree, vars, f->negated, NULL); break;
        case REF_ATMOSTONE: rc = concord_add_logic(g, CONCORD_ATMOSTONE, f->degree, vars, f->negated, NULL); break;
        case REF_OR: rc = concord_add_logic(g, CONCORD_OR, f->degree, vars, f->negated, NULL); break;
        case REF_OROUT: rc = concord_add_logic(g, CONCORD_OROUT, f->degree, vars, f->negated, NULL); break;
        case REF_ANDOUT: rc = concord_add_logic(g, CONCORD_ANDOUT, f->degree, vars, f->negated, NULL); break;
        case REF_IMPLY: rc = concord_add_logic(g, CONCORD_IMPLY, f->degree, vars, f->negated, NULL); break;
        case REF_BUDGET: rc = concord_add_budget(g, f->degree, vars, f->negated, f->budget, false, NULL); break;
        case REF_BUDGET_EXACT: rc = concord_add_budget(g, f->degree, vars, f->negated, f->budget, true, NULL); break;
        case REF_KNAPSACK: rc = concord_add_knapsack(g, f->degree, vars, f->negated, f->costs, f->budget, NULL); break;
        case REF_PAIR: rc = concord_add_pair(g, vars[0], vars[1], f->score, NULL); break;
        default: rc = CONCORD_EINVAL;
        }
    }
    if (rc != CONCORD_OK) {
        fprintf(stderr, "ref_build: %s\n", concord_last_error(g));
        concord_graph_free(g);
        return NULL;
    }
    return g;
}

double ref_objective(const ref_graph *rg, const double *u, const double *v) {
    double value = 0.0;
    for (int i = 0; i < rg->n_vars; ++i) value += rg->theta[i] * u[i];
    int k = 0;
    for (int f = 0; f < rg->n_factors; ++f)
        if (rg->factors[f].kind == REF_PAIR) value += rg->factors[f].score * v[k++];
    return value;
}
