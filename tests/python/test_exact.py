"""Exact MAP, PSDD and MPLP from Python, checked against brute force.

The reference enumerates every 0/1 assignment of a random GraphSpec's
variables and scores it with the factors' allowed configurations as
concord.h documents them (reference_factors of the forward-pass tests,
which never read concord's code); KNAPSACK is its linear inequality.

What is asserted:
  * Solver.solve_exact and FactorGraph.solve_exact return the brute-force
    optimum on random graphs of every factor kind (status "optimal"; the
    solution is an allowed assignment worth the reported value), or
    "infeasible" exactly when no assignment is allowed;
  * the dual bounds of PSDD and MPLP are never below that optimum, and a
    PSDD average claimed as LP-MAP's solution is worth no more than them;
  * a forest of PAIR factors is solved by dynamic programming (Info.acyclic)
    with the brute-force optimum, by solve_map as well, and decodes to it;
  * a batch of exact solves on two threads equals the solves one by one;
  * the search settings map onto their names, and a node limit stops the
    search with a bound that still holds.
"""

import itertools
import os
import sys

import concord
import numpy as np
import pytest
from concord import _core

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_specs import GraphSpec, build  # noqa: E402
from test_lp_sparsemap_forward import random_spec, reference_factors  # noqa: E402
from test_package import pythonic, values, with_forbidden_zero  # noqa: E402


def assignment_values(spec):
    """Every 0/1 assignment of the spec's variables (rows) and its value
    (-inf where a factor forbids it)."""
    n, _ = spec.sizes()
    X = np.array(list(itertools.product((0.0, 1.0), repeat=n))).reshape(-1, n)
    value = X @ spec.theta
    for f in reference_factors(spec):
        local = X[:, f.vars]
        if f.hrep is not None:  # KNAPSACK: coef . u <= rhs
            coef, rhs = f.hrep[0], f.hrep[1]
            value = np.where(local @ coef <= rhs + 1e-9, value, -np.inf)
            continue
        extra = (f.V @ spec.phi[f.add_begin:f.add_begin + f.n_add] if f.n_add
                 else np.zeros(len(f.U)))
        match = (local[:, None, :] == f.U[None, :, :]).all(axis=2)
        best = np.where(match, extra[None, :], -np.inf).max(axis=1, initial=-np.inf)
        value = value + best
    return X, value


def brute_force_map(spec):
    X, value = assignment_values(spec)
    return value.max()


def close(a, b):
    return abs(a - b) <= 1e-7 * (1.0 + abs(b))


def test_exact_map_is_the_brute_force_optimum():
    rng = np.random.default_rng(21)
    for _ in range(150):
        spec = random_spec(rng, max_vars=10)
        best = brute_force_map(spec)
        solver = build(spec)
        info = solver.solve_exact()
        if best == -np.inf:
            assert info.status == "infeasible", spec.describe()
            continue
        assert info.status == "optimal", spec.describe()
        assert close(info.value, best), (info, best, spec.describe())
        assert info.upper_bound >= info.value
        u, v = solver.variables, solver.additionals
        assert set(np.unique(u)) <= {0.0, 1.0}
        assert close(spec.theta @ u + spec.phi @ v, best), spec.describe()
        X, value = assignment_values(spec)
        assert close(value[(X == u).all(axis=1)][0], best), spec.describe()


# Graphs of one-hot multi-variables whose nodes the search stopped early
# (their bound falling too slowly), drawn by the generator above: the search
# ended with status "max_iter", the optimum found but not proven, a node left
# unresolved. (1) A split left a multi-variable one free state, which the
# one-hot constraint sets to 1 but only its XOR knew; the DENSE and KNAPSACK
# factors kept it fractional and the unit, one state free, was not split
# again. (2) A multi-variable whose one-hot constraint lies in a DENSE
# factor held one state at 1 and another at 0.01: called integral by its
# likeliest state alone. (3) A multi-variable held 0.9966 on one state and 0
# on the others: splitting that state off counted as balance 0, not 0.0034.
STOPPED_EARLY = [
    GraphSpec([("multi", 3, True), ("multi", 3, False), ("vars", 2),
               ("dense", [3, 3], [3, 4, 5, 0, 1, 2], [False] * 9),
               ("budget", [2, 5, 6, 3, 1], [False, False, False, False, True], 2, False),
               ("knapsack", [6, 0, 3], [False, False, False],
                [0.5660266428241215, 0.0727445527958574, 0.9384611556788187], 1.0)],
              theta=[0.20252910269573435, -0.45699612790590743, 0.24978869814457993,
                     0.36523793853954595, -0.6200560571143169, -0.1523992849339654,
                     -0.2713178524483203, 0.46680184231777655],
              phi=[0.31482900847992973, 0.014963160086746377, -0.10997570616665274,
                   -0.2562360817224999, 0.03308784248286404, 0.4622332844340211,
                   -0.4017082142929718, 0.5190799061205348, 0.2592861610081742]),
    GraphSpec([("multi", 3, False), ("multi", 2, False), ("vars", 1),
               ("dense", [2, 3], [3, 4, 0, 1, 2], [False, False, False, True, False, False]),
               ("knapsack", [4, 5, 0, 3, 1], [True, False, False, False, True],
                [0.0, 0.46131426789770946, 2.0, 1.9560824581930107, 0.0], 5.0),
               ("knapsack", [0, 1], [False, True], [0.0, 1.020922506501636], 1.0)],
              theta=[-0.2909822476540733, -1.6279495230362218, -0.39995811965108646,
                     0.033417956749741386, 1.2153126054136212, 1.5524323378418876],
              phi=[0.23522321072510752, 1.1548517343239102, 0.3906794070473345,
                   -0.5945283836267274, -0.028946468735975107, -1.1117651829566155]),
    GraphSpec([("multi", 2, False), ("multi", 3, True), ("vars", 4),
               ("dense", [2, 3], [0, 1, 2, 3, 4], [False] * 6), ("pair", 4, 7),
               ("knapsack", [7, 4, 2, 0, 6], [False, True, True, False, False],
                [1.8178199133971167, 1.5613654564960167, 1.125669355159876, 2.0,
                 1.5247637738497932], 6.494706341657602),
               ("dense", [2], [0, 1], [False, False]),
               ("logic", "XOROUT", [6, 0, 7, 2, 5], [True, False, True, False, False]),
               ("logic", "IMPLY", [6, 1, 4, 0], [False, True, False, False])],
              theta=[-0.45167004668520633, -0.20477157118877573, -2.354472389090474,
                     -1.1999692104633457, -2.1049372712456216, 0.5723276953505999,
                     0.19156946410069484, 0.8647254283047868, -1.4845382475938416],
              phi=[-0.17139325960013863, 1.6701317111582707, 0.9933124237947724,
                   -0.451643320203002, 0.5918339719238151, 0.6019110877460946,
                   -1.4146967057357724, 1.6848355669950204, -0.268559114149687]),
]


@pytest.mark.parametrize("index", range(len(STOPPED_EARLY)))
def test_exact_map_proves_the_optimum_where_nodes_stop_early(index):
    spec = STOPPED_EARLY[index]
    best = brute_force_map(spec)
    solver = build(spec)
    info = solver.solve_exact()
    assert info.status == "optimal", (info, solver.exact_info)
    assert close(info.value, best) and close(info.upper_bound, best), (info, best)
    assert solver.exact_info.open == 0


def test_progress_counts_the_search_nodes():
    """Branch and bound's progress carries its node counts (solved, open),
    as the C callback receives them; an LP-MAP solve reports none."""
    for spec in STOPPED_EARLY:
        seen = []
        solver = build(spec)
        info = solver.solve_exact({"progress": lambda p: seen.append(p) and False})
        assert info.status == "optimal" and seen
        nodes = [p.nodes for p in seen]
        assert nodes[0] >= 1 and nodes == sorted(nodes) and nodes[-1] <= solver.exact_info.nodes
        # nodes wait at some report (a report within the root's solve,
        # every 0.1 s on a loaded machine, may come before any does)
        assert any(p.open_nodes >= 1 for p in seen)
        seen.clear()
        solver.solve_map({"progress": lambda p: seen.append(p) and False, "bound_every": 1})
        assert seen and all(p.nodes == 0 and p.open_nodes == 0 for p in seen)


def test_the_pythonic_graph_solves_exactly_as_the_low_level_one():
    rng = np.random.default_rng(8)
    for _ in range(40):
        spec = random_spec(rng, max_vars=10)
        best = brute_force_map(spec)
        fg = pythonic(spec)
        info = fg.solve_exact()
        if best == -np.inf:
            assert info.status == "infeasible"
            continue
        spec_zero = GraphSpec(spec.steps, spec.theta, with_forbidden_zero(spec))
        u, v = values(fg)
        assert info.status == "optimal" and close(info.value, best), spec.describe()
        assert close(spec_zero.theta @ u + spec_zero.phi @ v, best)
        stats = fg.last_solver.exact_info
        assert stats.acyclic == info.acyclic and (stats.acyclic or stats.nodes >= 1)


def test_dual_bounds_of_psdd_and_mplp_hold():
    rng = np.random.default_rng(3)
    for _ in range(40):
        spec = random_spec(rng, max_vars=10)
        best = brute_force_map(spec)
        if best == -np.inf:
            continue
        info = build(spec).solve_psdd({"max_iter": 300})
        assert info.upper_bound >= best - 1e-7 * (1 + abs(best)), spec.describe()
        if info.status == "fractional":  # claims LP-MAP: no value above a bound
            assert info.value <= info.upper_bound + 1e-6 * (1 + abs(best)), spec.describe()
    for _ in range(40):
        spec = random_spec(rng, max_vars=10, kinds=("PAIR", "DENSE"))
        best = brute_force_map(spec)
        if best == -np.inf:
            continue
        try:
            info = build(spec).solve_mplp({"max_iter": 200})
        except _core.InvalidArgumentError as error:  # outside MPLP's reach, and said so
            assert "two states of one multi-variable" in str(error)
            continue
        assert info.upper_bound >= best - 1e-7 * (1 + abs(best)), spec.describe()
        if info.status == "integral":  # certified: the solution is a MAP
            assert close(info.value, best)


def test_a_forest_is_solved_by_dynamic_programming():
    rng = np.random.default_rng(4)
    n = 9
    edges = [(k, int(rng.integers(k))) for k in range(1, n)]  # a random tree
    edges = [e for e in edges if e != (4, 0)]  # and a forest
    steps = [("vars", n)] + [("pair", a, b) for a, b in edges]
    spec = GraphSpec(steps, rng.normal(size=n), rng.normal(size=len(edges)) * 2)
    best = brute_force_map(spec)
    for method in ("solve_exact", "solve_map"):
        solver = build(spec)
        info = getattr(solver, method)()
        assert info.acyclic and info.iterations == 1
        assert close(info.value, best) and close(info.upper_bound, best)
        assignment, decoding = solver.decode()  # decoding starts from the solution
        assert np.array_equal(assignment, solver.variables) and decoding.violated == 0
        assert close(decoding.value, best)
    info = build(spec).solve_map({"acyclic": False})
    assert not info.acyclic and info.iterations > 1


def test_a_batch_of_exact_solves_equals_the_solves_one_by_one():
    rng = np.random.default_rng(12)
    specs = [random_spec(rng, max_vars=10) for _ in range(12)]
    batch = [build(spec) for spec in specs]
    infos = _core.solve_batch(batch, "exact", None, 2)
    for spec, solver, info in zip(specs, batch, infos):
        alone = build(spec)
        reference = alone.solve_exact()
        assert info._replace(seconds=0) == reference._replace(seconds=0)
        if reference.status != "infeasible":
            assert np.array_equal(solver.variables, alone.variables)


def test_search_settings_and_the_node_limit():
    st = concord.Settings(search="depth_first", psdd_step="polyak", node_limit=3)
    assert (st.search, st.psdd_step, st.node_limit) == ("depth_first", "polyak", 3)
    with pytest.raises(ValueError, match="search must be one of"):
        concord.Settings(search="breadth_first")
    with pytest.raises(ValueError, match="psdd_step"):
        concord.Settings(psdd_step="constant")
    # a frustrated grid: LP-MAP is fractional, the search needs nodes
    rng = np.random.default_rng(2)
    side = 4
    ids = np.arange(side * side).reshape(side, side)
    pairs = list(zip(ids[:, :-1].ravel(), ids[:, 1:].ravel())) + list(
        zip(ids[:-1].ravel(), ids[1:].ravel()))
    steps = [("vars", side * side)] + [("pair", int(a), int(b)) for a, b in pairs]
    spec = GraphSpec(steps, rng.normal(size=side * side), rng.normal(size=len(pairs)) * 3)
    best = brute_force_map(spec)
    solver = build(spec)
    info = solver.solve_exact({"node_limit": 1, "heuristic_every": 1})
    stats = solver.exact_info
    assert stats.nodes == 1
    assert info.upper_bound >= best - 1e-9 and info.value <= best + 1e-9
    if info.status != "optimal":
        assert info.status == "node_limit" and not info.converged
    info = solver.solve_exact()
    assert info.status == "optimal" and close(info.value, best)
    assert solver.exact_info.root_bound >= best - 1e-9
