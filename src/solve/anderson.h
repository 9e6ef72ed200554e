/*
 * Anderson acceleration (type II, safeguarded) of the ADMM iteration.
 *
 * With the penalty fixed, one ADMM iteration is a map x -> P(x) on the
 * per-link vector x_l = lambda_l + eta ubar_{var(l)} (the consensus is the
 * per-variable mean of x / eta, since the multipliers of a variable sum to
 * zero). Acceleration works on T = P^s, s plain iterations in a row (the
 * stride, see anderson.c), and extrapolates from its last m residuals
 * g = T(x) - x:
 *   x+ = T(x) - dF gamma,  gamma = argmin |g - dG gamma|,
 * with dG, dF the differences of consecutive residuals and images. Links
 * whose variable did not move during the last m + 1 steps have zero
 * entries in every stored difference, so all vector work runs over the
 * links that moved (exactly, not as an approximation), which keeps the
 * solver's factor caching effective. Safeguards: a step longer than ten
 * plain steps is refused; an extrapolation after which the residual grew
 * is undone (the state returns to the plain image) and the memory restarts,
 * extrapolating again after m + 1 steps; acceleration switches itself off
 * for the rest of the solve where few of the extrapolations it tries are
 * kept, and is not used on graphs with too many links (anderson_worthwhile).
 */
#ifndef CONCORD_ANDERSON_H
#define CONCORD_ANDERSON_H

#include <stdint.h>
#include <stdio.h>

#include "../graph.h"

typedef struct anderson anderson;

/* Whether acceleration can pay on g at all: not when more links than it
 * could ever follow (see anderson.c). */
int anderson_worthwhile(const concord_graph *g);

/* NULL when out of memory. m is the memory (1..ANDERSON_MAX_MEMORY). */
anderson *anderson_new(const concord_graph *g, int m);
void anderson_free(anderson *a);

enum { ANDERSON_MAX_MEMORY = 16 };

/* Starts a solve from the current state. */
void anderson_begin(anderson *a, admm_workspace *w, double eta);

/* Restarts the history at iteration t (the penalty changed, which changes
 * the state vector). */
void anderson_restart(anderson *a, admm_workspace *w, double eta, int32_t t);

/* Records that variable i moved (its consensus or a multiplier changed) at
 * iteration t. */
void anderson_moved(anderson *a, int32_t i, int32_t t);

/* After each plain iteration; every stride-th call after a (re)start is a
 * step: it proposes the extrapolated state and applies it to (ubar,
 * lambda), marking changed variables active and factors whose inputs moved
 * beyond `slack` dirty. */
void anderson_after(anderson *a, admm_workspace *w, double eta, int32_t t, double slack);

/* One line: extrapolations kept and refused in this solve, and when and why
 * acceleration stopped. */
void anderson_report(const anderson *a, FILE *out);

#endif /* CONCORD_ANDERSON_H */
