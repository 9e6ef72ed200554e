/*
 * The factor graph as the library holds it: the problem and nothing else.
 * Variables with scores, factors with their links (variable, negated)
 * stored contiguously per factor, the factors' additional outputs with
 * their scores, and the registered multi-valued variables. Solvers only
 * read it (src/solve/); the factor families add to it through
 * graph_add_factor (src/factors/).
 */
#ifndef CONCORD_GRAPH_H
#define CONCORD_GRAPH_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "concord.h"
#include "factor.h"

/* A registered multi-valued variable: states first .. first+num_states-1.
 * labels (NULL: identity) give each state's number in the model the graph
 * came from, when states were removed (e.g. by UAI evidence). */
typedef struct multi_variable {
    int32_t first, num_states;
    int32_t *labels;
    int32_t one_hot_factor; /* its XOR factor, or -1 */
} multi_variable;

/* The label of state k of mv. */
static inline int32_t multi_variable_label(const multi_variable *mv, int32_t k) {
    return mv->labels ? mv->labels[k] : k;
}

struct concord_graph {
    int32_t n_vars, cap_vars;
    double *theta;  /* variable scores */
    double *weight; /* LP-SparseMAP's regularization weights (1 unless set) */

    int32_t n_factors, cap_factors;
    factor *factors;

    int32_t n_links, cap_links;
    int32_t *link_var;
    uint8_t *link_neg;
    uint8_t *var_seen; /* cap_seen zeros between calls: marks for graph_check_links */
    int32_t cap_seen;

    int32_t n_add, cap_add;
    double *phi; /* additional scores */

    int32_t n_multi, cap_multi;
    multi_variable *multi;

    /* Counters that solvers compare with the values they saw: the
     * structure (variables, factors) and the scores. */
    uint64_t structure_revision;
    uint64_t scores_revision;

    /* Solvers inside a call that may run the graph's callbacks
     * (solver_begin): the graph then refuses to change (graph_unchanging). */
    atomic_int solving;
    /* The last failure was a change refused during a solve: its message is
     * then a constant, not `error` (see graph_fail). */
    atomic_bool refused_while_solving;

    char error[512];
};

/* Records a formatted message as the graph's last error; returns code.
 * While the graph is being solved it writes nothing and returns
 * CONCORD_EINVAL: every change is refused then, and refusals may come from
 * callbacks on several threads at once, which must not share a buffer
 * (concord_last_error gives a constant message). */
int graph_fail(concord_graph *g, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* CONCORD_OK, or CONCORD_EINVAL with a message when some solver is
 * inside a call on the graph: a callback changing it would move or resize
 * the arrays the solve is reading. */
int graph_unchanging(concord_graph *g);

/* Every variable of a factor in range and none repeated (degree >= 1);
 * otherwise a message naming the factor kind. */
int graph_check_links(concord_graph *g, const char *name, int32_t degree, const int32_t *vars);

/* Every score 0 or of magnitude within [1e-300, 1e300] (score_in_range;
 * scores may be NULL); `what` and `first` name them in the message, and
 * `problem` says what is wrong with a refused one (score_problem, or
 * additional_score_problem for additional scores). */
int graph_check_scores(concord_graph *g, int32_t count, const double *scores, const char *what,
                       int32_t first, const char *(*problem)(double));

/* Checks the scores of the additional outputs [first, first + count) as
 * graph_check_scores does, but for -inf at a forbidden output (which is
 * ignored there), and copies them into out with 0 at every forbidden
 * output. Returns -1, or the offset of the first score refused (out is then
 * unchanged). */
int32_t graph_take_additional_scores(const concord_graph *g, int32_t first, int32_t count,
                                     const double *scores, double *out);

/* Adds a factor with the given ops over validated links; takes ownership of
 * params (freed with free(), on failure too).
 * add_scores may be NULL (zeros); for a family with ops->forbids, -inf
 * forbids its output (CONCORD_EINFEASIBLE when every configuration uses
 * one). degree may be 0 (vars NULL) only for a factor with additional
 * outputs. */
int graph_add_factor(concord_graph *g, const factor_ops *ops, int32_t degree,
                     const int32_t *vars, const bool *negated, bool allow_negation,
                     int32_t n_add, const double *add_scores, void *params,
                     int32_t *factor_id);

/* Adds a multi-variable; labels (num_states entries, copied) may be NULL. */
int graph_add_multi_variable(concord_graph *g, int32_t num_states, const double *scores,
                             bool one_hot, const int32_t *labels, int32_t *first);

#endif /* CONCORD_GRAPH_H */
