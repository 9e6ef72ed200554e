"""concord: inference in constrained factor graphs.

LP-MAP by AD3, exact MAP by branch and bound, LP-SparseMAP (sparse,
differentiable structured inference) with its implicit backward pass, the SparseMAP and structured hinge losses,
over factor graphs built from NumPy arrays (or PyTorch tensors):

    import numpy as np, concord
    fg = concord.FactorGraph()
    x = fg.variable_from(np.array([0.75, 1.25, -0.5]))
    fg.add(concord.Xor(x))
    fg.solve()            # LP-SparseMAP
    x.value               # array([0.25, 0.75, 0.  ])

- concord.FactorGraph, the factor classes (concord.factors), solve_batch,
  read_fg, read_uai: the pythonic API;
- concord.torch: autograd for tensor scores, SparseMAP layers;
- concord._core: the low-level module, one call per C function (Graph,
  Solver, solve_batch, Settings, Reader), for layers built on top.

help() on each of them documents it; docs/python.md in the source
repository documents it all in one place.
"""
from concord._core import (CallbackError, ConcordError, Decoding, ExactInfo, FileError,
                           InfeasibleError, Info, InvalidArgumentError, NumericError, ParseError, Progress,
                           Settings)
from concord._core import version as _library_version
from concord.factors import (AndOut, AtMostOne, Budget, Dense, DepTree, Factor, GeneralTree,
                             GeneralTreeCounts, GrandparentHeadAutomaton, HeadAutomaton, Imply,
                             Knapsack, Matching, Or, OrOut, Pair, Sequence, SequenceBudget,
                             SequenceCompressor, Xor, XorOut)
from concord.graph import (FactorGraph, OutOfRangeError, Variable, VariableSlice, read_fg,
                           read_uai, solve_batch)

__version__ = _library_version()

__all__ = ["FactorGraph", "Variable", "VariableSlice", "solve_batch", "read_fg", "read_uai",
           "Factor", "Xor", "XorOut", "AtMostOne", "Or", "OrOut", "AndOut", "Imply", "Budget",
           "Knapsack", "Pair", "Dense", "Sequence", "SequenceBudget", "DepTree", "Matching",
           "HeadAutomaton", "GrandparentHeadAutomaton", "GeneralTree", "GeneralTreeCounts",
           "SequenceCompressor", "Settings", "Info", "ExactInfo", "Decoding", "Progress",
           "ConcordError", "InvalidArgumentError", "ParseError", "InfeasibleError", "NumericError",
           "FileError", "CallbackError", "OutOfRangeError"]
