"""concord.torch: autograd through LP-SparseMAP, the SparseMAP layers, the losses.

  * torch.autograd.gradcheck (float64, forward tol 1e-12, backward_tol
    1e-13, scores drawn away from ties) passes for FactorGraphs with tensor
    scores, w.r.t. variable and factor scores: a grid of PAIR factors, an
    LP-matching, a sequence with a budget, a dependency tree with budgets;
    and for each SparseMAP layer (sequence, tree, matching), with
    sentences of different lengths in one batch;
  * the layers equal the same structures built as FactorGraphs, batches
    on two threads equal one-by-one solves bit for bit, float32 scores
    give float32 results close to float64's;
  * the losses through autograd equal the numpy ones and their gradients
    are u - u* (checked by gradcheck too);
  * an oracle's exception comes out of a differentiable solve.
"""

import numpy as np
import pytest
import torch

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
    assert torch.autograd.gradcheck(function, args, eps=1e-6, atol=1e-6, rtol=1e-4)


def test_gradcheck_sequence_layer():
    unary, transitions = scores(3, 5, 3, seed=8), scores(3, 3, seed=9)
    start, stop = scores(3, 3, seed=10), scores(3, seed=11)
    assert torch.autograd.gradcheck(
        lambda *a: ct.sequence_sparsemap(*a, lengths=[5, 2, 4], **TIGHT),
        (unary, transitions, start, stop), eps=1e-6, atol=1e-6, rtol=1e-4)


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


def test_an_oracle_exception_comes_out_of_a_differentiable_solve():
    def oracle(a, b):
        raise RuntimeError("oracle failed")
    fg = concord.FactorGraph()
    x = fg.variable_from(scores(2, 3, seed=22))
    fg.add(concord.Factor(x[0], map=oracle))
    with pytest.raises(RuntimeError, match="oracle failed"):
        fg.solve()
