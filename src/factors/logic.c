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

const factor_ops factor_xor_ops = {
    .name = "XOR", .map = xor_map, .qp = xor_qp, .scratch_bytes = box_scratch};

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

const factor_ops factor_atmostone_ops = {
    .name = "ATMOSTONE", .map = atmostone_map, .qp = atmostone_qp, .scratch_bytes = box_scratch};

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

const factor_ops factor_or_ops = {
    .name = "OR", .map = or_map, .qp = or_qp, .scratch_bytes = box_scratch};

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

static void orout_qp(const factor *f, const double *a, const double *b,
                     const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    int32_t n = f->degree - 1;
    orout_scratch s = orout_split(f, scratch);
    double t = orout_relaxed_output(n, a, d, s.order);
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        double z = a[i] / d[i];
        u[i] = z <= 0.0 ? 0.0 : (z < t ? z : t);
        sum += u[i];
    }
    u[n] = t;
    if (t <= sum) return;
    for (int32_t i = 0; i < n; ++i) s.a[i] = a[i];
    s.a[n] = d[n] - a[n];
    box_qp(f->degree, s.a, d, NULL, 1.0, BOX_EQ, u, s.box);
    u[n] = 1.0 - u[n];
}

const factor_ops factor_orout_ops = {
    .name = "OROUT", .map = orout_map, .qp = orout_qp, .scratch_bytes = orout_scratch_bytes};
