/*
 * Max-marginals of one factor over units (units.h), computed by the
 * factor's own MAP oracle: for a target incidence (factor f, unit w) and
 * each state t of w,
 *   out(t) = max over f's configurations that put w in t of
 *            phi_f . v + sum over f's other incidences k of in_k(x_k),
 * in_k a message over the states of incidence k's unit. w's state is
 * pushed on (its link +M, the other links into w -M; a state among those f
 * does not touch: all of them -M), and each other unit is scored linearly:
 * a binary unit's link by in(1) - in(0); a multi-variable's state links by
 * in(s) - max over the states f does not touch (which f's "none of them
 * on" stands for), or by in(s) plus a push when f touches all its states
 * (so that exactly one is on). That is exact when f never switches on two
 * states of the unit ("at most one"); the states of other units, and every
 * link of a factor with fractional vertices, are enumerated like the
 * target's. Values are summed afresh from the states the configuration
 * selects, so no push leaves rounding behind; -INFINITY in a message (an
 * impossible state) enters the oracle as -big, big above twice the sum of
 * every |message| and |score| that can meet, so that the oracle avoids it
 * whenever it can. Max-product dynamic programming (acyclic.c) and MPLP
 * (mplp.c) are built on it.
 */
#ifndef CONCORD_MAXMARG_H
#define CONCORD_MAXMARG_H

#include <stdbool.h>
#include <stdint.h>

#include "solver.h"
#include "units.h"

/* Most oracle calls one max-marginal computation may take. */
enum { MAXMARG_MAX_CALLS = 1 << 16 };

typedef struct maxmarg {
    concord_solver *s;
    const units *un;
    const double *phi;       /* the additional scores */
    const int32_t *msg_begin; /* per incidence: its states' offset in messages */
    bool *enumerated;        /* per incidence: its unit's states are enumerated */
    double big;              /* an impossible state's score in the oracle */
    /* work for one factor */
    double *lin;
    int32_t *pattern, *radix, *chosen;
    bool *touched;
    int32_t *best; /* the states of the last best configuration, by position
                      among the factor's incidences (the target's: -1) */
} maxmarg;

/* Sizes the work and sets which incidences are enumerated (not "at most
 * one", or of a factor with fractional vertices). msg_begin stays the
 * caller's. Returns CONCORD_OK or CONCORD_ENOMEM. */
int maxmarg_init(maxmarg *m, concord_solver *s, const int32_t *msg_begin);
void maxmarg_free(maxmarg *m);

/* Oracle calls factor f's max-marginals toward incidence `target` take
 * (target -1: f's best over everything). */
int64_t maxmarg_calls(const maxmarg *m, int32_t f, int32_t target);

/* The max-marginals of factor f toward incidence `target` (one of f's)
 * into out (its unit's states), from the messages `in` (laid out by
 * msg_begin). Returns 0 or a user oracle's error. */
int maxmarg_message(maxmarg *m, int32_t f, int32_t target, const double *in, double *out);

/* Factor f's best configuration with the unit of incidence `target` in
 * state `state` (target -1: no unit fixed): its value to *value
 * (-INFINITY when none) and the states of the other units to m->best.
 * Returns 0 or a user oracle's error. */
int maxmarg_decide(maxmarg *m, int32_t f, int32_t target, int32_t state, const double *in,
                   double *value);

#endif /* CONCORD_MAXMARG_H */
