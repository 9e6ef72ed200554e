/*
 * Units: the graph's variables as branch-and-bound, max-product dynamic
 * programming and MPLP see them. A multi-variable whose states are one-hot
 * in every assignment the factors allow (its own XOR says so, or some
 * factor over all its states switches exactly one of them on) is one unit
 * with k states, state s being its variable first + s; every other binary
 * variable is a unit with two states, off (0) and on (1). The factors then
 * touch units: an incidence is a pair (factor, unit) with the factor's
 * links into the unit. A multi-variable's own XOR is internal to its unit
 * and has no incidence. Whether a factor's configurations switch on at most
 * one of the states it touches in a unit is asked of its MAP oracle once:
 * that is what lets a factor's oracle score a unit's states linearly.
 */
#ifndef CONCORD_UNITS_H
#define CONCORD_UNITS_H

#include <stdbool.h>
#include <stdint.h>

struct concord_solver;

typedef struct units {
    int32_t n_units;
    int32_t *first;    /* per unit: its first variable */
    int32_t *states;   /* per unit: its number of states (a binary unit: 2) */
    bool *multi;       /* per unit: a multi-variable (state s is variable first + s) */
    int32_t *unit_of;  /* per variable: its unit */
    int32_t *own;      /* per factor: the unit whose one-hot XOR it is, or -1 */
    int32_t max_states;

    /* Incidences, grouped by factor: those of factor f are
     * inc_begin[f] .. inc_begin[f+1]; incidence k links factor inc_factor[k]
     * to unit inc_unit[k] through the factor's links (local indices, in
     * link order) inc_link[inc_link_begin[k] .. inc_link_begin[k+1]). */
    int32_t n_inc;
    int32_t *inc_begin, *inc_factor, *inc_unit, *inc_link_begin, *inc_link;
    bool *inc_at_most_one; /* the factor never switches on two of those states
                              (set by units_classify) */
    bool classified;       /* inc_at_most_one is set */
    /* The incidences of each unit: unit_inc[unit_inc_begin[u] .. [u+1]). */
    int32_t *unit_inc_begin, *unit_inc;
    int32_t max_factor_units; /* most incidences of one factor */
} units;

/* Builds the solver's units (s->units) unless it has them, all but
 * inc_at_most_one. Returns CONCORD_OK, CONCORD_ENOMEM, or a user oracle's
 * failure (with the solver's message). */
int units_build(struct concord_solver *s);

/* Sets inc_at_most_one of the solver's built units unless it is set: one
 * oracle call per incidence of two or more links into a multi-variable,
 * which max-marginals need (maxmarg_init) and the test of whether the
 * graph is a forest does not. Returns as units_build. */
int units_classify(struct concord_solver *s);

void units_free(units *u);

/* Writes unit w's state `state` into the assignment x. */
void units_set_state(const units *un, int32_t w, int32_t state, double *x);

/* The state of unit w that its variable `var` stands for when on: a
 * multi-variable's state var - first, a binary unit's on state 1. */
static inline int32_t units_link_state(const units *un, int32_t w, int32_t var) {
    return un->multi[w] ? var - un->first[w] : 1;
}

#endif /* CONCORD_UNITS_H */
