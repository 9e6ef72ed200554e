/*
 * Building the units (see units.h). The oracle is asked, with scores +1 or
 * -1 on some of a factor's links and 0 everywhere else, how many of those
 * links its configurations switch on at most and at least: a multi-variable
 * without its own XOR is one unit when some factor over all its states
 * always switches exactly one on, and an incidence is "at most one" when
 * the factor never switches on two of the unit's states.
 */
#include "units.h"

#include <stdlib.h>
#include <string.h>

#include "solver.h"

void units_free(units *u) {
    if (!u) return;
    free(u->first);
    free(u->states);
    free(u->multi);
    free(u->unit_of);
    free(u->own);
    free(u->inc_begin);
    free(u->inc_factor);
    free(u->inc_unit);
    free(u->inc_link_begin);
    free(u->inc_link);
    free(u->inc_at_most_one);
    free(u->unit_inc_begin);
    free(u->unit_inc);
    free(u);
}

void units_set_state(const units *un, int32_t w, int32_t state, double *x) {
    if (!un->multi[w]) {
        x[un->first[w]] = state ? 1.0 : 0.0;
        return;
    }
    for (int32_t k = 0; k < un->states[w]; ++k) x[un->first[w] + k] = k == state ? 1.0 : 0.0;
}

/* How many of factor f's links `links` (local indices, n of them) its
 * configurations switch on: at most (sign +1) or at least (sign -1), by one
 * oracle call with scores `sign` on those links. Returns 0 or a user
 * oracle's error. */
static int count_on(concord_solver *s, int32_t f, const int32_t *links, int32_t n,
                    const double *zeros, double sign, int32_t *count) {
    const factor *fa = &s->g->factors[f];
    for (int32_t j = 0; j < fa->degree; ++j) s->a[j] = 0.0;
    for (int32_t k = 0; k < n; ++k) s->a[links[k]] = sign;
    double value;
    int rc = solver_factor_map(s, f, s->a, zeros, s->u, s->vmap, &value);
    if (rc) return rc;
    *count = (int32_t)(sign * value + 0.5);
    return 0;
}

/* Whether factor f (one of those touching multi-variable m's first state)
 * switches exactly one of m's states on in every configuration. `links`
 * has room for the factor's degree. */
static int certifies_one_hot(concord_solver *s, int32_t f, const multi_variable *mv,
                             const double *zeros, int32_t *links, bool *yes) {
    const concord_graph *g = s->g;
    const factor *fa = &g->factors[f];
    int32_t n = 0;
    *yes = false;
    for (int32_t j = 0; j < fa->degree; ++j) {
        int32_t i = g->link_var[fa->link_begin + j];
        if (i >= mv->first && i < mv->first + mv->num_states) links[n++] = j;
    }
    if (n != mv->num_states) return 0;
    int32_t most, least;
    int rc = count_on(s, f, links, n, zeros, 1.0, &most);
    if (!rc && most == 1) rc = count_on(s, f, links, n, zeros, -1.0, &least);
    if (rc) return rc;
    *yes = most == 1 && least == 1;
    return 0;
}

/* Which multi-variables are units (their states one-hot). */
static int find_multi_units(concord_solver *s, const double *zeros, int32_t *links, bool *is_unit) {
    const concord_graph *g = s->g;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        is_unit[m] = mv->one_hot_factor >= 0;
        const int32_t i = mv->first;
        for (int32_t q = s->var_link_begin[i]; q < s->var_link_begin[i + 1] && !is_unit[m]; ++q) {
            int rc = certifies_one_hot(s, s->link_factor[s->var_links[q]], mv, zeros, links,
                                       &is_unit[m]);
            if (rc) return solver_callback_failed(s, s->link_factor[s->var_links[q]], rc);
        }
    }
    return CONCORD_OK;
}

static void *zalloc(size_t n, size_t size, bool *failed) {
    void *p = calloc(n ? n : 1, size);
    if (!p) *failed = true;
    return p;
}

/* Zero scores for the additionals of any factor of g: the oracle calls
 * below score the links alone. */
static double *zero_additionals(const concord_graph *g) {
    int32_t max_add = 1;
    for (int32_t f = 0; f < g->n_factors; ++f)
        if (g->factors[f].n_add > max_add) max_add = g->factors[f].n_add;
    return calloc((size_t)max_add, sizeof(double));
}

/* The units themselves and unit_of. */
static void place_units(const concord_graph *g, const bool *is_unit, units *un) {
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_vars; ++i) un->unit_of[i] = -1;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        if (!is_unit[m]) continue;
        const multi_variable *mv = &g->multi[m];
        un->first[n] = mv->first;
        un->states[n] = mv->num_states;
        un->multi[n] = true;
        for (int32_t k = 0; k < mv->num_states; ++k) un->unit_of[mv->first + k] = n;
        if (mv->one_hot_factor >= 0) un->own[mv->one_hot_factor] = n;
        n += 1;
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        if (un->unit_of[i] >= 0) continue;
        un->first[n] = i;
        un->states[n] = 2;
        un->multi[n] = false;
        un->unit_of[i] = n++;
    }
    un->n_units = n;
    un->max_states = 2;
    for (int32_t w = 0; w < n; ++w)
        if (un->states[w] > un->max_states) un->max_states = un->states[w];
}

/* The incidences of every factor but the units' own XORs, and their links.
 * `mark` (per unit, all -1 on entry and exit) finds a factor's units;
 * `cursor` has room for one entry per incidence. */
static void place_incidences(const concord_graph *g, units *un, int32_t *mark, int32_t *cursor) {
    int32_t k = 0, links = 0;
    un->max_factor_units = 0;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        const int32_t *var = g->link_var + fa->link_begin;
        const int32_t first = k;
        un->inc_begin[f] = k;
        if (un->own[f] >= 0) continue;
        for (int32_t j = 0; j < fa->degree; ++j) {
            int32_t w = un->unit_of[var[j]];
            if (mark[w] < 0) {
                mark[w] = k;
                un->inc_factor[k] = f;
                un->inc_unit[k] = w;
                cursor[k++] = 0;
            }
            cursor[mark[w]] += 1;
        }
        for (int32_t q = first; q < k; ++q) {
            int32_t count = cursor[q];
            un->inc_link_begin[q] = cursor[q] = links;
            links += count;
        }
        for (int32_t j = 0; j < fa->degree; ++j)
            un->inc_link[cursor[mark[un->unit_of[var[j]]]]++] = j;
        for (int32_t q = first; q < k; ++q) mark[un->inc_unit[q]] = -1;
        if (k - first > un->max_factor_units) un->max_factor_units = k - first;
    }
    un->inc_begin[g->n_factors] = k;
    un->inc_link_begin[k] = links;
    un->n_inc = k;
}

/* The incidences of each unit (a counting sort of the incidences). */
static void place_unit_incidences(units *un) {
    for (int32_t w = 0; w <= un->n_units; ++w) un->unit_inc_begin[w] = 0;
    for (int32_t k = 0; k < un->n_inc; ++k) un->unit_inc_begin[un->inc_unit[k] + 1] += 1;
    for (int32_t w = 0; w < un->n_units; ++w) un->unit_inc_begin[w + 1] += un->unit_inc_begin[w];
    for (int32_t k = 0; k < un->n_inc; ++k) {
        int32_t w = un->inc_unit[k];
        un->unit_inc[un->unit_inc_begin[w]++] = k;
    }
    for (int32_t w = un->n_units; w > 0; --w) un->unit_inc_begin[w] = un->unit_inc_begin[w - 1];
    un->unit_inc_begin[0] = 0;
}

int units_build(concord_solver *s) {
    if (s->units) return CONCORD_OK;
    const concord_graph *g = s->g;
    const size_t nv = (size_t)g->n_vars, nf = (size_t)g->n_factors, nl = (size_t)g->n_links;
    bool failed = false;
    units *un = zalloc(1, sizeof *un, &failed);
    if (!un) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    un->first = zalloc(nv, sizeof(int32_t), &failed);
    un->states = zalloc(nv, sizeof(int32_t), &failed);
    un->multi = zalloc(nv, sizeof(bool), &failed);
    un->unit_of = zalloc(nv, sizeof(int32_t), &failed);
    un->own = zalloc(nf, sizeof(int32_t), &failed);
    un->inc_begin = zalloc(nf + 1, sizeof(int32_t), &failed);
    un->inc_factor = zalloc(nl, sizeof(int32_t), &failed);
    un->inc_unit = zalloc(nl, sizeof(int32_t), &failed);
    un->inc_link_begin = zalloc(nl + 1, sizeof(int32_t), &failed);
    un->inc_link = zalloc(nl, sizeof(int32_t), &failed);
    un->inc_at_most_one = zalloc(nl, sizeof(bool), &failed);
    un->unit_inc_begin = zalloc(nv + 1, sizeof(int32_t), &failed);
    un->unit_inc = zalloc(nl, sizeof(int32_t), &failed);
    double *zeros = zero_additionals(g);
    if (!zeros) failed = true;
    int32_t *scratch = zalloc(nl > nv ? nl : nv, sizeof(int32_t), &failed);
    int32_t *mark = zalloc(nv, sizeof(int32_t), &failed);
    bool *is_unit = zalloc((size_t)g->n_multi, sizeof(bool), &failed);
    int rc = failed ? solver_fail(s, CONCORD_ENOMEM, "out of memory") : CONCORD_OK;
    if (!rc) rc = find_multi_units(s, zeros, scratch, is_unit);
    if (!rc) {
        for (int32_t f = 0; f < g->n_factors; ++f) un->own[f] = -1;
        place_units(g, is_unit, un);
        for (int32_t w = 0; w < un->n_units; ++w) mark[w] = -1;
        place_incidences(g, un, mark, scratch);
        place_unit_incidences(un);
    }
    free(zeros);
    free(scratch);
    free(mark);
    free(is_unit);
    if (rc) units_free(un);
    else s->units = un;
    return rc;
}

int units_classify(concord_solver *s) {
    units *un = s->units;
    if (un->classified) return CONCORD_OK;
    double *zeros = zero_additionals(s->g);
    if (!zeros) return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    int rc = CONCORD_OK;
    for (int32_t k = 0; k < un->n_inc && !rc; ++k) {
        un->inc_at_most_one[k] = true;
        if (!un->multi[un->inc_unit[k]]) continue;
        const int32_t begin = un->inc_link_begin[k], n = un->inc_link_begin[k + 1] - begin;
        if (n == 1) continue;
        int32_t most;
        rc = count_on(s, un->inc_factor[k], un->inc_link + begin, n, zeros, 1.0, &most);
        if (rc) rc = solver_callback_failed(s, un->inc_factor[k], rc);
        else un->inc_at_most_one[k] = most <= 1;
    }
    free(zeros);
    un->classified = !rc;
    return rc;
}
