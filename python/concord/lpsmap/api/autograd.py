"""lp-sparsemap's ``lpsmap.api.autograd``: TorchFactorGraph, whose variables
are scored by tensors and whose LP-SparseMAP solution is differentiable
(concord's implicit backward pass, through PFactorGraph.jacobian_vec), in
reverse mode and in forward mode."""

try:
    import torch
except ImportError:
    import warnings
    warnings.warn("pytorch cannot be found: TorchFactorGraph not available.")
    raise

import numpy as np

from concord.graph import as_float64, is_tensor, result_dtype
from concord.lpsmap.api.api import FactorGraph, solved_values
from concord.torch import cat, differentiable_once

__all__ = ["TorchFactorGraph"]


class _LPSparseMAP(torch.autograd.Function):
    """u = LP-SparseMAP(eta_u, eta_v...) over a PFactorGraph, u of eta_u's
    dtype (float64, as the solver reads the scores); gradients w.r.t. the
    variable scores and each factor's additional scores."""

    @staticmethod
    def forward(ctx, fg, eta_u, *eta_v):
        """LP-SparseMAP of fg at these scores: the variables' values."""
        fg.set_log_potentials(eta_u.detach().cpu().numpy())
        fg.set_all_additionals([np.atleast_1d(x.detach().cpu().numpy()) for x in eta_v])
        ctx.fg = fg
        ctx.shape = eta_u.shape
        ctx.save_for_backward(eta_u, *eta_v)
        # without a solution (constraints that admit none) the values are
        # constants, of zero gradient, as in concord.torch
        u, ctx.solved = solved_values(fg, "sparse")
        return torch.tensor(u, dtype=eta_u.dtype, device=eta_u.device)

    @staticmethod
    @differentiable_once
    def backward(ctx, du):
        """The products of the incoming gradient with the Jacobian w.r.t.
        the variable scores and each factor's additional scores
        (PFactorGraph.jacobian_vec)."""
        if not ctx.solved:
            return (None, *(torch.zeros_like(t) for t in ctx.saved_tensors))
        out = np.zeros(ctx.shape)
        grads = ctx.fg.jacobian_vec(du.detach().to("cpu", torch.float64).numpy(), out)
        dtheta = torch.from_numpy(out).to(dtype=du.dtype, device=du.device)
        dphi = (torch.tensor(g, dtype=du.dtype, device=du.device) for g in grads if g)
        return (None, dtheta, *dphi)

    @staticmethod
    def jvp(ctx, fg_tangent, du, *dv):
        """Forward mode (torch.autograd.forward_ad): the Jacobian of the
        solution is symmetric (the Hessian of the convex value function),
        so the values' tangent along the scores' tangents is the variable
        part of the backward pass's product with them."""
        if not ctx.solved:
            return torch.zeros_like(du)

        def numpy(tangent):
            return tangent.detach().to("cpu", torch.float64).numpy()
        tangent, _ = ctx.fg._jacobian_products(numpy(du), [numpy(t) for t in dv])
        return torch.from_numpy(tangent).to(dtype=du.dtype, device=du.device)


class TorchFactorGraph(FactorGraph):
    """FactorGraph over tensors: ``solve`` sets differentiable values,
    ``solve_map`` LP-MAP values, on the variable scores' device and of the
    promotion of the score tensors' dtypes (concord.graph.result_dtype:
    integers give torch.get_default_dtype()); NumPy scores are constants,
    which count only in a graph without tensors. The scores reach the
    solver in float64."""

    def variable(self, shape):
        """A Variable with zero scores (a float32 tensor)."""
        return self.variable_from(torch.zeros(shape))

    def _cat(self, scores):
        return cat([as_float64(part) for part in scores])

    def _ravel(self, x):
        return torch.as_tensor(x).reshape(-1)  # NumPy scores too (constants)

    def solve(self, max_iter=1000, max_inner_iter=10, tol=1e-6, step_size=.1, adapt=True,
              verbose=False):
        """LP-SparseMAP, differentiable w.r.t. the variables' and factors'
        score tensors. max_iter: iteration cap; max_inner_iter: active-set
        iterations per factor QP; tol: residual tolerance; step_size: the
        initial penalty (relative to the scores' scale); adapt: adapt it."""
        pfg, offset, scores, scores_add = self._graph(max_iter, max_inner_iter, tol, step_size,
                                                      adapt, verbose)
        u = _LPSparseMAP.apply(pfg, scores, *scores_add)
        self._set_values(u.to(self._result_dtype()), offset)

    def solve_map(self, max_iter=1000, max_inner_iter=10, tol=1e-6, step_size=.1, adapt=True,
                  verbose=False, autodetect_acyclic=True):
        """LP-MAP by AD3 (not differentiable). Graphs in which no variable
        has two factors are solved exactly whatever autodetect_acyclic
        says (concord always detects them)."""
        pfg, offset, scores, scores_add = self._graph(max_iter, max_inner_iter, tol, step_size,
                                                      adapt, verbose)
        pfg.set_autodetect_acyclic(autodetect_acyclic)
        pfg.set_log_potentials(scores.detach().cpu().numpy())
        pfg.set_all_additionals([np.atleast_1d(x.detach().cpu().numpy()) for x in scores_add])
        u, _ = solved_values(pfg, "map")
        self._set_values(torch.tensor(u, dtype=self._result_dtype(),
                                      device=scores.device), offset)

    def _result_dtype(self):
        # as concord.FactorGraph's: NumPy scores are constants, which count
        # only when no score is a tensor
        given = [v._scores for v in self.variables] + [
            f._additionals for f in self.factors if getattr(f, "_additionals", None) is not None]
        tensors = [t for t in given if is_tensor(t)]
        return result_dtype(tensors or [torch.as_tensor(t) for t in given])
