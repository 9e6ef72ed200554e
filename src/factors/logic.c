/*
 * Logic factors: XOR, ATMOSTONE, OR and OROUT, in literal space. XOROUT,
 * ANDOUT and IMPLY are these with some links flipped (concord_add_logic
 * flips them).
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
#include <stdlib.h>

#include "../graph.h"
#include "../qp/box_qp.h"
#include "../util.h"

static size_t box_scratch(const factor *f) { return box_qp_scratch_bytes(f->degree); }

/* A logic family's table: its solver's functions under the family's name.
 * XOROUT, ANDOUT and IMPLY are XOR, OROUT and OR over the links `flipped`
 * names (factor_flips_link), and messages name the family the user asked
 * for. */
#define LOGIC_OPS(family, solver, scratch, face, flipped)                                         \
    {.name = family, .map = solver##_map, .qp = solver##_qp, .scratch_bytes = scratch,            \
     .face_jvp = face, .qp_projects_exactly = true, .flips = flipped}

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

static int32_t xor_qp(const factor *f, const double *a, const double *b,
                      const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    return box_qp_active(BOX_EQ, box_qp(f->degree, a, d, NULL, 1.0, BOX_EQ, u, scratch));
}

/* The face derivative of a unit-cost box-QP factor (face: whether the sum
 * constraint binds). */
static void unit_box_face(const factor *f, int32_t face, const double *b, const double *u,
                          const double *w, const double *x, const double *y, double *du,
                          double *dv, void *scratch) {
    (void)b, (void)y, (void)dv, (void)scratch;
    box_qp_face(f->degree, u, NULL, face, w, x, du);
}

static const factor_ops xor_ops = LOGIC_OPS("XOR", xor, box_scratch, unit_box_face, FLIPS_NONE);
static const factor_ops xorout_ops =
    LOGIC_OPS("XOROUT", xor, box_scratch, unit_box_face, FLIPS_LAST);

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

static int32_t atmostone_qp(const factor *f, const double *a, const double *b,
                            const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    return box_qp_active(BOX_LE, box_qp(f->degree, a, d, NULL, 1.0, BOX_LE, u, scratch));
}

static const factor_ops atmostone_ops =
    LOGIC_OPS("ATMOSTONE", atmostone, box_scratch, unit_box_face, FLIPS_NONE);

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

static int32_t or_qp(const factor *f, const double *a, const double *b,
                     const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    return box_qp_active(BOX_GE, box_qp(f->degree, a, d, NULL, 1.0, BOX_GE, u, scratch));
}

static const factor_ops or_ops = LOGIC_OPS("OR", or, box_scratch, unit_box_face, FLIPS_NONE);
static const factor_ops imply_ops =
    LOGIC_OPS("IMPLY", or, box_scratch, unit_box_face, FLIPS_ALL_BUT_LAST);

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

/* Best t in [0, 1] with inputs clip(a_i/d_i, 0, t): the root of
 * g(t) = a_t - d_t t + sum_{a_i/d_i > t} (a_i - d_i t), clipped to [0, 1]
 * (below 0, where the inputs at or below 0 would join, only its sign
 * matters). The sums of scores are compensated: with huge scores of both
 * signs (a_t against the inputs) t is what is left of their
 * cancellation. */
static double orout_relaxed_output(int32_t n, const double *a, const double *d,
                                   keyed *order) {
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        double z = a[i] / d[i];
        if (z > 0.0) order[m++] = (keyed){-z, i, 0};
    }
    sort_keyed(order, m); /* descending z */
    compensated num = {a[n], 0.0};
    double den = d[n], t = compensated_value(num) / den;
    for (int32_t k = 0; k < m && t < -order[k].key; ++k) {
        int32_t i = order[k].index;
        compensated_add(&num, a[i]);
        den += d[i];
        t = compensated_value(num) / den;
    }
    return clip01(t);
}

/* The face codes of OROUT: which stage's solution it is. */
enum { OROUT_RELAXED = 0, OROUT_SUM_BINDS = 1 };

static int32_t orout_qp(const factor *f, const double *a, const double *b,
                        const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    orout_scratch s = orout_split(f, scratch);
    int32_t n = f->degree - 1;
    double t = orout_relaxed_output(n, a, d, s.order);
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        double z = a[i] / d[i];
        u[i] = z <= 0.0 ? 0.0 : (z < t ? z : t);
        sum += u[i];
    }
    u[n] = t;
    if (t <= sum) return OROUT_RELAXED;
    /* t <= sum u binds: the XOR over (u, not t). Its literal scores
     * (a_i, d_t - a_t) go to it shifted by the best input's a_j, which
     * leaves its solution unchanged (the sum is 1): d_t - (a_t + a_j)
     * keeps d_t whole when a_t and a_j are huge and cancel, where
     * d_t - a_t would round it away. */
    int32_t best = argmax(n, a);
    for (int32_t i = 0; i < n; ++i) s.a[i] = a[i] - a[best];
    s.a[n] = d[n] - (a[n] + a[best]);
    box_qp(f->degree, s.a, d, NULL, 1.0, BOX_EQ, u, s.box);
    u[n] = 1.0 - u[n];
    return OROUT_SUM_BINDS;
}

/* First stage: inputs strictly inside (0, t) move freely, inputs at t move
 * with t as one group (when 0 < t < 1), the rest stay; inputs count as at
 * t within 1e-12, the rounding of the double negation 1 - (1 - t) between
 * literal and variable space. Second stage: the XOR face over (u, not t). */
static void orout_face(const factor *f, int32_t face, const double *b, const double *u,
                       const double *w, const double *x, const double *y, double *du,
                       double *dv, void *scratch) {
    (void)b, (void)y, (void)dv;
    int32_t n = f->degree - 1;
    double t = u[n];
    if (face == OROUT_SUM_BINDS) {
        /* literal space of the XOR: the output flips */
        double *lit = orout_split(f, scratch).a;
        for (int32_t i = 0; i < n; ++i) {
            lit[i] = u[i];
            du[i] = x[i];
        }
        lit[n] = 1.0 - t;
        du[n] = -x[n];
        box_qp_face(f->degree, lit, NULL, 1, w, du, du);
        du[n] = -du[n];
        return;
    }
    double num = w[n] * x[n], den = w[n];
    for (int32_t i = 0; i < n; ++i) {
        int tied = t > 0.0 && u[i] >= t - 1e-12;
        du[i] = !tied && u[i] > 0.0 ? x[i] : 0.0;
        if (tied) {
            num += w[i] * x[i];
            den += w[i];
        }
    }
    double group = t > 0.0 && t < 1.0 ? num / den : 0.0;
    du[n] = group;
    for (int32_t i = 0; i < n; ++i)
        if (t > 0.0 && u[i] >= t - 1e-12) du[i] = group;
}

static const factor_ops orout_ops =
    LOGIC_OPS("OROUT", orout, orout_scratch_bytes, orout_face, FLIPS_NONE);
static const factor_ops andout_ops =
    LOGIC_OPS("ANDOUT", orout, orout_scratch_bytes, orout_face, FLIPS_ALL);

/* ---- The builder: every logic kind is one of the four solvers above ---- */

const char *concord_logic_name(concord_logic kind) {
    switch (kind) {
    case CONCORD_XOR: return "XOR";
    case CONCORD_XOROUT: return "XOROUT";
    case CONCORD_ATMOSTONE: return "ATMOSTONE";
    case CONCORD_OR: return "OR";
    case CONCORD_OROUT: return "OROUT";
    case CONCORD_ANDOUT: return "ANDOUT";
    case CONCORD_IMPLY: return "IMPLY";
    default: return "?";
    }
}

int concord_add_logic(concord_graph *g, concord_logic kind, int32_t degree,
                      const int32_t *vars, const bool *negated, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    const factor_ops *ops;
    switch (kind) {
    case CONCORD_XOR: ops = &xor_ops; break;
    case CONCORD_XOROUT: ops = &xorout_ops; break;
    case CONCORD_ATMOSTONE: ops = &atmostone_ops; break;
    case CONCORD_OR: ops = &or_ops; break;
    case CONCORD_IMPLY: ops = &imply_ops; break;
    case CONCORD_OROUT: ops = &orout_ops; break;
    case CONCORD_ANDOUT: ops = &andout_ops; break;
    default: return graph_fail(g, CONCORD_EINVAL, "unknown logic factor kind %d", (int)kind);
    }
    /* the box QP sorts two breakpoints per link, indexed by int32_t */
    if (degree > INT32_MAX / 2)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: %d links, more than %d",
                          concord_logic_name(kind), degree, INT32_MAX / 2);
    if (degree < 1 || !vars) return graph_check_links(g, concord_logic_name(kind), degree, vars);
    if ((kind == CONCORD_OROUT || kind == CONCORD_ANDOUT) && degree < 2)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: needs at least 2 links (inputs and "
                          "an output), got 1", concord_logic_name(kind));
    bool *flip = malloc((size_t)degree * sizeof *flip);
    if (!flip) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    for (int32_t j = 0; j < degree; ++j)
        flip[j] = (negated && negated[j]) != factor_flips_link(ops, j, degree);
    int rc = graph_add_factor(g, ops, degree, vars, flip, true, 0, NULL, NULL, factor_id);
    free(flip);
    return rc;
}
