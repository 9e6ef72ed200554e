/*
 * PAIR (Ising) factor: two binary variables and one additional output v,
 * the probability that both are 1, scored by b. Polytope:
 *   max(0, u1 + u2 - 1) <= v <= min(u1, u2).
 * The QP has no quadratic term on v, so v sits at min(u1, u2) when b >= 0
 * and at max(0, u1 + u2 - 1) when b < 0. Each case splits the square in two
 * regions on which the objective is a separable quadratic that upper-bounds
 * it everywhere; when the clipped maximizer of a region's quadratic lies in
 * its region it is the global optimum, otherwise the optimum is on the line
 * between the regions (u1 = u2, or u1 + u2 = 1), a one-dimensional QP.
 */
#include "../factor.h"
#include "../util.h"

static double pair_map(const factor *f, const double *a, const double *b,
                       double *u, double *v, void *scratch) {
    (void)f, (void)scratch;
    double best = 0.0;
    u[0] = u[1] = v[0] = 0.0;
    if (a[0] > best) {
        best = a[0];
        u[0] = 1.0;
    }
    if (a[1] > best) {
        best = a[1];
        u[0] = 0.0;
        u[1] = 1.0;
    }
    if (a[0] + a[1] + b[0] > best) {
        best = a[0] + a[1] + b[0];
        u[0] = u[1] = v[0] = 1.0;
    }
    return best;
}

static void pair_qp(const factor *f, const double *a, const double *b,
                    const double *d, double *u, double *v, void *scratch) {
    (void)f, (void)scratch;
    double s = b[0];
    if (s >= 0.0) {
        double x1 = clip01(a[0] / d[0]), x2 = clip01((a[1] + s) / d[1]);
        if (x1 >= x2) {
            u[0] = x1, u[1] = x2;
        } else {
            x1 = clip01((a[0] + s) / d[0]);
            x2 = clip01(a[1] / d[1]);
            if (x1 <= x2) {
                u[0] = x1, u[1] = x2;
            } else {
                u[0] = u[1] = clip01((a[0] + a[1] + s) / (d[0] + d[1]));
            }
        }
        v[0] = u[0] < u[1] ? u[0] : u[1];
        return;
    }
    double x1 = clip01(a[0] / d[0]), x2 = clip01(a[1] / d[1]);
    if (x1 + x2 <= 1.0) {
        u[0] = x1, u[1] = x2;
        v[0] = 0.0;
        return;
    }
    x1 = clip01((a[0] + s) / d[0]);
    x2 = clip01((a[1] + s) / d[1]);
    if (x1 + x2 >= 1.0) {
        u[0] = x1, u[1] = x2;
        v[0] = x1 + x2 - 1.0;
        return;
    }
    u[0] = clip01((a[0] - a[1] + d[1]) / (d[0] + d[1]));
    u[1] = 1.0 - u[0];
    v[0] = 0.0;
}

const factor_ops factor_pair_ops = {.name = "PAIR", .map = pair_map, .qp = pair_qp};
