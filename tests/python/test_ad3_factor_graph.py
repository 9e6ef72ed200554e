"""concord.ad3.factor_graph, the drop-in for AD3's PFactorGraph, against
brute force.

Model builds a PFactorGraph and, next to it, its meaning as plain Python
(which 0/1 assignments each factor allows, what each additional
log-potential scores), written from AD3's documentation; `best` searches
every assignment. The checks follow AD3's own Python tests: variables,
argument errors, logic, pair, dense, budget and knapsack factors, the
solve statuses (infeasible relaxations as AD3 reports them), branch and
bound, dual and local primal variables, and lp-sparsemap's additions
(solve_qp_ad3, jacobian_vec, set_all_additionals, with the arguments they
refuse); complex log-potentials are refused.
"""

import itertools
import os
import sys

import numpy as np
import pytest
from scipy.optimize import linprog

from concord import InfeasibleError, InvalidArgumentError
from concord.ad3 import PFactorGraph
from concord.ad3.extensions import PFactorSequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_specs import GraphSpec  # noqa: E402
from test_lp_sparsemap_forward import LocalQP, RefFactor, solve_reference  # noqa: E402

LOGIC_RULES = {
    "XOR": lambda x: sum(x) == 1,
    "OR": lambda x: sum(x) >= 1,
    "ATMOSTONE": lambda x: sum(x) <= 1,
    "XOROUT": lambda x: sum(x[:-1]) == x[-1],
    "OROUT": lambda x: x[-1] == any(x[:-1]),
    "ANDOUT": lambda x: x[-1] == all(x[:-1]),
    "IMPLY": lambda x: x[-1] or not all(x[:-1]),
}


class Model:
    """A PFactorGraph (``graph``) and the same model as plain data: scores
    per binary variable, allowed-assignment rules and additional score
    terms, each over a tuple of variable ids."""

    def __init__(self):
        self.graph = PFactorGraph()
        self.theta = []
        self.rules = []   # (ids, predicate over their 0/1 values)
        self.terms = []   # (ids, score of their 0/1 values)

    def binary(self, score):
        var = self.graph.create_binary_variable()
        var.set_log_potential(score)
        self.theta.append(float(score))
        return var

    def multi(self, scores):
        var = self.graph.create_multi_variable(len(scores))
        var.set_log_potentials(np.asarray(scores, dtype=float))
        self.theta.extend(float(s) for s in scores)
        return var

    def states(self, multi):
        return [multi.get_state(k) for k in range(len(multi))]

    def one_hot(self, multi):
        """The rule that a multi-variable (kept one-hot by its factors) has
        exactly one state on."""
        self.rules.append((self.ids(self.states(multi)), lambda x: sum(x) == 1))

    def ids(self, variables):
        return tuple(v.get_id() for v in variables)

    def logic(self, kind, variables, negated=None):
        self.graph.create_factor_logic(kind, variables, negated)
        flips = negated or [False] * len(variables)
        rule = LOGIC_RULES[kind]
        self.rules.append((self.ids(variables),
                           lambda x: rule([xi ^ f for xi, f in zip(x, flips)])))

    def pair(self, a, b, score):
        self.graph.create_factor_pair([a, b], score)
        self.terms.append((self.ids([a, b]), lambda x: score * x[0] * x[1]))

    def dense(self, multis, table):
        table = np.asarray(table, dtype=float)
        factor = self.graph.create_factor_dense(list(multis), table.ravel())
        for m in multis:
            self.one_hot(m)
        groups = [self.ids(self.states(m)) for m in multis]
        ids = tuple(i for g in groups for i in g)
        shape = [len(g) for g in groups]

        def score(x):
            picked, start = [], 0
            for size in shape:
                picked.append(int(np.argmax(x[start:start + size])))
                start += size
            return table.reshape(shape)[tuple(picked)]
        self.terms.append((ids, score))
        return factor

    def budget(self, variables, budget, negated=None, exact=False):
        self.graph.create_factor_budget(variables, budget, negated, force_budget=exact)
        flips = negated or [False] * len(variables)
        self.rules.append((self.ids(variables), lambda x: (
            sum(xi ^ f for xi, f in zip(x, flips)) == budget if exact
            else sum(xi ^ f for xi, f in zip(x, flips)) <= budget)))

    def knapsack(self, variables, costs, budget):
        self.graph.create_factor_knapsack(variables, costs, budget)
        self.rules.append((self.ids(variables),
                           lambda x: np.dot(costs, x) <= budget + 1e-12))

    def value(self, x):
        """The score of a 0/1 assignment (-inf when a rule forbids it)."""
        if not all(rule([x[i] for i in ids]) for ids, rule in self.rules):
            return -np.inf
        return (np.dot(self.theta, x)
                + sum(term([x[i] for i in ids]) for ids, term in self.terms))

    def best(self):
        """(value, assignment) of the best assignment; (-inf, None) when
        no assignment is allowed."""
        best_value, best_x = -np.inf, None
        for x in itertools.product((0, 1), repeat=len(self.theta)):
            value = self.value(x)
            if value > best_value:
                best_value, best_x = value, np.array(x, dtype=float)
        return best_value, best_x


def frustrated_triangle(seed):
    """Three two-state variables with a dense factor on each pair that
    rewards unequal states (no assignment satisfies all three, so LP-MAP
    is fractional), plus small random scores from the seed."""
    rng = np.random.RandomState(seed)
    model = Model()
    a, b, c = (model.multi(rng.randn(2) * 0.3) for _ in range(3))
    for pair in ((a, b), (a, c), (b, c)):
        model.dense(pair, rng.randn(2, 2) * 0.3 + 2.0 * (1 - np.eye(2)))
    return model


def test_variables_keep_their_scores_states_and_degrees():
    graph = PFactorGraph()
    var = graph.create_binary_variable()
    var.set_log_potential(0.5)
    assert var.get_log_potential() == 0.5
    five = graph.create_multi_variable(5)
    assert len(five) == 5
    five[1] = 3.0
    assert five[1] == 3.0
    five.set_log_potentials(np.arange(5.0) * 2)
    assert [five[i] for i in range(5)] == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert five.get_state(3).get_log_potential() == 6.0
    # AD3's getters return Python floats (its scores are C doubles), whatever set them
    assert all(type(five[i]) is float and type(five.get_log_potential(i)) is float
               and type(five.get_state(i).get_log_potential()) is float for i in range(5))
    a, b = graph.create_binary_variable(), graph.create_binary_variable()
    assert a.get_degree() == b.get_degree() == 0
    graph.create_factor_pair([a, b], 1.0)
    graph.create_factor_pair([a, b], -1.0)
    assert a.get_degree() == b.get_degree() == 2
    two = graph.create_multi_variable(2)
    graph.create_factor_dense([two, five], np.zeros(10))
    assert [s.get_degree() for s in (two.get_state(0), five.get_state(4))] == [1, 1]


def test_out_of_range_states_and_links_are_refused_whatever_validate_says():
    graph = PFactorGraph()
    three = graph.create_multi_variable(3)
    for i in (3, 7, -1):
        with pytest.raises(IndexError, match="out of bounds"):
            three.get_state(i, validate=False)
    factor = graph.create_factor_logic("XOR", [three.get_state(0), three.get_state(2)])
    assert factor.get_variable(1).get_degree() == 1
    # links are numbered factor by factor, in declaration order: the XOR's
    # are 0 and 1, the OR's 2, 3 and 4 (an index beyond a factor's links
    # once gave another factor's link, or none)
    later = graph.create_factor_logic("OR", [three.get_state(i) for i in range(3)])
    assert [factor.get_link_id(i) for i in range(2)] == [0, 1]
    assert [later.get_link_id(i) for i in range(3)] == [2, 3, 4]
    for i in (2, -1):
        for get in (factor.get_variable, factor.get_link_id):
            with pytest.raises(IndexError, match="degree 2"):
                get(i)
    with pytest.raises(ValueError, match="bound to no graph"):
        PFactorSequence().get_link_id(0)
    graph = PFactorGraph()
    three = graph.create_multi_variable(3)
    factor = graph.create_factor_logic("XOR", [three.get_state(0), three.get_state(2)])
    assert [three.get_state(i).get_degree() for i in range(3)] == [1, 0, 1]
    three.set_log_potentials([0.0, 2.0, 1.0])
    # one state of the multi-variable is on, and the XOR rules out state 1
    value, posteriors, _, status = graph.solve()
    assert status == "integral" and posteriors == [0.0, 0.0, 1.0] and value == 1.0


def _wrong_calls():
    graph = PFactorGraph()
    a, b = graph.create_binary_variable(), graph.create_binary_variable()
    m2, m3 = graph.create_multi_variable(2), graph.create_multi_variable(3)
    three = [a, b, graph.create_binary_variable()]
    table = np.arange(6.0)
    return [
        (TypeError, lambda: graph.create_factor_pair([a, b], None)),
        (TypeError, lambda: graph.create_factor_pair(None, 1.0)),
        (TypeError, lambda: graph.create_factor_pair(-1, 1.0)),
        (TypeError, lambda: graph.create_factor_pair([a, -1], 1.0)),
        (AttributeError, lambda: graph.create_factor_pair([a, None], 1.0)),
        (ValueError, lambda: graph.create_factor_pair([a, b, a], 1.0)),
        (TypeError, lambda: graph.create_factor_dense(None, table)),
        (TypeError, lambda: graph.create_factor_dense(-1, table)),
        (TypeError, lambda: graph.create_factor_dense([m2, -1], table)),
        (AttributeError, lambda: graph.create_factor_dense([m2, None], table)),
        (ValueError, lambda: graph.create_factor_dense([m2, m3], table[:-1])),
        (ValueError, lambda: graph.create_factor_dense([m2, m3], np.tile(table, 2))),
        (TypeError, lambda: graph.create_factor_dense([m2, m3], None)),
        (NotImplementedError, lambda: graph.create_factor_logic("NAND", three)),
        (ValueError, lambda: graph.create_factor_logic("OR", three, negated=[True])),
        (ValueError, lambda: graph.create_factor_logic("OR", three, negated=[True] * 4)),
        (TypeError, lambda: graph.create_factor_logic("OR", three, negated=42)),
        (ValueError, lambda: graph.create_factor_knapsack(three, costs=[1.0], budget=1)),
        (ValueError, lambda: graph.create_factor_knapsack(three, costs=[1.0] * 4, budget=1)),
        (TypeError, lambda: graph.create_factor_knapsack(three, costs=42, budget=1)),
        (TypeError, lambda: graph.create_factor_knapsack(three, costs=None, budget=1)),
    ]


@pytest.mark.parametrize("case", range(len(_wrong_calls())))
def test_wrong_arguments_raise_ad3s_exceptions(case):
    error, call = _wrong_calls()[case]
    with pytest.raises(error) as raised:
        call()
    if error is NotImplementedError:
        assert "unknown" in str(raised.value).lower()


def test_score_arguments_may_be_any_iterable():
    """AD3 converts its vector arguments from any iterable, generators and
    dict views included."""
    graph = PFactorGraph()
    a, b = graph.create_multi_variable(2), graph.create_multi_variable(2)
    # the joint state (1, 1) scores 3, the others less
    graph.create_factor_dense([a, b], (float(k) for k in range(4)))
    assert graph.solve() == (3.0, [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0], "integral")
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(3)]
    for variable, score in zip(variables, (1.0, 2.0, 3.0)):
        variable.set_log_potential(score)
    # costs 1, 1, 2 within 2: the relaxation takes the second and half the third
    graph.create_factor_knapsack(variables, {0: 1.0, 1: 1.0, 2: 2.0}.values(), 2.0)
    value, posteriors, _, _ = graph.solve()
    assert value == pytest.approx(3.5, abs=1e-6)
    np.testing.assert_allclose(posteriors, [0.0, 1.0, 0.5], atol=1e-6)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(4)]
    sequence = PFactorSequence()
    sequence.initialize(iter([2, 2]))
    graph.declare_factor(sequence, variables)
    # start: state 1 scores 1; transition 1 -> 1 scores 3
    sequence.set_additional_log_potentials(x for x in [0.0, 1.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0])
    value, posteriors, _, status = graph.solve()
    assert status == "integral" and value == 4.0 and posteriors == [0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("kind", sorted(LOGIC_RULES))
def test_logic_factors_solve_to_the_brute_force_map(kind):
    rng = np.random.RandomState(len(kind))
    for degree in (2, 3, 4):
        for _ in range(4):
            model = Model()
            variables = [model.binary(s) for s in rng.randn(degree)]
            negated = [bool(f) for f in rng.randint(0, 2, degree)]
            model.logic(kind, variables, negated)
            best, x = model.best()
            value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
            assert status == "integral"
            assert value == pytest.approx(best, abs=1e-9)
            np.testing.assert_allclose(posteriors, x, atol=1e-9)
            lp_value, _, _, lp_status = model.graph.solve()
            # one factor: its LP is over the convex hull of its assignments
            assert lp_status in ("integral", "fractional")
            assert lp_value == pytest.approx(best, abs=1e-5)


@pytest.mark.parametrize("kind", ["XOR", "OR", "ATMOSTONE", "XOROUT", "IMPLY"])
@pytest.mark.parametrize("negated", [None, [True]])
def test_one_variable_logic_factors(kind, negated):
    """Over one variable, XOROUT holds its literal at 0 (the XOR of no
    inputs) and IMPLY at 1 (a consequent without conditions), as in AD3;
    a pair factor to a second variable keeps the optimum from being the
    variable's own best."""
    for score in (1.0, -1.0):
        model = Model()
        a, b = model.binary(score), model.binary(0.5)
        model.logic(kind, [a], negated)
        model.pair(a, b, 0.3)
        best, x = model.best()
        for branch_and_bound in (False, True):
            value, posteriors, _, status = model.graph.solve(branch_and_bound=branch_and_bound)
            assert status == "integral" and value == pytest.approx(best, abs=1e-9)
            np.testing.assert_allclose(posteriors, x, atol=1e-9)


@pytest.mark.parametrize("kind", ["OROUT", "ANDOUT"])
def test_an_output_without_inputs_is_refused(kind):
    graph = PFactorGraph()
    graph.create_factor_logic(kind, [graph.create_binary_variable()])
    with pytest.raises(InvalidArgumentError, match="inputs and an output"):
        graph.solve()


def test_an_unconstrained_logic_factor_is_satisfiable_at_zero_scores():
    for kind in LOGIC_RULES:
        graph = PFactorGraph()
        graph.create_factor_logic(kind, [graph.create_binary_variable() for _ in range(3)])
        assert graph.solve()[0] == pytest.approx(0.0, abs=1e-9)


def test_negations_turn_andout_into_orout():
    # (not a) and (not b) == out  <=>  a or b == not out
    rng = np.random.RandomState(5)
    for _ in range(10):
        scores = rng.randn(3)
        results = []
        for kind, negated in (("ANDOUT", [True, True, False]), ("OROUT", [False, False, True])):
            model = Model()
            variables = [model.binary(s) for s in scores]
            model.logic(kind, variables, negated)
            results.append(model.graph.solve())
        assert results[0][0] == pytest.approx(results[1][0], abs=1e-9)
        np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-9)


def test_dense_factors_keep_multi_variables_one_hot():
    model = Model()
    a = model.multi(-100 * np.ones(3))
    b = model.multi(np.ones(3))
    table = np.zeros((3, 3))
    table[0, 0], table[1, 2] = 1, 10
    model.dense([a, b], table)
    best, x = model.best()
    value, posteriors, additionals, status = model.graph.solve()
    assert status == "integral" and value == pytest.approx(best)
    np.testing.assert_allclose(posteriors, x, atol=1e-9)
    np.testing.assert_allclose(additionals, np.outer(x[:3], x[3:]).ravel(), atol=1e-9)


def test_minus_infinity_in_a_dense_table_forbids_its_joint_state():
    """As in AD3, -inf forbids a joint state: on random cycles of three
    dense factors with forbidden entries, branch and bound finds the best
    allowed assignment, also after set_additional_log_potentials moved
    the forbidden entries (the graph is rebuilt)."""
    rng = np.random.RandomState(7)

    def random_tables():
        tables = [rng.randn(3, 3) for _ in range(3)]
        for table in tables:
            table[rng.rand(3, 3) < 0.4] = -np.inf
            table[rng.randint(3), rng.randint(3)] = 0.5   # one state stays allowed
        return tables

    def cycle(scores, tables):
        model = Model()
        a, b, c = (model.multi(theta) for theta in scores)
        factors = [model.dense(pair, table)
                   for pair, table in zip(((a, b), (a, c), (b, c)), tables)]
        return model, factors

    def check(result, reference):
        value, posteriors, _, status = result
        best, x = reference
        if best == -np.inf:
            assert status == "infeasible"
        else:
            assert status == "integral" and value == pytest.approx(best, abs=1e-9)
            np.testing.assert_allclose(posteriors, x, atol=1e-9)

    for _ in range(12):
        scores = [rng.randn(3) for _ in range(3)]
        model, factors = cycle(scores, random_tables())
        check(model.graph.solve(branch_and_bound=True), model.best())
        moved = random_tables()
        for factor, table in zip(factors, moved):
            factor.set_additional_log_potentials(table.ravel())
        check(model.graph.solve(branch_and_bound=True), cycle(scores, moved)[0].best())


def test_imply_between_states_of_multi_variables():
    model = Model()
    a, b = model.multi([1.0, 0, 0]), model.multi([0, 10.0, 9.5])
    model.graph.fix_multi_variables_without_factors()
    for m in (a, b):
        model.one_hot(m)
    free_value, free, _, _ = model.graph.solve()
    assert np.array(free).reshape(2, 3).argmax(axis=1).tolist() == [0, 1]
    model.logic("IMPLY", [a.get_state(0), b.get_state(1)], [False, True])
    model.graph.fix_multi_variables_without_factors()
    best, x = model.best()
    value, posteriors, _, _ = model.graph.solve()
    assert value == pytest.approx(best) and value < free_value
    np.testing.assert_allclose(posteriors, x, atol=1e-6)


def test_a_chain_of_dense_factors_is_solved_exactly():
    model = Model()
    observed = [0, 1, None, None, 1]
    variables = [model.multi([0.0] * 3 if o is None else 1.5 * np.eye(3)[o]) for o in observed]
    for prev, curr in zip(variables, variables[1:]):
        model.dense([prev, curr], np.eye(3))
    best, x = model.best()
    value, posteriors, _, status = model.graph.solve()
    assert status == "integral" and value == pytest.approx(best) == 7.5
    np.testing.assert_allclose(posteriors, x, atol=1e-9)


def test_solve_statuses_and_branch_and_bound_on_a_cycle():
    model = Model()
    rng = np.random.RandomState(0)
    a, b, c = (model.multi(rng.randn(3)) for _ in range(3))
    for pair in ((a, b), (a, c), (b, c)):
        model.dense(pair, rng.randn(3, 3))
    best, x = model.best()
    graph = model.graph
    value, posteriors, _, status = graph.solve()
    assert status == "integral" and value == pytest.approx(best, abs=1e-6)
    assert graph.solve(max_iter=1)[3] == "unsolved"
    # a loose tolerance stops at a fractional point (whose value, with
    # copies that still disagree by up to 0.3, may lie on either side of
    # the optimum), and branch and bound at that tolerance is still exact
    loose_value, _, _, loose_status = graph.solve(tol=0.3)
    assert loose_status == "fractional" and loose_value != pytest.approx(best, abs=1e-3)
    bb_value, bb_posteriors, _, bb_status = graph.solve(tol=0.3, branch_and_bound=True)
    assert bb_status == "integral" and bb_value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(bb_posteriors, x, atol=1e-9)


def test_branch_and_bound_closes_fractional_relaxations():
    closed = 0
    for seed in range(10):
        model = frustrated_triangle(seed)
        best, x = model.best()
        lp_value, _, _, lp_status = model.graph.solve()
        assert lp_value >= best - 1e-6
        value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
        assert status == "integral" and value == pytest.approx(best, abs=1e-9)
        np.testing.assert_allclose(posteriors, x, atol=1e-9)
        closed += lp_status == "fractional"
    assert closed == 10, "a frustrated triangle had an integral relaxation"


def test_psdd_bounds_and_certifies_tree_shaped_graphs():
    model = Model()
    rng = np.random.RandomState(3)
    variables = [model.multi(rng.randn(3)) for _ in range(4)]
    for prev, curr in zip(variables, variables[1:]):
        model.dense([prev, curr], rng.randn(3, 3))
    best, x = model.best()
    model.graph.set_max_iterations_psdd(2000)
    result = model.graph.solve_lp_map_psdd()
    assert len(result) == 3   # AD3 returns no status
    value, posteriors, _ = result
    assert value == pytest.approx(best, abs=1e-6)
    np.testing.assert_allclose(posteriors, x, atol=1e-6)


def test_budget_factors_at_most_and_exactly():
    rng = np.random.RandomState(1)
    for exact in (False, True):
        for _ in range(5):
            model = Model()
            variables = [model.binary(s) for s in rng.randn(5) * 3]
            negated = [bool(f) for f in rng.randint(0, 2, 5)]
            model.budget(variables, 2, negated, exact=exact)
            best, x = model.best()
            value, posteriors, _, status = model.graph.solve()
            assert value == pytest.approx(best, abs=1e-6)
            bb = model.graph.solve(branch_and_bound=True)
            assert bb[3] == "integral" and bb[0] == pytest.approx(best, abs=1e-9)
            np.testing.assert_allclose(bb[1], x, atol=1e-9)
    model = Model()
    variables = [model.binary(s) for s in (100, 1, 100, 1, 100)]
    model.budget(variables, 3)
    np.testing.assert_allclose(model.graph.solve()[1], [1, 0, 1, 0, 1], atol=1e-6)


def assert_lp_and_branch_and_bound_are_right(model, scores, costs, budget):
    """The model's LP-MAP value is that of scipy's LP over the box with
    costs . x <= budget, and branch and bound finds the model's best
    assignment by enumeration."""
    lp = linprog(-scores, A_ub=[costs], b_ub=[budget], bounds=[(0, 1)] * len(scores))
    value, _, _, _ = model.graph.solve(tol=1e-8)
    assert value == pytest.approx(-lp.fun, abs=1e-5)
    best, x = model.best()
    bb_value, bb_posteriors, _, status = model.graph.solve(branch_and_bound=True)
    assert status == "integral" and bb_value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(bb_posteriors, x, atol=1e-9)


def test_knapsack_relaxation_equals_the_lp_and_branch_and_bound_the_brute_force():
    rng = np.random.RandomState(2)
    for _ in range(6):
        model = Model()
        scores = rng.randn(6) * 2 + 1
        costs = rng.uniform(0.5, 3.0, 6)
        budget = float(rng.uniform(2.0, 6.0))
        variables = [model.binary(s) for s in scores]
        model.knapsack(variables, costs, budget)
        assert_lp_and_branch_and_bound_are_right(model, scores, costs, budget)


def test_knapsack_negative_costs_are_costs_of_the_opposite_literals():
    """Negative costs are constraints like any other: the relaxation is the
    LP of sum costs . literals <= budget over the box, branch and bound
    the best assignment that meets it (AD3 takes them, and its greedy
    relaxation gets a third of such random knapsacks wrong)."""
    rng = np.random.RandomState(9)
    for _ in range(8):
        scores = rng.randn(5)
        costs = rng.randn(5)
        negated = [bool(x) for x in rng.uniform(size=5) < 0.3]
        budget = float(costs[costs < 0].sum() + rng.uniform(0.0, 1.5))
        model = Model()
        variables = [model.binary(s) for s in scores]
        model.graph.create_factor_knapsack(variables, costs, budget, negated)
        signs = np.where(negated, -1.0, 1.0)
        offset = float(np.dot(costs, negated))  # literal = 1 - x where negated
        model.rules.append((model.ids(variables),
                            lambda x: offset + np.dot(costs * signs, x) <= budget + 1e-12))
        assert_lp_and_branch_and_bound_are_right(model, scores, costs * signs, budget - offset)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(2)]
    with pytest.raises(ValueError, match="no assignment fits"):
        graph.create_factor_knapsack(variables, [-1.0, 2.0], -1.5)
    with pytest.raises(ValueError, match="no assignment fits"):
        graph.create_factor_knapsack(variables, [1.0, 2.0], -0.5)


def test_infeasible_constraints():
    graph = PFactorGraph()
    a, b = graph.create_binary_variable(), graph.create_binary_variable()
    graph.create_factor_logic("XOR", [a, b])
    graph.create_factor_logic("XOR", [a, b], [True, False])  # a == b
    value, posteriors, _, status = graph.solve(branch_and_bound=True)
    assert status == "infeasible" and value == -np.inf and posteriors == [0.0, 0.0]
    value, posteriors, _, status = graph.solve()
    assert status == "fractional" and posteriors == pytest.approx([0.5, 0.5], abs=1e-6)
    # a relaxation with no solution at all: as AD3's relaxations, "unsolved";
    # dynamic programming (no cycle) leaves no iterate: value -inf, zeros
    graph = PFactorGraph()
    a = graph.create_binary_variable()
    graph.create_factor_logic("XOR", [a])
    graph.create_factor_logic("XOR", [a], [True])
    assert graph.solve() == (-np.inf, [0.0], [], "unsolved")
    assert graph.solve(branch_and_bound=True) == (-np.inf, [0.0], [], "infeasible")
    # with a cycle ADMM runs: its iterate when the bound proves the
    # constraints infeasible, near AD3's (AD3 returns value 1.0 and
    # posteriors 1/6 for this graph, the limit of the consensus: the
    # average of the OR's copies at 1/3 and the budget's at 0)
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(3)]
    for variable, score in zip(variables, [1.0, 2.0, 3.0]):
        variable.set_log_potential(score)
    graph.create_factor_logic("OR", variables)
    graph.create_factor_budget(variables, 0)
    value, posteriors, _, status = graph.solve()
    assert status == "unsolved" and value == pytest.approx(1.0, abs=1e-3)
    assert posteriors == pytest.approx([1 / 6] * 3, abs=1e-3)
    assert graph.solve(branch_and_bound=True) == (-np.inf, [0.0] * 3, [], "infeasible")


def test_a_dense_table_that_forbids_every_state():
    """A DENSE factor of -inf only allows nothing: every solve says so as
    for any infeasible graph, the factor's own solves raise, and once its
    table allows states again the graph solves to the brute-force
    optimum."""
    def make(table):
        model = Model()
        a, b = model.multi([1.0, 0.5]), model.multi([0.0, 2.0])
        return model, model.dense((a, b), table)

    model, dense = make(np.full((2, 2), -np.inf))
    assert model.best()[0] == -np.inf
    nothing = (-np.inf, [0.0] * 4, [0.0] * 4)
    assert model.graph.solve() == nothing + ("unsolved",)
    assert model.graph.solve(branch_and_bound=True) == nothing + ("infeasible",)
    assert model.graph.solve_qp_ad3() == nothing + (3,)
    for solve in (dense.solve_map, dense.solve_qp):
        with pytest.raises(InfeasibleError, match="every configuration uses a forbidden"):
            solve([0.0] * 4, [])
    table = np.array([[0.0, -np.inf], [0.3, 0.1]])
    dense.set_additional_log_potentials(table.ravel())
    best, x = make(table)[0].best()
    value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
    assert status == "integral" and value == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(posteriors, x, atol=1e-9)


def _factor_map(model, f, scores):
    """max over x in {0,1}^2 of scores . x + the f-th term of a model made
    of pair factors only (one term each, no rules), by brute force."""
    ids, term = model.terms[f]
    return max(np.dot(scores, x) + term(x) for x in itertools.product((0, 1), repeat=len(ids)))


def test_dual_and_local_primal_variables():
    graph = PFactorGraph()
    graph.solve()
    assert graph.get_dual_variables() == []
    assert graph.get_local_primal_variables() == []
    assert graph.get_global_primal_variables() == []
    model = Model()
    a, b, c = model.binary(0.3), model.binary(1.0), model.binary(-0.4)
    for pair, score in (((a, b), -2.0), ((b, c), 1.5), ((a, c), 0.7), ((a, b), -0.5)):
        model.pair(*pair, score)
    best, x = model.best()
    value, posteriors, _, status = model.graph.solve(tol=1e-10, max_iter=10000)
    assert status == "integral" and value == pytest.approx(best, abs=1e-9)
    duals = np.array(model.graph.get_dual_variables())
    copies = np.array(model.graph.get_local_primal_variables())
    assert duals.size == copies.size == 8
    assert model.graph.get_global_primal_variables() == posteriors
    links = [v for ids, _ in model.terms for v in ids]
    np.testing.assert_allclose(copies, x[links], atol=1e-6)
    # AD3's dual: each factor's MAP at theta_i / deg_i + 2 lambda, plus the
    # variables' share; at the optimum it equals the primal value.
    degree = np.bincount(links, minlength=3)
    theta = np.array(model.theta)
    dual = 0.0
    for f in range(len(model.terms)):
        ids = model.terms[f][0]
        lam = duals[2 * f:2 * f + 2]
        dual += _factor_map(model, f, theta[list(ids)] / degree[list(ids)] + 2 * lam)
    per_variable = np.bincount(links, weights=duals, minlength=3)
    dual += np.maximum(0.0, -2 * per_variable).sum()
    assert dual == pytest.approx(best, abs=1e-5)


@pytest.mark.parametrize("branch_and_bound", [False, True])
def test_local_primal_variables_of_a_graph_without_cycles(branch_and_bound):
    """A chain is solved by dynamic programming, without multipliers; each
    factor's copies are still the solution's values at its links, as
    AD3's, and the multipliers (0) bound the value."""
    model = Model()
    a, b, c = model.binary(1.0), model.binary(-0.5), model.binary(0.25)
    model.logic("XOR", [a, b])
    model.logic("ATMOSTONE", [b, c], [False, True])
    best, x = model.best()
    model.graph.solve_qp_ad3()  # a solve that leaves multipliers and copies of its own
    value, posteriors, _, status = model.graph.solve(branch_and_bound=branch_and_bound)
    assert status == "integral" and value == pytest.approx(best, abs=1e-12)
    links = [v for ids, _ in model.rules for v in ids]
    np.testing.assert_array_equal(model.graph.get_local_primal_variables(), x[links])
    assert model.graph.get_dual_variables() == [0.0] * len(links)


def test_sparse_solution_and_its_jacobian_equal_finite_differences():
    def solve(theta, phi):
        graph = PFactorGraph()
        variables = [graph.create_binary_variable() for _ in range(4)]
        graph.create_factor_pair(variables[:2], 0.0)
        graph.create_factor_pair(variables[2:], 0.0)
        graph.create_factor_logic("XOR", variables[1:])
        graph.set_log_potentials(theta)
        graph.set_all_additionals([[phi[0]], [phi[1]]])
        graph.set_max_iterations_ad3(5000)
        graph.set_residual_threshold_ad3(1e-10)
        _, u, _, _ = graph.solve_qp_ad3()
        return graph, np.array(u)

    rng = np.random.RandomState(4)
    theta, phi = rng.randn(4) * 0.5, rng.randn(2) * 0.5
    graph, u = solve(theta, phi)
    du = rng.randn(4)
    dtheta = np.zeros(4)
    dphi = graph.jacobian_vec(du, dtheta)
    h = 1e-6
    for i in range(4):
        step = np.eye(4)[i] * h
        fd = (solve(theta + step, phi)[1] - solve(theta - step, phi)[1]) / (2 * h)
        assert dtheta[i] == pytest.approx(du @ fd, abs=1e-4)
    for k in range(2):
        step = np.eye(2)[k] * h
        fd = (solve(theta, phi + step)[1] - solve(theta, phi - step)[1]) / (2 * h)
        assert dphi[k][0] == pytest.approx(du @ fd, abs=1e-4)
    assert dphi[2] == []



def test_wrong_additionals_and_jacobian_buffers_are_refused():
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(3)]
    graph.create_factor_pair(variables[:2], 1.0)
    graph.create_factor_pair(variables[1:], 1.0)
    for entries in ([[2.0]], [[2.0], [3.0], [4.0]]):
        with pytest.raises(ValueError, match=r"one entry per factor .* \(2\), got %d"
                           % len(entries)):
            graph.set_all_additionals(entries)
    assert [f.get_additional_log_potentials() for f in graph._factors] == [[1.0], [1.0]]
    graph = PFactorGraph()
    variables = [graph.create_binary_variable() for _ in range(3)]
    graph.create_factor_logic("XOR", variables)
    graph.set_log_potentials([0.3, 0.5, 0.1])
    graph.set_max_iterations_ad3(5000)
    graph.set_residual_threshold_ad3(1e-10)
    graph.solve_qp_ad3()
    du = [1.0, 0.0, 0.0]
    for out, error in (([0.0] * 3, TypeError), (np.zeros(3, dtype=np.float32), TypeError),
                       (np.zeros(4), ValueError)):
        with pytest.raises(error, match="^out: "):
            graph.jacobian_vec(du, out)
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        graph.jacobian_vec(du, readonly)
    # sparsemax of [0.3, 0.5, 0.1] has all three in its support: its
    # Jacobian is I - 1 1^T / 3; a strided buffer is written in place
    base = np.zeros(6)
    graph.jacobian_vec(du, base[::2])
    np.testing.assert_allclose(base, [2 / 3, 0, -1 / 3, 0, -1 / 3, 0], atol=1e-8)


def test_complex_log_potentials_are_refused():
    graph = PFactorGraph()
    variable = graph.create_binary_variable()
    with pytest.raises(TypeError, match="real number"):
        variable.set_log_potential(np.complex128(1.0 + 1.0j))
    with pytest.raises(TypeError, match="real numbers"):
        graph.set_log_potentials(np.array([1.0 + 1.0j]))
    assert variable.get_log_potential() == 0.0


def sparse_reference(model):
    """LP-SparseMAP of a model of binary variables and logic factors by the
    QP reference of test_lp_sparsemap_forward: each factor a distribution
    over the link configurations its rule allows, each link's marginal tied
    to its variable (both links of a repeated variable to the same one),
    and |u|^2/2 once per variable, as lp-sparsemap defines it."""
    factors = []
    for ids, rule in model.rules:
        factor = RefFactor("logic", ids)
        rows = [x for x in itertools.product((0, 1), repeat=len(ids)) if rule(x)]
        factor.U = np.array(rows, dtype=float)
        factor.V = np.zeros((len(rows), 0))
        factors.append(factor)
    spec = GraphSpec([("vars", len(model.theta))], model.theta, [])
    return solve_reference(LocalQP(spec, factors, spec.theta, spec.phi))


def test_a_variable_repeated_in_a_factor():
    """AD3 allows a factor to list a variable twice; concord gives the
    repeat a hidden copy held equal to it, the variable and its k - 1
    copies weighing 1/k each in LP-SparseMAP's regularization (here k = 2
    for b and c, and k = 4 for a, repeated in two factors). With random
    scores:
    MAP (branch and bound) agrees with brute force over the factors'
    meaning on their links; LP-SparseMAP (value, posteriors and every
    link's copy) with the QP reference over those links, within 1e-6;
    jacobian_vec with central differences of the posteriors, within 1e-6."""
    rng = np.random.RandomState(11)
    h = 1e-5

    def posteriors_at(theta):
        model.graph.set_log_potentials(np.asarray(theta, dtype=float))
        return np.array(model.graph.solve_qp_ad3()[1])

    for trial in range(10):
        model = Model()
        a, b, c = (model.binary(s) for s in rng.randn(3) * (2 if trial % 2 else 0.5))
        model.logic("OR", [a, a, b], [False, True, False])
        model.logic("ATMOSTONE", [b, c, b])
        model.logic("XOR", [c, a, c, b])
        model.logic("OR", [a, c, a, a], [False, False, True, False])  # a listed three times
        best, x = model.best()
        value, posteriors, _, status = model.graph.solve(branch_and_bound=True)
        assert status == "integral" and value == pytest.approx(best, abs=1e-9)
        np.testing.assert_allclose(posteriors, x, atol=1e-9)

        model.graph.set_residual_threshold_ad3(1e-12)
        model.graph.set_max_iterations_ad3(1000000)
        ref = sparse_reference(model)
        assert ref.polished
        value, posteriors, _, status = model.graph.solve_qp_ad3()
        np.testing.assert_allclose(posteriors, ref.u, atol=1e-6)
        assert value == pytest.approx(ref.value, abs=1e-6)
        # each link's copy, the repeated ones included, is its variable's value
        links = [v for ids, _ in model.rules for v in ids]
        np.testing.assert_allclose(model.graph.get_local_primal_variables(), ref.u[links],
                                   atol=1e-6)

        du = rng.randn(3)
        jvp = np.zeros(3)
        model.graph.jacobian_vec(du, jvp)
        theta = np.array(model.theta)
        central = np.array([du @ (posteriors_at(theta + h * e) - posteriors_at(theta - h * e))
                            for e in np.eye(3)]) / (2 * h)
        np.testing.assert_allclose(jvp, central, atol=1e-6)


def test_a_penalty_of_zero_means_the_default():
    """AD3 and lp-sparsemap accept set_eta_ad3(0.0) (lp-sparsemap's
    examples/sequence.py calls it) and set_eta_psdd(0): concord then
    solves with its default penalty and step, so the results equal those
    of the defaults."""
    def solved(eta, eta_psdd):
        graph = PFactorGraph()
        variables = [graph.create_binary_variable() for _ in range(3)]
        for var, score in zip(variables, [0.4, 0.1, -0.3]):
            var.set_log_potential(score)
        graph.create_factor_logic("XOR", variables)
        if eta is not None:
            graph.set_eta_ad3(eta)
            graph.set_eta_psdd(eta_psdd)
        return graph.solve_qp_ad3(), graph.solve_lp_map_ad3(), graph.solve_lp_map_psdd()

    assert solved(0.0, 0.0) == solved(None, None) == solved(-1.0, -1.0)
    qp = solved(0.0, 0.0)[0]
    np.testing.assert_allclose(qp[1], [0.65, 0.35, 0.0], atol=1e-6)  # sparsemax
    # NaN is no penalty (it compared as neither positive nor 0 or less, and
    # was taken for the default)
    graph = PFactorGraph()
    for set_eta in (graph.set_eta_ad3, graph.set_eta_psdd):
        with pytest.raises(ValueError, match="^eta must be a number, not nan$"):
            set_eta(float("nan"))


def test_a_dense_factor_uses_its_first_log_potentials():
    """Given more log-potentials than joint states, a DENSE factor uses the
    first ones, as AD3 does (the extra -inf or not changes nothing)."""
    results = []
    for extra in ([], [5.0], [-np.inf]):
        graph = PFactorGraph()
        a, b = graph.create_multi_variable(2), graph.create_multi_variable(2)
        dense = graph.create_factor_dense([a, b], [0.1, 0.2, 0.3, 0.4])
        dense.set_additional_log_potentials([0.1, -np.inf, 0.3, 0.4] + extra)
        results.append(graph.solve())
    assert results[0] == results[1] == results[2]
    assert results[0][0] == pytest.approx(0.4) and results[0][3] == "integral"
