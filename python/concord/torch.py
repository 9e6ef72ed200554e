"""PyTorch layers: LP-SparseMAP and SparseMAP as differentiable functions.

- FactorGraphs with tensor scores: ``fg.solve()`` and ``concord.solve_batch``
  return values that are tensors in the autograd graph, differentiable with
  respect to the variables' and the factors' scores (through
  concord_solver_backward: the implicit backward pass, no unrolling);
  ``fg.loss(gold)`` is the LP-SparseMAP or hinge loss as a tensor.
- SparseMAP layers for single structures, on batched score tensors:
  ``sequence_sparsemap``, ``tree_sparsemap``, ``matching_sparsemap``.
- Losses for training with gold structures, per example, for any training
  loop: ``lp_sparsemap_loss`` over low-level graphs (the LP-SparseMAP loss,
  or the structured hinge for comparison), and the SparseMAP losses of the
  single structures, ``sequence_sparsemap_loss``, ``tree_sparsemap_loss``,
  ``matching_sparsemap_loss``.

Scores may be tensors of any real dtype: they reach the solver in float64
(it works in float64 on the CPU), results are tensors of the promotion of
the scores' dtypes (concord.graph.result_dtype: integers give
torch.get_default_dtype()) on the scores' device, and each score tensor's
gradient has its own dtype. A batch is solved on C threads with the GIL
released (concord_solve_batch), and its backward passes on as many Python
threads (each releases the GIL in C); ``threads=None`` uses one per
processor. Settings are keyword arguments as for FactorGraph.solve. The
backward passes are differentiable once: a second derivative, or one with
respect to the incoming gradients (torch.autograd.functional.jvp), raises.
Forward mode (torch.autograd.forward_ad) works: a solve's Jacobian is
symmetric, so its product with the scores' tangents is a backward pass.
"""

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

from concord import _core
from concord.factors import tree_arcs
from concord.graph import as_float64, as_numpy, has_solution, is_tensor, result_dtype

__all__ = ["lp_sparsemap", "sequence_sparsemap", "tree_sparsemap", "matching_sparsemap",
           "lp_sparsemap_loss", "sequence_sparsemap_loss", "tree_sparsemap_loss",
           "matching_sparsemap_loss"]

_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _Refused(torch.autograd.Function):
    """The identity on a gradient, made a function of the scores and
    incoming gradients it was computed from, whose own backward pass raises
    torch's error for functions differentiable once."""

    @staticmethod
    def forward(ctx, gradient, *sources):
        """A copy of the gradient (sources only hang it on them)."""
        return gradient.clone()

    @staticmethod
    def backward(ctx, *grads):
        """Refused: the gradient it carries is not differentiable."""
        raise RuntimeError(_TWICE)


def differentiable_once(backward):
    """A custom Function's backward, marked once_differentiable (its
    gradients are not differentiable themselves), and whose gradients,
    when the graph of the backward pass is built (create_graph=True), hang
    on the score tensors forward saved (ctx.save_for_backward): a second
    derivative then raises. once_differentiable alone does not when
    torch.autograd.grad is given the scores as its inputs (its error node
    leads to no input, so the engine skips it and the solver's part of the
    second derivative would be dropped silently). They hang on the
    incoming gradients too, when those are in the autograd graph: a
    derivative with respect to them (torch.autograd.functional.jvp's
    double-backward trick) raises as well instead of coming out zero. A
    backward pass that builds no graph (the usual one) calls `backward`
    alone: there is nothing to mark."""
    once = once_differentiable(backward)

    @functools.wraps(backward)
    def wrapped(ctx, *grads):
        if not torch.is_grad_enabled():
            return backward(ctx, *grads)
        gradients = once(ctx, *grads)
        sources = [t for t in ctx.saved_tensors if t.requires_grad]
        sources += [g for g in grads if g is not None and g.requires_grad]
        if not sources:
            return gradients
        return tuple(g if g is None else _Refused.apply(g, *sources) for g in gradients)
    return wrapped


class _Batch:
    """What a batched solve keeps between its forward and backward passes:
    one solver per example (created for this solve, so later solves of the
    same graphs cannot disturb the backward pass), the settings, the Infos,
    and which examples' solves ended with a solution (has_solution)."""

    def __init__(self, graphs, settings, threads):
        self.solvers = [_core.Solver(g) for g in graphs]
        self.settings = _core.Settings(**settings)
        if self.settings.progress is not None:
            self.settings.progress = _stop_all_once_raised(self.settings.progress)
        self.threads = 0 if threads is None else _core.as_integer(threads, "threads")
        self.infos = None
        self.solved = None


def _stop_all_once_raised(callback):
    """The progress callback for the solves of one batch made of several
    calls (the losses' examples, solved one call each on Python threads):
    once it has raised in one of them, every other solve stops at its next
    report without calling it, as the solves of one C batch do."""
    raised = threading.Event()

    def relay(progress):
        if raised.is_set():
            return True
        try:
            return callback(progress)
        except BaseException:
            raised.set()
            raise
    return relay


def _set_example_scores(batch, scores):
    """Gives each solver of the batch its example's flat scores (theta_0,
    phi_0, theta_1, phi_1, ...). A score the library refuses (not finite,
    say) raises its error with "example k: " in front; the exception
    also keeps the example (`example`), the library's own message
    (`library_message`) and what _core.refused_score says of the
    example's flat variable scores (`variable_score`: index, value, why;
    None when it takes them all), or else what the graph says of its flat
    additional scores (`additional_score`, alike), for the callers that
    name the score in their own terms."""
    for k, solver in enumerate(batch.solvers):
        theta, phi = as_numpy(scores[2 * k]), scores[2 * k + 1]
        try:
            solver.set_scores(theta, as_numpy(phi) if phi.numel() else None)
        except _core.ConcordError as error:
            named = type(error)(error.code, "example %d: %s" % (k, error))
            named.example, named.library_message = k, str(error)
            named.variable_score = _core.refused_score(theta)
            named.additional_score = None
            if named.variable_score is None and phi.numel():
                named.additional_score = solver.graph.refused_additional_score(0, as_numpy(phi))
            raise named from None


class _LPSparseMAP(torch.autograd.Function):
    """(theta_0, phi_0, theta_1, phi_1, ...) -> (u_0, v_0, u_1, v_1, ...):
    flat variable and additional scores of each example (float64) to its
    LP-SparseMAP solution (float64; zeros, and no gradient, for an example
    whose solve found none)."""

    @staticmethod
    def forward(ctx, batch, *scores):
        """Solves the batch's examples at these scores (one C batch); the
        solvers stay in the batch for the backward pass."""
        _set_example_scores(batch, scores)
        batch.infos = _core.solve_batch(batch.solvers, "sparse", batch.settings, batch.threads)
        outputs, batch.solved = [], []
        for k, (solver, info) in enumerate(zip(batch.solvers, batch.infos)):
            theta, phi = scores[2 * k], scores[2 * k + 1]
            u = solver.variables if has_solution(info) else None
            batch.solved.append(u is not None)
            if u is not None:
                outputs += [_tensor_like(u, theta), _tensor_like(solver.additionals, phi)]
            else:
                outputs += [torch.zeros_like(theta), torch.zeros_like(phi)]
        ctx.batch = batch
        ctx.save_for_backward(*scores)
        return tuple(outputs)

    @staticmethod
    @differentiable_once
    def backward(ctx, *grads):
        """The Jacobian's products with the incoming gradients, example by
        example (concord_solver_backward)."""
        return (None,) + _jacobian_products(ctx.batch, grads)

    @staticmethod
    def jvp(ctx, batch_tangent, *tangents):
        """Forward mode (torch.autograd.forward_ad): the Jacobian is
        symmetric (the Hessian of the convex value function), so its
        product with the scores' tangents is the backward pass's."""
        return _jacobian_products(ctx.batch, tangents)


def _jacobian_products(batch, vectors):
    """J_k (x_k, y_k) for each example k, from the flat vectors (x_0, y_0,
    x_1, y_1, ...), J_k being its symmetric Jacobian d(u, v)/d(theta, phi):
    the backward pass's products, and forward mode's (zeros for an example
    whose solve found no solution)."""

    def one(k):
        x, y = vectors[2 * k], vectors[2 * k + 1]
        if not batch.solved[k]:
            return torch.zeros_like(x), torch.zeros_like(y)
        if not batch.solvers[k].is_current:
            raise RuntimeError("the FactorGraph gained variables or factors after this "
                               "solve, and its backward pass needs the graph as it was: "
                               "build the whole graph before the solves you "
                               "differentiate")
        dtheta, dphi, _ = batch.solvers[k].backward(
            as_numpy(x), as_numpy(y) if y.numel() else None, batch.settings)
        return _tensor_like(dtheta, x), _tensor_like(dphi, y)
    # The C library has no batched backward pass: Python threads run the
    # examples' products, each with the GIL released.
    results = _on_threads(one, len(batch.solvers), batch.threads)
    return tuple(g for pair in results for g in pair)


def _on_threads(function, count, threads):
    """[function(k) for k < count] on Python threads (threads <= 0: one per
    processor, as in the C library's batches); for calls into C that
    release the GIL."""
    workers = threads if threads > 0 else os.cpu_count() or 1
    workers = min(workers, count) if count > 1 else 1
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(function, range(count)))
    return [function(k) for k in range(count)]


def _tensor_like(values, like):
    return torch.from_numpy(values).to(device=like.device, dtype=like.dtype)


def lp_sparsemap(graphs, variable_scores, additional_scores, threads=None, **settings):
    """LP-SparseMAP of each example: graphs[k] (low-level concord._core.Graph
    objects; the same graph may serve several examples) with the flat
    scores variable_scores[k] and additional_scores[k] (1-D tensors, the
    latter empty for a graph without additional outputs). Returns the
    lists of u_k and v_k, differentiable, and the examples' Infos; u_k and
    v_k have the dtype result_dtype gives for the example's two tensors,
    and are None when the example's solve found no solution (its
    constraints are infeasible: Info status "infeasible")."""
    graphs, variable_scores, additional_scores = _examples(graphs, variable_scores,
                                                           additional_scores)
    batch = _Batch(graphs, settings, threads)
    dtypes = [result_dtype([theta, phi]) for theta, phi in zip(variable_scores,
                                                               additional_scores)]
    us, vs = _solve(batch, [as_float64(theta) for theta in variable_scores],
                    [as_float64(phi) for phi in additional_scores], dtypes)
    return us, vs, batch.infos


def _examples(graphs, variable_scores, additional_scores):
    """The examples of lp_sparsemap and lp_sparsemap_loss as three lists,
    checked to give each graph a 1-D tensor of its variables' scores and
    one of its additional scores."""
    graphs, thetas, phis = list(graphs), list(variable_scores), list(additional_scores)
    if not len(graphs) == len(thetas) == len(phis):
        raise ValueError("%d graphs, %d variable score tensors and %d additional score "
                         "tensors: expected one of each per example"
                         % (len(graphs), len(thetas), len(phis)))
    for k, (graph, theta, phi) in enumerate(zip(graphs, thetas, phis)):
        if not isinstance(graph, _core.Graph):
            raise TypeError("graphs[%d]: expected a concord._core.Graph (a FactorGraph's "
                            ".graph), got %s" % (k, type(graph).__name__))
        _check_flat(theta, graph.num_variables, "variable_scores[%d]" % k)
        _check_flat(phi, graph.num_additionals, "additional_scores[%d]" % k)
    return graphs, thetas, phis


def _check_flat(scores, size, what):
    """Refuses what is not a 1-D tensor of `size` scores, naming it."""
    if not is_tensor(scores):
        raise TypeError("%s: expected a tensor, got %s" % (what, type(scores).__name__))
    if scores.dim() != 1 or scores.numel() != size:
        raise ValueError("%s: expected a 1-D tensor of %d scores, got shape %s"
                         % (what, size, tuple(scores.shape)))


def _solve(batch, variable_scores, additional_scores, dtypes):
    """Solves the batch at the given float64 scores; returns the lists of
    u_k and v_k, example k's of dtypes[k] (None for an example whose solve
    found no solution)."""
    scores = []
    for theta, phi in zip(variable_scores, additional_scores):
        scores += [theta, phi]
    if not scores:
        batch.infos = []
        return [], []
    outputs = _LPSparseMAP.apply(batch, *scores)
    us, vs = [], []
    for u, v, dtype, solved in zip(outputs[0::2], outputs[1::2], dtypes, batch.solved):
        us.append(u.to(dtype) if solved else None)
        vs.append(v.to(dtype) if solved else None)
    return us, vs


# ---------------------------------------------------------------------------
# FactorGraphs with tensor scores (called by concord.graph)


def _flat_scores(fg):
    """A FactorGraph's variable and additional scores as two flat float64
    tensors in the graph's order (numpy parts become constants; additional
    outputs no Python factor owns keep the graph's scores), on the device
    of its first score tensor, and the dtype of its results."""
    tensors = fg._score_tensors()
    dtype = result_dtype(tensors) if tensors else torch.float64
    device = tensors[0].device if tensors else None

    def tensor(values):
        if is_tensor(values):
            return as_float64(values).to(device).reshape(-1)
        # a copy: a read-only array (a broadcast scalar score) would make
        # torch warn that it cannot write to it
        return torch.tensor(as_numpy(values).reshape(-1), device=device)

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

    def joined(parts):
        return cat(parts) if parts else torch.zeros(0, dtype=torch.float64, device=device)

    return joined(theta), joined(phi), dtype


def cat(tensors):
    """torch.cat(tensors), but a single tensor as it is: no copy, and no op
    for the backward pass to walk."""
    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)


def solve_graphs(graphs, settings, threads):
    """LP-SparseMAP of FactorGraphs with tensor scores: sets their values
    (tensors in the autograd graph) and returns their Infos."""
    scores = [_flat_scores(g) for g in graphs]
    batch = _Batch([g.graph for g in graphs], settings, threads)
    us, vs = _solve(batch, [s[0] for s in scores], [s[1] for s in scores],
                    [s[2] for s in scores])
    for g, solver, info, u, v in zip(graphs, batch.solvers, batch.infos, us, vs):
        g._take_solution(solver, info, (u, v))
    return batch.infos


class _Losses(torch.autograd.Function):
    """(theta_0, phi_0, theta_1, phi_1, ...) (float64) -> the losses of each
    example's gold structure (a (B,) float64 tensor); their gradients are
    the ones the C library returns with them (u - u*, v - v*)."""

    @staticmethod
    def forward(ctx, batch, kind, u_golds, v_golds, *scores):
        """Each example's loss (kind "sparsemap" or "hinge") of its gold
        structure, solved one call per example on Python threads; keeps
        the gradients the C library returns with them."""
        _set_example_scores(batch, scores)

        def one(k):
            solver = batch.solvers[k]
            method = solver.loss_sparsemap if kind == "sparsemap" else solver.loss_hinge
            return method(u_golds[k], v_golds[k], batch.settings)
        results = _on_threads(one, len(batch.solvers), batch.threads)
        batch.infos = [info for _, _, _, info in results]
        ctx.gradients = []
        for k, (_, dtheta, dphi, _) in enumerate(results):
            ctx.gradients += [_tensor_like(dtheta, scores[2 * k]),
                              _tensor_like(dphi, scores[2 * k + 1])]
        ctx.save_for_backward(*scores)
        return torch.tensor([loss for loss, _, _, _ in results], dtype=torch.float64,
                            device=scores[0].device)

    @staticmethod
    @differentiable_once
    def backward(ctx, grad):
        """Each loss's gradient scaled by its incoming gradient."""
        return (None, None, None, None) + tuple(
            grad[k // 2] * g for k, g in enumerate(ctx.gradients))

    @staticmethod
    def jvp(ctx, batch_tangent, kind_tangent, u_golds_tangent, v_golds_tangent, *tangents):
        """Forward mode: each loss's tangent is its gradient dotted with
        its scores' tangents."""
        count = len(ctx.gradients) // 2
        return torch.stack([
            sum((g * t).sum() for g, t in zip(ctx.gradients[2 * k:2 * k + 2],
                                               tangents[2 * k:2 * k + 2]))
            for k in range(count)])


def _check_kind(kind):
    """Refuses a loss kind other than "sparsemap" and "hinge"."""
    if kind not in ("sparsemap", "hinge"):
        raise ValueError("kind must be 'sparsemap' or 'hinge', not %r" % (kind,))


def _losses(batch, kind, variable_scores, additional_scores, u_golds, v_golds, dtype):
    """The losses at the given float64 scores, as a tensor of dtype."""
    _check_kind(kind)
    scores = []
    for theta, phi in zip(variable_scores, additional_scores):
        scores += [theta, phi]
    if not scores:
        batch.infos = []
        return torch.zeros(0, dtype=dtype)
    return _Losses.apply(batch, kind, u_golds, v_golds, *scores).to(dtype)


def lp_sparsemap_loss(graphs, variable_scores, additional_scores, u_gold, v_gold=None,
                      kind="sparsemap", threads=None, **settings):
    """The loss of each example's gold structure, a (B,) tensor
    differentiable with respect to the scores: graphs[k] (low-level
    concord._core.Graph objects; one graph may serve several examples) with
    the flat scores variable_scores[k], additional_scores[k] (1-D tensors,
    the latter empty without additional outputs), gold u_gold[k] (0/1 per
    variable) and v_gold[k] (None, or v_gold None: each factor's best at
    the gold variables). A fractional gold must be a mixture of allowed
    structures; one outside the polytope is a ValueError: always outside a
    logic or Budget factor, elsewhere where a factor's test or a
    negative loss shows it, which depends on the scores (half a dependency
    tree is caught at zero scores, not at every other), so a fractional
    gold's validity in structured factors is the caller's to ensure.

    kind="sparsemap": the LP-SparseMAP (Fenchel-Young) loss, F(theta, phi)
    - [theta . u* + phi . v* - |u*|^2 / 2], F the LP-SparseMAP maximum;
    kind="hinge": the structured hinge with the Hamming cost, by
    cost-augmented LP-MAP. Both are 0 when the prediction is the gold
    structure; the gradient is u - u*, v - v* (u, v the solution). The
    losses have the dtype result_dtype gives for all the score tensors.
    The examples are solved on Python threads, each in C with the GIL
    released (threads None: one per processor)."""
    graphs, variable_scores, additional_scores = _examples(graphs, variable_scores,
                                                           additional_scores)
    count = len(graphs)
    u_golds = [np.asarray(as_numpy(u), dtype=np.float64).reshape(-1) for u in u_gold]
    v_golds = [None] * count if v_gold is None else [
        None if v is None else np.asarray(as_numpy(v), dtype=np.float64).reshape(-1)
        for v in v_gold]
    if not len(u_golds) == len(v_golds) == count:
        raise ValueError("%d examples, %d gold structures and %d gold additional values: "
                         "expected one of each per example" % (count, len(u_golds),
                                                                len(v_golds)))
    batch = _Batch(graphs, settings, threads)
    dtype = (result_dtype(variable_scores + additional_scores) if count
             else torch.get_default_dtype())
    return _losses(batch, kind, [as_float64(theta) for theta in variable_scores],
                   [as_float64(phi) for phi in additional_scores], u_golds, v_golds, dtype)


def graph_loss(fg, kind, u_gold, v_gold, settings):
    """FactorGraph.loss with tensor scores: a 0-d tensor."""
    theta, phi, dtype = _flat_scores(fg)
    batch = _Batch([fg.graph], settings, 1)
    loss = _losses(batch, kind, [theta], [phi], [u_gold], [v_gold], dtype)[0]
    fg._take_solution(batch.solvers[0], batch.infos[0])
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
    heads, modifiers = tree_arcs(n)
    graph.add_tree(n + 1, heads, modifiers, np.arange(n * n), projective, single_root)
    return graph


@functools.lru_cache(maxsize=256)
def _sequence_graph(length, states, forbidden=None):
    """A sequence of `length` positions of `states` states; `forbidden`
    (bytes, one per transition, or None) marks the forbidden ones."""
    graph = _core.Graph()
    graph.add_variables(length * states)
    scores = None
    if forbidden is not None:
        scores = np.where(np.frombuffer(forbidden, dtype=bool), -np.inf, 0.0)
    graph.add_sequence([states] * length, np.arange(length * states), scores)
    return graph


def _batched(scores, structure_dims, what="scores"):
    """scores (a tensor, named `what` in errors) with structure_dims
    trailing dimensions, as (B, ...) and whether a batch dimension was
    added."""
    if not isinstance(scores, torch.Tensor):
        raise TypeError("%s: expected a torch.Tensor, got %s" % (what, type(scores).__name__))
    if scores.dim() == structure_dims:
        return scores.unsqueeze(0), True
    if scores.dim() != structure_dims + 1:
        raise ValueError("%s: expected %d or %d dimensions, got shape %s" % (
            what, structure_dims, structure_dims + 1, tuple(scores.shape)))
    return scores, False


def _lengths(lengths, batch, full):
    if lengths is None:
        return [full] * batch
    lengths = torch.as_tensor(lengths).reshape(-1)
    if lengths.numel() == 0:  # [] is float32 to torch, but holds no fraction
        lengths = lengths.long()
    if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
        raise TypeError("lengths: expected integers, got %s" % lengths.dtype)
    lengths = lengths.tolist()
    if len(lengths) != batch or any(n < 1 or n > full for n in lengths):
        raise ValueError("lengths: expected %d values in [1, %d], got %s" % (batch, full, lengths))
    return lengths


class _Structures:
    """A batch of single-structure problems (`name`: what each structure
    is): one low-level graph per example, its flat variable and additional
    scores (float64), the dtype of the results (result_dtype of the score
    tensors the layer was given: `scores` and `others`), and how to cut a
    tensor shaped like the scores into the examples' flat variables
    (``flat``) and to put flat values back in that shape (``shaped``)."""

    def __init__(self, name, scores, single, graphs, sizes, phis=None, others=(),
                 scores_name="scores", additional_at=None):
        self.name = name
        self.scores = scores
        self.scores_name = scores_name
        self.single = single
        self.graphs = graphs
        self.sizes = sizes
        self.others = [t for t in others if is_tensor(t)]
        self.dtype = result_dtype([scores] + self.others)
        # (example, flat additional index) -> (argument name, its position)
        self.additional_at = additional_at
        self.thetas = self.flat(as_float64(scores))
        self.phis = phis if phis is not None else [
            torch.zeros(0, dtype=torch.float64, device=scores.device)] * len(graphs)

    def flat(self, values):
        """values, shaped like the scores, as each example's flat variables."""
        return [values[(b,) + tuple(slice(m) for m in size)].reshape(-1)
                for b, size in enumerate(self.sizes)]

    def shaped(self, us):
        """Flat values of each example, padded with zeros into the scores'
        shape (one example: without the batch dimension)."""
        if not us:
            return self.empty(self.scores.to(self.dtype) * 0)
        full = self.scores.shape[1:]
        out = []
        for u, size in zip(us, self.sizes):
            size = size + full[len(size):]
            u = u.reshape(size)
            if size != full:
                padding = []
                for m, n in zip(reversed(size), reversed(full)):
                    padding += [0, n - m]
                u = F.pad(u, padding)
            out.append(u)
        return out[0] if self.single else torch.stack(out)

    def empty(self, values):
        """The empty result of an empty batch, in the autograd graph of every
        score tensor the layer was given (their gradients are zeros, as for
        a batch of one)."""
        for other in self.others:
            values = values + 0 * other.sum().to(values.dtype)
        return values

    def refused_at(self, error):
        """The library's refusal of a score of example b (error, as
        _set_example_scores raised it), named by its position in the
        scores the layer was given ("unary[1, 2, 0] (nan) is not finite",
        "transitions[0, 2] (nan) ..."); error itself for any other
        refusal."""
        additional = getattr(error, "additional_score", None)
        variable = getattr(error, "variable_score", None)
        if additional is not None and self.additional_at is not None:
            k, value, why = additional
            name, where = self.additional_at(error.example, k)
        elif variable is not None:
            b, (k, value, why) = error.example, variable
            full = tuple(self.scores.shape[1:])
            size = tuple(self.sizes[b]) + full[len(self.sizes[b]):]
            where = [int(i) for i in np.unravel_index(k, size)]
            name, where = self.scores_name, where if self.single else [b] + where
        else:
            return error
        return type(error)(error.code, "%s[%s] (%g) %s" % (name, ", ".join(map(str, where)),
                                                           value, why))

    def marginals(self, threads, settings):
        """The examples' LP-SparseMAP solutions, differentiable, shaped as
        the layer's scores (a refused score named in the layer's terms)."""
        try:
            us, _ = _solve(_Batch(self.graphs, settings, threads), self.thetas, self.phis,
                           [self.dtype] * len(self.graphs))
        except _core.InvalidArgumentError as error:
            raise self.refused_at(error) from None
        return self.shaped(us)

    def losses(self, gold, kind, threads, settings):
        """The losses of the gold structures (shaped like the scores), as
        the *_sparsemap_loss layers return them; kind, threads and settings
        are checked even for an empty batch."""
        _check_kind(kind)
        _Batch([], settings, threads)
        gold = torch.as_tensor(gold, dtype=torch.float64)
        given = tuple(gold.shape)
        gold, _ = _batched(gold, self.scores.dim() - 1, "gold")
        if gold.shape != self.scores.shape:
            expected = self.scores.shape[1:] if self.single else self.scores.shape
            raise ValueError("gold: expected the scores' shape %s (the structures' 0/1 "
                             "indicators, shaped like their scores), got %s"
                             % (tuple(expected), given))
        if not self.graphs:
            return self.empty(self.scores.reshape(-1)[:0].to(self.dtype))
        u_golds = [as_numpy(u) for u in self.flat(gold)]
        try:
            losses = _losses(_Batch(self.graphs, settings, threads), kind, self.thetas,
                             self.phis, u_golds, [None] * len(u_golds), self.dtype)
        except _core.InvalidArgumentError as error:
            if not str(error).startswith("the gold structure"):
                raise self.refused_at(error) from None
            raise ValueError("gold: not a %s in every example (%s)"
                             % (self.name, str(error).split(";")[0])) from None
        return losses[0] if self.single else losses


def _matchings(scores, every_row, every_col):
    scores, single = _batched(scores, 2)
    batch, rows, cols = scores.shape
    graph = _matching_graph(rows, cols, _core.as_flag(every_row, "every_row"),
                            _core.as_flag(every_col, "every_col"))
    return _Structures("matching", scores, single, [graph] * batch, [(rows, cols)] * batch)


def _trees(scores, lengths, projective, single_root):
    scores, single = _batched(scores, 2)
    batch, n, _ = scores.shape
    if scores.shape[2] != n:
        raise ValueError("tree scores must be square, got shape %s" % (tuple(scores.shape),))
    if n == 0 and batch:
        raise ValueError("tree scores: a dependency tree needs at least one word, got shape %s"
                         % (tuple(scores.shape),))
    sizes = _lengths(lengths, batch, n)
    projective = _core.as_flag(projective, "projective")
    single_root = _core.as_flag(single_root, "single_root")
    graphs = [_tree_graph(m, projective, single_root) for m in sizes]
    return _Structures("dependency tree", scores, single, graphs, [(m, m) for m in sizes])


def _sequences(unary, transitions, start, stop, lengths):
    unary, single = _batched(unary, 2, "unary")
    batch, length, states = unary.shape
    given = (transitions, start, stop)
    transitions = _broadcast(unary, transitions, (batch, max(length - 1, 0), states, states),
                             "transitions")
    start = _broadcast(unary, start, (batch, states), "start")
    stop = _broadcast(unary, stop, (batch, states), "stop")
    sizes = _lengths(lengths, batch, length)
    graphs, phis = [], []
    for b, m in enumerate(sizes):
        phi = torch.cat([start[b], transitions[b, :m - 1].reshape(-1), stop[b]])
        # -inf forbids a transition: part of the graph's structure (the
        # solve reads it as 0, and its gradient is 0)
        forbidden = torch.isneginf(phi)
        graphs.append(_sequence_graph(m, states, forbidden.cpu().numpy().tobytes())
                      if bool(forbidden.any()) else _sequence_graph(m, states))
        phis.append(phi)

    def additional_at(b, k):
        """Where example b's flat additional score k (start, the
        transitions, stop) lies in the argument the layer was given."""
        transition_count = (sizes[b] - 1) * states * states
        if k < states:
            name, where = "start", (b, k)
        elif k < states + transition_count:
            position, rest = divmod(k - states, states * states)
            name, where = "transitions", (b, position) + divmod(rest, states)
        else:
            name, where = "stop", (b, k - states - transition_count)
        argument = given[("transitions", "start", "stop").index(name)]
        return name, _given_position(where, tuple(np.shape(argument)))

    return _Structures("tag sequence", unary, single, graphs, [(m,) for m in sizes], phis,
                       given, "unary", additional_at)


def _given_position(where, shape):
    """The position, in an argument of `shape` that was broadcast to the
    batch's full shape, of the full shape's position `where`: its trailing
    dimensions, at 0 where the argument has size 1."""
    where = where[len(where) - len(shape):] if shape else ()
    return tuple(0 if n == 1 else i for i, n in zip(where, shape))


def matching_sparsemap(scores, every_row=False, every_col=False, threads=None, **settings):
    """SparseMAP over bipartite matchings: scores (B, rows, cols) (or one
    (rows, cols) matrix) to marginals of the same shape, a sparse mixture of
    matchings. Each row and column is matched at most once (every_row,
    every_col: exactly once)."""
    return _matchings(scores, every_row, every_col).marginals(threads, settings)


def tree_sparsemap(scores, lengths=None, projective=False, single_root=False, threads=None,
                   **settings):
    """SparseMAP over dependency trees: scores (B, n, n) (or one (n, n)),
    scores[b, h, m] the arc from word h to word m and scores[b, m, m] the
    arc from the root to word m, to arc marginals of the same shape.
    lengths (B,): sentence lengths (words beyond get zeros). projective:
    no crossing arcs; single_root: one word attached to the root."""
    return _trees(scores, lengths, projective, single_root).marginals(threads, settings)


def sequence_sparsemap(unary, transitions=None, start=None, stop=None, lengths=None,
                       threads=None, **settings):
    """SparseMAP over tag sequences (a linear chain): unary (B, L, S) (or one
    (L, S)) scores of each position's states; transitions[b, i-1, p, s] the
    score of state p at position i-1 followed by s at i, shaped (B, L-1, S,
    S) or anything that broadcasts to it ((S, S): the same everywhere);
    start, stop (B, S) or broadcastable: the first and last states' scores.
    A transition, start or stop score of -inf forbids it (a constrained tag
    set: BIO's O -> I-X, say); its gradient is 0. lengths (B,): sequence
    lengths (positions beyond get zeros). Returns the state marginals,
    shaped like unary."""
    return _sequences(unary, transitions, start, stop, lengths).marginals(threads, settings)


def matching_sparsemap_loss(scores, gold, every_row=False, every_col=False, kind="sparsemap",
                            threads=None, **settings):
    """The SparseMAP loss (kind="sparsemap") or structured hinge
    (kind="hinge") of gold matchings: scores as for matching_sparsemap, gold
    0/1 of the same shape, or a mixture of matchings (fractional; see
    lp_sparsemap_loss for what is checked of it). Returns the (B,) losses
    (one example: a 0-d tensor), differentiable w.r.t. the scores (see
    lp_sparsemap_loss)."""
    return _matchings(scores, every_row, every_col).losses(gold, kind, threads, settings)


def tree_sparsemap_loss(scores, gold, lengths=None, projective=False, single_root=False,
                        kind="sparsemap", threads=None, **settings):
    """The SparseMAP loss or structured hinge of gold dependency trees:
    scores as for tree_sparsemap, gold 0/1 arcs of the same shape (entries
    beyond a length ignored), or a mixture of trees (fractional; see
    lp_sparsemap_loss for what is checked of it). Returns the (B,)
    losses."""
    return _trees(scores, lengths, projective, single_root).losses(gold, kind, threads, settings)


def sequence_sparsemap_loss(unary, gold, transitions=None, start=None, stop=None, lengths=None,
                            kind="sparsemap", threads=None, **settings):
    """The SparseMAP loss or structured hinge of gold tag sequences: scores
    as for sequence_sparsemap, gold one-hot (B, L, S) like unary (e.g.
    ``torch.nn.functional.one_hot(tags, S)``; positions beyond a length
    ignored), or a mixture of sequences (fractional; see lp_sparsemap_loss
    for what is checked of it). Returns the (B,) losses, differentiable
    w.r.t. unary, transitions, start and stop."""
    return _sequences(unary, transitions, start, stop, lengths).losses(gold, kind, threads,
                                                                      settings)


def _broadcast(like, scores, shape, name):
    """Scores (None: zeros) broadcast to shape, as float64 on like's device;
    a shape that does not broadcast is a ValueError naming the argument."""
    if scores is None:
        return torch.zeros(shape, dtype=torch.float64, device=like.device)
    values = scores if is_tensor(scores) else torch.tensor(as_numpy(scores))
    try:
        return torch.broadcast_to(as_float64(values).to(like.device), shape)
    except RuntimeError:
        raise ValueError("%s: shape %s does not broadcast to %s"
                         % (name, tuple(values.shape), tuple(shape))) from None
