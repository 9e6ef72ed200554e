/*
 * Budget factors in literal space: BUDGET (at most B literals on), exact
 * BUDGET (exactly B on) and KNAPSACK (sum_i c_i u_i <= B over the box).
 * Their QPs are the box QP; their MAP oracles pick the best literals by
 * score (BUDGET) or by score per unit of cost (KNAPSACK, fractional: the
 * knapsack polytope here is the continuous one, as in AD3).
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"
#include "../qp/box_qp.h"
#include "../util.h"

/* Parameters of the family (BUDGET, exact BUDGET, KNAPSACK). KNAPSACK's
 * costs and budget are kept scaled by a power of two that brings the
 * largest cost into [1, 2): the polytope is the same, and its QP, whose
 * sums hold squared costs, neither overflows nor underflows. */
typedef struct budget_params {
    double budget;
    int exact;      /* the sum must equal the budget */
    double costs[]; /* KNAPSACK only: one cost per link */
} budget_params;

static size_t budget_scratch(const factor *f) { return box_qp_scratch_bytes(f->degree); }

static const budget_params *params_of(const factor *f) {
    return (const budget_params *)f->params;
}

/* Sorts the literals by descending score, or score per unit of cost when
 * costs are given (free literals first). The scratch holds 2n keyed. */
static keyed *descending(const factor *f, const double *a, const double *c,
                         void *scratch, int32_t *count) {
    keyed *order = (keyed *)scratch;
    int32_t m = 0;
    for (int32_t i = 0; i < f->degree; ++i) {
        double ci = c ? c[i] : 1.0;
        order[m++] = (keyed){c == NULL ? -a[i] : (ci > 0.0 ? -a[i] / ci : -HUGE_VAL), i, 0};
    }
    sort_keyed(order, m);
    *count = m;
    return order;
}

static double budget_map(const factor *f, const double *a, const double *b,
                         double *u, double *v, void *scratch) {
    (void)b, (void)v;
    const budget_params *p = params_of(f);
    int32_t m;
    keyed *order = descending(f, a, NULL, scratch, &m);
    double score = 0.0;
    int32_t taken = 0;
    for (int32_t i = 0; i < f->degree; ++i) u[i] = 0.0;
    for (int32_t k = 0; k < m && taken < p->budget; ++k) {
        int32_t i = order[k].index;
        if (!p->exact && a[i] <= 0.0) break;
        u[i] = 1.0;
        score += a[i];
        ++taken;
    }
    return score;
}

static int32_t budget_qp(const factor *f, const double *a, const double *b,
                         const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    const budget_params *p = params_of(f);
    box_sense sense = p->exact ? BOX_EQ : BOX_LE;
    return box_qp_active(sense, box_qp(f->degree, a, d, NULL, p->budget, sense, u, scratch));
}

/* face: whether the budget binds. */
static void budget_face(const factor *f, int32_t face, const double *b, const double *u,
                        const double *w, const double *x, const double *y, double *du,
                        double *dv, void *scratch) {
    (void)b, (void)y, (void)dv, (void)scratch;
    box_qp_face(f->degree, u, NULL, face, w, x, du);
}

static const factor_ops budget_ops = {.name = "BUDGET",
                                      .map = budget_map,
                                      .qp = budget_qp,
                                      .scratch_bytes = budget_scratch,
                                      .face_jvp = budget_face,
                                      .qp_projects_exactly = true};

static double knapsack_map(const factor *f, const double *a, const double *b,
                           double *u, double *v, void *scratch) {
    (void)b, (void)v;
    const budget_params *p = params_of(f);
    int32_t m;
    keyed *order = descending(f, a, p->costs, scratch, &m);
    double left = p->budget, score = 0.0;
    for (int32_t i = 0; i < f->degree; ++i) u[i] = 0.0;
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = order[k].index;
        if (a[i] <= 0.0) continue;
        double ci = p->costs[i];
        double take = ci <= left ? 1.0 : left / ci;
        if (take <= 0.0) continue;
        u[i] = take;
        score += take * a[i];
        left -= take * ci;
    }
    return score;
}

static int32_t knapsack_qp(const factor *f, const double *a, const double *b,
                           const double *d, double *u, double *v, void *scratch) {
    (void)b, (void)v;
    const budget_params *p = params_of(f);
    return box_qp_active(BOX_LE, box_qp(f->degree, a, d, p->costs, p->budget, BOX_LE, u, scratch));
}

static void knapsack_face(const factor *f, int32_t face, const double *b, const double *u,
                          const double *w, const double *x, const double *y, double *du,
                          double *dv, void *scratch) {
    (void)b, (void)y, (void)dv, (void)scratch;
    box_qp_face(f->degree, u, params_of(f)->costs, face, w, x, du);
}

static const factor_ops knapsack_ops = {.name = "KNAPSACK",
                                        .map = knapsack_map,
                                        .qp = knapsack_qp,
                                        .scratch_bytes = budget_scratch,
                                        .face_jvp = knapsack_face,
                                        .fractional_vertices = true};

static int check_budget(concord_graph *g, const char *name, double budget) {
    if (!isfinite(budget) || budget < 0.0)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: budget %g must be finite and >= 0",
                          name, budget);
    return CONCORD_OK;
}

int concord_add_budget(concord_graph *g, int32_t degree, const int32_t *vars,
                       const bool *negated, double budget, bool exact, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    int rc = check_budget(g, "BUDGET", budget);
    if (rc) return rc;
    if (budget != floor(budget))
        return graph_fail(g, CONCORD_EINVAL, "BUDGET factor: budget %g is not an integer",
                          budget);
    if (exact && budget > degree)
        return graph_fail(g, CONCORD_EINVAL,
                          "exact BUDGET factor: budget %g exceeds the degree %d", budget,
                          degree);
    budget_params *p = malloc(sizeof *p);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    p->budget = budget;
    p->exact = exact;
    return graph_add_factor(g, &budget_ops, degree, vars, negated, true, 0, NULL, p,
                            factor_id);
}

int concord_add_knapsack(concord_graph *g, int32_t degree, const int32_t *vars,
                         const bool *negated, const double *costs, double budget,
                         int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    int rc = check_budget(g, "KNAPSACK", budget);
    if (rc) return rc;
    if (degree < 1) return graph_check_links(g, "KNAPSACK", degree, vars);
    if (!costs) return graph_fail(g, CONCORD_EINVAL, "KNAPSACK factor: NULL costs");
    for (int32_t j = 0; j < degree; ++j)
        if (!isfinite(costs[j]) || costs[j] < 0.0)
            return graph_fail(g, CONCORD_EINVAL,
                              "KNAPSACK factor: cost %d is %g (must be finite and >= 0)", j,
                              costs[j]);
    budget_params *p = malloc(sizeof *p + (size_t)degree * sizeof(double));
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    double largest = 0.0;
    for (int32_t j = 0; j < degree; ++j) largest = fmax(largest, costs[j]);
    const int shift = largest > 0.0 ? -ilogb(largest) : 0;
    for (int32_t j = 0; j < degree; ++j) p->costs[j] = ldexp(costs[j], shift);
    p->budget = ldexp(budget, shift); /* infinite when that overflows: it binds nothing */
    p->exact = 0;
    return graph_add_factor(g, &knapsack_ops, degree, vars, negated, true, 0, NULL, p,
                            factor_id);
}
