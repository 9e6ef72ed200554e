"""The pythonic layer: factor graphs built from arrays, solved, read back as arrays.

A ``FactorGraph`` holds variables created from score arrays
(``variable_from``), each an array of binary variables with the scores'
shape, and factors over slices of them (``add``). ``solve`` (LP-SparseMAP),
``solve_map`` (LP-MAP by AD3) and ``decode`` set every variable's ``value``,
an array of its shape (None after a solve that ended without a solution:
see has_solution). Scores are read when a solve starts, so a graph is
built once and solved again after its score arrays change.

Scores may be NumPy arrays (any float dtype; float64 C-contiguous arrays are
read in place) or PyTorch tensors: with tensors, ``solve`` is differentiable
(concord.torch) and values are tensors of ``result_dtype`` of the graph's
score tensors.

The graph is built in C as it is described: every ``add`` calls the C
builder at once, so a bad index or size raises ValueError with the C
library's message where the mistake is made.
"""

import functools
import sys

import numpy as np

from concord import _core

__all__ = ["FactorGraph", "Variable", "VariableSlice", "OutOfRangeError", "solve_batch",
           "read_fg", "read_uai"]


def is_tensor(value):
    """True for a PyTorch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def as_numpy(scores):
    """Scores as a float64 NumPy array (a tensor is detached and copied to
    the CPU; a float64 array is returned as is). Complex scores are a
    TypeError: converting them would drop their imaginary parts; so are
    strings, dates and other objects, and masked arrays a ValueError
    (_core.real_array)."""
    if is_tensor(scores):
        _check_real(scores.dtype, scores.is_complex())
        return scores.detach().to("cpu", dtype=sys.modules["torch"].float64).numpy()
    return np.asarray(_core.real_array(scores, "scores"), dtype=np.float64)


def refused_score(values, what, graph=None, first=0, minus_inf=None):
    """The C library's refusal (InvalidArgumentError) of the first score of
    the array `values` it refuses, naming its position in the array's
    shape ("what score at [2, 0] (nan) is not finite"); None when it takes
    them all. Variable scores, or with graph (a _core.Graph) the scores of
    its additional outputs first, first+1, ...; minus_inf: the reason
    given for -inf instead of the library's."""
    found = (_core.refused_score(values) if graph is None
             else graph.refused_additional_score(first, values))
    if found is None:
        return None
    index, value, why = found
    if minus_inf is not None and value == -np.inf:
        why = minus_inf
    where = ""
    if values.ndim:
        where = " at %s" % [int(i) for i in np.unravel_index(index, values.shape)]
    return _core.InvalidArgumentError(_core.EINVAL,
                                      "%s score%s (%g) %s" % (what, where, value, why))


def as_float64(scores):
    """A score tensor as the solver reads it, float64 (exact for every real
    dtype but integers beyond 2^53), still in the autograd graph. Complex
    scores are a TypeError."""
    _check_real(scores.dtype, scores.is_complex())
    return scores.to(sys.modules["torch"].float64)


def _check_real(dtype, complex_):
    """Refuses scores of a complex dtype (complex_: whether it is one)."""
    if complex_:
        raise TypeError("scores must be real numbers, not %s" % (dtype,))


def has_solution(info):
    """Whether a solve that ended with `info` has a solution: not when it
    proved the constraints infeasible (status "infeasible"), nor when it
    found no assignment (value -inf: exact MAP or MPLP stopped before
    finding one)."""
    return info.status != "infeasible" and info.value != -np.inf


def result_dtype(tensors):
    """The dtype of the results computed from score tensors: the promotion
    of their dtypes (torch.promote_types), or torch.get_default_dtype()
    when that is an integer or bool dtype (scores reach the solver in
    float64 whatever their dtype)."""
    torch = sys.modules["torch"]
    dtype = functools.reduce(torch.promote_types, [t.dtype for t in tensors])
    _check_real(dtype, dtype.is_complex)
    return dtype if dtype.is_floating_point else torch.get_default_dtype()


def like(values, reference, dtype):
    """values (a NumPy array) as a result beside `reference`: when that is
    a tensor, a tensor of the given dtype on its device, else the array
    itself. A tensor (a differentiable solve's result) is returned as it
    is."""
    if is_tensor(reference) and not is_tensor(values):
        return sys.modules["torch"].from_numpy(values).to(device=reference.device, dtype=dtype)
    return values


class OutOfRangeError(IndexError, ValueError):
    """An index outside a Variable's shape (an IndexError as in NumPy, and a
    ValueError as every other bad index)."""


def _pick(index_array, index):
    try:
        return index_array[index]
    except IndexError as error:
        raise OutOfRangeError(str(error)) from None


class VariableSlice:
    """Part of a Variable, picked by any NumPy index (``x[i, :]``,
    ``x[:, j]``, ``x[[0, 2]]``, ``x[mask]``...), possibly negated (``~``).

    Factors take slices: they see the variables in the slice's C order, as
    literals (1 - u for a negated slice). ``value`` is the slice of the
    variable's value (1 - value when negated).

    Attributes: ``variable`` (the Variable sliced), ``index`` (the
    variable's flat positions the slice picks, an integer array shaped
    like the slice) and ``negated`` (whether factors see 1 - u).
    """

    __slots__ = ("variable", "index", "negated")

    def __init__(self, variable, index, negated=False):
        self.variable = variable
        self.index = index
        self.negated = negated

    @property
    def shape(self):
        """The slice's shape."""
        return self.index.shape

    @property
    def size(self):
        """Number of variables in the slice."""
        return self.index.size

    @property
    def ids(self):
        """The graph's variable ids in the slice (shaped like it)."""
        return self.index + self.variable.first

    @property
    def T(self):
        """The transposed slice."""
        return VariableSlice(self.variable, self.index.T, self.negated)

    @property
    def value(self):
        """The slice of the variable's value (None before a solve)."""
        value = self.variable.value
        if value is None:
            return None
        if is_tensor(value):
            torch = sys.modules["torch"]
            # a copy: torch takes no numpy array of negative strides (x[::-1])
            index = torch.as_tensor(np.ascontiguousarray(self.index), dtype=torch.int64)
            picked = value.reshape(-1)[index]
        else:
            picked = value.reshape(-1)[self.index]
        return 1 - picked if self.negated else picked

    def __getitem__(self, index):
        return VariableSlice(self.variable, _pick(self.index, index), self.negated)

    def __invert__(self):
        return VariableSlice(self.variable, self.index, not self.negated)

    def __repr__(self):
        return "VariableSlice(shape=%s%s)" % (self.shape, ", negated" if self.negated else "")


class Variable:
    """An array of binary variables of a FactorGraph, shaped like its scores.

    ``scores``: the scores (log-potentials) read at each solve; assign a new
    array (or change this one in place) to solve again with other scores.
    ``value``: the last result (posteriors of solve and solve_map, 0/1 of
    decode), an array of the variable's shape; None before.
    Index it like an array to get a VariableSlice; ``~x`` negates.
    """

    def __init__(self, graph, first, shape, scores):
        self.graph = graph
        self.first = first
        self.shape = tuple(shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.scores = scores
        self.value = None
        # int32 like the C ids (a graph has fewer than 2^31 variables), so
        # that ids go to C without a conversion
        self._index = np.arange(self.size, dtype=np.int32).reshape(self.shape)

    @property
    def ids(self):
        """The graph's variable ids, shaped like the variable."""
        return self._index + self.first

    @property
    def T(self):
        """The transposed variable, as a slice."""
        return VariableSlice(self, self._index.T)

    def __getitem__(self, index):
        return VariableSlice(self, _pick(self._index, index))

    def __invert__(self):
        return VariableSlice(self, self._index, True)

    def __repr__(self):
        return "Variable(shape=%s)" % (self.shape,)


def links(graph, variables):
    """The variables of a factor argument (a Variable, a VariableSlice, or a
    list or tuple of them, in order) as (ids, negated or None, shape): ids
    flat, shape the argument's (flat when it is a list)."""
    if isinstance(variables, Variable):
        variables = VariableSlice(variables, variables._index)
    if isinstance(variables, VariableSlice):
        ids, negated = _slice_links(graph, variables)
        return ids, (np.ones(ids.size, dtype=bool) if negated else None), variables.shape
    if not isinstance(variables, (list, tuple)) or not variables:
        raise TypeError("expected a Variable, a slice of one, or a list of them; got %r"
                        % (variables,))
    ids, negated = [], []
    for part in variables:
        if isinstance(part, Variable):
            part = VariableSlice(part, part._index)
        if not isinstance(part, VariableSlice):
            raise TypeError("expected a Variable or a slice of one, got %r" % (part,))
        part_ids, part_negated = _slice_links(graph, part)
        ids.append(part_ids)
        negated.append(np.full(part_ids.size, part_negated))
    ids = np.concatenate(ids)
    negated = np.concatenate(negated)
    return ids, (negated if negated.any() else None), ids.shape


def _slice_links(graph, part):
    """A slice's flat variable ids and whether it is negated."""
    if part.variable.graph is not graph:
        raise ValueError("a factor's variables must belong to its FactorGraph")
    return part.ids.reshape(-1), part.negated


class FactorGraph:
    """A factor graph over arrays of binary variables.

        fg = concord.FactorGraph()
        x = fg.variable_from(scores)           # scores of shape (n, n)
        for i in range(n):
            fg.add(concord.Xor(x[i, :]))
        fg.solve()                             # LP-SparseMAP
        x.value                                # (n, n) posteriors

    Settings are keyword arguments of the solving methods, any field of
    concord.Settings (help(concord.Settings) lists them with their
    defaults): max_iter, tol, eta, adapt_eta, relaxation, bound_every,
    max_inner_iter, acceleration, warm_start, time_limit, progress,
    backward_tol, backward_max_iter, backward_power, acyclic; for exact MAP
    node_limit, search, exact_gap, heuristic_every; for PSDD psdd_step and
    psdd_eta. Repeated solves warm-start from the previous one unless
    warm_start=False.
    """

    def __init__(self):
        self._graph = _core.Graph()
        self.variables = []
        self.factors = []
        self._solver = None      # the solver of numpy solves, for this structure
        self.last_solver = None  # the solver of the last solve (for decode, distributions)

    # ---- building

    def variable_from(self, scores):
        """A Variable shaped like `scores` (an array or a tensor), which it
        keeps: the scores are read at each solve."""
        values = as_numpy(scores)
        try:
            first = self._graph.add_variables(values.size, values)
        except _core.InvalidArgumentError:
            refused = refused_score(values, "variable")
            if refused is None:
                raise
            raise refused from None
        return self._new_variable(first, values.shape, scores)

    def variable(self, shape):
        """A Variable of the given shape with zero scores."""
        return self.variable_from(np.zeros(shape))

    def multi_variable_from(self, scores, one_hot=True):
        """Multi-valued variables: scores of shape (..., k) give one
        variable with k states per row of the last axis (k binary
        variables, exactly one of them 1). one_hot adds the XOR that
        enforces it; pass False only when Dense factors cover every row.
        Decoding picks each row's best state."""
        values = as_numpy(scores)
        if values.ndim < 1 or values.shape[-1] < 1:
            raise ValueError("multi_variable_from: scores need a last axis of states")
        rows = values.reshape(-1, values.shape[-1])
        refused = refused_score(values, "multi-variable")  # before the first of several C calls
        if refused is not None:
            raise refused
        first = None
        for row in rows:
            start = self._graph.add_multi_variable(row.size, row, one_hot)
            first = start if first is None else first
        if first is None:
            first = self._graph.num_variables
        return self._new_variable(first, values.shape, scores)

    def _new_variable(self, first, shape, scores):
        variable = Variable(self, first, shape, scores)
        self.variables.append(variable)
        self._solver = None
        return variable

    def add(self, factor):
        """Adds a factor (an instance of a class in concord.factors) and
        returns it. A factor belongs to one graph."""
        from concord.factors import Factor
        if not isinstance(factor, Factor):
            raise TypeError("expected a factor, got %r" % (factor,))
        if factor.graph is not None:
            raise ValueError("%r is already in a FactorGraph" % (factor,))
        try:
            factor._add_to(self)
        except _core.InvalidArgumentError as error:
            # a refused score (the library's messages for those, and only
            # those, speak of a score) named by the factor's place and the
            # position in its scores rather than by its flat output number;
            # another refusal (of the links, checked first) as it is
            refused = factor._refused_score(len(self.factors)) if "score" in str(error) else None
            if refused is None:
                raise
            raise refused from None
        self.factors.append(factor)
        self._solver = None
        return factor

    # ---- copies

    def __reduce__(self):
        """Refused, as are copies: the graph's structure lives in C, and a
        shallow copy would share it (a factor added to one would be added
        to the other). Build another FactorGraph from the same inputs."""
        _core._refuse_copy(self)

    def __copy__(self):
        """Refused (see __reduce__)."""
        _core._refuse_copy(self)

    def __deepcopy__(self, memo):
        """Refused (see __reduce__)."""
        _core._refuse_copy(self)

    # ---- sizes

    @property
    def num_variables(self):
        """Number of binary variables."""
        return self._graph.num_variables

    @property
    def num_factors(self):
        """Number of factors in C (a Pair over n positions is n of them)."""
        return self._graph.num_factors

    @property
    def num_additionals(self):
        """Number of factor additional outputs."""
        return self._graph.num_additionals

    @property
    def graph(self):
        """The low-level concord._core.Graph."""
        return self._graph

    def __repr__(self):
        return "FactorGraph(%d variables, %d factors, %d additionals)" % (
            self.num_variables, self.num_factors, self.num_additionals)

    # ---- solving

    def solve(self, **settings):
        """LP-SparseMAP: sets every variable's value (and factors' additional
        values) to the solution, or to None when the constraints proved
        infeasible (status "infeasible"); returns an Info (status, value,
        bound, iterations, seconds...). With tensor scores the values are
        tensors differentiable w.r.t. the scores (concord.torch)."""
        return solve_batch([self], "sparse", **settings)[0]

    def solve_map(self, **settings):
        """LP-MAP by AD3: the same for the linear relaxation."""
        return solve_batch([self], "map", **settings)[0]

    def solve_exact(self, **settings):
        """Exact MAP by branch and bound over AD3: sets every value to the
        best assignment; the Info's status is "optimal" when it is proved
        (upper_bound equals value to exact_gap), "node_limit" or
        "time_limit" when the search stopped first (values None when it had
        found no assignment yet: value -inf), "infeasible" (values None)
        when no assignment satisfies every factor. The search's statistics
        are in ``self.last_solver.exact_info``."""
        return solve_batch([self], "exact", **settings)[0]

    def decode(self):
        """Rounds the last solution to a 0/1 assignment (multi-variables to
        their best state, then a local search): sets every variable's value
        to it, every factor's value to its best additional outputs there
        (NaN for a factor the assignment violates), and returns a Decoding
        (value, violated factors, passes)."""
        solver = self._require_solution()
        assignment, decoding = solver.decode()
        self._set_values(assignment, solver.decoded_additionals())
        return decoding

    def labels(self):
        """The decoded state of every multi-variable (after decode), in
        order of creation: for a UAI model, the assignment."""
        return self._require_solution().decoded_labels()

    def distribution(self, factor):
        """The sparse distribution behind a factor's part of the last
        LP-SparseMAP solution: (weights (k,), configurations (k, *shape)),
        the configurations shaped like the factor's variables. For a factor
        made of several C factors (Pair), the first one's; one made of none
        (a Pair of empty arrays) has none (ValueError)."""
        solver = self._require_solution()
        if factor.graph is not self:
            raise ValueError("%r is not in this FactorGraph" % (factor,))
        if not factor.ids:
            raise ValueError("%r holds no factor of the C graph, hence no distribution"
                             % (factor,))
        weights, configurations, _ = solver.factor_distribution(factor.ids[0])
        return weights, configurations.reshape((len(weights),) + factor.shape)

    def loss(self, gold, kind="sparsemap", gold_additionals=None, **settings):
        """The LP-SparseMAP (Fenchel-Young) loss (kind="sparsemap") or the
        structured hinge loss (kind="hinge") of a gold structure: gold maps
        every Variable to its 0/1 array (or a mixture of structures, whose
        additional values each factor with some that sees it fractional
        needs given);
        gold_additionals maps factors to their gold additional values
        (default: their best at gold).

        Returns the loss (a float; a differentiable 0-d tensor with tensor
        scores) and sets every variable's value to the solution it solved
        for: the loss's gradient w.r.t. x's scores is x.value - gold[x].
        """
        if kind not in ("sparsemap", "hinge"):
            raise ValueError("kind must be 'sparsemap' or 'hinge', not %r" % (kind,))
        u_gold = np.zeros(self.num_variables)
        if set(gold) != set(self.variables):
            raise ValueError("gold must give every variable of the graph (and nothing else)")
        for variable, value in gold.items():
            u_gold[variable.first:variable.first + variable.size] = _sized(
                as_numpy(value), variable.shape, "gold value")
        v_gold = None
        if gold_additionals is not None:
            v_gold = np.full(self.num_additionals, np.nan)
            for factor, value in gold_additionals.items():
                if getattr(factor, "graph", None) is not self:
                    raise ValueError("gold_additionals: %r is not in this FactorGraph" % (factor,))
                first, count = factor.additionals
                v_gold[first:first + count] = _sized(factor._flatten_values(value), (count,),
                                                     "gold additional values")
            if np.isnan(v_gold).any():
                raise ValueError("gold_additionals must give every factor with additional "
                                 "outputs")
        try:
            if self._has_tensors():
                from concord.torch import graph_loss
                return graph_loss(self, kind, u_gold, v_gold, settings)
            self._push_scores()
            solver = self._numpy_solver()
            method = solver.loss_sparsemap if kind == "sparsemap" else solver.loss_hinge
            loss, _, _, info = method(u_gold, v_gold, settings)
        except _core.InvalidArgumentError as error:
            _raise_refused_score([self], [0] if self._has_tensors() else [], error)
        self._take_solution(solver, info)
        return loss

    # ---- internals shared with solve_batch and concord.torch

    def _refused_score(self):
        """When the C library refused this graph's scores: its error for
        the first score it refuses, naming the Variable or the factor (by
        its place in ``factors``) and the position in its scores; None when
        it refuses none of them."""
        for x in self.variables:
            values = as_numpy(x.scores)
            if values.size != x.size:
                continue  # refused for its shape, with a message of its own
            refused = refused_score(values.reshape(x.shape), repr(x) + "'s")
            if refused is not None:
                return refused
        for k, factor in enumerate(self.factors):
            refused = factor._refused_score(k)
            if refused is not None:
                return refused
        return None

    def _score_tensors(self):
        """The variables' and factors' scores that are tensors, in order."""
        parts = [x.scores for x in self.variables]
        parts += [part for f in self.factors for part in f._score_parts()]
        return [part for part in parts if is_tensor(part)]

    def _has_tensors(self):
        return bool(self._score_tensors())

    def _numpy_solver(self):
        """The solver of numpy solves, made again when the structure changed
        through ``self.graph`` (a factor added there, regularization
        weights) since it was made."""
        if self._solver is None or not self._solver.is_current:
            self._solver = _core.Solver(self._graph)
        return self._solver

    def _require_solution(self):
        if self.last_solver is None:
            raise RuntimeError("nothing solved yet: call solve or solve_map first")
        if not self.last_solver.is_current:
            raise RuntimeError("the graph grew since the last solve: solve it again")
        return self.last_solver

    def _push_scores(self):
        """Copies the variables' and factors' current scores to the graph."""
        for x in self.variables:
            self._graph.set_variable_scores(_sized(as_numpy(x.scores), x.shape, "scores"),
                                            x.first)
        for factor in self.factors:
            if factor.additionals[1]:
                self._graph.set_additional_scores(factor._numpy_scores(),
                                                  factor.additionals[0])

    def _set_values(self, u, v):
        """Sets the variables' values to slices of u and the factors' to
        slices of v: the tensors of a differentiable solve, or NumPy
        arrays, made tensors in a graph with tensor scores (every value,
        whatever its own scores: constants of the result dtype, on the
        device of the first score tensor, as a differentiable solve's). u
        None (no solution) sets every value to None, v None every
        factor's."""
        tensors = self._score_tensors() if u is not None and not is_tensor(u) else []
        reference = tensors[0] if tensors else None
        dtype = result_dtype(tensors) if tensors else None
        for x in self.variables:
            x.value = (None if u is None else
                       like(span(u, x.first, x.size), reference, dtype).reshape(x.shape))
        for factor in self.factors:
            first, count = factor.additionals
            if count:
                factor.value = None if u is None or v is None else factor._shape_values(
                    like(span(v, first, count), reference, dtype))

    def _take_solution(self, solver, info, outputs=None):
        """After a solve by `solver` that ended with `info`: remembers the
        solver and sets the values to its solution (outputs: the same as
        tensors, from a differentiable solve, or None there when it has
        none), or every value to None when the solve ended without one (see
        has_solution)."""
        self.last_solver = solver
        u, v = outputs if outputs is not None else (solver.variables, solver.additionals)
        self._set_values(u if has_solution(info) else None, v)


def span(values, first, count):
    """values[first:first + count], or values itself when that is all of
    it (a tensor's slice would be one more op for autograd to walk back)."""
    return values if first == 0 and count == len(values) else values[first:first + count]


def _sized(values, shape, what):
    """values, checked to have the given number of entries, flattened."""
    size = int(np.prod(shape, dtype=np.int64))
    if values.size != size:
        raise ValueError("%s: expected shape %s (%d values), got %s" % (
            what, tuple(shape), size, values.shape))
    return values.reshape(-1)


def solve_batch(graphs, algorithm="sparse", threads=None, **settings):
    """Solves several FactorGraphs at once on C threads (concord_solve_batch,
    the GIL released): algorithm "sparse" (LP-SparseMAP), "map" (AD3),
    "exact" (exact MAP), "psdd" or "mplp"; threads None for one per
    processor. Sets every graph's values as its own solve would, bit for
    bit, and returns their Infos. Graphs with tensor scores get
    differentiable values (concord.torch)."""
    graphs = list(graphs)
    if algorithm not in _core.ALGORITHMS:
        raise ValueError("algorithm must be one of %s, not %r" % (", ".join(_core.ALGORITHMS),
                                                                  algorithm))
    checked = _core.Settings(**settings)
    threads = 0 if threads is None else _core.as_integer(threads, "threads")
    if not graphs:
        return []
    for g in graphs:
        if not isinstance(g, FactorGraph):
            raise TypeError("graphs must be FactorGraphs, not %s" % type(g).__name__)
    _core.check_distinct(graphs, "graphs", "FactorGraph")
    # differentiable LP-SparseMAP for the graphs with tensor scores, the
    # others solved as their own solves would be
    differentiable = [algorithm == "sparse" and g._has_tensors() for g in graphs]
    try:
        return _solve_each(graphs, algorithm, checked, settings, threads, differentiable)
    except _core.InvalidArgumentError as error:
        _raise_refused_score(graphs, [k for k, d in enumerate(differentiable) if d], error)


def _raise_refused_score(graphs, with_tensors, error):
    """Raises again the C library's refusal of some scores of these graphs
    (error), naming the graph when there are several ("graph k: "): the
    Variable or factor and the position in its scores rather than the
    library's flat variable or output number; otherwise (a score of a
    shape its Variable or factor refuses) the library's message,
    for the graph _solve_each names (error.graph) or the example
    concord.torch names (error.example, the j-th of the graphs
    with_tensors lists)."""
    def named(k, message):
        prefix = "graph %d: " % k if len(graphs) > 1 else ""
        return type(error)(error.code, prefix + message)
    for k, g in enumerate(graphs):
        refused = g._refused_score()
        if refused is not None:
            raise named(k, str(refused)) from None
    graph = getattr(error, "graph", None)
    if graph is not None:
        raise named(graph, str(error)) from None
    example = getattr(error, "example", None)
    if example is None or example >= len(with_tensors):  # not from this solve's examples
        raise error
    raise named(with_tensors[example], error.library_message) from None


def _solve_each(graphs, algorithm, checked, settings, threads, differentiable):
    """solve_batch's solves, once its arguments are checked."""
    with_tensors = [k for k, d in enumerate(differentiable) if d]
    with_arrays = [k for k, d in enumerate(differentiable) if not d]
    infos = [None] * len(graphs)
    if with_tensors:
        from concord.torch import solve_graphs
        solved = solve_graphs([graphs[k] for k in with_tensors], settings, threads)
        for k, info in zip(with_tensors, solved):
            infos[k] = info
    if with_arrays:
        solvers = []
        for k in with_arrays:
            try:
                graphs[k]._push_scores()
            except _core.InvalidArgumentError as error:
                error.graph = k  # for _raise_refused_score
                raise
            solvers.append(graphs[k]._numpy_solver())
        solved = _core.solve_batch(solvers, algorithm, checked, threads)
        for k, solver, info in zip(with_arrays, solvers, solved):
            graphs[k]._take_solution(solver, info)
            infos[k] = info
    return infos


def _from_core(graph):
    """A FactorGraph around a low-level Graph (from a reader): one Variable
    over all its binary variables; its factors stay in C."""
    fg = FactorGraph()
    fg._graph = graph
    fg.variables.append(Variable(fg, 0, (graph.num_variables,), graph.variable_scores))
    return fg


def read_fg(path):
    """The graphs of an AD3 .fg file, as FactorGraphs with one Variable each
    (``fg.variables[0]``, all the file's binary variables in order; the
    file's factors and scores are kept as read)."""
    return [_from_core(g) for g in _core.read_file(path, format="fg")]


def read_uai(path, evidence=None):
    """A UAI model (with an optional evidence file) as a FactorGraph: one
    Variable over all binary variables, every model variable a
    multi-variable (its states, those evidence and zeros leave); after
    solve_map and decode, ``labels()`` is the MAP assignment."""
    return _from_core(_core.read_uai(path, evidence))
