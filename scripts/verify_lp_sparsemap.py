#!/usr/bin/env python3
"""Checks concord's LP-SparseMAP answer on a .fg file of parsing or
sequence factors against solvers that share nothing with it.

    scripts/verify_lp_sparsemap.py CONCORD_CLI FILE.fg [TOL [exact|certificate]]

The local polytope is written as an LP over exact extended formulations of
the factors' marginal polytopes (read from the file as docs/formats.md
documents them):
  ARBORESCENCE   in-degree 1 at every token, and for every token a unit
                 flow from the root to it within the arc values
                 (the multicommodity-flow formulation, exact for
                 arborescences);
  HEAD_AUTOMATON a unit path flow 0 -> ... -> D+1 through the chosen
                 modifiers; the sibling outputs are its edges;
  GRANDPARENT_HEAD_AUTOMATON  one such path flow per grandparent, of value
                 that grandparent's arc; a grandparent output is the flow
                 through its modifier in its grandparent's copy;
  SEQUENCE       a unit flow through the trellis (start -> states of
                 each position -> stop); a state indicator is its node's
                 flow, the transition outputs are the edges (a forbidden
                 one, scored -inf, carries no flow);
  BUDGET, ATMOSTONE, OR  sum of the literals <= B, <= 1, >= 1.
Then, with concord's point x = (u, v) (the CLI solves to TOL, default
1e-9):
  1. (mode "exact", the default) max theta.u + phi.v - |u|^2/2 over it,
     solved exactly: cvxopt's interior point, then the active-set method of
     tests/python/test_sparsemap_large_factors.py, certified by a dual LP
     (HiGHS); concord's objective must agree within 1e-8 (relative) and
     its u within 1e-6. (On parsing01.fg, 45 000 columns, cvxopt takes too
     long: use mode "certificate".)
  2. x's distance from the polytope: HiGHS finds the auxiliary columns that
     come closest to satisfying every row with (u, v) fixed, minimizing
     the largest violation; it must be at most 1e-6 (the solve's residuals
     are below its tolerance);
  3. the first-order certificate: HiGHS maximizes the linearization
     grad F(x).y over the polytope; since F is concave, for x in the
     polytope F* - F(x) <= max grad F(x).(y - x), which must be at most
     1e-8 (1 + |F|) in absolute value.
Prints the figures; exits non-zero when a check fails.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import test_sparsemap_large_factors as reference_tools  # noqa: E402


def read_fg(path):
    """The first graph: variable scores and factors (type, links, rest)."""
    tokens = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                tokens.append(line)
    n, m = int(tokens[0][0]), int(tokens[1][0])
    theta = np.array([float(t[0]) for t in tokens[2:2 + n]])
    factors = []
    for line in tokens[2 + n:2 + n + m]:
        kind, degree = line[0], int(line[1])
        links = [int(x) - 1 for x in line[2:2 + degree]]
        assert all(x >= 0 for x in links), "negated links are not supported here"
        factors.append((kind, links, line[2 + degree:]))
    return theta, factors


class Program:
    """Columns and rows of the extended formulation."""

    def __init__(self, n):
        self.n = n  # u, then v, then auxiliary columns
        self.eq, self.ub = [], []  # rows: (dict column -> coefficient, rhs)
        self.seen = set()

    def column(self):
        """Adds an auxiliary column; returns its index."""
        self.n += 1
        return self.n - 1

    def add_eq(self, coef, rhs):
        """Adds an equality row unless the same row is there already (a
        grandparent automaton repeats the arborescence's in-degree row of
        its head; cvxopt needs rows of full rank)."""
        key = (tuple(sorted(coef.items())), rhs)
        if key not in self.seen:
            self.seen.add(key)
            self.eq.append((coef, rhs))

    def add_ub(self, coef, rhs):
        """Adds an inequality row: sum of coef[c] x_c <= rhs."""
        self.ub.append((coef, rhs))

    def matrix(self, rows):
        """The rows as a sparse matrix over all the columns, and their right-hand sides."""
        data, ri, ci, rhs = [], [], [], []
        for r, (coef, b) in enumerate(rows):
            for c, a in coef.items():
                ri.append(r), ci.append(c), data.append(a)
            rhs.append(b)
        return sp.csr_matrix((data, (ri, ci)), shape=(len(rows), self.n)), np.array(rhs)


def path_flow(prog, source, chosen, pair_cols):
    """A path flow from 0 to D+1 through the modifiers 1..D of value
    `source` (a column, or None for the constant 1); modifier j carries
    the flow chosen[j-1] (a column); pair_cols[(m, s)] are the edge
    columns."""
    d = len(chosen)
    out = {j: {} for j in range(d + 2)}
    into = {j: {} for j in range(d + 2)}
    for (m, s), col in pair_cols.items():
        out[m][col] = 1.0
        into[s][col] = 1.0
    # the flow into D+1 is implied (rows of a flow sum to zero)
    if source is None:
        prog.add_eq(out[0], 1.0)
    else:
        prog.add_eq({**out[0], source: -1.0}, 0.0)
    for j in range(1, d + 1):
        prog.add_eq({**into[j], chosen[j - 1]: -1.0}, 0.0)
        prog.add_eq({**out[j], chosen[j - 1]: -1.0}, 0.0)


def sequence_states(rest):
    """The state counts K1..KL of a SEQUENCE line's fields after its links."""
    length = int(rest[0])
    return [int(x) for x in rest[1:1 + length]]


def trellis_flow(prog, links, states, first):
    """A unit flow start -> position 1 -> ... -> position L -> stop; the
    node of (p, s) carries the state indicator, and the edge columns are
    the outputs first, first + 1, ... in the order of the SEQUENCE's
    scores (start, each transition table row-major, stop)."""
    offsets = np.cumsum([0] + states)
    node = [[links[offsets[p] + k] for k in range(states[p])] for p in range(len(states))]
    col = first
    start = list(range(col, col + states[0]))
    col += states[0]
    prog.add_eq({c: 1.0 for c in start}, 1.0)
    for k, c in enumerate(start):
        prog.add_eq({c: 1.0, node[0][k]: -1.0}, 0.0)
    for p in range(len(states) - 1):
        out = {a: {} for a in range(states[p])}
        into = {b: {} for b in range(states[p + 1])}
        for a in range(states[p]):
            for b in range(states[p + 1]):
                out[a][col] = 1.0
                into[b][col] = 1.0
                col += 1
        for a in range(states[p]):
            prog.add_eq({**out[a], node[p][a]: -1.0}, 0.0)
        for b in range(states[p + 1]):
            prog.add_eq({**into[b], node[p + 1][b]: -1.0}, 0.0)
    for k in range(states[-1]):
        prog.add_eq({col + k: 1.0, node[-1][k]: -1.0}, 0.0)


def build(theta, factors):
    """The extended formulation of the factors: (program, variables n, additional outputs
    n_add, their scores phi)."""
    n = len(theta)
    # additional outputs first (their columns follow u), then auxiliaries
    n_add = 0
    layout = []
    for kind, links, rest in factors:
        if kind == "HEAD_AUTOMATON":
            d = len(links)
            layout.append(n_add)
            n_add += (d + 1) * (d + 2) // 2
        elif kind == "GRANDPARENT_HEAD_AUTOMATON":
            g = int(rest[0])
            d = len(links) - g
            layout.append(n_add)
            n_add += g * d + (d + 1) * (d + 2) // 2
        elif kind == "SEQUENCE":
            states = sequence_states(rest)
            layout.append(n_add)
            n_add += states[0] + sum(a * b for a, b in zip(states, states[1:])) + states[-1]
        else:
            layout.append(n_add)
    prog = Program(n + n_add)
    phi = np.zeros(n_add)
    for (kind, links, rest), at in zip(factors, layout):
        if kind == "ARBORESCENCE":
            length = int(rest[0])
            arcs = [(int(rest[1 + 2 * k]), int(rest[2 + 2 * k])) for k in range(len(links))]
            for mod in range(1, length):
                prog.add_eq({links[k]: 1.0 for k, (h, m) in enumerate(arcs) if m == mod}, 1.0)
            for t in range(1, length):
                flow = [prog.column() for _ in arcs]
                for k, col in enumerate(flow):
                    prog.add_ub({col: 1.0, links[k]: -1.0}, 0.0)
                for node in range(1, length):  # the root's row is implied
                    coef = {}
                    for k, (h, m) in enumerate(arcs):
                        if m == node:
                            coef[flow[k]] = coef.get(flow[k], 0.0) + 1.0
                        if h == node:
                            coef[flow[k]] = coef.get(flow[k], 0.0) - 1.0
                    rhs = (1.0 if node == t else 0.0) - (1.0 if node == 0 else 0.0)
                    prog.add_eq(coef, rhs)
        elif kind == "HEAD_AUTOMATON":
            d = len(links)
            pairs = [(a, b) for a in range(d + 1) for b in range(a + 1, d + 2)]
            cols = {pr: n + at + k for k, pr in enumerate(pairs)}
            phi[at:at + len(pairs)] = [float(x) for x in rest[:len(pairs)]]
            path_flow(prog, None, links, cols)
        elif kind == "GRANDPARENT_HEAD_AUTOMATON":
            g = int(rest[0])
            d = len(links) - g
            pairs = [(a, b) for a in range(d + 1) for b in range(a + 1, d + 2)]
            gp_scores = [float(x) for x in rest[1:1 + g * d]]
            sib_scores = [float(x) for x in rest[1 + g * d:1 + g * d + len(pairs)]]
            phi[at:at + g * d] = gp_scores
            phi[at + g * d:at + g * d + len(pairs)] = sib_scores
            prog.add_eq({links[k]: 1.0 for k in range(g)}, 1.0)
            copies = []
            for k in range(g):
                cols = {pr: prog.column() for pr in pairs}
                # flow through modifier j in copy k is the grandparent output (k, j)
                path_flow(prog, links[k], [n + at + k * d + j for j in range(d)], cols)
                copies.append(cols)
            for idx, pr in enumerate(pairs):
                coef = {c[pr]: 1.0 for c in copies}
                coef[n + at + g * d + idx] = -1.0
                prog.add_eq(coef, 0.0)
            for j in range(d):
                coef = {n + at + k * d + j: 1.0 for k in range(g)}
                coef[links[g + j]] = -1.0
                prog.add_eq(coef, 0.0)
        elif kind == "SEQUENCE":
            states = sequence_states(rest)
            scores = [float(x) for x in rest[1 + len(states):]]
            for k, x in enumerate(scores):
                if x == -np.inf:  # forbidden: its edge carries no flow
                    prog.add_eq({n + at + k: 1.0}, 0.0)
                else:
                    phi[at + k] = x
            trellis_flow(prog, links, states, n + at)
        elif kind == "BUDGET":
            prog.add_ub({x: 1.0 for x in links}, float(rest[0]))
        elif kind == "ATMOSTONE":
            prog.add_ub({x: 1.0 for x in links}, 1.0)
        elif kind == "OR":
            prog.add_ub({x: -1.0 for x in links}, -1.0)
        else:
            raise ValueError("unsupported factor type " + kind)
    return prog, n, n_add, phi


def concord_solution(cli, path, tol, n, n_add):
    """Solves the file by the CLI's LP-SparseMAP at tol: (u, v, the CLI's summary, seconds)."""
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        t0 = time.time()
        proc = subprocess.run([cli, "solve", path, "--algorithm", "sparse", "--tol", str(tol),
                               "-o", out.name], capture_output=True, text=True)
        summary = (proc.stdout + proc.stderr).strip()
        seconds = time.time() - t0
        with open(out.name) as solution:
            values = [float(x) for x in solution.read().split()]
    assert len(values) == n + n_add, (len(values), n, n_add)
    return np.array(values[:n]), np.array(values[n:]), summary, seconds


def exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, value_c):
    """1. The QP, exactly, in standard form (slacks for the inequality rows
    and for the upper bounds of u and v)."""
    t0 = time.time()
    total, m_ub, box = A_eq.shape[1], A_ub.shape[0], n + n_add
    A_std = sp.bmat([[A_eq, None, None],
                     [A_ub, sp.identity(m_ub), None],
                     [sp.identity(total, format="csr")[:box], None, sp.identity(box)]],
                    format="csr")
    b_std = np.concatenate([b_eq, b_ub, np.ones(box)])
    q = np.zeros(A_std.shape[1])
    q[:n], q[n:box] = -theta, -phi
    pdiag = np.zeros(A_std.shape[1])
    pdiag[:n] = 1.0
    x0, z0 = reference_tools.interior_point(A_std, b_std, n, q)
    x, certified = reference_tools.exact_qp(A_std, b_std, pdiag, q, x0, z0)
    u_r, v_r = x[:n], x[n:box]
    value_r = theta @ u_r + phi @ v_r - 0.5 * u_r @ u_r
    error = np.abs(u_r - u_c).max()
    print("reference QP (%.1f s, %s): objective %.12f; |u - u_concord| <= %.2e"
          % (time.time() - t0, "certified" if certified else "NOT certified", value_r, error))
    return certified and abs(value_c - value_r) <= 1e-8 * (1 + abs(value_r)) and error <= 1e-6


def distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, v_c):
    """2. min t such that some auxiliary columns satisfy every row within t
    with (u, v) fixed."""
    t0 = time.time()
    box = n + n_add
    fixed = np.concatenate([u_c, v_c])
    E, U = A_eq[:, box:], A_ub[:, box:]
    rhs_eq, rhs_ub = b_eq - A_eq[:, :box] @ fixed, b_ub - A_ub[:, :box] @ fixed

    def with_t(M):
        return sp.hstack([M, -sp.csr_matrix(np.ones((M.shape[0], 1)))])

    res = linprog(np.concatenate([np.zeros(E.shape[1]), [1.0]]),
                  A_ub=sp.vstack([with_t(E), with_t(-E), with_t(U)]).tocsr(),
                  b_ub=np.concatenate([rhs_eq, -rhs_eq, rhs_ub]),
                  bounds=[(0.0, None)] * (E.shape[1] + 1), method="highs")
    print("HiGHS (%.1f s): concord's point violates the rows by %.2e at most"
          % (time.time() - t0, res.fun))
    return res.status == 0 and res.fun <= 1e-6


def certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, v_c, value_c):
    """3. max grad F(x).y over the polytope, less grad F(x).x."""
    t0 = time.time()
    total = A_eq.shape[1]
    c = np.zeros(total)
    c[:n], c[n:n + n_add] = -(theta - u_c), -phi
    bounds = [(0.0, 1.0)] * (n + n_add) + [(0.0, None)] * (total - n - n_add)
    lp = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs",
                 options=dict(primal_feasibility_tolerance=1e-10,
                              dual_feasibility_tolerance=1e-10))
    linearized = (theta - u_c) @ u_c + phi @ v_c
    gap = -lp.fun - linearized
    print("HiGHS (%.1f s): max grad F(x).y = %.12f, grad F(x).x = %.12f: F* - F(x) <= %.2e"
          % (time.time() - t0, -lp.fun, linearized, gap))
    return lp.status == 0 and abs(gap) <= 1e-8 * (1 + abs(value_c))


def main():
    """Checks concord's solution of FILE.fg as the module docstring says, prints the figures
    and exits 1 when a check fails."""
    cli, path = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-9
    mode = sys.argv[4] if len(sys.argv) > 4 else "exact"
    theta, factors = read_fg(path)
    prog, n, n_add, phi = build(theta, factors)
    A_eq, b_eq = prog.matrix(prog.eq)
    A_ub, b_ub = prog.matrix(prog.ub)
    print("%s: %d variables, %d additional outputs, %d columns, %d + %d rows"
          % (path, n, n_add, prog.n, A_eq.shape[0], A_ub.shape[0]))
    u_c, v_c, summary, seconds = concord_solution(cli, path, tol, n, n_add)
    value_c = theta @ u_c + phi @ v_c - 0.5 * u_c @ u_c
    print("concord (tol %g, %.3f s): %s; objective %.12f" % (tol, seconds, summary, value_c))
    ok = True
    if mode == "exact":
        ok &= exact_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, value_c)
    ok &= distance_check(n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, v_c)
    ok &= certificate_check(theta, phi, n, n_add, A_eq, b_eq, A_ub, b_ub, u_c, v_c, value_c)
    print("agree" if ok else "DISAGREE")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
