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
 * offset by the degree).
 *
 * Capacity: the active configurations are affinely independent in u, so
 * there are at most degree + 1 of them. The state starts with room for a
 * few and doubles its room when an independent configuration must enter,
 * up to that bound (the inverse is copied into the larger layout, not
 * rebuilt). Room is never given back, so repeated solves of one factor
 * stop allocating once the largest active set it needed fits.
 */
#ifndef CONCORD_ACTIVE_SET_H
#define CONCORD_ACTIVE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../factor.h"

typedef struct active_set active_set;

/* An empty state for factor f; NULL when out of memory. */
active_set *active_set_new(const factor *f);

/* Frees the state (NULL is allowed). */
void active_set_free(active_set *s);

/* Forgets the active configurations and the weights (the next solve
 * starts cold, exactly as after active_set_new; the room already
 * allocated is kept). */
void active_set_reset(active_set *s);

typedef struct active_set_result {
    int32_t oracle_calls;
    /* Optimality verified: the oracle found no configuration that improves
     * the linearized objective by more than rounding (the Frank-Wolfe gap
     * certificate). Otherwise u, v are the best point reached, a feasible
     * one, and a later call resumes from it: the solve stopped at max_iter
     * oracle calls, or numerically stalled, or `error` is set. */
    bool exact;
    /* CONCORD_OK, or CONCORD_ENOMEM when the active set needed more room
     * and could not allocate it (the state stays valid). */
    int error;
    /* A user oracle's error code, which ended the solve (0: none). */
    int callback_error;
} active_set_result;

/* Solves the QP in literal space, warm-started from the previous call,
 * with at most max_iter oracle calls that check or improve a solution
 * (from an empty set, one more call starts it). u (degree) and v (n_add)
 * receive the solution (v NULL: not now, see active_set_additionals);
 * buf's oracle_* arrays and scratch serve the oracle calls. */
active_set_result active_set_solve(active_set *s, const factor *f, const double *a,
                                   const double *b, const double *d, double *u, double *v,
                                   int32_t max_iter, factor_buffers *buf);

/* Makes the state hold the configuration (u, v) alone, with weight 1, as
 * if a solve with weights d (degree) had ended there: u (degree values, 0
 * or 1) in literal space, v (n_add values). For a vertex a factor's MAP
 * oracle gave in place of its QP, so that what reads the state afterwards
 * (the distribution, the backward pass, a warm start) sees that vertex. */
void active_set_hold_vertex(active_set *s, const double *d, const double *u, const double *v);

/* The additional outputs of the last solve's solution, sum_k p_k v_k, into
 * v (n_add): what active_set_solve writes when given v. Writing them is
 * O(n_add) per solve (a sequence's transitions, an automaton's sibling
 * pairs), and an ADMM iteration does not read them. */
void active_set_additionals(const active_set *s, double *v);

/* The active configurations and their weights after a solve. */
int32_t active_set_size(const active_set *s);
double active_set_weight(const active_set *s, int32_t k);
/* Configuration k in literal space: u (degree values, 0 or 1) and v
 * (n_add values). */
void active_set_config(const active_set *s, int32_t k, double *u, double *v);
/* The number of configurations the state has room for now. */
int32_t active_set_capacity(const active_set *s);
/* The weights d (degree) of the last solve. */
const double *active_set_weights(const active_set *s);

/* Completes the active configurations with those of the face of the
 * polytope that holds the solution (the configurations whose score under
 * the gradient (a - D u, b) ties with theirs), as far as they are affinely
 * independent in u: the face the solution's derivative lives on. Where
 * scores tie exactly (all zero, say) the solution can lie inside a face
 * larger than the one its own configurations span (SparseMAP of a perfect
 * matching at zero scores: u = 1/n, spanned by n permutations, inside the
 * (n-1)^2-dimensional polytope), and the derivative on that smaller face
 * is not the solution's. a and b are the scores of the last solve (literal
 * space); the tied configurations are found by oracle calls at the
 * gradient perturbed along random directions, and enter with weight 0,
 * after the solution's own (the next solve removes them first). Without
 * exact ties it adds nothing, at the cost of two oracle calls. The result's
 * `exact` says whether the face is complete: false when it holds more
 * than CONCORD_FACE_COMPLETION_LIMIT configurations (the completion stops
 * once one enters beyond; each costs O(k^2), k the configurations held); `error` is CONCORD_ENOMEM when out of memory, and
 * a user oracle's error ends it in `callback_error`. */
active_set_result active_set_complete_face(active_set *s, const factor *f, const double *a,
                                           const double *b, factor_buffers *buf);

/* The derivative of the solution on the face spanned by the active
 * configurations, for the metric w (the backward pass uses the degree
 * weights): with Z the weight block of the inverse of K built with D = W,
 *   dp = Z (S^T W x + N^T y),  du = S dp,  dv = N dp,
 * S and N the configurations' u and v parts (literal space). Prepare once
 * after the solve, then call jvp any number of times; y and dv may be NULL.
 * prepare returns CONCORD_OK, CONCORD_ENUMERIC when the configurations
 * turned out dependent in the metric w, or CONCORD_ENOMEM. */
int active_set_prepare_jvp(active_set *s, const double *w);
void active_set_jvp(active_set *s, const double *w, const double *x, const double *y,
                    double *du, double *dv);

#endif /* CONCORD_ACTIVE_SET_H */
