"""concord.torch: autograd through LP-SparseMAP, the SparseMAP layers, the losses.

  * torch.autograd.gradcheck (float64, forward tol 1e-12, backward_tol
    1e-13, scores drawn away from ties) passes for FactorGraphs with tensor
    scores, w.r.t. variable and factor scores: a grid of PAIR factors, an
    LP-matching, a sequence with a budget, a dependency tree with budgets;
    and for each SparseMAP layer (sequence, tree, matching), with
    sentences of different lengths in one batch;
  * the layers equal the same structures built as FactorGraphs, batches
    on two threads equal one-by-one solves bit for bit, and so do layers
    called from several Python threads at once; float32 scores
    give float32 results close to float64's; scores of any real dtype
    reach the solver unchanged (integers, float32 beside float64), results
    take the promotion of their dtypes (integers: the default dtype) and
    each input gets its gradient in its own dtype (against sparsemax in
    closed form and its Jacobian);
  * the losses through autograd equal the numpy ones and their gradients
    are u - u* (checked by gradcheck too); so do the batched losses
    (lp_sparsemap_loss over a pairwise MRF, and the sequence, tree and
    matching losses), bit for bit on one or two threads;
  * an oracle's exception comes out of a differentiable solve;
  * a second derivative (create_graph=True, then a gradient of the
    gradient) raises rather than leaving out the solver's part, and so does a
    derivative w.r.t. the incoming gradients (torch.autograd.functional.jvp)
    rather than coming out zero;
  * at zero scores, where every structure ties, the layers' gradients are
    the derivatives of the faces that hold their solutions (a perfect
    matching's against the projection onto the Birkhoff polytope's tangent
    space), and a tied face too large to complete warns.
"""

import itertools
import os
import threading
import warnings

import numpy as np
import pytest
import torch
from torch.autograd import forward_ad

import concord
import concord.torch as ct

TIGHT = dict(tol=1e-12, backward_tol=1e-13, max_iter=1000000)


def scores(*shape, seed=0):
    """Gaussian scores, float64, requiring grad."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64).requires_grad_()


def pair_grid(theta, horizontal, vertical):
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    fg.add(concord.Pair(x[:, :-1], x[:, 1:], horizontal))
    fg.add(concord.Pair(x[:-1, :], x[1:, :], vertical))
    fg.solve(**TIGHT)
    return x.value


def lp_matching(theta):
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    for i in range(theta.shape[0]):
        fg.add(concord.Xor(x[i, :]))
    for j in range(theta.shape[1]):
        fg.add(concord.AtMostOne(x[:, j]))
    fg.solve(**TIGHT)
    return x.value


def sequence_with_budget(unary, transitions):
    fg = concord.FactorGraph()
    x = fg.variable_from(unary)
    seq = fg.add(concord.Sequence(x, transitions))
    fg.add(concord.Budget(x[:, 0], 2))
    fg.solve(**TIGHT)
    return x.value, seq.value[1]


def tree_with_budget(arcs):
    fg = concord.FactorGraph()
    x = fg.variable_from(arcs)
    fg.add(concord.DepTree(x))
    n = arcs.shape[0]
    for h in range(n):
        fg.add(concord.Budget(x[h, [m for m in range(n) if m != h]], 1))
    fg.solve(**TIGHT)
    return x.value


@pytest.mark.parametrize("function,inputs", [
    (pair_grid, lambda: (scores(3, 3, seed=1), scores(3, 2, seed=2), scores(2, 3, seed=3))),
    (lp_matching, lambda: (scores(4, 5, seed=4),)),
    (sequence_with_budget, lambda: (scores(5, 3, seed=5), scores(4, 3, 3, seed=6))),
    (tree_with_budget, lambda: (scores(4, 4, seed=7),)),
], ids=["pair-grid", "lp-matching", "sequence-budget", "tree-budget"])
def test_gradcheck_lp_sparsemap_factor_graphs(function, inputs):
    args = inputs()
    outputs = function(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    # a solution with fractional entries: the Jacobian is not all zero
    assert any(((o > 1e-6) & (o < 1 - 1e-6)).any() for o in outputs)
    # eps 1e-5: the forward solves stop at residuals of 1e-12, which
    # central differences divide by 2 eps; at eps 1e-6 that noise is atol
    assert torch.autograd.gradcheck(function, args, eps=1e-5, atol=1e-6, rtol=1e-4)


def test_gradcheck_sequence_layer():
    unary, transitions = scores(3, 5, 3, seed=8), scores(3, 3, seed=9)
    start, stop = scores(3, 3, seed=10), scores(3, seed=11)
    assert torch.autograd.gradcheck(
        lambda *a: ct.sequence_sparsemap(*a, lengths=[5, 2, 4], **TIGHT),
        (unary, transitions, start, stop), eps=1e-6, atol=1e-6, rtol=1e-4)


def sequence_sparsemap_reference(unary, transitions, start, stop):
    """SparseMAP of one sequence, independently: cvxopt's QP over the
    weights of every state sequence that uses no -inf score, maximizing
    scores . p - |U p|^2 / 2 on the simplex (U: the sequences' state
    indicators). Returns U p, shaped like unary."""
    from cvxopt import matrix, solvers
    length, states = unary.shape
    columns, gains = [], []
    for seq in itertools.product(range(states), repeat=length):
        gain = (start[seq[0]] + stop[seq[-1]] + unary[np.arange(length), seq].sum()
                + sum(transitions[i - 1, seq[i - 1], seq[i]] for i in range(1, length)))
        if np.isfinite(gain):
            column = np.zeros((length, states))
            column[np.arange(length), seq] = 1.0
            columns.append(column.ravel())
            gains.append(gain)
    U, k = np.array(columns).T, len(columns)
    solvers.options.update(show_progress=False, abstol=1e-12, reltol=1e-12, feastol=1e-12)
    solution = solvers.qp(matrix(U.T @ U), matrix(-np.array(gains)), matrix(-np.eye(k)),
                          matrix(np.zeros(k)), matrix(np.ones((1, k))), matrix(1.0))
    return (U @ np.array(solution["x"]).ravel()).reshape(length, states)


def test_forbidden_transitions_are_never_taken_and_their_gradient_is_zero():
    """Transitions (and a start) scored -inf: the layer is SparseMAP over
    the sequences that avoid them (cvxopt over those sequences), differs
    from the layer with 0 in their place, is differentiable (central
    differences) with a zero gradient at them, and a batch whose examples
    forbid different transitions equals its examples one by one."""
    generator = torch.Generator().manual_seed(70)
    unary = (0.5 * torch.randn(2, 4, 3, generator=generator, dtype=torch.float64)).requires_grad_()
    transitions = torch.randn(2, 3, 3, 3, generator=generator, dtype=torch.float64)
    transitions[0, :, 0, 2] = -np.inf        # example 0: state 0 never followed by 2
    transitions[1, 1, 2, :2] = -np.inf       # example 1: at one step, 2 only to 2
    transitions.requires_grad_()
    start = torch.tensor([[0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]], dtype=torch.float64)
    tags = ct.sequence_sparsemap(unary, transitions, start, **TIGHT)
    for b in range(2):
        expected = sequence_sparsemap_reference(
            unary[b].detach().numpy(), transitions[b].detach().numpy(), start[b].numpy(),
            np.zeros(3))
        assert np.abs(tags[b].detach().numpy() - expected).max() < 1e-6
        alone = ct.sequence_sparsemap(unary[b], transitions[b], start[b], **TIGHT)
        assert torch.equal(alone, tags[b])
    unforbidden = ct.sequence_sparsemap(unary, torch.nan_to_num(transitions, neginf=0.0),
                                        torch.nan_to_num(start, neginf=0.0), **TIGHT)
    assert (unforbidden - tags).abs().max() > 1e-2
    (tags * torch.randn(tags.shape, generator=generator, dtype=torch.float64)).sum().backward()
    assert torch.all(transitions.grad[torch.isneginf(transitions)] == 0.0)
    assert transitions.grad.abs().max() > 0.0
    assert torch.autograd.gradcheck(
        lambda u, t: ct.sequence_sparsemap(u, t, start, **TIGHT), (unary, transitions),
        eps=1e-6, atol=1e-6, rtol=1e-4)
    # a gold sequence through a forbidden transition is no tag sequence
    allowed = torch.nn.functional.one_hot(torch.tensor([[1, 1, 1, 1], [0, 0, 0, 0]]), 3)
    forbidden = torch.nn.functional.one_hot(torch.tensor([[1, 0, 2, 1], [0, 0, 0, 0]]), 3)
    assert torch.autograd.gradcheck(
        lambda u, t: ct.sequence_sparsemap_loss(u, allowed, t, start, **TIGHT),
        (unary, transitions), eps=1e-6, atol=1e-6, rtol=1e-4)
    with pytest.raises(ValueError, match="not a tag sequence in every example"):
        ct.sequence_sparsemap_loss(unary, forbidden, transitions, start)


@pytest.mark.parametrize("projective", [False, True])
def test_gradcheck_tree_layer(projective):
    arcs = scores(3, 5, 5, seed=12)
    assert torch.autograd.gradcheck(
        lambda a: ct.tree_sparsemap(a, lengths=[5, 3, 4], projective=projective, **TIGHT),
        (arcs,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_gradcheck_matching_layer():
    m = scores(2, 4, 5, seed=13)
    assert torch.autograd.gradcheck(
        lambda m: ct.matching_sparsemap(m, every_row=True, **TIGHT), (m,),
        eps=1e-6, atol=1e-6, rtol=1e-4)


def test_layer_gradients_at_zero_scores_are_the_derivative_of_the_face_holding_the_solution():
    """At zero scores every structure ties, and the solution (1/n, 1/S)
    lies inside a face its own configurations do not span. A perfect
    matching's Jacobian there is the projection onto the Birkhoff polytope's
    tangent space, (I - 11'/n) x (I - 11'/n); a sequence's is I - 11'/S per
    position; both are differentiable points, so gradcheck's central
    differences apply too."""
    n = 4
    zero = torch.zeros(n, n, dtype=torch.float64, requires_grad=True)
    perfect = lambda m: ct.matching_sparsemap(m, every_row=True, every_col=True, **TIGHT)
    jacobian = torch.autograd.functional.jacobian(perfect, zero).reshape(n * n, n * n)
    centering = torch.eye(n, dtype=torch.float64) - 1.0 / n
    assert torch.allclose(jacobian, torch.kron(centering, centering), atol=1e-9)
    assert torch.autograd.gradcheck(perfect, (zero,), eps=1e-6, atol=1e-6, rtol=1e-4)
    unary = torch.zeros(2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: ct.sequence_sparsemap(a, **TIGHT), (unary,),
                                    eps=1e-6, atol=1e-6, rtol=1e-4)


def test_a_tied_face_too_large_to_complete_warns():
    """A 24-word tree at zero scores ties on a face of dimension 24 * 23,
    beyond concord's completion limit of 512 configurations."""
    arcs = torch.zeros(24, 24, dtype=torch.float64, requires_grad=True)
    with pytest.warns(RuntimeWarning, match="more than 512 configurations"):
        ct.tree_sparsemap(arcs).sum().backward()
    small = torch.zeros(10, 10, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ct.tree_sparsemap(small).sum().backward()


def test_the_gradient_of_a_solve_stopped_early_warns():
    """A layer whose solve stops at max_iter still gives a gradient (that of
    its last iterate) and says it is inexact; converged, it says nothing."""
    arcs = scores(1, 8, 8, seed=16)[0].detach().requires_grad_()
    with pytest.warns(RuntimeWarning, match="stopped before converging"):
        ct.matching_sparsemap(arcs, max_iter=2).sum().backward()
    assert torch.isfinite(arcs.grad).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ct.matching_sparsemap(arcs).sum().backward()


def test_layers_equal_factor_graphs_and_threads_equal_one_by_one():
    arcs = scores(6, 5, 5, seed=14).detach()
    batched = ct.tree_sparsemap(arcs, threads=2)
    for b in range(6):
        fg = concord.FactorGraph()
        x = fg.variable_from(arcs[b])
        fg.add(concord.DepTree(x))
        fg.solve()
        assert torch.equal(x.value, batched[b])
    assert torch.equal(ct.tree_sparsemap(arcs, threads=1), batched)
    unary = scores(4, 6, 3, seed=15).detach()
    transitions = scores(3, 3, seed=16).detach()
    batched = ct.sequence_sparsemap(unary, transitions, threads=2)
    assert torch.equal(ct.sequence_sparsemap(unary[1], transitions), batched[1])
    matchings = scores(5, 4, 4, seed=17).detach()
    batched = ct.matching_sparsemap(matchings, every_row=True, every_col=True, threads=2)
    assert torch.allclose(batched.sum(dim=1), torch.ones(5, 4, dtype=torch.float64))


def test_layers_called_from_several_python_threads_at_once_equal_sequential_calls():
    """The layers keep one graph per size for every caller: Python threads
    that call them at once, on their own tensors, each get what a call
    alone gives (outputs and gradients), and no call is refused."""
    inputs = [scores(4, 6, 6, seed=40 + k).detach() for k in range(4)]
    chain = torch.diag(torch.ones(5, dtype=torch.float64), 1)   # word m - 1 heads word m
    chain[0, 0] = 1.0                                             # the root heads word 0

    def run(arcs):
        arcs = arcs.clone().requires_grad_()
        out = ct.tree_sparsemap(arcs, threads=1)
        (out * torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        loss = ct.tree_sparsemap_loss(arcs.detach(), chain.expand(4, 6, 6), threads=1)
        return out.detach(), arcs.grad, loss

    alone = [run(arcs) for arcs in inputs]
    results, errors = [None] * len(inputs), []

    def work(k):
        try:
            for _ in range(15):
                results[k] = run(inputs[k])
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    for (out, grad, loss), (out1, grad1, loss1) in zip(results, alone):
        assert torch.equal(out, out1) and torch.equal(grad, grad1) and torch.equal(loss, loss1)


def test_solve_batch_of_tensor_graphs_is_differentiable_and_threads_change_nothing():
    thetas = [scores(4, 4, seed=20 + k) for k in range(5)]

    def graphs():
        out = []
        for theta in thetas:
            fg = concord.FactorGraph()
            x = fg.variable_from(theta)
            for i in range(4):
                fg.add(concord.Xor(x[i]))
                fg.add(concord.AtMostOne(x[:, i]))
            out.append((fg, x))
        return out
    results = []
    for threads in (1, 2):
        built = graphs()
        infos = concord.solve_batch([fg for fg, _ in built], threads=threads)
        assert all(info.converged for info in infos)
        loss = sum((x.value * torch.arange(16.0).reshape(4, 4)).sum() for _, x in built)
        grads = torch.autograd.grad(loss, thetas)
        results.append(([x.value.detach() for _, x in built], grads))
    for a, b in zip(results[0][0] + list(results[0][1]), results[1][0] + list(results[1][1])):
        assert torch.equal(a, b)


def test_solve_batch_mixing_tensor_and_numpy_graphs_gives_each_its_own_solve():
    """In one batch, a graph with NumPy scores keeps NumPy values and a
    graph with tensor scores gets differentiable ones, each equal bit for
    bit to its own solve."""
    def graph(theta):
        fg = concord.FactorGraph()
        x = fg.variable_from(theta)
        for i in range(3):
            fg.add(concord.Xor(x[i]))
            fg.add(concord.AtMostOne(x[:, i]))
        return fg, x

    theta = scores(3, 3, seed=41)
    numpy_theta = scores(3, 3, seed=42).detach().numpy()
    alone = []
    for t in (theta, numpy_theta):
        fg, x = graph(t)
        fg.solve()
        alone.append(x.value)
    (tensor_fg, tensor_x), (numpy_fg, numpy_x) = graph(theta), graph(numpy_theta)
    infos = concord.solve_batch([numpy_fg, tensor_fg])
    assert len(infos) == 2 and all(info.converged for info in infos)
    assert isinstance(numpy_x.value, np.ndarray)
    np.testing.assert_array_equal(numpy_x.value, alone[1])
    assert torch.is_tensor(tensor_x.value) and tensor_x.value.requires_grad
    assert torch.equal(tensor_x.value, alone[0])


def test_every_value_of_a_graph_with_tensor_scores_is_a_tensor_after_any_solve():
    """A variable with NumPy scores, and a Sequence whose first score part
    (start) is NumPy and whose transitions are a tensor, in a graph with
    float32 tensor scores: after solve_map, solve_exact, decode and loss as
    after solve, every value is a float32 tensor equal to the same graph's
    values with NumPy scores (solve's within float32 rounding)."""
    states, length = 3, 4
    unary = scores(length, states, seed=61).detach()
    other = scores(2, seed=62).detach().numpy()
    transitions = scores(length - 1, states, states, seed=63).detach()

    def graph(as_tensor):
        fg = concord.FactorGraph()
        x = fg.multi_variable_from(as_tensor(unary))
        y = fg.variable_from(other)
        fg.add(concord.Or(y))
        sequence = fg.add(concord.Sequence(x, transitions=as_tensor(transitions)))
        return fg, x, y, sequence

    def values(fg, x, y, sequence, method):
        if method == "loss":
            gold = np.zeros((length, states))
            gold[:, 0] = 1
            fg.loss({x: gold, y: np.array([1.0, 0.0])}, **TIGHT)
        elif method == "decode":
            fg.solve_map(**TIGHT)
            fg.decode()
        else:
            getattr(fg, method)(**TIGHT)
        return [x.value, y.value, *sequence.value]

    for method in ("solve", "solve_map", "solve_exact", "decode", "loss"):
        expected = values(*graph(lambda t: t.numpy()), method)
        got = values(*graph(lambda t: t.float()), method)
        for value, reference in zip(got, expected):
            assert torch.is_tensor(value) and value.dtype == torch.float32, (method, value)
            assert np.allclose(value.detach().numpy(), reference, atol=1e-6), method


def test_slices_of_a_tensor_variable_have_their_values():
    theta = torch.tensor([[0.3, 0.5, 0.4], [0.9, 0.1, 0.2]], requires_grad=True)
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    fg.add(concord.Xor(x[0]))
    fg.add(concord.Xor(x[1]))
    fg.solve(**TIGHT)
    assert np.allclose(x.value.detach().numpy(), [sparsemax([0.3, 0.5, 0.4]),
                                                  sparsemax([0.9, 0.1, 0.2])], atol=1e-9)
    assert torch.equal(x[0].value, x.value[0])
    assert torch.equal(x[:, 1].value, x.value[:, 1])
    assert torch.equal((~x[1]).value, 1 - x.value[1])
    x[0, 1].value.backward()  # the sparsemax Jacobian on the support {0, 1, 2}
    assert np.allclose(theta.grad.numpy(), [[-1 / 3, 2 / 3, -1 / 3], [0, 0, 0]], atol=1e-9)


def test_a_backward_pass_after_the_graph_grew_says_why_it_cannot_run():
    theta = torch.tensor([0.3, 0.5, 0.4], requires_grad=True)
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    fg.add(concord.Xor(x))
    fg.solve(**TIGHT)
    value = x.value
    fg.variable_from(torch.zeros(2))
    with pytest.raises(RuntimeError, match="gained variables or factors after this solve"):
        value[1].backward()


def test_float32_scores_give_float32_results():
    arcs = scores(2, 4, 4, seed=18).detach()
    low = ct.tree_sparsemap(arcs.float())
    assert low.dtype == torch.float32
    assert torch.allclose(low.double(), ct.tree_sparsemap(arcs), atol=1e-6)
    theta = arcs[0].float().requires_grad_()
    value = lp_matching(theta)
    assert value.dtype == torch.float32
    value.sum().backward()
    assert theta.grad.dtype == torch.float32


def sparsemax(z):
    """The Euclidean projection of z onto the simplex (the LP-SparseMAP
    solution of one XOR), in closed form."""
    z = np.asarray(z, dtype=np.float64)
    top = np.sort(z)[::-1]
    k = np.arange(1, z.size + 1)
    support = top - (np.cumsum(top) - 1) / k > 0
    tau = (np.cumsum(top)[support][-1] - 1) / k[support][-1]
    return np.maximum(z - tau, 0)


def test_scores_of_any_real_dtype_reach_the_solver_unchanged():
    default = torch.get_default_dtype()
    # integer scores: fractional results, in the default dtype
    assert torch.equal(xor_solution(torch.tensor([1, 1])), torch.tensor([0.5, 0.5]))
    # an integer variable before a float32 one: nothing truncated, float32 out
    fg = concord.FactorGraph()
    a = fg.variable_from(torch.tensor([0]))
    b = fg.variable_from(torch.tensor([0.3, 0.6], requires_grad=True))
    fg.add(concord.Xor([a, b]))
    fg.solve(**TIGHT)
    assert a.value.dtype == b.value.dtype == torch.float32
    expected = sparsemax([0.0, np.float32(0.3), np.float32(0.6)])
    assert np.allclose(torch.cat([a.value, b.value]).detach().numpy(), expected, atol=1e-7)
    # float32 then float64: a float64 score that float32 cannot hold stays finite
    fg = concord.FactorGraph()
    a = fg.variable_from(torch.tensor([0.5], requires_grad=True))
    b = fg.variable_from(torch.tensor([1e300, 0.0], dtype=torch.float64, requires_grad=True))
    fg.add(concord.Xor([a, b]))
    fg.solve(**TIGHT)
    assert a.value.dtype == b.value.dtype == torch.float64
    assert a.value.tolist() == [0.0] and b.value.tolist() == [1.0, 0.0]
    # each input's gradient in its own dtype: the sparsemax Jacobian on the
    # support {0, 1, 2} of [0.3, 0.5, 0.4] is I - 1 1^T / 3
    first = torch.tensor([0.3, 0.5], requires_grad=True)
    second = torch.tensor([0.4], dtype=torch.float64, requires_grad=True)
    fg = concord.FactorGraph()
    a, b = fg.variable_from(first), fg.variable_from(second)
    fg.add(concord.Xor([a, b]))
    fg.solve(**TIGHT)
    assert a.value.dtype == torch.float64
    weights = torch.tensor([1.0, 2.0, 6.0], dtype=torch.float64)
    (torch.cat([a.value, b.value]) * weights).sum().backward()
    assert first.grad.dtype == torch.float32 and second.grad.dtype == torch.float64
    expected = weights.numpy() - weights.numpy().mean()
    assert np.allclose(first.grad.numpy(), expected[:2], atol=1e-6)
    assert np.allclose(second.grad.numpy(), expected[2:], atol=1e-9)
    # the layers: integer unary scores, with or without float transitions
    tags = ct.sequence_sparsemap(torch.ones(1, 3, 2, dtype=torch.long))
    assert tags.dtype == default and torch.allclose(tags, torch.full((1, 3, 2), 0.5))
    unary = torch.tensor([[2, 0], [0, 1], [1, 1]])
    transitions = scores(2, 2, seed=41)
    tags = ct.sequence_sparsemap(unary, transitions, **TIGHT)
    assert tags.dtype == torch.float64
    assert torch.equal(tags, ct.sequence_sparsemap(unary.double(), transitions, **TIGHT))
    (u,), (v,), _ = ct.lp_sparsemap([xor_graph()], [torch.tensor([1, 1, 0])],
                                    [torch.zeros(0, dtype=torch.long)], **TIGHT)
    assert u.dtype == v.dtype == default and u.tolist() == [0.5, 0.5, 0.0]
    loss = ct.matching_sparsemap_loss(torch.tensor([[3, 0], [0, 3]]), torch.eye(2))
    assert loss.dtype == default and loss.item() == 0.0


def xor_graph():
    graph = concord._core.Graph()
    graph.add_variables(3)
    graph.add_logic("XOR", [0, 1, 2])
    return graph


@pytest.mark.parametrize("kind", ["sparsemap", "hinge"])
def test_losses_through_autograd_equal_numpy_and_have_gradient_u_minus_gold(kind):
    theta = scores(3, 4, seed=19)
    transitions = scores(2, 4, 4, seed=21)
    gold = np.eye(4)[[1, 3, 0]]

    def graph(unary, trans):
        fg = concord.FactorGraph()
        x = fg.variable_from(unary)
        fg.add(concord.Sequence(x, trans))
        fg.add(concord.Budget(x[:, 0], 1))
        return fg, x
    fg, x = graph(theta, transitions)
    loss = fg.loss({x: gold}, kind=kind, **TIGHT)
    fg_np, x_np = graph(theta.detach().numpy(), transitions.detach().numpy())
    assert loss.item() == fg_np.loss({x_np: gold}, kind=kind, **TIGHT) and loss.item() > 0
    loss.backward()
    assert torch.allclose(theta.grad, x.value - torch.as_tensor(gold), atol=0)
    if kind == "sparsemap":  # differentiable (the hinge is piecewise linear)
        def loss_of(unary, trans):
            g, v = graph(unary, trans)
            return g.loss({v: gold}, **TIGHT)
        assert torch.autograd.gradcheck(loss_of, (theta, transitions), eps=1e-6, atol=1e-6,
                                        rtol=1e-4)


def pairwise_graph(labels):
    """The low-level graph of a fully connected pairwise MRF over labels."""
    graph = concord._core.Graph()
    graph.add_variables(labels)
    for i, j in zip(*np.triu_indices(labels, 1)):
        graph.add_pair(int(i), int(j), 0.0)
    return graph


@pytest.mark.parametrize("kind", ["sparsemap", "hinge"])
def test_batched_losses_equal_factor_graph_losses_on_any_thread_count(kind):
    labels, batch = 6, 5
    graph = pairwise_graph(labels)
    thetas = [scores(labels, seed=30 + k) for k in range(batch)]
    pairs = scores(labels * (labels - 1) // 2, seed=40)
    gold = (np.random.default_rng(1).random((batch, labels)) < 0.4).astype(float)
    results = []
    for threads in (1, 2):
        losses = ct.lp_sparsemap_loss([graph] * batch, thetas, [pairs] * batch, gold, kind=kind,
                                      threads=threads, **TIGHT)
        grads = torch.autograd.grad(losses.sum(), thetas + [pairs])
        results.append([losses.detach()] + list(grads))
    for a, b in zip(*results):
        assert torch.equal(a, b)
    losses, theta_grads, pair_grad = results[0][0], results[0][1:-1], results[0][-1]
    expected_pair_grad = torch.zeros_like(pair_grad)
    for k in range(batch):
        fg = concord.FactorGraph()
        x = fg.variable_from(thetas[k].detach().numpy())
        i, j = np.triu_indices(labels, 1)
        pair = fg.add(concord.Pair(x[i], x[j], pairs.detach().numpy()))
        assert losses[k].item() == fg.loss({x: gold[k]}, kind=kind, **TIGHT)
        assert torch.equal(theta_grads[k], torch.as_tensor(x.value - gold[k]))
        expected_pair_grad += torch.as_tensor(pair.value - gold[k][i] * gold[k][j])
    assert torch.allclose(pair_grad, expected_pair_grad, atol=1e-12)


def test_gradcheck_lp_sparsemap_loss():
    graph = pairwise_graph(4)
    thetas = [scores(4, seed=50), scores(4, seed=51)]
    pairs = scores(6, seed=52)
    gold = [[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    assert torch.autograd.gradcheck(
        lambda t0, t1, p: ct.lp_sparsemap_loss([graph] * 2, [t0, t1], [p, p], gold, **TIGHT),
        (thetas[0], thetas[1], pairs), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("kind", ["sparsemap", "hinge"])
def test_structure_losses_equal_factor_graph_losses(kind):
    unary, transitions = scores(3, 5, 4, seed=60), scores(4, 4, seed=61)
    tags = torch.tensor([[0, 1, 2, 3, 0], [3, 3, 1, 0, 0], [2, 0, 1, 0, 0]])
    gold = torch.nn.functional.one_hot(tags, 4)
    lengths = [5, 3, 2]
    losses = ct.sequence_sparsemap_loss(unary, gold, transitions, lengths=lengths, kind=kind,
                                        threads=2, **TIGHT)
    for b, m in enumerate(lengths):
        fg = concord.FactorGraph()
        x = fg.variable_from(unary[b, :m].detach().numpy())
        fg.add(concord.Sequence(x, transitions.detach().numpy()))
        assert losses[b].item() == fg.loss({x: gold[b, :m].numpy()}, kind=kind, **TIGHT)
    assert ct.sequence_sparsemap_loss(unary[0], gold[0], transitions, kind=kind,
                                      **TIGHT).item() == losses[0].item()

    arcs = scores(2, 4, 4, seed=62)
    heads = np.array([[[1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]],
                      [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]])
    heads[1, 1, 0] = heads[1, 1, 2] = 1   # word 1 heads words 0 and 2 (3 words)
    losses = ct.tree_sparsemap_loss(arcs, heads, lengths=[4, 3], kind=kind, **TIGHT)
    for b, m in enumerate([4, 3]):
        fg = concord.FactorGraph()
        x = fg.variable_from(arcs[b, :m, :m].detach().numpy())
        fg.add(concord.DepTree(x))
        assert losses[b].item() == fg.loss({x: heads[b, :m, :m]}, kind=kind, **TIGHT)

    match = scores(2, 3, 3, seed=63)
    permutations = np.stack([np.eye(3), np.eye(3)[[2, 0, 1]]])
    losses = ct.matching_sparsemap_loss(match, permutations, every_row=True, kind=kind, **TIGHT)
    for b in range(2):
        fg = concord.FactorGraph()
        x = fg.variable_from(match[b].detach().numpy())
        fg.add(concord.Matching(x, every_row=True))
        assert losses[b].item() == fg.loss({x: permutations[b]}, kind=kind, **TIGHT)
    with pytest.raises(ValueError, match="gold"):
        ct.matching_sparsemap_loss(match, permutations[:, :2])


def test_gradcheck_structure_losses():
    unary, transitions = scores(2, 4, 3, seed=64), scores(3, 3, seed=65)
    gold = torch.nn.functional.one_hot(torch.tensor([[0, 1, 2, 1], [2, 2, 0, 0]]), 3)
    assert torch.autograd.gradcheck(
        lambda u, t: ct.sequence_sparsemap_loss(u, gold, t, lengths=[4, 2], **TIGHT),
        (unary, transitions), eps=1e-6, atol=1e-6, rtol=1e-4)
    arcs = scores(4, 4, seed=66)
    tree = np.zeros((4, 4))
    tree[0, 0] = tree[0, 1] = tree[1, 2] = tree[1, 3] = 1
    assert torch.autograd.gradcheck(
        lambda a: ct.tree_sparsemap_loss(a, tree, projective=True, **TIGHT), (arcs,),
        eps=1e-6, atol=1e-6, rtol=1e-4)
    match = scores(3, 4, seed=67)
    assert torch.autograd.gradcheck(
        lambda m: ct.matching_sparsemap_loss(m, np.eye(3, 4), **TIGHT), (match,),
        eps=1e-6, atol=1e-6, rtol=1e-4)


def test_a_progress_exception_stops_every_example_of_a_loss_batch():
    """lp_sparsemap_loss solves its examples one call each on Python
    threads; once a progress callback raised in one, the others stop at
    their next report without calling it, as the solves of one C batch
    (lp_sparsemap) do: at most a call already under way on the other
    thread reaches the callback after the exception."""
    n, count = 10, 8
    fg = concord.FactorGraph()
    x = fg.variable_from(np.zeros((n, n)))
    for i in range(n):
        fg.add(concord.Xor(x[i, :]))
        fg.add(concord.AtMostOne(x[:, i]))
    theta = [scores(n * n, seed=70 + k).detach() for k in range(count)]
    phi = [torch.zeros(0, dtype=torch.float64)] * count
    gold = [np.eye(n).reshape(-1)] * count
    lock, state = threading.Lock(), {"raised": False, "after": 0}

    def raise_once(progress):
        with lock:
            if state["raised"]:
                state["after"] += 1
                return False
            state["raised"] = True
        raise KeyError("stop")
    for solve in (lambda: ct.lp_sparsemap_loss([fg.graph] * count, theta, phi, gold, threads=2,
                                               progress=raise_once, bound_every=1),
                  lambda: ct.lp_sparsemap([fg.graph] * count, theta, phi, threads=2,
                                          progress=raise_once, bound_every=1)):
        state.update(raised=False, after=0)
        with pytest.raises(KeyError, match="stop"):
            solve()
        assert state["after"] <= 1


def test_an_oracle_exception_comes_out_of_a_differentiable_solve():
    def oracle(a, b):
        raise RuntimeError("oracle failed")
    fg = concord.FactorGraph()
    x = fg.variable_from(scores(2, 3, seed=22))
    fg.add(concord.Factor(x[0], map=oracle))
    with pytest.raises(RuntimeError, match="oracle failed"):
        fg.solve()


def test_a_python_oracle_in_the_backward_pass_gives_the_faces_derivative_or_its_exception():
    """The backward pass calls a Python factor's oracle too (to find tied
    configurations): at zero scores an XOR oracle's gradient is the
    simplex's, I - 11'/n, and an exception it raises there comes out of
    backward()."""
    failing = []

    def best_single(a, b):
        if failing:
            raise KeyError("oracle failed in the backward pass")
        u = np.zeros(len(a))
        u[np.argmax(a)] = 1.0
        return u
    theta = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    fg = concord.FactorGraph()
    y = fg.variable_from(theta)
    fg.add(concord.Factor(y, map=best_single))
    fg.solve(**TIGHT)
    y.value[0].backward()
    assert torch.allclose(theta.grad, torch.tensor([0.75, -0.25, -0.25, -0.25],
                                                   dtype=torch.float64), atol=1e-9)
    fg.solve(**TIGHT)
    failing.append(True)
    with pytest.raises(KeyError, match="oracle failed in the backward pass"):
        y.value.sum().backward()


def test_an_infeasible_example_has_no_solution_and_the_others_their_gradients():
    infeasible = concord._core.Graph()
    infeasible.add_variables(3)
    infeasible.add_logic("OR", [0, 1, 2])
    infeasible.add_budget([0, 1, 2], 0)
    theta = [scores(3, seed=51), scores(3, seed=52)]
    empty = torch.zeros(0, dtype=torch.float64)
    us, vs, infos = ct.lp_sparsemap([infeasible, xor_graph()], theta, [empty, empty], **TIGHT)
    assert infos[0].status == "infeasible" and us[0] is None and vs[0] is None
    solution = sparsemax(theta[1].detach().numpy())
    assert np.allclose(us[1].detach().numpy(), solution)
    weights = np.array([1.0, 2.0, 6.0])
    (us[1] * torch.from_numpy(weights)).sum().backward()
    assert theta[0].grad is None or not theta[0].grad.any()
    # sparsemax's Jacobian: I - 1 1^T / |S| on its support S, 0 elsewhere
    support = solution > 0
    expected = np.where(support, weights - weights[support].mean(), 0.0)
    assert np.allclose(theta[1].grad.numpy(), expected, atol=1e-9)
    fg = concord.FactorGraph()
    x = fg.variable_from(scores(3, seed=53))
    fg.add(concord.Or(x))
    fg.add(concord.Budget(x, 0))
    assert fg.solve().status == "infeasible" and x.value is None


def test_threads_of_zero_or_less_use_every_processor_backward_too():
    """The backward pass's Python threads follow the C batches' rule
    (threads <= 0: one per processor): -1 ran it on one thread."""
    from concord.torch import _on_threads
    seen = set()

    def task(k):
        seen.add(threading.get_ident())
        threading.Event().wait(0.05)
        return k

    assert _on_threads(task, 4, -1) == [0, 1, 2, 3]
    assert len(seen) > 1 or (os.cpu_count() or 1) == 1
    seen.clear()
    assert _on_threads(task, 4, 1) == [0, 1, 2, 3] and len(seen) == 1


def test_a_scalar_score_in_a_graph_of_tensors_raises_no_warning():
    """A Pair's scalar score beside tensor scores: NumPy's read-only
    broadcast of it made torch warn that it cannot write to it."""
    fg = concord.FactorGraph()
    x = fg.variable_from(torch.zeros(2, 3, dtype=torch.float64))
    fg.add(concord.Pair(x[0], x[1], 0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fg.solve().status in ("integral", "fractional")


def test_empty_batches_give_empty_results():
    for layer, shape in ((ct.sequence_sparsemap, (0, 4, 3)), (ct.tree_sparsemap, (0, 4, 4)),
                         (ct.matching_sparsemap, (0, 2, 3))):
        out = layer(torch.zeros(shape, dtype=torch.float64))
        assert out.shape == shape and out.dtype == torch.float64
        if layer is not ct.matching_sparsemap:
            assert layer(torch.zeros(shape), lengths=[]).shape == shape
    losses = ct.matching_sparsemap_loss(torch.zeros(0, 2, 2), torch.zeros(0, 2, 2))
    assert losses.shape == (0,)
    # still in the autograd graph, as any torch op on an empty tensor is
    for layer, loss, shape in ((ct.sequence_sparsemap, ct.sequence_sparsemap_loss, (0, 4, 3)),
                               (ct.tree_sparsemap, ct.tree_sparsemap_loss, (0, 4, 4)),
                               (ct.matching_sparsemap, ct.matching_sparsemap_loss, (0, 2, 3))):
        for out_of in (layer, lambda x: loss(x, torch.zeros(shape))):
            x = torch.zeros(shape, requires_grad=True)
            out_of(x).sum().backward()
            assert x.grad.shape == shape
    # so are the transitions, start and stop, with zero gradients
    unary = torch.zeros(0, 4, 3, requires_grad=True)
    parts = [torch.randn(3, 3, requires_grad=True), torch.randn(3, requires_grad=True)]
    for out in (ct.sequence_sparsemap(unary, *parts),
                ct.sequence_sparsemap_loss(unary, torch.zeros(0, 4, 3), *parts)):
        grads = torch.autograd.grad(out.sum(), [unary] + parts)
        assert all(g.shape == t.shape and not g.any() for g, t in zip(grads, [unary] + parts))
    assert ct.lp_sparsemap([], [], []) == ([], [], [])
    assert ct.lp_sparsemap_loss([], [], [], []).shape == (0,)
    # an empty batch's arguments are checked as a full one's
    for loss, shape in ((ct.sequence_sparsemap_loss, (0, 4, 3)),
                        (ct.tree_sparsemap_loss, (0, 4, 4)),
                        (ct.matching_sparsemap_loss, (0, 2, 3)),
                        (ct.matching_sparsemap_loss, (1, 2, 3))):
        with pytest.raises(ValueError, match="kind must be 'sparsemap' or 'hinge', not 'svm'"):
            loss(torch.zeros(shape), torch.zeros(shape), kind="svm")
        with pytest.raises(TypeError, match="unknown setting 'tolerance'"):
            loss(torch.zeros(shape), torch.zeros(shape), tolerance=1e-3)
        with pytest.raises(TypeError, match="threads must be an integer"):
            loss(torch.zeros(shape), torch.zeros(shape), threads=1.5)
    with pytest.raises(ValueError, match="kind must be 'sparsemap' or 'hinge', not 'svm'"):
        ct.lp_sparsemap_loss([], [], [], [], kind="svm")
    with pytest.raises(TypeError, match="unknown setting 'tolerance'"):
        ct.lp_sparsemap_loss([], [], [], [], tolerance=1e-3)
    with pytest.raises(TypeError, match="unknown setting 'tolerance'"):
        concord.solve_batch([], tolerance=1e-3)
    with pytest.raises(TypeError, match="threads must be an integer"):
        concord.solve_batch([], threads=1.5)


def test_lp_sparsemap_refuses_examples_it_cannot_pair_at_the_call():
    graph = xor_graph()
    empty = torch.zeros(0)
    with pytest.raises(ValueError, match="2 graphs, 1 variable score tensors and 1 additional"):
        ct.lp_sparsemap([graph, graph], [torch.zeros(3)], [empty])
    with pytest.raises(ValueError, match=r"variable_scores\[0\]: expected a 1-D tensor of 3 "
                                         r"scores, got shape \(3, 1\)"):
        ct.lp_sparsemap([graph], [torch.zeros(3, 1, requires_grad=True)], [empty])
    with pytest.raises(ValueError, match=r"additional_scores\[1\]: expected a 1-D tensor of 0"):
        ct.lp_sparsemap([graph, graph], [torch.zeros(3)] * 2, [empty, torch.zeros(2)])
    with pytest.raises(ValueError, match="1 graphs, 2 variable score tensors"):
        ct.lp_sparsemap_loss([graph], [torch.zeros(3)] * 2, [empty], [np.eye(3)[0]])
    with pytest.raises(TypeError, match=r"variable_scores\[0\]: expected a tensor"):
        ct.lp_sparsemap([graph], [np.zeros(3)], [empty])
    fg = concord.FactorGraph()
    fg.add(concord.Xor(fg.variable_from(np.zeros(3))))
    with pytest.raises(TypeError, match=r"graphs\[1\]: expected a concord._core.Graph "
                                        r"\(a FactorGraph's .graph\), got FactorGraph"):
        ct.lp_sparsemap([graph, fg], [torch.zeros(3)] * 2, [empty] * 2)


def test_complex_scores_and_fractional_lengths_are_refused():
    with pytest.raises(TypeError, match="real numbers, not torch.complex64"):
        xor_solution(torch.tensor([1.0 + 1.0j, 0.0]))
    with pytest.raises(TypeError, match="real numbers, not torch.complex64"):
        ct.sequence_sparsemap(torch.zeros(1, 3, 2, dtype=torch.complex64))
    with pytest.raises(TypeError, match="real numbers, not complex128"):
        ct.sequence_sparsemap(torch.zeros(1, 3, 2), np.full((2, 2), 1j))
    with pytest.raises(TypeError, match="real numbers, not torch.complex128"):
        ct.lp_sparsemap([xor_graph()], [torch.zeros(3, dtype=torch.complex128)],
                        [torch.zeros(0)])
    for lengths in ([2.7, 3], torch.tensor([2.0, 3.0])):
        with pytest.raises(TypeError, match="lengths: expected integers"):
            ct.sequence_sparsemap(torch.zeros(2, 3, 2), lengths=lengths)
    with pytest.raises(TypeError, match="threads must be an integer"):
        ct.matching_sparsemap(torch.zeros(2, 2, 2), threads=1.5)


def test_layer_inputs_of_the_wrong_kind_or_shape_are_named():
    with pytest.raises(TypeError, match="scores: expected a torch.Tensor, got ndarray"):
        ct.tree_sparsemap(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"^tree scores: a dependency tree needs at least one "
                                         r"word, got shape \(2, 0, 0\)$"):
        ct.tree_sparsemap(torch.zeros(2, 0, 0))
    with pytest.raises(TypeError, match="unary: expected a torch.Tensor, got list"):
        ct.sequence_sparsemap([[0.0, 1.0]])
    with pytest.raises(ValueError, match="unary: expected 2 or 3 dimensions, got shape"):
        ct.sequence_sparsemap(torch.zeros(3))
    tags = torch.tensor([0, 1, 1])   # tags, not one-hot rows
    with pytest.raises(ValueError, match="gold: expected 2 or 3 dimensions, got shape \\(3,\\)"):
        ct.sequence_sparsemap_loss(torch.zeros(3, 2), tags)
    # gold values of the right shape that are no structure: named as such
    with pytest.raises(ValueError, match=r"^gold: not a tag sequence in every example \(the "
                                         r"gold structure violates factor 0 \(SEQUENCE\)\)$"):
        ct.sequence_sparsemap_loss(torch.zeros(3, 2), torch.zeros(3, 2))
    with pytest.raises(ValueError, match=r"^gold: not a dependency tree in every example"):
        ct.tree_sparsemap_loss(torch.zeros(2, 3, 3), torch.zeros(2, 3, 3))
    # scores that do not broadcast name their argument
    with pytest.raises(ValueError, match=r"^transitions: shape \(3, 3\) does not broadcast to "
                                         r"\(1, 2, 2, 2\)$"):
        ct.sequence_sparsemap(torch.zeros(3, 2), transitions=torch.zeros(3, 3))
    with pytest.raises(ValueError, match=r"^start: shape \(5,\) does not broadcast"):
        ct.sequence_sparsemap(torch.zeros(3, 2), start=torch.zeros(5))


def xor_solution(theta):
    fg = concord.FactorGraph()
    x = fg.variable_from(theta)
    fg.add(concord.Xor(x))
    fg.solve(**TIGHT)
    return x.value


@pytest.mark.parametrize("layer", [
    xor_solution,
    lambda theta: ct.matching_sparsemap_loss(theta.reshape(1, 3), np.eye(1, 3), **TIGHT),
])
def test_a_second_derivative_is_refused_not_silently_wrong(layer):
    # the backward passes are not differentiable themselves: asking for the
    # gradient of a gradient must fail rather than drop the solver's part
    theta = scores(3, seed=31)
    objective = lambda t: (layer(t) ** 2).sum() + (t ** 2).sum() / 2  # noqa: E731
    (gradient,) = torch.autograd.grad(objective(theta), theta, create_graph=True)
    (reference,) = torch.autograd.grad(objective(theta), theta)
    assert torch.allclose(gradient, reference, rtol=0, atol=1e-12)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        torch.autograd.grad(gradient[0], theta)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gradient[0].backward()


@pytest.mark.parametrize("layer", [
    xor_solution,
    lambda theta: ct.sequence_sparsemap(theta.reshape(2, 2), **TIGHT),
    lambda theta: ct.tree_sparsemap(theta.reshape(1, 2, 2), **TIGHT),
    # the tangent enters through the pair factors' additional scores
    lambda theta: pair_grid(np.array([[0.2, -0.7], [0.6, 0.1]]), theta[:2].reshape(2, 1),
                            theta[2:].reshape(1, 2)),
    lambda theta: ct.matching_sparsemap_loss(theta.reshape(2, 1, 2), np.ones((2, 1, 2)) / 2,
                                             **TIGHT),
])
def test_forward_mode_products_equal_central_differences(layer):
    # torch.autograd.forward_ad: a solve's Jacobian is symmetric, so its
    # product with the scores' tangent is a backward pass at the tangent;
    # for a loss, its gradient dotted with the tangent
    theta = torch.tensor([0.3, -0.2, 0.5, 0.1], dtype=torch.float64)
    direction = torch.tensor([1.0, -0.5, 0.25, 2.0], dtype=torch.float64)
    eps = 1e-6
    differences = (layer(theta + eps * direction) - layer(theta - eps * direction)) / (2 * eps)
    assert differences.abs().max() > 0.1   # a tangent of zero would be wrong here
    with forward_ad.dual_level():
        tangent = forward_ad.unpack_dual(layer(forward_ad.make_dual(theta, direction))).tangent
    assert torch.allclose(tangent, differences, rtol=0, atol=1e-6)


@pytest.mark.parametrize("layer", [
    xor_solution,
    lambda theta: ct.sequence_sparsemap(theta.reshape(2, 2), **TIGHT),
    lambda theta: ct.matching_sparsemap_loss(theta.reshape(1, 4), np.eye(1, 4), **TIGHT),
])
def test_a_derivative_with_respect_to_incoming_gradients_is_refused_not_zero(layer):
    # torch.autograd.functional.jvp differentiates the backward pass with
    # respect to its incoming gradients (the double-backward trick); the
    # backward passes are not differentiable, so it must fail rather than
    # return zeros where central differences say otherwise
    theta = scores(4, seed=32).detach()
    direction = torch.tensor([1.0, -0.5, 0.25, 2.0], dtype=torch.float64)
    eps = 1e-6
    differences = (layer(theta + eps * direction) - layer(theta - eps * direction)) / (2 * eps)
    assert differences.abs().max() > 0.1   # a jvp of zero would be wrong here
    with pytest.raises(RuntimeError, match="once_differentiable"):
        torch.autograd.functional.jvp(layer, theta, direction)


def test_a_score_a_layer_refuses_is_named_with_its_example():
    """A NaN in the second example of a batch: the error names its
    position in the scores the layer was given (the library's message
    gives the example and a flat index within its own, shorter, graph);
    so are a transition's, a start's and a stop's, in the shape each was
    given in (it gave the library's flat index into start, transitions and
    stop)."""
    unary = scores(3, 4, 3, seed=69).detach().clone()
    unary[1, 2, 0] = float("nan")
    lengths = torch.tensor([4, 3, 4])
    where = r"^unary\[1, 2, 0\] \(nan\) is not finite$"
    with pytest.raises(concord.InvalidArgumentError, match=where):
        ct.sequence_sparsemap(unary, lengths=lengths)
    gold = torch.zeros(3, 4, 3, dtype=torch.float64)
    gold[:, :, 0] = 1.0
    with pytest.raises(concord.InvalidArgumentError, match=where):
        ct.sequence_sparsemap_loss(unary, gold, lengths=lengths)
    transitions = torch.zeros(3, 3, 3, 3, dtype=torch.float64)
    transitions[2, 1, 0, 2] = float("nan")
    with pytest.raises(concord.InvalidArgumentError,
                       match=r"^transitions\[2, 1, 0, 2\] \(nan\) is not finite$"):
        ct.sequence_sparsemap(scores(3, 4, 3, seed=70), transitions)
    shared = torch.zeros(3, 3, dtype=torch.float64)
    shared[1, 2] = float("nan")
    with pytest.raises(concord.InvalidArgumentError, match=r"^transitions\[1, 2\] \(nan\)"):
        ct.sequence_sparsemap_loss(scores(4, 3, seed=70), gold[0], shared)
    stop = torch.zeros(3, 3, dtype=torch.float64)
    stop[1, 1] = float("inf")
    with pytest.raises(concord.InvalidArgumentError, match=r"^stop\[1, 1\] \(inf\)"):
        ct.sequence_sparsemap(scores(3, 4, 3, seed=70), lengths=lengths, stop=stop)
    with pytest.raises(concord.InvalidArgumentError, match=r"^start\[1\] \(nan\)"):
        ct.sequence_sparsemap(scores(3, 4, 3, seed=70),
                              start=torch.tensor([0.0, float("nan"), 0.0]))
    arcs = scores(5, 5, seed=71).detach().clone()
    arcs[3, 1] = float("inf")
    with pytest.raises(concord.InvalidArgumentError, match=r"^scores\[3, 1\] \(inf\)"):
        ct.tree_sparsemap(arcs)
