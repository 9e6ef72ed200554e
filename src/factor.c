/*
 * Factors seen from their variables: the one place where negated links are
 * flipped into literal space and back (u -> 1 - u). With literal value
 * l = 1 - u, the linear score a u becomes a - a l, and the QP term
 * a u - d/2 u^2 becomes (d - a) l - d/2 l^2 plus a constant.
 */
#include "factor.h"

#include "qp/active_set.h"

size_t factor_scratch_bytes(const factor *f) {
    if (f->forbidden && f->ops->forbids == FORBIDS_BY_SCORES)
        return factor_allowed_scores_offset(f) + (size_t)f->n_add * sizeof(double);
    return f->ops->scratch_bytes ? f->ops->scratch_bytes(f) : 0;
}

double factor_map_by_ones(const factor *f, const double *a, const double *b, double *u,
                          double *v, void *scratch, int32_t *ones) {
    double best;
    const int32_t n = f->ops->map_ones(f, a, b, ones, &best, scratch);
    for (int32_t j = 0; j < f->degree; ++j) u[j] = 0.0;
    for (int32_t k = 0; k < f->n_add; ++k) v[k] = 0.0;
    for (int32_t q = 0; q < n; ++q) {
        if (ones[q] < f->degree) u[ones[q]] = 1.0;
        else v[ones[q] - f->degree] = 1.0;
    }
    return best;
}

void factor_qp_generic(const factor *f, struct active_set *state, const double *lit_a,
                       const double *b, const double *d, double *lit_u, double *v,
                       int32_t max_inner, factor_buffers *buf, qp_outcome *out) {
    active_set_result r = active_set_solve(state, f, lit_a, b, d, lit_u, v, max_inner, buf);
    out->face = 0;
    out->oracle_calls = r.oracle_calls;
    out->exact = r.exact;
    out->error = r.error;
}

void factor_qp_variables(const factor *f, struct active_set *state, const uint8_t *neg,
                         const double *a, const double *b, const double *d, double *u,
                         double *v, int32_t max_inner, factor_buffers *buf, qp_outcome *out) {
    for (int32_t j = 0; j < f->degree; ++j) buf->lit_a[j] = literal_qp_input(neg[j], a[j], d[j]);
    factor_qp_literals(f, state, buf->lit_a, b, d, buf->lit_u, v, max_inner, buf, out);
    for (int32_t j = 0; j < f->degree; ++j) u[j] = variable_value(neg[j], buf->lit_u[j]);
}

double factor_map_variables(const factor *f, const uint8_t *neg, const double *a,
                            const double *b, double *u, double *v, factor_buffers *buf) {
    double offset = 0.0;
    for (int32_t j = 0; j < f->degree; ++j) {
        buf->lit_a[j] = neg[j] ? -a[j] : a[j];
        if (neg[j]) offset += a[j];
    }
    double best = f->ops->map(f, buf->lit_a, b, buf->lit_u, v, buf->scratch);
    for (int32_t j = 0; j < f->degree; ++j) u[j] = variable_value(neg[j], buf->lit_u[j]);
    return best + offset;
}

void factor_face_jvp_variables(const factor *f, struct active_set *state, int32_t face,
                               const uint8_t *neg, const double *u, const double *b,
                               const double *w, const double *x, const double *y, double *du,
                               double *dv, factor_buffers *buf) {
    /* In literal space u is 1 - u and x flips sign on negated links, and du
     * flips back; w, y and dv are unchanged. */
    for (int32_t j = 0; j < f->degree; ++j) buf->oracle_a[j] = neg[j] ? -x[j] : x[j];
    if (!factor_needs_active_set(f)) {
        for (int32_t j = 0; j < f->degree; ++j) buf->lit_a[j] = neg[j] ? 1.0 - u[j] : u[j];
        f->ops->face_jvp(f, face, b, buf->lit_a, w, buf->oracle_a, y, buf->lit_u, dv,
                         buf->scratch);
    } else {
        active_set_jvp(state, w, buf->oracle_a, y, buf->lit_u, dv);
    }
    for (int32_t j = 0; j < f->degree; ++j) du[j] = neg[j] ? -buf->lit_u[j] : buf->lit_u[j];
}
