"""lp-sparsemap's ``lpsmap.ad3ext.sequence.PFactorSequence``: a chain of
positions whose additional log-potentials are the transitions only (no
start or stop scores, unlike AD3's)."""

import numpy as np

from concord.ad3._checks import as_ints
from concord.ad3.extensions import _Structured

__all__ = ["PFactorSequence"]


class PFactorSequence(_Structured):
    """initialize(num_states): variables, the states of each position in
    turn; additional log-potentials, for each position i >= 1 the
    (num_states[i-1], num_states[i]) transition table, previous state
    major (-inf forbids a transition). A concord SEQUENCE whose start and
    stop scores stay 0. get_sparse_solution gives each configuration as its
    state per position, as lp-sparsemap does."""

    def initialize(self, num_states):
        """Lays out the chain."""
        states = as_ints(num_states, "num_states")
        transitions = sum(p * c for p, c in zip(states, states[1:]))
        first = states[0] if states else 0
        index = range(first, first + transitions)
        self._lay_out(sum(states), lambda g, v, s: g.add_sequence(states, v, s), index)
        self._states = states

    def _configuration(self, values):
        """The state of each position."""
        starts = np.cumsum([0] + list(self._states[:-1]))
        return [int(np.argmax(values[start:start + count]))
                for start, count in zip(starts, self._states)]
