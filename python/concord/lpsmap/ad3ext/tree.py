"""lp-sparsemap's ``lpsmap.ad3ext.tree.PFactorTree``: dependency trees over
a sentence of `length` words, all n^2 arcs laid out as a square."""

import numpy as np

from concord.ad3._checks import as_int
from concord.ad3.extensions import _Structured

__all__ = ["PFactorTree"]


def square_arcs(length, packed):
    """(heads, modifiers) of the arcs in lp-sparsemap's order, modifier
    major. packed: row m - 1 holds the arcs into word m from heads 1 ..
    length, the root in place of m itself; otherwise from heads 0 ..
    length except m."""
    heads, modifiers = [], []
    for m in range(1, length + 1):
        for h in range(1 if packed else 0, length + 1):
            if h == m and not packed:
                continue
            heads.append(0 if h == m else h)
            modifiers.append(m)
    return heads, modifiers


class PFactorTree(_Structured):
    """initialize(projective, packed, length): projective trees (Eisner,
    exactly one word attached to the root, as lp-sparsemap's) or any
    arborescence (several words may attach to the root).
    get_sparse_solution gives each configuration as the head of each word,
    -1 for the root (position 0), as lp-sparsemap does."""

    def initialize(self, projective, packed, length):
        """Lays out the arcs."""
        length = as_int(length, "length")
        projective = bool(projective)
        heads, modifiers = square_arcs(length, bool(packed))
        self._lay_out(len(heads), lambda g, v, _: g.add_tree(length + 1, heads, modifiers, v,
                                                             projective, projective))
        self._arcs = (np.asarray(heads), np.asarray(modifiers), length)

    def _configuration(self, values):
        """The head of each word, -1 for the root."""
        heads, modifiers, length = self._arcs
        out = [-1] * (length + 1)
        chosen = np.asarray(values) > 0.5
        for h, m in zip(heads[chosen], modifiers[chosen]):
            out[m] = int(h)
        return out
