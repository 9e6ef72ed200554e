"""concord.lpsmap.TorchFactorGraph: values of the scores' dtype, gradients
equal to finite differences (torch.autograd.gradcheck) w.r.t. variable
and additional scores, solve_map against brute force, and a second
derivative refused."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from concord.lpsmap import Budget, DepTree, Or, Pair, Sequence, TorchFactorGraph, Xor  # noqa: E402
from test_lpsmap_api import assignments, dependency_trees  # noqa: E402

TIGHT = dict(max_iter=5000, tol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_keep_the_scores_dtype(dtype):
    fg = TorchFactorGraph()
    u = fg.variable_from(torch.randn(5, dtype=dtype))
    fg.solve()
    assert u.value.dtype == dtype and u[1:3].value.dtype == dtype


def test_integer_and_mixed_scores_give_floating_values_unchanged():
    fg = TorchFactorGraph()
    u = fg.variable_from(torch.tensor([1, 1]))
    fg.add(Xor(u))
    fg.solve()
    assert u.value.dtype == torch.get_default_dtype() and u.value.tolist() == [0.5, 0.5]
    # float32 then float64: 1e300 is a finite float64 score
    fg = TorchFactorGraph()
    a = fg.variable_from(torch.tensor([0.5]))
    b = fg.variable_from(torch.tensor([1e300, 0.0], dtype=torch.float64))
    fg.add(Xor(a))
    fg.add(Xor(b))
    fg.solve_map()
    assert b.value.dtype == torch.float64 and b.value.tolist() == [1.0, 0.0]
    fg = TorchFactorGraph()
    u = fg.variable_from(torch.tensor([1.0 + 1.0j, 2.0]))
    fg.add(Xor(u))
    with pytest.raises(TypeError, match="real numbers"):
        fg.solve()


def test_numpy_scores_are_constants_beside_tensor_ones():
    """NumPy scores in a TorchFactorGraph act as constant tensors: the same
    values, and the same gradient w.r.t. the tensor scores, as with those
    scores given as tensors."""
    rng = np.random.default_rng(5)
    theta, pair_scores = rng.normal(size=6), rng.normal(size=5)
    results = []
    for wrap in (np.asarray, torch.tensor):
        leaf = torch.tensor(theta, requires_grad=True)
        fg = TorchFactorGraph()
        x = fg.variable_from(leaf)
        y = fg.variable_from(wrap(np.array([0.3, -0.1])))
        fg.add(Pair(x[:-1], x[1:], wrap(pair_scores)))
        fg.add(Xor(y))
        fg.solve(**TIGHT)
        (x.value * torch.arange(6.0, dtype=torch.float64)).sum().backward()
        results.append((x.value.detach(), y.value, leaf.grad))
    for got, expected in zip(*results):
        assert torch.allclose(got, expected, atol=1e-12)


def test_a_sequence_of_one_position_is_differentiable():
    # no transitions: the factor is one XOR, sparsemax with Jacobian
    # I - 1 1^T / 3 on its full support here
    theta = torch.tensor([[0.2, 0.9, 0.1]], dtype=torch.float64, requires_grad=True)
    fg = TorchFactorGraph()
    u = fg.variable_from(theta)
    fg.add(Sequence(u, torch.zeros(0, 3, 3, dtype=torch.float64, requires_grad=True)))
    fg.solve(**TIGHT)
    assert torch.allclose(u.value, theta - (theta.sum() - 1) / 3)
    (u.value * torch.tensor([[1.0, 2.0, 6.0]], dtype=torch.float64)).sum().backward()
    assert theta.grad[0].tolist() == pytest.approx([-2.0, -1.0, 3.0], abs=1e-8)


def test_gradients_of_a_grid_of_xors_equal_finite_differences():
    d = 3

    def f(x, direction):
        fg = TorchFactorGraph()
        u = fg.variable_from(x)
        for i in range(d):
            fg.add(Xor(u[i, :]))
            fg.add(Xor(u[:, i]))
        fg.solve(**TIGHT)
        return (u.value * direction).sum()

    torch.manual_seed(30)
    for _ in range(3):
        x = torch.randn(d, d, dtype=torch.double, requires_grad=True)
        direction = torch.randn(d, d, dtype=torch.double)
        assert torch.autograd.gradcheck(f, (x, direction / direction.norm()), atol=1e-4)


def test_variables_in_no_factor_have_their_gradient():
    """A variable that no factor holds takes LP-SparseMAP's clip(score, 0,
    1), of derivative 1 inside (0, 1) and 0 outside (lp-sparsemap's
    backward gives such variables 0 everywhere); beside them the gradients
    equal finite differences (gradcheck), in a graph with an OR over one
    column and a PAIR between two rows."""
    scores = torch.tensor([0.3, 1.7, -0.4, 0.6], dtype=torch.double, requires_grad=True)
    fg = TorchFactorGraph()
    u = fg.variable_from(scores)
    fg.add(Xor(u[:2]))
    fg.solve(**TIGHT)
    assert torch.allclose(u.value[2:], torch.tensor([0.0, 0.6], dtype=torch.double))
    u.value[3].backward()
    assert scores.grad.tolist() == [0.0, 0.0, 0.0, 1.0]

    def f(x, pair_scores):
        fg = TorchFactorGraph()
        v = fg.variable_from(x)
        fg.add(Or(v[:, 1]))
        fg.add(Pair(v[0], v[1], pair_scores))
        fg.solve(**TIGHT)
        return (v.value * torch.arange(1.0, 13.0, dtype=torch.double).reshape(3, 4)).sum()

    rng = np.random.RandomState(9)
    x = torch.tensor(rng.rand(3, 4) * 0.8 + 0.1, requires_grad=True)  # inside (0, 1)
    pair_scores = torch.tensor(rng.randn(4) * 0.3, requires_grad=True)
    assert torch.autograd.gradcheck(f, (x, pair_scores), atol=1e-4)
    f(x, pair_scores).backward()
    assert x.grad[2, 0] == 9.0 and x.grad[2, 3] == 12.0  # free: the direction itself


def pair_and_sequence(x, t, transitions):
    """The values of a Pair between the first two rows of x and a Sequence
    over its last two rows (additional scores reached through slices)."""
    fg = TorchFactorGraph()
    u = fg.variable_from(x)
    fg.add(Pair(u[0, :1], u[1, :1], t))
    fg.add(Sequence(u[1:], transitions))
    fg.solve(**TIGHT)
    return u.value


def test_gradients_reach_additional_scores_through_slices():
    def f(x, t, transitions):
        values = pair_and_sequence(x, t, transitions)
        return (values[1:] * torch.arange(4.0, dtype=x.dtype).reshape(2, 2)).sum()

    torch.manual_seed(3)
    x = torch.randn(3, 2, dtype=torch.double, requires_grad=True)
    t = torch.randn(1, dtype=torch.double, requires_grad=True)
    transitions = torch.randn(1, 2, 2, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(f, (x, t, transitions), atol=1e-4)


def test_forward_mode_tangents_equal_central_differences():
    """torch.autograd.forward_ad through solve: the values' tangent along
    tangents of the variable scores and of a Pair's and a Sequence's
    additional scores (all of them, then the variables' alone: the others
    have no tangent) equals central differences; and for a variable
    repeated in an XOR, the Jacobian computed in the test above."""
    from torch.autograd import forward_ad
    f = pair_and_sequence
    generator = torch.Generator().manual_seed(3)
    scores = [torch.randn(shape, generator=generator, dtype=torch.double)
              for shape in ((3, 2), (1,), (1, 2, 2))]
    directions = [torch.randn(s.shape, generator=generator, dtype=torch.double)
                  for s in scores]
    eps = 1e-6
    for moved in (3, 1):
        tangents = directions[:moved] + [torch.zeros_like(s) for s in scores[moved:]]
        differences = (f(*(s + eps * d for s, d in zip(scores, tangents)))
                       - f(*(s - eps * d for s, d in zip(scores, tangents)))) / (2 * eps)
        assert differences.abs().max() > 0.1  # a tangent of zero would be wrong here
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(s, d) for s, d in zip(scores[:moved], tangents)]
            tangent = forward_ad.unpack_dual(f(*duals, *scores[moved:])).tangent
        assert torch.allclose(tangent, differences, rtol=0, atol=1e-6), moved

    theta = torch.tensor([0.8, 0.3], dtype=torch.float64)
    with forward_ad.dual_level():
        fg = TorchFactorGraph()
        u = fg.variable_from(forward_ad.make_dual(theta, torch.tensor([1.0, -0.5],
                                                                      dtype=torch.float64)))
        fg.add(Xor(u[[0, 0, 1]]))
        fg.solve(**TIGHT)
        tangent = forward_ad.unpack_dual(u.value).tangent
    assert tangent.tolist() == pytest.approx([0.4, -0.8], abs=1e-8)


@pytest.mark.parametrize("projective", [False, True])
def test_solve_map_of_a_tree_is_the_best_tree(projective):
    torch.manual_seed(1)
    trees = dependency_trees(3, projective)
    for autodetect in (True, False):
        x = torch.randn(3, 3, dtype=torch.double)
        fg = TorchFactorGraph()
        u = fg.variable_from(x)
        fg.add(DepTree(u, packed=True, projective=projective))
        fg.solve_map(autodetect_acyclic=autodetect, max_iter=1000)
        best = max(trees, key=lambda tree: float((tree * x.numpy()).sum()))
        np.testing.assert_array_equal(u.value.numpy(), best)


def test_solve_map_with_pairs():
    torch.manual_seed(2)
    x, t = torch.randn(4, dtype=torch.double), torch.randn(2, dtype=torch.double)
    fg = TorchFactorGraph()
    u = fg.variable_from(x)
    fg.add(Pair(u[0:1], u[1:2], t[0:1]))
    fg.add(Pair(u[2:3], u[3:4], t[1:2]))
    fg.solve_map()

    def score(z):
        return float(x @ torch.tensor(z, dtype=x.dtype) + t[0] * z[0] * z[1] + t[1] * z[2] * z[3])
    best = max(itertools.product((0.0, 1.0), repeat=4), key=score)
    np.testing.assert_array_equal(u.value.numpy(), best)


def test_a_second_derivative_is_refused_not_silently_wrong():
    theta = torch.tensor([0.3, 0.5, 0.1], dtype=torch.float64, requires_grad=True)

    def objective(t):
        fg = TorchFactorGraph()
        u = fg.variable_from(t)
        fg.add(Xor(u))
        fg.solve(**TIGHT)
        return (u.value ** 2).sum() + (t ** 2).sum() / 2
    (gradient,) = torch.autograd.grad(objective(theta), theta, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        torch.autograd.grad(gradient[0], theta)


def test_a_variable_repeated_in_a_factor_counts_once():
    # Xor(u0, u0, u1) over the local polytope: 2 u0 + u1 = 1, and
    # max 0.8 u0 + 0.3 u1 - (u0^2 + u1^2)/2 there has multiplier
    # tau = (2 theta0 + theta1 - 1)/5, u = (theta0 - 2 tau, theta1 - tau) =
    # (0.44, 0.12) and Jacobian [[1/5, -2/5], [-2/5, 4/5]] (lp-sparsemap
    # gives the same u)
    theta = torch.tensor([0.8, 0.3], dtype=torch.float64, requires_grad=True)
    fg = TorchFactorGraph()
    u = fg.variable_from(theta)
    fg.add(Xor(u[[0, 0, 1]]))
    fg.solve(**TIGHT)
    assert u.value.tolist() == pytest.approx([0.44, 0.12], abs=1e-8)
    (u.value * torch.tensor([1.0, -0.5], dtype=torch.float64)).sum().backward()
    assert theta.grad.tolist() == pytest.approx([0.4, -0.8], abs=1e-8)


def test_constraints_without_a_common_solution_are_warned_of():
    # brute force: no assignment has exactly one variable on and none on
    assert assignments(2, lambda x: sum(x) == 1 and sum(x) <= 0) == []
    fg = TorchFactorGraph()
    x = fg.variable_from(torch.tensor([0.3, -0.4], requires_grad=True))
    fg.add(Xor(x))
    fg.add(Budget(x, 0))
    for solve in (fg.solve, fg.solve_map):
        with pytest.warns(RuntimeWarning, match="admit no common solution"):
            solve()


@pytest.mark.parametrize("infeasible", ["proved by the solve", "a factor forbids everything"])
def test_values_that_solve_nothing_have_zero_gradients_and_tangents(infeasible):
    """As in concord.torch, values that are no solution (the last iterate
    of a solve that proved the constraints infeasible, or zeros when a
    Sequence forbids every transition) are constants: zero gradient in
    reverse mode, zero tangent in forward mode (rather than an error from
    the backward pass, which has no solution to differentiate)."""
    from torch.autograd import forward_ad

    def values(theta):
        fg = TorchFactorGraph()
        x = fg.variable_from(theta)
        if infeasible == "proved by the solve":
            fg.add(Xor(x[0]))
            fg.add(Budget(x[0], 0))
        else:
            fg.add(Sequence(x, torch.full((1, 2, 2), -float("inf"), dtype=torch.float64)))
        with pytest.warns(RuntimeWarning, match="admit no common solution"):
            fg.solve(**TIGHT)
        return x.value

    theta = torch.tensor([[0.3, -0.4], [0.2, 0.1]], dtype=torch.float64, requires_grad=True)
    values(theta).sum().backward()
    assert torch.equal(theta.grad, torch.zeros_like(theta))
    with forward_ad.dual_level():
        tangent = forward_ad.unpack_dual(values(forward_ad.make_dual(
            theta.detach(), torch.ones_like(theta)))).tangent
    assert torch.equal(tangent, torch.zeros_like(theta))


def test_numpy_scores_alone_give_tensors_of_their_dtype():
    """A TorchFactorGraph whose scores are all NumPy arrays solves them as
    constant float64 tensors: its values are float64 tensors equal to the
    numpy FactorGraph's (and LP-MAP's to the XOR's best variable)."""
    from concord.lpsmap import FactorGraph
    theta = np.array([0.5, 0.2, -0.1])
    values = []
    for graph in (TorchFactorGraph(), FactorGraph()):
        x = graph.variable_from(theta)
        graph.add(Xor(x))
        graph.solve(**TIGHT)
        values.append(x.value)
    assert values[0].dtype == torch.float64 and not values[0].requires_grad
    np.testing.assert_allclose(values[0].numpy(), values[1], atol=1e-12)
    np.testing.assert_allclose(values[1], theta + 2 / 15, atol=1e-8)  # sparsemax: all three on
    fg = TorchFactorGraph()
    x = fg.variable_from(theta)
    fg.add(Xor(x))
    fg.solve_map()
    assert x.value.dtype == torch.float64 and x.value.tolist() == [1.0, 0.0, 0.0]
    # beside a float32 tensor, NumPy float64 scores are constants that keep float32
    fg = TorchFactorGraph()
    x = fg.variable_from(torch.tensor(theta, dtype=torch.float32))
    fg.add(Pair(x[:-1], x[1:], np.array([0.5, -0.5])))
    fg.solve()
    assert x.value.dtype == torch.float32


def test_forbidden_transitions_have_zero_gradient_and_the_others_finite_differences():
    def f(x, transitions):
        fg = TorchFactorGraph()
        u = fg.variable_from(x)
        fg.add(Sequence(u, transitions))
        fg.solve(**TIGHT)
        return u.value

    generator = torch.Generator().manual_seed(5)
    x = torch.randn(4, 3, generator=generator, dtype=torch.float64, requires_grad=True)
    transitions = torch.randn(3, 3, 3, generator=generator, dtype=torch.float64)
    transitions[:, 0, 1] = transitions[1, 2, 2] = -np.inf
    transitions.requires_grad_()
    value = f(x, transitions)
    assert torch.all(value[1:, 1][value[:-1, 0] == 1.0] == 0.0)  # 0 -> 1 never taken
    (value * torch.randn(4, 3, generator=generator, dtype=torch.float64)).sum().backward()
    assert torch.all(transitions.grad[torch.isneginf(transitions)] == 0.0)
    assert torch.autograd.gradcheck(f, (x, transitions), atol=1e-4)
