/*
 * Clamps: variables fixed at 0 or 1 for the solves of one branch-and-bound
 * node. The graph stays as it is. The ADMM loop keeps a clamped variable's
 * consensus at its value (the consensus is then restricted to the node's
 * set, and the multipliers of the variable's links pull the factors' copies
 * there as they pull any copy to its consensus), and its dual bound takes
 * each factor's best over the face of its polytope where the clamped links
 * hold their values, and -value * (sum of the variable's multipliers) for
 * the variable itself. The face's best comes from the factor's own oracle
 * with the clamped links' scores pushed to +-M, M above everything else
 * the factor sees (then no configuration off the face can win); for a
 * polytope with 0/1 vertices one M is always enough, for others (KNAPSACK)
 * M grows until the face is reached or shown empty.
 */
#ifndef CONCORD_CLAMP_H
#define CONCORD_CLAMP_H

#include <stdbool.h>
#include <stdint.h>

#include "solver.h"

/* Makes room for clamps (none set). CONCORD_OK or CONCORD_ENOMEM. */
int clamp_reserve(concord_solver *s);

/* Fixes variable i at value (0 or 1), or frees it (value -1). */
void clamp_set(concord_solver *s, int32_t i, int value);

/* Frees every variable. */
void clamp_clear(concord_solver *s);

/* Whether factor f has a clamped link. */
static inline bool clamp_touches(const concord_solver *s, int32_t f) {
    return s->factor_clamps && s->factor_clamps[f] > 0;
}

/* solver_factor_map for factor f restricted to its clamped face: the best
 * score a.u + b.v (a in variable space) over the configurations that agree
 * with the clamps, -INFINITY when there is none (solver_factor_map_held).
 * Returns 0 or a user oracle's error. */
int clamp_factor_map(concord_solver *s, int32_t f, const double *a, const double *b, double *u,
                     double *v, double *score);

/* Whether every factor's clamped face is non-empty; 0 or a user oracle's
  * error (with the failing factor in *failed). */
int clamp_faces_nonempty(concord_solver *s, bool *nonempty, int32_t *failed);

#endif /* CONCORD_CLAMP_H */
