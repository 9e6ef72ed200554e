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
 */
#include "box_qp.h"

#include <math.h>

#include "../util.h"

size_t box_qp_scratch_bytes(int32_t n) {
    return 2 * (size_t)n * (sizeof(keyed) + sizeof(double) + sizeof(int32_t));
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

/* tau from the items that tau leaves strictly between their bounds. */
static double refine_root(int32_t m, const int32_t *items, const double *ratio,
                          const double *slope, const double *c, double rhs, double tau) {
    double num = -rhs, den = 0.0;
    for (int32_t k = 0; k < m; ++k) {
        int32_t i = items[k];
        double ci = box_qp_cost(c, i);
        double z = ratio[i] - tau * slope[i];
        if (z >= 1.0) {
            num += ci;
        } else if (z > 0.0) {
            num += ci * ratio[i];
            den += ci * slope[i];
        }
    }
    return den > 0.0 ? num / den : tau;
}

/* Snaps u(tau) to a bound it reaches up to rounding: on a tied breakpoint
 * tau puts items at their bound up to the rounding of a - tau c, and the
 * solution's face (which the backward pass reads off u) must be the right
 * one. */
static inline double snapped(double ratio, double slope, double tau) {
    double z = ratio - tau * slope;
    double noise = 4e-16 * (fabs(ratio) + fabs(tau) * slope + 1.0);
    return z <= noise ? 0.0 : (z >= 1.0 - noise ? 1.0 : z);
}

/* Unit costs, sum = 1, the m items in live[] still free (the others at 0
 * in u already): the multiplier with every live item free is a lower bound
 * on tau*, so the items it puts at or below 0 are at 0 in the optimum;
 * drop them and repeat (tau only rises). Each pass drops at least one
 * item, and the rare long runs are finished by the sorted sweep. */
static double unit_simplex(int32_t m, const double *ratio, const double *slope, int32_t *live,
                           int32_t max_passes, double *u, keyed *breakpoints) {
    double tau = 0.0;
    for (int32_t passes = 0;; ++passes) {
        if (passes > max_passes) {
            tau = sweep_root(m, live, ratio, slope, NULL, 1.0, breakpoints);
            break;
        }
        double num = -1.0, den = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            num += ratio[live[k]];
            den += slope[live[k]];
        }
        tau = num / den;
        int32_t kept = 0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            if (ratio[i] - tau * slope[i] > 0.0) live[kept++] = i;
        }
        if (kept == m) break;
        m = kept;
    }
    for (int32_t k = 0; k < m; ++k) u[live[k]] = snapped(ratio[live[k]], slope[live[k]], tau);
    return tau;
}

/* Unit costs, sum = 1, at most SMALL_SIMPLEX items (OR, XOR and
 * ATMOSTONE factors of a few variables: most of coref's and mln_large's
 * solves). Item i is max(ratio_i - tau slope_i, 0), zero from tau = a_i
 * on. For any set S of items, tau_S = (sum_S ratio - 1) / (sum_S slope)
 * is at most tau*, since the sum over S alone already reaches 1 there;
 * and the items tau* leaves positive are those of largest a, a prefix in
 * that order, whose tau_S is tau*. So tau* is the largest tau_S over the
 * prefixes: no passes and no index lists. */
enum { SMALL_SIMPLEX = 4 };

static double small_unit_simplex(int32_t n, const double *a, const double *d,
                                 const double *ratio, double *u) {
    int32_t order[SMALL_SIMPLEX];
    double slope[SMALL_SIMPLEX];
    for (int32_t i = 0; i < n; ++i) {
        slope[i] = 1.0 / d[i];
        int32_t k = i;
        for (; k > 0 && a[order[k - 1]] < a[i]; --k) order[k] = order[k - 1];
        order[k] = i;
    }
    double num = -1.0, den = 0.0, tau = -INFINITY;
    for (int32_t k = 0; k < n; ++k) {
        num += ratio[order[k]];
        den += slope[order[k]];
        const double candidate = num / den;
        tau = candidate > tau ? candidate : tau;
    }
    for (int32_t i = 0; i < n; ++i) u[i] = snapped(ratio[i], slope[i], tau);
    return tau;
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
    double *ratio = box_qp_ratios(scratch, n);
    double *slope = ratio + n;
    int32_t *pool = (int32_t *)(slope + n); /* undecided items */
    int32_t *live = pool + n;               /* still free */
    if (!c && rhs == 1.0 && n <= SMALL_SIMPLEX) return small_unit_simplex(n, a, d, ratio, u);
    const int positive = s0 > rhs; /* the sign of tau* */
    int32_t max_passes = 8;
    for (int32_t k = n; k > 1; k >>= 1) max_passes += 2;
    if (!c && rhs == 1.0) {
        int32_t m = 0;
        for (int32_t i = 0; i < n; ++i) {
            u[i] = 0.0;
            if (positive && a[i] <= 0.0) continue;
            slope[i] = 1.0 / d[i];
            live[m++] = i;
        }
        return unit_simplex(m, ratio, slope, live, max_passes, u, breakpoints);
    }
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
            slope[i] = ci / d[i];
            live[n_pool] = i;
            pool[n_pool++] = i;
        }
    }
    int32_t m = n_pool, passes = 0;
    double target = pool_rhs, tau = 0.0;
    for (;;) {
        double num = -target, den = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            double ci = box_qp_cost(c, i);
            num += ci * ratio[i];
            den += ci * slope[i];
        }
        if (den <= 0.0) break;
        tau = num / den;
        double below = 0.0, above = 0.0;
        for (int32_t k = 0; k < m; ++k) {
            int32_t i = live[k];
            double ci = box_qp_cost(c, i);
            double z = ratio[i] - tau * slope[i];
            if (z < 0.0) below -= ci * z;
            else if (z > 1.0) above += ci * (z - 1.0);
        }
        if (below == above) break;
        if (++passes > max_passes) {
            tau = sweep_root(m, live, ratio, slope, c, target, breakpoints);
            break;
        }
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
    tau = refine_root(n_pool, pool, ratio, slope, c, pool_rhs, tau);
    for (int32_t k = 0; k < n_pool; ++k) {
        int32_t i = pool[k];
        u[i] = snapped(ratio[i], slope[i], tau);
    }
    return tau;
}

double box_qp_binding(int32_t n, const double *a, const double *d, const double *c, double rhs,
                      double *u, void *scratch, double s0) {
    return c ? binding(n, a, d, c, rhs, u, scratch, s0)
             : binding(n, a, d, NULL, rhs, u, scratch, s0);
}

void box_qp_face(int32_t n, const double *u, const double *c, int active, const double *w,
                 const double *x, double *du) {
    double num = 0.0, den = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        int free_item = u[i] > 0.0 && u[i] < 1.0;
        if (free_item && active) {
            double ci = box_qp_cost(c, i);
            num += ci * x[i];
            den += ci * ci / w[i];
        }
        du[i] = free_item ? x[i] : 0.0;
    }
    if (!active || den <= 0.0) return;
    double shift = num / den;
    for (int32_t i = 0; i < n; ++i)
        if (u[i] > 0.0 && u[i] < 1.0) du[i] -= box_qp_cost(c, i) / w[i] * shift;
}
