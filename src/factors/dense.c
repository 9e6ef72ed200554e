/*
 * DENSE factor: a full table of scores over the joint states of several
 * multi-valued variables. Its links are the binary state variables of each
 * multi-variable in turn; its additional outputs are the joint states, in
 * row-major order with the last variable changing fastest (as in AD3 and
 * the UAI format). A configuration switches on one state per variable and
 * the matching joint state, so the factor also enforces one-hot on each of
 * its variables. Joint states scored -inf are forbidden (zero probability;
 * factor_ops.forbids): the enumeration skips them. It has a MAP oracle
 * only: its QP goes through the generic active set.
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"
#include "../util.h"

typedef struct dense_params {
    int32_t n_vars;     /* multi-valued variables */
    int32_t n_configs;  /* product of their state counts */
    int32_t *states;    /* state count of each variable */
    int32_t *offset;    /* link of each variable's first state */
} dense_params;


static const dense_params *params_of(const factor *f) {
    return (const dense_params *)f->params;
}

/* The best joint state that `forbidden` (NULL: none) allows and its score
 * in *score (-inf when none is allowed): an odometer over the variables
 * (digits in `digit`) keeps the sum of the state scores up to date
 * incrementally. */
static int32_t best_joint_state(const dense_params *p, const uint8_t *forbidden,
                                const double *a, const double *b, int32_t *digit,
                                double *score) {
    double state_sum = 0.0;
    for (int32_t j = 0; j < p->n_vars; ++j) {
        digit[j] = 0;
        state_sum += a[p->offset[j]];
    }
    int32_t best = 0;
    double best_score = -INFINITY;
    for (int32_t c = 0; c < p->n_configs; ++c) {
        if (!forbidden || !forbidden[c]) {
            double sc = state_sum + b[c];
            if (sc > best_score) {
                best = c;
                best_score = sc;
            }
        }
        for (int32_t j = p->n_vars - 1; j >= 0; --j) {
            int32_t base = p->offset[j];
            state_sum -= a[base + digit[j]];
            if (++digit[j] < p->states[j]) {
                state_sum += a[base + digit[j]];
                break;
            }
            digit[j] = 0;
            state_sum += a[base];
        }
    }
    *score = best_score;
    return best;
}

/* The best joint state's ones: one state link per variable (in increasing
 * order, as the variables' links are) and the joint state's output. What
 * is left of the joint state after the other variables' digits is the
 * first variable's state: no division for it (on binary pairwise tables,
 * a sixth of this oracle's time). */
static int32_t dense_map_ones(const factor *f, const double *a, const double *b,
                              int32_t *ones, double *value, void *scratch) {
    const dense_params *p = params_of(f);
    const int32_t best = best_joint_state(p, f->forbidden, a, b, (int32_t *)scratch, value);
    int32_t rest = best;
    for (int32_t j = p->n_vars - 1; j > 0; --j) {
        ones[j] = p->offset[j] + rest % p->states[j];
        rest /= p->states[j];
    }
    ones[0] = p->offset[0] + rest;
    ones[p->n_vars] = f->degree + best;
    return p->n_vars + 1;
}

/* Scratch: the odometer's digits, then room for map's ones. */
static double dense_map(const factor *f, const double *a, const double *b, double *u,
                        double *v, void *scratch) {
    return factor_map_by_ones(f, a, b, u, v, scratch,
                              (int32_t *)scratch + params_of(f)->n_vars);
}

static size_t dense_scratch(const factor *f) {
    return (2 * (size_t)params_of(f)->n_vars + 1) * sizeof(int32_t);
}

static int32_t dense_config_size(const factor *f) { return params_of(f)->n_vars + 1; }

static const factor_ops dense_ops = {.name = "DENSE",
                                     .map = dense_map,
                                     .map_ones = dense_map_ones,
                                     .scratch_bytes = dense_scratch,
                                     .config_size = dense_config_size,
                                     .forbids = FORBIDS_BY_FLAGS};

/* One allocation holding the parameters (freed with free()). NULL when out
 * of memory. */
static dense_params *dense_params_new(int32_t n_vars, const int32_t *states, int32_t n_configs) {
    size_t bytes = sizeof(dense_params) + 2 * (size_t)n_vars * sizeof(int32_t);
    dense_params *p = calloc(1, bytes);
    if (!p) return NULL;
    p->n_vars = n_vars;
    p->n_configs = n_configs;
    p->states = (int32_t *)(p + 1);
    p->offset = p->states + n_vars;
    for (int32_t j = 0, at = 0; j < n_vars; ++j) {
        p->states[j] = states[j];
        p->offset[j] = at;
        at += states[j];
    }
    return p;
}

/* Largest DENSE table accepted (entries). */
enum { DENSE_MAX_CONFIGS = 1 << 24 };

int concord_add_dense(concord_graph *g, int32_t n_vars, const int32_t *num_states,
                      const int32_t *vars, const double *scores, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (n_vars < 1) return graph_fail(g, CONCORD_EINVAL, "DENSE factor over no variables");
    if (!num_states) return graph_fail(g, CONCORD_EINVAL, "DENSE factor: NULL num_states");
    int64_t degree = 0, n_configs = 1;
    for (int32_t j = 0; j < n_vars; ++j) {
        if (num_states[j] < 1)
            return graph_fail(g, CONCORD_EINVAL, "DENSE factor: variable %d has %d states", j,
                              num_states[j]);
        degree += num_states[j];
        n_configs *= num_states[j];
        if (n_configs > DENSE_MAX_CONFIGS || degree > INT32_MAX)
            return graph_fail(g, CONCORD_EINVAL,
                              "DENSE factor: table too large (more than %d entries)",
                              DENSE_MAX_CONFIGS);
    }
    int rc = graph_check_links(g, "DENSE", (int32_t)degree, vars);
    if (rc) return rc;
    dense_params *p = dense_params_new(n_vars, num_states, (int32_t)n_configs);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    return graph_add_factor(g, &dense_ops, (int32_t)degree, vars, NULL, false,
                            (int32_t)n_configs, scores, p, factor_id);
}
