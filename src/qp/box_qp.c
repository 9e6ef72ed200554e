/*
 * The singly-constrained box QP (see box_qp.h).
 *
 * s(tau) = sum_i c_i clip((a_i - tau c_i)/d_i, 0, 1) is continuous and
 * non-increasing, and the answer is u(tau*) for a root of s(tau*) = rhs.
 * s(0) tells the sign of tau*, which fixes every item that is already at
 * the bound it moves towards (a_i <= 0 stays at 0 when tau* > 0, a_i >= d_i
 * stays at 1 when tau* < 0). The remaining items go through variable fixing
 * (Bitran and Hax; Kiwiel 2008): solve for tau with every item free, then
 * fix at their bound all items that violate the side whose total violation
 * is larger -- they are at that bound in the optimum too -- and repeat. Each
 * pass is linear and removes at least one item; on the rare inputs that
 * need many passes, the rest is finished by sorting the breakpoints, so the
 * worst case stays O(n log n). With unit costs and rhs 1 (XOR, ATMOSTONE,
 * OR: most factor solves) an active constraint holds the sum at exactly 1,
 * so no item can pass 1 while another is above 0: only the lower bounds
 * matter, and the one-sided fixing (Michelot's simplex projection) needs
 * neither the upper side's bookkeeping nor a final refinement.
 *
 * Scores of any magnitude (up to 1e300, with d near 1): a free item's
 * value is the small difference a_i - tau c_i of two huge numbers, which
 * is lost when tau is formed from sums of huge a_i. So the multiplier is
 * found relative to a reference close to it, and every a_i - reference
 * c_i is rounded once: exact differences where they matter. With rhs 1
 * and unit costs the reference is the largest score. Otherwise a Newton
 * step taken relative to the multiplier of variable fixing certifies it
 * (the constraint holds at the point it gives); when it does not (scores
 * spanning many magnitudes), the multiplier is found again relative to
 * the threshold of the greedy fractional knapsack, which brackets it.
 */
#include "box_qp.h"

#include <float.h>
#include <math.h>

#include "../util.h"

size_t box_qp_scratch_bytes(int32_t n) {
    return 2 * (size_t)n * (sizeof(keyed) + sizeof(int32_t)) + 4 * (size_t)n * sizeof(double);
}

enum { LEAVES_UPPER = 1, REACHES_ZERO = 0 };

/* Item i at multiplier tau is clip(ratio_i - tau slope_i, 0, 1), with
 * ratio_i = a_i/d_i and slope_i = c_i/d_i computed once per solve: the
 * passes below then multiply instead of divide. */

/* Root of sum_{i in free} c_i clip(ratio_i - tau slope_i) = rhs by sweeping
 * the sorted breakpoints of the free items. */
static double sweep_root(int32_t m, const int32_t *free_items, const double *ratio,
                         const double *slope, const double *c, double rhs, keyed *bp) {
    int32_t nb = 0;
    double p = 0.0, q = 0.0;
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = free_items[k];
        bp[nb++] = (keyed){(ratio[i] - 1.0) / slope[i], i, LEAVES_UPPER};
        bp[nb++] = (keyed){ratio[i] / slope[i], i, REACHES_ZERO};
        p += box_qp_cost(c, i);
    }
    sort_keyed(bp, nb);
    for (int32_t k = 0; k < nb; ++k) {
        if (p - bp[k].key * q <= rhs) return q > 0.0 ? (p - rhs) / q : bp[k].key;
        int32_t i = bp[k].index;
        double ci = box_qp_cost(c, i);
        double sign = bp[k].tag == LEAVES_UPPER ? 1.0 : -1.0;
        if (bp[k].tag == LEAVES_UPPER) p -= ci;
        p += sign * ci * ratio[i];
        q += sign * ci * slope[i];
    }
    return nb > 0 ? bp[nb - 1].key : 0.0;
}

/* Snaps u(tau) to a bound it reaches up to rounding: on a tied breakpoint
 * tau puts items at their bound up to the rounding of a - tau c (and of
 * tau, whose sums hold rhs: an item's share of it is at most `most`, the
 * largest value the constraint lets it take), and the solution's face
 * (which the backward pass reads off u) must be the right one. */
static inline double snapped(double ratio, double slope, double tau, double most) {
    double z = ratio - tau * slope;
    double noise = 4e-16 * (fabs(ratio) + fabs(tau) * slope + most);
    return z <= noise ? 0.0 : (z >= 1.0 - noise ? 1.0 : z);
}

/* Ratios are relative to the largest score, which keeps huge scores in
 * range; but an item far below it with a light weight then has a huge
 * ratio, and its u_i, the small difference of two such numbers, loses its
 * low bits (an ATMOSTONE with weights 2e11 apart came out infeasible by
 * 2e-5). Beyond EXACT_RATIOS the rounding of the ratios (eps times them)
 * reaches 1e-12 in u. The positive items' ratios, all at most 0, sum to
 * tau times the sum of their slopes, minus 1: so when |tau| times a sum
 * of slopes at least theirs exceeds EXACT_RATIOS, the positive items are
 * measured once more (remeasure). */
#define EXACT_RATIOS 4096.0

/* An item's unclipped value at multiplier `measured`, scores measured
 * from `reference`: the one test of positivity remeasure applies. */
static inline double at_multiplier(double a, double d, double reference, double measured) {
    return (a - reference) / d - measured / d;
}

/* The m items of `set`, those the multiplier *tau leaves positive (their
 * values at it, and every other item's 0, are in u), measured once more
 * from the score of the lightest of them, whose ratio is then 0 and whose
 * value no longer cancels; items the new multiplier puts at 0 leave the
 * set, which is measured again (the multiplier only rises, as in variable
 * fixing). A set found from rounded ratios may also have lost an item
 * that is positive: then the set becomes the items positive at the new
 * multiplier, and is measured again, up to n + 1 times. Once no item
 * outside the set is positive, the new values replace the old ones, and
 * *top and *tau become the new reference and multiplier; otherwise the
 * old values stand. `set` (room for n items) is rewritten. */
static void remeasure(int32_t m, int32_t *set, int32_t n, const double *a, const double *d,
                      double *ratio, double *top, double *tau, double *u) {
    for (int32_t round = 0; round <= n && m > 0; ++round) {
        double reference, measured;
        for (;;) {
            int32_t lightest = set[0];
            for (int32_t k = 1; k < m; ++k)
                if (d[set[k]] < d[lightest]) lightest = set[k];
            reference = a[lightest];
            double num = -1.0, den = 0.0;
            for (int32_t k = 0; k < m; ++k) {
                const int32_t i = set[k];
                ratio[i] = (a[i] - reference) / d[i];
                num += ratio[i];
                den += 1.0 / d[i];
            }
            measured = num / den;
            int32_t kept = 0;
            for (int32_t k = 0; k < m; ++k)
                if (at_multiplier(a[set[k]], d[set[k]], reference, measured) > 0.0)
                    set[kept++] = set[k];
            if (kept == m || kept == 0) break;
            m = kept;
        }
        int32_t positive = 0;
        for (int32_t i = 0; i < n; ++i)
            positive += at_multiplier(a[i], d[i], reference, measured) > 0.0;
        if (positive == m) {
            for (int32_t i = 0; i < n; ++i) u[i] = 0.0;
            for (int32_t k = 0; k < m; ++k)
                u[set[k]] = snapped(ratio[set[k]], 1.0 / d[set[k]], measured, 1.0);
            *top = reference;
            *tau = measured;
            return;
        }
        m = 0;
        for (int32_t i = 0; i < n; ++i)
            if (at_multiplier(a[i], d[i], reference, measured) > 0.0) set[m++] = i;
    }
}

/* box_qp_small_unit_simplex's end when its ratios may be beyond
 * EXACT_RATIOS, u holding the values at tau: the items tau leaves
 * positive (the prefix of `order` whose tau_S is tau, found again)
 * remeasured. Out of line, so that the common case's code stays as it was
 * (inline, the test cost 2% of the instructions of a solve of AD3's
 * coref). */
static __attribute__((noinline)) double
small_unit_simplex_remeasured(int32_t n, const double *a, const double *d, const int32_t *order,
                              const double *slope, double *ratio, double tau, double top,
                              double *u) {
    double num = -1.0, den = 0.0, best = -INFINITY;
    int32_t set[BOX_QP_SMALL_SIMPLEX], positive = 0;
    for (int32_t k = 0; k < n; ++k) {
        set[k] = order[k];
        num += ratio[order[k]];
        den += slope[order[k]];
        if (num / den > best) {
            best = num / den;
            positive = k + 1;
        }
    }
    remeasure(positive, set, n, a, d, ratio, &top, &tau, u);
    return top + tau;
}

/* Unit costs, sum = 1, at most BOX_QP_SMALL_SIMPLEX items (box_qp.h).
 * Item i is max(ratio_i - tau slope_i, 0), zero from tau = a_i
 * on. For any set S of items, tau_S = (sum_S ratio - 1) / (sum_S slope)
 * is at most tau*, since the sum over S alone already reaches 1 there;
 * and the items tau* leaves positive are those of largest a, a prefix in
 * that order, whose tau_S is tau*. So tau* is the largest tau_S over the
 * prefixes: no passes and no index lists. Ratios and tau are relative to
 * the largest score (but see EXACT_RATIOS). */
double box_qp_small_unit_simplex(int32_t n, const double *a, const double *d, double *u) {
    int32_t order[BOX_QP_SMALL_SIMPLEX] = {0};
    double slope[BOX_QP_SMALL_SIMPLEX], ratio[BOX_QP_SMALL_SIMPLEX];
    for (int32_t i = 0; i < n; ++i) {
        slope[i] = 1.0 / d[i];
        int32_t k = i;
        for (; k > 0 && a[order[k - 1]] < a[i]; --k) order[k] = order[k - 1];
        order[k] = i;
    }
    const double top = a[order[0]];
    double num = -1.0, den = 0.0, tau = -INFINITY;
    for (int32_t k = 0; k < n; ++k) {
        const int32_t i = order[k];
        ratio[i] = (a[i] - top) * slope[i];
        num += ratio[i];
        den += slope[i];
        const double candidate = num / den;
        tau = candidate > tau ? candidate : tau;
    }
    for (int32_t i = 0; i < n; ++i) u[i] = snapped(ratio[i], slope[i], tau, 1.0);
    if (__builtin_expect(fabs(tau) * den > EXACT_RATIOS, 0))
        return small_unit_simplex_remeasured(n, a, d, order, slope, ratio, tau, top, u);
    return top + tau;
}

/* Unit costs, sum = 1, more items, relative to the largest score a_top
 * (every ratio is then at most 0, and no sum cancels). The multiplier
 * with every live item free is a lower bound on tau*, so the items it
 * puts at or below 0 are at 0 in the optimum; drop them and repeat (tau
 * only rises). Each pass drops at least one item, and the rare long runs
 * are finished by the sorted sweep. When tau* is positive the items with
 * a_i <= 0 are at 0 from the start. */
static double large_unit_simplex(int32_t n, const double *a, const double *d, bool positive,
                                 double *u, double *ratio, double *slope, int32_t *live,
                                 int32_t max_passes, keyed *breakpoints) {
    int32_t m = 0, top_item = -1;
    double top = -INFINITY;
    for (int32_t i = 0; i < n; ++i) {
        u[i] = 0.0;
        if (positive && a[i] <= 0.0) continue;
        if (a[i] > top) top = a[i], top_item = i;
        slope[i] = 1.0 / d[i];
        live[m++] = i;
    }
    /* The top item's value is at most 1, so tau* is at least its score
     * minus its weight, and items scored below that are at 0: dropped
     * here, since their ratios can overflow (a score 1e212 beside weights
     * of 1e-97 made them -inf, tau NaN, and every value 0). */
    const double floor = m > 0 ? top - d[top_item] : top;
    double num = -1.0, den = 0.0, tau;
    int32_t within = 0;
    for (int32_t k = 0; k < m; ++k) {
        const int32_t i = live[k];
        if (a[i] < floor) continue;
        live[within++] = i;
        ratio[i] = (a[i] - top) * slope[i];
        num += ratio[i];
        den += slope[i];
    }
    m = within;
    bool spread = false; /* some pass's ratios beyond EXACT_RATIOS */
    for (int32_t passes = 0;; ++passes) {
        tau = num / den;
        spread |= fabs(tau) * den > EXACT_RATIOS;
        int32_t kept = 0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            if (ratio[i] - tau * slope[i] > 0.0) live[kept++] = i;
        }
        if (kept == m) {
            if (spread && m > 0) {
                for (int32_t k = 0; k < m; ++k)
                    u[live[k]] = snapped(ratio[live[k]], slope[live[k]], tau, 1.0);
                remeasure(m, live, n, a, d, ratio, &top, &tau, u);
                return top + tau;
            }
            break;
        }
        m = kept;
        if (passes == max_passes) {
            tau = sweep_root(m, live, ratio, slope, NULL, 1.0, breakpoints);
            break;
        }
        num = -1.0, den = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            num += ratio[live[k]];
            den += slope[live[k]];
        }
    }
    for (int32_t k = 0; k < m; ++k) u[live[k]] = snapped(ratio[live[k]], slope[live[k]], tau, 1.0);
    return top + tau;
}

/* Variable fixing over the m items in live[] (reordered), whose costs
 * must add up to target: the multiplier it ends with. */
static inline __attribute__((always_inline)) double fix_variables(
    int32_t m, int32_t *live, const double *ratio, const double *slope, const double *c,
    double target, int32_t max_passes, keyed *breakpoints) {
    double tau = 0.0;
    for (int32_t passes = 0;;) {
        double num = -target, den = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            double ci = box_qp_cost(c, i);
            num += ci * ratio[i];
            den += ci * slope[i];
        }
        if (den <= 0.0) return tau;
        tau = num / den;
        double below = 0.0, above = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            double ci = box_qp_cost(c, i);
            double z = ratio[i] - tau * slope[i];
            if (z < 0.0) below -= ci * z;
            else if (z > 1.0) above += ci * (z - 1.0);
        }
        if (below == above) return tau;
        if (++passes > max_passes) return sweep_root(m, live, ratio, slope, c, target, breakpoints);
        int32_t kept = 0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            double z = ratio[i] - tau * slope[i];
            if (below > above && z <= 0.0) continue;
            if (below < above && z >= 1.0) {
                target -= box_qp_cost(c, i);
                continue;
            }
            live[kept++] = i;
        }
        m = kept;
    }
}

/* x_i - tau c_i, rounded once. */
static inline double minus_multiple(double x, double tau, const double *c, int32_t i) {
    return c ? fma(-tau, c[i], x) : x - tau;
}

/* Newton's step on sum_{pool} c_i u_i = rhs from the multiplier tau, over
 * the items free at tau, with every x_i - tau c_i rounded once; writes u
 * for the pool (ratio[] gets the shifted ratios) and returns the step.
 * *certified (unless NULL) says whether the point satisfies the
 * constraint up to the rounding of its sums (a few units in the last
 * place per item), which makes it the solution: every u_i is clipped at
 * one multiplier. */
static inline __attribute__((always_inline)) double newton_step(
    int32_t m, const int32_t *pool, const double *x, const double *d, const double *c,
    double rhs, double tau, double *ratio, const double *slope, double *u, bool *certified) {
    double num = -rhs, den = 0.0;
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = pool[k];
        double ci = box_qp_cost(c, i);
        double z = minus_multiple(x[i], tau, c, i) / d[i];
        ratio[i] = z;
        if (z >= 1.0) {
            num += ci;
        } else if (z > 0.0) {
            num += ci * z;
            den += ci * slope[i];
        }
    }
    double step = den > 0.0 ? num / den : 0.0;
    double sum = 0.0, weight = 0.0; /* the costs of the items above 0 */
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = pool[k];
        double ci = box_qp_cost(c, i);
        u[i] = snapped(ratio[i], slope[i], step, fmin(1.0, fabs(rhs) / ci));
        sum += ci * u[i];
        if (u[i] > 0.0) weight += ci;
    }
    if (certified)
        *certified = fabs(sum - rhs) <= 4.0 * DBL_EPSILON * (m + 8) * (fabs(rhs) + weight);
    return step;
}

/* a_i - (a_t/c_t) c_i = (a_i c_t - a_t c_i) / c_t, the determinant by
 * Kahan's method (an error of a few roundings, however large the terms). */
static double minus_ratio(double a_i, double c_i, double a_t, double c_t) {
    double w = a_t * c_i;
    double error = fma(-a_t, c_i, w); /* w - a_t c_i, exactly */
    return (fma(a_i, c_t, -w) + error) / c_t;
}

/* The binding constraint, from scratch, relative to the greedy threshold:
 * order the items by a_i/c_i, falling, and let t be the first at which
 * their costs reach rhs. At tau = a_t/c_t the items before t are below
 * their costs and the others at 0, so the sum is below rhs; at tau =
 * a_t/c_t - D, with D the largest d_i/c_i of the items up to t, those
 * items are all at 1, so the sum reaches it: tau* lies in between (or at
 * a_t/c_t when rhs is 0). With
 * x_i = a_i - (a_t/c_t) c_i, the items with x_i >= d_i are at 1 and those
 * with x_i <= -D c_i at 0; the others have x_i of the size of d_i and
 * D c_i, and variable fixing over them, relative to a_t/c_t, keeps its
 * precision. Their costs are scaled by the power of two that brings the
 * largest to [1, 2) (tau then scales inversely), so that the squares of
 * costs far below the others' do not underflow. */
static inline __attribute__((always_inline)) double threshold_binding(
    int32_t n, const double *a, const double *d, const double *c, double rhs, double *u,
    double *ratio, double *slope, double *shifted, double *scaled_costs, int32_t *pool,
    int32_t *live, int32_t max_passes, keyed *breakpoints) {
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        double ci = box_qp_cost(c, i);
        if (ci > 0.0) breakpoints[m++] = (keyed){-a[i] / ci, i, 0};
    }
    if (m == 0) return 0.0;
    sort_keyed(breakpoints, m);
    double reached = 0.0, width = 0.0; /* width: D */
    int32_t t = breakpoints[m - 1].index;
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = breakpoints[k].index;
        reached += box_qp_cost(c, i);
        width = fmax(width, d[i] / box_qp_cost(c, i));
        if (reached >= rhs) {
            t = i;
            break;
        }
    }
    double target = rhs, largest = 0.0;
    int32_t n_pool = 0;
    for (int32_t i = 0; i < n; ++i) {
        double ci = box_qp_cost(c, i);
        if (ci <= 0.0) continue;
        double x = c ? minus_ratio(a[i], ci, a[t], c[t]) : a[i] - a[t];
        if (x >= d[i]) {
            u[i] = 1.0;
            target -= ci;
        } else if (x <= -width * ci) {
            u[i] = 0.0;
        } else {
            shifted[i] = x;
            ratio[i] = x / d[i];
            largest = fmax(largest, ci);
            live[n_pool] = i;
            pool[n_pool++] = i;
        }
    }
    const int scale = c && largest > 0.0 ? -ilogb(largest) : 0;
    const double *costs = c ? scaled_costs : NULL;
    for (int32_t k = 0; k < n_pool; ++k) {
        int32_t i = pool[k];
        if (c) scaled_costs[i] = ldexp(c[i], scale);
        slope[i] = box_qp_cost(costs, i) / d[i];
    }
    target = ldexp(target, scale);
    double tau = fix_variables(n_pool, live, ratio, slope, costs, target, max_passes, breakpoints);
    tau += newton_step(n_pool, pool, shifted, d, costs, target, tau, ratio, slope, u, NULL);
    return a[t] / box_qp_cost(c, t) + ldexp(tau, scale);
}

/* box_qp_binding's body, always inlined: called with c == NULL it is
 * compiled for unit costs, without the test for c and the multiplications
 * by 1 on every item (the logic factors, most factor solves, have unit
 * costs). */
static inline __attribute__((always_inline)) double binding(int32_t n, const double *a,
                                                            const double *d, const double *c,
                                                            double rhs, double *u,
                                                            void *scratch, double s0) {
    keyed *breakpoints = (keyed *)scratch;
    double *ratio = (double *)(breakpoints + 2 * (size_t)n);
    double *slope = ratio + n;
    double *shifted = slope + n;
    double *scaled_costs = shifted + n;
    int32_t *pool = (int32_t *)(scaled_costs + n); /* undecided items */
    int32_t *live = pool + n;                      /* still free */
    int32_t max_passes = 8;
    for (int32_t k = n; k > 1; k >>= 1) max_passes += 2;
    const bool positive = s0 > rhs; /* the sign of tau* */
    if (!c && rhs == 1.0)
        return large_unit_simplex(n, a, d, positive, u, ratio, slope, live, max_passes,
                                  breakpoints);
    int32_t n_pool = 0;
    double pool_rhs = rhs; /* rhs minus the costs of items fixed at 1 */
    for (int32_t i = 0; i < n; ++i) {
        double ci = box_qp_cost(c, i);
        if (ci <= 0.0) continue; /* u_i = clip(a_i/d_i) whatever tau is */
        if (positive && a[i] <= 0.0) {
            u[i] = 0.0;
        } else if (!positive && a[i] >= d[i]) {
            u[i] = 1.0;
            pool_rhs -= ci;
        } else {
            ratio[i] = a[i] / d[i];
            slope[i] = ci / d[i];
            live[n_pool] = i;
            pool[n_pool++] = i;
        }
    }
    double tau = fix_variables(n_pool, live, ratio, slope, c, pool_rhs, max_passes, breakpoints);
    bool certified;
    tau += newton_step(n_pool, pool, a, d, c, pool_rhs, tau, ratio, slope, u, &certified);
    if (certified) return tau;
    return threshold_binding(n, a, d, c, rhs, u, ratio, slope, shifted, scaled_costs, pool, live,
                             max_passes, breakpoints);
}

double box_qp_binding(int32_t n, const double *a, const double *d, const double *c, double rhs,
                      double *u, void *scratch, double s0) {
    return c ? binding(n, a, d, c, rhs, u, scratch, s0)
             : binding(n, a, d, NULL, rhs, u, scratch, s0);
}

/* Costs enter relative to the largest free item's (times a power of two
 * that brings it into [1, 2)), so that their squares do not underflow. */
void box_qp_face(int32_t n, const double *u, const double *c, int active, const double *w,
                 const double *x, double *du) {
    double unit = 1.0;
    if (c && active) {
        double largest = 0.0;
        for (int32_t i = 0; i < n; ++i)
            if (u[i] > 0.0 && u[i] < 1.0) largest = fmax(largest, c[i]);
        unit = power_of_two_unit(largest);
    }
    double num = 0.0, den = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        int free_item = u[i] > 0.0 && u[i] < 1.0;
        if (free_item && active) {
            double ci = box_qp_cost(c, i) * unit;
            num += ci * x[i];
            den += ci * ci / w[i];
        }
        du[i] = free_item ? x[i] : 0.0;
    }
    if (!active || den <= 0.0) return;
    double shift = num / den;
    for (int32_t i = 0; i < n; ++i)
        if (u[i] > 0.0 && u[i] < 1.0) du[i] -= box_qp_cost(c, i) * unit / w[i] * shift;
}
