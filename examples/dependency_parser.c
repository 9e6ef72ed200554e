/*
 * A second-order dependency parser decoded with concord, built the way
 * TurboParser builds its graphs (Martins et al., 2011): every possible arc
 * head -> modifier is a binary variable scored by a first-order model; a
 * TREE factor makes the arcs a dependency tree; for each head and each
 * side, a GRANDPARENT_HEAD_AUTOMATON scores the modifiers it takes on that
 * side as a chain of consecutive siblings and each of them together with
 * the head's own head, its grandparent (the root, which has no head, gets a
 * HEAD_AUTOMATON). AD3 solves the LP relaxation; when it is integral (the
 * usual case) it is the exact best tree, otherwise concord_solver_decode
 * rounds it.
 *
 * The scores are made up by hand from parts of speech, to show a classic
 * prepositional-phrase attachment: the first-order model attaches "with a
 * telescope" to "man"; the second-order scores (a verb taking an object
 * and then an instrument) move it to "saw". The program checks both parses
 * against the best tree found by trying every head assignment, and exits 1
 * if they differ.
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

/* Second-order: m1 < m2 consecutive modifiers of h on the same side. */
static double sibling_score(int h, int m1, int m2) {
    int th = tags[h], t1 = tags[m1], t2 = tags[m2];
    if (th == VERB && t1 == NOUN && t2 == ADP) return 0.5; /* object, then a PP */
    if (t1 == DET && t2 == DET) return -2.0;               /* one determiner */
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

static void solver_failed(const concord_solver *s, const char *what) {
    fprintf(stderr, "%s: %s\n", what, concord_solver_last_error(s));
    exit(1);
}

/* The modifiers h may take on one side, nearest first (dir +1: right). */
static int side_modifiers(int h, int dir, int *mods) {
    int n = 0;
    for (int m = h + dir; m >= 1 && m < N_NODES; m += dir) mods[n++] = m;
    return n;
}

/* One head automaton: h's modifiers on one side, with h's possible heads as
 * grandparents (none for the root). Scores: grandparent outputs (g, m),
 * g-major, then the consecutive-sibling pairs (a, b), 0 <= a < b <= n + 1,
 * where 0 is the head and n + 1 the end of the chain. */
static void add_automaton(concord_graph *g, int h, int dir) {
    int mods[N_NODES], grands[N_NODES];
    const int n = side_modifiers(h, dir, mods);
    if (n == 0) return;
    int n_grands = 0;
    for (int gp = 0; h != ROOT && gp < N_NODES; ++gp)
        if (gp != h) grands[n_grands++] = gp;
    int32_t vars[2 * N_NODES];
    double scores[N_NODES * N_NODES + (N_NODES + 1) * (N_NODES + 2) / 2];
    int n_vars = 0, n_scores = 0;
    for (int k = 0; k < n_grands; ++k) vars[n_vars++] = var[grands[k]][h];
    for (int k = 0; k < n; ++k) vars[n_vars++] = var[h][mods[k]];
    for (int k = 0; k < n_grands; ++k)
        for (int j = 0; j < n; ++j) {
            const int gp = grands[k], m = mods[j];
            scores[n_scores++] = gp == m ? 0.0 : grandparent_score(gp, h, m);
        }
    for (int a = 0; a <= n; ++a)
        for (int b = a + 1; b <= n + 1; ++b) {
            const int real = a >= 1 && b <= n; /* two modifiers, not the ends */
            const int m1 = real ? mods[a - 1] : 0, m2 = real ? mods[b - 1] : 0;
            const int lo = m1 < m2 ? m1 : m2, hi = m1 < m2 ? m2 : m1;
            scores[n_scores++] = real ? sibling_score(h, lo, hi) : 0.0;
        }
    int rc = h == ROOT ? concord_add_head_automaton(g, n, vars, scores, NULL)
                       : concord_add_grandparent_head_automaton(g, n_grands, n, vars, scores, NULL);
    check(g, rc, "head automaton");
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
    for (int h = 0; h < N_NODES; ++h) {
        add_automaton(g, h, -1);
        add_automaton(g, h, +1);
    }
    printf("second-order graph: %d arcs, %d factors (a TREE and the head automata)\n", n_arcs,
           (int)concord_num_factors(g));
    return g;
}

/* The score of the tree head[1..], first- or second-order. */
static double tree_score(const int *head, int second_order) {
    double total = 0.0;
    for (int m = 1; m < N_NODES; ++m) total += arc_score(head[m], m);
    if (!second_order) return total;
    for (int h = 0; h < N_NODES; ++h)
        for (int dir = -1; dir <= 1; dir += 2) {
            int mods[N_NODES], previous = -1;
            const int n = side_modifiers(h, dir, mods);
            for (int k = 0; k < n; ++k) {
                const int m = mods[k];
                if (head[m] != h) continue;
                if (previous >= 0) total += sibling_score(h, previous < m ? previous : m,
                                                          previous < m ? m : previous);
                if (h != ROOT) total += grandparent_score(head[h], h, m);
                previous = m;
            }
        }
    return total;
}

/* Whether head[1..] is a tree with one child of the root. */
static int is_tree(const int *head) {
    int root_children = 0;
    for (int m = 1; m < N_NODES; ++m) {
        root_children += head[m] == ROOT;
        int x = m, steps = 0;
        while (x != ROOT && steps++ < N_NODES) x = head[x];
        if (x != ROOT) return 0;
    }
    return root_children == 1;
}

/* The best score over every tree, by trying every head assignment. */
static double best_by_enumeration(int second_order) {
    int head[N_NODES] = {0};
    double best = -1e300;
    for (;;) {
        if (is_tree(head)) {
            double s = tree_score(head, second_order);
            if (s > best) best = s;
        }
        int m = 1;
        while (m < N_NODES && ++head[m] == N_NODES) head[m++] = 0;
        if (m == N_NODES) return best;
    }
}

/* Solves, rounds if needed, prints each token with its head, and returns
 * whether the parse scores as well as the best tree by enumeration. */
static int parse(const concord_graph *g, const char *title, int second_order) {
    concord_solver *solver;
    if (concord_solver_new(g, &solver) != CONCORD_OK) return 0;
    concord_info info;
    int rc = concord_solver_map(solver, NULL, &info);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) solver_failed(solver, "solve");
    printf("%s: %s after %d iteration%s, score %.3f (LP bound %.3f)\n", title,
           concord_status_name(info.status), info.iterations, info.iterations == 1 ? "" : "s",
           info.value, info.upper_bound);
    const double *x = concord_solver_variables(solver);
    if (!info.integral) { /* a fractional LP solution: round it */
        concord_decoding d;
        if (concord_solver_decode(solver, &d) != CONCORD_OK) solver_failed(solver, "decode");
        x = concord_solver_decoded(solver);
        printf("fractional LP solution, rounded: score %.3f, %d violated factors\n", d.value,
               d.violated);
    }
    int head[N_NODES] = {0};
    for (int m = 1; m < N_NODES; ++m)
        for (int h = 0; h < N_NODES; ++h)
            if (var[h][m] >= 0 && x[var[h][m]] > 0.5) {
                head[m] = h;
                printf("  %-10s <- %s\n", words[m], words[h]);
            }
    const double got = tree_score(head, second_order), best = best_by_enumeration(second_order);
    printf("tree score %.3f, best over all trees %.3f\n", got, best);
    concord_solver_free(solver);
    return is_tree(head) && got > best - 1e-9;
}

int main(void) {
    concord_graph *first = build(0);
    int ok = parse(first, "first-order (TREE alone)", 0);
    concord_graph_free(first);
    printf("\n");
    concord_graph *second = build(1);
    ok &= parse(second, "second-order (TREE + head automata)", 1);
    concord_graph_free(second);
    if (!ok) fprintf(stderr, "a parse is not the best tree\n");
    return ok ? 0 : 1;
}
