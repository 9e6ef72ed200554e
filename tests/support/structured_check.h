/*
 * Checks shared by the tests of factors that only have a MAP oracle
 * (sequences, head automata, summarization): a test enumerates every
 * allowed configuration of a small factor from the factor's documented
 * meaning, with its own validity checker, and these helpers verify the
 * oracle against that list (exact best score, valid argmax) and the QP the
 * generic active set builds on the oracle (a convex combination of valid
 * configurations, Frank-Wolfe gap over the whole list, agreement with an
 * independent pairwise Frank-Wolfe solve over the list); also the checks
 * of their .fg syntax.
 */
#ifndef CONCORD_STRUCTURED_CHECK_H
#define CONCORD_STRUCTURED_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "concord.h"
#include "factor.h"

/* A test's list of configurations: rows of degree + n_add 0/1 values (u,
 * then v). */
typedef struct config_list {
    int32_t degree, n_add, count, cap;
    double *x;
} config_list;

void configs_init(config_list *c, int32_t degree, int32_t n_add);
void configs_clear(config_list *c);
/* Appends a zeroed row and returns it. */
double *configs_push(config_list *c);
void configs_free(config_list *c);

/* The test's validity checker: is (u, v) an allowed configuration? */
typedef bool (*config_valid_fn)(const void *ctx, const double *u, const double *v);

/* (a) The oracle on scores (a, b): a valid configuration whose returned
 * score is its a.u + b.v and equals the best over the list. */
void check_map_oracle(const factor *f, const config_list *c, config_valid_fn valid,
                      const void *ctx, const double *a, const double *b);

/* Reusable state for check_qp: an active set for one factor. */
typedef struct qp_checker {
    const factor *f;
    struct active_set *state;
    factor_buffers buf;
    double *u, *v, *fw_u;
} qp_checker;

void qp_checker_init(qp_checker *q, const factor *f);
void qp_checker_free(qp_checker *q);

typedef struct qp_report {
    double gap;      /* Frank-Wolfe gap of the active-set solution */
    double fw_gap;   /* gap reached by the independent solve */
    double u_diff;   /* max |u - u_fw| */
    int32_t fw_iter; /* iterations of the independent solve */
    int32_t active;  /* active configurations */
} qp_report;

/* (b) The QP max a.u + b.v - 1/2 sum d u^2 through factor_qp_variables and
 * q's active set (warm-started from the previous call): the solution is
 * the weighted sum of the active configurations, each valid, weights >= 0
 * summing to 1; its Frank-Wolfe gap over the list is at most 1e-9 x scale;
 * u agrees within 1e-6 with a pairwise Frank-Wolfe solve over the list. */
qp_report check_qp(qp_checker *q, const config_list *c, config_valid_fn valid, const void *ctx,
                   const double *a, const double *b, const double *d);

/* Random scores for the tests: integers in [-3, 3] (ties) or reals (with
 * negative values), chosen by `integer`. */
struct test_rng;
void random_scores(struct test_rng *rng, double *x, int32_t n, bool integer);

/* Random QP inputs that make the solution mix several configurations:
 * scores as random_scores (reals scaled by a random factor in [0.1, 2]),
 * and d uniform (1, or 4 with integer scores) one time in three, else
 * random in [0.5, 2] (integer scores: [2, 8]). */
void random_qp(struct test_rng *rng, double *a, int32_t degree, double *b, int32_t n_add,
               double *d, bool integer, bool new_d);

/* Totals of the check_qp reports over many factors, for a summary line. */
typedef struct qp_totals {
    long cases, fw_iters, active;
    double worst_gap, worst_diff;
} qp_totals;

/* (a) and (b) for one factor with fresh random inputs (random_scores and
 * random_qp, integers when `integer`): check_map_oracle on three draws of
 * scores, then check_qp three times on one active set (a cold start, a warm
 * start with new scores, a warm start with new scores and a new d), its
 * reports added to *totals. */
void check_oracle_and_qp(struct test_rng *rng, const factor *f, const config_list *c,
                         config_valid_fn valid, const void *ctx, bool integer,
                         qp_totals *totals);

/* check_oracle_and_qp with outputs forbidden: on a copy of f whose
 * `forbidden` flags (factor_ops.forbids) mark a random quarter of its
 * additional outputs, never one of a configuration of the list drawn at
 * random (so that some configuration stays allowed), against the list cut
 * to the configurations that use none of them. f's family must forbid. */
void check_with_forbidden_outputs(struct test_rng *rng, const factor *f, const config_list *c,
                                  config_valid_fn valid, const void *ctx, bool integer,
                                  qp_totals *totals);

/* Prints "NAME: N factors, Q QPs; " then the worst gaps and the means of
 * the totals. */
void print_qp_totals(const char *name, int n_factors, const qp_totals *t);

/* A reference for LP-MAP on the local polytope, solved by GLPK: variables
 * u in [0, 1] scored by theta; each structured factor's polytope is the
 * convex hull of its enumerated configurations (weights >= 0 summing to 1
 * tie its links to the variables, its additional scores go on the
 * weights); each logic factor whose polytope is a single linear row
 * (XOR, ATMOSTONE, OR, BUDGET) is that row. */
typedef struct lp_ref lp_ref;

lp_ref *lp_ref_new(int32_t n_vars, const double *theta);
void lp_ref_free(lp_ref *lp);
/* A structured factor: its configurations, the variable of each link, and
 * its additional scores. */
void lp_ref_add_configs(lp_ref *lp, const config_list *c, const int32_t *vars, const double *b);
/* lo <= sum of the listed variables <= hi (use -INFINITY / INFINITY). */
void lp_ref_add_sum(lp_ref *lp, int32_t n, const int32_t *vars, double lo, double hi);
/* Optimal value into *value and 1, or 0 when the LP is infeasible. */
int lp_ref_solve(lp_ref *lp, double *value);

/* LP-MAP of g by concord (tol 1e-8, at most 50000 iterations) against the
 * optimum of lp: the value within 1e-5 (1 + |optimum|) of it, the upper
 * bound at least the optimum - 1e-7 (1 + |optimum|) and at most 1e-5
 * (1 + |optimum|) above it, or the test fails naming `trial`. Counts the
 * graph in *solved and, if its LP-MAP is fractional, in *fractional; keeps
 * in *worst the largest |value - optimum|. Returns false, solving nothing,
 * when the LP is infeasible. */
bool check_lp_map_against_glpk(concord_graph *g, lp_ref *lp, int trial, int *solved,
                               int *fractional, double *worst);

/* Reads the file at path (concord_read_file, any format), which must hold
 * exactly one graph; the test fails with the reader's message otherwise.
 * Free with concord_free_graphs(graphs, 1). */
concord_graph **read_single_graph_file(const char *path);

/* Solves g with the default settings and checks it against `expected`,
 * the optimum a test found by brute force for a graph whose only factor is
 * structured (its local polytope is its marginal polytope, so LP = MAP):
 * the value within 1e-8 and the upper bound within 1e-6 of it. Prints a
 * line naming `name` (and whether the optimum is unique). Returns the
 * solver's report, and the solution in u (num_variables values). */
concord_info solve_to_brute_force_optimum(const concord_graph *g, const char *name,
                                          double expected, bool unique, double *u);

/* Reads text as a .fg file named t.fg, which must be rejected with a
 * message containing needle. */
void expect_read_error(const char *text, const char *needle);

/* Reads text as a .fg file named t.fg, which must load; its first graph
 * must have n_add additional outputs. */
void expect_read_ok(const char *text, int32_t n_add);

/* Adds 1 to 3 logic factors (XOR, ATMOSTONE, OR, BUDGET with budget 1 or
 * 2) over random subsets of variables 0..n_vars-1, to the graph and, as
 * their rows, to the LP. */
void add_random_logic(struct test_rng *rng, concord_graph *g, lp_ref *lp, int32_t n_vars);

#endif /* CONCORD_STRUCTURED_CHECK_H */
