/*
 * Test-side factor graphs with multi-valued variables and structured
 * factors, with their meaning written from concord.h alone: brute-force
 * MAP over every assignment of the multi-variables' states and the other
 * variables, and the local-polytope LP (every factor in V-representation,
 * its allowed configurations enumerated from that meaning) solved by GLPK.
 * The kinds: the logic and budget factors of ref_semantics (through
 * ref_allowed), PAIR, DENSE over multi-variables (-INFINITY entries
 * forbidden), a user factor (at most two literals on, one additional
 * output: the AND of its first two literals), SEQUENCE over
 * multi-variables, MATCHING and TREE (every arc of a short sentence).
 * Multi-variables either carry their own XOR or are covered by a DENSE or
 * SEQUENCE factor, so that every feasible assignment is one-hot on them.
 */
#ifndef CONCORD_REF_MGRAPH_H
#define CONCORD_REF_MGRAPH_H

#include <stdbool.h>

#include "concord.h"
#include "ref_semantics.h"
#include "testutil.h"

enum {
    MG_MAX_VARS = 48,
    MG_MAX_MULTI = 8,
    MG_MAX_FACTORS = 24,
    MG_MAX_LINKS = 12,
    MG_MAX_ADD = 64,
    MG_MAX_ENUMERATION = 1 << 18 /* assignments brute force may enumerate */
};

typedef enum mg_kind {
    MG_LOGIC,
    MG_PAIR,
    MG_DENSE,
    MG_USER,
    MG_SEQUENCE,
    MG_MATCHING,
    MG_TREE,
    MG_NUM_KINDS
} mg_kind;

typedef struct mg_factor {
    mg_kind kind;
    int degree;
    int vars[MG_MAX_LINKS];
    bool negated[MG_MAX_LINKS]; /* LOGIC and USER only */
    ref_factor logic;           /* LOGIC: kind, budget, costs (its vars unused) */
    int n_multi, multi[4];      /* DENSE, SEQUENCE: the multi-variables, in order */
    int rows, cols;             /* MATCHING */
    int length;                 /* TREE: nodes, the root included; every arc */
    int n_add;
    double add[MG_MAX_ADD];     /* additional scores */
} mg_factor;

typedef struct mg_graph {
    int n_vars;
    double theta[MG_MAX_VARS];
    int n_multi;
    int multi_first[MG_MAX_MULTI], multi_states[MG_MAX_MULTI];
    bool multi_xor[MG_MAX_MULTI];
    int n_factors;
    mg_factor factors[MG_MAX_FACTORS];
} mg_graph;

/* TREE's arcs in link order for a sentence of `length` nodes: every
 * (head, modifier), heads 0..length-1, modifiers 1..length-1, head !=
 * modifier, head-major. Returns the number of arcs. */
int mg_tree_arcs(int length, int *heads, int *modifiers);

/* Factor f's best additional score with its links at the raw variable
 * values lx (one per link), or -INFINITY when that is not allowed. */
double mg_factor_score(const mg_factor *f, const mg_graph *g, const int *lx);

/* The objective at the 0/1 assignment x (n_vars): theta . x plus every
 * factor's score, -INFINITY when some factor (or a multi-variable's XOR)
 * does not allow x. */
double mg_value(const mg_graph *g, const int *x);

/* Builds the graph through the public API (user factors with the test's
 * oracle); NULL when the API refused it (the message is printed). */
concord_graph *mg_build(const mg_graph *g);

/* Exact MAP by enumerating the states of every multi-variable and the
 * values of every other variable. Returns true when some assignment is
 * feasible (its value to *value, the assignment to x, may be NULL). */
bool mg_brute_map(const mg_graph *g, double *value, int *x);

/* The local-polytope LP (REF_LP_* codes of ref_graph.h); *value its optimum. */
int mg_local_lp(const mg_graph *g, double *value);

/* Sum of |scores| (variables and additional outputs, finite ones). */
double mg_score_l1(const mg_graph *g);

/* A random graph: up to four multi-variables (1 to 4 states, with their
 * XOR or covered by a DENSE or SEQUENCE factor), binary variables, and
 * factors of the kinds allowed by `kinds` (a bit per mg_kind), with score
 * magnitudes from 1e-3 to 1e3 (some graphs mixing 1e-6 and 1e4) and ties;
 * brute force stays within MG_MAX_ENUMERATION assignments. */
void mg_random_graph(test_rng *rng, unsigned kinds, mg_graph *out);

/* Prints the graph (for reproducers). */
void mg_print(const mg_graph *g);

#endif /* CONCORD_REF_MGRAPH_H */
