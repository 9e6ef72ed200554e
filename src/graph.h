/*
 * The factor graph as the library holds it: variables with scores, factors
 * with their links (variable, negated) stored contiguously per factor, and
 * the factors' additional outputs with their scores. The solver workspace
 * hangs off the graph, built on the first solve and dropped whenever the
 * structure changes, so that re-solving with new scores allocates nothing.
 */
#ifndef CONCORD_GRAPH_H
#define CONCORD_GRAPH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "concord.h"
#include "factor.h"

typedef struct admm_workspace admm_workspace;

/* A registered multi-valued variable: states first .. first+num_states-1.
 * labels (NULL: identity) give each state's number in the model the graph
 * came from, when states were removed (e.g. by UAI evidence). */
typedef struct multi_variable {
    int32_t first, num_states;
    int32_t *labels;
    int32_t one_hot_factor; /* its XOR factor, or -1 */
} multi_variable;

struct concord_graph {
    int32_t n_vars, cap_vars;
    double *theta; /* variable scores */

    int32_t n_factors, cap_factors;
    factor *factors;

    int32_t n_links, cap_links;
    int32_t *link_var;
    uint8_t *link_neg;
    uint8_t *var_seen; /* cap_seen zeros between calls: marks for check_links */
    int32_t cap_seen;

    int32_t n_add, cap_add;
    double *phi; /* additional scores */

    int32_t n_multi, cap_multi;
    multi_variable *multi;

    double *sol_u; /* last solution (n_vars), NULL before a solve */
    double *sol_v; /* (n_add) */
    bool sol_integral; /* the last solution is integral (hence MAP-optimal) */
    double *decoded;   /* last decoded assignment (n_vars), NULL before */

    int32_t dist_factor; /* factor of the last distribution query (-1: none) */
    int32_t dist_count;
    double *dist_weight, *dist_u, *dist_v;

    admm_workspace *ws;
    char error[512];
};

/* Records a formatted message as the graph's last error; returns code. */
int graph_fail(concord_graph *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Drops the solver workspace and the last solution (structure changed). */
void graph_invalidate(concord_graph *g);

/* Adds a factor with the given ops over validated links; takes ownership of
 * params (freed on failure too). add_scores may be NULL (zeros). degree may
 * be 0 (vars NULL) only for a factor with additional outputs. */
int graph_add_factor(concord_graph *g, const factor_ops *ops, int32_t degree,
                     const int32_t *vars, const bool *negated, bool allow_negation,
                     int32_t n_add, const double *add_scores, void *params,
                     int32_t *factor_id);

/* Adds a multi-variable; labels (num_states entries, copied) may be NULL. */
int graph_add_multi_variable(concord_graph *g, int32_t num_states, const double *scores,
                             bool one_hot, const int32_t *labels, int32_t *first);

/* Drops the last factor distribution (solve/distribution.c). */
void graph_distribution_free(concord_graph *g);

/* Frees the ADMM workspace (solve/admm.c). */
void admm_workspace_free(admm_workspace *ws);

#endif /* CONCORD_GRAPH_H */
