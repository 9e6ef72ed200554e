"""A drop-in for lp-sparsemap (``import lpsmap``), solved by concord.

Scripts and tests written for lp-sparsemap run unchanged once ``lpsmap``
resolves to this package: the factor descriptions (Xor, Or, AtMostOne,
Imply, XorOut, OrOut, AndOut, Budget, Pair, Sequence, DepTree), the numpy
FactorGraph and, when PyTorch imports, TorchFactorGraph, whose solve is
differentiable through concord's implicit backward pass; the low-level
``lpsmap.ad3qp`` and ``lpsmap.ad3ext`` modules too. docs/python.md lists
where results differ from lp-sparsemap's.
"""

# the low-level modules are attributes once the package is imported, as in lp-sparsemap
import concord.lpsmap.ad3ext.sequence  # noqa: F401
import concord.lpsmap.ad3ext.tree  # noqa: F401
import concord.lpsmap.ad3qp.base  # noqa: F401
import concord.lpsmap.ad3qp.factor_graph  # noqa: F401
from concord.lpsmap.api.api import FactorGraph
from concord.lpsmap.api.factors import (AndOut, AtMostOne, Budget, Imply, Or, OrOut, Pair, Xor,
                                        XorOut)
from concord.lpsmap.api.factors_extension import DepTree, Sequence
from concord.lpsmap.version import __version__

__all__ = ["FactorGraph", "Xor", "Or", "AtMostOne", "Imply", "XorOut", "OrOut", "AndOut",
           "Budget", "Pair", "Sequence", "DepTree"]

try:
    from concord.lpsmap.api.autograd import TorchFactorGraph
    __all__.append("TorchFactorGraph")
except ImportError:
    pass
