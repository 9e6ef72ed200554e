/*
 * Decoding: from the last LP solution to an integral assignment with its
 * value. An integral LP solution is already a MAP assignment. Otherwise two
 * starts are each refined by a local search, and the better is kept: the
 * rounded posteriors, and sequential fixing, where the "units"
 * (multi-variables, and variables in none) are fixed one at a time, most
 * confident first (largest posterior): each takes the state whose factors,
 * completed at their best over the still undecided variables under the
 * dual-reparametrized scores theta/deg + lambda of the final ADMM iterate,
 * violate the fewest constraints and then score highest. The local search
 * (iterated conditional modes) moves each unit in turn to the state that
 * violates fewer factors, then scores higher; when no single move helps and
 * factors are still violated, it mends them by chains of moves (see
 * mend); it stops when neither helps or after MAX_PASSES passes. Factors
 * are queried through their MAP oracles, so hard constraints of every
 * factor type are respected where the search can satisfy them, and
 * additional outputs take their best values. Each unit asks its factors'
 * oracles once per state, so a pass costs about the sum over factors of
 * their degree squared: under a deadline (the exact search's time limit)
 * the fixing and the search stop where it passes, with the assignment
 * they reached.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver.h"

enum { MAX_PASSES = 100 };
/* A chain of moves that mends a violated factor is at most MAX_CHAIN moves
 * long, and one mending pass looks at most at MENDING_FLOOR links plus
 * MENDING_BUDGET times the graph's links (each move re-evaluates the
 * factors of the unit moved): about three passes of the local search on a
 * large graph, and on a small one room for every chain. */
enum { MAX_CHAIN = 6, MENDING_BUDGET = 8, MENDING_FLOOR = 1 << 16 };

typedef struct decoder {
    const concord_graph *g;
    concord_solver *w;
    const double *theta, *phi; /* the solver's scores */
    int error;                 /* a callback's error, in error_factor (sticky) */
    int32_t error_factor;
    double *x;          /* the assignment (n_vars) */
    uint8_t *decided;   /* per variable: fixed by sequential fixing */
    double *fscore;     /* per factor: its additional score at x */
    uint8_t *fok;       /* per factor: x is allowed */
    int32_t *unit_of;   /* per variable: its multi-variable, or -1 */
    int32_t *stamp;     /* per factor: the listing that last included it */
    int32_t listing;    /* counts list_factors calls */
    int32_t *touching;  /* factors of the current unit */
    uint8_t *trial_ok, *best_ok; /* per touching factor: allowed at a trial state, */
    double *trial_score, *best_score; /* and its score (the best state's kept) */
    solver_deadline *deadline; /* NULL: none */
    bool mend; /* the local search mends violated factors by chains of moves */
    int32_t max_degree;
    int32_t *chain_units; /* per level of a mending chain: the units of its factor, */
    int32_t chain_moved[MAX_CHAIN]; /* and the unit it moved */
    int64_t mending_work; /* links evaluated in this mending pass */
} decoder;

static void decoder_free(decoder *dc) {
    free(dc->fscore);
    free(dc->fok);
    free(dc->unit_of);
    free(dc->stamp);
    free(dc->touching);
    free(dc->decided);
    free(dc->trial_ok);
    free(dc->best_ok);
    free(dc->trial_score);
    free(dc->best_score);
    free(dc->chain_units);
}

static int decoder_init(decoder *dc, concord_solver *w) {
    const concord_graph *g = w->g;
    memset(dc, 0, sizeof *dc);
    dc->g = g;
    dc->w = w;
    dc->theta = solver_theta(w);
    dc->phi = solver_phi(w);
    size_t nf = (size_t)(g->n_factors ? g->n_factors : 1), nv = (size_t)(g->n_vars ? g->n_vars : 1);
    dc->fscore = malloc(nf * sizeof(double));
    dc->fok = malloc(nf);
    dc->stamp = malloc(nf * sizeof(int32_t));
    dc->touching = malloc(nf * sizeof(int32_t));
    dc->unit_of = malloc(nv * sizeof(int32_t));
    dc->decided = calloc(nv, 1);
    dc->trial_ok = malloc(nf);
    dc->best_ok = malloc(nf);
    dc->trial_score = malloc(nf * sizeof(double));
    dc->best_score = malloc(nf * sizeof(double));
    for (int32_t f = 0; f < g->n_factors; ++f)
        if (g->factors[f].degree > dc->max_degree) dc->max_degree = g->factors[f].degree;
    dc->chain_units = malloc((size_t)MAX_CHAIN * (size_t)(dc->max_degree ? dc->max_degree : 1) *
                             sizeof(int32_t));
    if (!dc->fscore || !dc->fok || !dc->stamp || !dc->touching || !dc->unit_of || !dc->decided ||
        !dc->trial_ok || !dc->best_ok || !dc->trial_score || !dc->best_score ||
        !dc->chain_units) {
        decoder_free(dc);
        return CONCORD_ENOMEM;
    }
    for (int32_t f = 0; f < g->n_factors; ++f) dc->stamp[f] = -1;
    for (int32_t i = 0; i < g->n_vars; ++i) dc->unit_of[i] = -1;
    for (int32_t m = 0; m < g->n_multi; ++m)
        for (int32_t k = 0; k < g->multi[m].num_states; ++k) dc->unit_of[g->multi[m].first + k] = m;
    return CONCORD_OK;
}

/* A callback's failure is kept for the end of the decoding (the factor
 * then counts as violated, which keeps the search going harmlessly). */
static void note_failure(decoder *dc, int rc, int32_t f) {
    if (rc && !dc->error) {
        dc->error = rc;
        dc->error_factor = f;
    }
}

/* Whether factor f allows x (*ok) and its score there (*score, 0 when
 * not allowed). */
static void evaluate_at(decoder *dc, int32_t f, uint8_t *ok, double *score) {
    double value = 0.0;
    bool allowed = false;
    int rc = solver_factor_at(dc->w, dc->phi, f, dc->x, &allowed, &value, NULL);
    note_failure(dc, rc, f);
    *ok = !rc && allowed;
    *score = *ok ? value : 0.0;
}

/* Factor f's verdict at x into the cache, fok and fscore. */
static void evaluate(decoder *dc, int32_t f) { evaluate_at(dc, f, &dc->fok[f], &dc->fscore[f]); }

/* Whether the deadline passed, counting `links` more links handled. */
static bool out_of_time(decoder *dc, int64_t links) {
    return dc->deadline && solver_deadline_passed(dc->deadline, links);
}

/* The unit's variables: a multi-variable's states, or one free variable
 * (unit ids >= n_multi stand for variable id - n_multi). */
static void unit_vars(const decoder *dc, int32_t unit, int32_t *first, int32_t *count) {
    if (unit < dc->g->n_multi) {
        *first = dc->g->multi[unit].first;
        *count = dc->g->multi[unit].num_states;
    } else {
        *first = unit - dc->g->n_multi;
        *count = 1;
    }
}

/* How many states the unit takes: a multi-variable's, or 0 and 1. */
static int32_t unit_states(const decoder *dc, int32_t unit) {
    return unit < dc->g->n_multi ? dc->g->multi[unit].num_states : 2;
}

/* Lists the factors touching the unit, their links counted in *links;
 * returns how many. A multi-variable's own one-hot factor is left out:
 * every state the decoder tries satisfies it, and evaluating it for each
 * of k states would cost O(k^2). */
static int32_t list_factors(decoder *dc, int32_t unit, int32_t first, int32_t count,
                            int64_t *links) {
    const concord_solver *w = dc->w;
    int32_t n = 0;
    if (++dc->listing == INT32_MAX) {
        dc->listing = 0;
        for (int32_t f = 0; f < dc->g->n_factors; ++f) dc->stamp[f] = -1;
    }
    int32_t own = unit < dc->g->n_multi ? dc->g->multi[unit].one_hot_factor : -1;
    *links = 0;
    for (int32_t i = first; i < first + count; ++i)
        for (int32_t k = w->var_link_begin[i]; k < w->var_link_begin[i + 1]; ++k) {
            int32_t f = w->link_factor[w->var_links[k]];
            if (f != own && dc->stamp[f] != dc->listing) {
                dc->stamp[f] = dc->listing;
                dc->touching[n++] = f;
                *links += dc->g->factors[f].degree;
            }
        }
    return n;
}

/* Puts the unit in state s (a multi-variable's state index, or 0/1). */
static void set_state(decoder *dc, int32_t unit, int32_t first, int32_t count, int32_t s) {
    if (unit < dc->g->n_multi) {
        for (int32_t k = 0; k < count; ++k) dc->x[first + k] = k == s ? 1.0 : 0.0;
    } else {
        dc->x[first] = (double)s;
    }
}

static int32_t get_state(const decoder *dc, int32_t unit, int32_t first, int32_t count) {
    if (unit >= dc->g->n_multi) return dc->x[first] > 0.5;
    for (int32_t k = 0; k < count; ++k)
        if (dc->x[first + k] > 0.5) return k;
    return 0;
}

/* Violations and score of the unit's variables and its n factors at x: the
 * factors' verdicts from the cache (cached), or evaluated again into
 * ok and score (per touching factor). */
static void local_value(decoder *dc, int32_t n, int32_t first, int32_t count, bool cached,
                        uint8_t *ok, double *score, int32_t *violated, double *value) {
    *violated = 0;
    *value = 0.0;
    for (int32_t i = first; i < first + count; ++i) *value += dc->theta[i] * dc->x[i];
    for (int32_t t = 0; t < n; ++t) {
        const int32_t f = dc->touching[t];
        if (!cached) evaluate_at(dc, f, &ok[t], &score[t]);
        const bool allowed = cached ? dc->fok[f] : ok[t];
        if (allowed) *value += cached ? dc->fscore[f] : score[t];
        else *violated += 1;
    }
}

/* The verdicts of the last trial become the best state's (the buffers
 * swap: the next trial overwrites the former best's). */
static void keep_trial_as_best(decoder *dc) {
    uint8_t *ok = dc->trial_ok;
    double *score = dc->trial_score;
    dc->trial_ok = dc->best_ok;
    dc->trial_score = dc->best_score;
    dc->best_ok = ok;
    dc->best_score = score;
}

/* One pass of the local search; returns whether anything moved. The
 * cache holds every factor's verdict at x: a unit's current state reads
 * it, each other state is evaluated, and the best state's verdicts replace
 * the cached ones when the unit moves. */
static bool improve(decoder *dc) {
    bool moved = false;
    int32_t units = dc->g->n_multi + dc->g->n_vars;
    for (int32_t unit = 0; unit < units; ++unit) {
        if (unit >= dc->g->n_multi && dc->unit_of[unit - dc->g->n_multi] >= 0) continue;
        int32_t first, count;
        int64_t links;
        unit_vars(dc, unit, &first, &count);
        int32_t n = list_factors(dc, unit, first, count, &links);
        int32_t states = unit_states(dc, unit);
        if (out_of_time(dc, links * (states - 1))) break;
        int32_t current = get_state(dc, unit, first, count), best = current;
        int32_t best_violated;
        double best_value;
        local_value(dc, n, first, count, true, NULL, NULL, &best_violated, &best_value);
        for (int32_t s = 0; s < states; ++s) {
            if (s == current) continue;
            set_state(dc, unit, first, count, s);
            int32_t violated;
            double value;
            local_value(dc, n, first, count, false, dc->trial_ok, dc->trial_score, &violated,
                        &value);
            if (violated < best_violated ||
                (violated == best_violated &&
                 value > best_value + 1e-12 * (1.0 + fabs(best_value)))) {
                best = s;
                best_violated = violated;
                best_value = value;
                keep_trial_as_best(dc);
            }
        }
        set_state(dc, unit, first, count, best);
        if (best != current) {
            for (int32_t t = 0; t < n; ++t) {
                dc->fok[dc->touching[t]] = dc->best_ok[t];
                dc->fscore[dc->touching[t]] = dc->best_score[t];
            }
            moved = true;
        }
    }
    return moved;
}

/* The unit variable i belongs to. */
static int32_t unit_of_variable(const decoder *dc, int32_t i) {
    return dc->unit_of[i] >= 0 ? dc->unit_of[i] : dc->g->n_multi + i;
}

/* Puts the unit in state s and its factors' verdicts at the new x into the
 * cache; returns how many more factors are violated than before. */
static int32_t move_unit(decoder *dc, int32_t unit, int32_t s) {
    int32_t first, count;
    int64_t links;
    unit_vars(dc, unit, &first, &count);
    const int32_t n = list_factors(dc, unit, first, count, &links);
    dc->mending_work += links;
    out_of_time(dc, links);
    set_state(dc, unit, first, count, s);
    int32_t change = 0;
    for (int32_t t = 0; t < n; ++t) {
        const int32_t f = dc->touching[t];
        const bool was_ok = dc->fok[f];
        evaluate(dc, f);
        change += (int32_t)was_ok - (int32_t)dc->fok[f];
    }
    return change;
}

/* Whether this mending pass has spent its budget, or the deadline passed
 * (move_unit counts the work towards it). */
static bool mending_spent(decoder *dc) {
    return dc->mending_work > MENDING_FLOOR + (int64_t)MENDING_BUDGET * dc->g->n_links ||
           out_of_time(dc, 0);
}

/* Whether the unit was moved earlier in the current chain. */
static bool in_chain(const decoder *dc, int32_t unit, int32_t level) {
    for (int32_t k = 0; k < level; ++k)
        if (dc->chain_moved[k] == unit) return true;
    return false;
}

/* A factor the chain's moves (levels 0..level) left violated, or -1. */
static int32_t broken_by_chain(decoder *dc, int32_t level) {
    for (int32_t k = level; k >= 0; --k) {
        int32_t first, count;
        int64_t links;
        unit_vars(dc, dc->chain_moved[k], &first, &count);
        const int32_t n = list_factors(dc, dc->chain_moved[k], first, count, &links);
        for (int32_t t = 0; t < n; ++t)
            if (!dc->fok[dc->touching[t]]) return dc->touching[t];
    }
    return -1;
}

/* Mends violated factor f by a chain of at most `depth` more moves: a unit
 * of f moves, and while the chain has not reduced the number of violated
 * factors, a unit of a factor it left violated moves next; `change` is the
 * chain's change in violated factors so far, `level` its moves so far. A
 * chain is kept as soon as fewer factors are violated than before it
 * began, else its moves are undone. Where no single move helps (ICM is
 * stuck), constraints need several moves at once: on AD3's srl graphs an
 * XOR of two variables both on, each held by another XOR; on mln_large an
 * OR whose variables feed several OR-with-output factors. Returns whether
 * a chain was kept. */
static bool mend(decoder *dc, int32_t f, int32_t depth, int32_t change, int32_t level) {
    const concord_graph *g = dc->g;
    const factor *fa = &g->factors[f];
    int32_t *units = dc->chain_units + (size_t)level * (size_t)dc->max_degree;
    int32_t n_units = 0;
    for (int32_t j = 0; j < fa->degree; ++j) {
        const int32_t unit = unit_of_variable(dc, g->link_var[fa->link_begin + j]);
        /* a multi-variable's states usually sit side by side in a factor */
        if (!in_chain(dc, unit, level) && (n_units == 0 || units[n_units - 1] != unit))
            units[n_units++] = unit;
    }
    for (int32_t k = 0; k < n_units; ++k) {
        const int32_t unit = units[k];
        int32_t first, count;
        unit_vars(dc, unit, &first, &count);
        const int32_t old = get_state(dc, unit, first, count);
        const int32_t states = unit_states(dc, unit);
        for (int32_t s = 0; s < states; ++s) {
            if (s == old) continue;
            if (mending_spent(dc)) return false;
            const int32_t now = change + move_unit(dc, unit, s);
            if (now < 0) return true;
            /* each later move mends about one factor: follow the chain
             * only while the moves left can bring it below zero */
            if (depth > 1 && now <= depth - 2) {
                dc->chain_moved[level] = unit;
                const int32_t broken = broken_by_chain(dc, level);
                if (broken >= 0 && mend(dc, broken, depth - 1, now, level + 1)) return true;
            }
            move_unit(dc, unit, old);
        }
    }
    return false;
}

/* One mending pass: tries to mend each violated factor in turn by one
 * move, then by chains of two moves, and so on; returns whether one was
 * mended. Short chains first: they change the least of an assignment the
 * local search has already made good. */
static bool mend_violations(decoder *dc) {
    dc->mending_work = 0;
    for (int32_t depth = 1; depth <= MAX_CHAIN; ++depth)
        for (int32_t f = 0; f < dc->g->n_factors; ++f)
            if (!dc->fok[f] && mend(dc, f, depth, 0, 0)) return true;
    return false;
}

/* Factor f's best score with the decided variables held at x, the others
 * free and scored theta/deg + lambda: returns whether a configuration
 * agrees with x on the decided links, and its score over the free links
 * and the additional outputs in *score. */
static bool best_completion(decoder *dc, int32_t f, double *score) {
    const concord_graph *g = dc->g;
    concord_solver *w = dc->w;
    const factor *fa = &g->factors[f];
    for (int32_t j = 0; j < fa->degree; ++j) {
        int32_t l = fa->link_begin + j, i = g->link_var[l];
        w->held[j] = dc->decided[i] ? dc->x[i] > 0.5 : -1;
        w->a[j] = dc->decided[i] ? 0.0 : dc->theta[i] * w->inv_deg[i] + w->lambda[l];
    }
    int rc = solver_factor_map_held(w, f, w->a, w->held, dc->phi + fa->add_begin, w->u, w->vmap,
                                    score);
    note_failure(dc, rc, f);
    return !rc && *score > -INFINITY;
}

static double confidence(const decoder *dc, int32_t unit) {
    int32_t first, count;
    unit_vars(dc, unit, &first, &count);
    const double *u = dc->w->sol_u;
    if (unit >= dc->g->n_multi) return fabs(u[first] - 0.5);
    double best = 0.0;
    for (int32_t k = 0; k < count; ++k)
        if (u[first + k] > best) best = u[first + k];
    return best;
}

typedef struct ranked_unit {
    double confidence;
    int32_t unit;
} ranked_unit;

static int by_confidence(const void *x, const void *y) {
    const ranked_unit *a = x, *b = y;
    if (a->confidence != b->confidence) return a->confidence > b->confidence ? -1 : 1;
    return (a->unit > b->unit) - (a->unit < b->unit);
}

/* Fixes the units one at a time, most confident first. */
static int sequential_fixing(decoder *dc) {
    const concord_graph *g = dc->g;
    int32_t units = 0, total = g->n_multi + g->n_vars;
    ranked_unit *order = malloc((size_t)(total ? total : 1) * sizeof *order);
    if (!order) return CONCORD_ENOMEM;
    for (int32_t unit = 0; unit < total; ++unit) {
        if (unit >= g->n_multi && dc->unit_of[unit - g->n_multi] >= 0) continue;
        order[units++] = (ranked_unit){confidence(dc, unit), unit};
    }
    qsort(order, (size_t)units, sizeof *order, by_confidence);
    for (int32_t r = 0; r < units; ++r) {
        int32_t unit = order[r].unit, first, count;
        int64_t links;
        unit_vars(dc, unit, &first, &count);
        int32_t n = list_factors(dc, unit, first, count, &links);
        int32_t states = unit_states(dc, unit);
        if (out_of_time(dc, links * states)) break;
        int32_t best = get_state(dc, unit, first, count), best_violated = INT32_MAX;
        double best_value = -INFINITY;
        for (int32_t i = first; i < first + count; ++i) dc->decided[i] = 1;
        for (int32_t st = 0; st < states; ++st) {
            set_state(dc, unit, first, count, st);
            int32_t violated = 0;
            double value = 0.0;
            for (int32_t i = first; i < first + count; ++i) value += dc->theta[i] * dc->x[i];
            for (int32_t t = 0; t < n; ++t) {
                double score;
                if (best_completion(dc, dc->touching[t], &score)) value += score;
                else violated += 1;
            }
            if (violated < best_violated ||
                (violated == best_violated && value > best_value)) {
                best = st;
                best_violated = violated;
                best_value = value;
            }
        }
        set_state(dc, unit, first, count, best);
    }
    free(order);
    return CONCORD_OK;
}

static void summarize(const decoder *dc, concord_decoding *out) {
    const concord_graph *g = dc->g;
    double value = 0.0;
    int32_t violated = 0;
    for (int32_t i = 0; i < g->n_vars; ++i) value += dc->theta[i] * dc->x[i];
    for (int32_t f = 0; f < g->n_factors; ++f) {
        if (dc->fok[f]) value += dc->fscore[f];
        else violated += 1;
    }
    out->violated = violated;
    out->value = violated ? -INFINITY : value;
}

/* Max-posterior state of each multi-variable; other variables at 1/2. */
static void round_posteriors(decoder *dc) {
    const concord_graph *g = dc->g;
    const double *sol_u = dc->w->sol_u;
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (dc->unit_of[i] < 0) dc->x[i] = sol_u[i] >= 0.5 ? 1.0 : 0.0;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        int32_t best = 0;
        for (int32_t k = 1; k < mv->num_states; ++k)
            if (sol_u[mv->first + k] > sol_u[mv->first + best]) best = k;
        for (int32_t k = 0; k < mv->num_states; ++k) dc->x[mv->first + k] = k == best;
    }
}

/* Iterated conditional modes from dc->x, mending violated factors where
 * it is stuck; fills value, violations, passes. */
static void local_search(decoder *dc, concord_decoding *out) {
    for (int32_t f = 0; f < dc->g->n_factors; ++f) evaluate(dc, f);
    out->passes = 0;
    while (out->passes < MAX_PASSES && (improve(dc) || (dc->mend && mend_violations(dc))))
        out->passes += 1;
    summarize(dc, out);
}

int concord_solver_decode(concord_solver *s, concord_decoding *result) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, solver_decode(s, NULL, true, result));
}

int solver_decode(concord_solver *s, solver_deadline *deadline, bool mend,
                  concord_decoding *result) {
    const concord_graph *g = s->g;
    if (!s->solved || s->mode == MODE_NONE)
        return solver_fail(s, CONCORD_EINVAL,
                           "nothing to decode: no solution (no solve yet, or the last one "
                           "ended without one)");
    decoder dc;
    double *other = malloc((size_t)(g->n_vars ? g->n_vars : 1) * sizeof *other);
    if (!other || decoder_init(&dc, s)) {
        free(other);
        return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    }
    dc.x = s->decoded;
    dc.deadline = deadline;
    dc.mend = mend;
    round_posteriors(&dc);
    concord_decoding out = {0};
    if (!s->sol_integral) {
        /* Two starts, each refined by the local search: the rounded
         * posteriors and sequential fixing; the better one is kept. */
        concord_decoding rounded = {0};
        local_search(&dc, &rounded);
        memcpy(other, dc.x, (size_t)g->n_vars * sizeof *other);
        if (sequential_fixing(&dc)) {
            decoder_free(&dc);
            free(other);
            return solver_fail(s, CONCORD_ENOMEM, "out of memory");
        }
        local_search(&dc, &out);
        out.passes += rounded.passes;
        if (rounded.violated < out.violated ||
            (rounded.violated == out.violated && rounded.value > out.value)) {
            memcpy(dc.x, other, (size_t)g->n_vars * sizeof *other);
            out.value = rounded.value;
            out.violated = rounded.violated;
        }
    } else {
        for (int32_t f = 0; f < g->n_factors; ++f) evaluate(&dc, f);
        summarize(&dc, &out);
    }
    const int error = dc.error, error_factor = dc.error_factor;
    decoder_free(&dc);
    free(other);
    s->have_decoded = !error;
    if (error) return solver_callback_failed(s, error_factor, error);
    if (result) *result = out;
    return CONCORD_OK;
}

/* concord_solver_evaluate once begun. */
static int evaluate_assignment(concord_solver *s, const double *x, concord_decoding *result) {
    const concord_graph *g = s->g;
    static const double no_variables = 0.0; /* x of a graph without variables may be NULL */
    if (!x && g->n_vars == 0) x = &no_variables;
    if (!x || !result) return solver_fail(s, CONCORD_EINVAL, "evaluate: no assignment or result");
    for (int32_t i = 0; i < g->n_vars; ++i)
        if (x[i] != 0.0 && x[i] != 1.0)
            return solver_fail(s, CONCORD_EINVAL, "assignment: variable %d is %g, not 0 or 1", i,
                               x[i]);
    decoder dc;
    double *copy = malloc((size_t)(g->n_vars ? g->n_vars : 1) * sizeof *copy);
    if (!copy || decoder_init(&dc, s)) {
        free(copy);
        return solver_fail(s, CONCORD_ENOMEM, "out of memory");
    }
    memcpy(copy, x, (size_t)g->n_vars * sizeof *copy);
    dc.x = copy;
    for (int32_t f = 0; f < g->n_factors; ++f) evaluate(&dc, f);
    concord_decoding out = {0};
    summarize(&dc, &out);
    const int error = dc.error, error_factor = dc.error_factor;
    decoder_free(&dc);
    free(copy);
    if (error) return solver_callback_failed(s, error_factor, error);
    *result = out;
    return CONCORD_OK;
}

int concord_solver_evaluate(concord_solver *s, const double *x, concord_decoding *result) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, evaluate_assignment(s, x, result));
}

const double *concord_solver_decoded(const concord_solver *s) {
    return solver_readable(s) && s->have_decoded ? s->decoded : NULL;
}

/* concord_solver_decoded_additionals once begun. */
static int decoded_additionals(concord_solver *s, double *v) {
    const concord_graph *g = s->g;
    if (!s->have_decoded)
        return solver_fail(s, CONCORD_EINVAL,
                           "decoded additionals: no decoded assignment yet (decode after a solve)");
    if (g->n_add == 0) return CONCORD_OK;
    if (!v) return solver_fail(s, CONCORD_EINVAL, "decoded additionals: no output array");
    for (int32_t f = 0; f < g->n_factors; ++f) {
        const factor *fa = &g->factors[f];
        double *vf = v + fa->add_begin;
        bool allowed = false;
        double score;
        int rc = solver_factor_at(s, solver_phi(s), f, s->decoded, &allowed, &score, vf);
        if (rc) return solver_callback_failed(s, f, rc);
        if (!allowed)
            for (int32_t k = 0; k < fa->n_add; ++k) vf[k] = NAN;
    }
    return CONCORD_OK;
}

int concord_solver_decoded_additionals(concord_solver *s, double *v) {
    int rc = solver_begin(s);
    return rc ? rc : solver_end(s, decoded_additionals(s, v));
}

int concord_solver_decoded_labels(const concord_solver *s, int32_t *labels) {
    if (!solver_readable(s) || !labels || !s->have_decoded) return CONCORD_EINVAL;
    const concord_graph *g = s->g;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        int32_t state = 0;
        for (int32_t k = 0; k < mv->num_states; ++k)
            if (s->decoded[mv->first + k] > 0.5) state = k;
        labels[m] = multi_variable_label(mv, state);
    }
    return CONCORD_OK;
}

int concord_assignment_from_labels(const concord_graph *g, const int32_t *labels, double *x) {
    if (!g || !labels || !x) return CONCORD_EINVAL;
    for (int32_t i = 0; i < g->n_vars; ++i) x[i] = 0.0;
    for (int32_t m = 0; m < g->n_multi; ++m) {
        const multi_variable *mv = &g->multi[m];
        int32_t found = -1;
        for (int32_t k = 0; k < mv->num_states && found < 0; ++k)
            if (multi_variable_label(mv, k) == labels[m]) found = k;
        if (found < 0) return CONCORD_EINFEASIBLE;
        x[mv->first + found] = 1.0;
    }
    return CONCORD_OK;
}
