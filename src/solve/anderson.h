/*
 * Anderson acceleration (type II, safeguarded) of a fixed-point iteration
 * z -> P(z) on a plain vector z, knowing nothing of what z means.
 *
 * The vector is partitioned into blocks (block b holds the entries
 * block_begin[b] .. block_begin[b+1]-1); the caller says which blocks its
 * plain iterations changed, and the acceleration works only on the blocks
 * that changed during the last m + 1 steps: the others hold zeros in every
 * stored difference, so leaving them out changes no result while the work
 * stays proportional to what moves. It accelerates T = P^s, s plain
 * iterations in a row (the stride), and extrapolates from its last m
 * residuals g = T(z) - z:
 *   z+ = T(z) - dF gamma,  gamma = argmin |g - dG gamma|,
 * with dG, dF the differences of consecutive residuals and images.
 * Safeguards: a step longer than a hundred plain steps is refused; an
 * extrapolation after which the residual grew is undone (its blocks return
 * to the plain image it started from) and the memory restarts, as it does
 * without a step when the residual's squares overflow; the
 * acceleration switches itself off for the rest of a solve when few of the
 * extrapolations it tries are kept (judged once it has tried a few).
 *
 * The ADMM solver (admm.c) runs it on the per-link state
 * lambda_l + eta * ubar_i, one block per variable.
 */
#ifndef CONCORD_ANDERSON_H
#define CONCORD_ANDERSON_H

#include <stdbool.h>
#include <stdint.h>

typedef struct anderson anderson;

enum { ANDERSON_MAX_MEMORY = 16 };

/* Whether acceleration can pay on a vector of n entries at all: not when
 * more than it could ever follow (see anderson.c). */
bool anderson_worthwhile(int64_t n);

/* An accelerator for vectors partitioned by block_begin (n_blocks + 1
 * offsets, kept by reference), with room for a memory of `capacity`
 * (1..ANDERSON_MAX_MEMORY). NULL when out of memory. */
anderson *anderson_new(int32_t n_blocks, const int32_t *block_begin, int capacity);
void anderson_free(anderson *a);

/* Makes room for a memory of m; returns false when out of memory (the
 * accelerator is unchanged). */
bool anderson_reserve(anderson *a, int m);

/* Starts a solve from the vector z, with memory at most m (<= the
 * capacity; the first iterations use a shorter one). */
void anderson_begin(anderson *a, int m, const double *z);

/* Forgets the history and starts it again from z (for ADMM: the penalty
 * changed, which moves every entry). From then on a block is live only
 * once anderson_changed reports it. */
void anderson_restart(anderson *a, const double *z);

/* Whether the acceleration still runs in this solve (it switches itself
 * off when it does not pay; until the next anderson_begin the caller need
 * neither keep z up to date nor report changes). */
bool anderson_running(const anderson *a);

/* Block b changed during iteration t. */
void anderson_changed(anderson *a, int32_t b, int32_t t);

/* Told whenever a step rewrites block b of the vector: the owner takes the
 * new values into its own representation, and may write them back to the
 * vector rounded as that representation gives them (the step continues
 * from what it finds there). */
typedef void (*anderson_apply_fn)(void *context, int32_t b);

/* Called after each plain iteration t: whether a step is due (every
 * stride-th iteration, until the acceleration switches itself off). */
bool anderson_due(anderson *a, int32_t t);

/* The step that anderson_due announced, z holding the image of the plain
 * iterations since the last step (the caller keeps z up to date while the
 * acceleration runs). It may rewrite z on some blocks, calling
 * apply(context, b) for each block it rewrote. */
void anderson_step(anderson *a, double *z, anderson_apply_fn apply, void *context);

/* Called at the end of each iteration t: whether the memory grows now (a
 * solve starts with a short one). The caller must then restart the
 * history (anderson_restart) from the whole vector. */
bool anderson_grows(anderson *a, int32_t t);

#endif /* CONCORD_ANDERSON_H */
