/*
 * Graph-level references for the tests, independent of the library's code:
 * the local-polytope LP solved by GLPK (every factor in V-representation,
 * one weight per allowed configuration taken from ref_allowed, except
 * KNAPSACK whose polytope is the continuous knapsack polytope, written in
 * H-representation), exact MAP by enumerating all assignments, the distance
 * of a factor's posterior to its polytope (an LP), and a generator of varied
 * random graphs. GLPK's simplex is followed by its exact (rational) simplex,
 * so the optima are those of the LP with the given doubles, not up to
 * GLPK's 1e-7 tolerances.
 */
#ifndef CONCORD_REF_GRAPH_H
#define CONCORD_REF_GRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "ref_semantics.h"
#include "testutil.h"

enum {
    REF_LP_OPTIMAL = 0,    /* an optimum was found */
    REF_LP_INFEASIBLE = 1, /* the local polytope is empty */
    REF_LP_ERROR = -1      /* GLPK failed (or the graph is malformed) */
};

/* Total number of additional outputs of the graph (PAIR: one each). */
int ref_graph_num_additionals(const ref_graph *rg);

/* Largest |score| over variable and additional scores (0 if all zero). */
double ref_graph_score_scale(const ref_graph *rg);

/* Sum of |score| over variable and additional scores: bounds how much the
 * objective can change when every posterior moves by at most 1. */
double ref_graph_score_l1(const ref_graph *rg);

/* Multiplies every variable and additional score by `factor`. */
void ref_graph_scale_scores(ref_graph *rg, double factor);

/* The LP-MAP problem on the local polytope. On REF_LP_OPTIMAL, *value is
 * the optimum and u (n_vars) / v (additionals, may be NULL when there are
 * none) an optimal point; any output pointer may be NULL. */
int ref_local_lp(const ref_graph *rg, double *value, double *u, double *v);

/* Over the near-optimal face {feasible, objective >= value - slack}, the
 * range [lo, hi] of every variable (lo/hi[0..n_vars)) and additional
 * (lo/hi[n_vars..n_vars+additionals)). `value` is the LP optimum. When all
 * ranges are narrow, the LP optimum is unique (in u and v). */
int ref_local_lp_ranges(const ref_graph *rg, double value, double slack, double *lo,
                        double *hi);

/* Exact MAP by enumerating all 2^n_vars assignments (n_vars <= 24). Returns
 * true if some assignment satisfies every factor; then *value is the best
 * objective and x (may be NULL) an assignment reaching it. PAIR's output is
 * x1*x2; KNAPSACK is integer feasibility. */
bool ref_brute_map(const ref_graph *rg, double *value, int *x);

/* The objective of the 0/1 assignment x (n_vars) by the factors' meaning,
 * PAIR outputs being products; -INFINITY when some factor disallows x. */
double ref_assignment_value(const ref_graph *rg, const int *x);

/* The L-infinity distance from (u_f, v_f) to the factor's polytope M_f:
 * u_f[0..degree) are the values of the factor's variables (raw, before
 * negation), v_f[0..additionals) its additional outputs (may be NULL when
 * it has none). Negative on GLPK failure. */
double ref_distance_to_factor(const ref_factor *f, const double *u_f, const double *v_f);

/* The largest distance over the factors of the graph for the posteriors u
 * (n_vars) and v (additionals, factor order); *worst (may be NULL)
 * receives the factor reaching it. */
double ref_graph_max_distance(const ref_graph *rg, const double *u, const double *v,
                              int *worst);

/* A random graph: 1..max_vars variables (max_vars <= 20 keeps brute force
 * cheap), mixed factor kinds (every ref_kind), negations, degree-1
 * factors, variables in no factor, ties, score magnitudes from 1e-9 to 1e6
 * (some graphs mixing magnitudes). Most graphs are built around a planted
 * assignment that satisfies every factor (so they are feasible); others are
 * drawn freely and may be infeasible. */
void ref_random_graph(test_rng *rng, int max_vars, ref_graph *out);

/* Prints the graph as a C initializer of ref_graph (for reproducers). */
void ref_graph_print(FILE *fp, const ref_graph *rg);

#endif /* CONCORD_REF_GRAPH_H */
