/*
 * Exact MAP on acyclic graphs by max-product dynamic programming over the
 * factor graph of units (units.h): when units and factors form a forest,
 * messages flow from the leaves to a root unit of each tree and the best
 * assignment is read back down, with no iteration. A factor's message to a
 * unit is computed by its own MAP oracle, once per state of that unit,
 * which is pushed on (the other units' messages scoring their states
 * linearly); the states of a unit the factor may switch on two of are
 * enumerated instead. The plan (the forest's order) is made once per
 * solver.
 */
#ifndef CONCORD_ACYCLIC_H
#define CONCORD_ACYCLIC_H

#include <stdbool.h>

#include "solver.h"

typedef struct acyclic_plan acyclic_plan;

void acyclic_free(acyclic_plan *p);

/* Analyses the solver's graph once (it keeps the plan): whether it is a
 * forest of units and factors that dynamic programming can solve (*exact),
 * and whether LP-MAP then equals MAP for any scores (*lp_tight: no factor
 * with fractional vertices, and every incidence "at most one"). Returns
 * CONCORD_OK or an error (out of memory, a user oracle's failure). */
int acyclic_prepare(concord_solver *s, bool *exact, bool *lp_tight);

/* The MAP assignment under the solver's scores into x (num_variables):
 * *feasible says whether any assignment satisfies every factor. Only after
 * acyclic_prepare said *exact. Returns CONCORD_OK or a user oracle's
 * failure (with the solver's message). */
int acyclic_solve(concord_solver *s, double *x, bool *feasible);

/* concord_solver_map's use of it: when settings allow it and LP-MAP is
 * integral on this graph, solves and fills the solver's solution and
 * *info (*done true); otherwise does nothing (*done false). */
int acyclic_try_map(concord_solver *s, const concord_settings *settings, concord_info *info,
                    bool *done);

#endif /* CONCORD_ACYCLIC_H */
