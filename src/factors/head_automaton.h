/*
 * The sibling chain shared by the head automata (head_automaton.c) and the
 * sequence compressor (summarization.c): a subset 0 < m_1 < ... < m_k <= n
 * of positions read as the chain 0 -> m_1 -> ... -> m_k -> n + 1, scored
 * per chosen position and per pair of consecutive chain elements.
 */
#ifndef CONCORD_HEAD_AUTOMATON_H
#define CONCORD_HEAD_AUTOMATON_H

#include <stdbool.h>
#include <stdint.h>

/* Index of the pair (m, s), 0 <= m < s <= n + 1, among the (n+1)(n+2)/2
 * pairs of a chain over positions 1..n, ordered by m, then s. */
static inline int64_t sibling_pair(int32_t n, int32_t m, int32_t s) {
    return (int64_t)m * (n + 1) - (int64_t)m * (m - 1) / 2 + (s - m - 1);
}

/* Forward pass of the best chain scored by w[m-1] for each chosen position
 * m and sib[pair] for each consecutive pair, (0, m_1) and (m_k, n + 1)
 * included: best[m] (m = 0..n) receives the best score of a chain from 0
 * ending at m, w[m-1] included, and the best complete chain's score is
 * returned. With `nonempty`, the empty chain is excluded (then n >= 1).
 * best holds n + 2 doubles. O(n^2), branch-free. */
double sibling_chain_best(int32_t n, const double *w, const double *sib, bool nonempty,
                          double *best);

/* Backward pass: marks a best chain of the forward pass that left `best`,
 * u[m-1] = 1 for its positions and v[pair] = 1 for its consecutive pairs
 * (the caller zeroes u and v). Each step recovers the predecessor by a
 * scan, O(n) per chosen position. */
void sibling_chain_write(int32_t n, const double *sib, bool nonempty, const double *best,
                         double *u, double *v);

#endif /* CONCORD_HEAD_AUTOMATON_H */
