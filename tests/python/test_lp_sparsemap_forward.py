"""LP-SparseMAP forward pass checked against an independent QP reference.

concord_solver_sparse computes
    max  theta.u + phi.v - |u|^2/2   over the local polytope
by ADMM. The reference here writes the same problem as one explicit convex
QP: a weight per allowed configuration of every factor (enumerated here from
the factor semantics documented in concord.h, never from concord's code),
constraints tying the weights' marginals to u, KNAPSACK in H-representation
(its polytope is the continuous one), the box for variables no enumerated
factor covers. cvxopt's interior point solves it (tolerances 1e-10), then
the answer is polished: the constraints active at the interior point are
taken as equalities and the KKT system solved exactly, moving one
constraint at a time until the KKT conditions (stationarity, feasibility,
complementarity, multiplier signs) check to 1e-11 -- no regularizer is
involved. Only such exact points serve as references: a graph whose
reference does not polish fails the test. The backward and loss tests
import the reference and the random graphs from here.

What is asserted:
  * 320 random graphs (<= 12 variables; XOR, XOROUT, ATMOSTONE, OR, OROUT,
    ANDOUT, IMPLY, BUDGET, exact BUDGET, KNAPSACK, PAIR and DENSE over
    multi-variables with or without their one-hot XOR; negations; variables
    in no factor; scores from 1e-4 to 30, with ties): concord's u and
    objective equal the reference within 1e-6 (concord at tol 1e-10);
  * 240 single-factor graphs (every kind) and 60 graphs of factors sharing
    no variable equal SparseMAP, from the same reference, within 1e-9;
  * every factor's sparse distribution (concord_factor_distribution) has
    weights >= 0 summing to 1 over allowed configurations and reproduces the
    factor's part of the solution (1e-7); the number of active
    configurations per factor is printed (mean/max, by kind). Two kinds
    has none (NO_DISTRIBUTION: concord must refuse it);
  * with regularization weights in [0.1, 10] (100 random graphs), the
    weighted objective's solution equals the reference's within 1e-6, and
    with every weight 1e-4 or 1e4 a solve at the default tolerance ends
    within 1e-5 of it;
  * every setting reaches its concord_settings field, and the
    reference reproduces hand-solved cases.
"""

import itertools
import os
import sys
import time

import concord
import numpy as np
import pytest
from concord import _core
import scipy.linalg
from cvxopt import matrix, solvers
from scipy.optimize import linprog, nnls

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_specs import GraphSpec, build, solve_sparse  # noqa: E402


# ---------------------------------------------------------------------------
# Factor semantics, from concord.h: the allowed 0/1 configurations.


def _allowed_logic(name, lit):
    rest, last = lit[:-1], lit[-1]
    if name == "XOR":
        return sum(lit) == 1
    if name == "XOROUT":
        return sum(rest) <= 1 and last == sum(rest)
    if name == "ATMOSTONE":
        return sum(lit) <= 1
    if name == "OR":
        return sum(lit) >= 1
    if name == "OROUT":
        return last == int(any(rest))
    if name == "ANDOUT":
        return last == int(all(rest))
    if name == "IMPLY":
        return (not all(rest)) or last == 1
    raise ValueError(name)


class RefFactor:
    """One factor as the reference sees it, in variable space.

    vars: the variables of its links, in link order; add_begin, n_add: its
    additional outputs in the global index. Either U (k x degree) and V
    (k x n_add): its allowed configurations, or, for KNAPSACK, the
    H-representation sign/coef/rhs of  sum_j coef_j u_j <= rhs  over the box.
    """

    def __init__(self, kind, vars_, add_begin=0, n_add=0):
        self.kind = kind
        self.vars = list(vars_)
        self.add_begin = add_begin
        self.n_add = n_add
        self.U = self.V = None
        self.hrep = None

    @property
    def degree(self):
        return len(self.vars)


def _vrep(kind, vars_, allowed):
    """Enumerates {0,1}^degree in variable space, keeping allowed(x)."""
    f = RefFactor(kind, vars_)
    rows = [x for x in itertools.product((0, 1), repeat=len(vars_)) if allowed(x)]
    f.U = np.array(rows, dtype=float).reshape(len(rows), len(vars_))
    f.V = np.zeros((len(rows), 0))
    return f


def reference_factors(spec):
    """The factors of a GraphSpec in concord's factor order."""
    factors = []
    n_vars = n_add = 0
    for step in spec.steps:
        kind = step[0]
        if kind == "vars":
            n_vars += step[1]
        elif kind == "multi":
            _, k, one_hot = step
            states = list(range(n_vars, n_vars + k))
            n_vars += k
            if one_hot:  # documented: an XOR factor over the states
                factors.append(_vrep("XOR", states, lambda x: sum(x) == 1))
        elif kind == "logic":
            _, name, vars_, neg = step
            neg = list(neg) if neg is not None else [False] * len(vars_)
            factors.append(_vrep(name, vars_, lambda x, name=name, neg=neg: _allowed_logic(
                name, [xi ^ int(ni) for xi, ni in zip(x, neg)])))
        elif kind == "budget":
            _, vars_, neg, budget, exact = step
            neg = list(neg) if neg is not None else [False] * len(vars_)

            def ok(x, neg=neg, budget=budget, exact=exact):
                s = sum(xi ^ int(ni) for xi, ni in zip(x, neg))
                return s == budget if exact else s <= budget
            factors.append(_vrep("BUDGET_EXACT" if exact else "BUDGET", vars_, ok))
        elif kind == "knapsack":
            _, vars_, neg, costs, budget = step
            neg = np.array(neg if neg is not None else [False] * len(vars_), dtype=bool)
            costs = np.asarray(costs, dtype=float)
            f = RefFactor("KNAPSACK", vars_)
            # literal l_j = u_j, or 1 - u_j when negated: sum c_j l_j <= B
            sign = np.where(neg, -1.0, 1.0)
            f.hrep = (costs * sign, budget - costs[neg].sum(), costs, neg, budget)
            factors.append(f)
        elif kind == "pair":
            _, a, b = step
            f = RefFactor("PAIR", [a, b], n_add, 1)
            f.U = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
            f.V = np.array([[0], [0], [0], [1]], dtype=float)
            factors.append(f)
            n_add += 1
        elif kind == "dense":
            _, states, vars_, forbidden = step
            n_joint = int(np.prod(states))
            f = RefFactor("DENSE", vars_, n_add, n_joint)
            U, V = [], []
            offsets = np.concatenate([[0], np.cumsum(states)[:-1]])
            # joint state c in row-major order, the last variable fastest
            for c, digits in enumerate(itertools.product(*[range(s) for s in states])):
                if forbidden[c]:
                    continue
                u = np.zeros(len(vars_))
                for j, dgt in enumerate(digits):
                    u[offsets[j] + dgt] = 1.0
                v = np.zeros(n_joint)
                v[c] = 1.0
                U.append(u)
                V.append(v)
            f.U, f.V = np.array(U), np.array(V)
            factors.append(f)
            n_add += n_joint
        else:
            raise ValueError(kind)
    return factors


# ---------------------------------------------------------------------------
# The reference QP: x = [u, weights of every V-represented factor].


class LocalQP:
    """min 1/2 x'Px + q'x  s.t.  Gx <= h,  Ax = b  for the local polytope
    (q alone, with G, h and the full A, b, is the LP-MAP problem); P holds
    the spec's regularization weights (1 without them) on its diagonal."""

    def __init__(self, spec, factors, theta, phi):
        n, _ = spec.sizes()
        self.n = n
        self.factors = factors
        self.blocks = []  # (factor index, offset of its weights, count)
        offset = n
        for fi, f in enumerate(factors):
            if f.U is not None:
                self.blocks.append((fi, offset, len(f.U)))
                offset += len(f.U)
        self.nx = offset
        covered = np.zeros(n, dtype=bool)
        for f in factors:
            if f.U is not None:
                covered[f.vars] = True
        self.covered = covered
        eq_rows, eq_rhs, in_rows, in_rhs = [], [], [], []
        for fi, off, k in self.blocks:
            f = factors[fi]
            row = np.zeros(self.nx)
            row[off:off + k] = 1.0
            eq_rows.append(row)
            eq_rhs.append(1.0)
            for j, var in enumerate(f.vars):
                row = np.zeros(self.nx)
                row[off:off + k] = f.U[:, j]
                row[var] -= 1.0
                eq_rows.append(row)
                eq_rhs.append(0.0)
            for c in range(k):  # weights >= 0
                row = np.zeros(self.nx)
                row[off + c] = -1.0
                in_rows.append(row)
                in_rhs.append(0.0)
        for i in range(n):  # the box, where no V-represented factor implies it
            if not covered[i]:
                row = np.zeros(self.nx)
                row[i] = 1.0
                in_rows.append(row)
                in_rhs.append(1.0)
                row = np.zeros(self.nx)
                row[i] = -1.0
                in_rows.append(row)
                in_rhs.append(0.0)
        for f in factors:
            if f.hrep is not None:
                coef, rhs = f.hrep[0], f.hrep[1]
                row = np.zeros(self.nx)
                for j, var in enumerate(f.vars):
                    row[var] += coef[j]
                in_rows.append(row)
                in_rhs.append(rhs)
        self.A = np.array(eq_rows).reshape(len(eq_rows), self.nx)
        self.b = np.array(eq_rhs)
        self.G = np.array(in_rows).reshape(len(in_rows), self.nx)
        self.h = np.array(in_rhs)
        self.n_weight_rows = sum(k for _, _, k in self.blocks)  # the first rows of G
        self.A_full, self.b_full = self.A, self.b
        # Consistent but redundant equalities (e.g. a DENSE factor and the
        # one-hot XOR of its variable) are dropped: interior-point methods
        # need A of full row rank.
        if len(self.A):
            _, R, piv = scipy.linalg.qr(self.A.T, pivoting=True, mode="economic")
            diag = np.abs(np.diag(R))
            rank = int((diag > 1e-10 * max(diag.max(), 1.0)).sum())
            keep = np.sort(piv[:rank])
            self.A, self.b = self.A[keep], self.b[keep]
        self.P = np.zeros((self.nx, self.nx))
        self.P[:n, :n] = np.diag(np.ones(n) if spec.weights is None else spec.weights)
        self.set_scores(theta, phi)

    def set_scores(self, theta, phi):
        self.theta = np.asarray(theta, dtype=float)
        self.phi = np.asarray(phi, dtype=float)
        q = np.zeros(self.nx)
        q[:self.n] = -self.theta
        for fi, off, k in self.blocks:
            f = self.factors[fi]
            if f.n_add:
                q[off:off + k] = -f.V @ self.phi[f.add_begin:f.add_begin + f.n_add]
        self.q = q

    def score_map(self):
        """The linear map (theta, phi) -> -q."""
        n_add = len(self.phi)
        M = np.zeros((self.nx, self.n + n_add))
        M[:self.n, :self.n] = np.eye(self.n)
        for fi, off, k in self.blocks:
            f = self.factors[fi]
            if f.n_add:
                M[off:off + k, self.n + f.add_begin:self.n + f.add_begin + f.n_add] = f.V
        return M

    def output_map(self):
        """The linear map x -> (u, v)."""
        n_add = len(self.phi)
        M = np.zeros((self.n + n_add, self.nx))
        M[:self.n, :self.n] = np.eye(self.n)
        for fi, off, k in self.blocks:
            f = self.factors[fi]
            if f.n_add:
                M[self.n + f.add_begin:self.n + f.add_begin + f.n_add, off:off + k] = f.V.T
        return M

    def objective(self, x):
        """theta.u + phi.v (- sum_i w_i u_i^2/2): the maximized objective."""
        return -(0.5 * x @ self.P @ x + self.q @ x)

    def split(self, x):
        u = x[:self.n].copy()
        v = self.output_map()[self.n:] @ x
        return u, v


class Solution:
    def __init__(self, qp, x, y, z, polished, active=None, x0=None, z0=None):
        self.qp = qp
        self.x0, self.z0 = x0, z0  # the interior-point iterate
        self.x, self.y, self.z = x, y, z
        self.polished = polished
        self.active = active
        self.u, self.v = qp.split(x)
        self.value = qp.objective(x)

    def differentiable_face(self, margin):
        """The constraints that stay active under small changes of the
        scores, or None where the solution map has a kink (a tie).

        The interior-point iterate, near the centre of the optimal set,
        splits the constraints into those with a positive multiplier in some
        optimal dual solution (slack << multiplier) and those with positive
        slack in some optimal primal solution (multiplier << slack); a
        constraint where neither dominates is a tie. The map is
        differentiable when a strictly complementary pair exists for that
        split: the polished point in the relative interior of the faces of
        the free weights (every free weight > margin for some weights
        reproducing u: an LP) and multipliers > margin on every active
        constraint (another LP, over the multipliers, which may not be
        unique). Then u stays on those faces for small changes of the
        scores and is affine in them."""
        qp = self.qp
        if self.x0 is None:
            return None
        s0 = qp.h - qp.G @ self.x0
        z0 = self.z0
        big, small = np.maximum(s0, z0), np.maximum(np.minimum(s0, z0), 0.0)
        if not (big > 1e3 * small).all():
            return None
        active = s0 < z0
        slack = qp.h - qp.G @ self.x
        if np.abs(slack[active]).max(initial=0) > 1e-9:
            return None
        nw = qp.n_weight_rows
        other = np.arange(len(qp.h)) >= nw
        if (slack[other & ~active] <= margin).any():
            return None
        row = 0
        for fi, off, k in qp.blocks:
            f = qp.factors[fi]
            free = [c for c in range(k) if not active[row + c]]
            row += k
            # maximize t: p_c >= t on the free configurations
            m = len(free)
            cost = np.zeros(m + 1)
            cost[-1] = -1.0
            A_eq = np.hstack([np.vstack([np.ones((1, m)), f.U[free].T]),
                              np.zeros((1 + f.degree, 1))])
            b_eq = np.concatenate([[1.0], self.u[f.vars]])
            A_ub = np.hstack([-np.eye(m), np.ones((m, 1))])
            res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=b_eq,
                          bounds=[(0, None)] * m + [(None, 1.0)], method="highs")
            if res.status != 0 or -res.fun <= margin:
                return None
        # maximize t: multipliers z >= t on the active constraints, with
        # stationarity P x + q + A'y + G_act' z = 0 (y free)
        Ga = qp.G[active]
        my, ma = len(qp.A), int(active.sum())
        if ma:
            cost = np.zeros(my + ma + 1)
            cost[-1] = -1.0
            A_eq = np.hstack([qp.A.T, Ga.T, np.zeros((qp.nx, 1))])
            A_ub = np.hstack([np.zeros((ma, my)), -np.eye(ma), np.ones((ma, 1))])
            scale = max(1.0, np.abs(qp.q).max())
            res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(ma), A_eq=A_eq,
                          b_eq=-(qp.P @ self.x + qp.q),
                          bounds=[(None, None)] * my + [(0, None)] * ma + [(None, scale)],
                          method="highs")
            if res.status != 0 or -res.fun <= margin:
                return None
        return active


def _kkt(qp, active):
    C = np.vstack([qp.A, qp.G[active]]) if len(qp.A) else qp.G[active]
    d = np.concatenate([qp.b, qp.h[active]])
    m = C.shape[0]
    K = np.block([[qp.P, C.T], [C, np.zeros((m, m))]])
    return K, C, d


def _repair_weights(qp, x, active):
    """Given the exact u in x, finds every V-represented factor's weights
    again by nonnegative least squares over its configurations that are not
    held at zero: the KKT solve gives the minimum-norm weights, which may
    be negative when the optimal weights are not unique."""
    x = x.copy()
    for fi, off, k in qp.blocks:
        f = qp.factors[fi]
        # the first rows of G are -p <= 0, in the order of the weights
        free = [c for c in range(k) if not active[off - qp.n + c]]
        M = np.vstack([np.ones((1, len(free))), f.U[free].T])
        rhs = np.concatenate([[1.0], x[f.vars]])
        p, _ = nnls(M, rhs)
        x[off:off + k] = 0.0
        x[[off + c for c in free]] = p
    return x


def _kkt_ok(qp, x, y, z, active, scale):
    stat = qp.P @ x + qp.q + qp.A.T @ y + qp.G.T @ z
    slack = qp.h - qp.G @ x
    return (np.abs(stat).max(initial=0) <= 1e-11 * scale
            and np.abs(qp.A_full @ x - qp.b_full).max(initial=0) <= 1e-11
            and np.abs(slack[active]).max(initial=0) <= 1e-11
            and slack.min(initial=0) >= -1e-11
            and z.min(initial=0) >= -1e-11 * scale)


def _solve_on(qp, active):
    K, C, d = _kkt(qp, active)
    rhs = np.concatenate([-qp.q, d])
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    for _ in range(2):  # iterative refinement
        sol += np.linalg.lstsq(K, rhs - K @ sol, rcond=None)[0]
    x = sol[:qp.nx]
    y = sol[qp.nx:qp.nx + len(qp.b)]
    z = np.zeros(len(qp.h))
    z[active] = sol[qp.nx + len(qp.b):]
    return x, y, z


def _repair_multipliers(qp, x, active):
    """Given x, multipliers (y free, z >= 0 on the active constraints) that
    make the KKT stationarity hold, by nonnegative least squares: when the
    active constraints are dependent the minimum-norm multipliers of the
    KKT solve may be negative although nonnegative ones exist."""
    m = len(qp.A)
    Ga = qp.G[active]
    M = np.hstack([qp.A.T, -qp.A.T, Ga.T])
    sol, _ = nnls(M, -(qp.P @ x + qp.q), maxiter=50 * M.shape[1])
    y = sol[:m] - sol[m:2 * m]
    z = np.zeros(len(qp.h))
    z[active] = sol[2 * m:]
    return y, z


def _polish(qp, x0, z0):
    """Exact KKT point from an interior point: guess the active constraints
    (slack below multiplier), solve the KKT system with them as equalities,
    then move one constraint at a time (drop the most negative multiplier,
    or add the most violated constraint) until the KKT conditions check.
    Non-unique weights and multipliers are refitted by nonnegative least
    squares. Returns (x, y, z, active), or None."""
    scale = max(1.0, np.abs(qp.q).max(initial=0.0))
    active = (qp.h - qp.G @ x0) <= z0
    seen = set()
    for _ in range(100):
        key = active.tobytes()
        if key in seen:
            return None
        seen.add(key)
        x, y, z = _solve_on(qp, active)
        if _kkt_ok(qp, x, y, z, active, scale):
            return x, y, z, active
        x2 = _repair_weights(qp, x, active)
        y2, z2 = _repair_multipliers(qp, x2, active)
        for cand in ((x2, y, z), (x, y2, z2), (x2, y2, z2)):
            if _kkt_ok(qp, *cand, active, scale):
                return cand + (active,)
        slack = qp.h - qp.G @ x
        worst_z = np.argmin(np.where(active, z, np.inf)) if active.any() else None
        worst_s = np.argmin(np.where(active, np.inf, slack)) if (~active).any() else None
        if worst_z is not None and z[worst_z] < -1e-11 * scale:
            active[worst_z] = False
        elif worst_s is not None and slack[worst_s] < -1e-11:
            active[worst_s] = True
        else:
            return None
    return None


def _interior_point(qp):
    eq = dict(A=matrix(qp.A), b=matrix(qp.b)) if len(qp.A) else {}
    last = None
    for kkt, tol in (("ldl", 1e-10), ("ldl", 1e-8), ("chol2", 1e-10)):
        opts = {"show_progress": False, "abstol": tol, "reltol": tol, "feastol": tol,
                "maxiters": 200}
        try:
            res = solvers.coneqp(matrix(qp.P), matrix(qp.q), G=matrix(qp.G), h=matrix(qp.h),
                                 kktsolver=kkt, options=opts, **eq)
        except (ValueError, ArithmeticError) as e:
            last = e
            continue
        if np.isfinite(np.array(res["x"])).all() and np.isfinite(np.array(res["z"])).all():
            return res
        last = ArithmeticError("cvxopt returned non-finite values")
    raise last


def solve_reference(qp):
    """The QP by cvxopt's interior point (LDL KKT solver, tolerances 1e-10;
    retried looser or with another KKT solver if it breaks down), then
    polished."""
    res = _interior_point(qp)
    x0 = np.array(res["x"]).ravel()
    z0 = np.array(res["z"]).ravel()
    y0 = np.array(res["y"]).ravel() if len(qp.A) else np.zeros(0)
    polished = _polish(qp, x0, z0)
    if polished is None:
        return Solution(qp, x0, y0, z0, False, (qp.h - qp.G @ x0) <= z0, x0, z0)
    x, y, z, active = polished
    return Solution(qp, x, y, z, True, active, x0, z0)


def reference_jacobian(sol, active):
    """d(u, v)/d(theta, phi) on the faces `active` (from
    Solution.differentiable_face): the KKT system with those constraints as
    equalities, differentiated. Returns (J, unique_v): unique_v False when
    the configuration weights (hence v) are not unique on those faces (then
    only the block of u w.r.t. theta means anything)."""
    qp = sol.qp
    K, C, d = _kkt(qp, active)
    pinv = np.linalg.pinv(K, rcond=1e-12)
    m = C.shape[0]
    rhs_map = np.vstack([qp.score_map(), np.zeros((m, qp.score_map().shape[1]))])
    dx = (pinv @ rhs_map)[:qp.nx]
    J = qp.output_map() @ dx
    # null space of K restricted to x: directions that leave the KKT system
    # unchanged; v is unique when none of them moves it
    sv = np.linalg.svd(K, compute_uv=False)
    unique_v = True
    if sv.min() < 1e-10 * sv.max():
        _, s, Vt = np.linalg.svd(K)
        null = Vt[s < 1e-10 * s.max()][:, :qp.nx]
        unique_v = np.abs(qp.output_map() @ null.T).max(initial=0) < 1e-9
    return J, unique_v


def local_polytope_feasible(qp):
    """Whether the local polytope is nonempty (an LP with zero cost)."""
    bounds = [(None, None)] * qp.nx
    # the full equalities: dropping rows is only valid when they are consistent
    res = linprog(np.zeros(qp.nx), A_ub=qp.G if len(qp.G) else None,
                  b_ub=qp.h if len(qp.G) else None, A_eq=qp.A_full if len(qp.A) else None,
                  b_eq=qp.b_full if len(qp.A) else None, bounds=bounds, method="highs")
    return res.status == 0


# ---------------------------------------------------------------------------
# Random graphs.

LOGIC = ["XOR", "XOROUT", "ATMOSTONE", "OR", "OROUT", "ANDOUT", "IMPLY"]
KINDS = LOGIC + ["BUDGET", "BUDGET_EXACT", "KNAPSACK", "PAIR", "DENSE"]


def _draw_factor(rng, kind, pool, multis, steps):
    """Appends one factor step over variables drawn from pool."""
    if kind == "PAIR":
        a, b = rng.choice(pool, size=2, replace=False)
        steps.append(("pair", int(a), int(b)))
        return
    lo = 2 if kind in ("OROUT", "ANDOUT") else 1
    hi = min(5, len(pool))
    degree = int(rng.integers(lo, hi + 1))
    vars_ = [int(v) for v in rng.choice(pool, size=degree, replace=False)]
    neg = [bool(b) for b in rng.random(degree) < 0.35]
    if kind in LOGIC:
        steps.append(("logic", kind, vars_, neg))
    elif kind == "BUDGET":
        steps.append(("budget", vars_, neg, int(rng.integers(0, degree + 2)), False))
    elif kind == "BUDGET_EXACT":
        steps.append(("budget", vars_, neg, int(rng.integers(0, degree + 1)), True))
    elif kind == "KNAPSACK":
        pick = rng.random(degree)
        costs = np.where(pick < 0.15, 0.0, np.where(pick < 0.5, rng.integers(1, 4, degree),
                                                    0.05 + 1.95 * rng.random(degree)))
        r = rng.random()
        if r < 0.15:
            budget = 0.0
        elif r < 0.4:
            budget = float(rng.integers(0, int(np.ceil(costs.sum())) + 1))
        else:
            budget = float(max(costs.sum(), 1.0) * 1.1 * rng.random())
        steps.append(("knapsack", vars_, neg, costs.tolist(), budget))


def draw_scores(rng, n, n_add, scale=None):
    if scale is None:
        scale = float(rng.choice([0.01, 0.3, 1.0, 1.0, 3.0, 10.0, 30.0]))
    regime = rng.integers(3)
    if regime == 0:
        theta = rng.normal(size=n) * scale
        phi = rng.normal(size=n_add) * scale
    elif regime == 1:  # mixed magnitudes
        theta = rng.normal(size=n) * scale * 10.0 ** rng.integers(-2, 1, size=n)
        phi = rng.normal(size=n_add) * scale * 10.0 ** rng.integers(-2, 1, size=n_add)
    else:  # half-integers: ties between configurations
        theta = rng.integers(-4, 5, size=n) * 0.5 * scale
        phi = rng.integers(-4, 5, size=n_add) * 0.5 * scale
    return theta, phi


def _dense_step(rng, multis, chosen):
    states = [multis[c][1] for c in chosen]
    vars_ = [s for c in chosen for s in range(multis[c][0], multis[c][0] + multis[c][1])]
    n_joint = int(np.prod(states))
    forbidden = rng.random(n_joint) < 1 / 6
    if forbidden.all():
        forbidden[rng.integers(n_joint)] = False
    return ("dense", states, vars_, forbidden.tolist())


def random_spec(rng, max_vars=12, n_factors=None, kinds=KINDS, single=False):
    """A random GraphSpec. single: exactly one factor, plus variables in no
    factor."""
    steps, multis = [], []
    n = 0
    single_kind = str(rng.choice(kinds)) if single else None
    use_dense = "DENSE" in kinds and (single_kind == "DENSE" if single else rng.random() < 0.35)
    if use_dense:
        for _ in range(int(rng.integers(1, 3))):
            k = int(rng.integers(2, 4))
            one_hot = False if single else bool(rng.random() < 0.5)
            steps.append(("multi", k, one_hot))
            multis.append((n, k, one_hot))
            n += k
    lo = 0 if use_dense else 2
    n_bin = int(rng.integers(lo, max(lo, max_vars - n) + 1))
    if n_bin:
        steps.append(("vars", n_bin))
    binary = list(range(n, n + n_bin))
    n += n_bin
    if single:
        if single_kind == "DENSE":
            steps.append(_dense_step(rng, multis, list(range(len(multis)))))
        else:
            _draw_factor(rng, single_kind, binary, multis, steps)
    else:
        # a multi-variable without its one-hot XOR needs a DENSE over it
        uncovered = [m for m in range(len(multis)) if not multis[m][2]]
        while uncovered:
            m = uncovered.pop()
            others = [o for o in range(len(multis)) if o != m]
            chosen = [m] + ([int(rng.choice(others))] if others and rng.random() < 0.6 else [])
            uncovered = [o for o in uncovered if o not in chosen]
            steps.append(_dense_step(rng, multis, chosen))
        count = n_factors if n_factors is not None else int(rng.integers(1, 6))
        pool = list(range(n))
        for _ in range(count):
            kind = str(rng.choice([k for k in kinds if k != "DENSE" or multis]))
            if kind == "DENSE":
                chosen = rng.choice(len(multis), size=min(len(multis), int(rng.integers(1, 3))),
                                    replace=False)
                steps.append(_dense_step(rng, multis, [int(c) for c in chosen]))
            else:
                _draw_factor(rng, kind, pool, multis, steps)
    n_vars, n_add = GraphSpec(steps, [], []).sizes()
    theta, phi = draw_scores(rng, n_vars, n_add)
    return GraphSpec(steps, theta, phi)


def feasible_spec(rng, weighted=False, **kwargs):
    """random_spec, redrawn until its local polytope is nonempty; weighted:
    with regularization weights drawn log-uniformly from [0.1, 10]."""
    while True:
        spec = random_spec(rng, **kwargs)
        if weighted:
            spec.weights = np.exp(rng.uniform(np.log(0.1), np.log(10.0), size=spec.sizes()[0]))
        factors = reference_factors(spec)
        qp = LocalQP(spec, factors, spec.theta, spec.phi)
        if local_polytope_feasible(qp):
            return spec, factors, qp


def tight_settings(tol=1e-10, **kw):
    return _core.Settings(tol=tol, max_iter=2000000, **kw)


# ---------------------------------------------------------------------------
# Tests.


def test_settings_map_onto_the_c_struct():
    """Each setting, made invalid alone, is the one concord_check_settings
    names: the keyword arguments reach the C struct's fields."""
    for field, bad in [("max_iter", 0), ("tol", -1.0), ("eta", 0.0), ("relaxation", 3.0),
                       ("bound_every", 0), ("max_inner_iter", 0), ("backward_tol", 0.0),
                       ("backward_max_iter", 0)]:
        with pytest.raises(ValueError, match="^" + field):
            _core.Settings(**{field: bad})
    s = _core.Settings()
    assert s.backward_power is False and s.adapt_eta is True and s.tol == 1e-6


# KNAPSACK has no sparse distribution (its polytope has fractional
# vertices): concord refuses it with EINVAL, which the random tests check.
NO_DISTRIBUTION = {"KNAPSACK"}


class DistributionError(AssertionError):
    pass


def check_distribution(solver, f, factor, u, v, tol):
    """Factor f's distribution: weights >= 0 summing to 1, allowed
    configurations, reproducing (u, v) on its links. Returns its size."""
    w, U, V = solver.factor_distribution(f)

    def require(cond, what):
        if not cond:
            raise DistributionError("factor %d (%s): %s\nweights %s\nconfigs %s %s\n"
                                    "solution u %s" % (f, factor.kind, what, w.tolist(),
                                                       U.tolist(), V.tolist(),
                                                       u[factor.vars].tolist()))
    require(len(w) >= 1, "empty")
    require(w.min() >= -1e-12, "negative weight")
    require(abs(w.sum() - 1.0) <= 1e-9, "weights sum to %r" % w.sum())
    if factor.U is not None:
        allowed = {tuple(row) + tuple(vrow) for row, vrow in zip(factor.U, factor.V)}
        for row, vrow in zip(U, V):
            require(tuple(row) + tuple(vrow) in allowed, "configuration not allowed")
    else:  # KNAPSACK: points of the continuous polytope
        coef, rhs = factor.hrep[0], factor.hrep[1]
        require(U.min() >= -1e-12 and U.max() <= 1 + 1e-12, "outside the box")
        require((U @ coef <= rhs + 1e-9).all(), "over the budget")
    require(np.abs(w @ U - u[factor.vars]).max() <= tol, "u = %s" % (w @ U).tolist())
    if factor.n_add:
        got_v = w @ V
        require(np.abs(got_v - v[factor.add_begin:factor.add_begin + factor.n_add]).max() <= tol,
                "v = %s" % got_v.tolist())
    return len(w)


def check_distributions(solver, factors, u, v, known_bad):
    """Every factor's distribution; returns [(kind, size)] of the checked
    ones. KNAPSACK must be refused (counted in known_bad)."""
    sizes = []
    for f, factor in enumerate(factors):
        if factor.kind in NO_DISTRIBUTION:
            with pytest.raises(concord.ConcordError):
                solver.factor_distribution(f)
            known_bad[factor.kind] = known_bad.get(factor.kind, 0) + 1
            continue
        sizes.append((factor.kind, check_distribution(solver, f, factor, u, v, 1e-7)))
    return sizes


def _print_support(label, sizes):
    by_kind = {}
    for kind, s in sizes:
        by_kind.setdefault(kind, []).append(s)
    allsizes = [s for _, s in sizes]
    print("  %s active configurations per factor: mean %.2f max %d over %d factors" % (
        label, np.mean(allsizes), max(allsizes), len(allsizes)))
    print("    by kind: " + ", ".join("%s %.2f/%d" % (k, np.mean(s), max(s))
                                     for k, s in sorted(by_kind.items())))


def test_lp_sparsemap_matches_the_qp_reference_on_random_graphs():
    rng = np.random.default_rng(20240501)
    settings = tight_settings()
    n_graphs, worst_u, worst_obj, t0 = 0, 0.0, 0.0, time.time()
    kinds_seen, sizes, known_bad, iterations = {}, [], {}, []
    while n_graphs < 320:
        spec, factors, qp = feasible_spec(rng)
        ref = solve_reference(qp)
        assert ref.polished, "reference not polished:\n" + spec.describe()
        solver = build(spec)
        u, v, info = solve_sparse(solver, settings)
        assert info.converged
        err_u = np.abs(u - ref.u).max()
        value = spec.theta @ u + spec.phi @ v - 0.5 * u @ u
        err_obj = max(abs(value - ref.value), abs(info.value - ref.value))
        if err_u > 1e-6 or err_obj > 1e-6:
            pytest.fail("LP-SparseMAP differs from the reference: |du| %.3g |dobj| %.3g\n"
                        "concord u %s\nreference u %s\n%s" % (
                            err_u, err_obj, u.tolist(), ref.u.tolist(), spec.describe()))
        sizes += check_distributions(solver, factors, u, v, known_bad)
        worst_u, worst_obj = max(worst_u, err_u), max(worst_obj, err_obj)
        for factor in factors:
            kinds_seen[factor.kind] = kinds_seen.get(factor.kind, 0) + 1
        iterations.append(info.iterations)
        n_graphs += 1
    print("\nLP-SparseMAP forward: %d random graphs (%d factors), max |u - ref| %.2e, "
          "max |objective - ref| %.2e, ADMM iterations median %d max %d, %.1fs" % (
              n_graphs, sum(kinds_seen.values()), worst_u, worst_obj,
              int(np.median(iterations)), max(iterations), time.time() - t0))
    print("  factors by kind: %s" % dict(sorted(kinds_seen.items())))
    _print_support("LP-SparseMAP", sizes)
    print("  distributions refused as documented (KNAPSACK): %s" % (known_bad or "none"))
    assert set(kinds_seen) >= set(KINDS)


def test_regularization_weights_match_the_qp_reference():
    """With regularization weights w (concord_set_regularization) the
    objective is theta.u + phi.v - 1/2 sum_i w_i u_i^2: on 100 random graphs
    with weights in [0.1, 10], u and the objective equal the reference's
    (w on the diagonal of P) within 1e-6, and every factor's distribution
    reproduces its part of the solution."""
    rng = np.random.default_rng(20261202)
    settings = tight_settings()
    worst_u = worst_obj = 0.0
    known_bad = {}
    for _ in range(100):
        spec, factors, qp = feasible_spec(rng, weighted=True)
        ref = solve_reference(qp)
        assert ref.polished, "reference not polished:\n" + spec.describe()
        solver = build(spec)
        u, v, info = solve_sparse(solver, settings)
        assert info.converged
        value = spec.theta @ u + spec.phi @ v - 0.5 * (spec.weights * u) @ u
        err_u = np.abs(u - ref.u).max()
        err_obj = max(abs(value - ref.value), abs(info.value - ref.value))
        assert err_u <= 1e-6 and err_obj <= 1e-6, (
            "weighted LP-SparseMAP differs from the reference: |du| %.3g |dobj| %.3g\n"
            "concord u %s\nreference u %s\n%s" % (err_u, err_obj, u.tolist(), ref.u.tolist(),
                                                  spec.describe()))
        check_distributions(solver, factors, u, v, known_bad)
        worst_u, worst_obj = max(worst_u, err_u), max(worst_obj, err_obj)
    print("\nweighted LP-SparseMAP: 100 random graphs, max |u - ref| %.2e, "
          "max |objective - ref| %.2e" % (worst_u, worst_obj))


def test_extreme_uniform_weights_stop_at_the_tolerance():
    """At the default tolerance (1e-6), random graphs whose weights are all
    1e-4, or all 1e4, end within 1e-5 of the reference's solution: the
    stopping test measures the dual residual in units of the curvature w
    (measured without that, every weight 1e-4 stopped up to 0.015 away).
    With every weight w the objective is w times the unweighted one at
    scores theta/w and phi/w, which the reference solves. Graphs whose
    reference does not polish are skipped (counted)."""
    rng = np.random.default_rng(1204)
    checked = skipped = 0
    worst = 0.0
    for w in (1e-4, 1e4):
        for _ in range(40):
            spec, factors, _ = feasible_spec(rng)
            ref = solve_reference(LocalQP(spec, factors, spec.theta / w, spec.phi / w))
            if not ref.polished:
                skipped += 1
                continue
            spec.weights = np.full(spec.sizes()[0], w)
            u, _, info = solve_sparse(build(spec))
            assert info.converged
            err = np.abs(u - ref.u).max()
            assert err <= 1e-5, "weights %g: |u - ref| %.3g\n%s" % (w, err, spec.describe())
            worst = max(worst, err)
            checked += 1
    print("\nweights 1e-4 and 1e4 at tol 1e-6: %d graphs, max |u - ref| %.2e, %d skipped"
          % (checked, worst, skipped))
    assert checked >= 60


def test_single_factor_graphs_equal_sparsemap():
    """A graph with one factor (and maybe untouched variables) is that
    factor's SparseMAP: equal to the polished reference to 1e-9."""
    rng = np.random.default_rng(7)
    n, worst = 0, 0.0
    by_kind, sizes, known_bad = {}, [], {}
    t0 = time.time()
    while n < 240:
        spec, factors, qp = feasible_spec(rng, single=True)
        ref = solve_reference(qp)
        assert ref.polished, spec.describe()
        solver = build(spec)
        u, v, info = solve_sparse(solver)  # separable: no tolerance involved
        err = max(np.abs(u - ref.u).max(), abs(info.value - ref.value))
        if err > 1e-9:
            pytest.fail("SparseMAP differs from the reference by %.3g\nconcord u %s\n"
                        "reference u %s\n%s" % (err, u.tolist(), ref.u.tolist(),
                                                 spec.describe()))
        sizes += check_distributions(solver, factors, u, v, known_bad)
        worst = max(worst, err)
        by_kind[factors[0].kind] = by_kind.get(factors[0].kind, 0) + 1
        n += 1
    print("\nSparseMAP (single factor): %d graphs, max error %.2e, %.1fs; by kind %s" % (
        n, worst, time.time() - t0, dict(sorted(by_kind.items()))))
    _print_support("SparseMAP", sizes)
    print("  distributions refused as documented (KNAPSACK): %s" % (known_bad or "none"))
    assert len(by_kind) == len(KINDS)


def test_separable_graphs_equal_sparsemap_per_factor():
    """Factors that share no variable: each is its own SparseMAP, and the
    graph is solved exactly (no ADMM tolerance): 1e-9."""
    rng = np.random.default_rng(11)
    n, worst = 0, 0.0
    while n < 60:
        parts = [feasible_spec(rng, single=True, max_vars=6) for _ in range(int(rng.integers(2, 4)))]
        steps, theta, phi, shift = [], [], [], 0
        for spec, _, _ in parts:
            for step in spec.steps:
                steps.append(_shift_step(step, shift))
            shift += spec.sizes()[0]
            theta += spec.theta.tolist()
            phi += spec.phi.tolist()
        spec = GraphSpec(steps, theta, phi)
        factors = reference_factors(spec)
        ref = solve_reference(LocalQP(spec, factors, spec.theta, spec.phi))
        assert ref.polished
        solver = build(spec)
        u, v, info = solve_sparse(solver)
        err = max(np.abs(u - ref.u).max(), abs(info.value - ref.value))
        assert err <= 1e-9, "separable graph off by %.3g\n%s" % (err, spec.describe())
        worst = max(worst, err)
        n += 1
    print("\nseparable graphs: %d, max error %.2e" % (n, worst))


def _shift_step(step, k):
    kind = step[0]
    if kind in ("vars", "multi"):
        return step
    if kind == "logic":
        return (kind, step[1], [x + k for x in step[2]], step[3])
    if kind in ("budget", "knapsack"):
        return (kind, [x + k for x in step[1]]) + tuple(step[2:])
    if kind == "pair":
        return (kind, step[1] + k, step[2] + k)
    if kind == "dense":
        return (kind, step[1], [x + k for x in step[2]], step[3])
    raise ValueError(kind)


def test_reference_on_hand_solved_cases():
    """The reference itself, on problems solved by hand."""
    # XOR alone is the Euclidean projection onto the simplex (sparsemax):
    # theta (1, 0.5, -1) -> (0.75, 0.25, 0).
    spec = GraphSpec([("vars", 3), ("logic", "XOR", [0, 1, 2], None)], [1.0, 0.5, -1.0], [])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert ref.polished and np.allclose(ref.u, [0.75, 0.25, 0.0], atol=1e-12)
    # A free variable is clip(theta, 0, 1).
    spec = GraphSpec([("vars", 3)], [-2.0, 0.3, 5.0], [])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert np.allclose(ref.u, [0.0, 0.3, 1.0], atol=1e-12)
    # KNAPSACK u0 + 2 u1 <= 1 from theta (1, 1): minimize |u - theta|^2 on
    # the line u0 + 2 u1 = 1 -> u = (1, 1) - t (1, 2), t = 2/5 -> (0.6, 0.2).
    spec = GraphSpec([("vars", 2), ("knapsack", [0, 1], None, [1.0, 2.0], 1.0)], [1.0, 1.0], [])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert np.allclose(ref.u, [0.6, 0.2], atol=1e-12)
    # XOR(u0, u1) and XOR(u1, u2): u = (t, 1 - t, t), objective
    # 2t - (t^2 + (1-t)^2 + t^2)/2, derivative 3 - 3t >= 0 on [0, 1]: t = 1.
    spec = GraphSpec([("vars", 3), ("logic", "XOR", [0, 1], None),
                         ("logic", "XOR", [1, 2], None)], [2.0, 0.0, 0.0], [])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert np.allclose(ref.u, [1.0, 0.0, 1.0], atol=1e-12)
    # PAIR with theta (0.95, 0.54), phi -0.15: on the face v = u0 + u1 - 1,
    # u = clip(theta + phi) = (0.8, 0.39), v = 0.19 (checked: u0 + u1 >= 1).
    spec = GraphSpec([("vars", 2), ("pair", 0, 1)], [0.95, 0.54], [-0.15])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert np.allclose(ref.u, [0.8, 0.39], atol=1e-12) and np.allclose(ref.v, [0.19], atol=1e-12)


# ---------------------------------------------------------------------------
# Distributions of the two kinds that once went wrong, pinned down.


def test_knapsack_distribution_is_refused_with_a_reason():
    # u0 <= 1/2 (cost 2, budget 1); theta 1: SparseMAP u0 = 1/2, a fractional
    # vertex: no mixture of 0/1 configurations gives it.
    spec = GraphSpec([("vars", 1), ("knapsack", [0], None, [2.0], 1.0)], [1.0], [])
    solver = build(spec)
    u, v, info = solve_sparse(solver)
    assert np.allclose(u, [0.5], atol=1e-12)
    with pytest.raises(concord.ConcordError, match="fractional vertices"):
        solver.factor_distribution(0)


def test_pair_distribution_reproduces_its_solution():
    # theta (0.95, 0.54), phi -0.15: u = (0.8, 0.39), v = 0.19 (hand-solved
    # above), a mix of (1,0,0), (0,1,0), (1,1,1). The active set holds three
    # configurations and is offered a fourth, affinely dependent on them in
    # u: the degenerate step must swap it in even at capacity.
    spec = GraphSpec([("vars", 2), ("pair", 0, 1)], [0.95, 0.54], [-0.15])
    factors = reference_factors(spec)
    solver = build(spec)
    u, v, info = solve_sparse(solver)
    assert np.allclose(u, [0.8, 0.39], atol=1e-12)
    check_distribution(solver, 0, factors[0], u, v, 1e-9)


@pytest.mark.parametrize("negated,theta,rounded", [
    # literals' SparseMAP over XOR: the projection of their scores onto the
    # simplex. Scores (1 - 3e-6, 0, 0) give (1 - 2e-6, 1e-6, 1e-6), within
    # the rounding slack (10 tol) of the vertex (1, 0, 0).
    (None, [1 - 3e-6, 0.0, 0.0], [1.0, 0.0, 0.0]),
    # u0 negated: the literal 1 - u0 has score 1 - theta0 = 1 - 3e-6, so
    # the same literals, and u0 = 2e-6 rounds to 0.
    ([True, False, False], [3e-6, 0.0, 0.0], [0.0, 0.0, 0.0]),
])
def test_a_rounded_integral_solution_is_its_own_distribution(negated, theta, rounded):
    spec = GraphSpec([("vars", 3), ("logic", "XOR", [0, 1, 2], negated)], theta, [])
    ref = solve_reference(LocalQP(spec, reference_factors(spec), spec.theta, spec.phi))
    assert 0 < np.abs(ref.u - rounded).max() < 1e-5
    solver = build(spec)
    u, v, info = solve_sparse(solver)
    assert info.status == "integral" and np.array_equal(u, rounded)
    weights, configurations, _ = solver.factor_distribution(0)
    assert np.array_equal(weights, [1.0])
    assert np.array_equal(configurations, [rounded])
