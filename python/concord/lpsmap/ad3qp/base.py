"""lp-sparsemap's ``lpsmap.ad3qp.base``: the variables and factors of
concord.ad3.base (with solve_qp, solve_qp_adjusted, get_sparse_solution)."""

from concord.ad3.base import PBinaryVariable, PFactor, PGenericFactor, PMultiVariable

__all__ = ["PBinaryVariable", "PMultiVariable", "PFactor", "PGenericFactor"]
