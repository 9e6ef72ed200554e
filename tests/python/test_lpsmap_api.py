"""concord.lpsmap, the drop-in for lp-sparsemap's numpy API, against an
independent reference: with a single factor (or factors on disjoint
variables) LP-SparseMAP is SparseMAP, the argmax over the convex hull of
the factor's assignments (u, v) of theta.u + phi.v - |u|^2 / 2, which
cvxopt solves as a QP over convex weights of the assignments, enumerated
by brute force from the factors' documented meaning."""

import itertools
import subprocess
import warnings
import sys

import numpy as np
import pytest

from concord.lpsmap import (AndOut, AtMostOne, Budget, DepTree, FactorGraph, Imply, Or, OrOut,
                            Pair, Sequence, Xor, XorOut)
from test_ad3_factor_graph import LOGIC_RULES

cvxopt = pytest.importorskip("cvxopt")

LOGIC_CLASSES = {"XOR": Xor, "OR": Or, "ATMOSTONE": AtMostOne, "IMPLY": Imply,
                 "XOROUT": XorOut, "OROUT": OrOut, "ANDOUT": AndOut}


def sparsemap(vertices_u, theta, vertices_v=None, phi=None, cuts=None):
    """The u of argmax over conv{(u_k, v_k)} of theta.u + phi.v - |u|^2/2
    (rows of vertices_u and vertices_v are the assignments); cuts: None or
    (A, b), further constraints A u <= b."""
    mu = np.asarray(vertices_u, dtype=float)
    linear = mu @ theta
    if vertices_v is not None:
        linear = linear + np.asarray(vertices_v, dtype=float) @ phi
    k = len(mu)
    g, h = -np.eye(k), np.zeros(k)
    if cuts is not None:
        g, h = np.vstack([g, cuts[0] @ mu.T]), np.concatenate([h, cuts[1]])
    cvxopt.solvers.options.update(show_progress=False, abstol=1e-12, reltol=1e-12,
                                  feastol=1e-12)
    result = cvxopt.solvers.qp(cvxopt.matrix(mu @ mu.T + 1e-12 * np.eye(k)),
                               cvxopt.matrix(-linear), cvxopt.matrix(g), cvxopt.matrix(h),
                               cvxopt.matrix(np.ones((1, k))), cvxopt.matrix(1.0))
    return mu.T @ np.array(result["x"]).ravel()


def assignments(n, allowed):
    return [x for x in itertools.product((0, 1), repeat=n) if allowed(x)]


def solve(scores, *factors, **settings):
    """A FactorGraph over one variable of these scores, the factors made
    by calling each on it, solved to a tight tolerance; returns its value."""
    fg = FactorGraph()
    u = fg.variable_from(scores)
    for make in factors:
        fg.add(make(u))
    fg.solve(**dict(dict(max_iter=5000, tol=1e-10), **settings))
    return u.value


@pytest.mark.parametrize("shape", [(4,), (2, 2), (2, 2, 2)])
def test_without_factors_the_solution_is_the_clipped_scores(shape):
    x = np.random.RandomState(32).randn(*shape)
    np.testing.assert_allclose(solve(x), np.clip(x, 0, 1), atol=1e-12)


def test_slices_read_the_variables_value():
    fg = FactorGraph()
    u = fg.variable_from(np.random.RandomState(32).randn(3, 3, 3))
    fg.solve()
    for index in (np.s_[:], np.s_[1], np.s_[:, 1, :], np.s_[1, :, 0::2]):
        np.testing.assert_array_equal(u[index].value, u.value[index])
    np.testing.assert_array_equal(u[1][:, 2].value, u.value[1][:, 2])
    assert u[:, 1].shape == (3, 3)
    # lp-sparsemap's constructor: a variable (or slice) and an index
    from concord.lpsmap.api.api import Slice
    np.testing.assert_array_equal(Slice(u, np.s_[0:2]).value, u.value[0:2])
    np.testing.assert_array_equal(Slice(Slice(u, 1), np.s_[:, 2]).value, u.value[1][:, 2])


@pytest.mark.parametrize("kind", sorted(LOGIC_RULES))
def test_a_logic_factor_gives_its_sparsemap(kind):
    rng = np.random.RandomState(len(kind))
    vertices = assignments(4, LOGIC_RULES[kind])
    for _ in range(3):
        x = rng.randn(4) * 1.5
        got = solve(x, lambda u: LOGIC_CLASSES[kind](u))
        np.testing.assert_allclose(got, sparsemap(vertices, x), atol=1e-6)


@pytest.mark.parametrize("exact", [False, True])
def test_budget_gives_the_projection_onto_its_polytope(exact):
    rng = np.random.RandomState(7)
    vertices = assignments(5, lambda x: sum(x) == 2 if exact else sum(x) <= 2)
    for _ in range(3):
        x = rng.randn(5) + 0.6
        got = solve(x, lambda u: Budget(u, 2, force_budget=exact))
        np.testing.assert_allclose(got, sparsemap(vertices, x), atol=1e-6)


def test_xors_on_rows_and_columns_project_onto_the_birkhoff_polytope():
    x = np.random.RandomState(32).randn(3, 3)
    rows_and_columns = [lambda u, i=i: Xor(u[i, :]) for i in range(3)]
    rows_and_columns += [lambda u, i=i: Xor(u[:, i]) for i in range(3)]
    got = solve(x, *rows_and_columns)
    permutations = [np.eye(3)[list(p)].ravel() for p in itertools.permutations(range(3))]
    np.testing.assert_allclose(got.ravel(), sparsemap(permutations, x.ravel()), atol=1e-6)


def test_pairs_score_both_variables_on():
    rng = np.random.RandomState(3)
    x, t = rng.randn(4), rng.randn(2) * 2
    got = solve(x, lambda u: Pair(u[0:2], u[2:4], t))
    configs = list(itertools.product((0, 1), repeat=2))
    for k in range(2):
        expected = sparsemap(configs, x[[k, k + 2]], [[a * b] for a, b in configs], t[k:k + 1])
        np.testing.assert_allclose(got[[k, k + 2]], expected, atol=1e-6)


def test_sequence_transitions():
    rng = np.random.RandomState(4)
    length, n_states = 3, 2
    x, transitions = rng.randn(length, n_states), rng.randn(length - 1, n_states, n_states)
    got = solve(x, lambda u: Sequence(u, transitions))
    paths = list(itertools.product(range(n_states), repeat=length))
    vertices_u = [np.eye(n_states)[list(p)].ravel() for p in paths]
    vertices_v = [np.concatenate([np.outer(np.eye(n_states)[a], np.eye(n_states)[b]).ravel()
                                  for a, b in zip(p, p[1:])]) for p in paths]
    np.testing.assert_allclose(got.ravel(), sparsemap(vertices_u, x.ravel(), vertices_v,
                                                      transitions.ravel()), atol=1e-6)


def test_sequence_transitions_of_minus_infinity_are_forbidden():
    """SparseMAP over the paths that avoid the -inf transitions."""
    rng = np.random.RandomState(5)
    length, n_states = 4, 3
    x, transitions = rng.randn(length, n_states), rng.randn(length - 1, n_states, n_states)
    transitions[:, 0, 1] = transitions[1, 2, 2] = -np.inf
    got = solve(x, lambda u: Sequence(u, transitions))
    paths = [p for p in itertools.product(range(n_states), repeat=length)
             if all(np.isfinite(transitions[i, a, b]) for i, (a, b) in enumerate(zip(p, p[1:])))]
    vertices_u = [np.eye(n_states)[list(p)].ravel() for p in paths]
    vertices_v = [np.concatenate([np.outer(np.eye(n_states)[a], np.eye(n_states)[b]).ravel()
                                  for a, b in zip(p, p[1:])]) for p in paths]
    expected = sparsemap(vertices_u, x.ravel(), vertices_v,
                         np.nan_to_num(transitions, neginf=0.0).ravel())
    np.testing.assert_allclose(got.ravel(), expected, atol=1e-6)
    unforbidden = solve(x, lambda u: Sequence(u, np.nan_to_num(transitions, neginf=0.0)))
    assert np.abs(unforbidden - got).max() > 1e-2


def dependency_trees(n, projective):
    """Every tree over words 1..n as packed (n, n) 0/1 matrices: entry
    [m-1, h-1] the arc h -> m, [m-1, m-1] the arc root -> m."""
    trees = []
    for heads in itertools.product(range(n + 1), repeat=n):
        if any(h == m + 1 for m, h in enumerate(heads)):
            continue
        if not all(_reaches_root(heads, m) for m in range(1, n + 1)):
            continue
        if projective and (heads.count(0) != 1 or _crossing(heads)):
            continue
        packed = np.zeros((n, n))
        for m, h in enumerate(heads, start=1):
            packed[m - 1, (h if h else m) - 1] = 1
        trees.append(packed)
    return trees


def _reaches_root(heads, m):
    seen = set()
    while m != 0:
        if m in seen:
            return False
        seen.add(m)
        m = heads[m - 1]
    return True


def _crossing(heads):
    arcs = [tuple(sorted((h, m))) for m, h in enumerate(heads, start=1)]
    return any(a < c < b < d for (a, b) in arcs for (c, d) in arcs)


@pytest.mark.parametrize("projective", [False, True])
def test_dependency_trees(projective):
    rng = np.random.RandomState(5)
    trees = dependency_trees(3, projective)
    assert len(trees) == (7 if projective else 16)
    x = rng.randn(3, 3)
    got = solve(x, lambda u: DepTree(u, packed=True, projective=projective))
    expected = sparsemap([t.ravel() for t in trees], x.ravel())
    np.testing.assert_allclose(got.ravel(), expected, atol=1e-6)


def test_budgets_sharing_variables_with_a_tree():
    # Each word has at most one child: with factors sharing variables, the
    # local polytope is the trees' hull cut by the budgets.
    n = 3
    trees = [t.ravel() for t in dependency_trees(n, projective=False)]
    children = np.zeros((n, n * n))
    for k in range(n):
        for m in range(n):
            if m != k:
                children[k, m * n + k] = 1
    rng = np.random.RandomState(6)
    active = 0
    for _ in range(4):
        x = rng.randn(n, n) + 0.5
        budgets = [lambda u, k=k: Budget(u[[m for m in range(n) if m != k], k], 1)
                   for k in range(n)]
        got = solve(x, lambda u: DepTree(u, packed=True), *budgets)
        expected = sparsemap(trees, x.ravel(), cuts=(children, np.ones(n)))
        np.testing.assert_allclose(got.ravel(), expected, atol=1e-5)
        active += (children @ sparsemap(trees, x.ravel())).max() > 1 + 1e-6
    assert active >= 2, "the budgets were rarely active"


def test_the_low_level_modules_are_attributes_of_the_package():
    """After `import lpsmap` its low-level modules are reachable as
    attributes, as lp-sparsemap's package imports them (checked in a fresh
    interpreter, without PyTorch, whose import would take seconds: this
    one may have imported them already)."""
    code = ("import sys; sys.modules['torch'] = None; "
            "import concord.lpsmap as lpsmap; from concord.ad3 import PFactorGraph; "
            "assert lpsmap.ad3qp.factor_graph.PFactorGraph is PFactorGraph; "
            "assert lpsmap.ad3ext.sequence.PFactorSequence and lpsmap.ad3ext.tree.PFactorTree")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sparse_solutions_in_the_factors_own_form():
    """lp-sparsemap's get_sparse_solution gives a sequence's configurations
    as a state per position and a tree's as the head of each word (-1 for
    the root): each is a valid structure, and the weighted sum of their
    indicators is the factor's SparseMAP solution."""
    from concord.lpsmap.ad3ext.sequence import PFactorSequence
    from concord.lpsmap.ad3ext.tree import PFactorTree
    rng = np.random.RandomState(5)
    sequence = PFactorSequence()
    sequence.initialize([2, 3, 2])
    u, _ = sequence.solve_qp(rng.randn(7).tolist(), rng.randn(2 * 3 + 3 * 2).tolist())
    configurations, weights = sequence.get_sparse_solution()
    mean = np.zeros(7)
    for states, weight in zip(configurations, weights):
        assert len(states) == 3 and all(0 <= s < n for s, n in zip(states, [2, 3, 2]))
        mean[np.array([0, 2, 5]) + np.array(states)] += weight
    np.testing.assert_allclose(mean, u, atol=1e-9)
    for packed in (False, True):
        tree = PFactorTree()
        tree.initialize(False, packed, 3)
        u, _ = tree.solve_qp((rng.randn(9) * 0.5).tolist(), [])
        configurations, weights = tree.get_sparse_solution()
        arcs = [(0 if h == m else h, m) for m in range(1, 4)
                for h in range(1 if packed else 0, 4) if packed or h != m]
        mean = np.zeros(9)
        for heads, weight in zip(configurations, weights):
            assert heads[0] == -1 and len(heads) == 4
            for m in range(1, 4):  # every word reaches the root
                seen, x = set(), m
                while x != 0:
                    assert x not in seen
                    seen.add(x)
                    x = heads[x]
            mean += weight * np.array([float(heads[m] == h) for h, m in arcs])
        np.testing.assert_allclose(mean, u, atol=1e-9)
    # a DENSE factor's as the state of each multi-variable, in turn
    from concord.lpsmap.ad3qp.factor_graph import PFactorGraph
    graph = PFactorGraph()
    multi = [graph.create_multi_variable(2), graph.create_multi_variable(3)]
    dense = graph.create_factor_dense(multi, (rng.randn(6) * 0.3).tolist())
    u, v = dense.solve_qp((rng.randn(5) * 0.3).tolist(), (rng.randn(6) * 0.3).tolist())
    configurations, weights = dense.get_sparse_solution()
    assert len(configurations) > 1
    mean_u, mean_v = np.zeros(5), np.zeros(6)
    for states, weight in zip(configurations, weights):
        assert len(states) == 2 and 0 <= states[0] < 2 and 0 <= states[1] < 3
        mean_u[[states[0], 2 + states[1]]] += weight
        mean_v[3 * states[0] + states[1]] += weight  # joint states, the first variable major
    np.testing.assert_allclose(mean_u, u, atol=1e-9)
    np.testing.assert_allclose(mean_v, v, atol=1e-9)


def test_sparse_solutions_after_the_graphs_solve_qp_ad3():
    """As in lp-sparsemap, a factor's get_sparse_solution after its graph's
    solve_qp_ad3 gives the distribution behind the factor's part of that
    solution: valid structures whose weights (positive, summing to 1)
    average to the posteriors at the factor's variables, for a sequence
    sharing variables with an XOR and for a tree alone; the graph's
    jacobian_vec and the other factors' own calls leave it be. A later
    solve_qp of the factor takes over; a later LP-MAP solve of the graph
    leaves only the factor's own QP, and without one there is nothing to
    give."""
    from concord.ad3 import PFactorGraph
    from concord.lpsmap.ad3ext.sequence import PFactorSequence
    from concord.lpsmap.ad3ext.tree import PFactorTree
    rng = np.random.RandomState(12)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(7)]
    sequence = PFactorSequence()
    sequence.initialize([2, 3, 2])
    graph.declare_factor(sequence, variables)
    xor = graph.create_factor_logic("XOR", [variables[0], variables[2], variables[5]])
    graph.set_log_potentials(rng.randn(7) * 0.5)
    graph.set_all_additionals([rng.randn(2 * 3 + 3 * 2) * 0.5])
    u = np.array(graph.solve_qp_ad3()[1])
    graph.jacobian_vec(np.ones(7), np.zeros(7))
    xor.solve_map([0.1, 0.2, 0.3], [])  # another factor's own calls leave it be
    xor.solve_qp([0.1, 0.2, 0.3], [])
    configurations, weights = sequence.get_sparse_solution()
    assert len(weights) > 1 and min(weights) > 0 and abs(sum(weights) - 1) < 1e-9
    mean = np.zeros(7)
    for states, weight in zip(configurations, weights):
        assert len(states) == 3 and all(0 <= s < n for s, n in zip(states, [2, 3, 2]))
        mean[np.array([0, 2, 5]) + np.array(states)] += weight
    np.testing.assert_allclose(mean, u, atol=1e-6)
    own = sequence.solve_qp(rng.randn(7).tolist(), [])[0]
    configurations, weights = sequence.get_sparse_solution()
    mean = np.zeros(7)
    for states, weight in zip(configurations, weights):
        mean[np.array([0, 2, 5]) + np.array(states)] += weight
    np.testing.assert_allclose(mean, own, atol=1e-9)
    graph.solve_qp_ad3()
    graph.solve_lp_map_ad3()
    assert sequence.get_sparse_solution() == (configurations, weights)  # its own QP
    tree_graph = PFactorGraph()
    tree = PFactorTree()
    tree.initialize(False, True, 3)
    tree_graph.declare_factor(tree, [tree_graph.create_binary_variable() for _ in range(9)])
    tree_graph.set_log_potentials(rng.randn(9) * 0.3)
    u = np.array(tree_graph.solve_qp_ad3()[1])
    arcs = [(0 if h == m else h, m) for m in range(1, 4) for h in range(1, 4)]
    heads_list, weights = tree.get_sparse_solution()
    assert abs(sum(weights) - 1) < 1e-9
    mean = sum(w * np.array([float(heads[m] == h) for h, m in arcs])
               for heads, w in zip(heads_list, weights))
    np.testing.assert_allclose(mean, u, atol=1e-6)
    tree_graph.solve_lp_map_ad3()
    with pytest.raises(ValueError, match="no QP solved"):
        tree.get_sparse_solution()


def test_a_graph_without_shared_variables_is_solved_whatever_the_cap():
    """lp-sparsemap's examples/sequence.py solves a graph of one sequence
    with set_eta_ad3(0.0) and set_max_iterations_ad3(1), "since there is a
    single factor, a single outer iter is enough": its solve_qp_ad3 is the
    factor's SparseMAP, here the minimizer of |u|^2 / 2 - theta.u - phi.v
    over the configurations' convex hull, found by SLSQP over their
    weights (and a variable in no factor is its clipped score)."""
    from scipy.optimize import minimize
    from concord.ad3 import PFactorGraph
    from concord.lpsmap.ad3ext.sequence import PFactorSequence
    rng = np.random.RandomState(13)
    length, states = 3, 2
    theta, phi = rng.randn(length * states), rng.randn((length - 1) * states ** 2)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(length * states)]
    for variable, score in zip(variables, theta):
        variable.set_log_potential(score)
    free = graph.create_binary_variable()
    free.set_log_potential(0.3)
    sequence = PFactorSequence()
    sequence.initialize([states] * length)
    graph.declare_factor(sequence, variables)
    sequence.set_additional_log_potentials(phi.tolist())
    graph.set_eta_ad3(0.0)
    graph.set_max_iterations_ad3(1)
    _, u, _, status = graph.solve_qp_ad3()
    assert status != 3  # not stopped by the cap
    paths = list(itertools.product(range(states), repeat=length))
    U = np.array([[float(p[i] == k) for i in range(length) for k in range(states)]
                  for p in paths])
    V = np.array([[float((p[i], p[i + 1]) == (a, b)) for i in range(length - 1)
                   for a in range(states) for b in range(states)] for p in paths])

    def objective(w):
        mean = U.T @ w
        return 0.5 * mean @ mean - theta @ mean - phi @ (V.T @ w)

    best = minimize(objective, np.full(len(paths), 1.0 / len(paths)), method="SLSQP",
                    bounds=[(0, 1)] * len(paths), options=dict(ftol=1e-14, maxiter=1000),
                    constraints=[dict(type="eq", fun=lambda w: w.sum() - 1)])
    np.testing.assert_allclose(u[:-1], U.T @ best.x, atol=1e-5)
    assert abs(u[-1] - 0.3) < 1e-9


def test_an_empty_graph_and_a_variable_of_another_graph_are_refused():
    with pytest.raises(ValueError, match="no variables to solve for"):
        FactorGraph().solve()
    other = FactorGraph().variable_from(np.zeros(2))
    fg = FactorGraph()
    x = fg.variable_from(np.zeros(2))
    fg.add(Pair(x[:1], other[1:], np.zeros(1)))
    with pytest.raises(ValueError, match="a factor's variable .* is not in this FactorGraph"):
        fg.solve()


def test_scores_of_the_wrong_shape_are_refused():
    """The lp-sparsemap API checks the shapes of factor scores: transition
    scores of a Sequence must be (length - 1, states, states), a Pair needs
    one score per pair (the low-level factors' tolerance of extra
    log-potentials must not let a wrong shape through)."""
    from concord.lpsmap.ad3ext.tree import PFactorTree
    fg = FactorGraph()
    x = fg.variable_from(np.zeros((3, 2)))
    fg.add(Sequence(x, np.zeros((3, 2, 2))))
    with pytest.raises(ValueError, match=r"Sequence: transition scores of shape \(3, 2, 2\), "
                                         r"expected \(2, 2, 2\)"):
        fg.solve()
    fg = FactorGraph()
    x = fg.variable_from(np.zeros(3))
    fg.add(Pair(x[:-1], x[1:], np.zeros(3)))
    with pytest.raises(ValueError, match="Pair: 3 scores for 2 pairs"):
        fg.solve()
    fg = FactorGraph()
    x = fg.variable_from(np.zeros(2))
    fg.add(Pair(x[:-1], x[1:], np.float64(0.5)))
    with pytest.raises(ValueError, match=r"Pair: its scores are a scalar; it needs one per "
                                         r"pair of variables \(a 1-D array of 1\)"):
        fg.solve()
    # a factor laid out again forgets the QP solved on its former layout
    tree = PFactorTree()
    tree.initialize(False, False, 2)
    tree.solve_qp([0.1, 0.2, 0.3, 0.4], [])
    tree.initialize(True, False, 2)
    with pytest.raises(ValueError, match="no QP solved"):
        tree.get_sparse_solution()


def test_constraints_without_a_common_solution_are_warned_of():
    """lp-sparsemap returns its last iterate silently when the factors'
    constraints admit no assignment; concord's solver proves it and warns.
    Brute force tells the infeasible graph (XOR and a budget of 0) from
    the feasible one (a budget of 1), which solves without a warning."""
    def graph(budget):
        fg = FactorGraph()
        x = fg.variable_from(np.array([0.3, -0.4]))
        fg.add(Xor(x))
        fg.add(Budget(x, budget))
        return fg, x

    assert assignments(2, lambda x: sum(x) == 1 and sum(x) <= 0) == []
    fg, _ = graph(0)
    with pytest.warns(RuntimeWarning, match="admit no common solution"):
        fg.solve()
    assert assignments(2, lambda x: sum(x) == 1 and sum(x) <= 1) != []
    fg, x = graph(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fg.solve(tol=1e-10)
    np.testing.assert_allclose(x.value, sparsemap([[1, 0], [0, 1]], np.array([0.3, -0.4])),
                               atol=1e-8)


def test_factors_of_the_wrong_shape_say_so():
    """Shapes that lp-sparsemap fails on inside NumPy, or reads wrongly,
    are refused with a message naming the factor; Pair scores may be a
    list (lp-sparsemap's numpy graph fails on one)."""
    def solved(*factors_of, shape=(2, 2)):
        fg = FactorGraph()
        x = fg.variable_from(np.zeros(shape))
        fg.variable_from(np.array([0.5]))
        for make in factors_of:
            fg.add(make(x))
        fg.solve()
        return x

    with pytest.raises(ValueError, match=r"Sequence: no positions \(variables of shape \(0, 2\)\)"):
        solved(lambda x: Sequence(x, np.zeros((0, 2, 2))), shape=(0, 2))
    with pytest.raises(ValueError, match=r"Sequence: variables of shape \(4,\); it needs a 2-D"):
        solved(lambda x: Sequence(x, np.zeros((3, 1, 1))), shape=(4,))
    with pytest.raises(ValueError, match=r"DepTree: variables of shape \(2, 3\); a tree over n "
                                         r"words needs \(n, n\)"):
        solved(DepTree, shape=(2, 3))
    with pytest.raises(ValueError, match="Pair: 2 variables on one side, 1 on the other"):
        solved(lambda x: Pair(x[0], x[1, :1], np.zeros(2)))
    theta = np.array([0.2, 0.3])
    results = []
    for scores in ([2.0], np.array([2.0])):
        fg = FactorGraph()
        x = fg.variable_from(theta)
        fg.add(Pair(x[:1], x[1:], scores))
        fg.solve(tol=1e-10)
        results.append(x.value)
    np.testing.assert_array_equal(results[0], results[1])
    # a PAIR alone: SparseMAP over its four assignments, scored 2 when both are on
    vertices = [[0, 0], [1, 0], [0, 1], [1, 1]]
    np.testing.assert_allclose(results[0], sparsemap(vertices, theta, [[0], [0], [0], [1]],
                                                     np.array([2.0])), atol=1e-6)
