/*
 * An exact LP-MAP and MAP reference for graphs with structured factors,
 * independent of the library's code: the graph's .fg text is read by the
 * tests' own reader (fg_reader.h) and
 *
 *   max  sum_i theta_i u_i + sum_k score_k v_k
 *
 * over the local polytope (each factor's marginal polytope, the factors
 * coupled through the shared variables u) is solved by GLPK, each factor's
 * polytope written as an exact extended formulation (one whose projection
 * onto the factor's variables and additional outputs is the convex hull of
 * its configurations):
 *
 *   logic factors, KNAPSACK (its continuous polytope, as the library's)
 *     and PAIR: their H-representations (hrep_build below);
 *   ARBORESCENCE: one head per token, and the directed cuts: for every
 *     set S of tokens, the arcs entering S from outside sum to at least 1
 *     (Edmonds: with the one-head rows, the exact description of the
 *     arborescences). By max-flow min-cut, these are the projection of the
 *     multi-commodity flow formulation (Martins, Smith and Xing 2009: one
 *     unit of commodity k from the root to each token k, its flow on each
 *     arc at most the arc's variable); that formulation itself is too big
 *     for GLPK (parsing01.fg: 62 commodities over 354 arcs, 22000 flow
 *     columns and rows, 55 s by the primal simplex, 65 s by the dual, over
 *     200 s by the interior point method), so the cuts are generated as
 *     needed: after each solve, a maximum flow from the root to each
 *     token at capacities u_a that falls short of 1 yields a violated cut
 *     (the arcs leaving the nodes the root reaches in its residual
 *     network), added before solving again;
 *   HEAD_AUTOMATON: a unit flow from position 0 to D+1 through the DAG of
 *     the positions, edge j -> s carrying the additional output of the
 *     pair (j, s), the flow through position m being the variable of arc m;
 *   GRANDPARENT_HEAD_AUTOMATON: exactly one grandparent; one copy of the
 *     sibling DAG per grandparent g carrying the flow u_g (the disjunctive
 *     formulation of the union over g), the flow through position m of
 *     copy g being the output (g, m), summing over g to the modifier's
 *     variable; each sibling output the sum of its edge over the copies;
 *   SEQUENCE: a unit flow through the trellis start -> states of position
 *     1 -> ... -> stop, the flow through a state being its variable, the
 *     edge flows the transition outputs; SEQUENCE_BUDGET the same over the
 *     trellis of (state, number of positions in state 0 so far) when the
 *     budget is below the length.
 *
 * Flows through a DAG from one source to one sink form an integral
 * polytope, and each formulation above projects onto the convex hull of
 * the factor's configurations, so this program's optimum is LP-MAP's.
 */
#ifndef CONCORD_REF_EXTENDED_LP_H
#define CONCORD_REF_EXTENDED_LP_H

#include <stdbool.h>
#include <stddef.h>

#include "fg_reader.h"

enum {
    REF_EXT_OPTIMAL = 0,     /* an optimum was found */
    REF_EXT_INFEASIBLE = 1,  /* the local polytope (MIP: the 0/1 points) is empty */
    REF_EXT_UNSUPPORTED = 2, /* a factor type without a formulation here */
    REF_EXT_ERROR = -1       /* malformed text, several graphs, or GLPK failed */
};

enum { REF_EXT_EXACT_MAX_ROWS = 50000 };

/* Solves the graph of fg_text (which must hold exactly one graph).
 * integral false: LP-MAP over the local polytope. integral true: the same
 * program with the variables u restricted to {0, 1} (GLPK's branch and
 * cut), which is exact MAP (every flow above is then integral too).
 * On REF_EXT_OPTIMAL, *value is sum theta u + sum score v at the solution
 * found and u (n_vars; may be NULL) its variables.
 *
 * Precision: the objective is divided by a power of two near its largest
 * coefficient, so that GLPK's absolute tolerances are relative to the
 * scores. The simplex (feasibility and optimality tolerances 1e-9) and the
 * passes of cuts run until no cut is violated by more than 1e-9; then
 * GLPK's exact (rational) simplex polishes the optimum from the basis found
 * (cheap: 0.08 s on parsing01.fg) and the cuts are checked again at that
 * optimum, to 1e-12. So the value is the exact optimum of the LP with the
 * given doubles and the cuts generated, at a point that violates no other
 * cut by more than 1e-12; far inside a 1e-6 relative comparison. Programs of more than REF_EXT_EXACT_MAX_ROWS rows (logic
 * graphs like AD3's mln_large.fg, 180000 rows) skip the exact simplex:
 * their optimum is that of a basis primal and dual feasible within 1e-9
 * of the normalized program. The MIP runs to a zero gap, again after each
 * pass of cuts, and its variables are rounded to 0/1 before the value is
 * summed; but GLPK's branch and bound has no exact counterpart, and its
 * LPs ignore reduced costs below about 1e-7 of the normalized objective:
 * on graphs whose scores span more than 7 orders of magnitude, a score
 * below 1e-7 of the largest may be left out of the optimum (seen on a
 * random graph with scores from 1e-3 to 6e5). The MAP value is exact to
 * 1e-6 of the largest |score|, not better. */
int ref_extended_lp(const char *fg_text, bool integral, double *value, double *u);

/* ref_extended_lp on a graph already read; also the additional outputs v
 * (n_additionals, in the graph's order; may be NULL). */
int ref_extended_lp_graph(const fg_graph *g, bool integral, double *value, double *u,
                          double *v);

/* The H-representation of the logic factors and PAIRs of a graph (the
 * structured factors add no row): rows sum_j a_j lit_j (<=, =, >=) b over
 * literals, a_j integers, each the exact hull of its factor:
 *   XOR           sum lit = 1
 *   XOROUT        sum of the first D-1 lit - lit_D = 0
 *   ATMOSTONE     sum lit <= 1
 *   OR            sum lit >= 1
 *   OROUT         lit_i <= lit_D (each input), lit_D <= sum of the inputs
 *   ANDOUT        lit_D <= lit_i (each input), sum of the inputs - lit_D <= D-2
 *   IMPLY         sum of the first D-1 lit - lit_D <= D-2
 *   BUDGET        sum lit <= B;  BUDGET_EXACT  sum lit = B
 *   PAIR          v <= u1, v <= u2, v >= u1 + u2 - 1 (v >= 0: its bound) */
typedef struct hrow {
    int n;
    int *var;  /* variable index, or -(1 + k) for additional output k */
    char *neg; /* the literal is 1 - x */
    double *a;
    int sense; /* -1: <=, 0: =, +1: >= */
    double b;
} hrow;

typedef struct hrep {
    hrow *rows;
    int n_rows, cap;
    int *var_pool;
    char *neg_pool;
    double *a_pool;
    size_t pool_used, pool_cap;
} hrep;

/* Fills h (release with hrep_free, also after a failure); 0, or -1 when
 * out of memory. */
int hrep_build(const fg_graph *g, hrep *h);
void hrep_free(hrep *h);

/* The left side of row r at variables u and additional outputs v. */
double hrow_activity(const hrow *r, const double *u, const double *v);

#endif /* CONCORD_REF_EXTENDED_LP_H */
