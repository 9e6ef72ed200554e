/*
 * DENSE factor: a full table of scores over the joint states of several
 * multi-valued variables. Its links are the binary state variables of each
 * multi-variable in turn; its additional outputs are the joint states, in
 * row-major order with the last variable changing fastest (as in AD3 and
 * the UAI format). A configuration switches on one state per variable and
 * the matching joint state, so the factor also enforces one-hot on each of
 * its variables. Joint states may be forbidden (zero probability). It has
 * a MAP oracle only: its QP goes through the generic active set.
 */
#include <stdlib.h>

#include "../factor.h"
#include "dense.h"

static const dense_params *params_of(const factor *f) {
    return (const dense_params *)f->params;
}

/* Enumerates the allowed joint states with an odometer over the variables,
 * keeping the sum of the state scores up to date incrementally. */
static double dense_map(const factor *f, const double *a, const double *b, double *u,
                        double *v, void *scratch) {
    const dense_params *p = params_of(f);
    int32_t *digit = (int32_t *)scratch;
    double state_sum = 0.0;
    for (int32_t j = 0; j < p->n_vars; ++j) {
        digit[j] = 0;
        state_sum += a[p->offset[j]];
    }
    int32_t best = -1;
    double best_score = 0.0;
    for (int32_t c = 0; c < p->n_configs; ++c) {
        if (!p->forbidden || !p->forbidden[c]) {
            double sc = state_sum + b[c];
            if (best < 0 || sc > best_score) {
                best = c;
                best_score = sc;
            }
        }
        for (int32_t j = p->n_vars - 1; j >= 0; --j) {
            int32_t base = p->offset[j];
            state_sum -= a[base + digit[j]];
            if (++digit[j] < p->states[j]) {
                state_sum += a[base + digit[j]];
                break;
            }
            digit[j] = 0;
            state_sum += a[base];
        }
    }
    for (int32_t i = 0; i < f->degree; ++i) u[i] = 0.0;
    for (int32_t c = 0; c < p->n_configs; ++c) v[c] = 0.0;
    v[best] = 1.0;
    for (int32_t j = p->n_vars - 1, rest = best; j >= 0; --j) {
        u[p->offset[j] + rest % p->states[j]] = 1.0;
        rest /= p->states[j];
    }
    return best_score;
}

static size_t dense_scratch(const factor *f) {
    return (size_t)params_of(f)->n_vars * sizeof(int32_t);
}

static int32_t dense_config_size(const factor *f) { return params_of(f)->n_vars + 1; }

const factor_ops factor_dense_ops = {.name = "DENSE",
                                     .map = dense_map,
                                     .scratch_bytes = dense_scratch,
                                     .config_size = dense_config_size};

dense_params *dense_params_new(int32_t n_vars, const int32_t *states, int32_t n_configs) {
    size_t bytes = sizeof(dense_params) + 2 * (size_t)n_vars * sizeof(int32_t) +
                   (size_t)n_configs;
    dense_params *p = calloc(1, bytes);
    if (!p) return NULL;
    p->n_vars = n_vars;
    p->n_configs = n_configs;
    p->states = (int32_t *)(p + 1);
    p->offset = p->states + n_vars;
    p->forbidden = (uint8_t *)(p->offset + n_vars);
    for (int32_t j = 0, at = 0; j < n_vars; ++j) {
        p->states[j] = states[j];
        p->offset[j] = at;
        at += states[j];
    }
    return p;
}
