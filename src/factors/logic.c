/*
 * Logic factors: XOR, ATMOSTONE, OR and OROUT, in literal space. XOROUT,
 * ANDOUT and IMPLY are these with some links flipped (graph.c flips them).
 *
 * XOR, ATMOSTONE and OR are the box QP with sum = 1, <= 1 and >= 1. OROUT
 * (the last literal t is the OR of the others) has the polytope
 *   u_i <= t,  t <= sum_i u_i,  0 <= u, t <= 1.
 * Its QP first drops t <= sum_i u_i: for fixed t the inputs are
 * clip(a_i/d_i, 0, t), and the best t is the root of a non-increasing
 * piecewise-linear derivative. If that point violates t <= sum_i u_i, the
 * dropped constraint is active at the optimum, where t = sum_i u_i <= 1:
 * that is the XOR of (u_1, ..., u_n, not t), a box QP again.
 */
#include "../factor.h"
#include "../qp/box_qp.h"
#include "../util.h"

static size_t box_scratch(const factor *f) { return box_qp_scratch_bytes(f->degree); }

static int32_t argmax(int32_t n, const double *a) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; ++i)
        if (a[i] > a[best]) best = i;
    return best;
}

static void set_zero(int32_t n, double *u) {
    for (int32_t i = 0; i < n; ++i) u[i] = 0.0;
}

/* ---- XOR ---------------------------------------------------------------- */

static double xor_map(const factor *f, const double *a, const double *b,
                      double *u, double *v, void *scratch) {
    (void)b, (void)v, (void)scratch;
    set_zero(f->degree, u);
    int32_t k = argmax(f->degree, a);
    u[k] = 1.0;
    return a[k];
}

static void xor_qp(const factor *f, const double *a, const double *b,
                   const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    box_qp(f->degree, a, d, NULL, 1.0, BOX_EQ, u, scratch);
}

/* The face derivative of a unit-cost box-QP factor: solve again, then
 * project on the face the solution sits on. */
static void unit_box_face(const factor *f, box_sense sense, const double *a, const double *d,
                          const double *w, const double *x, double *du, double *u,
                          void *scratch) {
    double tau = box_qp(f->degree, a, d, NULL, 1.0, sense, u, scratch);
    box_qp_face(f->degree, u, NULL, box_qp_active(sense, tau), w, x, du);
}

static void xor_face(const factor *f, const double *a, const double *b, const double *d,
                     const double *w, const double *x, const double *y, double *du, double *dv,
                     double *u, void *scratch) {
    (void)b, (void)y, (void)dv;
    unit_box_face(f, BOX_EQ, a, d, w, x, du, u, scratch);
}

const factor_ops factor_xor_ops = {.name = "XOR",
                                   .map = xor_map,
                                   .qp = xor_qp,
                                   .scratch_bytes = box_scratch,
                                   .face_jvp = xor_face};

/* ---- ATMOSTONE ---------------------------------------------------------- */

static double atmostone_map(const factor *f, const double *a, const double *b,
                            double *u, double *v, void *scratch) {
    (void)b, (void)v, (void)scratch;
    set_zero(f->degree, u);
    int32_t k = argmax(f->degree, a);
    if (a[k] <= 0.0) return 0.0;
    u[k] = 1.0;
    return a[k];
}

static void atmostone_qp(const factor *f, const double *a, const double *b,
                         const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    box_qp(f->degree, a, d, NULL, 1.0, BOX_LE, u, scratch);
}

static void atmostone_face(const factor *f, const double *a, const double *b, const double *d,
                           const double *w, const double *x, const double *y, double *du,
                           double *dv, double *u, void *scratch) {
    (void)b, (void)y, (void)dv;
    unit_box_face(f, BOX_LE, a, d, w, x, du, u, scratch);
}

const factor_ops factor_atmostone_ops = {.name = "ATMOSTONE",
                                         .map = atmostone_map,
                                         .qp = atmostone_qp,
                                         .scratch_bytes = box_scratch,
                                         .face_jvp = atmostone_face};

/* ---- OR ----------------------------------------------------------------- */

static double or_map(const factor *f, const double *a, const double *b,
                     double *u, double *v, void *scratch) {
    (void)b, (void)v, (void)scratch;
    double score = 0.0;
    int any = 0;
    for (int32_t i = 0; i < f->degree; ++i) {
        u[i] = a[i] > 0.0 ? 1.0 : 0.0;
        if (a[i] > 0.0) {
            score += a[i];
            any = 1;
        }
    }
    if (any) return score;
    int32_t k = argmax(f->degree, a);
    u[k] = 1.0;
    return a[k];
}

static void or_qp(const factor *f, const double *a, const double *b,
                  const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    box_qp(f->degree, a, d, NULL, 1.0, BOX_GE, u, scratch);
}

static void or_face(const factor *f, const double *a, const double *b, const double *d,
                    const double *w, const double *x, const double *y, double *du, double *dv,
                    double *u, void *scratch) {
    (void)b, (void)y, (void)dv;
    unit_box_face(f, BOX_GE, a, d, w, x, du, u, scratch);
}

const factor_ops factor_or_ops = {.name = "OR",
                                  .map = or_map,
                                  .qp = or_qp,
                                  .scratch_bytes = box_scratch,
                                  .face_jvp = or_face};

/* ---- OROUT: links 0..n-1 are the inputs, link n is the output ---------- */

static double orout_map(const factor *f, const double *a, const double *b,
                        double *u, double *v, void *scratch) {
    (void)b, (void)v, (void)scratch;
    int32_t n = f->degree - 1;
    /* Output on: every positive input on, or the best single one if none. */
    double on = a[n];
    int any = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (a[i] > 0.0) {
            on += a[i];
            any = 1;
        }
    }
    int32_t k = n > 0 ? argmax(n, a) : 0;
    if (!any && n > 0) on += a[k];
    set_zero(f->degree, u);
    if (n == 0 || on <= 0.0) return 0.0;
    for (int32_t i = 0; i < n; ++i)
        if (a[i] > 0.0) u[i] = 1.0;
    if (!any) u[k] = 1.0;
    u[n] = 1.0;
    return on;
}

typedef struct orout_scratch {
    double *a;  /* literal scores with the output flipped */
    keyed *order;
    void *box;
} orout_scratch;

static size_t orout_scratch_bytes(const factor *f) {
    size_t n = (size_t)f->degree;
    return n * sizeof(double) + n * sizeof(keyed) + box_qp_scratch_bytes(f->degree);
}

static orout_scratch orout_split(const factor *f, void *scratch) {
    size_t n = (size_t)f->degree;
    orout_scratch s;
    s.a = (double *)scratch;
    s.order = (keyed *)(s.a + n);
    s.box = s.order + n;
    return s;
}

/* Best t in [0, 1] with inputs clip(a_i/d_i, 0, t): root of
 * g(t) = a_t - d_t t + sum_{a_i/d_i > t} (a_i - d_i t). */
static double orout_relaxed_output(int32_t n, const double *a, const double *d,
                                   keyed *order) {
    double num = a[n], den = d[n];
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        double z = a[i] / d[i];
        if (z > 0.0) {
            order[m++] = (keyed){-z, i, 0};
            num += a[i];
        }
    }
    if (num <= 0.0) return 0.0; /* g(0) <= 0 */
    sort_keyed(order, m);       /* descending z */
    num = a[n];
    for (int32_t k = 0; k < m; ++k) {
        double t = num / den;
        if (t >= -order[k].key) return t < 1.0 ? t : 1.0;
        int32_t i = order[k].index;
        num += a[i];
        den += d[i];
    }
    double t = num / den;
    return t < 1.0 ? t : 1.0;
}

/* Solves the QP; returns 1 when the solution is the first stage's, 0 when
 * t <= sum u binds (then u is the XOR solution over (u, not t), and on
 * return s.a holds that XOR's inputs). */
static int orout_solve(const factor *f, const double *a, const double *d, double *u,
                       orout_scratch s) {
    int32_t n = f->degree - 1;
    double t = orout_relaxed_output(n, a, d, s.order);
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        double z = a[i] / d[i];
        u[i] = z <= 0.0 ? 0.0 : (z < t ? z : t);
        sum += u[i];
    }
    u[n] = t;
    if (t <= sum) return 1;
    for (int32_t i = 0; i < n; ++i) s.a[i] = a[i];
    s.a[n] = d[n] - a[n];
    box_qp(f->degree, s.a, d, NULL, 1.0, BOX_EQ, u, s.box);
    u[n] = 1.0 - u[n];
    return 0;
}

static void orout_qp(const factor *f, const double *a, const double *b,
                     const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    orout_solve(f, a, d, u, orout_split(f, scratch));
}

/* First stage: inputs strictly inside (0, t) move freely, inputs clipped at
 * t move with t as one group (when 0 < t < 1), the rest stay. Second stage:
 * the XOR face over (u, not t). */
static void orout_face(const factor *f, const double *a, const double *b, const double *d,
                       const double *w, const double *x, const double *y, double *du,
                       double *dv, double *u, void *scratch) {
    (void)b, (void)y, (void)dv;
    int32_t n = f->degree - 1;
    orout_scratch s = orout_split(f, scratch);
    if (!orout_solve(f, a, d, u, s)) {
        /* literal space of the XOR: the output flips */
        u[n] = 1.0 - u[n];
        for (int32_t i = 0; i < n; ++i) s.a[i] = x[i];
        s.a[n] = -x[n];
        box_qp_face(f->degree, u, NULL, 1, w, s.a, du);
        du[n] = -du[n];
        u[n] = 1.0 - u[n];
        return;
    }
    double t = u[n], num = w[n] * x[n], den = w[n];
    for (int32_t i = 0; i < n; ++i) {
        int tied = t > 0.0 && a[i] / d[i] >= t;
        du[i] = !tied && u[i] > 0.0 ? x[i] : 0.0;
        if (tied) {
            num += w[i] * x[i];
            den += w[i];
        }
    }
    double group = t > 0.0 && t < 1.0 ? num / den : 0.0;
    du[n] = group;
    for (int32_t i = 0; i < n; ++i)
        if (t > 0.0 && a[i] / d[i] >= t) du[i] = group;
}

const factor_ops factor_orout_ops = {.name = "OROUT",
                                     .map = orout_map,
                                     .qp = orout_qp,
                                     .scratch_bytes = orout_scratch_bytes,
                                     .face_jvp = orout_face};
