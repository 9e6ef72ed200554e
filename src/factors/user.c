/*
 * User factors: a MAP oracle (and optionally a closed-form QP) given as
 * callbacks through the public API. The factor interface's calls never
 * fail, so a callback's error code, or an invalid configuration it wrote,
 * is kept in the scratch of the call and read back by the caller through
 * the `failure` entry (factor_failure). A failed call leaves zeros in its
 * outputs, which keeps the caller's arithmetic finite until it notices.
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"

typedef struct user_params {
    concord_map_fn map;
    concord_qp_fn qp;
    void *user;
} user_params;

/* The scratch of one call: the status it ended with. */
typedef struct user_scratch {
    int status;
} user_scratch;

static void set_zero(int32_t n, double *x) {
    for (int32_t i = 0; i < n; ++i) x[i] = 0.0;
}

/* Checks a callback's outputs: variable values 0 or 1 in a configuration,
 * within [0, 1] in a QP solution (a mean of configurations); additional
 * values within [-1, 1] (decoding tells an allowed configuration by
 * scores that outweigh b.v only when |v| <= 1, solver_factor_at). */
static int check_outputs(const factor *f, const double *u, const double *v, bool binary) {
    for (int32_t i = 0; i < f->degree; ++i)
        if (binary ? u[i] != 0.0 && u[i] != 1.0 : !(u[i] >= 0.0 && u[i] <= 1.0))
            return FACTOR_INVALID_OUTPUT;
    for (int32_t k = 0; k < f->n_add; ++k)
        if (!(fabs(v[k]) <= 1.0)) return FACTOR_INVALID_OUTPUT;
    return 0;
}

/* The score is recomputed from the configuration rather than taken from
 * the callback, so that a slip in the callback's arithmetic cannot
 * mislead the solvers. */
static double user_map(const factor *f, const double *a, const double *b, double *u, double *v,
                       void *scratch) {
    const user_params *p = f->params;
    user_scratch *out = scratch;
    double value = 0.0;
    out->status = p->map(p->user, a, b, u, v, &value);
    if (!out->status) out->status = check_outputs(f, u, v, true);
    if (out->status) {
        set_zero(f->degree, u);
        set_zero(f->n_add, v);
        return 0.0;
    }
    double score = 0.0;
    for (int32_t i = 0; i < f->degree; ++i) score += a[i] * u[i];
    for (int32_t k = 0; k < f->n_add; ++k) score += b[k] * v[k];
    return score;
}

static int32_t user_qp(const factor *f, const double *a, const double *b, const double *d,
                       double *u, double *v, void *scratch) {
    const user_params *p = f->params;
    user_scratch *out = scratch;
    out->status = p->qp(p->user, a, b, d, u, v);
    if (!out->status) out->status = check_outputs(f, u, v, false);
    if (out->status) {
        set_zero(f->degree, u);
        set_zero(f->n_add, v);
    }
    return 0;
}

static size_t user_scratch_bytes(const factor *f) {
    (void)f;
    return sizeof(user_scratch);
}

static int user_failure(const factor *f, const void *scratch) {
    (void)f;
    return ((const user_scratch *)scratch)->status;
}

/* Without a QP callback the active set answers the QP from the oracle;
 * with one, the QP is the callback's and the backward pass goes through
 * the active set (no face_jvp). */
static const factor_ops user_ops = {.name = "USER",
                                    .map = user_map,
                                    .scratch_bytes = user_scratch_bytes,
                                    .real_additionals = true,
                                    .failure = user_failure};
static const factor_ops user_qp_ops = {.name = "USER",
                                       .map = user_map,
                                       .qp = user_qp,
                                       .scratch_bytes = user_scratch_bytes,
                                       .real_additionals = true,
                                       .failure = user_failure};

int concord_add_factor(concord_graph *g, int32_t degree, const int32_t *vars,
                       const bool *negated, int32_t num_additionals,
                       const double *additional_scores, concord_map_fn map, void *user,
                       int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (!map) return graph_fail(g, CONCORD_EINVAL, "user factor: no MAP oracle");
    if (num_additionals < 0)
        return graph_fail(g, CONCORD_EINVAL, "user factor: %d additional outputs",
                          num_additionals);
    int rc = graph_check_links(g, "USER", degree, vars);
    if (rc) return rc;
    user_params *p = malloc(sizeof *p);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    *p = (user_params){map, NULL, user};
    return graph_add_factor(g, &user_ops, degree, vars, negated, true, num_additionals,
                            additional_scores, p, factor_id);
}

int concord_set_factor_qp(concord_graph *g, int32_t f, concord_qp_fn qp) {
    if (!g) return CONCORD_EINVAL;
    if (f < 0 || f >= g->n_factors ||
        (g->factors[f].ops != &user_ops && g->factors[f].ops != &user_qp_ops))
        return graph_fail(g, CONCORD_EINVAL, "factor %d is not a user factor", f);
    int rc = graph_unchanging(g);
    if (rc) return rc;
    user_params *p = g->factors[f].params;
    p->qp = qp;
    g->factors[f].ops = qp ? &user_qp_ops : &user_ops;
    g->structure_revision += 1; /* solvers size their active sets by the ops */
    return CONCORD_OK;
}
