/*
 * Checks the libFuzzer targets share: each traps (__builtin_trap) when a
 * result breaks what the library promises, so the fuzzer reports it.
 */
#ifndef CONCORD_FUZZ_CHECKS_H
#define CONCORD_FUZZ_CHECKS_H

#include <math.h>
#include <stdlib.h>

#include "concord.h"

/* LP-SparseMAP, briefly, and its backward pass from du = 1; traps on a
 * solution outside [0, 1] (the built-in factors' additional outputs are
 * 0/1 too) or a gradient that is not finite. */
static inline void sparse_and_backward(concord_solver *solver, const concord_graph *g,
                                       concord_settings settings) {
    const int32_t n = concord_num_variables(g);
    const int rc = concord_solver_sparse(solver, &settings, NULL);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) return;
    const double *u = concord_solver_variables(solver), *v = concord_solver_additionals(solver);
    for (int32_t i = 0; i < n; ++i)
        if (!(u[i] >= 0.0 && u[i] <= 1.0)) __builtin_trap();
    for (int32_t k = 0; k < concord_num_additionals(g); ++k)
        if (!(v[k] >= 0.0 && v[k] <= 1.0)) __builtin_trap();
    double *du = malloc((size_t)(n ? n : 1) * sizeof(double));
    double *dtheta = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (du && dtheta) {
        for (int32_t i = 0; i < n; ++i) du[i] = 1.0;
        settings.backward_max_iter = 50;
        const int brc = concord_solver_backward(solver, &settings, du, NULL, dtheta, NULL, NULL);
        if (brc == CONCORD_OK || brc == CONCORD_ENOTCONVERGED)
            for (int32_t i = 0; i < n; ++i)
                if (!isfinite(dtheta[i])) __builtin_trap();
    }
    free(du);
    free(dtheta);
}

#endif /* CONCORD_FUZZ_CHECKS_H */
