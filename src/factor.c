/*
 * Factors seen from their variables: the one place where negated links are
 * flipped into literal space and back (u -> 1 - u). With literal value
 * l = 1 - u, the linear score a u becomes a - a l, and the QP term
 * a u - d/2 u^2 becomes (d - a) l - d/2 l^2 plus a constant.
 */
#include "factor.h"

size_t factor_scratch_bytes(const factor *f) {
    return f->ops->scratch_bytes ? f->ops->scratch_bytes(f) : 0;
}

void factor_qp_variables(const factor *f, const uint8_t *neg, const double *a,
                         const double *b, const double *d, double *u, double *v,
                         factor_buffers *buf) {
    for (int32_t j = 0; j < f->degree; ++j) buf->a[j] = neg[j] ? d[j] - a[j] : a[j];
    f->ops->qp(f, buf->a, b, d, buf->u, v, buf->scratch);
    for (int32_t j = 0; j < f->degree; ++j) u[j] = neg[j] ? 1.0 - buf->u[j] : buf->u[j];
}

double factor_map_variables(const factor *f, const uint8_t *neg, const double *a,
                            const double *b, double *u, double *v, factor_buffers *buf) {
    double offset = 0.0;
    for (int32_t j = 0; j < f->degree; ++j) {
        buf->a[j] = neg[j] ? -a[j] : a[j];
        if (neg[j]) offset += a[j];
    }
    double best = f->ops->map(f, buf->a, b, buf->u, v, buf->scratch);
    for (int32_t j = 0; j < f->degree; ++j) u[j] = neg[j] ? 1.0 - buf->u[j] : buf->u[j];
    return best + offset;
}
