"""concord.ad3.extensions, AD3's structured factors, against brute force
over their documented meaning (sequences, trees of binary and of
multi-state nodes, dependency trees, head automata), in AD3's layout of
variables and additional log-potentials."""

import itertools

import numpy as np
import pytest

from concord.ad3 import PFactorGraph
from concord.ad3.extensions import (PFactorBinaryTree, PFactorGeneralTree, PFactorHeadAutomaton,
                                    PFactorSequence, PFactorTree)
from test_ad3_factor_graph import Model


def declare(model, factor, variables, additionals):
    """Binds an initialized factor and gives it its additional scores."""
    model.graph.declare_factor(factor, variables)
    factor.set_additional_log_potentials(np.asarray(additionals, dtype=float).tolist())


def check_single_factor(model):
    """A graph of one factor: LP-MAP and branch and bound both reach the
    brute-force optimum."""
    best, x = model.best()
    value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
    assert status == "integral" and value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(posteriors, x, atol=1e-9)
    assert model.graph.solve(tol=1e-9)[0] == pytest.approx(best, abs=1e-5)


def one_hot_groups(model, sizes, first=0):
    """Rules keeping consecutive groups of variables one-hot; returns each
    group's ids."""
    groups, start = [], first
    for size in sizes:
        ids = tuple(range(start, start + size))
        model.rules.append((ids, lambda x: sum(x) == 1))
        groups.append(ids)
        start += size
    return groups


def add_sequence(model, variables, sizes, start, transitions, stop):
    """A PFactorSequence over the variables and its meaning: one state per
    position, scored by start, the transition tables and stop. Returns the
    factor."""
    factor = PFactorSequence()
    factor.initialize(sizes)
    declare(model, factor, variables,
            np.concatenate([start] + [t.ravel() for t in transitions] + [stop]))
    groups = one_hot_groups(model, sizes)

    def path_score(x):
        states = [int(np.argmax([x[i] for i in g])) for g in groups]
        return (start[states[0]] + stop[states[-1]]
                + sum(t[p, q] for t, p, q in zip(transitions, states, states[1:])))
    model.terms.append((tuple(range(sum(sizes))), path_score))
    return factor


def test_sequence_transitions_of_minus_infinity_are_forbidden():
    """AD3's dynamic programs avoid a transition scored -inf; concord holds
    it as a constraint (AD3 reports a value of nan beside the right
    posteriors). The brute force adds the -inf and so never picks it.
    Allowing a transition again rebuilds the factor."""
    rng = np.random.RandomState(3)
    sizes = [3, 3, 3, 3]
    start, stop = rng.randn(3), rng.randn(3)
    transitions = [rng.randn(3, 3) for _ in sizes[1:]]
    best_free = max(itertools.product(range(3), repeat=4), key=lambda s: (
        start[s[0]] + stop[s[-1]] + sum(t[p, q] for t, p, q in zip(transitions, s, s[1:]))))
    # forbid a transition of the free optimum's path, and some others
    transitions[1][best_free[1], best_free[2]] = -np.inf
    transitions[0][0, 2] = transitions[2][1, 1] = -np.inf
    start[2] = -np.inf
    model = Model()
    variables = [model.binary(s) for s in rng.randn(sum(sizes)) * 0.1]
    factor = add_sequence(model, variables, sizes, start, transitions, stop)
    check_single_factor(model)
    # allowed again (the brute force reads the same arrays)
    transitions[1][best_free[1], best_free[2]] = 5.0
    factor.set_additional_log_potentials(
        np.concatenate([start] + [t.ravel() for t in transitions] + [stop]).tolist())
    check_single_factor(model)
    # the same chain alone, before any graph: its MAP avoids them too
    alone = PFactorSequence()
    alone.initialize(sizes)
    alone.set_additional_log_potentials(
        np.concatenate([start] + [t.ravel() for t in transitions] + [stop]).tolist())
    value, u, v = alone.solve_map([0.0] * sum(sizes), [])
    states = [int(np.argmax(u[3 * i:3 * i + 3])) for i in range(4)]
    expected = max(itertools.product(range(3), repeat=4), key=lambda s: (
        start[s[0]] + stop[s[-1]] + sum(t[p, q] for t, p, q in zip(transitions, s, s[1:]))))
    assert tuple(states) == expected and np.isfinite(value)


def test_sequence_scores_start_transitions_and_stop():
    rng = np.random.RandomState(0)
    sizes = [2, 3, 2]
    model = Model()
    variables = [model.binary(s) for s in rng.randn(sum(sizes))]
    add_sequence(model, variables, sizes, rng.randn(2),
                 [rng.randn(a, b) for a, b in zip(sizes, sizes[1:])], rng.randn(2))
    check_single_factor(model)


def edge_tables(model, parents, groups, tables):
    """The score of a tree's (parent state, node state) tables."""
    def score(x):
        states = [int(np.argmax([x[i] for i in g])) for g in groups]
        return sum(tables[k][states[p], states[k]] for k, p in enumerate(parents) if p >= 0)
    model.terms.append((tuple(i for g in groups for i in g), score))


def forbid_some(rng, tables):
    """Sets a third of the tables' entries to -inf (AD3's dynamic programs
    avoid them; concord forbids them), never the (0, 0) entries, so that
    all nodes in state 0 stay allowed."""
    for table in tables.values():
        table[(rng.rand(*table.shape) < 0.35) & (np.indices(table.shape).sum(axis=0) > 0)] = (
            -np.inf)


@pytest.mark.parametrize("forbid", [False, True])
def test_binary_tree_edge_tables(forbid):
    rng = np.random.RandomState(1)
    parents = [-1, 0, 0, 1, 1, 2]
    model = Model()
    variables = [model.binary(s) for s in rng.randn(len(parents))]
    tables = {k: rng.randn(2, 2) for k in range(1, len(parents))}
    if forbid:
        forbid_some(rng, tables)
    factor = PFactorBinaryTree()
    factor.initialize(parents)
    declare(model, factor, variables, np.concatenate([tables[k].ravel() for k in sorted(tables)]))

    def score(x):
        return sum(tables[k][x[p], x[k]] for k, p in enumerate(parents) if p >= 0)
    model.terms.append((tuple(range(len(parents))), score))
    check_single_factor(model)


@pytest.mark.parametrize("forbid", [False, True])
def test_general_tree_edge_tables(forbid):
    rng = np.random.RandomState(2)
    parents, sizes = [-1, 0, 1, 1], [2, 3, 2, 2]
    model = Model()
    variables = [model.binary(s) for s in rng.randn(sum(sizes))]
    tables = {k: rng.randn(sizes[p], sizes[k]) for k, p in enumerate(parents) if p >= 0}
    if forbid:
        forbid_some(rng, tables)
    factor = PFactorGeneralTree()
    factor.initialize(parents, sizes)
    declare(model, factor, variables, np.concatenate([tables[k].ravel() for k in sorted(tables)]))
    groups = one_hot_groups(model, sizes)
    edge_tables(model, parents, groups, tables)
    check_single_factor(model)


def is_arborescence(length, chosen):
    """Every node 1 .. length-1 has one head and reaches the root 0."""
    head = {}
    for h, m in chosen:
        if m in head:
            return False
        head[m] = h
    if len(head) != length - 1:
        return False
    for m in range(1, length):
        seen, node = set(), m
        while node != 0:
            if node in seen:
                return False
            seen.add(node)
            node = head[node]
    return True


def test_dependency_tree_factor_is_a_spanning_arborescence():
    length = 4
    arcs = [(h, m) for m in range(1, length) for h in range(length) if h != m]
    rng = np.random.RandomState(3)
    for _ in range(3):
        model = Model()
        variables = [model.binary(s) for s in rng.randn(len(arcs))]
        factor = PFactorTree()
        model.graph.declare_factor(factor, variables)
        factor.initialize(length, arcs)
        model.rules.append((tuple(range(len(arcs))), lambda x: is_arborescence(
            length, [a for a, on in zip(arcs, x) if on])))
        check_single_factor(model)


def _tree_calls():
    graph = PFactorGraph()
    length = 4
    arcs = [(h, m) for m in range(1, length) for h in range(length) if h != m]
    tree = PFactorTree()
    graph.declare_factor(tree, [graph.create_binary_variable() for _ in arcs])
    return [
        (TypeError, lambda: tree.initialize(length, [-3 for _ in arcs])),
        (TypeError, lambda: tree.initialize(length, None)),
        (TypeError, lambda: tree.initialize(length, 42)),
        (ValueError, lambda: tree.initialize(length, [(100, 100) for _ in arcs])),
        (ValueError, lambda: tree.initialize(length, arcs + arcs)),
        (ValueError, lambda: tree.initialize(length, arcs[:3])),
    ]


@pytest.mark.parametrize("case", range(len(_tree_calls())))
def test_tree_layout_errors_are_ad3s(case):
    error, call = _tree_calls()[case]
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("forbid", [False, True])
def test_head_automaton_scores_consecutive_modifiers(forbid):
    """With `forbid`, a third of the sibling pairs are -inf (not the empty
    chain's), given in a shuffled order that concord maps onto its own."""
    rng = np.random.RandomState(4)
    length = 5   # the head, then modifiers at distance 1 .. 4
    siblings = [(0, m, s) for m in range(length) for s in range(m + 1, length + 1)]
    scores = rng.randn(len(siblings))
    if forbid:
        rng.shuffle(siblings)
        scores[(rng.rand(len(siblings)) < 0.35)
               & np.array([(m, s) != (0, length) for _, m, s in siblings])] = -np.inf
    sibling_score = {(m, s): w for (_, m, s), w in zip(siblings, scores)}
    model = Model()
    variables = [model.binary(s) for s in rng.randn(length - 1)]
    factor = PFactorHeadAutomaton()
    model.graph.declare_factor(factor, variables)
    factor.initialize(length, siblings)
    factor.set_additional_log_potentials(scores.tolist())

    def score(x):
        chain = [0] + [i + 1 for i, on in enumerate(x) if on] + [length]
        return sum(sibling_score[p] for p in zip(chain, chain[1:]))
    model.terms.append((tuple(range(length - 1)), score))
    check_single_factor(model)


def test_extension_factors_share_variables_with_others():
    # a sequence whose first two positions must differ, through XORs on
    # their states: branch and bound against brute force
    rng = np.random.RandomState(5)
    model = Model()
    variables = [model.binary(s) for s in rng.randn(6)]
    add_sequence(model, variables, [2, 2, 2], rng.randn(2),
                 [3 * np.eye(2) + rng.randn(2, 2) * 0.1 for _ in range(2)], rng.randn(2))
    for k in range(2):
        model.logic("XOR", [variables[k], variables[2 + k]])
    best, x = model.best()
    value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
    assert status == "integral" and value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(posteriors, x, atol=1e-9)


def test_reference_scripts_arguments_are_accepted():
    """What AD3's and lp-sparsemap's own scripts pass, and concord once
    refused: more additional log-potentials than a factor has (AD3 reads
    the first ones; lp-sparsemap's examples/sequence.py passes 42 to a
    36-entry sequence), lp-sparsemap's solve_qp keywords (max_iter and
    keep_state are accepted and ignored: the QP is solved exactly), and
    AD3's keyword names of the counting factors' initialize. Fewer
    additional log-potentials than the factor has stay an error."""
    from concord.ad3.extensions import PFactorBinaryTreeCounts, PFactorCompressionBudget
    # 2 positions of 2 states: start, transition and stop scores
    theta, additionals = [0.1, 0.2, 0.3, 0.0], [0.4, -0.2, 0.0, 0.3, 0.1, -0.1, 0.2, 0.0]
    results = []
    for extra in ([], [9.0, 9.0]):
        graph = PFactorGraph()
        variables = [graph.create_binary_variable() for _ in range(4)]
        for var, score in zip(variables, theta):
            var.set_log_potential(score)
        factor = PFactorSequence()
        factor.initialize([2, 2])
        graph.declare_factor(factor, variables)
        factor.set_additional_log_potentials(additionals + extra)
        results.append(graph.solve_qp_ad3()[1])
        exact = factor.solve_qp(theta, additionals)
        assert factor.solve_qp(variable_scores=theta, additional_scores=additionals,
                               max_iter=3, keep_state=False) == exact
        adjusted = factor.solve_qp_adjusted(theta, additionals, [1.0] * 4, max_iter=3)
        np.testing.assert_allclose(adjusted[0], exact[0], atol=1e-12)
    np.testing.assert_allclose(results[0], results[1], atol=1e-12)
    factor.set_additional_log_potentials(additionals[:7])
    with pytest.raises(ValueError, match="expected 8 additional log-potentials, got 7"):
        graph.solve_qp_ad3()
    budget = PFactorCompressionBudget()
    budget.initialize(length=3, budget=1, pcounts_for_budget=[True] * 3, bigram_positions=[])
    counts = PFactorBinaryTreeCounts()
    counts.initialize(parents=[-1, 0, 0], pcounts_for_budget=[True] * 3,
                      phas_count_scores=[True, False, False])


def test_a_factors_own_calls_ignore_the_other_factors_of_its_graph():
    """A factor's own solve_map and solve_qp solve its problem alone, as
    AD3's and lp-sparsemap's do, whatever the other factors of its graph:
    they failed beside a sequence not initialized yet, or a DENSE table
    that forbids every joint state (the whole graph was built for them).
    The XOR's MAP is its best score, its SparseMAP the projection of the
    scores onto the simplex (here (0.3, 0.7))."""
    for other in ("uninitialized", "forbids everything"):
        graph = PFactorGraph()
        xs = [graph.create_binary_variable() for _ in range(4)]
        xor = graph.create_factor_logic("XOR", xs[:2])
        if other == "uninitialized":
            graph.declare_factor(PFactorSequence(), xs)
        else:
            states = [graph.create_multi_variable(2) for _ in range(2)]
            graph.create_factor_dense(states, [-np.inf] * 4)
        assert xor.solve_map([0.1, 0.5], []) == (0.5, [0.0, 1.0], [])
        u, v = xor.solve_qp([0.1, 0.5], [])
        tau = (0.1 + 0.5 - 1.0) / 2  # both stay positive
        np.testing.assert_allclose(u, [0.1 - tau, 0.5 - tau], atol=1e-12)
        assert v == []


def test_a_factor_declared_in_no_graph_solves_on_its_own():
    """AD3 and lp-sparsemap run a factor's own solve_map, solve_qp and
    get_sparse_solution before it is declared in any graph: the results
    equal those of the same factor declared in a graph; a factor never
    initialized says so."""
    theta = [0.3, -0.1, 0.2, 0.5, 0.0, -0.4]  # 3 positions of 2 states
    additionals = np.random.RandomState(3).randn(2 + 8 + 2).tolist()
    alone = PFactorSequence()
    alone.initialize([2, 2, 2])
    graph = PFactorGraph()
    declared = PFactorSequence()
    declared.initialize([2, 2, 2])
    graph.declare_factor(declared, [graph.create_binary_variable() for _ in range(6)])
    for factor in (alone, declared):
        factor.set_additional_log_potentials(additionals)
    assert alone.solve_map(theta, []) == declared.solve_map(theta, [])
    assert alone.solve_qp(theta, []) == declared.solve_qp(theta, [])
    assert alone.get_sparse_solution() == declared.get_sparse_solution()
    with pytest.raises(ValueError, match="initialize"):
        PFactorSequence().solve_map(theta, [])


def four_factor_kinds(rng):
    """A sequence, a PAIR, an OR with a negated link and a DENSE table
    (random scores from rng), declared in one graph: (factor, number of
    variables, number of additional outputs) for each."""
    graph = PFactorGraph()
    sequence = PFactorSequence()
    sequence.initialize([2, 3])
    graph.declare_factor(sequence, [graph.create_binary_variable() for _ in range(5)])
    binaries = [graph.create_binary_variable() for _ in range(3)]
    pair = graph.create_factor_pair(binaries[:2], 0.3)
    disjunction = graph.create_factor_logic("OR", binaries, [False, True, False])
    a, b = graph.create_multi_variable(2), graph.create_multi_variable(3)
    dense = graph.create_factor_dense([a, b], rng.randn(6).tolist())
    return ((sequence, 5, 2 + 6 + 3), (pair, 2, 1), (disjunction, 3, 0), (dense, 5, 6))


def test_a_factors_jacobian_vec_equals_finite_differences():
    """lp-sparsemap's PFactor.jacobian_vec(v) after solve_qp: the
    derivatives of the factor's SparseMAP solution and of its additional
    outputs along v equal central differences of solve_qp (h = 1e-6,
    within 1e-6), for a sequence, a PAIR, an OR with a negated link and a
    DENSE table; before any solve_qp it is an error."""
    rng = np.random.RandomState(8)
    for factor, n, n_add in four_factor_kinds(rng):
        theta, phi = rng.randn(n) * 0.5, (rng.randn(n_add) * 0.5).tolist()
        factor.solve_qp(theta.tolist(), phi)
        v, h = rng.randn(n), 1e-6
        du, dv = factor.jacobian_vec(v)
        plus = factor.solve_qp((theta + h * v).tolist(), phi)
        minus = factor.solve_qp((theta - h * v).tolist(), phi)
        np.testing.assert_allclose(du, (np.array(plus[0]) - minus[0]) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(dv, (np.array(plus[1]) - minus[1]) / (2 * h), atol=1e-6)
        assert np.abs(du).max() > 1e-2  # a fractional solution: the derivative is not 0
    fresh = PFactorSequence()
    fresh.initialize([2, 2])
    with pytest.raises(ValueError, match="jacobian_vec follows solve_qp"):
        fresh.jacobian_vec([1.0] * 4)


def test_jacobian_vec_after_solve_qp_adjusted_equals_finite_differences():
    """lp-sparsemap's PFactor.jacobian_vec also follows solve_qp_adjusted
    (its check_logic_grad.py calls it so): the derivatives of the adjusted
    QP's solution and additional outputs along v equal central differences
    of solve_qp_adjusted (h = 1e-6, within 1e-6) for a sequence, a PAIR, an
    OR with a negated link and a DENSE table at degrees 1 to 3; at degrees
    1 they are solve_qp's."""
    rng = np.random.RandomState(11)
    kinds = four_factor_kinds(rng)
    for factor, n, n_add in kinds:
        theta, phi = rng.randn(n) * 0.5, (rng.randn(n_add) * 0.5).tolist()
        degrees = rng.randint(1, 4, size=n).astype(float)
        degrees[0] = 2.0  # never all ones
        factor.solve_qp_adjusted(theta.tolist(), phi, degrees.tolist())
        v, h = rng.randn(n), 1e-6
        du, dv = factor.jacobian_vec(v)
        plus = factor.solve_qp_adjusted((theta + h * v).tolist(), phi, degrees.tolist())
        minus = factor.solve_qp_adjusted((theta - h * v).tolist(), phi, degrees.tolist())
        np.testing.assert_allclose(du, (np.array(plus[0]) - minus[0]) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(dv, (np.array(plus[1]) - minus[1]) / (2 * h), atol=1e-6)
        assert np.abs(du).max() > 1e-2  # a fractional solution: the derivative is not 0
        factor.solve_qp_adjusted(theta.tolist(), phi, [1.0] * n)
        ones = factor.jacobian_vec(v)
        factor.solve_qp(theta.tolist(), phi)
        np.testing.assert_allclose(ones[0], factor.jacobian_vec(v)[0], atol=1e-9)
        np.testing.assert_allclose(ones[1], factor.jacobian_vec(v)[1], atol=1e-9)
    disjunction = kinds[2][0]
    with pytest.raises(ValueError, match="v: expected 3 values, got 2"):
        disjunction.jacobian_vec([1.0, 2.0])


def test_a_new_forbidden_pattern_needs_a_new_solve_qp():
    """jacobian_vec and get_sparse_solution are those of the factor's last
    solve_qp. Changing which log-potentials are -inf rebuilds the factor, so
    neither can answer for that QP any more: both ask for a new solve_qp, for
    a DENSE table as for an extension factor (they answered for the new
    structure at the old scores before); after it they are the new QP's,
    whose solution here is closed form: a DENSE factor of one two-state
    variable with state 0 forbidden is that state's indicator at 0 (no
    derivative), the other at 1."""
    graph = PFactorGraph()
    a, b = graph.create_multi_variable(2), graph.create_multi_variable(2)
    dense = graph.create_factor_dense([a, b], [0.5, -np.inf, 0.2, 0.1])
    sequence = PFactorSequence()
    sequence.initialize([2, 2])
    graph.declare_factor(sequence, [graph.create_binary_variable() for _ in range(4)])
    sequence.set_additional_log_potentials([0.0] * 8)
    for factor, forbidding in ((dense, [-np.inf, 0.0, 0.2, 0.1]),
                               (sequence, [0.0, 0.0, -np.inf, 0.0, 0.0, 0.0, 0.0, 0.0])):
        factor.solve_qp([0.3, 0.1, 0.2, 0.4], [])
        factor.jacobian_vec([1.0, 0.0, 0.0, 0.0])
        factor.get_sparse_solution()
        factor.set_additional_log_potentials(forbidding)
        with pytest.raises(ValueError, match="jacobian_vec follows solve_qp"):
            factor.jacobian_vec([1.0, 0.0, 0.0, 0.0])
        with pytest.raises(ValueError, match="no QP solved"):
            factor.get_sparse_solution()
    single = PFactorGraph()
    only = single.create_multi_variable(2)
    table = single.create_factor_dense([only], [0.0, 0.0])
    table.solve_qp([0.3, 0.1], [])
    table.set_additional_log_potentials([-np.inf, 0.0])
    with pytest.raises(ValueError, match="jacobian_vec follows solve_qp"):
        table.jacobian_vec([1.0, 0.0])
    u, v = table.solve_qp([0.3, 0.1], [])
    assert u == [0.0, 1.0] and v == [0.0, 1.0]
    du, dv = table.jacobian_vec([1.0, 0.0])
    assert du == [0.0, 0.0] and dv == [0.0, 0.0]
    configurations, weights = table.get_sparse_solution()
    assert configurations == [[1]] and weights == [1.0]  # the multi-variable's state
