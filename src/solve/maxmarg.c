/*
 * A factor's max-marginals over units by its MAP oracle (see maxmarg.h).
 */
#include "maxmarg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

static void *zalloc(size_t n, size_t size, bool *failed) {
    void *q = calloc(n ? n : 1, size);
    if (!q) *failed = true;
    return q;
}

int maxmarg_init(maxmarg *m, concord_solver *s, const int32_t *msg_begin) {
    const units *un = s->units;
    const concord_graph *g = s->g;
    const size_t mf = (size_t)un->max_factor_units;
    bool failed = false;
    memset(m, 0, sizeof *m);
    m->s = s;
    m->un = un;
    m->phi = solver_phi(s);
    m->msg_begin = msg_begin;
    m->enumerated = zalloc((size_t)un->n_inc, sizeof(bool), &failed);
    m->lin = zalloc((size_t)s->max_degree, sizeof(double), &failed);
    m->pattern = zalloc(mf, sizeof(int32_t), &failed);
    m->radix = zalloc(mf, sizeof(int32_t), &failed);
    m->chosen = zalloc(mf, sizeof(int32_t), &failed);
    m->best = zalloc(mf, sizeof(int32_t), &failed);
    m->touched = zalloc((size_t)un->max_states, sizeof(bool), &failed);
    if (failed) {
        maxmarg_free(m);
        return CONCORD_ENOMEM;
    }
    for (int32_t k = 0; k < un->n_inc; ++k)
        m->enumerated[k] = !un->inc_at_most_one[k] ||
                           g->factors[un->inc_factor[k]].ops->fractional_vertices;
    return CONCORD_OK;
}

void maxmarg_free(maxmarg *m) {
    free(m->enumerated);
    free(m->lin);
    free(m->pattern);
    free(m->radix);
    free(m->chosen);
    free(m->best);
    free(m->touched);
    memset(m, 0, sizeof *m);
}

static int32_t links_of(const units *un, int32_t k) {
    return un->inc_link_begin[k + 1] - un->inc_link_begin[k];
}

static bool covers_all(const units *un, int32_t k) {
    return links_of(un, k) == un->states[un->inc_unit[k]];
}

/* Distinct pushes of incidence k's unit: one per link, plus "none of
 * them" unless the links cover every state. */
static int32_t patterns_of(const units *un, int32_t k) {
    return links_of(un, k) + !covers_all(un, k);
}

static bool enumerated(const maxmarg *m, int32_t k, int32_t target) {
    return k == target || m->enumerated[k];
}

int64_t maxmarg_calls(const maxmarg *m, int32_t f, int32_t target) {
    int64_t calls = 1;
    for (int32_t k = m->un->inc_begin[f]; k < m->un->inc_begin[f + 1]; ++k)
        if (enumerated(m, k, target)) {
            calls *= patterns_of(m->un, k);
            if (calls > MAXMARG_MAX_CALLS) return calls;
        }
    return calls;
}

/* The variables of factor f's links. */
static const int32_t *link_vars(const maxmarg *m, int32_t f) {
    const concord_graph *g = m->s->g;
    return g->link_var + g->factors[f].link_begin;
}

/* Marks the states of incidence k's unit that its factor touches. */
static void mark_touched(maxmarg *m, int32_t k, bool value) {
    const units *un = m->un;
    const int32_t w = un->inc_unit[k];
    const int32_t *var = link_vars(m, un->inc_factor[k]);
    for (int32_t q = un->inc_link_begin[k]; q < un->inc_link_begin[k + 1]; ++q)
        m->touched[units_link_state(un, w, var[un->inc_link[q]])] = value;
}

/* The best of message x of incidence k's unit over the states its factor
 * does not touch, and that state (-INFINITY and 0 when it touches all). */
static double best_untouched(maxmarg *m, int32_t k, const double *x, int32_t *arg) {
    const int32_t w = m->un->inc_unit[k];
    double best = -INFINITY;
    *arg = -1;
    mark_touched(m, k, true);
    for (int32_t t = 0; t < m->un->states[w]; ++t)
        if (!m->touched[t] && (*arg < 0 || x[t] > best)) best = x[t], *arg = t;
    mark_touched(m, k, false);
    if (*arg < 0) *arg = 0;
    return best;
}

static double finite_or_big(const maxmarg *m, double x) { return x == -INFINITY ? -m->big : x; }

/* -big for the factor's messages, then the linear scores of its
 * incidences that are not enumerated (into m->lin, by local link); returns
 * the push that dominates them and the factor's additional scores. */
static double linear_scores(maxmarg *m, int32_t f, int32_t target, const double *in) {
    const units *un = m->un;
    const factor *fa = &m->s->g->factors[f];
    const int32_t *var = link_vars(m, f);
    const double *phi = m->phi + fa->add_begin;
    double sum = 0.0;
    for (int32_t k = 0; k < fa->n_add; ++k) sum += fabs(phi[k]);
    double reach = sum; /* what finite messages and scores can add up to */
    for (int32_t k = un->inc_begin[f]; k < un->inc_begin[f + 1]; ++k) {
        if (k == target) continue;
        const double *x = in + m->msg_begin[k];
        double top = 0.0;
        for (int32_t t = 0; t < un->states[un->inc_unit[k]]; ++t)
            if (isfinite(x[t])) top = fmax(top, fabs(x[t]));
        reach += top;
    }
    m->big = 4.0 * (reach > 0.0 ? reach : 1.0); /* relative, see outweighing */
    double *lin = m->lin;
    for (int32_t j = 0; j < fa->degree; ++j) lin[j] = 0.0;
    for (int32_t k = un->inc_begin[f]; k < un->inc_begin[f + 1]; ++k) {
        if (enumerated(m, k, target)) continue;
        const int32_t w = un->inc_unit[k];
        const double *x = in + m->msg_begin[k];
        int32_t arg;
        /* "none of the touched states on" stands for the best untouched one */
        double none = !un->multi[w]     ? x[0]
                      : covers_all(un, k) ? 0.0
                                          : best_untouched(m, k, x, &arg);
        none = finite_or_big(m, none);
        for (int32_t q = un->inc_link_begin[k]; q < un->inc_link_begin[k + 1]; ++q) {
            const int32_t j = un->inc_link[q];
            lin[j] = finite_or_big(m, x[units_link_state(un, w, var[j])]) - none;
            sum += fabs(lin[j]);
        }
    }
    /* a multi-variable whose states f all touches must have one of them on */
    const double cover = outweighing(sum);
    for (int32_t k = un->inc_begin[f]; k < un->inc_begin[f + 1]; ++k) {
        if (enumerated(m, k, target) || !un->multi[un->inc_unit[k]] || !covers_all(un, k))
            continue;
        for (int32_t q = un->inc_link_begin[k]; q < un->inc_link_begin[k + 1]; ++q) {
            lin[un->inc_link[q]] += cover;
            sum += cover;
        }
    }
    return outweighing(sum);
}

/* The state of incidence k's unit that a pattern stands for: a link's
 * state, or for "none of the touched states" the best untouched one under
 * message x. */
static int32_t pattern_state(maxmarg *m, int32_t k, int32_t pattern, const double *x) {
    const units *un = m->un;
    const int32_t w = un->inc_unit[k];
    if (pattern < links_of(un, k)) {
        const int32_t j = un->inc_link[un->inc_link_begin[k] + pattern];
        return units_link_state(un, w, link_vars(m, un->inc_factor[k])[j]);
    }
    if (!un->multi[w]) return 0;
    int32_t arg;
    best_untouched(m, k, x, &arg);
    return arg;
}

/* The state the configuration u (the factor's link values) selects for the
 * unit of linear incidence k, or -1 when it selects none that is possible
 * (two states on, or none when the factor touches them all). */
static int32_t selected_state(maxmarg *m, int32_t k, const double *u, const double *x) {
    const units *un = m->un;
    const int32_t w = un->inc_unit[k];
    const int32_t *var = link_vars(m, un->inc_factor[k]);
    int32_t state = -1, on = 0;
    for (int32_t q = un->inc_link_begin[k]; q < un->inc_link_begin[k + 1]; ++q) {
        const int32_t j = un->inc_link[q];
        if (u[j] > 0.5) on += 1, state = units_link_state(un, w, var[j]);
    }
    if (on > 1) return -1;
    if (on == 1) return state;
    if (!un->multi[w]) return 0;
    if (covers_all(un, k)) return -1;
    int32_t arg;
    best_untouched(m, k, x, &arg);
    return arg;
}

/* Factor f's best configuration with its enumerated incidences at the
 * patterns m->pattern[] (by position among f's incidences) and the others
 * scored by m->lin, the push `push` dominating them: its value (the
 * messages of the units other than the target at the states it selects,
 * plus phi_f . v; -INFINITY when no allowed configuration fits) and those
 * states in m->chosen[]. Returns 0 or a user oracle's error. */
static int best_configuration(maxmarg *m, int32_t f, int32_t target, double push,
                              const double *in, double *value) {
    concord_solver *s = m->s;
    const units *un = m->un;
    const factor *fa = &s->g->factors[f];
    const int32_t first = un->inc_begin[f];
    for (int32_t j = 0; j < fa->degree; ++j) s->a[j] = m->lin[j];
    for (int32_t k = first; k < un->inc_begin[f + 1]; ++k) {
        if (!enumerated(m, k, target)) continue;
        for (int32_t q = 0; q < links_of(un, k); ++q)
            s->a[un->inc_link[un->inc_link_begin[k] + q]] =
                q == m->pattern[k - first] ? push : -push;
    }
    double best;
    const double *phi = m->phi + fa->add_begin;
    int rc = solver_factor_map(s, f, s->a, phi, s->u, s->vmap, &best);
    if (rc) return rc;
    double sum = 0.0;
    for (int32_t k = first; k < un->inc_begin[f + 1]; ++k) {
        const double *x = in + m->msg_begin[k];
        int32_t state;
        if (enumerated(m, k, target)) {
            for (int32_t q = 0; q < links_of(un, k); ++q)
                if (s->u[un->inc_link[un->inc_link_begin[k] + q]] != (q == m->pattern[k - first])) {
                    *value = -INFINITY;
                    return 0;
                }
            /* the target's state is given, its message not part of the value */
            state = k == target ? -1 : pattern_state(m, k, m->pattern[k - first], x);
        } else {
            state = selected_state(m, k, s->u, x);
            if (state < 0) {
                *value = -INFINITY;
                return 0;
            }
        }
        if (state >= 0) sum += x[state];
        m->chosen[k - first] = state;
    }
    for (int32_t k = 0; k < fa->n_add; ++k) sum += phi[k] * s->vmap[k];
    *value = sum;
    return 0;
}

/* The best over the patterns of f's enumerated incidences other than the
 * target (whose pattern m->pattern[] holds); the states of the best to
 * m->best[]. */
static int best_over_others(maxmarg *m, int32_t f, int32_t target, double push,
                            const double *in, double *value) {
    const units *un = m->un;
    const int32_t first = un->inc_begin[f], n = un->inc_begin[f + 1] - first;
    for (int32_t q = 0; q < n; ++q) {
        const int32_t k = first + q;
        m->radix[q] = enumerated(m, k, target) && k != target ? patterns_of(un, k) : 1;
        if (k != target) m->pattern[q] = 0;
    }
    *value = -INFINITY;
    for (;;) {
        double v;
        int rc = best_configuration(m, f, target, push, in, &v);
        if (rc) return rc;
        if (v > *value) {
            *value = v;
            memcpy(m->best, m->chosen, (size_t)n * sizeof(int32_t));
        }
        int32_t q = n - 1;
        for (; q >= 0; --q) {
            if (m->radix[q] == 1) continue;
            if (++m->pattern[q] < m->radix[q]) break;
            m->pattern[q] = 0;
        }
        if (q < 0) return 0;
    }
}

int maxmarg_message(maxmarg *m, int32_t f, int32_t target, const double *in, double *out) {
    const units *un = m->un;
    const int32_t w = un->inc_unit[target], links = links_of(un, target);
    const int32_t *var = link_vars(m, f);
    const double push = linear_scores(m, f, target, in);
    double none = -INFINITY;
    for (int32_t t = 0; t < un->states[w]; ++t) out[t] = -INFINITY;
    for (int32_t pat = 0; pat < patterns_of(un, target); ++pat) {
        m->pattern[target - un->inc_begin[f]] = pat;
        double value;
        int rc = best_over_others(m, f, target, push, in, &value);
        if (rc) return rc;
        if (pat < links)
            out[units_link_state(un, w, var[un->inc_link[un->inc_link_begin[target] + pat]])] =
                value;
        else
            none = value;
    }
    if (!covers_all(un, target)) {
        mark_touched(m, target, true);
        for (int32_t t = 0; t < un->states[w]; ++t)
            if (!m->touched[t]) out[t] = none;
        mark_touched(m, target, false);
    }
    return 0;
}

int maxmarg_decide(maxmarg *m, int32_t f, int32_t target, int32_t state, const double *in,
                   double *value) {
    const units *un = m->un;
    if (target >= 0) {
        const int32_t w = un->inc_unit[target], links = links_of(un, target);
        const int32_t *var = link_vars(m, f);
        int32_t pat = links;
        for (int32_t q = 0; q < links; ++q)
            if (units_link_state(un, w, var[un->inc_link[un->inc_link_begin[target] + q]]) == state)
                pat = q;
        m->pattern[target - un->inc_begin[f]] = pat;
    }
    return best_over_others(m, f, target, linear_scores(m, f, target, in), in, value);
}
