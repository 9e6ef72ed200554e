"""concord: inference in constrained factor graphs (AD3 LP-MAP, LP-SparseMAP
with its backward pass, losses).

The compiled low-level module is concord._core (one call per C function).
"""
from concord._core import version as _library_version

__version__ = _library_version()
