/*
 * The singly-constrained box QP behind most closed-form factors:
 *
 *   minimize  sum_i 1/2 d_i u_i^2 - a_i u_i
 *   over      0 <= u_i <= 1,   sum_i c_i u_i  (<=, = or >=)  rhs,
 *
 * with d_i > 0 and c_i >= 0 (of moderate size: KNAPSACK keeps its largest
 * cost in [1, 2)). XOR (= 1), ATMOSTONE (<= 1), OR (>= 1), BUDGET (<= B
 * or = B) and KNAPSACK (<= B with costs) are all this problem. The
 * solution is u_i(tau) = clip((a_i - tau c_i) / d_i, 0, 1) for the root
 * tau of the piecewise-linear map tau -> sum_i c_i u_i(tau) - rhs
 * (Pardalos and Kovoor's problem), found by variable fixing and a Newton
 * step (Kiwiel), with a sort of the 2n breakpoints as the fallback after
 * 8 + 2 log2 n passes (box_qp.c).
 */
#ifndef CONCORD_BOX_QP_H
#define CONCORD_BOX_QP_H

#include <stddef.h>
#include <stdint.h>

#include "../util.h"

typedef enum box_sense { BOX_LE, BOX_EQ, BOX_GE } box_sense;

/* Bytes of scratch box_qp needs for n variables. */
size_t box_qp_scratch_bytes(int32_t n);

/* Item i's cost: c_i, or 1 when c == NULL (unit costs). */
static inline double box_qp_cost(const double *c, int32_t i) { return c ? c[i] : 1.0; }

/* box_qp past its first step, when the clipped point u(0) = clip(a/d)
 * violates the constraint, which then binds (out of line): s0 = sum_i c_i
 * u_i(0) tells on which side. */
double box_qp_binding(int32_t n, const double *a, const double *d, const double *c, double rhs,
                      double *u, void *scratch, double s0);

/* box_qp past its first step for unit costs, rhs 1 and at most
 * BOX_QP_SMALL_SIMPLEX items (OR, XOR and ATMOSTONE factors of a few
 * variables: most factor solves of AD3's coref and mln_large graphs), in
 * closed form. box_qp calls it directly: through box_qp_binding, whose
 * general cases make its entry and exit costly, a solve of AD3's coref
 * graph ran 1.5% more instructions and took 1-3% longer. */
enum { BOX_QP_SMALL_SIMPLEX = 4 };
double box_qp_small_unit_simplex(int32_t n, const double *a, const double *d, double *u);

/* Solves the problem above; c == NULL means all costs are 1. The caller
 * guarantees feasibility (rhs >= 0; rhs <= sum c for EQ and GE). Writes u
 * and returns the multiplier tau (0 when the sum constraint is inactive).
 * Inline up to the test of u(0): most solves end there (73% of the OR
 * solves on AD3's coref graph), and then cost no call. */
static inline double box_qp(int32_t n, const double *a, const double *d, const double *c,
                            double rhs, box_sense sense, double *u, void *scratch) {
    double s0 = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        u[i] = clip01(a[i] / d[i]);
        s0 += box_qp_cost(c, i) * u[i];
    }
    if ((sense == BOX_LE && s0 <= rhs) || (sense == BOX_GE && s0 >= rhs) ||
        (sense == BOX_EQ && s0 == rhs))
        return 0.0;
    if (!c && rhs == 1.0 && n <= BOX_QP_SMALL_SIMPLEX) return box_qp_small_unit_simplex(n, a, d, u);
    return box_qp_binding(n, a, d, c, rhs, u, scratch, s0);
}

/* The derivative on the face holding the solution u: with F the items
 * strictly inside (0, 1), du = x on F and 0 elsewhere, minus, when the sum
 * constraint is active, the W-orthogonal component along c:
 *   du_i = x_i - (c_i / w_i) (sum_F c_j x_j) / (sum_F c_j^2 / w_j),  i in F.
 * du may be the same array as x. */
void box_qp_face(int32_t n, const double *u, const double *c, int active, const double *w,
                 const double *x, double *du);

/* Whether the sum constraint binds at a solution returned with multiplier
 * tau (an equality always does): the face code of the box-QP factors. */
static inline int32_t box_qp_active(box_sense sense, double tau) {
    return sense == BOX_EQ || tau != 0.0;
}

#endif /* CONCORD_BOX_QP_H */
