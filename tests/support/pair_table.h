/*
 * A DENSE factor over two variables of k states each, solved directly by
 * the generic active set (its QP in variable space, as the ADMM loop calls
 * it), and the checks that need no other solver: the active set must be a
 * distribution over joint states reproducing (u, v), and the Frank-Wolfe
 * gap over all k^2 joint states (the most any joint state improves the
 * linearized objective at (u, v)) certifies optimality. With small table
 * scores the solution mixes up to 2k - 1 joint states, which makes these
 * tables the tests' large active sets.
 */
#ifndef CONCORD_PAIR_TABLE_H
#define CONCORD_PAIR_TABLE_H

#include "concord.h"
#include "factor.h"
#include "qp/active_set.h"
#include "testutil.h"

typedef struct pair_table {
    int k;            /* states per variable */
    concord_graph *g; /* the factor, as factor 0 */
    double *a, *d;    /* link scores and QP weights (2k) */
    double *b;        /* table scores (k * k, the second variable fastest) */
    active_set *state;
    factor_buffers buf;
    double *u, *v; /* the last solution (2k, k * k) */
} pair_table;

/* Random scores: links and table uniform in [-scale, scale], weights
 * uniform in [0.5, 2]. */
void pair_table_init(pair_table *t, int k, double scale, test_rng *rng);
void pair_table_free(pair_table *t);

/* Solves the QP from the current state with at most max_iter oracle
 * calls. */
qp_outcome pair_table_solve(pair_table *t, int32_t max_iter);

/* Asserts that the active set is a distribution over joint states (weights
 * >= 0 summing to 1, one state per variable, the matching table entry)
 * that reproduces u and v within 1e-9. */
void pair_table_assert_distribution(const pair_table *t);

/* The Frank-Wolfe gap at (u, v) divided by the scale of the objective's
 * terms (1 + sum |a| u + sum d u^2 + sum |b| v). */
double pair_table_relative_gap(const pair_table *t);

#endif /* CONCORD_PAIR_TABLE_H */
