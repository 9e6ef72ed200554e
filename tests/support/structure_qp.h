/*
 * Test-side references for structured factors (trees, matchings, ...)
 * whose configurations the tests enumerate themselves: a list of 0/1
 * structures, the best of them under linear scores, and the checks that a
 * factor's MAP oracle and its weighted QP (through the generic active set)
 * are optimal over exactly those structures. The QP is verified three
 * ways: the active set's own configurations must be valid structures
 * (checked by the test's independent predicate) whose weights reproduce u;
 * the Frank-Wolfe gap over all enumerated structures must vanish; and an
 * independent pairwise Frank-Wolfe solve must land on the same u. Also
 * reading .fg text, for the tests of those factors' syntax.
 */
#ifndef CONCORD_STRUCTURE_QP_H
#define CONCORD_STRUCTURE_QP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concord.h"
#include "factor.h"

typedef struct structure_list {
    int32_t dim;   /* links of the factor */
    int32_t count; /* structures held */
    int32_t cap;   /* bytes held at x (dim may change between uses) */
    uint8_t *x;    /* count rows of dim entries */
} structure_list;

void structure_list_init(structure_list *s, int32_t dim);
void structure_list_clear(structure_list *s);
void structure_list_push(structure_list *s, const uint8_t *x);
void structure_list_free(structure_list *s);

/* Index of the structure of largest a.x (first among ties); its score in
 * *best. -1 when the list is empty. */
int32_t structure_best(const structure_list *s, const double *a, double *best);

/* The test's own validity predicate for a 0/1 vector over the links. */
typedef bool (*structure_valid_fn)(const uint8_t *x, const void *context);

/* Calls f's MAP oracle at literal scores a (no negated links) and asserts
 * that it returns a valid 0/1 structure whose score a.u equals its
 * returned value and the best enumerated score. */
void check_structured_map(const factor *f, const double *a, const structure_list *all,
                          structure_valid_fn valid, const void *context);

/* Solves f's weighted QP (scores a, weights d > 0, no negated links)
 * through factor_qp_variables and a fresh active set, then again with
 * scores a2 (warm start, NULL: skipped), asserting after each solve that
 * the active configurations are valid, weighted >= 0 summing to 1 and
 * average to u, and that the Frank-Wolfe gap over `all` is at most
 * 1e-9 * scale. With `compare_fw`, also asserts that an independent
 * pairwise Frank-Wolfe solve over `all` agrees on u within 1e-6 (the
 * caller guarantees d >= 1/2, which makes the Frank-Wolfe gap bound the
 * distance to the optimum). */
void check_structured_qp(const factor *f, const double *a, const double *a2, const double *d,
                         const structure_list *all, structure_valid_fn valid,
                         const void *context, bool compare_fw);

/* Pairwise Frank-Wolfe with exact line search over the enumerated
 * structures for argmax a.u - 1/2 sum d u^2, until the Frank-Wolfe gap is
 * at most tol or max_iter iterations; writes u, returns the final gap. */
double structure_frank_wolfe(const structure_list *all, const double *a, const double *d,
                             double *u, double tol, int32_t max_iter);

/* Reads text as a .fg file named test.fg (concord_read_buffer, no
 * warning callback); returns its code. */
int read_fg(const char *text, concord_graph ***graphs, size_t *count, char *error, size_t size);

#endif /* CONCORD_STRUCTURE_QP_H */
