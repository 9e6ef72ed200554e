/*
 * Factor graph storage: variables and multi-variables, the generic part of
 * adding a factor (validation of every link and score, so that solvers can
 * trust the graph; each family validates its own parameters in
 * src/factors/), sizes, scores and error messages.
 */
#include "graph.h"

#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(void **p, int32_t *cap, int64_t need, size_t size);
static int reserve2(void **p, void **q, int32_t *cap, int64_t need, size_t psize,
                    size_t qsize);

concord_graph *concord_graph_new(void) {
    concord_graph *g = calloc(1, sizeof(concord_graph));
    /* The arrays always exist, so that offsets into them are defined even
     * for a graph without variables, links or additional outputs. */
    if (g && (reserve2((void **)&g->theta, (void **)&g->weight, &g->cap_vars, 1,
                       sizeof(double), sizeof(double)) ||
              reserve((void **)&g->phi, &g->cap_add, 1, sizeof(double)) ||
              reserve2((void **)&g->link_var, (void **)&g->link_neg, &g->cap_links, 1,
                       sizeof(int32_t), sizeof(uint8_t)))) {
        concord_graph_free(g);
        return NULL;
    }
    return g;
}

void concord_graph_free(concord_graph *g) {
    if (!g) return;
    for (int32_t f = 0; f < g->n_factors; ++f) {
        free(g->factors[f].params);
        free(g->factors[f].forbidden);
    }
    free(g->factors);
    for (int32_t m = 0; m < g->n_multi; ++m) free(g->multi[m].labels);
    free(g->multi);
    free(g->theta);
    free(g->weight);
    free(g->link_var);
    free(g->link_neg);
    free(g->var_seen);
    free(g->phi);
    free(g);
}

/* Refused from a callback of the solve. Another thread must not change a
 * graph a solver of it is using at all (the header): this check and the
 * write after it are not one atomic step, so it is no guard between
 * threads. */
static const char BEING_SOLVED[] =
    "the graph is being solved: it cannot change from one of the solve's callbacks";

int graph_fail(concord_graph *g, int code, const char *fmt, ...) {
    if (atomic_load(&g->solving) != 0) {
        atomic_store(&g->refused_while_solving, true);
        return CONCORD_EINVAL;
    }
    atomic_store(&g->refused_while_solving, false);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
    return code;
}

const char *concord_last_error(const concord_graph *g) {
    if (!g) return "";
    return atomic_load(&g->refused_while_solving) ? BEING_SOLVED : g->error;
}

/* Makes room for `need` elements of `size` bytes in *p (capacity *cap). */
static int reserve(void **p, int32_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return CONCORD_OK;
    if (need > INT32_MAX) return CONCORD_ENOMEM;
    int64_t grown = *cap < 16 ? 16 : 2 * (int64_t)*cap;
    if (grown < need) grown = need;
    if (grown > INT32_MAX) grown = INT32_MAX;
    void *q = realloc(*p, (size_t)grown * size);
    if (!q) return CONCORD_ENOMEM;
    *p = q;
    *cap = (int32_t)grown;
    return CONCORD_OK;
}

/* Like reserve, for two arrays that share one capacity. */
static int reserve2(void **p, void **q, int32_t *cap, int64_t need, size_t psize,
                    size_t qsize) {
    int32_t cap_q = *cap, cap_p = *cap;
    if (reserve(p, &cap_p, need, psize) != CONCORD_OK) return CONCORD_ENOMEM;
    if (reserve(q, &cap_q, cap_p, qsize) != CONCORD_OK) return CONCORD_ENOMEM;
    *cap = cap_p;
    return CONCORD_OK;
}

int graph_check_scores(concord_graph *g, int32_t count, const double *scores, const char *what,
                       int32_t first, const char *(*problem)(double)) {
    if (!scores) return CONCORD_OK;
    for (int32_t i = 0; i < count; ++i)
        if (!score_in_range(scores[i]))
            return graph_fail(g, CONCORD_EINVAL, "%s score %ld (%g) %s", what, (long)first + i,
                              scores[i], problem(scores[i]));
    return CONCORD_OK;
}

const char *concord_score_refusal(double x) { return score_in_range(x) ? NULL : score_problem(x); }

int graph_unchanging(concord_graph *g) {
    return atomic_load(&g->solving) == 0 ? CONCORD_OK
                                          : graph_fail(g, CONCORD_EINVAL, "%s", BEING_SOLVED);
}

int concord_add_variables(concord_graph *g, int32_t count, const double *scores,
                          int32_t *first) {
    if (!g) return CONCORD_EINVAL;
    int rc = graph_unchanging(g);
    if (rc) return rc;
    if (count < 0) return graph_fail(g, CONCORD_EINVAL, "negative variable count %d", count);
    if (count == 0) { /* nothing added: the structure, and the solvers over it, stand */
        if (first) *first = g->n_vars;
        return CONCORD_OK;
    }
    rc = graph_check_scores(g, count, scores, "variable", g->n_vars, score_problem);
    if (rc) return rc;
    if (reserve2((void **)&g->theta, (void **)&g->weight, &g->cap_vars,
                 (int64_t)g->n_vars + count, sizeof(double), sizeof(double)))
        return graph_fail(g, CONCORD_ENOMEM, "out of memory adding %d variables", count);
    for (int32_t i = 0; i < count; ++i) {
        g->theta[g->n_vars + i] = scores ? scores[i] : 0.0;
        g->weight[g->n_vars + i] = 1.0;
    }
    if (first) *first = g->n_vars;
    g->n_vars += count;
    g->structure_revision += 1;
    return CONCORD_OK;
}

int graph_check_links(concord_graph *g, const char *name, int32_t degree, const int32_t *vars) {
    int rc = graph_unchanging(g); /* before var_seen grows */
    if (rc) return rc;
    if (degree < 1)
        return graph_fail(g, CONCORD_EINVAL, "%s factor with no variables (degree %d)", name,
                          degree);
    if (!vars) return graph_fail(g, CONCORD_EINVAL, "%s factor: no variable array", name);
    for (int32_t j = 0; j < degree; ++j)
        if (vars[j] < 0 || vars[j] >= g->n_vars)
            return graph_fail(g, CONCORD_EINVAL,
                              "%s factor: variable %d out of range (the graph has %d)", name,
                              vars[j], g->n_vars);
    const int32_t old_cap = g->cap_seen;
    if (reserve((void **)&g->var_seen, &g->cap_seen, g->n_vars, 1))
        return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    memset(g->var_seen + old_cap, 0, (size_t)(g->cap_seen - old_cap));
    int32_t repeated = -1, marked = 0;
    while (marked < degree && repeated < 0) {
        int32_t i = vars[marked];
        if (g->var_seen[i]) repeated = i;
        else g->var_seen[i] = 1, ++marked;
    }
    for (int32_t j = 0; j < marked; ++j) g->var_seen[vars[j]] = 0;
    if (repeated >= 0)
        return graph_fail(g, CONCORD_EINVAL, "%s factor: variable %d appears more than once",
                          name, repeated);
    return CONCORD_OK;
}

/* The outputs a forbidding family's scores forbid (-inf) into *forbidden
 * (NULL when none is), and room for the scores to store into *stored,
 * zeros for now (NULL when nothing is forbidden: store add_scores). The
 * other scores are checked as graph_check_scores does. */
static int take_forbidden(concord_graph *g, int32_t n_add, const double *add_scores,
                          uint8_t **forbidden, double **stored) {
    *forbidden = NULL;
    *stored = NULL;
    int32_t count = 0;
    for (int32_t k = 0; add_scores && k < n_add; ++k) {
        if (add_scores[k] == -INFINITY) ++count;
        else if (!score_in_range(add_scores[k]))
            return graph_check_scores(g, 1, add_scores + k, "additional", g->n_add + k,
                                      additional_score_problem);
    }
    if (count == 0) return CONCORD_OK;
    *forbidden = malloc((size_t)n_add);
    *stored = calloc((size_t)n_add, sizeof(double));
    if (!*forbidden || !*stored) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    for (int32_t k = 0; k < n_add; ++k) (*forbidden)[k] = add_scores[k] == -INFINITY;
    return CONCORD_OK;
}

/* Whether factor f (not yet in the graph) allows some configuration: its
 * oracle at zero scores (`zeros`: n_add of them) finds one that uses no
 * forbidden output. Through map_ones where the family has it, so that a
 * large DENSE table needs no dense array of its outputs. */
static int check_some_configuration_allowed(concord_graph *g, const factor *f,
                                            const double *zeros) {
    const size_t degree = (size_t)f->degree + 1;
    const size_t outputs = f->ops->map_ones ? (size_t)f->ops->config_size(f) + 1
                                            : (size_t)f->n_add + 1;
    double *a = calloc(degree, sizeof(double)), *u = malloc(degree * sizeof(double));
    void *configuration = malloc(outputs * sizeof(double));
    void *scratch = malloc(factor_scratch_bytes(f) + 1);
    int rc = CONCORD_OK;
    double best = 0.0;
    if (!a || !u || !configuration || !scratch)
        rc = graph_fail(g, CONCORD_ENOMEM, "out of memory");
    else if (f->ops->map_ones)
        f->ops->map_ones(f, a, zeros, configuration, &best, scratch);
    else
        best = f->ops->map(f, a, zeros, u, configuration, scratch);
    if (!rc && best == -INFINITY)
        rc = graph_fail(g, CONCORD_EINFEASIBLE,
                        "%s factor: every configuration uses a forbidden (-inf) output",
                        f->ops->name);
    free(a);
    free(u);
    free(configuration);
    free(scratch);
    return rc;
}

int graph_add_factor(concord_graph *g, const factor_ops *ops, int32_t degree,
                     const int32_t *vars, const bool *negated, bool allow_negation,
                     int32_t n_add, const double *add_scores, void *params,
                     int32_t *factor_id) {
    /* A factor without links but with additional outputs has a single
     * configuration (a constant score), e.g. AD3's HEAD_AUTOMATON of a head
     * that has no candidate modifier on one side. */
    int rc = graph_unchanging(g);
    /* a configuration (links, additionals and two counters of the active
     * set) is indexed by int32_t */
    if (!rc && (int64_t)degree + n_add > INT32_MAX - 2)
        rc = graph_fail(g, CONCORD_EINVAL, "%s factor: %d links and %d additional outputs are "
                        "too many", ops->name, degree, n_add);
    if (!rc && !(degree == 0 && n_add > 0)) rc = graph_check_links(g, ops->name, degree, vars);
    if (!rc && negated && !allow_negation)
        for (int32_t j = 0; j < degree && !rc; ++j)
            if (negated[j])
                rc = graph_fail(g, CONCORD_EINVAL, "%s factor: links cannot be negated",
                                ops->name);
    uint8_t *forbidden = NULL;
    double *stored = NULL;
    if (!rc && ops->forbids != FORBIDS_NOTHING)
        rc = take_forbidden(g, n_add, add_scores, &forbidden, &stored);
    else if (!rc) rc = graph_check_scores(g, n_add, add_scores, "additional", g->n_add,
                                          additional_score_problem);
    if (!rc && forbidden) {
        const factor candidate = {ops, g->n_links, degree, g->n_add, n_add, params, forbidden};
        rc = check_some_configuration_allowed(g, &candidate, stored);
        for (int32_t k = 0; !rc && k < n_add; ++k) stored[k] = forbidden[k] ? 0.0 : add_scores[k];
    }
    if (!rc && (reserve((void **)&g->factors, &g->cap_factors, (int64_t)g->n_factors + 1,
                        sizeof(factor)) ||
                reserve2((void **)&g->link_var, (void **)&g->link_neg, &g->cap_links,
                         (int64_t)g->n_links + degree, sizeof(int32_t), sizeof(uint8_t)) ||
                reserve((void **)&g->phi, &g->cap_add, (int64_t)g->n_add + n_add,
                        sizeof(double))))
        rc = graph_fail(g, CONCORD_ENOMEM, "out of memory adding a %s factor", ops->name);
    if (rc) {
        free(params);
        free(forbidden);
        free(stored);
        return rc;
    }
    if (stored) add_scores = stored;
    factor *f = &g->factors[g->n_factors];
    *f = (factor){ops, g->n_links, degree, g->n_add, n_add, params, forbidden};
    for (int32_t j = 0; j < degree; ++j) {
        g->link_var[g->n_links + j] = vars[j];
        g->link_neg[g->n_links + j] = negated && negated[j];
    }
    for (int32_t k = 0; k < n_add; ++k) g->phi[g->n_add + k] = add_scores ? add_scores[k] : 0.0;
    free(stored);
    g->n_links += degree;
    g->n_add += n_add;
    if (factor_id) *factor_id = g->n_factors;
    g->n_factors += 1;
    g->structure_revision += 1;
    return CONCORD_OK;
}

int graph_add_multi_variable(concord_graph *g, int32_t num_states, const double *scores,
                             bool one_hot, const int32_t *labels, int32_t *first) {
    int rc = graph_unchanging(g); /* before the multi-variables grow */
    if (rc) return rc;
    if (num_states < 1)
        return graph_fail(g, CONCORD_EINVAL, "a multi-variable needs at least one state (got %d)",
                          num_states);
    rc = graph_check_scores(g, num_states, scores, "state", 0, score_problem);
    if (rc) return rc;
    if (reserve((void **)&g->multi, &g->cap_multi, (int64_t)g->n_multi + 1,
                sizeof(multi_variable)))
        return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    int32_t *copy = NULL;
    if (labels) {
        copy = malloc((size_t)num_states * sizeof *copy);
        if (!copy) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
        memcpy(copy, labels, (size_t)num_states * sizeof *copy);
    }
    int32_t begin = g->n_vars, n_factors = g->n_factors, xor_factor = -1;
    const uint64_t revision = g->structure_revision;
    rc = concord_add_variables(g, num_states, scores, NULL);
    if (!rc && one_hot) {
        int32_t *vars = malloc((size_t)num_states * sizeof *vars);
        if (!vars) {
            rc = graph_fail(g, CONCORD_ENOMEM, "out of memory");
        } else {
            for (int32_t k = 0; k < num_states; ++k) vars[k] = begin + k;
            rc = concord_add_logic(g, CONCORD_XOR, num_states, vars, NULL, &xor_factor);
            free(vars);
        }
    }
    if (rc) {
        free(copy);
        g->n_vars = begin; /* the XOR failed: take the new variables back */
        g->n_factors = n_factors;
        g->structure_revision = revision; /* the graph is as it was: solvers stay current */
        return rc;
    }
    g->multi[g->n_multi++] = (multi_variable){begin, num_states, copy, xor_factor};
    if (first) *first = begin;
    return CONCORD_OK;
}

int concord_add_multi_variable(concord_graph *g, int32_t num_states, const double *scores,
                               bool one_hot, int32_t *first) {
    if (!g) return CONCORD_EINVAL;
    return graph_add_multi_variable(g, num_states, scores, one_hot, NULL, first);
}

int32_t concord_num_multi_variables(const concord_graph *g) { return g ? g->n_multi : 0; }

int concord_multi_variable(const concord_graph *g, int32_t m, int32_t *first,
                           int32_t *num_states) {
    if (!g || m < 0 || m >= g->n_multi) return CONCORD_EINVAL;
    if (first) *first = g->multi[m].first;
    if (num_states) *num_states = g->multi[m].num_states;
    return CONCORD_OK;
}

int concord_multi_variable_labels(const concord_graph *g, int32_t m, int32_t *labels) {
    if (!g || !labels || m < 0 || m >= g->n_multi) return CONCORD_EINVAL;
    const multi_variable *mv = &g->multi[m];
    for (int32_t k = 0; k < mv->num_states; ++k) labels[k] = multi_variable_label(mv, k);
    return CONCORD_OK;
}

int32_t concord_num_variables(const concord_graph *g) { return g ? g->n_vars : 0; }
int32_t concord_num_factors(const concord_graph *g) { return g ? g->n_factors : 0; }
int32_t concord_num_additionals(const concord_graph *g) { return g ? g->n_add : 0; }

int concord_factor_additionals(const concord_graph *g, int32_t f, int32_t *first,
                               int32_t *count) {
    if (!g || f < 0 || f >= g->n_factors) return CONCORD_EINVAL;
    if (first) *first = g->factors[f].add_begin;
    if (count) *count = g->factors[f].n_add;
    return CONCORD_OK;
}

int concord_factor_degree(const concord_graph *g, int32_t f, int32_t *degree) {
    if (!g || f < 0 || f >= g->n_factors) return CONCORD_EINVAL;
    if (degree) *degree = g->factors[f].degree;
    return CONCORD_OK;
}

int concord_factor_variables(const concord_graph *g, int32_t f, int32_t *vars, bool *negated) {
    if (!g || f < 0 || f >= g->n_factors) return CONCORD_EINVAL;
    const factor *fa = &g->factors[f];
    for (int32_t j = 0; j < fa->degree; ++j) {
        if (vars) vars[j] = g->link_var[fa->link_begin + j];
        if (negated) {
            const bool stored = g->link_neg[fa->link_begin + j];
            negated[j] = stored != factor_flips_link(fa->ops, j, fa->degree);
        }
    }
    return CONCORD_OK;
}

static int check_range(concord_graph *g, const char *what, int32_t first, int32_t count,
                       int32_t size, const double *scores) {
    int rc = graph_unchanging(g);
    if (rc) return rc;
    if (first < 0 || count < 0 || (int64_t)first + count > size)
        return graph_fail(g, CONCORD_EINVAL, "%s scores [%d, %lld) out of range (size %d)",
                          what, first, (long long)first + count, size);
    if (count > 0 && !scores) return graph_fail(g, CONCORD_EINVAL, "%s scores: NULL array", what);
    return CONCORD_OK;
}

/* The last factor whose outputs begin at or before additional output k:
 * the one that holds k (factors hold consecutive ranges, in order). */
static int32_t factor_holding(const concord_graph *g, int32_t k) {
    int32_t lo = 0, hi = g->n_factors - 1;
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo + 1) / 2;
        if (g->factors[mid].add_begin <= k) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Whether additional output `at` is forbidden; *f, a factor at or before
 * the one that holds it, moves on to that one (so a walk through
 * increasing outputs passes each factor once). */
static bool output_forbidden(const concord_graph *g, int32_t at, int32_t *f) {
    while (*f + 1 < g->n_factors && g->factors[*f + 1].add_begin <= at) ++*f;
    const factor *fa = &g->factors[*f];
    return fa->forbidden && fa->forbidden[at - fa->add_begin];
}

/* Whether the graph takes x as the score of additional output `at` (f as
 * for output_forbidden). */
static bool additional_score_taken(const concord_graph *g, int32_t at, int32_t *f, double x) {
    return score_in_range(x) || (x == -INFINITY && output_forbidden(g, at, f));
}

const char *concord_additional_score_refusal(const concord_graph *g, int32_t output, double x) {
    if (!g || output < 0 || output >= g->n_add) return "names no additional output of the graph";
    int32_t f = factor_holding(g, output);
    return additional_score_taken(g, output, &f, x) ? NULL : additional_score_problem(x);
}

int32_t graph_take_additional_scores(const concord_graph *g, int32_t first, int32_t count,
                                     const double *scores, double *out) {
    if (count <= 0) return -1;
    const int32_t start = factor_holding(g, first);
    int32_t f = start;
    for (int32_t k = 0; k < count; ++k)
        if (!additional_score_taken(g, first + k, &f, scores[k])) return k;
    f = start;
    for (int32_t k = 0; k < count; ++k)
        out[k] = output_forbidden(g, first + k, &f) ? 0.0 : scores[k];
    return -1;
}

int concord_set_variable_scores(concord_graph *g, int32_t first, int32_t count,
                                const double *scores) {
    if (!g) return CONCORD_EINVAL;
    int rc = check_range(g, "variable", first, count, g->n_vars, scores);
    if (!rc) rc = graph_check_scores(g, count, scores, "variable", first, score_problem);
    if (rc) return rc;
    if (count > 0) memcpy(g->theta + first, scores, (size_t)count * sizeof(double));
    g->scores_revision += 1;
    return CONCORD_OK;
}

int concord_set_additional_scores(concord_graph *g, int32_t first, int32_t count,
                                  const double *scores) {
    if (!g) return CONCORD_EINVAL;
    int rc = check_range(g, "additional", first, count, g->n_add, scores);
    if (rc) return rc;
    const int32_t refused = graph_take_additional_scores(g, first, count, scores, g->phi + first);
    if (refused >= 0)
        return graph_check_scores(g, 1, scores + refused, "additional", first + refused,
                                  additional_score_problem);
    g->scores_revision += 1;
    return CONCORD_OK;
}

int concord_set_regularization(concord_graph *g, int32_t first, int32_t count,
                               const double *weights) {
    if (!g) return CONCORD_EINVAL;
    int rc = graph_unchanging(g);
    if (rc) return rc;
    if (first < 0 || count < 0 || (int64_t)first + count > g->n_vars)
        return graph_fail(g, CONCORD_EINVAL,
                          "regularization weights [%d, %lld) out of range (the graph has %d "
                          "variables)",
                          first, (long long)first + count, g->n_vars);
    if (count > 0 && !weights)
        return graph_fail(g, CONCORD_EINVAL, "regularization weights: NULL array");
    for (int32_t i = 0; i < count; ++i) {
        const double w = weights[i];
        if (!(w >= CONCORD_MIN_REGULARIZATION && w <= CONCORD_MAX_REGULARIZATION))
            return graph_fail(g, CONCORD_EINVAL,
                              "regularization weight of variable %ld is %g (must be in [%g, %g])",
                              (long)first + i, w, CONCORD_MIN_REGULARIZATION,
                              CONCORD_MAX_REGULARIZATION);
    }
    bool changed = false;
    for (int32_t i = 0; i < count; ++i) changed |= g->weight[first + i] != weights[i];
    if (!changed) return CONCORD_OK;
    memcpy(g->weight + first, weights, (size_t)count * sizeof(double));
    g->structure_revision += 1; /* solvers take the weights in when made */
    return CONCORD_OK;
}

const double *concord_regularization(const concord_graph *g) { return g ? g->weight : NULL; }

const double *concord_variable_scores(const concord_graph *g) { return g ? g->theta : NULL; }
const double *concord_additional_scores(const concord_graph *g) { return g ? g->phi : NULL; }
