"""AD3's ``ad3.extensions``: the structured factors of AD3's examples, made
of concord's factor families.

Each is made with ``Cls()``, bound with ``PFactorGraph.declare_factor``,
laid out with ``initialize(...)`` (before or after declaring it, as AD3
allows) and scored with ``set_additional_log_potentials``. The additional
log-potentials are in AD3's layout; where concord's family orders its
outputs otherwise (compressor bigrams, head-automaton siblings), the
factor maps between the two. ``initialize`` checks the layout at once by
building the factor on a scratch graph, so a bad layout raises there.
"""

import numpy as np

from concord import _core
from concord.ad3._checks import as_int, as_ints, as_list
from concord.ad3.base import ForbiddenOutputs, PGenericFactor

__all__ = ["PFactorSequence", "PFactorSequenceCompressor", "PFactorCompressionBudget",
           "PFactorBinaryTree", "PFactorBinaryTreeCounts", "PFactorGeneralTree",
           "PFactorGeneralTreeCounts", "PFactorTree", "PFactorHeadAutomaton"]


def pair_index(n_positions, m, s):
    """concord's index of the pair (m, s), 0 <= m < s <= n_positions + 1,
    among the chain pairs of n_positions positions (ordered by m, then s)."""
    top = n_positions + 1
    return m * top - m * (m - 1) // 2 + (s - m - 1)


class _Structured(ForbiddenOutputs, PGenericFactor):
    """An extension factor: `_make(graph, variables, scores)` adds its C
    factor, with the scores that forbid its outputs (None: none does);
    `_index` maps its additional log-potentials onto the C factor's outputs
    (None: the same layout). A log-potential of -inf forbids its output,
    as in AD3's dynamic programs."""

    def __init__(self, allocate=True):
        super().__init__()
        self._make = None
        self._index = None
        self._degree = None
        self._c_additionals = None

    def _lay_out(self, degree, make, index=None):
        """Records the factor's layout and checks it on a scratch graph of
        `degree` variables (the C builder's errors are raised here)."""
        scratch = _core.Graph()
        scratch.add_variables(degree)
        factor = make(scratch, np.arange(degree), None)
        self._make = make
        self._index = None if index is None else np.asarray(index, dtype=np.int64)
        self._degree = degree
        self._c_additionals = scratch.factor_additionals(factor)[1]
        self._layout_changed()

    def _build(self, graph, variables):
        if self._make is None:
            raise ValueError("%s: initialize() was never called" % type(self).__name__)
        if len(variables) != self._degree:
            raise ValueError("%s: initialized for %d variables, bound to %d"
                             % (type(self).__name__, self._degree, len(variables)))
        return self._make(graph, variables, self._forbidding_scores())

    def _additional_index(self):
        return self._index, self._c_additionals

    def _single_factor_solver(self):
        """As for any factor, and before declare_factor too (AD3 and
        lp-sparsemap allow calls then)."""
        if self._graph is not None:
            return super()._single_factor_solver()
        return self._solver_alone()

    def _single_factor_degree(self):
        if self._graph is not None:
            return len(self._variables)
        if self._make is None:
            raise ValueError("%s: initialize() was never called" % type(self).__name__)
        return self._degree

    def _expected_additionals(self):
        if self._make is None:
            return None
        return self._c_additionals if self._index is None else len(self._index)


class PFactorSequence(_Structured):
    """A chain of positions, one state each (AD3's FactorSequence):
    initialize(num_states). Variables: the states of position 0, then 1...
    Additional log-potentials: start -> position 0, the transition tables
    (previous state major), last position -> stop; -inf forbids a
    transition, as in AD3."""

    def initialize(self, num_states):
        """Lays out the chain; num_states: the states of each position."""
        states = as_ints(num_states, "num_states")
        self._lay_out(sum(states), lambda g, v, s: g.add_sequence(states, v, s))


class PFactorSequenceCompressor(_Structured):
    """Sentence compression (AD3's FactorSequenceCompressor):
    initialize(length, left_positions, right_positions). Variables: the
    kept indicators of tokens 1 .. length-1, then the sentence indicator.
    Additional log-potential k scores token right_positions[k] following
    token left_positions[k] among the kept ones (0 the start, length the
    end); every pair 0 <= left < right <= length must be given once."""

    def initialize(self, length, left_positions, right_positions):
        """Lays out the compressor and the order of its bigram scores."""
        length = as_int(length, "length")
        left = as_ints(left_positions, "left_positions")
        right = as_ints(right_positions, "right_positions")
        if len(left) != len(right):
            raise ValueError("left_positions and right_positions differ in length")
        words = length - 1
        index = _complete_pairs(words, list(zip(left, right)), "SequenceCompressor")
        self._lay_out(length, lambda g, v, s: g.add_sequence_compressor(v, s), index)


class PFactorCompressionBudget(_Structured):
    """A chain of kept or dropped tokens with a budget (AD3's
    FactorCompressionBudget): initialize(length, budget, pcounts_for_budget,
    bigram_positions). Variables: the tokens, then one bigram indicator per
    bigram position (concord_add_compression_budget)."""

    def initialize(self, length, budget, pcounts_for_budget, bigram_positions):
        """Lays out the chain, its budget and its bigram indicators
        (pcounts_for_budget: whether each position counts, AD3's name)."""
        length = as_int(length, "length")
        budget = as_int(budget, "budget")
        counted = [bool(x) for x in pcounts_for_budget]
        bigrams = as_ints(bigram_positions, "bigram_positions")
        self._lay_out(length + len(bigrams), lambda g, v, s: g.add_compression_budget(
            length, budget, v, counted, bigrams, s))


class PFactorBinaryTree(_Structured):
    """A tree of binary nodes (AD3's FactorBinaryTree): initialize(parents),
    parents[0] = -1. Variables: one per node. Additional log-potentials: a
    2 x 2 (parent state, node state) table per non-root node."""

    def initialize(self, parents):
        """Lays out the tree."""
        parents = as_ints(parents, "parents")
        self._lay_out(len(parents), lambda g, v, s: g.add_binary_tree(parents, v, s))


class PFactorBinaryTreeCounts(_Structured):
    """A binary tree with count scores (AD3's FactorBinaryTreeCounts):
    initialize(parents, pcounts_for_budget, phas_count_scores=None,
    max_num_bins=None). Additional log-potentials: the edge tables, then
    for each node with count scores (default: the root) one score per
    count 0 .. size of its subtree, the count being the number of its
    nodes on that count for the budget. max_num_bins merges counts from
    max_num_bins - 1 up, given or not with phas_count_scores (AD3 applies
    it only with them)."""

    def initialize(self, parents, pcounts_for_budget, phas_count_scores=None, max_num_bins=None):
        """Lays out the tree and its count scores (the arguments keep AD3's
        names)."""
        parents = as_ints(parents, "parents")
        counted = [bool(x) for x in pcounts_for_budget]
        scored = None if phas_count_scores is None else [bool(x) for x in phas_count_scores]
        bins = 0 if max_num_bins is None else as_int(max_num_bins, "max_num_bins")
        self._lay_out(len(parents), lambda g, v, s: g.add_binary_tree_counts(
            parents, v, counted, scored, bins, s))


class PFactorGeneralTree(_Structured):
    """A tree-shaped MRF (AD3's FactorGeneralTree): initialize(parents,
    num_states). Variables: each node's states in turn. Additional
    log-potentials: a (parent state, node state) table per non-root node."""

    def initialize(self, parents, num_states):
        """Lays out the tree."""
        parents = as_ints(parents, "parents")
        states = as_ints(num_states, "num_states")
        self._lay_out(sum(states), lambda g, v, s: g.add_general_tree(states, parents, v, s))


class PFactorGeneralTreeCounts(_Structured):
    """A general tree that counts its nodes in state 0 (AD3's
    FactorGeneralTreeCounts): the variables continue with n + 1 count
    indicators (count 0 .. n)."""

    def initialize(self, parents, num_states):
        """Lays out the tree and its count indicators."""
        parents = as_ints(parents, "parents")
        states = as_ints(num_states, "num_states")
        self._lay_out(sum(states) + len(states) + 1,
                      lambda g, v, s: g.add_general_tree_counts(states, parents, v, s))


class PFactorTree(_Structured):
    """Dependency trees (AD3's FactorTree): initialize(length, arcs,
    validate=True), arcs a list of (head, modifier) tuples over nodes 0
    (the root) .. length-1, one per bound variable; the root may have
    several children."""

    def initialize(self, length, arcs, validate=True):
        """Lays out the arcs (after declare_factor, which the validation
        compares with)."""
        length = as_int(length, "length")
        as_list(arcs, "arcs")
        if arcs is None:
            raise TypeError("'NoneType' object is not iterable")
        heads, modifiers = [], []
        for arc in arcs:
            if not isinstance(arc, tuple):
                raise TypeError("Expected tuple, got %s" % type(arc).__name__)
            head, modifier = arc
            if validate:
                if not 0 <= head < length:
                    raise ValueError("Invalid arc: head must be in [0, length)")
                if not 1 <= modifier < length:
                    raise ValueError("Invalid arc: modifier must be in [1, length)")
                if head == modifier:
                    raise ValueError("Invalid arc: head cannot be the same as the modifier")
            heads.append(as_int(head, "head"))
            modifiers.append(as_int(modifier, "modifier"))
        if validate and len(arcs) != self.get_degree():
            raise ValueError("Number of arcs differs from number of bound variables.")
        self._lay_out(len(arcs), lambda g, v, _: g.add_tree(length, heads, modifiers, v))


class PFactorHeadAutomaton(_Structured):
    """One head's modifiers on one side with consecutive-sibling scores
    (AD3's FactorHeadAutomaton): initialize(length, siblings,
    validate=True); length is 1 + the number of bound variables (arcs to
    the words at distance 1, 2, ...), siblings a list of (head, modifier,
    sibling) tuples, one per additional log-potential, covering every
    pair of consecutive positions (start and stop included) once."""

    def initialize(self, length, siblings, validate=True):
        """Lays out the automaton and the order of its sibling scores."""
        length = as_int(length, "length")
        as_list(siblings, "siblings")
        if siblings is None:
            raise TypeError("'NoneType' object is not iterable")
        pairs = []
        for sibling in siblings:
            if not isinstance(sibling, tuple):
                raise TypeError("Expected tuple, got %s" % type(sibling).__name__)
            h, m, s = (as_int(x, "sibling") for x in sibling)
            pairs.append((m - h, s - h) if s > h else (h - m, h - s))
        if validate:
            if len(siblings) != length * (length + 1) // 2:
                raise ValueError("Inconsistent length passed.")
            if length != self.get_degree() + 1:
                raise ValueError("Number of variables doesn't match.")
        index = _complete_pairs(length - 1, pairs, "HeadAutomaton")
        self._lay_out(length - 1, lambda g, v, s: g.add_head_automaton(v, s), index)


def _complete_pairs(n_positions, pairs, name):
    """concord's index of each (m, s) pair of a chain over n_positions,
    checking that every pair 0 <= m < s <= n_positions + 1 is given once."""
    top = n_positions + 1
    index = []
    for m, s in pairs:
        if not 0 <= m < s <= top:
            raise ValueError("%s: pair (%d, %d) out of range (0 <= m < s <= %d)"
                             % (name, m, s, top))
        index.append(pair_index(n_positions, m, s))
    if len(set(index)) != len(index) or len(index) != (top * (top + 1)) // 2:
        raise ValueError("%s: every pair (m, s), 0 <= m < s <= %d, must be given once"
                         % (name, top))
    return index
