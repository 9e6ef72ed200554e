/*
 * concord: inference in constrained factor graphs.
 *
 * This is the one public header of the library. Two objects:
 *
 *   concord_graph   the problem: binary variables, factors and their scores.
 *                   Built once, then only read: solving never changes it,
 *                   so any number of solvers (on any number of threads) can
 *                   share one graph.
 *   concord_solver  everything a solve produces or keeps for the next one:
 *                   its own scores (optional), the solution, multipliers,
 *                   penalty, acceleration history, active sets, decoding and
 *                   backward state. One per thread, or one per example of a
 *                   training batch.
 *
 * The lifecycle is that of OSQP or SCS: build the graph, create solvers
 * over it (concord_solver_new allocates what a solve needs; only the active
 * sets of factors whose solutions need many configurations grow, during
 * the first solves, and keep their room), set each solver's scores, solve
 * (alone, or many at once on threads with concord_solve_batch), read the
 * results, free.
 *
 * Every function that can fail returns an int code (CONCORD_OK or a
 * CONCORD_E* code). Builders leave a message naming what was wrong in
 * concord_last_error(graph), readers in the caller's error buffer, solver
 * functions in concord_solver_last_error(solver) (a NULL graph or solver
 * is CONCORD_EINVAL without a message, and so is a bad index given to a
 * function that reads a const graph, such as concord_factor_degree: it
 * cannot write the graph's message, and the one left is an earlier
 * call's). All memory is owned by the library;
 * there is no global state, nothing is printed and nothing exits: progress
 * is reported through a callback in the settings.
 */
#ifndef CONCORD_H
#define CONCORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's exported functions (default visibility when the
 * library itself is built with GCC or Clang; empty for its users). */
#if defined(CONCORD_BUILDING) && defined(__GNUC__)
#define CONCORD_API __attribute__((visibility("default")))
#else
#define CONCORD_API
#endif

/* The version, defined here only (the build reads it from this header). */
#define CONCORD_VERSION_MAJOR 0
#define CONCORD_VERSION_MINOR 2
#define CONCORD_VERSION_PATCH 0

/* The library version as "MAJOR.MINOR.PATCH". */
CONCORD_API const char *concord_version(void);

/* ------------------------------------------------------------------------
 * Return codes and solver status
 * ------------------------------------------------------------------------ */

/* The codes every function that can fail returns. */
enum concord_code {
    CONCORD_OK = 0,
    CONCORD_EINVAL = 1,        /* invalid argument: bad index, NaN score... */
    CONCORD_ENOMEM = 2,        /* out of memory */
    CONCORD_EPARSE = 3,        /* malformed input file */
    CONCORD_EIO = 4,           /* a file could not be read or written */
    CONCORD_ENOTCONVERGED = 5, /* the solver stopped before converging (its
                                  iteration cap, time limit or an interrupt:
                                  see concord_info.status); the solution is
                                  still filled in */
    CONCORD_ENUMERIC = 6,      /* numerical failure (non-finite values) */
    CONCORD_EINFEASIBLE = 7,   /* the constraints admit no solution */
    CONCORD_ECALLBACK = 8      /* a user callback (a user factor's oracle)
                                  returned an error */
};

/* A short English description of a return code ("unknown error" for a
 * value that is none). Never NULL. */
CONCORD_API const char *concord_strerror(int code);

/* How a solve ended (concord_info.status). */
enum concord_status {
    CONCORD_STATUS_UNSOLVED = 0,
    CONCORD_STATUS_INTEGRAL = 1,    /* converged; the solution is integral */
    CONCORD_STATUS_FRACTIONAL = 2,  /* converged; the solution is fractional */
    CONCORD_STATUS_MAX_ITER = 3,    /* stopped at max_iter before converging */
    CONCORD_STATUS_NUMERIC = 4,     /* numerical failure */
    CONCORD_STATUS_INFEASIBLE = 5,  /* the problem has no feasible point */
    CONCORD_STATUS_TIME_LIMIT = 6,  /* stopped at the time limit */
    CONCORD_STATUS_INTERRUPTED = 7, /* stopped by the progress callback */
    CONCORD_STATUS_CALLBACK_FAILED = 8, /* a user factor's oracle failed */
    CONCORD_STATUS_OPTIMAL = 9,    /* exact MAP (concord_solver_exact, or dynamic
                                      programming on an acyclic graph): the
                                      solution is a MAP assignment, its value
                                      within the gap tolerance of a proven
                                      upper bound */
    CONCORD_STATUS_NODE_LIMIT = 10, /* branch and bound stopped at node_limit */
    CONCORD_STATUS_STALLED = 11     /* PSDD, MPLP: the dual bound stopped
                                       improving before the solution was
                                       certified */
};

/* The name of a status ("integral", "fractional", "max_iter", ...;
 * "unknown" for a value that is none). Never NULL. */
CONCORD_API const char *concord_status_name(int status);

/* ------------------------------------------------------------------------
 * Graphs
 *
 * Scores (log-potentials) are doubles that are 0 or between 1e-300 and
 * 1e300 in magnitude: every function taking scores refuses others with
 * CONCORD_EINVAL (beyond that range the solvers' penalties and sums would
 * vanish into subnormal numbers or overflow). LP-SparseMAP's quadratic
 * term -w u^2/2 does not grow with the scores: with scores far above the
 * weights (from about 1e6 times) it converges slowly, and from about
 * 1e16 times it lies below the rounding of the scores, so that the solve
 * returns a point of the LP-MAP optimal face, which is the LP-SparseMAP
 * answer when that face is a single point but not the face's least-norm
 * point otherwise (scores tied within the face). Scores far larger than
 * their differences (a large c added to every state of a sequence) are
 * told apart to their rounding: a factor without a closed form then
 * solves to within about 1e-14 c of the answer of the scores as given.
 * ------------------------------------------------------------------------ */

/* The problem: variables, factors and scores (see the top of this file). */
typedef struct concord_graph concord_graph;

/* Creates an empty graph. Returns NULL only when out of memory. */
CONCORD_API concord_graph *concord_graph_new(void);

/* Frees a graph and everything it owns. NULL is allowed. */
CONCORD_API void concord_graph_free(concord_graph *g);

/* The message of the last call on this graph that failed ("" if none
 * has): unlike a solver's, it stays after calls that succeed, so read it
 * right after the failing call. The pointer stays valid until the next
 * call on the graph. */
CONCORD_API const char *concord_last_error(const concord_graph *g);

/* Adds `count` binary variables with the given scores (log-potentials; NULL
 * means all zero). Their ids are *first, ..., *first + count - 1. `first`
 * may be NULL. */
CONCORD_API int concord_add_variables(concord_graph *g, int32_t count,
                                      const double *scores, int32_t *first);

/* Why the library refuses x as a variable score ("is not finite", or "is
 * out of range: ..."; a constant string), or NULL when it takes x: a
 * finite 0, or a magnitude within [1e-300, 1e300]. Every call that takes
 * variable scores (concord_add_variables, concord_set_variable_scores,
 * concord_solver_set_scores, concord_solver_factor_map and _qp) refuses
 * exactly these, with CONCORD_EINVAL and a message naming the first
 * refused score by a number (the variable's id in the graph; for a factor
 * on its own, its place among the factor's links); a caller whose scores
 * are laid out otherwise (a tensor, a batch) finds the refused one in its
 * own terms with this. */
CONCORD_API const char *concord_score_refusal(double x);

/* Why graph g refuses x as the score of its additional output `output`,
 * or NULL when it takes x: the refusals of concord_score_refusal, but for
 * -INFINITY at an output its factor was built forbidding (see
 * concord_add_dense). Every call that takes additional scores
 * (concord_set_additional_scores, concord_solver_set_scores, ...) refuses
 * exactly these, naming the first refused score by its output's number in
 * the graph; a caller whose scores are laid out otherwise finds the
 * refused one in its own terms with this. For an output the graph does
 * not have (or g NULL), a message saying so. */
CONCORD_API const char *concord_additional_score_refusal(const concord_graph *g,
                                                         int32_t output, double x);

/* Logic factors over binary variables. Each link may be negated (the factor
 * then sees 1 - u). The kinds:
 *   XOR        exactly one literal is 1
 *   XOROUT     the last literal equals the sum of the others, at most one
 *              of which is 1 (an XOR whose last link is flipped)
 *   ATMOSTONE  at most one literal is 1
 *   OR         at least one literal is 1
 *   OROUT      the last literal is the OR of the others (degree >= 2)
 *   ANDOUT     the last literal is the AND of the others (degree >= 2)
 *   IMPLY      the AND of the first degree-1 literals implies the last
 */
typedef enum concord_logic {
    CONCORD_XOR = 0,
    CONCORD_XOROUT,
    CONCORD_ATMOSTONE,
    CONCORD_OR,
    CONCORD_OROUT,
    CONCORD_ANDOUT,
    CONCORD_IMPLY
} concord_logic;

/* The name of a logic kind as written in .fg files ("XOR", "OROUT", ...;
 * "?" for a value that is none). */
CONCORD_API const char *concord_logic_name(concord_logic kind);

/* Adds a logic factor over `degree` >= 1 distinct variables (at most
 * INT32_MAX / 2: its QP sorts two breakpoints per link). `negated` may
 * be NULL (no negations). The new factor's id goes to *factor (may be NULL).
 * On error the graph is unchanged. */
CONCORD_API int concord_add_logic(concord_graph *g, concord_logic kind,
                                  int32_t degree, const int32_t *vars,
                                  const bool *negated, int32_t *factor);

/* BUDGET: at most `budget` literals are 1 (exactly `budget` when `exact`).
 * The budget must be a non-negative integer (exact: at most the degree). */
CONCORD_API int concord_add_budget(concord_graph *g, int32_t degree,
                                   const int32_t *vars, const bool *negated,
                                   double budget, bool exact, int32_t *factor);

/* KNAPSACK: sum_i costs[i] * literal_i <= budget, costs >= 0, budget >= 0.
 * As in AD3 and LP-SparseMAP, its polytope is the continuous knapsack
 * polytope {u in [0,1]^d : costs . u <= budget}; its MAP oracle is the
 * fractional knapsack, so its vertices (and LP-MAP solutions) may be
 * fractional even when the factor is alone. */
CONCORD_API int concord_add_knapsack(concord_graph *g, int32_t degree,
                                     const int32_t *vars, const bool *negated,
                                     const double *costs, double budget,
                                     int32_t *factor);

/* PAIR (Ising): scores `score` when both variables are 1. It owns one
 * additional output, P(both are 1), whose score is `score`. */
CONCORD_API int concord_add_pair(concord_graph *g, int32_t var1, int32_t var2,
                                 double score, int32_t *factor);

/* Multi-valued variables: `num_states` binary variables (one per state,
 * ids *first .. *first + num_states - 1) that are one-hot. With `one_hot`
 * an XOR factor over the states enforces it; pass false only when DENSE
 * factors over the variable already do (their configurations are one-hot).
 * scores (num_states, NULL: zeros) are the state scores. The multi-variable
 * is registered (for decoding) with the next multi-variable id. */
CONCORD_API int concord_add_multi_variable(concord_graph *g, int32_t num_states,
                                           const double *scores, bool one_hot,
                                           int32_t *first);

/* Registered multi-variables, in order of creation: first state variable
 * and number of states. */
CONCORD_API int32_t concord_num_multi_variables(const concord_graph *g);
CONCORD_API int concord_multi_variable(const concord_graph *g, int32_t m, int32_t *first,
                                       int32_t *num_states);

/* The labels of multi-variable m's states, num_states of them in state
 * order: for a graph read from a UAI model, the model's state numbers that
 * evidence and zero potentials left; otherwise 0, 1, ... These are the
 * labels concord_solver_decoded_labels gives and
 * concord_assignment_from_labels takes. */
CONCORD_API int concord_multi_variable_labels(const concord_graph *g, int32_t m,
                                              int32_t *labels);

/* DENSE: a full score table over the joint states of n_vars multi-valued
 * variables. vars lists the binary state variables of each multi-variable
 * in turn (num_states[0] of them, then num_states[1], ...). The factor owns
 * one additional output per joint state, P(joint state), scored by
 * scores[...] in row-major order, the last variable changing fastest (NULL:
 * zeros). A score of -INFINITY forbids that joint state (a hard
 * constraint, e.g. a zero probability); its additional score is then 0 and
 * it stays forbidden when scores are changed later: a score set there later
 * (by concord_set_additional_scores, concord_solver_set_scores or a
 * factor's own call; -INFINITY included) reads as 0. At least one joint
 * state must be allowed (CONCORD_EINFEASIBLE otherwise, and the graph is
 * unchanged). The factor's configurations are one-hot in each variable. */
CONCORD_API int concord_add_dense(concord_graph *g, int32_t n_vars, const int32_t *num_states,
                                  const int32_t *vars, const double *scores,
                                  int32_t *factor);

/* ---- Structured factors: trees and matchings ---------------------------
 * Both have a MAP oracle only (their QP goes through the generic active
 * set), no additional outputs, and links that cannot be negated. */

/* TREE options, bit flags. 0 is AD3's ARBORESCENCE: non-projective trees
 * with any number of children of the root. */
enum concord_tree_flags {
    CONCORD_TREE_PROJECTIVE = 1, /* no crossing arcs: every token between a
                                    head and its modifier descends from the
                                    head (the root is node 0, leftmost) */
    CONCORD_TREE_SINGLE_ROOT = 2 /* exactly one arc leaves the root */
};

/* TREE: dependency trees over a sentence of `length` nodes (>= 2, at most
 * 4096), the root 0 and the tokens 1 .. length-1 (AD3's "sentence length
 * counting the root"). Arc k goes from heads[k] to modifiers[k] and is the
 * binary variable vars[k] (k < n_arcs); arcs must be distinct, with heads
 * in [0, length), modifiers in [1, length) and head != modifier. The
 * factor's configurations are the sets of given arcs in which every token
 * has exactly one head and descends from the root; arcs that were not
 * given can never be used. `flags` restricts them (CONCORD_TREE_*). When no
 * such tree exists over the given arcs, nothing is added and the call
 * returns CONCORD_EINFEASIBLE with a message. MAP oracle: Chu-Liu-Edmonds
 * / Tarjan in O(length^2) (single root included), or O(n_arcs log n_arcs)
 * when at most half of the possible arcs are given; Eisner's algorithm in
 * O(length^3) when projective. */
CONCORD_API int concord_add_tree(concord_graph *g, int32_t length, int32_t n_arcs,
                                 const int32_t *heads, const int32_t *modifiers,
                                 const int32_t *vars, unsigned flags, int32_t *factor);

/* MATCHING options, bit flags. 0: every row and every column is matched
 * at most once (any partial matching, the empty one included). */
enum concord_matching_flags {
    CONCORD_MATCHING_EVERY_ROW = 1, /* every row exactly once (rows <= cols) */
    CONCORD_MATCHING_EVERY_COL = 2, /* every column exactly once (cols <= rows) */
    CONCORD_MATCHING_PERFECT = 3    /* both: a perfect matching (rows == cols) */
};

/* MATCHING: a bipartite matching between `rows` and `cols` items (each
 * >= 1). vars holds rows * cols distinct variables in row-major order:
 * vars[i * cols + j] is 1 when row i is matched to column j. The factor's
 * configurations use each row and each column at most once, and every row
 * and/or column exactly once as `flags` says (CONCORD_MATCHING_*); a flag
 * that cannot be met (EVERY_ROW with rows > cols, EVERY_COL with cols >
 * rows) gives CONCORD_EINFEASIBLE. MAP oracle: the Hungarian method with
 * shortest augmenting paths, O(min^2 (rows + cols)) where min is the
 * smaller side. */
CONCORD_API int concord_add_matching(concord_graph *g, int32_t rows, int32_t cols,
                                     const int32_t *vars, unsigned flags, int32_t *factor);
/* ---- end of structured factors: trees and matchings ---- */
/* ------------------------------------------------------------------------
 * Structured factors: sequences, head automata, summarization
 *
 * Their links cannot be negated and their configurations are described
 * below; each has an exact MAP oracle (dynamic programming) and its QP
 * comes from the generic active set. `scores` are the scores of the
 * factor's additional outputs in the order given (NULL: zeros). A score of
 * -INFINITY forbids its output, as in DENSE: no configuration uses it (a
 * sequence's forbidden transition, BIO's O -> I-X say). The factor stores
 * 0 in its place, and a score set there later (-INFINITY included) reads
 * as 0, as for DENSE; which outputs are forbidden is part of the
 * structure. When every configuration uses one, the result is
 * CONCORD_EINFEASIBLE.
 * The layouts are AD3's, so that .fg files map onto these calls one to one
 * (docs/formats.md; BINARY_TREE, BINARY_TREE_COUNTS and COMPRESSION_BUDGET
 * have no .fg line). On error the graph is unchanged.
 * ------------------------------------------------------------------------ */

/* SEQUENCE: a chain of `length` >= 1 positions; position i takes one of
 * num_states[i] >= 1 states. vars lists the binary state indicators
 * position by position (num_states[0] of them, then num_states[1], ...);
 * a configuration switches on one state per position. Additional outputs
 * (the transitions the configuration uses are on): start -> position 0
 * (num_states[0]), then for i = 1 .. length-1 the num_states[i-1] x
 * num_states[i] table from position i-1 to i, row-major with the previous
 * state first, then position length-1 -> stop (num_states[length-1]). */
CONCORD_API int concord_add_sequence(concord_graph *g, int32_t length, const int32_t *num_states,
                                     const int32_t *vars, const double *scores, int32_t *factor);

/* SEQUENCE_BUDGET: a SEQUENCE in which at most `budget` >= 0 positions are
 * in state 0 (AD3's convention: state 0 is the one that counts, e.g. a
 * kept word). Positions with a single state are always in state 0, so
 * their number must not exceed the budget (CONCORD_EINFEASIBLE). */
CONCORD_API int concord_add_sequence_budget(concord_graph *g, int32_t length,
                                            const int32_t *num_states, const int32_t *vars,
                                            int32_t budget, const double *scores,
                                            int32_t *factor);

/* HEAD_AUTOMATON (dependency parsing with consecutive siblings): vars are
 * the arcs from one head to its n_modifiers >= 0 candidate modifiers on
 * one side, nearest first (vars may be NULL when there are none). Any
 * subset may be on; the chosen ones m_1 < ... < m_k (numbered 1..n) form
 * the chain 0 -> m_1 -> ... -> m_k -> n+1, where 0 is the head and n+1 the
 * end. Additional outputs: one per pair (m, s), 0 <= m < s <= n+1, ordered
 * by m then s, on when m and s are consecutive in the chain; there are
 * (n+1)(n+2)/2 of them. */
CONCORD_API int concord_add_head_automaton(concord_graph *g, int32_t n_modifiers,
                                           const int32_t *vars, const double *scores,
                                           int32_t *factor);

/* GRANDPARENT_HEAD_AUTOMATON: a HEAD_AUTOMATON whose head also takes
 * exactly one of n_grandparents >= 1 incoming arcs (its own head). vars:
 * the n_grandparents arcs g -> head, then the n_modifiers arcs as in
 * HEAD_AUTOMATON. Additional outputs: first n_grandparents x n_modifiers
 * grandparent outputs (g, m), g-major, on when g is the chosen grandparent
 * and m a chosen modifier; then the (n+1)(n+2)/2 sibling pairs. */
CONCORD_API int concord_add_grandparent_head_automaton(concord_graph *g, int32_t n_grandparents,
                                                       int32_t n_modifiers, const int32_t *vars,
                                                       const double *scores, int32_t *factor);

/* GENERAL_TREE: a tree-shaped Markov random field over n_nodes >= 1 nodes;
 * node i takes one of num_states[i] states. parents[0] must be -1 (node 0
 * is the root) and parents[i], i >= 1, another node, such that every node
 * descends from the root. vars lists the state indicators node by node.
 * Additional outputs: for each node i = 1 .. n_nodes-1 in turn, the
 * num_states[parents[i]] x num_states[i] table of (parent state, node
 * state), row-major with the parent's state first; a configuration is one
 * state per node with the n_nodes-1 edge states it uses. */
CONCORD_API int concord_add_general_tree(concord_graph *g, int32_t n_nodes,
                                         const int32_t *num_states, const int32_t *parents,
                                         const int32_t *vars, const double *scores,
                                         int32_t *factor);

/* GENERAL_TREE_COUNTS: a GENERAL_TREE that also counts its nodes in state
 * 0: vars continue, after the state indicators, with n_nodes + 1 count
 * indicators (count = 0, 1, ..., n_nodes), exactly one of which is on. The
 * additional outputs are those of GENERAL_TREE. */
CONCORD_API int concord_add_general_tree_counts(concord_graph *g, int32_t n_nodes,
                                                const int32_t *num_states,
                                                const int32_t *parents, const int32_t *vars,
                                                const double *scores, int32_t *factor);

/* BINARY_TREE (AD3's FactorBinaryTree): a GENERAL_TREE over n_nodes >= 1
 * nodes of two states each, with one link per node: vars[i] is on when
 * node i is in state 1 (state 0 has no indicator and scores 0). parents as
 * for GENERAL_TREE. Additional outputs: for each node i = 1 .. n_nodes-1
 * in turn, the 2 x 2 table (parent state, node state), row-major. */
CONCORD_API int concord_add_binary_tree(concord_graph *g, int32_t n_nodes,
                                        const int32_t *parents, const int32_t *vars,
                                        const double *scores, int32_t *factor);

/* BINARY_TREE_COUNTS (AD3's FactorBinaryTreeCounts): a BINARY_TREE with
 * count scores. The count of node i is the number of nodes of its subtree
 * (itself included) that are on and counted (counted NULL: every node is);
 * the nodes with has_count_scores[i] (NULL: the root only) score it.
 * Additional outputs: the edge tables of BINARY_TREE, then, for each node
 * i with count scores in node order, size_i + 1 count indicators (counts
 * 0 .. size_i, size_i the number of nodes of i's subtree), the one of i's
 * count on. With max_bins >= 1, counts of max_bins - 1 and more share one
 * bin: they switch on (and are scored by) indicator max_bins - 1, and the
 * indicators above it are never on; max_bins = 0: no sharing. */
CONCORD_API int concord_add_binary_tree_counts(concord_graph *g, int32_t n_nodes,
                                               const int32_t *parents, const bool *counted,
                                               const bool *has_count_scores, int32_t max_bins,
                                               const int32_t *vars, const double *scores,
                                               int32_t *factor);

/* COMPRESSION_BUDGET (AD3's FactorCompressionBudget): a chain of `length`
 * >= 1 tokens, each kept or not, at most `budget` >= 0 of those with
 * counted[i] (NULL: all of them) kept. vars: the length token indicators,
 * then one bigram indicator per entry of bigram_positions: position k, in
 * [-1, length) and distinct, names the transition into token k + 1, and
 * its indicator is on when that transition joins two kept tokens (for -1:
 * the start into a kept token 0; for length - 1: a kept last token into
 * the end). Additional outputs: the chain's transitions as in SEQUENCE
 * with two states (1 = kept): start -> token 0 (2), one 2 x 2 table per
 * pair of consecutive tokens (previous state first), last token -> stop
 * (2), skipping the entries that bigram indicators stand for: 4 length -
 * n_bigrams in all. */
CONCORD_API int concord_add_compression_budget(concord_graph *g, int32_t length, int32_t budget,
                                               const bool *counted, int32_t n_bigrams,
                                               const int32_t *bigram_positions,
                                               const int32_t *vars, const double *scores,
                                               int32_t *factor);

/* SEQUENCE_COMPRESSOR (sentence compression): vars are n_words >= 0 word
 * indicators, any subset of which may be on, then one sentence indicator,
 * on exactly when some word is. Additional outputs: the (n+1)(n+2)/2 pairs
 * (m, s), 0 <= m < s <= n+1, ordered by m then s, on when m and s are
 * consecutive in 0 -> kept words -> n+1 (0 and n+1 stand for the sentence
 * boundaries; words are numbered 1..n). */
CONCORD_API int concord_add_sequence_compressor(concord_graph *g, int32_t n_words,
                                                const int32_t *vars, const double *scores,
                                                int32_t *factor);

/* ------------------------------------------------------------------------
 * (end of structured factors: sequences, head automata, summarization)
 * ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------
 * User factors: any factor with a MAP oracle of your own
 * ------------------------------------------------------------------------ */

/* A user factor's MAP oracle. Given the scores of the factor's links
 * (variable_scores, one per link in the order given to concord_add_factor,
 * already flipped for negated links: the oracle sees literals) and of its
 * additional outputs (additional_scores, num_additionals entries), it
 * writes a best allowed configuration: variable_values, 0 or 1 per link,
 * and additional_values, any real in [-1, 1] per additional output (the
 * built-in factors' are indicators, as PAIR's "both are 1"; a larger
 * value is its score's to carry: decoding and the losses recognize a
 * configuration by link scores that must outweigh b . v); and its score
 * variable_scores . variable_values + additional_scores . additional_values
 * in *value. It returns 0, or any nonzero value to report an error, which
 * ends the solve with CONCORD_ECALLBACK (status "callback_failed").
 *
 * The factor's polytope is the convex hull of the configurations the
 * oracle can return; every solver reaches it only through the oracle (the
 * generic active set solves its QPs), so AD3, LP-SparseMAP, decoding, the
 * losses and the backward pass all work on it. An oracle must be
 * deterministic (the same scores give the same configuration), and must be
 * reentrant when solvers over its graph run on several threads
 * (concord_solve_batch): calls for different solvers may run at once, with
 * the same `user` pointer. It cannot call the solver that is running it
 * nor change the graph: while a call that may run callbacks is on a
 * solver, the solver refuses every other call that returns a code, and
 * the graph refuses to change (CONCORD_EINVAL with a message; it must not
 * free either). Other solvers of the graph may be used, but for those a
 * running batch holds (see concord_solve_batch). */
typedef int (*concord_map_fn)(void *user, const double *variable_scores,
                              const double *additional_scores, double *variable_values,
                              double *additional_values, double *value);

/* An optional closed form of the same factor's quadratic problem:
 *   argmax over the polytope of  a.u + b.v - 1/2 sum_i d_i u_i^2,
 * with a = variable_scores, b = additional_scores, d = weights (> 0), all
 * in link order (literals, as for the oracle); it writes u to
 * variable_values and v to additional_values, and returns 0 or an error
 * as concord_map_fn does. When given it replaces the active set in the
 * forward passes; the backward pass and concord_solver_factor_distribution
 * still use the active set at the final inputs. Its answer is trusted:
 * only its range is checked (u in [0, 1], v in [-1, 1]; CONCORD_ECALLBACK
 * otherwise), and a point that is not the QP's solution (outside the
 * polytope, or not its best point) makes the solve's answer wrong, with a
 * status that may say it converged. */
typedef int (*concord_qp_fn)(void *user, const double *variable_scores,
                             const double *additional_scores, const double *weights,
                             double *variable_values, double *additional_values);

/* Adds a factor over `degree` >= 1 distinct variables (negated may be NULL)
 * with num_additionals >= 0 additional outputs scored by
 * additional_scores (NULL: zeros), whose configurations are
 * given by the oracle `map` (required). `user` is passed to the oracle and
 * must outlive the graph. The factor's id goes to *factor (may be NULL). */
CONCORD_API int concord_add_factor(concord_graph *g, int32_t degree, const int32_t *vars,
                                   const bool *negated, int32_t num_additionals,
                                   const double *additional_scores, concord_map_fn map,
                                   void *user, int32_t *factor);

/* Gives user factor `factor` a closed-form QP (NULL removes it); it is
 * called with the factor's `user` pointer. CONCORD_EINVAL when `factor`
 * is not a user factor. It changes the graph's structure: the solvers
 * made before refuse to work (see concord_solver_new). */
CONCORD_API int concord_set_factor_qp(concord_graph *g, int32_t factor, concord_qp_fn qp);

/* ------------------------------------------------------------------------
 * Sizes and scores
 * ------------------------------------------------------------------------ */

/* Number of binary variables (a multi-variable counts one per state). */
CONCORD_API int32_t concord_num_variables(const concord_graph *g);
/* Number of factors, with the XOR each concord_add_multi_variable with
 * one_hot added. */
CONCORD_API int32_t concord_num_factors(const concord_graph *g);
/* Total number of factor additional outputs (PAIR: 1 each). */
CONCORD_API int32_t concord_num_additionals(const concord_graph *g);

/* The additional outputs of factor f occupy the global indices
 * *first .. *first + *count - 1 (in order of factor creation). */
CONCORD_API int concord_factor_additionals(const concord_graph *g, int32_t f,
                                           int32_t *first, int32_t *count);

/* Factor f's degree: its number of links. */
CONCORD_API int concord_factor_degree(const concord_graph *g, int32_t f, int32_t *degree);

/* Factor f's links, in the order it was given them: the variable of each
 * (vars, degree entries) and whether the link is negated (negated), as
 * given to the builder (an XOROUT, ANDOUT or IMPLY is solved as an XOR,
 * OROUT or OR over some links flipped; those are reported unflipped).
 * Either output may be NULL. */
CONCORD_API int concord_factor_variables(const concord_graph *g, int32_t f, int32_t *vars,
                                         bool *negated);

/* The graph's scores can be changed between solves without rebuilding it
 * (solvers that have no scores of their own read them at each solve).
 * Variable scores [first, first+count) and additional scores [first,
 * first+count) in the global additional index; at a forbidden output
 * (-INFINITY when its factor was added) the score reads as 0, and may be
 * -INFINITY. */
CONCORD_API int concord_set_variable_scores(concord_graph *g, int32_t first,
                                            int32_t count,
                                            const double *scores);
CONCORD_API int concord_set_additional_scores(concord_graph *g, int32_t first,
                                              int32_t count,
                                              const double *scores);
/* Read-only views of the current scores (lengths: num_variables,
 * num_additionals). Valid until the graph is changed or freed. */
CONCORD_API const double *concord_variable_scores(const concord_graph *g);
CONCORD_API const double *concord_additional_scores(const concord_graph *g);

/* LP-SparseMAP's regularization weights: its objective is
 *   theta.u + phi.v - 1/2 sum_i w_i u_i^2,
 * with w_i = 1 for every variable unless set here (LP-MAP, exact MAP and
 * the dual methods ignore them). Sets w for variables [first,
 * first+count), each in [CONCORD_MIN_REGULARIZATION,
 * CONCORD_MAX_REGULARIZATION] (CONCORD_EINVAL otherwise). One use: a
 * variable that stands for k copies held equal by factors (a factor that
 * repeats a variable, say) counts once when each copy weighs 1/k. One
 * ADMM penalty serves every variable, so weights spread over several
 * orders of magnitude, or far above 1, can take many more iterations
 * (docs/performance.md). The
 * weights belong to the structure: a solver made before they changed must
 * be made again (its calls fail); setting the values they already have
 * changes nothing. */
#define CONCORD_MIN_REGULARIZATION 1e-6
#define CONCORD_MAX_REGULARIZATION 1e6
CONCORD_API int concord_set_regularization(concord_graph *g, int32_t first, int32_t count,
                                           const double *weights);
/* A read-only view of the weights (length num_variables), valid until the
 * graph is changed or freed. */
CONCORD_API const double *concord_regularization(const concord_graph *g);

/* ------------------------------------------------------------------------
 * Solvers
 * ------------------------------------------------------------------------ */

/* Everything a solve produces or keeps (see the top of this file). */
typedef struct concord_solver concord_solver;

/* Progress of a running solve, as passed to a concord_progress_fn. */
typedef struct concord_progress {
    int32_t iteration;      /* iterations run so far (branch and bound: the
                               ADMM iterations of all its nodes) */
    double value;           /* objective at the current consensus (PSDD and
                               MPLP: of the best rounded assignment so far;
                               branch and bound: of the best assignment so
                               far, -INFINITY before the first; a graph
                               whose factors share no variable, solved
                               factor by factor: -INFINITY) */
    double upper_bound;     /* best dual bound so far (branch and bound: on
                               the MAP value, over the nodes still open;
                               factor by factor: +INFINITY) */
    double primal_residual; /* as in concord_info (MPLP: 0) */
    double dual_residual;
    double eta;             /* current penalty (relative; PSDD: the step
                               size, relative; MPLP: 0) */
    double seconds;         /* wall time since the solve started */
    int64_t nodes;          /* branch and bound: nodes solved so far (else 0) */
    int64_t open_nodes;     /* branch and bound: nodes waiting (else 0) */
} concord_progress;

/* Called during a solve (see concord_settings.progress); returning nonzero
 * stops the solve, which then ends with status "interrupted" and its
 * current point as the solution (but for an exact MAP search whose gap is
 * closed already: "optimal"). Like a user factor's oracle, it cannot
 * call the solver that is running it nor change its graph (both refuse
 * with CONCORD_EINVAL, see concord_map_fn). */
typedef int (*concord_progress_fn)(void *context, const concord_progress *progress);

/* Branch and bound's order of search (concord_settings.search). */
typedef enum concord_search {
    CONCORD_SEARCH_BEST_FIRST = 0, /* the open node with the highest bound
                                      next (ties: the deepest, the newest) */
    CONCORD_SEARCH_DEPTH_FIRST     /* the last node opened next */
} concord_search;

/* PSDD's step-size rules (concord_settings.psdd_step); psdd_eta is the
 * initial step, relative to the RMS of the link-level scores. */
typedef enum concord_step_rule {
    CONCORD_STEP_SQRT = 0, /* eta_t = psdd_eta / sqrt(t) */
    CONCORD_STEP_DECREASE, /* eta_t = psdd_eta / (1 + k), k the number of
                              iterations so far at which the dual went up */
    CONCORD_STEP_POLYAK    /* eta_t = gamma (dual_t - best value) / |g_t|^2,
                              the best value being that of the best rounded
                              assignment so far (psdd_eta / sqrt(t) until
                              there is one), gamma from 1, halved whenever
                              20 iterations pass without a better bound */
} concord_step_rule;

/* The range of the relative ADMM penalty: concord_settings.eta must lie in
 * it, and the adapting penalty of LP-MAP stays in it. */
#define CONCORD_MIN_ETA 1e-4
#define CONCORD_MAX_ETA 1e4

/* What a solve may do: concord_default_settings fills the defaults given
 * below, concord_check_settings checks the ranges (every solve checks
 * them too: CONCORD_EINVAL with a message naming the setting). */
typedef struct concord_settings {
    int32_t max_iter;   /* ADMM iteration cap (PSDD: iterations; MPLP:
                           sweeps); >= 1, default 100000 */
    double tol;         /* stop when the largest disagreement between a
                           factor and the consensus, and the largest change
                           of the consensus (scaled by the penalty: see
                           concord_info.dual_residual), are both below
                           tol; in (0, 1), default 1e-6 */
    double eta;         /* initial ADMM penalty, relative to the score scale
                           of the graph (scale-invariant); in
                           [CONCORD_MIN_ETA, CONCORD_MAX_ETA], default 0.1 */
    bool adapt_eta;     /* rebalance the penalty from the residuals
                           (default true) */
    double relaxation;  /* over-relaxation factor in [1, 2) (default 1:
                           none) */
    int32_t bound_every; /* compute the dual bound every N iterations
                            (>= 1, default 25) */
    int32_t max_inner_iter; /* oracle calls per active-set solve (factors
                               without a closed form; >= 1, default 1) that
                               check or improve its solution, beside the
                               one that starts an empty active set; an
                               unfinished solve resumes at the next
                               iteration, with at least 10 calls after an
                               iteration whose residuals were within tol */
    int32_t acceleration; /* Anderson acceleration memory (0: off, at
                             most 16, default 8): the ADMM iterates are
                             extrapolated from the last `acceleration`
                             residuals, with safeguards,
                             LP-MAP's from iteration 40 on (solves that end
                             sooner gain nothing from it), LP-SparseMAP's
                             from the start; at most 5 until iteration 80
                             (enough for most graphs, cheaper) */
    bool warm_start;    /* start from the solver's previous solution
                           (multipliers, consensus, penalty, active sets)
                           when its last solve was of the same kind; false:
                           every solve starts cold and repeats bit for bit;
                           default true */
    double time_limit;  /* wall-clock seconds per solve (>= 0; 0, the
                           default: none); a solve that reaches it ends
                           with status "time_limit" */
    concord_progress_fn progress; /* NULL: none. Called with a fresh dual
                                     bound that did not end the solve:
                                     every bound_every iterations, every 5
                                     while the residuals are below tol,
                                     after every MPLP sweep; the exact
                                     search's, when its best value
                                     improves and every 100 nodes or
                                     0.1 s (within a node's solve too);
                                     from the thread running the solve */
    void *progress_context;       /* passed to progress */
    double backward_tol;  /* backward pass: residual to stop at, relative
                             to the incoming gradient (positive and
                             finite, default 1e-10) */
    int32_t backward_max_iter; /* backward pass: iteration cap (>= 1,
                                  default 1000) */
    bool backward_power;  /* backward pass by the power iteration of the
                             LP-SparseMAP paper instead of conjugate
                             gradients (default false) */
    bool acyclic;         /* solve acyclic graphs exactly by max-product
                             dynamic programming, without iterating (default
                             true): concord_solver_exact whenever the graph
                             is a forest, concord_solver_map when LP-MAP is
                             then integral (see concord_solver_map) */
    int64_t node_limit;   /* branch and bound: nodes solved at most (0, the
                             default: no limit); the search then ends with
                             status "node_limit" */
    concord_search search; /* branch and bound's order (default best first) */
    double exact_gap;     /* branch and bound: a node is pruned, and the
                             search ends, when the upper bound exceeds the
                             best value by at most exact_gap times the
                             larger of the two, or by less than moving the
                             least-scored variable by exact_gap changes,
                             or by less than the rounding of a sum of the
                             scores (1024 DBL_EPSILON times the sum of the
                             linked variables' and additional |scores|:
                             beside a score of 1e300, differences below
                             about 2e287 are not seen)
                             (default 1e-9; in [0, 1)): the stopping rule
                             of LP-MAP (concord_solver_map) with exact_gap
                             for tol, the variables in no factor aside
                             (they are at their best in every assignment
                             compared);
                             with every score 0, any allowed assignment is
                             optimal */
    int32_t heuristic_every; /* branch and bound: decode an assignment from
                                the LP solution of every N-th node that is
                                neither pruned nor integral (default 1; 0:
                                only at the root) */
    concord_step_rule psdd_step; /* PSDD's step-size rule (default SQRT) */
    double psdd_eta;      /* PSDD's initial step, relative to the score scale
                             (default 1; at least 1e-12: smaller steps move
                             nothing, and subnormal ones overflowed the
                             step-weighted average) */
} concord_settings;

/* Fills *s with the defaults. */
CONCORD_API void concord_default_settings(concord_settings *s);

/* CONCORD_OK when every setting is in range; otherwise CONCORD_EINVAL and
 * a message naming the setting in `error` (may be NULL). */
CONCORD_API int concord_check_settings(const concord_settings *s, char *error,
                                       size_t error_size);

/* What a solve reports. Every solve function writes it when given one; a
 * solve refused before it runs (a stale or busy solver, settings out of
 * range) leaves status CONCORD_STATUS_UNSOLVED and every figure 0. */
typedef struct concord_info {
    int status;             /* enum concord_status */
    int32_t iterations;     /* ADMM iterations run */
    double value;           /* objective at the returned solution:
                               theta . u + phi . v (LP-SparseMAP: minus
                               sum_i w_i u_i^2 / 2) */
    double upper_bound;     /* best dual bound on the LP-MAP value */
    double primal_residual; /* max_link |u_factor - u_consensus| (PSDD
                               returning its average: the averaged
                               copies' against the average) */
    double dual_residual;   /* eta * max_var |change of u_consensus|,
                               relative to the score scale (LP-MAP,
                               scale-invariant) or absolute and each
                               change divided by the variable's weight w
                               (LP-SparseMAP, whose w u^2 / 2 has
                               curvature w) */
    bool integral;          /* every variable is 0 or 1 */
    double eta;             /* final penalty (relative) */
    double seconds;         /* wall time of the solve */
    int64_t factor_solves;  /* factor QPs solved (skipped ones excluded;
                               PSDD and MPLP: factor MAP and max-marginal
                               computations) */
    int64_t oracle_calls;   /* MAP oracle calls made by active-set solves
                               (AD3, LP-SparseMAP, exact MAP's node solves);
                               PSDD, MPLP and dynamic programming: every
                               call the solve made */
    bool acyclic;           /* solved exactly by max-product dynamic
                               programming over the acyclic graph, in one
                               pass (iterations 1), value == upper_bound */
} concord_info;

/* Creates a solver over graph g, sized for its current structure: this is
 * where the memory of the ADMM solves (concord_solver_map and
 * concord_solver_sparse) is allocated; they allocate only when their
 * settings ask for more acceleration memory than the default or a factor's
 * active set outgrows what it has. The rest allocates what it needs when
 * called: the analysis of the graph that settings.acyclic, MPLP and branch
 * and bound use (kept, made by the first solve that needs it: it asks the
 * factors' oracles, and a solve is where a user oracle's error is
 * reported), branch and bound's open nodes, decoding, factor distributions
 * and losses. The solver reads g's scores
 * until given its own (concord_solver_set_scores). g must outlive the
 * solver, and must not change while a solver of g is used from another
 * thread; while a solver of g is in a call that may run g's callbacks
 * (a solve, decoding, a loss, backward, a factor distribution), g refuses
 * to change (CONCORD_EINVAL), from those callbacks in particular; after a
 * change of g's structure (new variables or factors, regularization
 * weights, a user factor's QP callback) the solver refuses to work
 * (CONCORD_EINVAL): create a new one. */
CONCORD_API int concord_solver_new(const concord_graph *g, concord_solver **out);

/* Frees a solver. NULL is allowed. */
CONCORD_API void concord_solver_free(concord_solver *s);

/* The graph a solver works on. */
CONCORD_API const concord_graph *concord_solver_graph(const concord_solver *s);

/* The message of the last error on this solver: every solver function
 * that returns a code clears it when called, so it is "" after one that
 * succeeded; except the three that only read a const solver
 * (concord_solver_distribution_entry, concord_solver_exact_info and
 * concord_solver_decoded_labels), which neither set nor clear it: their
 * CONCORD_EINVAL comes without a message, and the message left is an
 * earlier call's. A callback's refused call on its own solver leaves its
 * message here as any failure does. A call refused because another
 * thread's call runs on the solver, or a running batch holds it, cannot
 * write here (that call owns the message): this function gives the
 * refusal on the refused thread alone, until that thread's next call on
 * the solver is taken; other threads read a constant message while that
 * call runs. */
CONCORD_API const char *concord_solver_last_error(const concord_solver *s);

/* The nonzero value a user factor's callback returned when the last call
 * on this solver ended with CONCORD_ECALLBACK for that reason; 0 otherwise
 * (also when the callback wrote an invalid configuration). With solvers
 * over one graph on several threads, the value says whose failure was
 * whose: an oracle may return a code of its own that identifies the
 * failure (INT_MIN is reserved). Cleared, as the message is, by every
 * solver function that returns a code (but the three read-only ones named
 * at concord_solver_last_error). */
CONCORD_API int concord_solver_callback_code(const concord_solver *s);

/* Gives the solver its own scores: variable_scores (num_variables) and
 * additional_scores (num_additionals), copied; NULL for either means the
 * graph's (read at each solve). So N solvers over one graph hold N score
 * sets. Forbidden outputs' scores read as 0, as for
 * concord_set_additional_scores. On error (a score out of range) nothing
 * changes. */
CONCORD_API int concord_solver_set_scores(concord_solver *s, const double *variable_scores,
                                          const double *additional_scores);

/* The scores the solver uses (its own, or the graph's): num_variables and
 * num_additionals values. NULL once the graph's structure has changed
 * since the solver was created (its sizes are no longer the graph's). */
CONCORD_API const double *concord_solver_variable_scores(const concord_solver *s);
CONCORD_API const double *concord_solver_additional_scores(const concord_solver *s);

/* LP-MAP by AD3 (ADMM on the local polytope relaxation). Returns CONCORD_OK
 * when converged, CONCORD_ENOTCONVERGED when stopped before (max_iter, time
 * limit, interrupt; the solution and info are filled in), or an error.
 * `settings` may be NULL (defaults); `info` may be NULL.
 *
 * With settings.acyclic (the default), a graph on which LP-MAP equals MAP
 * for any scores is solved exactly by max-product dynamic programming
 * instead, in one pass (info.acyclic, status "integral", value ==
 * upper_bound): its factor graph is a forest once each multi-variable is
 * taken as one node (its own XOR then inside it), no factor's polytope has
 * fractional vertices (KNAPSACK), and no factor can switch on two states
 * of one multi-variable. The first solve on a solver checks this (a few
 * oracle calls for the factors over multi-variables) and remembers it. */
CONCORD_API int concord_solver_map(concord_solver *s, const concord_settings *settings,
                                   concord_info *info);

/* LP-SparseMAP (Niculae and Martins 2020): the same ADMM loop for
 *   max over the local polytope of  theta.u + phi.v - |u|^2 / 2,
 * a sparse, differentiable relaxation; on a graph with a single factor it
 * is that factor's SparseMAP. (|u|^2 is sum_i w_i u_i^2 when
 * concord_set_regularization set weights w.) Returns and fills as concord_solver_map;
 * info->value is this objective and info->upper_bound the LP-MAP bound
 * (which also bounds it). concord_solver_backward differentiates it. */
CONCORD_API int concord_solver_sparse(concord_solver *s, const concord_settings *settings,
                                      concord_info *info);

/* The last solution: variable values u (length num_variables, each in
 * [0, 1]) and factor additional values v (length num_additionals; in
 * [0, 1] too, but for user factors' outputs, which lie in [-1, 1]). A
 * solve that ends with every variable within min(10 tol, 1e-3) of 0 or 1,
 * at a point every factor allows, returns that 0/1 point (status
 * "integral"), the factors' additional values their own there. NULL before any solve,
 * after one that failed (a callback's error, out of memory, non-finite
 * values: CONCORD_ECALLBACK, CONCORD_ENOMEM, CONCORD_ENUMERIC), and once
 * the graph's structure has changed since the solver was created. After
 * CONCORD_EINFEASIBLE the ADMM solves leave their last iterate here (as
 * AD3 returns it; the acyclic path and branch and bound leave NULL), which
 * is no solution: decoding, distributions, backward and warm starts
 * refuse it.
 * Valid until the next solve on this solver, or its free. */
CONCORD_API const double *concord_solver_variables(const concord_solver *s);
CONCORD_API const double *concord_solver_additionals(const concord_solver *s);

/* The ADMM state of the last concord_solver_map or concord_solver_sparse,
 * one value per link (the links of the factors in order of creation, each
 * factor's in the order it was given them, so sum of the degrees values):
 * the multipliers (factor f's subproblem at a link of variable i sees the
 * score theta_i / deg_i + its multiplier; the dual bound is the sum over
 * factors of their MAP values at those scores, plus the sum over
 * variables of max(0, -sum of their multipliers)) and each factor's copy
 * of its variables. A solve by dynamic programming (info.acyclic, of
 * concord_solver_map or concord_solver_exact) has no multipliers: its
 * copies are the solution's values and its multipliers 0. Either may be
 * NULL. CONCORD_EINVAL before a solve. */
CONCORD_API int concord_solver_links(concord_solver *s, double *multipliers, double *copies);

/* Factor f on its own, at the scores given (not the solver's): the MAP
 * oracle of its polytope. variable_scores: one per link, in link order
 * (negated links are flipped inside, as in a solve); additional_scores:
 * its additional outputs' (NULL: those the solver uses). Writes the best
 * configuration, u (degree values, in variable space) and v (its
 * additional outputs), either of which may be NULL, and its score to
 * *value (may be NULL). The solver's state is not touched. */
CONCORD_API int concord_solver_factor_map(concord_solver *s, int32_t f,
                                          const double *variable_scores,
                                          const double *additional_scores, double *u, double *v,
                                          double *value);

/* Factor f on its own: the QP
 *   argmax over its polytope of  a.u + b.v - 1/2 sum_i w_i u_i^2,
 * a = variable_scores, b = additional_scores (NULL: the solver's), w =
 * weights (between 1e-300 and 1e300, as scores, the largest at most
 * 1e300 times the smallest: CONCORD_EINVAL otherwise; NULL: all 1, which
 * makes it the factor's SparseMAP).
 * u (required) and v (may be NULL) receive the solution. With count not
 * NULL, the sparse distribution behind it (a fresh active set's) becomes
 * the solver's last distribution: *count configurations, read with
 * concord_solver_distribution_entry (KNAPSACK has none: CONCORD_EINVAL;
 * a closed form's is CONCORD_ENOTCONVERGED, with u and v its solution,
 * when no distribution within 1e-4 of it is found: a weight far above the
 * others, such as 1e300 beside 1). Factors without a closed form are
 * solved by a fresh active set, from scratch (CONCORD_ENOTCONVERGED if it
 * cannot certify its solution, with u and v the point it reached). The
 * solver's other state is not touched. */
CONCORD_API int concord_solver_factor_qp(concord_solver *s, int32_t f,
                                         const double *variable_scores,
                                         const double *additional_scores, const double *weights,
                                         double *u, double *v, int32_t *count);

/* Exact MAP: the best 0/1 assignment allowed by every factor, with a
 * certificate. On an acyclic graph (settings.acyclic, see
 * concord_solver_map; here LP-MAP need not be integral, and factors that
 * may switch on several states of a multi-variable are enumerated over
 * its states) max-product dynamic programming solves it directly.
 * Otherwise branch and bound over AD3 (Das, Martins and Smith 2012):
 * each node is LP-MAP with some variables fixed, solved by the ADMM loop
 * warm-started from its parent's multipliers and consensus, and stopped as
 * soon as its dual bound (valid at any multipliers) falls to the best
 * value found (the node is then pruned) or falls too slowly to get there
 * soon; an integral LP solution closes its node; otherwise an assignment
 * is decoded from the node's LP solution (concord_solver_decode's search,
 * settings.heuristic_every) and the node is split on its most fractional
 * unit: a binary variable into 0 and 1, a multi-variable (whose states are
 * one-hot) into two sets of states of about equal LP mass. Nodes are
 * taken best first or depth first (settings.search) until the upper bound
 * (the highest bound of an open node, or the best value) is within
 * exact_gap of the best value (see exact_gap), or
 * settings.node_limit, time_limit or the progress callback (called per
 * solved node when the best value improves, and every 100 nodes or 0.1 s,
 * whichever comes first, within a node's solve too, with nodes and
 * open_nodes filled in) stops it. max_iter, tol, eta and the other ADMM settings
 * apply to each node's solve (bound_every at most 10 there).
 *
 * The solution (concord_solver_variables, _additionals, and
 * concord_solver_decoded) is the best assignment found, with its factors'
 * best additional outputs; info->value is its value, info->upper_bound the
 * bound, info->iterations the ADMM iterations of all nodes, status
 * "optimal" when the gap is closed (return CONCORD_OK), also when a limit
 * or the progress callback stopped the search once it was. When stopped
 * early: status "node_limit", "time_limit" or "interrupted" and
 * CONCORD_ENOTCONVERGED; status "max_iter" and CONCORD_ENOTCONVERGED when
 * the search ended with a node whose bound could not close the gap (its LP
 * solve stopped at max_iter, or no variable was left to split on). Either
 * way with the best assignment so far (if none was found, the root's LP
 * solution, info->integral false; stopped before the root's LP was
 * solved, no solution: concord_solver_variables is NULL and decoding
 * refuses, and the bound is the dual bound at the multipliers the solver
 * held). When no assignment satisfies every factor: CONCORD_EINFEASIBLE.
 * Branch and bound allocates as it goes (open nodes, each with its
 * parent's multipliers, at most 256 MiB of them; beyond that nodes start
 * from the solver's current state). Details of the search:
 * concord_solver_exact_info. */
CONCORD_API int concord_solver_exact(concord_solver *s, const concord_settings *settings,
                                     concord_info *info);

/* What the last concord_solver_exact on this solver did. */
typedef struct concord_exact_info {
    int64_t nodes;         /* nodes solved, the root included */
    int64_t pruned;        /* nodes closed by their bound (before or after
                              their solve) */
    int64_t infeasible;    /* nodes whose fixed variables admit no solution */
    int64_t open;          /* nodes left unexplored when the search stopped */
    int64_t improvements;  /* times the best assignment improved */
    int32_t max_depth;     /* deepest node solved (the root is 0) */
    double root_bound;     /* the root's LP-MAP bound */
    double gap;            /* upper_bound - value when the search ended
                              (INFINITY without an assignment) */
    double best_seconds;   /* when the best assignment was found */
    bool acyclic;          /* solved by dynamic programming, no search */
} concord_exact_info;

/* The statistics of the solver's last concord_solver_exact; CONCORD_EINVAL
 * before any. */
CONCORD_API int concord_solver_exact_info(const concord_solver *s, concord_exact_info *out);

/* LP-MAP dual bounds by projected subgradient dual decomposition (PSDD,
 * Komodakis, Paragios and Tziritas 2007): every iteration solves each
 * factor's MAP under the scores theta/deg + lambda and moves lambda along
 * the disagreement with the average, by the step of settings.psdd_step
 * and psdd_eta (the multipliers of each variable keep summing to 0, so
 * the sum of the factors' MAP values is the dual bound). Every
 * bound_every iterations the average is rounded (as concord_solver_decode
 * rounds) and evaluated. The solution is the step-weighted average of the
 * factors' MAPs, which tends to an LP-MAP solution. It stops with status
 * "integral" when the factors agree on a 0/1 point or the best rounded
 * assignment closes the gap to the bound by LP-MAP's rule (within tol
 * of the larger of the two, or below what moving the least-scored
 * variable by tol changes; the solution is then that assignment, a
 * certified MAP); "fractional" when the factors
 * agree on a fractional point (KNAPSACK's vertices; the solution is then
 * that point, an LP-MAP optimum) or, checked every bound_every
 * iterations, the average solves LP-MAP to AD3's tolerances (each factor's
 * averaged copy within tol of the average, the average's value closing
 * the gap to the best bound by that rule); "stalled"
 * (CONCORD_ENOTCONVERGED) when the best bound has not fallen by more than
 * tol * sum |scores| over the last 1000 iterations (and steps of the
 * current size could have moved it by that much) while the average is not
 * such a solution; or at max_iter or time_limit. On graphs whose LP-MAP
 * is fractional a subgradient average rarely reaches tol 1e-6 before the
 * bound stalls: PSDD is then a bound, and the average only an estimate.
 * It starts from the multipliers the solver holds after an LP-MAP solve
 * (AD3, PSDD, MPLP or exact MAP; each variable's made to sum to 0) when
 * settings.warm_start. info->upper_bound is the best dual bound and
 * info->value the solution's value; info->eta the last step (relative).
 * (Here and in MPLP, the gap and the sum leave out the variables in no
 * factor, as exact_gap does.) After it, concord_solver_decode decodes with PSDD's
 * multipliers. */
CONCORD_API int concord_solver_psdd(concord_solver *s, const concord_settings *settings,
                                    concord_info *info);

/* LP-MAP dual bounds by MPLP (Globerson and Jaakkola 2007), block
 * coordinate descent on the dual of the local polytope over units (each
 * multi-variable one unit): every iteration updates the messages of each
 * factor in turn from its max-marginals, which its MAP oracle computes
 * (one call per state of each unit it touches, with the others' messages
 * as scores). Meant for pairwise and DENSE models over multi-variables,
 * it works on any graph whose factors have 0/1 vertices and never switch
 * on two states of one multi-variable (otherwise CONCORD_EINVAL: KNAPSACK,
 * say, or an OR over two states of one multi-variable). The dual never
 * increases, but coordinate descent can stop above the LP optimum. Each
 * iteration (a sweep over the factors) ends with the dual bound and the
 * assignment of the states of largest belief, evaluated. It stops with
 * status "integral" when the best such assignment allowed by every factor
 * closes the gap to the bound by LP-MAP's rule (as PSDD's; the solution
 * is that assignment, a certified MAP); "stalled" (CONCORD_ENOTCONVERGED)
 * when the bound fell by less than tol * sum |scores| over the last 10
 * iterations (the descent is at a fixed point, on the LP optimum or above
 * it), or at
 * max_iter or time_limit; the solution is then the best allowed
 * assignment found, or the last one of largest beliefs when none was
 * allowed (its value -INFINITY). The gap and the sum leave out the
 * variables in no factor (see exact_gap). Every solve starts from zero messages.
 * After it, concord_solver_decode starts from the solution, with the
 * per-link multipliers the beliefs imply. */
CONCORD_API int concord_solver_mplp(concord_solver *s, const concord_settings *settings,
                                    concord_info *info);

/* Which solve concord_solve_batch runs. */
typedef enum concord_algorithm {
    CONCORD_ALGORITHM_AD3 = 0, /* concord_solver_map */
    CONCORD_ALGORITHM_SPARSE,  /* concord_solver_sparse */
    CONCORD_ALGORITHM_EXACT,   /* concord_solver_exact */
    CONCORD_ALGORITHM_PSDD,    /* concord_solver_psdd */
    CONCORD_ALGORITHM_MPLP     /* concord_solver_mplp */
} concord_algorithm;

/* Solves `count` solvers (distinct; they may share graphs) with the same
 * algorithm and settings, on `threads` threads (<= 0: one per processor
 * online; never more than count). infos (count entries) may be NULL. Each
 * result is bit for bit the one the sequential solve would give, whatever
 * the thread count. Returns CONCORD_OK when every solve converged, else
 * the code of the first solver (in array order) that did not; each
 * solver's own message is in concord_solver_last_error. A solver listed
 * twice (or already in another batch, or in a call: another thread's, or
 * the one whose callback runs the batch), a NULL entry or an unknown
 * algorithm is CONCORD_EINVAL before anything is solved, without a
 * message (the batch has no message of its own, and each solver's is left
 * as its last call wrote it); infos are then all unsolved. While the batch
 * runs it holds its solvers: every call on one of them but the batch's
 * own solve of it (from a callback of another solver in the batch, or
 * from another thread) is refused with CONCORD_EINVAL, since another
 * thread may be solving it, and the functions that read a const solver
 * give nothing (NULL, or CONCORD_EINVAL without a message). */
CONCORD_API int concord_solve_batch(concord_solver *const *solvers, size_t count,
                                    concord_algorithm algorithm,
                                    const concord_settings *settings, concord_info *infos,
                                    int threads);

/* The most configurations the backward pass holds for one factor's face
 * where scores tie exactly (see concord_solver_backward). */
#define CONCORD_FACE_COMPLETION_LIMIT 512

/* What concord_solver_backward reports. */
typedef struct concord_backward_info {
    int32_t iterations; /* conjugate-gradient or power iterations */
    double residual;    /* relative residual reached */
    bool converged;     /* the residual reached backward_tol (false: stopped
                           at backward_max_iter; the call then returns
                           CONCORD_ENOTCONVERGED with the products filled in) */
    double seconds;
    int32_t incomplete_faces; /* factors whose tied face was larger than
                                 CONCORD_FACE_COMPLETION_LIMIT
                                 configurations: their part of the products
                                 is the derivative on a smaller face */
} concord_backward_info;

/* The backward pass of the solver's last concord_solver_sparse: given du
 * (length num_variables) and dv (num_additionals, may be NULL for zero),
 * writes
 *   dtheta = J_u^T du + J_v^T dv  (num_variables)  and
 *   dphi   = the same w.r.t. the additional scores (num_additionals; may
 *            be NULL when not wanted),
 * where J are the Jacobians of the solution (u, v) w.r.t. (theta, phi).
 * They are computed from the forward pass's final state, without unrolling.
 * The Jacobian is symmetric (it is the Hessian of the convex value
 * function), so the same call also gives Jacobian-vector products: pass
 * (dtheta, dphi) as (du, dv) to get (du, dv). The products are linear in
 * (du, dv) at any finite magnitude (backward_tol is relative to it); a
 * product whose value lies beyond DBL_MAX (du or dv near DBL_MAX) is
 * +-INFINITY, as floating-point arithmetic gives it.
 * A factor without a closed form contributes the derivative on the face
 * of its polytope that holds its solution. Where scores tie exactly (all
 * zero, as a zero initialization gives), or so nearly that the solve
 * cannot tell (small scores drawn at random: a 15-word TREE at N(0, 0.01^2)
 * scores), that face can be larger than the one the solution's own
 * configurations span (SparseMAP of a 3 x 3 perfect MATCHING at zero
 * scores: three permutations, spanning 2 of the polytope's 4 dimensions);
 * the backward pass then first finds the tied configurations by calls to
 * the factor's MAP oracle at perturbed scores, up to
 * CONCORD_FACE_COMPLETION_LIMIT of them, at O(k^2) each for k
 * configurations held (a 20-word TREE at zero scores: 381 configurations,
 * 0.05 s). A larger face is counted in info->incomplete_faces, and
 * its factor's part of the products is the derivative on the face of the
 * configurations found. Without ties this costs two oracle calls per such
 * factor. Where the solution map has a kink (it is not differentiable),
 * the products are those of one of the pieces meeting there.
 * CONCORD_ENOTCONVERGED, with the products filled in, when conjugate
 * gradients (or the power iteration) stopped at backward_max_iter (see
 * info->converged), or when the forward pass stopped before converging
 * (status max_iter, time_limit or interrupted: the products are then those
 * of its last iterate); the message says which.
 * CONCORD_EINVAL when du or dv holds a value that is not finite, when the
 * solver's last solve was not concord_solver_sparse, when the scores it
 * uses changed since, or when that solve, of a graph whose factors share
 * no variable (solved factor by factor), stopped before it reached every
 * factor (those it did not reach hold their starting point). `settings` (may be NULL) supplies backward_tol,
 * backward_max_iter and backward_power; `info` may be NULL. */
CONCORD_API int concord_solver_backward(concord_solver *s, const concord_settings *settings,
                                        const double *du, const double *dv, double *dtheta,
                                        double *dphi, concord_backward_info *info);

/* The sparse distribution behind factor f's part of the last solution
 * (SparseMAP's output for a single factor): *count configurations, read
 * with concord_solver_distribution_entry. Factors without a closed form
 * keep it from the solve; for closed-form ones (XOR, BUDGET, ...) it is
 * computed now by the generic active set at the factor's final inputs.
 * An integral solution (see concord_solver_variables) is one configuration
 * of every factor: weight 1. KNAPSACK has none (its
 * polytope has fractional vertices): CONCORD_EINVAL; nor has a solution
 * that no AD3 or LP-SparseMAP solve produced, unless it is a certified
 * MAP (PSDD's average, MPLP's uncertified assignment, an exact search's
 * root relaxation): CONCORD_EINVAL. Nor has a factor that a stopped solve
 * of a graph whose factors share no variable (solved factor by factor)
 * did not reach, whose part of the solution is its starting point:
 * CONCORD_EINVAL. A closed-form factor's is CONCORD_ENOTCONVERGED (with a
 * message) when no distribution within 1e-4 of the solution is found, as
 * for concord_solver_factor_qp. */
CONCORD_API int concord_solver_factor_distribution(concord_solver *s, int32_t f,
                                                   int32_t *count);

/* Entry k of the last distribution: its weight, and its configuration's
 * variable values u (the factor's degree, in link order) and additional
 * values v (its n_additionals). Any output may be NULL. */
CONCORD_API int concord_solver_distribution_entry(const concord_solver *s, int32_t k,
                                                  double *weight, double *u, double *v);

/* Losses for a gold structure u_gold (num_variables values in [0, 1]) with
 * additional outputs v_gold (in [0, 1], a user factor's in [-1, 1], and 0
 * at the outputs a factor forbids: CONCORD_EINVAL otherwise;
 * NULL: each factor's best at u_gold, which must
 * then be allowed where it is 0/1; a factor with additional outputs has no
 * best ones at a fractional u_gold, so with NULL such a gold is refused
 * when one of them sees it fractional), under the
 * solver's scores. Both solve (so the solver's
 * solution and info are those of the solve) and write the loss and its
 * (sub)gradient w.r.t. the variable and additional scores (dtheta, dphi
 * may be NULL). Both are written as sums of prediction-minus-gold
 * differences, hence exactly 0 when the prediction equals the gold
 * structure, and never negative.
 *   concord_solver_loss_sparsemap: the LP-SparseMAP (Fenchel-Young) loss
 *     F(theta, phi) - [theta.u* + phi.v* - 1/2 sum_i w_i u*_i^2], F the
 *     LP-SparseMAP objective's maximum (w: concord_set_regularization);
 *     gradient (u - u*, v - v*); the backward pass then differentiates its
 *     solution.
 *   concord_solver_loss_hinge: the structured hinge with the Hamming cost,
 *     max over the local polytope of [theta.u + phi.v + H(u)] minus the
 *     same at the gold structure, H(u) = sum_i u_i (1 - 2 u*_i) (Hamming
 *     up to a constant), solved by cost-augmented LP-MAP; subgradient
 *     (u - u*, v - v*).
 * A fractional gold must lie in the local polytope (a mixture of allowed
 * structures): one that a converged solve shows outside it, its loss
 * below 0 by more than 100 tol (sum of |scores| + sum of the weights), is
 * CONCORD_EINVAL; so is one outside the polytope of a logic or BUDGET
 * factor (a value more than 1e-6 from its projection there: an exact
 * test), and one that any other factor's MAP shows outside its polytope
 * (its squared norm there above its best score at the gold's own values,
 * which no mixture of configurations reaches). Those last two tests are
 * one-sided: a gold just outside any other factor (KNAPSACK, TREE,
 * MATCHING, the factors with additional outputs, user factors) may pass
 * unnoticed. */
CONCORD_API int concord_solver_loss_sparsemap(concord_solver *s,
                                              const concord_settings *settings,
                                              const double *u_gold, const double *v_gold,
                                              double *loss, double *dtheta, double *dphi,
                                              concord_info *info);
CONCORD_API int concord_solver_loss_hinge(concord_solver *s, const concord_settings *settings,
                                          const double *u_gold, const double *v_gold,
                                          double *loss, double *dtheta, double *dphi,
                                          concord_info *info);

/* ------------------------------------------------------------------------
 * Decoding: integral assignments
 * ------------------------------------------------------------------------ */

/* What concord_solver_decode and concord_solver_evaluate report. */
typedef struct concord_decoding {
    double value;     /* theta . x + phi . v(x), with each factor's best
                         additional outputs v at x: for a UAI model, the
                         natural log of the assignment's unnormalized
                         probability; -INFINITY when x violates a factor */
    int32_t violated; /* factors whose constraints x violates (0: feasible) */
    int32_t passes;   /* local search passes made */
} concord_decoding;

/* Turns the solver's last solution into a 0/1 assignment. An integral LP
 * solution is returned as is (it is a MAP assignment). Otherwise two
 * starts are refined by a local search and the better kept: the rounded
 * solution (each multi-variable at its state of largest posterior, every
 * other variable rounded at 1/2), and sequential fixing (most confident
 * first, each to the state whose factors, completed at their best over the
 * undecided variables, violate the fewest constraints and then score
 * highest). The local search (iterated conditional modes, at most 100
 * passes) moves variables and multi-variables one at a time to the state
 * that violates fewer factors and, among those, scores higher; where no
 * single move helps and factors are still violated, it mends one by a
 * chain of up to 6 moves (the first on a variable of the violated factor,
 * each next one on a factor the chain left violated), kept when it leaves
 * fewer factors violated, and goes on. Every move is judged by the oracles
 * of the factors it touches, so a pass costs about the sum over factors of
 * their degree squared: seconds for a factor over tens of thousands of
 * variables.
 * (concord_solver_exact, which decodes at its nodes, stops the search at
 * its time limit.) `result` may be NULL. CONCORD_EINVAL when there is no
 * solution to decode (no solve yet, or the last one ended without one). */
CONCORD_API int concord_solver_decode(concord_solver *s, concord_decoding *result);

/* The last decoded assignment (length num_variables), NULL before any. */
CONCORD_API const double *concord_solver_decoded(const concord_solver *s);

/* The additional outputs at the last decoded assignment into v (length
 * num_additionals, may be NULL for zero): each factor's best at it under
 * the solver's scores, as concord_decoding's value counts them; NAN for
 * those of a factor the assignment violates. CONCORD_EINVAL before any
 * decoding, or a user oracle's error. */
CONCORD_API int concord_solver_decoded_additionals(concord_solver *s, double *v);

/* The decoded state of every multi-variable, as its label (its state number
 * in the model the graph was read from; the state index otherwise), into
 * labels (concord_num_multi_variables entries). CONCORD_EINVAL before any
 * decoding (without a message: see concord_solver_last_error). */
CONCORD_API int concord_solver_decoded_labels(const concord_solver *s, int32_t *labels);

/* Value and violations of any 0/1 assignment x (length num_variables,
 * every value exactly 0 or 1, else CONCORD_EINVAL) under the solver's
 * scores, into *result (required). */
CONCORD_API int concord_solver_evaluate(concord_solver *s, const double *x,
                                        concord_decoding *result);

/* The 0/1 assignment that puts every multi-variable in the state with the
 * given label (one per multi-variable; other variables 0). Returns
 * CONCORD_EINFEASIBLE when a label names a state the graph does not have
 * (e.g. removed by evidence or a zero potential). */
CONCORD_API int concord_assignment_from_labels(const concord_graph *g, const int32_t *labels,
                                               double *x);

/* ------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------ */

typedef enum concord_format {
    CONCORD_FORMAT_AUTO = 0, /* from the file name's extension */
    CONCORD_FORMAT_FG,       /* AD3's .fg factor graph format */
    CONCORD_FORMAT_UAI       /* UAI competition model format */
} concord_format;

/* Receives warnings while reading (e.g. a stray line AD3 would skip). */
typedef void (*concord_warning_fn)(void *context, const char *message);

/* Every reader takes numbers with a decimal point whatever the program's
 * locale (the calling thread reads in the C locale for the call). */

/* Reads every graph in a buffer. `name` is used in messages (file:line).
 * On success *graphs is a malloc'ed array of *count graphs, to be released
 * with concord_free_graphs(). On failure nothing is returned and `error`
 * (if not NULL, of size error_size) receives the message. `warn` may be
 * NULL. A buffer with no graph in it is an error. */
CONCORD_API int concord_read_buffer(const char *data, size_t size,
                                    const char *name, concord_format format,
                                    concord_graph ***graphs, size_t *count,
                                    char *error, size_t error_size,
                                    concord_warning_fn warn, void *context);

/* Same, from a file (format AUTO: a name ending in ".uai", in any case, is
 * UAI, anything else .fg). */
CONCORD_API int concord_read_file(const char *path, concord_format format,
                                  concord_graph ***graphs, size_t *count,
                                  char *error, size_t error_size,
                                  concord_warning_fn warn, void *context);

/* Reads a UAI model (MARKOV or BAYES) and optional evidence (NULL: none)
 * into one graph: every UAI variable becomes a multi-variable (in order,
 * labelled with the original state numbers it keeps), unary tables add to
 * the state scores, larger tables become DENSE factors; scores are natural
 * logs of the potentials; zero potentials and the evidence remove states
 * or forbid joint states. Errors carry file:line. */
CONCORD_API int concord_read_uai(const char *model_path, const char *evidence_path,
                                 concord_graph **graph, char *error, size_t error_size);

/* Same, from buffers (evidence may be NULL); names are used in messages. */
CONCORD_API int concord_read_uai_buffer(const char *model, size_t model_size,
                                        const char *model_name, const char *evidence,
                                        size_t evidence_size, const char *evidence_name,
                                        concord_graph **graph, char *error,
                                        size_t error_size);

/* Frees an array returned by the readers (and its graphs). */
CONCORD_API void concord_free_graphs(concord_graph **graphs, size_t count);

/* ---- Streaming reader: one graph at a time --------------------------------
 * A reader holds its input (a file's bytes, or the caller's buffer) and
 * hands out its graphs one by one, so that a program keeps in memory the
 * input and the graphs it has not freed yet, not every graph of a large
 * file. concord_read_file, concord_read_buffer and the UAI readers are
 * loops over it: the same parsing, checks and messages.
 *
 *     concord_reader *r;
 *     concord_graph *g;
 *     char error[1024];
 *     int rc = concord_reader_open_file(path, CONCORD_FORMAT_AUTO, &r, error,
 *                                       sizeof error, NULL, NULL);
 *     while (rc == CONCORD_OK && (rc = concord_reader_next(r, &g)) == CONCORD_OK && g) {
 *         ... solve g, use the results ...
 *         concord_graph_free(g);
 *     }
 *     concord_reader_close(r);      (rc != CONCORD_OK: the message is in error)
 *
 * Messages ("name:line: ...") go to the caller's `error` buffer (may be
 * NULL), which must stay valid until the reader is closed; warnings go to
 * `warn` (may be NULL) with `context`, as for concord_read_file. Declared
 * sizes (numbers of variables, factors and functions, cardinalities,
 * degrees, table sizes) are checked against the bytes left in the input
 * before anything is allocated for them, so memory stays proportional to
 * the input. */
typedef struct concord_reader concord_reader;

/* Opens a reader over the file at `path` (read whole into memory, at most
 * 2 GiB). `format` AUTO: ".uai" (in any case) is UAI, anything else
 * .fg. On failure *reader is NULL and `error` names the path (CONCORD_EIO, CONCORD_ENOMEM,
 * CONCORD_EINVAL for an unknown format). */
CONCORD_API int concord_reader_open_file(const char *path, concord_format format,
                                         concord_reader **reader, char *error,
                                         size_t error_size, concord_warning_fn warn,
                                         void *context);

/* Opens a reader over `size` bytes at `data`, which is not copied: it must
 * stay unchanged until the reader is closed. `name` (NULL: "<buffer>") is
 * used in messages and, with format AUTO, for the format. */
CONCORD_API int concord_reader_open_buffer(const char *data, size_t size, const char *name,
                                           concord_format format, concord_reader **reader,
                                           char *error, size_t error_size,
                                           concord_warning_fn warn, void *context);

/* Reads the evidence file at `path` for a UAI reader, before its graph is
 * read (see concord_read_uai). CONCORD_EINVAL for another format, for a
 * second evidence file, or after concord_reader_next; CONCORD_EIO when
 * the file cannot be read. Messages go to the reader's error buffer. */
CONCORD_API int concord_reader_set_evidence(concord_reader *reader, const char *path);

/* The next graph of the input: CONCORD_OK and *graph a new graph, owned by
 * the caller (free it with concord_graph_free), or CONCORD_OK and *graph
 * NULL at the end of the input. An input with no graph at all is a
 * CONCORD_EPARSE error at the first call. On error *graph is NULL, the
 * message is in the error buffer, and every later call returns the same
 * code without reading further (graphs returned before stay valid: they
 * were complete). A UAI input holds one graph. */
CONCORD_API int concord_reader_next(concord_reader *reader, concord_graph **graph);

/* After a UAI reader returned its graph: variable `var` of the model
 * (0-based, as in the file; it is multi-variable `var` of the graph) has
 * *num_states states in the model, and (*state_vars)[x], for x <
 * *num_states, is the graph's binary variable for "var is in state x", or
 * -1 when the evidence or a zero potential removed that state. Either
 * output may be NULL; the array stays valid until the reader is closed.
 * CONCORD_EINVAL when the reader has returned no UAI graph or `var` is out
 * of range. */
CONCORD_API int concord_reader_uai_states(const concord_reader *reader, int32_t var,
                                          int32_t *num_states, const int32_t **state_vars);

/* Closes a reader and frees what it holds (not the graphs it returned).
 * NULL is allowed. */
CONCORD_API void concord_reader_close(concord_reader *reader);

#ifdef __cplusplus
}
#endif

#endif /* CONCORD_H */
