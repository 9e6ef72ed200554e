/*
 * A test-side reader of AD3's .fg text (docs/formats.md), written from the
 * documentation and independent of the library's reader, for the tests'
 * GLPK references. It reads the logic factors (XOR, XOROUT, ATMOSTONE, OR,
 * OROUT, ANDOUT, IMPLY, BUDGET, BUDGET_EXACT), KNAPSACK, PAIR, and the
 * structured factors ARBORESCENCE, HEAD_AUTOMATON, GRANDPARENT_HEAD_AUTOMATON,
 * SEQUENCE and SEQUENCE_BUDGET; any other factor type makes the read end
 * with FG_READ_UNSUPPORTED. Like AD3 it swallows the one line after each
 * graph, whatever it holds (the stray CARALHO3/CARALHO4 lines of AD3's
 * srl_fract_003/004 are skipped that way, with a printed line); inside a
 * graph, '#' starts a comment and blank lines are skipped, as in concord.
 */
#ifndef CONCORD_FG_READER_H
#define CONCORD_FG_READER_H

typedef enum fg_type {
    FG_XOR,
    FG_XOROUT,
    FG_ATMOSTONE,
    FG_OR,
    FG_OROUT,
    FG_ANDOUT,
    FG_IMPLY,
    FG_BUDGET,
    FG_BUDGET_EXACT,
    FG_KNAPSACK,
    FG_PAIR,
    FG_ARBORESCENCE,
    FG_HEAD_AUTOMATON,
    FG_GRANDPARENT_HEAD_AUTOMATON,
    FG_SEQUENCE,
    FG_SEQUENCE_BUDGET
} fg_type;

/* One graph. The links of factor f are start[f]..start[f+1) of var (0-based
 * variables) and neg (negated link; only logic factors, BUDGETs and
 * KNAPSACK). Its integer fields are ints[int_start[f]..int_start[f+1]):
 *   BUDGET, BUDGET_EXACT        B
 *   ARBORESCENCE                LENGTH, h1, m1, ..., hD, mD
 *   GRANDPARENT_HEAD_AUTOMATON  G
 *   SEQUENCE                    L, K1..KL
 *   SEQUENCE_BUDGET             L, B, K1..KL
 * Its real fields are reals[real_start[f]..real_start[f+1]):
 *   KNAPSACK                    c1, ..., cD, B
 * Its scores, scores[score_start[f]..score_start[f+1]), are those of its
 * additional outputs, in the file's order, which is also the order of the
 * outputs: additional output k of the graph is scored by scores[k], and
 * n_additionals = score_start[n_factors]. */
typedef struct fg_graph {
    int n_vars, n_factors, n_additionals;
    double *theta; /* n_vars */
    fg_type *type; /* n_factors */
    int *start;    /* n_factors + 1 */
    int *var;
    char *neg;
    int *int_start; /* n_factors + 1 */
    int *ints;
    int *real_start; /* n_factors + 1 */
    double *reals;
    int *score_start; /* n_factors + 1 */
    double *scores;
} fg_graph;

enum {
    FG_READ_OK = 0,
    FG_READ_ERROR = -1,      /* malformed text (a line naming it is printed) */
    FG_READ_UNSUPPORTED = -2 /* a factor type this reader does not know */
};

/* Reads every graph of the NUL-terminated text; `name` is used in the
 * messages. On FG_READ_OK, *graphs is a malloc'd array of *count >= 1
 * graphs (release with fg_free_graphs); otherwise *graphs is NULL and
 * *count 0. */
int fg_read_text(const char *text, const char *name, fg_graph **graphs, int *count);

/* fg_read_text on the whole file at path (FG_READ_ERROR, with a printed
 * line, if it cannot be read). */
int fg_read_path(const char *path, fg_graph **graphs, int *count);

void fg_free_graphs(fg_graph *graphs, int count);

/* The factor type's name in the .fg format ("XOR", "ARBORESCENCE", ...). */
const char *fg_type_name(fg_type type);

#endif /* CONCORD_FG_READER_H */
