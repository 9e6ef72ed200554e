/*
 * Independent references for a single factor, used to check the library's
 * closed-form QPs and MAP oracles. Everything here works in variable space
 * (the raw variables, negated links included) and is derived only from the
 * factor semantics of ref_semantics.h and the math of DESIGN.md §1: the
 * allowed configurations are enumerated by brute force with ref_allowed
 * (KNAPSACK: the vertices of its continuous polytope), the MAP is a scan of
 * them (or an LP solved by GLPK), and the weighted QP is solved by pairwise
 * Frank-Wolfe over the enumerated vertices followed by an exact active-set
 * polish and a verified KKT certificate. Nothing here calls library code
 * other than the public API used by ref_semantics.c.
 */
#ifndef CONCORD_REF_FACTOR_H
#define CONCORD_REF_FACTOR_H

#include <stdbool.h>

#include "ref_semantics.h"
#include "testutil.h"

/* Brute force enumerates 2^degree configurations (times the additionals). */
enum { REF_FACTOR_MAX_DEGREE = 12 };

/* A list of points (u, v) of a factor's polytope in variable space. */
typedef struct ref_points {
    int count;  /* number of points */
    int degree; /* u coordinates per point */
    int n_add;  /* v coordinates per point */
    double *u;  /* count x degree, row-major */
    double *v;  /* count x n_add, row-major (NULL when n_add == 0) */
} ref_points;

/* The vertices of the factor's polytope: every allowed configuration (u, v)
 * in {0,1}^degree x {0,1}^n_add, plus for KNAPSACK the fractional vertices
 * of the continuous knapsack polytope (all coordinates but one integral and
 * the budget tight). Returns 0, or -1 (bad degree, no allowed point, out of
 * memory) with *out empty. Release with ref_points_free. */
int ref_factor_vertices(const ref_factor *f, ref_points *out);
void ref_points_free(ref_points *pts);

/* The best score a.u + b.v over the vertices, and a maximizer (u, v); for
 * KNAPSACK this is the LP over the continuous polytope. NAN on failure. */
double ref_map(const ref_factor *f, const double *a, const double *b, double *u, double *v);

/* KNAPSACK only: max a.u over the continuous knapsack polytope, solved by
 * GLPK's simplex with tight tolerances. Writes a maximizer to u
 * (may be NULL) and the value to *value. Returns 0 or -1. */
int ref_knapsack_lp(const ref_factor *f, const double *a, double *u, double *value);

/* How far (u, v) is from the factor's polytope: 0 when inside. For
 * KNAPSACK, the largest violation of a box bound or of the budget (in units
 * of the largest cost, so comparable to a distance in u). For the others,
 * the max-norm distance to a point of the polytope found by an LP (GLPK)
 * over the convex combinations of the allowed configurations, recomputed
 * here from the LP's weights (so it is a proven upper bound, at most
 * (degree + n_add) times the true max-norm distance). NAN on failure. */
double ref_polytope_violation(const ref_factor *f, const double *u, const double *v);

/* The weighted QP objective a.u + b.v - 1/2 sum_i d_i u_i^2. */
double ref_qp_objective(const ref_factor *f, const double *a, const double *b,
                        const double *d, const double *u, const double *v);

/* The scale of a QP's numbers: sum |a| + sum d + sum |b|. Linear-oracle
 * gaps and objective differences are measured relative to it. */
double ref_qp_scale(const ref_factor *f, const double *a, const double *b, const double *d);

typedef struct ref_qp_report {
    int fw_iterations; /* Frank-Wolfe iterations run */
    int polish_steps;  /* active-set steps of the polish */
    int support;       /* vertices with positive weight at the end */
    double gap;        /* linear-oracle (Frank-Wolfe) gap at the end */
    double scale;      /* ref_qp_scale */
    double min_weight; /* smallest weight of the final convex combination */
} ref_qp_report;

/* The weighted QP: argmax over the polytope of a.u + b.v - 1/2 sum d_i u_i^2
 * (d_i > 0), by pairwise Frank-Wolfe over the vertices, then an active-set
 * polish (exact equality-constrained QP on the support by Gaussian
 * elimination with iterative refinement, negative weights dropped, the
 * best vertex added while it improves), then verification of the KKT
 * conditions: the result is a convex combination of vertices with weights
 * >= -1e-12 summing to 1 +- 1e-12, its linear-oracle gap is at most
 * 1e-11 * scale, and no vertex improves on the best active one beyond a
 * rounding bound. Writes u (degree) and v (n_add; may be NULL when 0) and
 * returns 0 when verified, -1 otherwise. `report` may be NULL. The optimal
 * u is unique; v is unique only when b breaks ties between the vertices. */
int ref_qp(const ref_factor *f, const double *a, const double *b, const double *d,
           double *u, double *v, ref_qp_report *report);

/* Random test inputs, drawn for the library's documented domain:
 * a factor of the given kind over variables 0..degree-1 with random
 * negations (none for PAIR), degree in [1, max_degree] (OROUT and ANDOUT
 * at least 2, PAIR exactly 2), integer budgets for BUDGET (>= 0) and
 * BUDGET_EXACT (<= degree), KNAPSACK costs >= 0 with zeros and ties. */
void ref_draw_factor(test_rng *r, ref_kind kind, int max_degree, ref_factor *f);

/* Curvatures d > 0: log-uniform in [1e-3, 1e3] per link, or all equal, or
 * all one, or in a narrow band. */
void ref_draw_curvatures(test_rng *r, int degree, double *d);

/* Scores a (degree) and b (n_add) from several regimes: standard normal,
 * normal times 10^k for k in -3..3, small integers (ties), repeated values,
 * and, when d is not NULL, values relative to d that land inside the box,
 * exactly on breakpoints, or within 1e-9 of them (to catch tolerances
 * misplaced in branch tests). b may be 0, positive or negative. */
void ref_draw_scores(test_rng *r, const ref_factor *f, const double *d, double *a, double *b);

/* Prints a factor and its inputs (C-literal precision) to stderr. */
void ref_print_case(const ref_factor *f, const double *a, const double *b, const double *d);

/* Prints "  name {x0, x1, ...}" (C-literal precision) to stderr. */
void ref_print_vector(const char *name, int n, const double *x);

#endif /* CONCORD_REF_FACTOR_H */
