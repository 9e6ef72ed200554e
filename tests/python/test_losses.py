"""concord_solver_loss_sparsemap and concord_solver_loss_hinge against their definitions.

For random graphs (the generator of test_lp_sparsemap_forward.py) and a gold
structure drawn among the graph's feasible 0/1 assignments (enumerated here
from the factor semantics):
  * with large-margin scores (the gold structure wins by a margin no
    additional score can overturn, also after the Hamming cost augmentation)
    both losses are exactly 0.0, whether the gold additional outputs are
    given or left to concord;
  * with random scores, the LP-SparseMAP loss equals its definition
    F(theta, phi) - [theta.u* + phi.v* - |u*|^2/2], F from the polished QP
    reference, within 1e-6, and is at least |u - u*|^2/2 (it is a
    Fenchel-Young loss of a 1-strongly-convex regularizer), so it is positive
    whenever the prediction differs from the gold; the hinge equals its
    definition max over the local polytope of the cost-augmented scores
    (theta + 1 - 2u*).u + phi.v, an LP solved here by scipy's HiGHS, minus the
    same at the gold structure, within 1e-6 of the scores' scale;
  * with regularization weights w, the LP-SparseMAP loss is the weighted
    definition F - [theta.u* + phi.v* - sum_i w_i u*_i^2/2];
  * the gradients both losses return equal central finite differences of the
    loss along random directions in (theta, phi) within 1e-5, away from ties
    (points where the one-sided differences disagree are skipped, counted).
"""

import itertools
import os
import sys
import time

import numpy as np
import pytest
from scipy.optimize import linprog

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_specs import build, loss_of  # noqa: E402
from test_lp_sparsemap_forward import (feasible_spec, solve_reference,  # noqa: E402
                                       tight_settings)

SPARSE = tight_settings(tol=1e-11)
MAP = tight_settings(tol=1e-10)


def feasible_assignments(spec, factors):
    """Every 0/1 assignment every factor allows, with its additional outputs."""
    n, n_add = spec.sizes()
    X = np.array(list(itertools.product((0, 1), repeat=n)), dtype=float).reshape(-1, n)
    ok = np.ones(len(X), dtype=bool)
    V = np.zeros((len(X), n_add))
    for f in factors:
        sub = X[:, f.vars]
        if f.U is not None:
            # the configuration each assignment takes in this factor, if allowed
            match = (sub[:, None, :] == f.U[None, :, :]).all(axis=2)
            ok &= match.any(axis=1)
            if f.n_add:
                idx = match.argmax(axis=1)
                V[:, f.add_begin:f.add_begin + f.n_add] = f.V[idx]
        else:
            coef, rhs = f.hrep[0], f.hrep[1]
            ok &= sub @ coef <= rhs + 1e-12
    return X[ok], V[ok]


def draw_gold(rng, weighted=False):
    """A feasible graph with a feasible 0/1 gold structure (weighted: with
    regularization weights, see feasible_spec)."""
    while True:
        spec, factors, qp = feasible_spec(rng, weighted=weighted, max_vars=10)
        X, V = feasible_assignments(spec, factors)
        if len(X):
            k = int(rng.integers(len(X)))
            return spec, factors, qp, X[k], V[k]


def hinge_reference(qp, theta, phi, u_gold, v_gold):
    """max over the local polytope of (theta + 1 - 2u*).u + phi.v, by HiGHS,
    minus the same at the gold structure."""
    aug = theta + 1.0 - 2.0 * u_gold
    qp.set_scores(aug, phi)
    res = linprog(qp.q, A_ub=qp.G, b_ub=qp.h, A_eq=qp.A_full, b_eq=qp.b_full,
                  bounds=[(None, None)] * qp.nx, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10,
                           "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return -res.fun - (aug @ u_gold + phi @ v_gold)


def test_losses_are_zero_at_the_gold_structure_with_large_margins():
    rng = np.random.default_rng(99)
    checked = 0
    for _ in range(150):
        spec, factors, qp, u_gold, v_gold = draw_gold(rng)
        n, n_add = spec.sizes()
        margin = 10.0 + 10.0 * rng.random(n)
        theta = (2.0 * u_gold - 1.0) * margin
        phi = rng.uniform(-0.5, 0.5, size=n_add)
        spec.theta, spec.phi = theta, phi
        solver = build(spec)
        for which, settings in (("sparsemap", None), ("hinge", None), ("sparsemap", SPARSE),
                                ("hinge", MAP)):
            for vg in (v_gold, None):
                loss, dtheta, dphi, info = loss_of(solver, which, u_gold, vg, settings)
                if loss != 0.0 or np.any(dtheta != 0.0) or np.any(dphi != 0.0):
                    pytest.fail("%s loss %r (gradient %s %s) at the gold structure %s\n%s" % (
                        which, loss, dtheta.tolist(), dphi.tolist(), u_gold.tolist(),
                        spec.describe()))
        checked += 1
    print("\nlosses at the gold structure (large margins): %d graphs x 2 losses x 2 settings "
          "x (v* given, v* by concord): all exactly 0" % checked)


def test_losses_equal_their_definitions_and_are_positive_off_gold():
    rng = np.random.default_rng(100)
    checked = positive_sparse = positive_hinge = 0
    worst_sparse = worst_hinge = 0.0
    t0 = time.time()
    while checked < 150:
        spec, factors, qp, u_gold, v_gold = draw_gold(rng)
        theta, phi = spec.theta, spec.phi
        qp.set_scores(theta, phi)
        ref = solve_reference(qp)
        assert ref.polished, spec.describe()
        gold_value = theta @ u_gold + phi @ v_gold - 0.5 * u_gold @ u_gold
        ref_sparse = ref.value - gold_value
        ref_hinge = hinge_reference(qp, theta, phi, u_gold, v_gold)
        scale = 1.0 + np.abs(theta).sum() + np.abs(phi).sum()
        solver = build(spec)
        ls, gs_t, gs_p, _ = loss_of(solver, "sparsemap", u_gold, v_gold, SPARSE)
        u_hat = solver.variables
        lh, gh_t, gh_p, _ = loss_of(solver, "hinge", u_gold, v_gold, MAP)
        err_s = abs(ls - ref_sparse)
        err_h = abs(lh - ref_hinge) / scale
        fy_bound = 0.5 * np.sum((u_hat - u_gold) ** 2)
        if err_s > 1e-6 or err_h > 1e-6 or ls < fy_bound - 1e-7 or lh < 0.0:
            pytest.fail("losses: sparsemap %r (reference %r, >= %r), hinge %r (reference %r)\n"
                        "gold %s\n%s" % (ls, ref_sparse, fy_bound, lh, ref_hinge,
                                         u_gold.tolist(), spec.describe()))
        # its gradient w.r.t. theta is u - u* (w.r.t. phi, v - v*: checked by
        # finite differences below, v need not be unique here)
        assert np.abs(gs_t - (ref.u - u_gold)).max() <= 1e-6
        if np.abs(ref.u - u_gold).max() > 1e-6:
            assert ls > 0.0
            positive_sparse += 1
        if ref_hinge > 1e-6 * scale:
            assert lh > 0.0
            positive_hinge += 1
        worst_sparse, worst_hinge = max(worst_sparse, err_s), max(worst_hinge, err_h)
        checked += 1
    print("\nloss values: %d graphs; LP-SparseMAP max error %.2e (positive in %d), hinge max "
          "relative error %.2e (positive in %d); %.1fs" % (
              checked, worst_sparse, positive_sparse, worst_hinge, positive_hinge,
              time.time() - t0))
    assert positive_sparse > checked // 2 and positive_hinge > checked // 4


def test_the_lp_sparsemap_loss_with_regularization_weights():
    """With weights w (in [0.1, 10]) the loss is F - [theta.u* + phi.v* -
    1/2 sum_i w_i u*_i^2], F the weighted objective's maximum from the
    reference, within 1e-6, at least 1/2 sum_i w_i (u_i - u*_i)^2, with
    gradient u - u* w.r.t. theta."""
    rng = np.random.default_rng(1203)
    for _ in range(60):
        spec, factors, qp, u_gold, v_gold = draw_gold(rng, weighted=True)
        w = spec.weights
        ref = solve_reference(qp)
        assert ref.polished, spec.describe()
        gold_value = spec.theta @ u_gold + spec.phi @ v_gold - 0.5 * (w * u_gold) @ u_gold
        expect = ref.value - gold_value
        loss, dtheta, _, _ = loss_of(build(spec), "sparsemap", u_gold, v_gold, SPARSE)
        assert abs(loss - expect) <= 1e-6, spec.describe()
        assert loss >= 0.5 * (w * (ref.u - u_gold)) @ (ref.u - u_gold) - 1e-7
        assert np.abs(dtheta - (ref.u - u_gold)).max() <= 1e-6


@pytest.mark.parametrize("which,h,settings", [("sparsemap", 1e-4, SPARSE), ("hinge", 1e-3, MAP)])
def test_loss_gradients_equal_finite_differences(which, h, settings):
    rng = np.random.default_rng(101 if which == "sparsemap" else 102)
    checked = skipped = 0
    worst = 0.0
    t0 = time.time()
    while checked < 100:
        spec, factors, qp, u_gold, v_gold = draw_gold(rng)
        n, n_add = spec.sizes()
        s0 = np.concatenate([spec.theta, spec.phi])
        d = rng.normal(size=n + n_add)
        solver = build(spec)

        def loss_at(s):
            solver.set_scores(s[:n], s[n:])
            loss, gt, gp, _ = loss_of(solver, which, u_gold, v_gold, settings)
            return loss, np.concatenate([gt, gp])
        plus, g_plus = loss_at(s0 + h * d)
        minus, g_minus = loss_at(s0 - h * d)
        base, grad = loss_at(s0)
        # Away from kinks the LP-SparseMAP loss is quadratic along d (its
        # gradient affine) and the hinge linear (its gradient constant), and
        # the central difference is then exact: a gradient that does not
        # follow that within +-h marks a kink, skipped.
        if which == "sparsemap":
            kink = np.abs((g_plus - grad) - (grad - g_minus)).max() > 1e-6
        else:
            kink = max(np.abs(g_plus - grad).max(), np.abs(g_minus - grad).max()) > 1e-6
        if kink:
            skipped += 1
            continue
        fd = (plus - minus) / (2 * h)
        err = abs(fd - grad @ d)
        # Each loss value is exact only to the solver's accuracy, tol times
        # the scores' 1-norm (its stopping rule), which the difference
        # quotient divides by h.
        value_error = settings.tol * (np.abs(spec.theta).sum() + np.abs(spec.phi).sum())
        if err > 1e-5 + value_error / h:
            pytest.fail("%s loss gradient . d %r, finite difference %r\ndirection %s\n%s" % (
                which, grad @ d, fd, d.tolist(), spec.describe()))
        worst = max(worst, err)
        checked += 1
    print("\n%s loss gradient vs finite differences (h=%g): %d checked, %d skipped (kinks), "
          "max error %.2e; %.1fs" % (which, h, checked, skipped, worst, time.time() - t0))


def test_a_fractional_gold_on_a_graph_without_additional_outputs():
    """v_gold given empty, or None, is a gold structure: a graph without
    additional outputs has no best ones to find (None once asked the
    factors for theirs at the gold rounded, and the XOR refused it): one
    XOR, whose LP-SparseMAP solution is sparsemax(theta) in closed form."""
    from concord import _core
    theta = np.array([1.0, 0.5, -1.0])
    graph = _core.Graph()
    graph.add_variables(3, theta)
    graph.add_logic("XOR", [0, 1, 2])
    solver = _core.Solver(graph)
    u_gold = np.array([0.5, 0.5, 0.0])
    loss, dtheta, dphi, _ = solver.loss_sparsemap(u_gold, np.zeros(0), SPARSE)
    # sparsemax: the threshold tau with (1 - tau) + (0.5 - tau) = 1
    u = np.maximum(theta - 0.25, 0.0)
    expected = (theta @ u - u @ u / 2) - (theta @ u_gold - u_gold @ u_gold / 2)
    assert loss == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(dtheta, u - u_gold, atol=1e-9)
    assert dphi.shape == (0,)
    assert solver.loss_sparsemap(u_gold, None, SPARSE)[0] == loss


def qp_maximum(theta, weights, A_ub, b_ub, A_eq=None, b_eq=None):
    """max theta.z - sum_i weights_i z_i^2/2 over {A_ub z <= b_ub, A_eq z =
    b_eq}, by cvxopt's interior point QP (LDL KKT solver, tolerances
    1e-10)."""
    from cvxopt import matrix, solvers
    equalities = {} if A_eq is None else dict(A=matrix(A_eq), b=matrix(b_eq))
    result = solvers.coneqp(matrix(np.diag(weights)), matrix(-theta), G=matrix(A_ub),
                            h=matrix(b_ub), kktsolver="ldl", options={
                                "show_progress": False, "abstol": 1e-10, "reltol": 1e-10,
                                "feastol": 1e-10, "maxiters": 200}, **equalities)
    assert result["status"] == "optimal"
    z = np.array(result["x"]).reshape(-1)
    return theta @ z - weights @ z ** 2 / 2


def test_fractional_golds_of_a_factor_graph_mixtures_of_assignments():
    """FactorGraph.loss of a mixture of two assignments of 4 rows to 4
    columns (Xor rows, AtMostOne columns: no additional outputs) is its
    definition, the maximum from cvxopt's QP and the hinge's from HiGHS's
    LP, without gold_additionals; a graph with additional outputs (a Pair)
    needs them given for a fractional gold (once scored with the Pair's
    output at the gold rounded: 0 at (0.5, 0.5), where the best is 0.5) and
    then keeps its definition, the QP over the Pair's marginal polytope."""
    import concord
    rng = np.random.default_rng(3)
    theta = rng.normal(size=(4, 4))
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    for i in range(4):
        fg.add(concord.Xor(x[i]))
        fg.add(concord.AtMostOne(x[:, i]))
    gold = 0.5 * np.eye(4) + 0.5 * np.eye(4)[[1, 0, 3, 2]]
    rows = np.kron(np.eye(4), np.ones(4))  # rows[i] @ u: the sum of row i
    cols = np.tile(np.eye(4), 4)           # cols[j] @ u: the sum of column j
    t, g = theta.reshape(-1), gold.reshape(-1)
    # rows sum to 1, columns to at most 1, u >= 0
    expected = qp_maximum(t, np.ones(16), np.vstack([cols, -np.eye(16)]),
                          np.concatenate([np.ones(4), np.zeros(16)]), rows, np.ones(4))
    expected -= t @ g - g @ g / 2
    assert fg.loss({x: gold}, tol=1e-12) == pytest.approx(expected, abs=1e-8)
    aug = t + 1.0 - 2.0 * g
    lp = linprog(-aug, A_ub=cols, b_ub=np.ones(4), A_eq=rows, b_eq=np.ones(4),
                 bounds=[(0, 1)] * 16, method="highs")
    hinge = -lp.fun - aug @ g
    assert fg.loss({x: gold}, kind="hinge", tol=1e-12) == pytest.approx(hinge, abs=1e-8)

    fg = concord.FactorGraph()
    a = fg.variable_from(np.array([0.3, -0.2]))
    pair = fg.add(concord.Pair(a[0], a[1], 1.0))
    half = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match=r"fractional \(variable 0 is 0\.5\)"):
        fg.loss({a: half})
    # (u1, u2, v): v <= u1, v <= u2, v >= u1 + u2 - 1; the QP regularizes u only
    theta3 = np.array([0.3, -0.2, 1.0])
    G = np.array([[-1, 0, 1], [0, -1, 1], [1, 1, -1], [0, 0, -1], [1, 0, 0], [0, 1, 0]],
                 dtype=float)
    h = np.array([0, 0, 1, 0, 1, 1], dtype=float)
    maximum = qp_maximum(theta3, np.array([1.0, 1.0, 0.0]), G, h)
    gold_value = theta3[:2] @ half + 1.0 * 0.5 - half @ half / 2
    assert fg.loss({a: half}, gold_additionals={pair: [0.5]}, tol=1e-12) == pytest.approx(
        maximum - gold_value, abs=1e-6)


def test_gold_additionals_of_another_graphs_factor_are_refused():
    """gold_additionals keyed by a factor of another FactorGraph (or of
    none) is a ValueError: its place among that graph's additional outputs
    was used in this one's, where it is another factor's (here the second
    Pair's, whose gold was then taken from it, with none missing)."""
    import concord

    def two_pairs():
        fg = concord.FactorGraph()
        x = fg.variable_from(np.array([0.3, -0.2, 0.1]))
        return fg, x, fg.add(concord.Pair(x[0], x[1], 1.0)), fg.add(concord.Pair(x[1], x[2], 1.0))

    fg, x, first, _ = two_pairs()
    _, _, _, others = two_pairs()
    gold = {x: np.array([1.0, 1.0, 0.0])}
    for foreign in (others, concord.Pair(x[0], x[2], 1.0)):
        with pytest.raises(ValueError, match="^gold_additionals: Pair.* is not in this "
                                             "FactorGraph$"):
            fg.loss(gold, gold_additionals={first: [1.0], foreign: [0.0]})


@pytest.mark.parametrize("settings", [SPARSE, {}])
def test_a_fractional_gold_outside_the_polytope_is_refused(settings):
    """Both losses are >= 0 for a gold in the local polytope (the maximum
    is at least the value at the gold): one XOR over three variables with
    scores 5, whose polytope is the simplex. The gold (0.5, 0.5, 0.5) sums
    to 1.5: by their definitions its LP-SparseMAP loss is 4.8333 - 7.125
    and its hinge 5 - 7.5, so both are refused, at the tight tolerance and
    the default one (the XOR's own test refuses it first: |u*|^2 = 0.75
    above its best 0.5 at scores u*); the gold (0.5, 0.5, 0), inside, keeps its loss
    (sparsemax of equal scores: u = 1/3 each)."""
    from concord import _core
    theta = np.full(3, 5.0)
    graph = _core.Graph()
    graph.add_variables(3, theta)
    graph.add_logic("XOR", [0, 1, 2])
    solver = _core.Solver(graph)
    outside = np.full(3, 0.5)
    for loss in (solver.loss_sparsemap, solver.loss_hinge):
        with pytest.raises(_core.InvalidArgumentError,
                           match="the gold structure lies outside factor 0 \\(XOR\\)"):
            loss(outside, np.zeros(0), settings)
    inside = np.array([0.5, 0.5, 0.0])
    value, dtheta, _, _ = solver.loss_sparsemap(inside, np.zeros(0), settings)
    u = np.full(3, 1.0 / 3.0)
    expected = (theta @ u - u @ u / 2) - (theta @ inside - inside @ inside / 2)
    assert value == pytest.approx(expected, abs=1e-5)
    np.testing.assert_allclose(dtheta, u - inside, atol=1e-5)
    # hinge: max of (theta + 1 - 2u*).u = (5, 5, 6).u over the simplex,
    # 6, minus theta.u* + sum u*(1 - 2u*) = 5 + 0
    hinge, _, _, _ = solver.loss_hinge(inside, np.zeros(0), settings)
    assert hinge == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("kind", ["sparsemap", "hinge"])
def test_a_gold_on_a_forbidden_output_is_refused(kind):
    """A SEQUENCE of two positions with two states whose transition 1 -> 1
    is forbidden (-inf when built): its configurations are the state pairs
    other than (1, 1). A gold that gives that transition weight lies
    outside the factor's polytope (its score there is -inf), whether its
    additional outputs are left to concord (refused as violating the
    factor) or given (refused too, not scored as if the transition were
    worth 0); the same gold states over allowed transitions keep their
    loss."""
    from concord import _core
    graph = _core.Graph()
    graph.add_variables(4, np.array([0.5, -0.2, 0.3, 0.1]))
    # start (2), transitions (2 x 2, previous state first), stop (2)
    graph.add_sequence([2, 2], [0, 1, 2, 3],
                       np.array([0.1, 0.2, 0.0, 0.3, 0.4, -np.inf, 0.0, 0.1]))
    solver = _core.Solver(graph)
    loss = solver.loss_sparsemap if kind == "sparsemap" else solver.loss_hinge
    u_gold = np.array([0.0, 1.0, 0.0, 1.0])  # states (1, 1)
    v_gold = np.zeros(8)
    v_gold[[1, 2 + 3, 6 + 1]] = 1.0  # start -> 1, 1 -> 1, 1 -> stop
    with pytest.raises(_core.InvalidArgumentError, match="violates factor 0"):
        loss(u_gold, None)
    with pytest.raises(_core.InvalidArgumentError, match="forbids that output"):
        loss(u_gold, v_gold)
    half = np.array([0.0, 1.0, 0.5, 0.5])  # a mixture of (1, 0) and (1, 1)
    v_half = np.zeros(8)
    v_half[[1, 2 + 2, 2 + 3, 6 + 0, 6 + 1]] = [1.0, 0.5, 0.5, 0.5, 0.5]
    with pytest.raises(_core.InvalidArgumentError, match="forbids that output"):
        loss(half, v_half)
    allowed = np.array([0.0, 1.0, 1.0, 0.0])  # states (1, 0)
    v_allowed = np.zeros(8)
    v_allowed[[1, 2 + 2, 6 + 0]] = 1.0
    given, _, _, _ = loss(allowed, v_allowed)
    derived, _, _, _ = loss(allowed, None)
    assert given == derived >= 0.0
