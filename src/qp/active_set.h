/*
 * The generic weighted QP of a factor that only has a MAP oracle:
 *
 *   argmax over conv(configurations) of  a.u + b.v - 1/2 sum_i d_i u_i^2
 *
 * solved by the primal active-set method over convex combinations p of
 * configurations (Nocedal and Wright 16.5; SparseMAP section 3.2). Each
 * factor keeps its own state between calls: the active configurations, their
 * weights, and the inverse of the bordered KKT matrix
 *
 *   K = [ 0  1^T ]     Q_st = u_s^T D u_t,
 *       [ 1  Q   ],
 *
 * updated in O(k^2) when a configuration enters or leaves. ADMM calls the
 * same factor thousands of times with slowly changing scores and the same
 * d, so a call usually costs one linear solve and one oracle call; the
 * inverse is also what the backward pass needs. Configurations are stored
 * as sorted lists of the indices that are 1 (links, then additional outputs
 * offset by the degree), in memory sized once: nothing grows across calls.
 */
#ifndef CONCORD_ACTIVE_SET_H
#define CONCORD_ACTIVE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../factor.h"

typedef struct active_set active_set;

/* Bytes of state a factor needs (including the struct). */
size_t active_set_bytes(const factor *f);

/* Lays out an empty state in `memory` (active_set_bytes(f) bytes, aligned
 * for doubles) and returns it. */
active_set *active_set_init(const factor *f, void *memory);

/* Forgets the active configurations and the weights (the next solve
 * starts cold, exactly as after active_set_init). */
void active_set_reset(active_set *s);

typedef struct active_set_result {
    int32_t oracle_calls;
    bool exact; /* optimality verified (else stopped at max_iter/capacity) */
    int error;  /* a user oracle's error code, which ended the solve (0: none) */
} active_set_result;

/* Solves the QP in literal space, warm-started from the previous call.
 * u (degree) and v (n_add) receive the solution; buf's oracle_* arrays and
 * scratch serve the oracle calls. */
active_set_result active_set_solve(active_set *s, const factor *f, const double *a,
                                   const double *b, const double *d, double *u, double *v,
                                   int32_t max_iter, factor_buffers *buf);

/* The active configurations and their weights after a solve. */
int32_t active_set_size(const active_set *s);
double active_set_weight(const active_set *s, int32_t k);
/* Sorted indices that are 1 in configuration k (links < degree, then
 * degree + additional index); returns their count. */
int32_t active_set_config(const active_set *s, int32_t k, const int32_t **ones);

/* The derivative of the solution on the face spanned by the active
 * configurations, for the metric w (the backward pass uses the degree
 * weights): with Z the weight block of the inverse of K built with D = W,
 *   dp = Z (S^T W x + N^T y),  du = S dp,  dv = N dp,
 * S and N the configurations' u and v parts (literal space). Prepare once
 * after the solve (returns 0 if the configurations turned out dependent),
 * then call jvp any number of times; y and dv may be NULL. */
int active_set_prepare_jvp(active_set *s, const double *w);
void active_set_jvp(active_set *s, const double *w, const double *x, const double *y,
                    double *du, double *dv);

#endif /* CONCORD_ACTIVE_SET_H */
