"""lp-sparsemap's ``lpsmap.api.factors_extension``: sequences and
dependency trees over 2-D Variables."""

import numpy as np

from concord.lpsmap.ad3ext.sequence import PFactorSequence
from concord.lpsmap.ad3ext.tree import PFactorTree

__all__ = ["Sequence", "DepTree"]


def _matrix_shape(name, variables):
    """The shape of a factor's variables, which must be 2-D."""
    if len(variables.shape) != 2:
        raise ValueError("%s: variables of shape %s; it needs a 2-D variable"
                         % (name, variables.shape))
    return variables.shape


class Sequence:
    """A chain: variables (length, states), one state per position;
    additionals (length - 1, states, states) transition scores (previous
    state major)."""

    def __init__(self, variables, additionals):
        self._variables = variables
        self._additionals = additionals

    def _construct(self, fg, pvars):
        length, n_states = _matrix_shape("Sequence", self._variables)
        if length == 0:
            raise ValueError("Sequence: no positions (variables of shape %s)"
                             % (self._variables.shape,))
        shape, expected = tuple(np.shape(self._additionals)), (length - 1, n_states, n_states)
        if shape != expected:
            raise ValueError("Sequence: transition scores of shape %s, expected %s"
                             % (shape, expected))
        factor = PFactorSequence()
        factor.initialize([n_states] * length)
        fg.declare_factor(factor, pvars, owned_by_graph=True)
        return [factor], [self._additionals]


class DepTree:
    """Dependency trees over n words: variables (n, n). packed=True: u[m-1,
    h-1] is the arc h -> m, u[m-1, m-1] the arc root -> m (row: modifier,
    column: head); packed=False (the default): row m-1 holds the arcs into
    word m from heads 0 (the root, first column) .. n, m excluded.
    projective: no crossing arcs and exactly one word attached to the root;
    otherwise any arborescence."""

    def __init__(self, variables, packed=False, projective=False):
        self._variables = variables
        self.projective = projective
        self.packed = packed

    def _construct(self, fg, pvars):
        length, heads = _matrix_shape("DepTree", self._variables)
        if length != heads:
            raise ValueError("DepTree: variables of shape %s; a tree over n words needs (n, n)"
                             % (self._variables.shape,))
        factor = PFactorTree()
        factor.initialize(self.projective, self.packed, length)
        fg.declare_factor(factor, pvars, owned_by_graph=True)
        return [factor], []
