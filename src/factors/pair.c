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
#include "../graph.h"
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

/* Which region holds the solution (the face code pair_qp returns): it
 * fixes both the tangent space and how v follows u (v = g1 u1 + g2 u2 +
 * const). */
typedef enum pair_face {
    ABOVE_DIAGONAL, /* b >= 0, u1 >= u2: v = u2 */
    BELOW_DIAGONAL, /* b >= 0, u1 <= u2: v = u1 */
    ON_DIAGONAL,    /* b >= 0, u1 = u2 = v */
    BELOW_ANTI,     /* b < 0, u1 + u2 <= 1: v = 0 */
    ABOVE_ANTI,     /* b < 0, u1 + u2 >= 1: v = u1 + u2 - 1 */
    ON_ANTI         /* b < 0, u1 + u2 = 1, v = 0 */
} pair_face;

static int32_t pair_qp(const factor *f, const double *a, const double *b, const double *d,
                       double *u, double *v, void *scratch) {
    (void)f, (void)scratch;
    double s = b[0];
    pair_face face;
    if (s >= 0.0) {
        double x1 = clip01(a[0] / d[0]), x2 = clip01((a[1] + s) / d[1]);
        if (x1 >= x2) {
            face = ABOVE_DIAGONAL;
        } else {
            x1 = clip01((a[0] + s) / d[0]);
            x2 = clip01(a[1] / d[1]);
            face = BELOW_DIAGONAL;
            if (x1 > x2) {
                /* compensated: huge scores that cancel leave the small one */
                compensated sum = {a[0], 0.0};
                compensated_add(&sum, a[1]);
                compensated_add(&sum, s);
                x1 = x2 = clip01(compensated_value(sum) / (d[0] + d[1]));
                face = ON_DIAGONAL;
            }
        }
        u[0] = x1, u[1] = x2;
        v[0] = x1 < x2 ? x1 : x2;
        return face;
    }
    double x1 = clip01(a[0] / d[0]), x2 = clip01(a[1] / d[1]);
    face = BELOW_ANTI;
    if (x1 + x2 > 1.0) {
        x1 = clip01((a[0] + s) / d[0]);
        x2 = clip01((a[1] + s) / d[1]);
        face = ABOVE_ANTI;
        if (x1 + x2 < 1.0) {
            x1 = clip01((a[0] - a[1] + d[1]) / (d[0] + d[1]));
            x2 = 1.0 - x1;
            face = ON_ANTI;
        }
    }
    u[0] = x1, u[1] = x2;
    v[0] = face == ABOVE_ANTI ? x1 + x2 - 1.0 : 0.0;
    return face;
}

static void pair_face_jvp(const factor *f, int32_t face, const double *b, const double *u,
                          const double *w, const double *x, const double *y, double *du,
                          double *dv, void *scratch) {
    (void)f, (void)b, (void)scratch;
    static const double gain[][2] = {{0, 1}, {1, 0}, {0.5, 0.5}, {0, 0}, {1, 1}, {0, 0}};
    const double *g = gain[face];
    double dphi = y ? y[0] : 0.0;
    double z[2] = {x[0] + g[0] * dphi / w[0], x[1] + g[1] * dphi / w[1]};
    if (face == ON_DIAGONAL || face == ON_ANTI) {
        /* one direction: (1, 1) on the diagonal, (1, -1) on the anti-diagonal */
        double sign = face == ON_DIAGONAL ? 1.0 : -1.0;
        int inside = u[0] > 0.0 && u[0] < 1.0 && u[1] > 0.0 && u[1] < 1.0;
        double t = inside ? (w[0] * z[0] + sign * w[1] * z[1]) / (w[0] + w[1]) : 0.0;
        du[0] = t;
        du[1] = sign * t;
    } else {
        for (int k = 0; k < 2; ++k) du[k] = u[k] > 0.0 && u[k] < 1.0 ? z[k] : 0.0;
    }
    if (dv) dv[0] = g[0] * du[0] + g[1] * du[1];
}

static const factor_ops pair_ops = {
    .name = "PAIR", .map = pair_map, .qp = pair_qp, .face_jvp = pair_face_jvp};

int concord_add_pair(concord_graph *g, int32_t var1, int32_t var2, double score,
                     int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    int32_t vars[2] = {var1, var2};
    return graph_add_factor(g, &pair_ops, 2, vars, NULL, false, 1, &score, NULL,
                            factor_id);
}
