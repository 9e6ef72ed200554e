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

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verify_lp_sparsemap as reference  # noqa: E402
from test_package import cli_path  # noqa: E402


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


@pytest.mark.parametrize("shape,seed,sizes", CASES)
def test_lp_sparsemap_equals_the_exact_qp(tmp_path, shape, seed, sizes):
    path = tmp_path / "graph.fg"
    with open(path, "w") as out:
        subprocess.run([tool("gen_structured"), shape, str(seed)] + [str(x) for x in sizes],
                       stdout=out, check=True)
    theta, factors = reference.read_fg(str(path))
    prog, n, n_add, phi = reference.build(theta, factors)
    A_eq, b_eq = prog.matrix(prog.eq)
    A_ub, b_ub = prog.matrix(prog.ub)

    # at the default tolerance the solve converges
    _, _, summary, _ = reference.concord_solution(cli_path(), str(path), 1e-6, n, n_add)
    assert "integral" in summary or "fractional" in summary, summary

    # at a tight one it is the exact QP's optimum, inside the polytope
    u, v, summary, _ = reference.concord_solution(cli_path(), str(path), 1e-9, n, n_add)
    value = theta @ u + phi @ v - 0.5 * u @ u
    assert reference.exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u, value)
    assert reference.distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u, v)
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
    values = np.array([float(x) for x in open(tmp_path / "map.txt").read().split()])
    u_map, v_map = values[:n], values[n:]
    assert np.abs(u_map - u).max() > 1e-3  # a different point
    value_map = theta @ u_map + phi @ v_map - 0.5 * u_map @ u_map
    assert reference.distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u_map, v_map)
    assert not reference.exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_map,
                                     value_map)
    assert not reference.certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_map,
                                           v_map, value_map)
