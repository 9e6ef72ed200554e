"""PyTorch layers: LP-SparseMAP and SparseMAP as differentiable functions.

- FactorGraphs with tensor scores: ``fg.solve()`` and ``concord.solve_batch``
  return values that are tensors in the autograd graph, differentiable with
  respect to the variables' and the factors' scores (through
  concord_solver_backward: the implicit backward pass, no unrolling);
  ``fg.loss(gold)`` is the LP-SparseMAP or hinge loss as a tensor.
- SparseMAP layers for single structures, on batched score tensors:
  ``sequence_sparsemap``, ``tree_sparsemap``, ``matching_sparsemap``.

Scores may be float32 or float64 (results take the scores' dtype and
device); the solver works in float64 on the CPU. A batch is solved on C
threads with the GIL released (concord_solve_batch), and its backward
passes on as many Python threads (each releases the GIL in C);
``threads=None`` uses one per processor. Settings are keyword arguments as
for FactorGraph.solve.
"""

import functools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F

from concord import _core
from concord.graph import as_numpy, is_tensor

__all__ = ["lp_sparsemap", "sequence_sparsemap", "tree_sparsemap", "matching_sparsemap"]


class _Batch:
    """What a batched solve keeps between its forward and backward passes:
    one solver per example (created for this solve, so later solves of the
    same graphs cannot disturb the backward pass), the settings, the Infos."""

    def __init__(self, graphs, settings, threads):
        self.solvers = [_core.Solver(g) for g in graphs]
        self.settings = _core.Settings(**settings)
        self.threads = 0 if threads is None else threads
        self.infos = None


class _LPSparseMAP(torch.autograd.Function):
    """(theta_0, phi_0, theta_1, phi_1, ...) -> (u_0, v_0, u_1, v_1, ...):
    flat variable and additional scores of each example to its LP-SparseMAP
    solution."""

    @staticmethod
    def forward(ctx, batch, *scores):
        for k, solver in enumerate(batch.solvers):
            theta, phi = scores[2 * k], scores[2 * k + 1]
            solver.set_scores(as_numpy(theta), as_numpy(phi) if phi.numel() else None)
        batch.infos = _core.solve_batch(batch.solvers, "sparse", batch.settings, batch.threads)
        outputs = []
        for k, solver in enumerate(batch.solvers):
            theta, phi = scores[2 * k], scores[2 * k + 1]
            outputs.append(_tensor_like(solver.variables, theta))
            outputs.append(_tensor_like(solver.additionals, phi))
        ctx.batch = batch
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        batch = ctx.batch

        def one(k):
            du, dv = grads[2 * k], grads[2 * k + 1]
            dtheta, dphi, _ = batch.solvers[k].backward(
                as_numpy(du), as_numpy(dv) if dv.numel() else None, batch.settings)
            return _tensor_like(dtheta, du), _tensor_like(dphi, dv)
        # The C library has no batched backward pass: Python threads run the
        # examples' backward passes, each with the GIL released.
        workers = min(batch.threads or os.cpu_count() or 1, len(batch.solvers))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                results = list(pool.map(one, range(len(batch.solvers))))
        else:
            results = [one(k) for k in range(len(batch.solvers))]
        return (None,) + tuple(g for pair in results for g in pair)


def _tensor_like(values, like):
    return torch.from_numpy(values).to(device=like.device, dtype=like.dtype)


def lp_sparsemap(graphs, variable_scores, additional_scores, threads=None, **settings):
    """LP-SparseMAP of each example: graphs[k] (low-level concord._core.Graph
    objects; the same graph may serve several examples) with the flat
    scores variable_scores[k] and additional_scores[k] (1-D tensors, the
    latter empty for a graph without additional outputs). Returns the
    lists of u_k and v_k, differentiable, and the examples' Infos."""
    batch = _Batch(graphs, settings, threads)
    us, vs = _solve(batch, variable_scores, additional_scores)
    return us, vs, batch.infos


def _solve(batch, variable_scores, additional_scores):
    scores = []
    for theta, phi in zip(variable_scores, additional_scores):
        scores += [theta, phi]
    outputs = _LPSparseMAP.apply(batch, *scores)
    return list(outputs[0::2]), list(outputs[1::2])


# ---------------------------------------------------------------------------
# FactorGraphs with tensor scores (called by concord.graph)


def _flat_scores(fg):
    """A FactorGraph's variable and additional scores as two flat tensors in
    the graph's order (numpy parts become constants; additional outputs no
    Python factor owns keep the graph's scores)."""
    dtype, device = torch.float64, None
    for x in fg.variables:
        if is_tensor(x.scores):
            dtype, device = x.scores.dtype, x.scores.device
            break

    def tensor(values):
        if is_tensor(values):
            return values.to(dtype=dtype).reshape(-1)
        return torch.as_tensor(np.asarray(values, dtype=np.float64).reshape(-1), dtype=dtype,
                               device=device)

    theta = []
    for x in fg.variables:
        part = tensor(x.scores)
        if part.numel() != x.size:
            raise ValueError("scores: expected shape %s, got %s" % (x.shape,
                                                                     tuple(x.scores.shape)))
        theta.append(part)
    phi, filled, graph_phi = [], 0, None
    for factor in fg.factors:
        first, count = factor.additionals
        if not count:
            continue
        if first > filled:
            graph_phi = fg.graph.additional_scores if graph_phi is None else graph_phi
            phi.append(tensor(graph_phi[filled:first]))
        phi += [tensor(part) for part in factor._score_parts()]
        filled = first + count
    if filled < fg.num_additionals:
        graph_phi = fg.graph.additional_scores if graph_phi is None else graph_phi
        phi.append(tensor(graph_phi[filled:]))
    empty = torch.zeros(0, dtype=dtype, device=device)
    return (torch.cat(theta) if theta else empty), (torch.cat(phi) if phi else empty)


def solve_graphs(graphs, settings, threads):
    """LP-SparseMAP of FactorGraphs with tensor scores: sets their values
    (tensors in the autograd graph) and returns their Infos."""
    scores = [_flat_scores(g) for g in graphs]
    batch = _Batch([g.graph for g in graphs], settings, threads)
    us, vs = _solve(batch, [s[0] for s in scores], [s[1] for s in scores])
    for g, solver, u, v in zip(graphs, batch.solvers, us, vs):
        g.last_solver = solver
        g._set_values(None, None, (u, v))
    return batch.infos


class _Loss(torch.autograd.Function):
    """(theta, phi) -> the loss of a gold structure; its gradient is the
    one the C library returns with it (u - u*, v - v*)."""

    @staticmethod
    def forward(ctx, solver, kind, u_gold, v_gold, settings, theta, phi):
        solver.set_scores(as_numpy(theta), as_numpy(phi) if phi.numel() else None)
        method = solver.loss_sparsemap if kind == "sparsemap" else solver.loss_hinge
        loss, dtheta, dphi, _ = method(u_gold, v_gold, settings)
        ctx.gradients = (_tensor_like(dtheta, theta), _tensor_like(dphi, phi))
        return torch.tensor(loss, dtype=theta.dtype, device=theta.device)

    @staticmethod
    def backward(ctx, grad):
        dtheta, dphi = ctx.gradients
        return None, None, None, None, None, grad * dtheta, grad * dphi


def graph_loss(fg, kind, u_gold, v_gold, settings):
    """FactorGraph.loss with tensor scores: a 0-d tensor."""
    theta, phi = _flat_scores(fg)
    solver = _core.Solver(fg.graph)
    loss = _Loss.apply(solver, kind, u_gold, v_gold, _core.Settings(**settings), theta, phi)
    fg.last_solver = solver
    fg._set_values(solver.variables, solver.additionals, None)
    return loss


# ---------------------------------------------------------------------------
# SparseMAP layers for single structures. Each size of structure is built
# once (and kept) as a low-level graph; every example gets its own solver.


@functools.lru_cache(maxsize=256)
def _matching_graph(rows, cols, every_row, every_col):
    graph = _core.Graph()
    graph.add_variables(rows * cols)
    graph.add_matching(rows, cols, np.arange(rows * cols), every_row, every_col)
    return graph


@functools.lru_cache(maxsize=256)
def _tree_graph(n, projective, single_root):
    graph = _core.Graph()
    graph.add_variables(n * n)
    rows, cols = np.indices((n, n))
    heads = np.where(rows == cols, 0, rows + 1).reshape(-1)
    graph.add_tree(n + 1, heads, (cols + 1).reshape(-1), np.arange(n * n), projective,
                   single_root)
    return graph


@functools.lru_cache(maxsize=256)
def _sequence_graph(length, states):
    graph = _core.Graph()
    graph.add_variables(length * states)
    graph.add_sequence([states] * length, np.arange(length * states))
    return graph


def _batched(scores, structure_dims):
    """scores with structure_dims trailing dimensions, as (B, ...) and
    whether a batch dimension was added."""
    if scores.dim() == structure_dims:
        return scores.unsqueeze(0), True
    if scores.dim() != structure_dims + 1:
        raise ValueError("expected scores with %d or %d dimensions, got shape %s" % (
            structure_dims, structure_dims + 1, tuple(scores.shape)))
    return scores, False


def _lengths(lengths, batch, full):
    if lengths is None:
        return [full] * batch
    lengths = [int(n) for n in torch.as_tensor(lengths).reshape(-1)]
    if len(lengths) != batch or min(lengths) < 1 or max(lengths) > full:
        raise ValueError("lengths: expected %d values in [1, %d], got %s" % (batch, full, lengths))
    return lengths


def matching_sparsemap(scores, every_row=False, every_col=False, threads=None, **settings):
    """SparseMAP over bipartite matchings: scores (B, rows, cols) (or one
    (rows, cols) matrix) to marginals of the same shape, a sparse mixture of
    matchings. Each row and column is matched at most once (every_row,
    every_col: exactly once)."""
    scores, single = _batched(scores, 2)
    batch, rows, cols = scores.shape
    graph = _matching_graph(rows, cols, bool(every_row), bool(every_col))
    empty = scores.new_zeros(0)
    us, _, _ = lp_sparsemap([graph] * batch, list(scores.reshape(batch, -1)), [empty] * batch,
                            threads, **settings)
    out = torch.stack(us).reshape(scores.shape)
    return out[0] if single else out


def tree_sparsemap(scores, lengths=None, projective=False, single_root=False, threads=None,
                   **settings):
    """SparseMAP over dependency trees: scores (B, n, n) (or one (n, n)),
    scores[b, h, m] the arc from word h to word m and scores[b, m, m] the
    arc from the root to word m, to arc marginals of the same shape.
    lengths (B,): sentence lengths (words beyond get zeros). projective:
    no crossing arcs; single_root: one word attached to the root."""
    scores, single = _batched(scores, 2)
    batch, n, _ = scores.shape
    if scores.shape[2] != n:
        raise ValueError("tree scores must be square, got shape %s" % (tuple(scores.shape),))
    sizes = _lengths(lengths, batch, n)
    graphs = [_tree_graph(m, bool(projective), bool(single_root)) for m in sizes]
    thetas = [scores[b, :m, :m].reshape(-1) for b, m in enumerate(sizes)]
    empty = scores.new_zeros(0)
    us, _, _ = lp_sparsemap(graphs, thetas, [empty] * batch, threads, **settings)
    out = torch.stack([F.pad(u.reshape(m, m), (0, n - m, 0, n - m)) for u, m in zip(us, sizes)])
    return out[0] if single else out


def sequence_sparsemap(unary, transitions=None, start=None, stop=None, lengths=None,
                       threads=None, **settings):
    """SparseMAP over tag sequences (a linear chain): unary (B, L, S) (or one
    (L, S)) scores of each position's states; transitions[b, i-1, p, s] the
    score of state p at position i-1 followed by s at i, shaped (B, L-1, S,
    S) or anything that broadcasts to it ((S, S): the same everywhere);
    start, stop (B, S) or broadcastable: the first and last states' scores.
    lengths (B,): sequence lengths (positions beyond get zeros). Returns
    the state marginals, shaped like unary."""
    unary, single = _batched(unary, 2)
    batch, length, states = unary.shape
    transitions = _broadcast(unary, transitions, (batch, max(length - 1, 0), states, states))
    start = _broadcast(unary, start, (batch, states))
    stop = _broadcast(unary, stop, (batch, states))
    sizes = _lengths(lengths, batch, length)
    graphs = [_sequence_graph(m, states) for m in sizes]
    thetas = [unary[b, :m].reshape(-1) for b, m in enumerate(sizes)]
    phis = [torch.cat([start[b], transitions[b, :m - 1].reshape(-1), stop[b]])
            for b, m in enumerate(sizes)]
    us, _, _ = lp_sparsemap(graphs, thetas, phis, threads, **settings)
    out = torch.stack([F.pad(u.reshape(m, states), (0, 0, 0, length - m))
                       for u, m in zip(us, sizes)])
    return out[0] if single else out


def _broadcast(like, scores, shape):
    if scores is None:
        return like.new_zeros(shape)
    return torch.broadcast_to(torch.as_tensor(scores, dtype=like.dtype, device=like.device),
                              shape)
