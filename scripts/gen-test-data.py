#!/usr/bin/env python3
"""Writes the small factor graphs and UAI models of tests/data/fg and
tests/data/uai: the C tests' inputs that live in the repository, so that a
clone without ../shared/data still checks reading, solving and the CLI on
files of every factor type (see tests/data/README.md for what each file
covers and which test uses it).

Everything is drawn from fixed seeds with the tests' own generator
(splitmix64, as in tests/support/testutil.h), and numbers are written with
4 decimals, so the output is the same on every machine and Python version:
running the script again rewrites identical files. The tests never compare
concord against numbers from this script; they read these files themselves
and compare concord with their own brute force or with GLPK.

usage: scripts/gen-test-data.py [OUTPUT_DIR]   (default: tests/data)
"""
import math
import os
import sys

MASK = (1 << 64) - 1


class Rng:
    """splitmix64, the generator of tests/support/testutil.h."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        """The next 64-bit output."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        """A uniform double in [0, 1), from the top 53 bits of an output."""
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)

    def int(self, n):
        """An integer in [0, n): an output modulo n."""
        return self.next() % n

    def normal(self):
        """A standard normal draw (Box-Muller, the cosine branch)."""
        u1, u2 = self.uniform(), self.uniform()
        u1 = max(u1, 1e-300)
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def shuffle(self, items):
        """Shuffles items in place (Fisher-Yates) and returns them."""
        for k in range(len(items) - 1, 0, -1):
            j = self.int(k + 1)
            items[k], items[j] = items[j], items[k]
        return items


def num(x):
    """4 decimals, no negative zero: the value the readers see exactly."""
    s = "%.4f" % x
    return "0.0000" if s == "-0.0000" else s


def nums(xs):
    """The numbers xs as num writes them, separated by spaces."""
    return " ".join(num(x) for x in xs)


def scores(rng, n, scale=1.0, shift=0.0):
    """n draws of shift + scale * N(0, 1)."""
    return [shift + scale * rng.normal() for _ in range(n)]


# ---------------------------------------------------------------------------
# .fg graphs
# ---------------------------------------------------------------------------


class Graph:
    """One .fg graph: variable scores and factor lines."""

    def __init__(self, theta):
        self.theta = list(theta)
        self.factors = []

    def add(self, line):
        """Adds a factor line."""
        self.factors.append(line)

    def text(self):
        """The graph in AD3's .fg format: the counts, the scores, the factor lines."""
        lines = [str(len(self.theta)), str(len(self.factors))]
        lines += [num(t) for t in self.theta]
        lines += self.factors
        return "\n".join(lines) + "\n"


def fg_file(graphs):
    """Graphs separated by one blank line, as AD3 writes them."""
    return "\n".join(g.text() for g in graphs)


def literal_line(kind, vars_, negated):
    """A factor line of kind over vars_ (0-based), each link negated where negated says so."""
    idx = ["%s%d" % ("-" if n else "", v + 1) for v, n in zip(vars_, negated)]
    return "%s %d %s" % (kind, len(vars_), " ".join(idx))


def planted_logic(rng, kind, vars_, x):
    """A logic factor over vars_ whose negations make the planted 0/1
    assignment x allowed, so that the graph stays feasible."""
    d = len(vars_)
    if kind in ("XOR", "ATMOSTONE"):
        on = rng.int(d) if kind == "XOR" or rng.int(2) else -1
        negated = [(x[v] == 1) != (j == on) for j, v in enumerate(vars_)]
    elif kind == "OR":
        negated = [rng.int(2) == 1 for _ in vars_]
        if not any((x[v] == 1) != n for v, n in zip(vars_, negated)):
            negated[0] = not negated[0]
    elif kind == "OROUT":
        negated = [rng.int(2) == 1 for _ in vars_[:-1]]
        out = any((x[v] == 1) != n for v, n in zip(vars_[:-1], negated))
        negated.append((x[vars_[-1]] == 1) != out)
    else:
        raise ValueError(kind)
    return literal_line(kind, vars_, negated)


def distinct(rng, n, k):
    """k distinct indices below n, in random order."""
    return rng.shuffle(list(range(n)))[:k]


def logic_graphs():
    """logic.fg: three graphs of the types AD3's example files use (XOR,
    ATMOSTONE, OR, OROUT with negated links, PAIR), each built around a
    planted assignment so that it is feasible."""
    rng = Rng(101)
    graphs = []
    # 1: a bit of everything, degree-1 factors included
    n = 14
    x = [rng.int(2) for _ in range(n)]
    g = Graph(scores(rng, n))
    for kind, d in (("XOR", 3), ("ATMOSTONE", 4), ("OR", 3), ("OROUT", 4), ("XOR", 1),
                    ("OR", 2), ("ATMOSTONE", 3), ("OROUT", 2), ("XOR", 4)):
        g.add(planted_logic(rng, kind, distinct(rng, n, d), x))
    for _ in range(5):
        i, j = distinct(rng, n, 2)
        g.add("PAIR 2 %d %d %s" % (i + 1, j + 1, num(rng.normal())))
    graphs.append(g)
    # 2: roles for 4 predicates (SRL-like): at most one argument of each
    # role, exactly one frame per predicate, pairs between predicates
    n = 24
    x = [rng.int(2) for _ in range(n)]
    g = Graph(scores(rng, n, 1.0, -0.3))
    for p in range(4):
        group = list(range(6 * p, 6 * p + 6))
        g.add(planted_logic(rng, "ATMOSTONE", group[:4], x))
        g.add(planted_logic(rng, "XOR", group[3:], x))
    for _ in range(8):
        i, j = rng.int(12), 12 + rng.int(12)
        g.add("PAIR 2 %d %d %s" % (i + 1, j + 1, num(rng.normal() - 0.2)))
    graphs.append(g)
    # 3: three two-state spins (an XOR each) on a triangle, each edge
    # penalizing equal states: no assignment pays no penalty, and LP-MAP
    # is fractional (every state at 1/2)
    n = 6
    g = Graph(scores(rng, n, 0.1))
    for k in range(3):
        g.add(literal_line("XOR", [2 * k, 2 * k + 1], [False, False]))
    for k in range(3):
        a, b = 2 * k, 2 * ((k + 1) % 3)
        g.add("PAIR 2 %d %d %s" % (a + 1, b + 1, num(-2.0 - 0.5 * rng.uniform())))
        g.add("PAIR 2 %d %d %s" % (a + 2, b + 2, num(-2.0 - 0.5 * rng.uniform())))
    graphs.append(g)
    return fg_file(graphs)


def mixture_graph(seed, n):
    """A random graph of every closed-form family (XOR, XOROUT, ATMOSTONE,
    OR, OROUT, ANDOUT, IMPLY, BUDGET, KNAPSACK, PAIR), 2n factors of degree
    2 to 8 over windows of nearby variables, negations chosen so that a
    planted assignment satisfies every constraint (the graph is feasible)."""
    rng = Rng(seed)
    x = [rng.int(2) for _ in range(n)]
    g = Graph(scores(rng, n))
    kinds = ["PAIR"] * 23 + ["ATMOSTONE"] * 15 + ["OR"] * 15 + ["OROUT"] * 10 + \
        ["XOR"] * 8 + ["IMPLY"] * 8 + ["BUDGET"] * 7 + ["ANDOUT"] * 5 + \
        ["XOROUT"] * 4 + ["KNAPSACK"] * 5

    def value(v, negated):
        return x[v] ^ int(negated)

    for _ in range(2 * n):
        kind = kinds[rng.int(len(kinds))]
        d = 2 + rng.int(7)
        start, width = rng.int(n), d + rng.int(3 * d + 8)
        vars_ = [(start + k) % n for k in rng.shuffle(list(range(width)))[:d]]
        if kind == "PAIR":
            g.add("PAIR 2 %d %d %s" % (vars_[0] + 1, vars_[1] + 1, num(rng.normal())))
            continue
        if kind in ("XOR", "ATMOSTONE", "OR", "OROUT"):
            g.add(planted_logic(rng, kind, vars_, x))
            continue
        negated = [rng.int(10) < 3 for _ in vars_]
        if kind == "XOROUT":  # inputs: at most one true literal; output their sum
            on = rng.int(d)
            negated = [(x[v] == 1) != (j == on) for j, v in enumerate(vars_[:-1])]
            negated.append((x[vars_[-1]] == 1) != (on < d - 1))
        elif kind == "ANDOUT":
            out = all(value(v, n_) for v, n_ in zip(vars_[:-1], negated[:-1]))
            negated[-1] = (x[vars_[-1]] == 1) != out
        elif kind == "IMPLY":
            if all(value(v, n_) for v, n_ in zip(vars_[:-1], negated[:-1])):
                negated[-1] = x[vars_[-1]] == 0
        elif kind == "BUDGET":
            budget = 1 + rng.int(d - 1)
            for j, v in enumerate(vars_):
                if sum(value(w, n_) for w, n_ in zip(vars_, negated)) <= budget:
                    break
                if value(v, negated[j]):
                    negated[j] = not negated[j]
            g.add(literal_line(kind, vars_, negated) + " %d" % budget)
            continue
        elif kind == "KNAPSACK":
            costs = [float(num(0.5 + 1.5 * rng.uniform())) for _ in vars_]
            used = sum(c for c, v, n_ in zip(costs, vars_, negated) if value(v, n_))
            # 1e-4 above the planted cost, which rounding may push past its sum of decimals
            capacity = max(used + 1e-4, sum(costs) * (0.2 + 0.5 * rng.uniform()))
            g.add(literal_line(kind, vars_, negated) + " %s %s" %
                  (nums(costs), num(math.ceil(capacity * 1e4) / 1e4)))
            continue
        g.add(literal_line(kind, vars_, negated))
    return g


def transitivity_graph():
    """transitivity.fg: coreference of 9 mentions, one variable per pair
    (i < j, in lexicographic order), the three transitivity clauses of every
    triple as OR factors with negated links; noisy scores around 3 planted
    clusters make the relaxation work for its optimum."""
    rng = Rng(202)
    m = 9
    cluster = [rng.int(3) for _ in range(m)]
    index = {}
    theta = []
    for i in range(m):
        for j in range(i + 1, m):
            index[i, j] = len(theta)
            theta.append((1.0 if cluster[i] == cluster[j] else -1.0) + 1.2 * rng.normal())
    g = Graph(theta)
    for i in range(m):
        for j in range(i + 1, m):
            for k in range(j + 1, m):
                ij, jk, ik = index[i, j] + 1, index[j, k] + 1, index[i, k] + 1
                g.add("OR 3 -%d -%d %d" % (ij, jk, ik))
                g.add("OR 3 -%d -%d %d" % (ij, ik, jk))
                g.add("OR 3 -%d -%d %d" % (ik, jk, ij))
    return fg_file([g])


def sequence_graph(seed, states, budget, forbidden=0.0):
    """One SEQUENCE (budget None) or SEQUENCE_BUDGET factor over state
    indicators listed in a shuffled order of the file's variables; each
    transition is forbidden (-inf) with probability `forbidden`."""
    rng = Rng(seed)
    d = sum(states)
    g = Graph(scores(rng, d))
    order = rng.shuffle(list(range(d)))
    n_scores = states[0] + sum(a * b for a, b in zip(states, states[1:])) + states[-1]
    fields = ["%d" % len(states)]
    if budget is not None:
        fields.append("%d" % budget)
    fields += ["%d" % k for k in states]
    transitions = nums(scores(rng, n_scores)).split()
    if forbidden > 0.0:
        transitions = ["-inf" if rng.uniform() < forbidden else t for t in transitions]
    line = "%s %d %s %s %s" % ("SEQUENCE" if budget is None else "SEQUENCE_BUDGET", d,
                               " ".join("%d" % (v + 1) for v in order), " ".join(fields),
                               " ".join(transitions))
    g.add(line)
    return fg_file([g])


def general_tree_graph(seed, states, parents, counts):
    """One GENERAL_TREE(_COUNTS) factor; nodes are not numbered parents
    first, and the indicators are listed in a shuffled order."""
    rng = Rng(seed)
    n = len(states)
    d = sum(states) + (n + 1 if counts else 0)
    order = rng.shuffle(list(range(d)))  # indicator j is variable order[j] + 1
    g = Graph(scores(rng, d))
    if counts:  # the count indicators: a mild preference for middle counts
        for c in range(n + 1):
            g.theta[order[sum(states) + c]] = -0.15 * abs(c - n / 2.0) + 0.3 * rng.normal()
    n_scores = sum(states[parents[i]] * states[i] for i in range(1, n))
    line = "%s %d %s %d %s %s %s" % (
        "GENERAL_TREE_COUNTS" if counts else "GENERAL_TREE", d,
        " ".join("%d" % (order[j] + 1) for j in range(d)), n,
        " ".join("%d" % k for k in states), " ".join("%d" % p for p in parents),
        nums(scores(rng, n_scores)))
    g.add(line)
    return fg_file([g])


def parser_graph():
    """parser.fg: a second-order dependency parser for 5 tokens, as AD3's
    parsing files are built: one variable per candidate arc (a few long
    arcs pruned), an ARBORESCENCE over them, for the root a HEAD_AUTOMATON
    per side (the left one of degree 0), for every token a
    GRANDPARENT_HEAD_AUTOMATON per side: its incoming arcs as grandparents,
    the arcs to that side's modifiers nearest first (none at the ends)."""
    rng = Rng(303)
    w = 5
    arcs = []
    for h in range(w + 1):
        for m in range(1, w + 1):
            if h != m and not (h > 0 and abs(h - m) >= 4):
                arcs.append((h, m))
    rng.shuffle(arcs)
    var = {a: k for k, a in enumerate(arcs)}
    g = Graph(scores(rng, len(arcs), 1.0, -0.5))
    g.add("ARBORESCENCE %d %s %d %s" % (
        len(arcs), " ".join("%d" % (k + 1) for k in range(len(arcs))), w + 1,
        " ".join("%d %d" % a for a in arcs)))
    for h in range(w + 1):
        incoming = [var[a, h] for a in range(w + 1) if (a, h) in var]
        for side in (+1, -1):
            mods = [var[h, m] for m in (range(h + 1, w + 1) if side > 0 else range(h - 1, 0, -1))
                    if (h, m) in var]
            n = len(mods)
            sibling = scores(rng, (n + 1) * (n + 2) // 2, 0.5)
            if h == 0:
                g.add("HEAD_AUTOMATON %d %s" % (
                    n, " ".join(["%d" % (v + 1) for v in mods] + [nums(sibling)])))
            else:
                G = len(incoming)
                links = " ".join("%d" % (v + 1) for v in incoming + mods)
                g.add("GRANDPARENT_HEAD_AUTOMATON %d %s %d %s" % (
                    G + n, links, G, " ".join(x for x in (nums(scores(rng, G * n, 0.5)),
                                                           nums(sibling)) if x)))
    return fg_file([g])


def tree_graphs():
    """trees.fg: one TREE per variant (no option, SINGLE_ROOT, PROJECTIVE,
    both) over 4 tokens, each with its own random arc subset (the chain
    0 -> 1 -> 2 -> 3 -> 4 always kept, so that every variant has a tree)."""
    rng = Rng(404)
    w = 4
    graphs = []
    for flags in ("", " SINGLE_ROOT", " PROJECTIVE", " PROJECTIVE SINGLE_ROOT"):
        arcs = [(h, m) for h in range(w + 1) for m in range(1, w + 1)
                if h != m and (m == h + 1 or rng.uniform() < 0.75)]
        rng.shuffle(arcs)
        g = Graph(scores(rng, len(arcs)))
        g.add("TREE %d %s %d %s%s" % (len(arcs), " ".join("%d" % (k + 1) for k in range(len(arcs))),
                                      w + 1, " ".join("%d %d" % a for a in arcs), flags))
        graphs.append(g)
    return fg_file(graphs)


def matching_graphs():
    """matching.fg: one MATCHING per option (EVERY_ROW, EVERY_COL,
    PERFECT, none), scores of both signs."""
    rng = Rng(505)
    graphs = []
    for rows, cols, option in ((2, 3, " EVERY_ROW"), (3, 2, " EVERY_COL"), (3, 3, " PERFECT"),
                               (3, 4, "")):
        d = rows * cols
        g = Graph(scores(rng, d, 1.0, -0.2))
        order = rng.shuffle(list(range(d)))
        g.add("MATCHING %d %s %d %d%s" % (d, " ".join("%d" % (v + 1) for v in order), rows, cols,
                                          option))
        graphs.append(g)
    return fg_file(graphs)


def dense_graph():
    """dense.fg: multi-valued variables A(3) B(2) C(4) D(3) E(2), their
    state indicators 1-3, 4-5, 6-9, 10-12, 13-14: DENSE tables on (A, B)
    and (B, C, D) (some joint states forbidden with -inf), an XOR for E
    (in no table), a PAIR between E = 1 and A = 0. The factors form a tree
    over the multi-variables, so LP-MAP is the MAP."""
    rng = Rng(606)
    g = Graph(scores(rng, 14, 0.7))
    g.add("DENSE 5 1 2 3 4 5 2 3 2 %s" % nums(scores(rng, 6)))
    table = [num(x) for x in scores(rng, 24)]
    for k in (1, 7, 8, 17, 22):
        table[k] = "-inf"
    g.add("DENSE 9 4 5 6 7 8 9 10 11 12 3 2 4 3 %s" % " ".join(table))
    g.add("XOR 2 13 14")
    g.add("PAIR 2 14 1 %s" % num(rng.normal()))
    return fg_file([g])


def compressor_graph():
    """compressor.fg: extractive summarization of 3 sentences of 4, 3 and 5
    words: per sentence its word indicators then its sentence indicator
    (variables 1-5, 6-9, 10-15) and a SEQUENCE_COMPRESSOR over them, a
    BUDGET of 6 kept words over all words, an ATMOSTONE over the sentence
    indicators of the first two (redundant) sentences."""
    rng = Rng(707)
    words = [4, 3, 5]
    theta, first = [], []
    for w in words:
        first.append(len(theta))
        theta += scores(rng, w, 1.0, 0.5) + [rng.normal()]
    g = Graph(theta)
    for w, f in zip(words, first):
        d = w + 1
        g.add("SEQUENCE_COMPRESSOR %d %s %s" % (
            d, " ".join("%d" % (f + j + 1) for j in range(d)), nums(scores(rng, d * (d + 1) // 2, 0.6))))
    all_words = [f + j for w, f in zip(words, first) for j in range(w)]
    g.add("BUDGET %d %s 6" % (len(all_words), " ".join("%d" % (v + 1) for v in all_words)))
    g.add("ATMOSTONE 2 %d %d" % (first[0] + words[0] + 1, first[1] + words[1] + 1))
    return fg_file([g])


# ---------------------------------------------------------------------------
# UAI models
# ---------------------------------------------------------------------------


def table_entries(rng, size, spread, zeros=()):
    """size table entries exp(spread * N(0, 1)), written with 4 decimals, with "0" at the
    indices in zeros."""
    values = [math.exp(spread * rng.normal()) for _ in range(size)]
    out = ["%.4f" % v for v in values]
    for k in zeros:
        out[k] = "0"
    return out


def uai_text(kind, cards, tables):
    """tables: (scope, entries) pairs; the layout of docs/formats.md."""
    lines = [kind, str(len(cards)), " ".join(str(k) for k in cards), str(len(tables))]
    lines += ["%d %s" % (len(s), " ".join(str(v) for v in s)) for s, _ in tables]
    for _, entries in tables:
        lines += ["", str(len(entries)), " ".join(entries)]
    return "\n".join(lines) + "\n"


def grid_model():
    """grid3x3.uai: a 3 x 3 MARKOV grid, cardinalities 2 and 3 in turn, a
    unary table per variable (state 1 of variable 4 impossible) and one per
    grid edge (two joint states impossible)."""
    rng = Rng(808)
    cards = [2 + (i % 2) for i in range(9)]
    tables = []
    for i in range(9):
        tables.append(([i], table_entries(rng, cards[i], 0.8, (1,) if i == 4 else ())))
    edges = [(r * 3 + c, r * 3 + c + 1) for r in range(3) for c in range(2)]
    edges += [(r * 3 + c, (r + 1) * 3 + c) for r in range(2) for c in range(3)]
    for k, (a, b) in enumerate(edges):
        zeros = (0,) if k in (2, 7) else ()
        tables.append(([a, b], table_entries(rng, cards[a] * cards[b], 1.0, zeros)))
    return uai_text("MARKOV", cards, tables)


def bayes_model():
    """bayes.uai: a BAYES network of 6 variables; each table the conditional
    of its last variable given the others (rows normalized before
    rounding), one impossible outcome."""
    rng = Rng(909)
    cards = [2, 3, 2, 2, 3, 2]
    scopes = [[0], [0, 1], [0, 2], [1, 2, 3], [1, 4], [3, 4, 5]]
    tables = []
    for scope in scopes:
        k = cards[scope[-1]]
        rows = 1
        for v in scope[:-1]:
            rows *= cards[v]
        entries = []
        for r in range(rows):
            p = [math.exp(rng.normal()) for _ in range(k)]
            if scope == [1, 2, 3] and r == 4:
                p[1] = 0.0
            total = sum(p)
            entries += ["%.4f" % (x / total) if x else "0" for x in p]
        tables.append((scope, entries))
    return uai_text("BAYES", cards, tables)


def mixed_model():
    """mixed.uai: a MARKOV model with a ternary table whose scope is not in
    increasing order, two unary tables on variable 0, a zero in the unary
    table of variable 3, variable 4 in no table of two or more."""
    rng = Rng(1010)
    cards = [3, 2, 4, 2, 3]
    tables = [([0], table_entries(rng, 3, 0.5)),
              ([2, 0, 1], table_entries(rng, 24, 1.0, (5, 11))),
              ([0], table_entries(rng, 3, 0.5)),
              ([2, 3], table_entries(rng, 8, 1.0)),
              ([3], table_entries(rng, 2, 0.5, (0,))),
              ([4], table_entries(rng, 3, 0.5))]
    return uai_text("MARKOV", cards, tables)


def frustrated_model():
    """frustrated.uai: three two-state variables on a triangle whose tables
    reward disagreement, and a three-state variable hanging off one of
    them: no assignment makes all three edges disagree, and LP-MAP is
    fractional (its bound above the MAP)."""
    rng = Rng(1111)
    cards = [2, 2, 2, 3]
    tables = [([i], table_entries(rng, cards[i], 0.2)) for i in range(4)]
    for a, b in ((0, 1), (1, 2), (2, 0)):
        same, differ = math.exp(0.1 * rng.normal()), math.exp(1.5 + 0.1 * rng.normal())
        tables.append(([a, b], ["%.4f" % x for x in (same, differ, differ, same)]))
    tables.append(([3, 1], table_entries(rng, 6, 1.0)))
    return uai_text("MARKOV", cards, tables)


FILES = {
    "fg/logic.fg": logic_graphs,
    "fg/transitivity.fg": transitivity_graph,
    "fg/sequence.fg": lambda: sequence_graph(111, [3, 2, 4, 3, 2, 3, 4], None),
    "fg/sequence_budget.fg": lambda: sequence_graph(112, [2, 3, 2, 3, 2, 3, 2], 2),
    "fg/sequence_forbidden.fg": lambda: sequence_graph(113, [3, 2, 4, 3, 2, 3, 4], None, 0.3),
    "fg/sequence_budget_forbidden.fg": lambda: sequence_graph(115, [2, 3, 2, 3, 2, 3, 2], 3,
                                                              0.3),
    "fg/general_tree.fg": lambda: general_tree_graph(121, [2, 3, 2, 2, 3, 2, 3, 2],
                                                     [-1, 3, 0, 0, 1, 2, 1, 5], False),
    "fg/general_tree_counts.fg": lambda: general_tree_graph(122, [2, 3, 2, 2, 3, 2, 2, 2],
                                                            [-1, 0, 4, 1, 0, 2, 4, 3], True),
    "fg/parser.fg": parser_graph,
    "fg/trees.fg": tree_graphs,
    "fg/matching.fg": matching_graphs,
    "fg/dense.fg": dense_graph,
    "fg/compressor.fg": compressor_graph,
    "fg/mixture.fg": lambda: fg_file([mixture_graph(1013, 150), mixture_graph(1197, 150),
                                      mixture_graph(1036, 300)]),
    "fg/penalty_cycle.fg": lambda: fg_file([mixture_graph(1023, 150)]),
    "uai/grid3x3.uai": grid_model,
    "uai/grid3x3.uai.evid": lambda: "2\n1 2 6 1\n",
    "uai/bayes.uai": bayes_model,
    "uai/bayes.uai.evid": lambda: "1\n2 5 1 2 0\n",  # the older format: 1 sample
    "uai/mixed.uai": mixed_model,
    "uai/frustrated.uai": frustrated_model,
}


def main():
    """Writes every file of FILES under the output directory."""
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
    for name, make in FILES.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="\n") as fp:
            fp.write(make())


if __name__ == "__main__":
    main()
