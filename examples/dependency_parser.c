/*
 * A second-order dependency parser decoded with concord, in the style of
 * TurboParser (Martins et al.): every possible arc head -> modifier is a
 * binary variable scored by a first-order model; a TREE factor makes the
 * arcs a dependency tree; PAIR factors add second-order scores for two
 * arcs that appear together: siblings (two modifiers of the same head) and
 * grandparents (an arc g -> h followed by h -> m). AD3 solves the LP
 * relaxation; when it is integral (the usual case) it is the exact best
 * tree, otherwise concord_decode rounds it.
 *
 * The scores here are made up by hand from parts of speech, to show a
 * classic prepositional-phrase attachment: the first-order model attaches
 * "with a telescope" to "man"; the second-order scores (a verb taking an
 * object and an instrument) move it to "saw".
 *
 * Build: part of the CMake build (example_dependency_parser).
 */
#include <stdio.h>
#include <stdlib.h>

#include "concord.h"

enum { ROOT, PRON, VERB, DET, NOUN, ADP };

#define N_NODES 8 /* the root and seven tokens */

static const char *const words[N_NODES] = {"<root>", "She", "saw", "the", "man",
                                           "with", "a", "telescope"};
static const int tags[N_NODES] = {ROOT, PRON, VERB, DET, NOUN, ADP, DET, NOUN};

/* First-order score of the arc h -> m: a table over the two parts of
 * speech and the direction, minus a small penalty for length. */
static double arc_score(int h, int m) {
    int th = tags[h], tm = tags[m], right = m > h, dist = abs(m - h);
    double s = -1.0;
    if (th == ROOT) s = tm == VERB ? 3.0 : -2.0;
    else if (th == VERB && tm == PRON && !right) s = 2.5;
    else if (th == VERB && tm == NOUN && right) s = 2.0;
    else if (th == VERB && tm == ADP && right) s = 1.0;
    else if (th == NOUN && tm == DET && !right) s = 2.5;
    else if (th == NOUN && tm == ADP && right) s = 1.2;
    else if (th == ADP && tm == NOUN && right) s = 2.2;
    return s - 0.3 * (dist - 1);
}

/* Second-order: two modifiers m1 < m2 of the same head h. */
static double sibling_score(int h, int m1, int m2) {
    int th = tags[h], t1 = tags[m1], t2 = tags[m2];
    if (th == VERB && t1 == NOUN && t2 == ADP) return 0.5;  /* object + PP */
    if (th == VERB && t1 == PRON && t2 == NOUN) return 0.3; /* subject + object */
    if (t1 == DET && t2 == DET) return -2.0;                /* one determiner */
    return 0.0;
}

/* Second-order: the arcs g -> h and h -> m. */
static double grandparent_score(int g, int h, int m) {
    if (tags[g] == VERB && tags[h] == ADP && tags[m] == NOUN) return 0.8; /* instrument */
    return 0.0;
}

/* The arcs as variables: var[h][m] (-1 where there is no arc). */
static int32_t var[N_NODES][N_NODES];

static int check(concord_graph *g, int rc, const char *what) {
    if (rc != CONCORD_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, concord_strerror(rc), concord_last_error(g));
        exit(1);
    }
    return rc;
}

/* Builds the parser's graph; with second_order false, only the tree. */
static concord_graph *build(int second_order) {
    concord_graph *g = concord_graph_new();
    int32_t heads[N_NODES * N_NODES], mods[N_NODES * N_NODES], vars[N_NODES * N_NODES];
    int32_t n_arcs = 0;
    for (int h = 0; h < N_NODES; ++h)
        for (int m = 0; m < N_NODES; ++m) var[h][m] = -1;
    for (int h = 0; h < N_NODES; ++h)
        for (int m = 1; m < N_NODES; ++m) {
            if (h == m) continue;
            double s = arc_score(h, m);
            check(g, concord_add_variables(g, 1, &s, &var[h][m]), "variable");
            heads[n_arcs] = h, mods[n_arcs] = m, vars[n_arcs] = var[h][m];
            ++n_arcs;
        }
    /* non-projective trees, one child of the root */
    check(g, concord_add_tree(g, N_NODES, n_arcs, heads, mods, vars, CONCORD_TREE_SINGLE_ROOT,
                              NULL),
          "tree");
    if (!second_order) return g;
    int pairs = 0;
    for (int h = 0; h < N_NODES; ++h)
        for (int m1 = 1; m1 < N_NODES; ++m1)
            for (int m2 = m1 + 1; m2 < N_NODES; ++m2) {
                double s = h == m1 || h == m2 ? 0.0 : sibling_score(h, m1, m2);
                if (s == 0.0) continue;
                check(g, concord_add_pair(g, var[h][m1], var[h][m2], s, NULL), "sibling");
                ++pairs;
            }
    for (int gp = 0; gp < N_NODES; ++gp)
        for (int h = 1; h < N_NODES; ++h)
            for (int m = 1; m < N_NODES; ++m) {
                if (gp == h || h == m || gp == m) continue;
                double s = grandparent_score(gp, h, m);
                if (s == 0.0) continue;
                check(g, concord_add_pair(g, var[gp][h], var[h][m], s, NULL), "grandparent");
                ++pairs;
            }
    printf("second-order graph: %d arcs, %d sibling/grandparent PAIR factors\n", n_arcs, pairs);
    return g;
}

/* Solves, rounds if needed, and prints each token with its head. */
static void parse(concord_graph *g, const char *title) {
    concord_info info;
    int rc = concord_solve_map(g, NULL, &info);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) check(g, rc, "solve");
    const double *x = concord_solution_variables(g);
    if (!info.integral) { /* a fractional LP solution: round it */
        concord_decoding d;
        check(g, concord_decode(g, &d), "decode");
        x = concord_decoded_variables(g);
        printf("fractional LP solution, rounded: score %.3f, %d violated factors\n", d.value,
               d.violated);
    }
    printf("\n%s: %s after %d iterations, score %.3f (LP bound %.3f)\n", title,
           concord_status_name(info.status), info.iterations, info.value, info.upper_bound);
    for (int m = 1; m < N_NODES; ++m)
        for (int h = 0; h < N_NODES; ++h)
            if (var[h][m] >= 0 && x[var[h][m]] > 0.5)
                printf("  %-10s <- %s\n", words[m], words[h]);
}

int main(void) {
    concord_graph *first = build(0);
    parse(first, "first-order (TREE alone)");
    concord_graph_free(first);
    concord_graph *second = build(1);
    parse(second, "second-order (TREE + PAIR factors)");
    concord_graph_free(second);
    return 0;
}
