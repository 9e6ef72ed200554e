"""LP-SparseMAP on small generated parsing and coupled-sequence graphs
against an exact QP over exact extended formulations of the factors.

The graphs come from the generators of bench/gen (through the
gen_structured tool built beside the command-line tool); the reference is
scripts/verify_lp_sparsemap.py's: the local polytope written with the
arborescence's multi-commodity flow, the automata's and sequences' path
flows and the logic factors' inequalities, and max theta.u + phi.v -
|u|^2/2 over it solved by cvxopt's interior point, polished by an active
set and certified by a dual LP (HiGHS). Nothing of it calls the library.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_lp_sparsemap as reference  # noqa: E402
from test_package import cli_path  # noqa: E402
from concord import _core  # noqa: E402


def tool(name):
    """A program built beside the command-line tool."""
    path = os.path.join(os.path.dirname(cli_path()), name)
    if not os.path.exists(path):
        pytest.skip("%s is not built (make test builds it)" % name)
    return path


# (shape, seed, sizes): parsing n words with K candidate heads; sequences
# M chains of length L over S states
CASES = ([("parsing", seed, (n, k)) for seed, (n, k) in
          enumerate([(4, 2), (5, 3), (6, 3), (6, 4), (7, 3), (8, 3)], start=1)] +
         [("sequences", seed, (m, length, s)) for seed, (m, length, s) in
          enumerate([(2, 3, 2), (2, 4, 3), (3, 3, 3), (2, 5, 2), (3, 4, 2), (2, 6, 3)],
                    start=11)])


def generate(path, shape, seed, sizes):
    with open(path, "w") as out:
        subprocess.run([tool("gen_structured"), shape, str(seed)] + [str(x) for x in sizes],
                       stdout=out, check=True)


def check_against_the_exact_qp(path):
    """concord's LP-SparseMAP solution of the .fg file at `path` converges
    at the default tolerance and, at a tight one, is the exact QP's
    optimum, inside the polytope."""
    theta, factors = reference.read_fg(str(path))
    prog, n, n_add, phi = reference.build(theta, factors)
    A_eq, b_eq = prog.matrix(prog.eq)
    A_ub, b_ub = prog.matrix(prog.ub)

    _, _, summary, _ = reference.concord_solution(cli_path(), str(path), 1e-6, n, n_add)
    assert "integral" in summary or "fractional" in summary, summary

    u, v, summary, _ = reference.concord_solution(cli_path(), str(path), 1e-9, n, n_add)
    value = theta @ u + phi @ v - 0.5 * u @ u
    assert reference.exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u, value)
    assert reference.distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u, v)
    assert reference.certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u, v,
                                       value)
    return u, v


@pytest.mark.parametrize("shape,seed,sizes", CASES)
def test_lp_sparsemap_equals_the_exact_qp(tmp_path, shape, seed, sizes):
    path = tmp_path / "graph.fg"
    generate(path, shape, seed, sizes)
    check_against_the_exact_qp(path)


def forbid_transitions(path, seed):
    """Rewrites every SEQUENCE line of the file at `path` with about a third
    of its transitions scored -inf, never those of the all-state-0 path (so
    that some sequence stays allowed). Returns the number forbidden."""
    rng = np.random.default_rng(seed)
    lines, forbidden = Path(path).read_text().split("\n"), 0
    for i, line in enumerate(lines):
        fields = line.split()
        if not fields or fields[0] != "SEQUENCE":
            continue
        degree = int(fields[1])
        rest = 2 + degree
        length = int(fields[rest])
        states = [int(x) for x in fields[rest + 1:rest + 1 + length]]
        first = rest + 1 + length
        # the all-0 path: start[0], every table's (0, 0) entry, stop[0]
        keep, at = {0}, states[0]
        for a, b in zip(states, states[1:]):
            keep.add(at)
            at += a * b
        keep.add(at)
        for k in range(len(fields) - first):
            if k not in keep and rng.random() < 0.35:
                fields[first + k] = "-inf"
                forbidden += 1
        lines[i] = " ".join(fields)
    Path(path).write_text("\n".join(lines))
    return forbidden


@pytest.mark.parametrize("seed,sizes", [(21, (2, 4, 3)), (22, (3, 3, 3)), (23, (2, 6, 3))])
def test_lp_sparsemap_with_forbidden_transitions_equals_the_exact_qp(tmp_path, seed, sizes):
    """Coupled sequences with forbidden (-inf) transitions: the reference
    holds their edges' flow at 0, and no flow of concord's runs through
    them."""
    path = tmp_path / "graph.fg"
    generate(path, "sequences", seed, sizes)
    assert forbid_transitions(path, seed) > 0
    _, v = check_against_the_exact_qp(path)
    _, factors = reference.read_fg(str(path))
    scores = np.concatenate([[float(x) for x in rest[1 + int(rest[0]):]]
                             for kind, _, rest in factors if kind == "SEQUENCE"])
    assert v.size == scores.size
    assert np.all(v[np.isneginf(scores)] == 0.0)


def test_the_repository_sequence_with_forbidden_transitions_equals_the_exact_qp():
    check_against_the_exact_qp(os.path.join(ROOT, "tests", "data", "fg", "sequence_forbidden.fg"))


def test_lp_sparsemap_at_small_scores_converges_and_is_certified(tmp_path):
    """A parser of 25 words (6 candidate heads each) with its scores times
    0.03, where SparseMAP's solution spreads over many trees: near the
    answer the factors' inputs still move a little at every iteration, and
    one oracle call per iteration never certified the head automata's
    active sets (at the default tolerance 3000 iterations ended
    unconverged with the residuals at 1e-9). The solve at the default
    tolerance converges, and lies within 1e-5 of the solve at 1e-9, which
    the reference's first-order bound certifies optimal."""
    path = tmp_path / "graph.fg"
    generate(path, "parsing", 3, (25, 6))
    theta, factors = reference.read_fg(str(path))
    prog, n, n_add, phi = reference.build(theta, factors)
    theta, phi = 0.03 * theta, 0.03 * phi
    A_eq, b_eq = prog.matrix(prog.eq)
    A_ub, b_ub = prog.matrix(prog.ub)
    solver = _core.Solver(_core.read_file(str(path), format="fg")[0])
    solver.set_scores(theta, phi)
    info = solver.solve_sparse({"max_iter": 3000, "warm_start": False})
    assert info.converged, info
    u_default = solver.variables
    solver.solve_sparse({"max_iter": 3000, "tol": 1e-9, "warm_start": False})
    u, v = solver.variables, solver.additionals
    assert np.abs(u - u_default).max() <= 1e-5
    value = theta @ u + phi @ v - 0.5 * u @ u
    assert reference.certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u, v,
                                       value)


def test_the_reference_rejects_another_point(tmp_path):
    """The checks can fail: the LP-MAP solution of the same graph lies in
    the polytope but is not the QP's optimum."""
    path = tmp_path / "graph.fg"
    with open(path, "w") as out:
        subprocess.run([tool("gen_structured"), "sequences", "5", "2", "3", "2"], stdout=out,
                       check=True)
    theta, factors = reference.read_fg(str(path))
    prog, n, n_add, phi = reference.build(theta, factors)
    A_eq, b_eq = prog.matrix(prog.eq)
    A_ub, b_ub = prog.matrix(prog.ub)
    u, _, _, _ = reference.concord_solution(cli_path(), str(path), 1e-9, n, n_add)
    subprocess.run([cli_path(), "solve", str(path), "--tol", "1e-9", "-o",
                    str(tmp_path / "map.txt")], capture_output=True, check=True)
    values = np.array([float(x) for x in (tmp_path / "map.txt").read_text().split()])
    u_map, v_map = values[:n], values[n:]
    assert np.abs(u_map - u).max() > 1e-3  # a different point
    value_map = theta @ u_map + phi @ v_map - 0.5 * u_map @ u_map
    assert reference.distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u_map, v_map)
    assert not reference.exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_map,
                                     value_map)
    assert not reference.certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_map,
                                           v_map, value_map)
