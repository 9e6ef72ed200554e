/*
 * Small numeric helpers shared by the factor families and solvers: clipping
 * to the unit interval and an allocation-free sort of (key, index) pairs,
 * which is what every breakpoint search in the closed-form QPs needs.
 */
#ifndef CONCORD_UTIL_H
#define CONCORD_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct keyed {
    double key;
    int32_t index;
    int32_t tag;
} keyed;

/* Sorts x[0..n) by ascending key, in place, without allocating. */
void sort_keyed(keyed *x, int32_t n);

/* Scores the solvers take: finite, and 0 or of magnitude within [1e-300,
 * 1e300]; beyond, penalties and sums over the graph would vanish into
 * subnormals or overflow. */
static inline bool score_in_range(double x) {
    const double a = fabs(x);
    return a == 0.0 || (a >= 1e-300 && a <= 1e300);
}

/* The larger of x and |y|, for finite values: a comparison the compiler
 * keeps inline, where fmax is a library call (its NaN rules); loops that
 * take the largest magnitude of a vector use it. */
static inline double max_abs(double x, double y) { return fabs(y) > x ? fabs(y) : x; }

/* The largest |x_i|, or NaN or infinity when some x_i is not finite (in
 * one pass without branches: the entries are checked one by one only
 * then). */
static inline double largest_magnitude(int32_t n, const double *x) {
    double largest = 0.0, check = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        largest = max_abs(largest, x[i]);
        check += 0.0 * x[i]; /* NaN from NaN or infinity */
    }
    return largest + check;
}

/* A push that outweighs every sum of terms whose magnitudes add up to
 * `total` (two such sums differ by at most 2 total; 3 total leaves room
 * for rounding). Relative to the scores: a fixed margin of 1 swallowed
 * scores of 1e-17 beside it, and certified wrong MAPs. 1 when every score
 * is 0. */
static inline double outweighing(double total) { return total > 0.0 ? 3.0 * total : 1.0; }

/* Why a score is refused, for messages. */
static inline const char *score_problem(double x) {
    return isfinite(x) ? "is out of range: scores are 0 or between 1e-300 and 1e300 in magnitude"
                       : "is not finite";
}

/* Why an additional score is refused: as score_problem, and -inf, which
 * forbids an output only among the scores a forbidding family's factor is
 * built with (factor_ops.forbids; set later, it is taken only where the
 * factor was built with -inf), says so. */
static inline const char *additional_score_problem(double x) {
    return x == -INFINITY ? "is not finite (-inf forbids an output only among the scores a "
                            "DENSE, sequence, tree, head automaton or compressor factor is "
                            "built with, and is taken later only where it was)"
                          : score_problem(x);
}

/* A sum kept with the rounding errors of its additions (compensated
 * summation, each error exact by Knuth's branch-free TwoSum): value() is
 * exact when the exact sum is a double and the lost parts add up without
 * rounding, as when huge terms cancel and leave small ones. */
typedef struct compensated {
    double sum, error;
} compensated;

static inline void compensated_add(compensated *c, double x) {
    double t = c->sum + x, x_part = t - c->sum;
    c->error += (c->sum - (t - x_part)) + (x - x_part);
    c->sum = t;
}

static inline double compensated_value(compensated c) { return c.sum + c.error; }

/* The power of two that brings `largest` (>= 0) into [1, 2), 1 for 0,
 * and at most 2^1000 so that it stays finite for subnormal values:
 * scaling by it and back is exact. */
static inline double power_of_two_unit(double largest) {
    const int exponent = largest > 0.0 ? -ilogb(largest) : 0;
    return ldexp(1.0, exponent < 1000 ? exponent : 1000);
}

/* Whether each of the n values is 0 or 1. */
static inline bool all_binary(const double *u, int32_t n) {
    for (int32_t i = 0; i < n; ++i)
        if (u[i] != 0.0 && u[i] != 1.0) return false;
    return true;
}

static inline double clip01(double x) {
    return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

/* x clipped into [-1, 1], a user factor's additional outputs' range. */
static inline double clip_signed_unit(double x) {
    return x < -1.0 ? -1.0 : (x > 1.0 ? 1.0 : x);
}

#endif /* CONCORD_UTIL_H */
