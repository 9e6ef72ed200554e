"""Factor classes, one per family of the C library, plus Factor itself, whose
MAP oracle is a Python function.

A factor is described over Variables and slices of them and added to a
FactorGraph with ``fg.add(factor)``, which builds it in C at once. Most
factors take `variables`: a Variable, a VariableSlice (``x[i, :]``,
``~x[j]``...) or a list of them, flattened in C order and concatenated.

Factors with additional outputs (Pair, Dense, the sequences, trees and
automata) take their scores as arrays or tensors, kept like a variable's and
read at each solve; after a solve ``factor.value`` holds their additional
values in the same shape. The configurations and score layouts of each
family are documented in include/concord.h.

A score of -inf forbids its output in every family but Pair and Factor (a
joint state of Dense, a transition of a sequence, an edge's state pair of
a general tree, a sibling pair of an automaton or the compressor): no
configuration uses it. Which scores are -inf when the factor is added is
part of its structure, for good: later scores there are ignored (their
gradient is 0), and a factor that forbids every configuration raises
InfeasibleError when added.
"""

import functools
import sys

import numpy as np

from concord import _core
from concord.graph import as_numpy, is_tensor, links, refused_score

__all__ = ["Factor", "Xor", "XorOut", "AtMostOne", "Or", "OrOut", "AndOut", "Imply", "Budget",
           "Knapsack", "Pair", "Dense", "Sequence", "SequenceBudget", "DepTree", "Matching",
           "HeadAutomaton", "GrandparentHeadAutomaton", "GeneralTree", "GeneralTreeCounts",
           "SequenceCompressor"]


# why a factor that does not forbid outputs refuses -inf among its scores
_MINUS_INF_REFUSED = ("is not finite (-inf forbids an output only in a Dense, sequence, tree, "
                      "head automaton or compressor factor)")


def _scores(scores, shape, what):
    """Scores for a part of shape `shape`: zeros for None, else the array
    or tensor broadcast to that shape."""
    if scores is None:
        return np.zeros(shape)
    if is_tensor(scores):
        return sys.modules["torch"].broadcast_to(scores, shape)
    try:
        return np.broadcast_to(as_numpy(scores), shape)
    except ValueError:
        raise ValueError("%s: expected shape %s, got %s" % (what, tuple(shape),
                                                           np.shape(scores))) from None


def _no_negation(negated, name):
    if negated is not None:
        raise ValueError("%s factor: links cannot be negated" % name)


def _groups(graph, variables, name):
    """The state indicators of several multi-valued positions: a 2-D
    Variable or slice (one row per position) or a list of 1-D slices.
    Returns (ids, states per position)."""
    if isinstance(variables, (list, tuple)):
        parts = list(variables)
    else:
        if len(variables.shape) != 2:
            raise ValueError("%s factor: expected a 2-D variable (positions x states) or a "
                             "list of 1-D slices, got shape %s" % (name, variables.shape))
        parts = [variables[i] for i in range(variables.shape[0])]
    ids, sizes = [], []
    for part in parts:
        part_ids, negated, shape = links(graph, part)
        _no_negation(negated, name)
        if len(shape) != 1:
            raise ValueError("%s factor: each position must be a 1-D slice, got shape %s"
                             % (name, shape))
        ids.append(part_ids)
        sizes.append(part_ids.size)
    if not ids:
        raise ValueError("%s factor over no positions" % name)
    return np.concatenate(ids), sizes


class Factor:
    """A factor whose configurations come from a Python MAP oracle; also the
    base class of every factor.

    Factor(variables, map, scores=None, qp=None):
      map(a, b) receives the scores of the factor's literals a (one per
      variable, flipped for negated ones) and of its additional outputs b,
      both new float64 arrays, and returns its best configuration: u (0 or 1
      per variable), or (u, v) when it has additional outputs;
      scores: the additional outputs' scores (their number is its size);
      qp(a, b, d), optional: the solution of argmax a.u + b.v - sum(d u^2)/2
      over the factor's polytope, returned the same way. It is trusted (only
      its range is checked): a wrong point makes the solve's answer wrong.
    The oracle must be deterministic. An exception it raises stops the
    solve and is raised by the solving call.

    After ``fg.add``: ``graph``, ``ids`` (its C factor ids), ``degree``,
    ``shape`` (of its variables), ``additionals`` ((first, count) in the
    graph's additional outputs) and, after a solve, ``value``.
    """

    graph = None
    value = None

    def __init__(self, variables, map, scores=None, qp=None):
        self.variables = variables
        self.map = map
        self.qp = qp
        self.scores = scores

    def _add_to(self, fg):
        """Builds the factor into fg's C graph and records where it is."""
        first = fg.graph.num_additionals
        self.ids, self.degree, self.shape = self._build(fg)
        self.graph = fg
        self.additionals = (first, fg.graph.num_additionals - first)

    def _build(self, fg):
        """Calls the C builders; returns (C factor ids, degree, shape)."""
        ids, negated, shape = links(fg, self.variables)
        scores = None if self.scores is None else self._numpy_scores()
        size = 0 if scores is None else scores.size
        return [fg.graph.add_factor(ids, self.map, negated, size, scores, self.qp)], ids.size, shape

    def _score_parts(self):
        """The additional scores as arrays or tensors whose flattened
        concatenation is the C layout (-inf included: the C factor forbids
        those outputs, and reads later scores there as 0). Once built, the
        factor's scores must keep the size they gave it (None: zeros);
        another size is a ValueError, not scores sent to its neighbours'
        outputs or a part of them left at their former values."""
        if self.graph is None:
            return [] if self.scores is None else [self.scores]
        count = self.additionals[1]
        if self.scores is None:
            return [np.zeros(count)] if count else []
        size = int(np.prod(np.shape(self.scores), dtype=np.int64))
        if size != count:
            raise ValueError("Factor scores: expected %d values (its additional outputs), got "
                             "shape %s" % (count, tuple(np.shape(self.scores))))
        return [self.scores]

    # the names of the parts _score_parts gives, in messages ("": the
    # factor's scores are one part)
    _part_names = ("",)

    # whether -inf among the scores the factor is built with forbids those
    # outputs (see the module's docstring), rather than being refused
    _forbids = False

    def _refused_score(self, position):
        """The C library's refusal of the first of this factor's scores it
        refuses, naming the factor by its position among its graph's
        factors, the part and the place in it ("factor 2 (Sequence)'s
        transition score at [1, 0, 1] (nan) is not finite"); None when it
        takes them all, or when a part has a shape of its own (refused
        with a message of its own). Before the factor is in a graph (its
        builder refused it), by the rules of the builder: -inf is taken
        where the factor forbids by it."""
        built = self.graph is not None
        try:
            parts = [as_numpy(part) for part in self._score_parts()]
        except ValueError:
            return None
        first = self.additionals[0] if built else 0
        if built and sum(part.size for part in parts) != self.additionals[1]:
            return None
        for name, part in zip(self._part_names, parts):
            what = "factor %d (%s)'s%s" % (position, type(self).__name__,
                                           " " + name if name else "")
            if built:
                refused = refused_score(part, what, self.graph.graph, first)
            elif self._forbids:
                refused = refused_score(np.where(part == -np.inf, 0.0, part), what)
            else:
                refused = refused_score(part, what, minus_inf=_MINUS_INF_REFUSED)
            if refused is not None:
                return refused
            first += part.size
        return None

    def _numpy_scores(self):
        """The scores as one flat float64 array."""
        parts = self._score_parts()
        if not parts:
            return np.zeros(0)
        return np.concatenate([as_numpy(p).reshape(-1) for p in parts])

    def _shape_values(self, v):
        """The flat additional values v shaped like the score parts."""
        parts = self._score_parts()
        out, start = [], 0
        for part in parts:
            size = int(np.prod(np.shape(part), dtype=np.int64))
            out.append(v[start:start + size].reshape(np.shape(part)))
            start += size
        return out[0] if len(out) == 1 else tuple(out)

    def _flatten_values(self, value):
        """The inverse of _shape_values (for gold additional values)."""
        if isinstance(value, tuple):
            return np.concatenate([as_numpy(p).reshape(-1) for p in value])
        return as_numpy(value).reshape(-1)

    def __repr__(self):
        name = type(self).__name__
        if self.graph is None:
            return "%s(not in a graph)" % name
        return "%s(%d variables, %d additionals)" % (name, self.degree, self.additionals[1])


class _Logic(Factor):
    """A logic factor over binary variables (see concord_add_logic)."""

    kind = None

    def __init__(self, variables):
        self.variables = variables

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        return [fg.graph.add_logic(self.kind, ids, negated)], ids.size, shape

    def _score_parts(self):
        return []


class Xor(_Logic):
    """Exactly one of the variables is 1 (a one-hot constraint)."""
    kind = "XOR"


class XorOut(_Logic):
    """The last variable equals the sum of the others, at most one of which
    is 1."""
    kind = "XOROUT"


class AtMostOne(_Logic):
    """At most one of the variables is 1."""
    kind = "ATMOSTONE"


class Or(_Logic):
    """At least one of the variables is 1."""
    kind = "OR"


class OrOut(_Logic):
    """The last variable is the OR of the others."""
    kind = "OROUT"


class AndOut(_Logic):
    """The last variable is the AND of the others."""
    kind = "ANDOUT"


class Imply(_Logic):
    """The AND of all variables but the last implies the last."""
    kind = "IMPLY"


class Budget(Factor):
    """At most `budget` of the variables are 1 (exactly, when exact)."""

    def __init__(self, variables, budget, exact=False):
        self.variables = variables
        self.budget = budget
        self.exact = exact

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        return [fg.graph.add_budget(ids, self.budget, self.exact, negated)], ids.size, shape

    def _score_parts(self):
        return []


class Knapsack(Factor):
    """sum_i costs[i] * variable_i <= budget (the continuous knapsack
    polytope: its vertices may be fractional)."""

    def __init__(self, variables, costs, budget):
        self.variables = variables
        self.costs = costs
        self.budget = budget

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        # checked by the builder as scores are (no strings, complex or masked costs)
        costs = as_numpy(self.costs) if is_tensor(self.costs) else self.costs
        return [fg.graph.add_knapsack(ids, costs, self.budget, negated)], ids.size, shape

    def _score_parts(self):
        return []


class Pair(Factor):
    """Pairwise (Ising) factors: for every position k of a and b (of equal
    sizes), a PAIR scoring scores[k] when a[k] and b[k] are both 1. scores
    has a's shape (or broadcasts to it); value is P(both are 1), likewise
    shaped."""

    def __init__(self, a, b, scores):
        self.a = a
        self.b = b
        self.scores = scores

    def _build(self, fg):
        a_ids, a_neg, shape = links(fg, self.a)
        b_ids, b_neg, _ = links(fg, self.b)
        _no_negation(a_neg if a_neg is not None else b_neg, "PAIR")
        if a_ids.size != b_ids.size:
            raise ValueError("PAIR factors: a has %d variables, b %d" % (a_ids.size, b_ids.size))
        same = np.flatnonzero(a_ids == b_ids)
        if same.size:
            raise ValueError("PAIR factor: variable %d appears more than once" % a_ids[same[0]])
        self.shape_of_scores = shape
        scores = self._numpy_scores()
        refused = refused_score(scores.reshape(shape), "PAIR")
        if refused is not None:  # before the first of several C calls
            raise refused
        return ([fg.graph.add_pair(int(i), int(j), s) for i, j, s in zip(a_ids, b_ids, scores)],
                2, (2,))

    def _score_parts(self):
        return [_scores(self.scores, self.shape_of_scores, "PAIR scores")]

    def __repr__(self):
        if self.graph is None:
            return "Pair(not in a graph)"
        return "Pair(%d pairs)" % len(self.ids)


class Dense(Factor):
    """A score table over the joint states of multi-valued variables:
    variables is a list of 1-D slices (each the states of one variable, e.g.
    rows of ``fg.multi_variable_from(...)``) or a 2-D slice (one variable
    per row); scores has shape (states of the first, of the second, ...).
    -inf forbids a joint state (see the module's docstring). value:
    P(joint state), shaped like scores."""

    _forbids = True

    def __init__(self, variables, scores=None):
        self.variables = variables
        self.scores = scores

    def _build(self, fg):
        ids, self.num_states = _groups(fg, self.variables, "DENSE")
        table = self._numpy_scores()
        return [fg.graph.add_dense(self.num_states, ids, table)], ids.size, (ids.size,)

    def _score_parts(self):
        return [_scores(self.scores, tuple(self.num_states), "DENSE scores")]


class Sequence(Factor):
    """A chain of positions, one state each: x is (length, states), row i
    the state indicators of position i. transitions[i-1, p, s] scores
    position i-1 in state p followed by position i in state s (shape
    (length-1, states, states), or broadcast to it); start and stop score
    the first and last states; -inf forbids a transition (see the module's
    docstring). value: (start, transitions, stop) marginals.
    """

    name = "SEQUENCE"
    _part_names = ("start", "transition", "stop")
    _forbids = True

    def __init__(self, x, transitions=None, start=None, stop=None):
        self.variables = x
        self.transitions = transitions
        self.start = start
        self.stop = stop

    def _build(self, fg):
        ids, states = _groups(fg, self.variables, self.name)
        if len(set(states)) != 1:
            raise ValueError("%s factor: every position needs the same number of states "
                             "(use the low-level Graph.add_sequence for others)" % self.name)
        self.length, self.states = len(states), states[0]
        return ([self._add(fg.graph, states, ids, self._numpy_scores())], ids.size,
                (len(states), states[0]))

    def _add(self, graph, states, ids, scores):
        return graph.add_sequence(states, ids, scores)

    def _score_parts(self):
        s = self.states
        return [_scores(self.start, (s,), "start scores"),
                _scores(self.transitions, (self.length - 1, s, s), "transition scores"),
                _scores(self.stop, (s,), "stop scores")]


class SequenceBudget(Sequence):
    """A Sequence in which at most `budget` positions are in state 0."""

    name = "SEQUENCE_BUDGET"

    def __init__(self, x, budget, transitions=None, start=None, stop=None):
        super().__init__(x, transitions, start, stop)
        self.budget = budget

    def _add(self, graph, states, ids, scores):
        return graph.add_sequence_budget(states, ids, self.budget, scores)


class DepTree(Factor):
    """Dependency trees over n words: x is (n, n), x[h, m] the arc from word
    h to word m (h != m) and x[m, m] the arc from the root to word m (the
    layout of torch-struct; lp-sparsemap's packed layout is its transpose).
    projective: no crossing arcs (Eisner); single_root: exactly one word
    attached to the root."""

    def __init__(self, x, projective=False, single_root=False):
        self.variables = x
        self.projective = projective
        self.single_root = single_root

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        _no_negation(negated, "TREE")
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError("TREE factor: expected an (n, n) variable, got shape %s" % (shape,))
        n = shape[0]
        heads, modifiers = tree_arcs(n)
        return ([fg.graph.add_tree(n + 1, heads, modifiers, ids, self.projective,
                                   self.single_root)], ids.size, shape)

    def _score_parts(self):
        return []


@functools.lru_cache(maxsize=256)
def tree_arcs(n):
    """The arcs of DepTree's (n, n) layout in C order as (heads,
    modifiers), read-only int32 arrays: row h holds word h + 1's arcs, the
    diagonal the root's (0). Made once per n."""
    rows, cols = np.indices((n, n), dtype=np.int32)
    heads = np.where(rows == cols, 0, rows + 1).reshape(-1)
    modifiers = (cols + 1).reshape(-1)
    heads.flags.writeable = modifiers.flags.writeable = False
    return heads, modifiers


class Matching(Factor):
    """A bipartite matching: x is (rows, cols), x[i, j] = 1 when row i is
    matched to column j; each row and column at most once, every row
    exactly once when every_row, every column when every_col."""

    def __init__(self, x, every_row=False, every_col=False):
        self.variables = x
        self.every_row = every_row
        self.every_col = every_col

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        _no_negation(negated, "MATCHING")
        if len(shape) != 2:
            raise ValueError("MATCHING factor: expected a 2-D variable, got shape %s" % (shape,))
        return ([fg.graph.add_matching(shape[0], shape[1], ids, self.every_row, self.every_col)],
                ids.size, shape)

    def _score_parts(self):
        return []


class HeadAutomaton(Factor):
    """Consecutive siblings: modifiers are a head's arcs to its candidate
    modifiers on one side, nearest first; scores (flat, (n+1)(n+2)/2 for n
    modifiers) score consecutive pairs as concord_add_head_automaton says."""

    _forbids = True

    def __init__(self, modifiers, scores=None):
        self.variables = modifiers
        self.scores = scores

    def _build(self, fg):
        ids, negated, shape = links(fg, self.variables)
        _no_negation(negated, "HEAD_AUTOMATON")
        self.n_scores = (ids.size + 1) * (ids.size + 2) // 2
        return [fg.graph.add_head_automaton(ids, self._numpy_scores())], ids.size, shape

    def _score_parts(self):
        return [_scores(self.scores, (self.n_scores,), "HEAD_AUTOMATON scores")]


class GrandparentHeadAutomaton(Factor):
    """A HeadAutomaton whose head takes exactly one of its incoming arcs
    (grandparents); scores (flat): grandparent-modifier pairs, then
    siblings (concord_add_grandparent_head_automaton)."""

    _forbids = True

    def __init__(self, grandparents, modifiers, scores=None):
        self.grandparents = grandparents
        self.modifiers = modifiers
        self.scores = scores

    def _build(self, fg):
        g_ids, g_neg, _ = links(fg, self.grandparents)
        m_ids, m_neg, _ = links(fg, self.modifiers)
        _no_negation(g_neg if g_neg is not None else m_neg, "GRANDPARENT_HEAD_AUTOMATON")
        n = m_ids.size
        self.n_scores = g_ids.size * n + (n + 1) * (n + 2) // 2
        ids = np.concatenate([g_ids, m_ids])
        return ([fg.graph.add_grandparent_head_automaton(g_ids.size, ids, self._numpy_scores())],
                ids.size, ids.shape)

    def _score_parts(self):
        return [_scores(self.scores, (self.n_scores,), "GRANDPARENT_HEAD_AUTOMATON scores")]


class GeneralTree(Factor):
    """A tree-shaped Markov random field: nodes is a 2-D variable (one row
    of state indicators per node) or a list of 1-D slices; parents[0] = -1,
    parents[i] the parent of node i; scores (flat): one (parent state, node
    state) table per node i >= 1 (concord_add_general_tree)."""

    name = "GENERAL_TREE"
    _forbids = True

    def __init__(self, nodes, parents, scores=None):
        self.variables = nodes
        self.parents = parents
        self.scores = scores

    def _build(self, fg):
        ids, self.num_states = _groups(fg, self.variables, self.name)
        parents = np.asarray(self.parents)
        states = np.asarray(self.num_states)
        valid = (parents.dtype.kind in "iu" and parents.shape == states.shape
                 and parents[0] == -1 and (parents[1:] >= 0).all()
                 and (parents[1:] < states.size).all())
        if not valid:
            raise ValueError("%s factor: parents must list -1 then one node per node (integers)"
                             % self.name)
        self.n_scores = int(np.sum(states[parents[1:]] * states[1:]))
        ids = self._more_ids(fg, ids)
        return [self._add(fg.graph, parents, ids)], ids.size, ids.shape

    def _more_ids(self, fg, ids):
        return ids

    def _add(self, graph, parents, ids):
        return graph.add_general_tree(self.num_states, parents, ids, self._numpy_scores())

    def _score_parts(self):
        return [_scores(self.scores, (self.n_scores,), "%s scores" % self.name)]


class GeneralTreeCounts(GeneralTree):
    """A GeneralTree that also counts its nodes in state 0: counts is a 1-D
    slice of n_nodes + 1 indicators (count = 0, 1, ..., n_nodes)."""

    name = "GENERAL_TREE_COUNTS"

    def __init__(self, nodes, counts, parents, scores=None):
        super().__init__(nodes, parents, scores)
        self.counts = counts

    def _more_ids(self, fg, ids):
        count_ids, negated, _ = links(fg, self.counts)
        _no_negation(negated, self.name)
        return np.concatenate([ids, count_ids])

    def _add(self, graph, parents, ids):
        return graph.add_general_tree_counts(self.num_states, parents, ids, self._numpy_scores())


class SequenceCompressor(Factor):
    """Sentence compression: words (1-D) are kept or not, sentence (one
    variable) is 1 exactly when some word is; scores (flat, (n+1)(n+2)/2)
    score consecutive kept words (concord_add_sequence_compressor)."""

    _forbids = True

    def __init__(self, words, sentence, scores=None):
        self.words = words
        self.sentence = sentence
        self.scores = scores

    def _build(self, fg):
        w_ids, w_neg, _ = links(fg, self.words)
        s_ids, s_neg, _ = links(fg, self.sentence)
        _no_negation(w_neg if w_neg is not None else s_neg, "SEQUENCE_COMPRESSOR")
        if s_ids.size != 1:
            raise ValueError("SEQUENCE_COMPRESSOR factor: sentence must be one variable")
        self.n_scores = (w_ids.size + 1) * (w_ids.size + 2) // 2
        ids = np.concatenate([w_ids, s_ids])
        return [fg.graph.add_sequence_compressor(ids, self._numpy_scores())], ids.size, ids.shape

    def _score_parts(self):
        return [_scores(self.scores, (self.n_scores,), "SEQUENCE_COMPRESSOR scores")]
