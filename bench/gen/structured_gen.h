/*
 * Seedable generators of structured factor graphs in AD3's .fg format
 * (docs/formats.md), for benchmarks and tests. The same seed and sizes
 * always give the same text, on every platform: the generators draw from
 * their own splitmix64 stream and print scores with 9 significant digits.
 * Every generated graph has at least one feasible assignment.
 */
#ifndef CONCORD_STRUCTURED_GEN_H
#define CONCORD_STRUCTURED_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Largest sizes the generators accept (beyond them they return -1). */
enum {
    GEN_PARSING_MAX_WORDS = 10000,
    GEN_SEQUENCES_MAX_VARIABLES = 10000000 /* M * L * S */
};

/*
 * Writes one second-order dependency parsing graph (TurboParser's shape)
 * to `out`. The sentence has n words (nodes 0..n, 0 the root; the tree's
 * LENGTH field is n + 1). A gold tree is drawn at random (non-projective:
 * the words, in random order, each attach to a random already attached
 * node, starting from the root). Each word m keeps min(K, n) candidate
 * heads: its gold head and the K - 1 positions of 0..n nearest to m
 * (excluding m and the gold head; ties broken at random). There is one
 * binary variable per candidate arc, in order of head then modifier,
 * scored N(0, 1) plus 1 on the gold arcs. The factors, 2n + 3 of them:
 *   - one ARBORESCENCE over every arc;
 *   - for the root, a left HEAD_AUTOMATON without modifiers and a right
 *     HEAD_AUTOMATON over its outgoing arcs, nearest modifier first;
 *   - for each word h = 1..n, a left then a right
 *     GRANDPARENT_HEAD_AUTOMATON whose grandparent links are h's incoming
 *     arcs and whose modifier links are h's outgoing arcs on that side,
 *     nearest first (possibly none).
 * Sibling and grandparent scores are N(0, 0.3^2).
 *
 * Returns 0; -1 when out is NULL, n is not in [1, GEN_PARSING_MAX_WORDS]
 * or K < 1 (then nothing is written), or when memory or writing fails
 * (then part of the graph may have been written).
 */
int gen_parsing_fg(FILE *out, uint64_t seed, int n, int K);

/*
 * Writes one coupled sequence labelling graph to `out`: M sequences of
 * length L over S states, one binary variable per (sequence, position,
 * state), numbered sequence-major then position then state, scored
 * N(0, 1). The factors:
 *   - per sequence, a SEQUENCE over its L x S indicators (start,
 *     transition and stop scores N(0, 0.5^2));
 *   - M * L ATMOSTONE factors of degree 2, each over one state at a
 *     position of one sequence and the same state at a position of
 *     another sequence (all drawn at random);
 *   - per sequence, a BUDGET allowing at most 2 positions in one state,
 *     then an OR requiring another state at least once (both states drawn
 *     at random, distinct).
 * Feasibility is guaranteed by construction: a hidden labelling is drawn
 * first (every position of sequence k in a random state other than k's
 * budget state, then one random position set to k's OR state), so it
 * satisfies every SEQUENCE, BUDGET and OR; an ATMOSTONE whose two
 * indicators are both on in that labelling is never emitted (its state is
 * drawn again).
 *
 * Returns 0; -1 when out is NULL, M < 2, L < 1, S < 2 or M * L * S exceeds
 * GEN_SEQUENCES_MAX_VARIABLES (then nothing is written), or when memory or
 * writing fails (then part of the graph may have been written).
 */
int gen_sequences_fg(FILE *out, uint64_t seed, int M, int L, int S);

/* A generated graph: its shape, seed and sizes (parsing: n, K;
 * sequences: M, L, S). */
typedef enum gen_shape { GEN_PARSING, GEN_SEQUENCES } gen_shape;
typedef struct gen_spec {
    gen_shape shape;
    uint64_t seed;
    int size[3];
} gen_spec;

/* The benchmark suite: 26 parsing graphs (n from 10 to 100, K from 3 to 8)
 * then 20 coupled sequence graphs (M from 2 to 10, L from 10 to 50, S from
 * 5 to 20), each with its own seed. */
extern const gen_spec gen_suite[];
extern const int gen_suite_count;

/* Writes the graph `spec` describes (gen_parsing_fg or gen_sequences_fg);
 * returns as they do. */
int gen_write_fg(FILE *out, const gen_spec *spec);

/* The graph's name, which spells its shape, sizes and seed (e.g.
 * "parsing_n050_K5_seed3", "sequences_M04_L30_S20_seed31"), into name
 * (truncated to size). */
void gen_name(const gen_spec *spec, char *name, size_t size);

#endif /* CONCORD_STRUCTURED_GEN_H */
