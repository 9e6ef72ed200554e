"""concord.ad3's counting extension factors (PFactorCompressionBudget,
PFactorGeneralTreeCounts, PFactorBinaryTreeCounts) against brute force,
and against the equivalent pairwise formulations with budget factors that
AD3's examples compare them with (example_compression_budget,
example_tree_budget, example_binary_tree)."""

import itertools

import numpy as np
import pytest

from concord.ad3 import PFactorGraph
from concord.ad3.extensions import (PFactorBinaryTreeCounts, PFactorCompressionBudget,
                                    PFactorGeneralTreeCounts, PFactorSequence)


def random_tree(rng, n):
    """parents of a random tree over n nodes, node 0 the root, each parent
    before its children."""
    return [-1] + [int(rng.randint(0, k)) for k in range(1, n)]


def best_over(labelings, score):
    """The best labeling and its score (-inf scores are forbidden)."""
    best = max(labelings, key=score)
    return score(best), np.array(best)


def solve_both(graph):
    """LP-MAP's and branch and bound's (value, posteriors) of a graph."""
    lp = graph.solve(tol=1e-9)
    bb = graph.solve(branch_and_bound=True)
    assert bb[3] == "integral"
    return lp, bb


def test_compression_budget_equals_a_sequence_with_a_budget():
    rng = np.random.RandomState(1)
    length, budget = 7, 2
    bigrams = [i for i in range(-1, length) if rng.uniform() < 0.5]
    counted = rng.uniform(size=length) < 0.6
    theta = rng.randn(length)
    start, stop = np.zeros(2), np.zeros(2)
    start[1], stop[1] = rng.randn(2)
    transitions = np.zeros((length - 1, 2, 2))
    transitions[:, 1, 1] = rng.randn(length - 1)

    def score(kept):
        if sum(k for k, c in zip(kept, counted) if c) > budget:
            return -np.inf
        return (theta @ kept + start[kept[0]] + stop[kept[-1]]
                + sum(t[a, b] for t, a, b in zip(transitions, kept, kept[1:])))
    best, kept = best_over(list(itertools.product((0, 1), repeat=length)), score)

    # AD3's first formulation: a sequence over kept/dropped states, a budget
    pairwise = PFactorGraph()
    tokens = [pairwise.create_multi_variable(2) for _ in range(length)]
    for token, s in zip(tokens, theta):
        token.set_log_potentials(np.array([0.0, s]))
    sequence = PFactorSequence()
    pairwise.declare_factor(sequence, [t.get_state(k) for t in tokens for k in range(2)])
    sequence.initialize([2] * length)
    sequence.set_additional_log_potentials(
        np.concatenate([start, transitions.ravel(), stop]).tolist())
    pairwise.create_factor_budget([t.get_state(1) for t, c in zip(tokens, counted) if c], budget)
    value, posteriors, _, _ = pairwise.solve(branch_and_bound=True)
    assert value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(np.reshape(posteriors, (-1, 2))[:, 1], kept, atol=1e-9)

    # the second: one COMPRESSION_BUDGET factor, where the score of two
    # consecutive kept tokens at a bigram position is a variable's
    edges = [start.reshape(1, 2)] + list(transitions) + [stop.reshape(2, 1)]
    variable_scores, additional_scores = list(theta), []
    for position, table in enumerate(edges, start=-1):
        for (a, b), s in np.ndenumerate(table):
            last = (a, b) == (table.shape[0] - 1, table.shape[1] - 1)
            (variable_scores if last and position in bigrams else additional_scores).append(s)
    compressed = PFactorGraph()
    variables = [compressed.create_binary_variable() for _ in variable_scores]
    for variable, s in zip(variables, variable_scores):
        variable.set_log_potential(s)
    factor = PFactorCompressionBudget()
    compressed.declare_factor(factor, variables)
    factor.initialize(length, budget, counted, bigrams)
    factor.set_additional_log_potentials(additional_scores)
    for value, posteriors, _, _ in solve_both(compressed):
        assert value == pytest.approx(best, abs=1e-6)
        np.testing.assert_allclose(posteriors[:length], kept, atol=1e-6)
        padded = np.concatenate([[1], kept, [1]])
        np.testing.assert_allclose(posteriors[length:],
                                   [padded[p + 1] * padded[p + 2] for p in bigrams], atol=1e-6)


def test_general_tree_counts_bound_the_nodes_in_state_zero():
    rng = np.random.RandomState(0)
    n, lower, upper = 4, 2, 3
    parents = random_tree(rng, n)
    sizes = [2, 1, 2, 2]
    unary = [rng.randn(k) for k in sizes]
    tables = [None] + [rng.randn(sizes[parents[i]], sizes[i]) for i in range(1, n)]

    def score(labels):
        zeros = sum(label == 0 for label in labels)
        if not lower <= zeros <= upper:
            return -np.inf
        return (sum(u[k] for u, k in zip(unary, labels))
                + sum(tables[i][labels[parents[i]], labels[i]] for i in range(1, n)))
    best, labels = best_over(list(itertools.product(*[range(k) for k in sizes])), score)
    one_hot = np.concatenate([np.eye(k)[label] for k, label in zip(sizes, labels)])

    # AD3's pairwise formulation: dense edges, budgets on the state-0 indicators
    pairwise = PFactorGraph()
    nodes = [pairwise.create_multi_variable(k) for k in sizes]
    for node, u in zip(nodes, unary):
        node.set_log_potentials(u)
    for i in range(1, n):
        pairwise.create_factor_dense([nodes[parents[i]], nodes[i]], tables[i].ravel())
    zero_states = [node.get_state(0) for node in nodes]
    pairwise.create_factor_budget(zero_states, upper)
    pairwise.create_factor_budget(zero_states, n - lower, negated=[True] * n)
    value, posteriors, _, _ = pairwise.solve(branch_and_bound=True)
    assert value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(posteriors, one_hot, atol=1e-9)

    # one GENERAL_TREE_COUNTS factor whose count indicators score -1000
    # outside the bounds
    counts = np.where((np.arange(n + 1) < lower) | (np.arange(n + 1) > upper), -1000.0, 0.0)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable()
                 for _ in range(sum(sizes) + n + 1)]
    for variable, s in zip(variables, np.concatenate(unary + [counts])):
        variable.set_log_potential(s)
    factor = PFactorGeneralTreeCounts()
    graph.declare_factor(factor, variables)
    factor.initialize(parents, sizes)
    factor.set_additional_log_potentials(np.concatenate([t.ravel() for t in tables[1:]]).tolist())
    zeros = sum(label == 0 for label in labels)
    for value, posteriors, _, _ in solve_both(graph):
        assert value == pytest.approx(best, abs=1e-6)
        np.testing.assert_allclose(posteriors, np.concatenate([one_hot, np.eye(n + 1)[zeros]]),
                                   atol=1e-6)


@pytest.mark.parametrize("max_bins", [None, 3])
def test_binary_tree_counts_score_the_counted_nodes_on(max_bins):
    rng = np.random.RandomState(2)
    n = 6
    parents = random_tree(rng, n)
    counted = rng.uniform(size=n) < 0.6
    theta = rng.randn(n)
    tables = [None] + [rng.randn(2, 2) for _ in range(1, n)]
    # one score per count 0 .. n; with bins, counts from max_bins - 1 up
    # share the score of max_bins - 1
    count_scores = rng.randn(n + 1) * 2
    top = n if max_bins is None else max_bins - 1

    def score(on):
        count = min(sum(x for x, c in zip(on, counted) if c), top)
        return (theta @ on + count_scores[count]
                + sum(tables[i][on[parents[i]], on[i]] for i in range(1, n)))
    best, on = best_over(list(itertools.product((0, 1), repeat=n)), score)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(n)]
    for variable, s in zip(variables, theta):
        variable.set_log_potential(s)
    factor = PFactorBinaryTreeCounts()
    graph.declare_factor(factor, variables)
    factor.initialize(parents, counted, max_num_bins=max_bins)
    factor.set_additional_log_potentials(
        np.concatenate([t.ravel() for t in tables[1:]] + [count_scores]).tolist())
    for value, posteriors, _, _ in solve_both(graph):
        assert value == pytest.approx(best, abs=1e-6)
        np.testing.assert_allclose(posteriors, on, atol=1e-6)
