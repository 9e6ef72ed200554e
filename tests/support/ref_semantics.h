/*
 * Test-side description of factor graphs and the meaning of every factor,
 * written from the documentation in concord.h and nothing else: the
 * references in the tests (brute force, GLPK, QP solvers) take their notion
 * of "allowed configuration" from here, never from the library's code.
 */
#ifndef CONCORD_REF_SEMANTICS_H
#define CONCORD_REF_SEMANTICS_H

#include <stdbool.h>

#include "concord.h"

enum { REF_MAX_DEGREE = 16, REF_MAX_VARS = 64, REF_MAX_FACTORS = 64 };

typedef enum ref_kind {
    REF_XOR,
    REF_XOROUT,
    REF_ATMOSTONE,
    REF_OR,
    REF_OROUT,
    REF_ANDOUT,
    REF_IMPLY,
    REF_BUDGET,
    REF_BUDGET_EXACT,
    REF_KNAPSACK,
    REF_PAIR,
    REF_NUM_KINDS
} ref_kind;

typedef struct ref_factor {
    ref_kind kind;
    int degree;
    int vars[REF_MAX_DEGREE];
    bool negated[REF_MAX_DEGREE]; /* as passed to the API (PAIR: none) */
    double budget;                /* BUDGET, BUDGET_EXACT, KNAPSACK */
    double costs[REF_MAX_DEGREE]; /* KNAPSACK */
    double score;                 /* PAIR: score of both on */
} ref_factor;

typedef struct ref_graph {
    int n_vars;
    double theta[REF_MAX_VARS];
    int n_factors;
    ref_factor factors[REF_MAX_FACTORS];
} ref_graph;

/* "XOR", "BUDGET_EXACT", ... */
const char *ref_kind_name(ref_kind kind);

/* Number of additional outputs of a factor (PAIR: 1, others: 0). */
int ref_num_additionals(const ref_factor *f);

/* Whether variable values x[0..degree) (0/1, the raw variables, before any
 * negation) and additional values y[0..n_add) are an allowed configuration
 * of the factor. For KNAPSACK this is integer feasibility (its polytope in
 * concord is the continuous relaxation, see concord.h). */
bool ref_allowed(const ref_factor *f, const int *x, const int *y);

/* Builds the graph through the public API; NULL if the API refused it
 * (the message is printed). */
concord_graph *ref_build(const ref_graph *rg);

/* Makes rg its first factor alone, over that factor's variables (a PAIR
 * takes b[0] as its score), and builds it as ref_build does. */
concord_graph *ref_build_single_factor(ref_graph *rg, const double *b);

/* theta . u + sum over factors of their additional scores . v, with v laid
 * out in factor order as in concord (PAIR's one output each). */
double ref_objective(const ref_graph *rg, const double *u, const double *v);

#endif /* CONCORD_REF_SEMANTICS_H */
