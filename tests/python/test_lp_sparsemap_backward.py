"""LP-SparseMAP backward pass (concord_solver_backward) checked two independent ways.

1. Finite differences of the forward pass: on 220 random graphs (the
   generator of test_lp_sparsemap_forward.py), for two random directions d
   each in (theta, phi) (a quarter moving theta only, a quarter phi only:
   PAIR and DENSE scores), concord_solver_backward(d) must equal the central
   difference ((u, v)(s + h d) - (u, v)(s - h d)) / 2h, h = 1e-4, within
   1e-5, with the forward pass solved to tol 1e-12. concord_solver_backward documents that the
   Jacobian is symmetric, so the call with (du, dv) = d is the JVP; the VJP
   is checked too, as g . (J d) from the differences against
   (concord_solver_backward(g)) . d. The solution map is piecewise affine, so the
   central difference is exact unless a piece boundary lies within h: such
   points (ties) are detected by comparing the two one-sided differences and
   skipped (counted).
2. The Jacobian from the KKT system: on 100 graphs of <= 8 variables (half
   of them with small continuous scores, so that most solutions are
   fractional), the full Jacobian of (u, v) w.r.t. (theta, phi), built row
   by row from concord_solver_backward on unit vectors, equals the derivative of
   the reference QP's KKT system with its active constraints as equalities
   (the polished reference of the forward test; Solution.differentiable_face
   picks the faces) within 1e-6, and both are symmetric. Points without a
   strictly complementary solution have no Jacobian and are skipped
   (counted); where the weights are not unique only the u block w.r.t.
   theta is compared.
Part 2 runs again on 100 graphs with regularization weights in [0.1, 10]
(concord_set_regularization), which the reference puts on the diagonal of
its quadratic term.
Conjugate gradients and the power iteration (settings.backward_power, run
to 1e-13) must agree within 1e-6 on every direction of part 1.
Two tests pin down a fixed bug: the Jacobian must be exactly zero where the
solution cannot move (a vertex with tied losing scores; a one-point
polytope), which closed forms got wrong while they left coordinates 1e-16
off a bound and took them as free.
"""

import collections
import os
import sys
import time

import numpy as np
import pytest
from concord import _core

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_specs import GraphSpec, build, solve_sparse  # noqa: E402
from test_lp_sparsemap_forward import (LocalQP, feasible_spec, reference_factors,  # noqa: E402
                                       reference_jacobian, solve_reference, tight_settings)

FORWARD = tight_settings(tol=1e-12)


def _solve(solver, theta, phi):
    solver.set_scores(theta, phi)
    u, v, info = solve_sparse(solver, FORWARD)
    assert info.converged
    return np.concatenate([u, v])


def _backward(solver, vec, settings=None):
    n, n_add = solver.graph.num_variables, solver.graph.num_additionals
    dtheta, dphi, binfo = solver.backward(vec[:n], vec[n:] if n_add else None,
                                          settings or _core.Settings(backward_tol=1e-13))
    return np.concatenate([dtheta, dphi]), binfo


def test_backward_equals_finite_differences_of_the_forward_pass():
    rng = np.random.default_rng(314)
    h = 1e-4
    checked = skipped = directions = 0
    worst_jvp = worst_vjp = worst_power = 0.0
    power_iters, cg_iters = [], []
    t0 = time.time()
    while checked < 220:
        spec, factors, qp = feasible_spec(rng)
        n, n_add = spec.sizes()
        solver = build(spec)
        s0 = np.concatenate([spec.theta, spec.phi])
        ok = True
        results = []
        for _ in range(2):
            d = rng.normal(size=n + n_add)
            pick = rng.random()
            if pick < 0.25:  # variable scores only
                d[n:] = 0.0
            elif pick < 0.5 and n_add:  # additional scores only
                d[:n] = 0.0
            g = rng.normal(size=n + n_add)
            plus = _solve(solver, s0[:n] + h * d[:n], s0[n:] + h * d[n:])
            minus = _solve(solver, s0[:n] - h * d[:n], s0[n:] - h * d[n:])
            base = _solve(solver, s0[:n], s0[n:])
            forward, backward_ = (plus - base) / h, (base - minus) / h
            if np.abs(forward - backward_).max() > 1e-6:
                ok = False  # a piece boundary within h: no derivative to compare
                break
            central = (plus - minus) / (2 * h)
            # the graph now holds the solve at s0: differentiate there
            jvp, binfo = _backward(solver, d)
            vjp, _ = _backward(solver, g)
            cg_iters.append(binfo.iterations)
            power, pinfo = _backward(solver, d, _core.Settings(
                backward_power=True, backward_tol=1e-13, backward_max_iter=200000))
            power_iters.append(pinfo.iterations)
            results.append((d, g, central, jvp, vjp, power))
        if not ok:
            skipped += 1
            continue
        for d, g, central, jvp, vjp, power in results:
            err_jvp = np.abs(jvp - central).max()
            err_vjp = abs(g @ central - vjp @ d) / max(1.0, np.abs(g).sum())
            err_power = np.abs(power - jvp).max()
            if err_jvp > 1e-5 or err_vjp > 1e-5 or err_power > 1e-6:
                pytest.fail("backward disagrees: |JVP - FD| %.3g, VJP %.3g, |power - CG| %.3g"
                            "\ndirection %s\nFD %s\nJVP %s\npower %s\n%s" % (
                                err_jvp, err_vjp, err_power, d.tolist(), central.tolist(),
                                jvp.tolist(), power.tolist(), spec.describe()))
            worst_jvp = max(worst_jvp, err_jvp)
            worst_vjp = max(worst_vjp, err_vjp)
            worst_power = max(worst_power, err_power)
            directions += 1
        checked += 1
    print("\nbackward vs finite differences: %d graphs (%d directions) checked, %d skipped "
          "(ties within h=%g); max |JVP - FD| %.2e, max VJP error %.2e, max |power - CG| %.2e; "
          "CG iterations median %d max %d, power iterations median %d max %d; %.1fs" % (
              checked, directions, skipped, h, worst_jvp, worst_vjp, worst_power,
              int(np.median(cg_iters)), max(cg_iters), int(np.median(power_iters)),
              max(power_iters), time.time() - t0))
    assert skipped < checked  # the tie test must not swallow everything


def _check_full_jacobians(rng, count, weighted):
    """Part 2 of the module's description on `count` graphs (weighted: with
    regularization weights, which the reference puts on P's diagonal)."""
    checked = skipped = u_only = 0
    worst = worst_sym = 0.0
    ranks = []
    t0 = time.time()
    while checked < count:
        spec, factors, qp = feasible_spec(rng, weighted=weighted, max_vars=8)
        n, n_add = spec.sizes()
        if checked % 2:  # small continuous scores: mostly fractional solutions
            scale = float(rng.choice([0.3, 1.0]))
            spec.theta, spec.phi = rng.normal(size=n) * scale, rng.normal(size=n_add) * scale
            qp.set_scores(spec.theta, spec.phi)
        ref = solve_reference(qp)
        assert ref.polished, spec.describe()
        # strict complementarity, relative to the score scale: else no Jacobian
        active = ref.differentiable_face(1e-6 * max(1.0, np.abs(qp.q).max()))
        if active is None:
            skipped += 1
            continue
        J_ref, unique_v = reference_jacobian(ref, active)
        ranks.append(np.linalg.matrix_rank(J_ref[:n, :n], 1e-9))
        solver = build(spec)
        u, v, info = solve_sparse(solver, FORWARD)
        assert np.abs(u - ref.u).max() <= 1e-8
        rows = []
        for k in range(n + n_add):
            e = np.zeros(n + n_add)
            e[k] = 1.0
            rows.append(_backward(solver, e)[0])  # e_k^T J
        J = np.array(rows)
        # without unique weights v (hence the v rows and phi columns) is not
        # differentiable: compare the u block w.r.t. theta only
        block = slice(None) if unique_v else slice(0, n)
        if not unique_v:
            u_only += 1
        err = np.abs(J[block, block] - J_ref[block, block]).max(initial=0)
        sym = np.abs(J[block, block] - J[block, block].T).max(initial=0)
        sym_ref = np.abs(J_ref[block, block] - J_ref[block, block].T).max(initial=0)
        if err > 1e-6 or sym > 1e-6 or sym_ref > 1e-9:
            pytest.fail("Jacobian off by %.3g (asymmetry %.3g, reference %.3g)\nconcord\n%s\n"
                        "reference\n%s\n%s" % (err, sym, sym_ref, np.array2string(J, precision=4),
                                               np.array2string(J_ref, precision=4),
                                               spec.describe()))
        worst, worst_sym = max(worst, err), max(worst_sym, sym)
        checked += 1
    print("\nfull Jacobian vs KKT%s: %d graphs checked (%d u-block only: weights not "
          "unique), %d skipped (no strict complementarity); max error %.2e, max asymmetry "
          "%.2e; %.1fs" % (" (regularization weights)" if weighted else "", checked, u_only,
                            skipped, worst, worst_sym, time.time() - t0))
    print("  rank of du/dtheta: %s (0: integral solutions)" % (
        dict(sorted(collections.Counter(ranks).items()))))
    assert sum(r > 0 for r in ranks) >= checked // 2  # not only integral (J = 0) cases


def test_full_jacobian_equals_the_kkt_jacobian_and_is_symmetric():
    _check_full_jacobians(np.random.default_rng(2718), 100, weighted=False)


def test_full_jacobian_with_regularization_weights_equals_the_kkt_jacobian():
    """As above with regularization weights in [0.1, 10]: the Jacobian is
    then no longer a projection, and stays symmetric."""
    _check_full_jacobians(np.random.default_rng(1202), 100, weighted=True)


def test_kkt_jacobian_on_a_hand_solved_case():
    """The reference Jacobian itself: XOR over three variables with theta
    (1, 0.5, -1) is sparsemax with support {0, 1}; its Jacobian is
    I - 11^T/2 on the support, 0 elsewhere."""
    spec = GraphSpec([("vars", 3), ("logic", "XOR", [0, 1, 2], None)], [1.0, 0.5, -1.0], [])
    qp = LocalQP(spec, reference_factors(spec), spec.theta, spec.phi)
    ref = solve_reference(qp)
    J, unique_v = reference_jacobian(ref, ref.differentiable_face(1e-9))
    expect = np.array([[0.5, -0.5, 0], [-0.5, 0.5, 0], [0, 0, 0]])
    assert np.allclose(J, expect, atol=1e-12)
    solver = build(spec)
    solver.solve_sparse()
    rows = [_backward(solver, np.eye(3)[k])[0] for k in range(3)]
    assert np.allclose(np.array(rows), expect, atol=1e-12)


def test_backward_is_zero_at_a_vertex_with_tied_losing_scores():
    # XOR alone: sparsemax of theta. theta_0 beats the three tied others by
    # 1.6 > 1, so u = (1, 0, 0, 0) in a whole neighbourhood and the Jacobian
    # is 0 (finite differences: 0). The closed form's multiplier lands on
    # the tied breakpoint; u_1..u_3 must come out exactly 0, not ~1e-16
    # that the face derivative would take as free (I - 11^T/3 on them).
    theta = [0.60808410749890018] + [-0.99781547216845223] * 3
    spec = GraphSpec([("vars", 4), ("logic", "XOR", [0, 1, 2, 3], None)], theta, [])
    solver = build(spec)
    u, v, info = solve_sparse(solver)
    assert np.array_equal(u, [1.0, 0.0, 0.0, 0.0])
    for k in range(4):
        shifted = np.array(theta)
        shifted[k] += 1e-3
        solver.set_scores(shifted)
        assert np.array_equal(solve_sparse(solver)[0], u)  # locally constant
    solver.set_scores(np.array(theta))
    solver.solve_sparse()
    J = np.array([_backward(solver, np.eye(4)[k])[0] for k in range(4)])
    assert np.abs(J).max() == 0.0, J


def test_backward_is_zero_when_the_polytope_is_a_point():
    # An exact BUDGET of 4 over 4 variables allows only u = (1, 1, 1, 1): the
    # solution cannot move and the Jacobian is 0. Shared with an OR, the
    # factor's weights are d = 1/2 + eta and its closed form returns three of
    # the coordinates as 1 - 1e-16, which its face derivative treats as free.
    theta = [-0.1321048632913019] * 3 + [0.6404226504432821]
    spec = GraphSpec([("vars", 4), ("budget", [0, 1, 2, 3], None, 4, True),
                         ("logic", "OR", [0, 1, 2, 3], None)], theta, [])
    solver = build(spec)
    u, v, info = solve_sparse(solver, tight_settings(tol=1e-10))
    assert np.array_equal(u, [1.0, 1.0, 1.0, 1.0])
    J = np.array([_backward(solver, np.eye(4)[k])[0] for k in range(4)])
    assert np.abs(J).max() == 0.0, J


def test_a_backward_pass_stopped_at_its_cap_warns():
    """A 6 x 6 grid of PAIR factors at random scores needs tens of CG
    iterations: capped at 1, the products are inexact, and Solver.backward
    says so (the C call returns them with CONCORD_ENOTCONVERGED)."""
    rng = np.random.default_rng(5)
    n = 6
    pairs = [("pair", i * n + j, i * n + j + 1) for i in range(n) for j in range(n - 1)]
    pairs += [("pair", i * n + j, (i + 1) * n + j) for i in range(n - 1) for j in range(n)]
    solver = build(GraphSpec([("vars", n * n)] + pairs, rng.normal(size=n * n),
                             rng.normal(size=len(pairs))))
    solve_sparse(solver, tight_settings(tol=1e-10))
    direction = rng.normal(size=n * n)
    with pytest.warns(RuntimeWarning, match="conjugate gradients stopped at 1 iterations"):
        _, _, info = solver.backward(direction, settings=dict(backward_max_iter=1))
    assert not info.converged and info.iterations == 1
    _, _, info = solver.backward(direction)
    assert info.converged
