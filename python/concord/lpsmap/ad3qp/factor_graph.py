"""lp-sparsemap's ``lpsmap.ad3qp.factor_graph``: concord.ad3's PFactorGraph,
which has lp-sparsemap's solve_qp_ad3, jacobian_vec, set_log_potentials,
set_all_additionals, set_inner_iter and set_autodetect_acyclic."""

from concord.ad3.factor_graph import PFactorGraph

__all__ = ["PFactorGraph"]
