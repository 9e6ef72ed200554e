"""AD3's ``ad3.base``: variables and factors as handles into a PFactorGraph.

A PBinaryVariable is one binary variable of a graph (a PMultiVariable is a
run of them, one per state); a PFactor is a factor of a graph, bound to
binary variables in order. They hold no C objects: the graph builds its
concord graph from them when it solves (concord.ad3.factor_graph).
"""

import numpy as np

from concord import _core
from concord.ad3._checks import as_double, as_doubles, as_int

__all__ = ["PBinaryVariable", "PMultiVariable", "PFactor", "PGenericFactor"]


class PBinaryVariable:
    """A binary variable: its log-potential (score), its id (creation
    index in its graph, -1 on its own) and its degree (links to factors).

    ``PBinaryVariable()`` makes a variable attached to no graph (as AD3
    allows); graphs make theirs with ``create_binary_variable``.
    """

    def __init__(self, allocate=True):
        self._graph = None
        self._id = -1
        self._score = 0.0

    @classmethod
    def _of(cls, graph, index):
        variable = cls(allocate=False)
        variable._graph = graph
        variable._id = index
        return variable

    def get_log_potential(self):
        """The variable's score."""
        if self._graph is None:
            return self._score
        return self._graph._scores[self._id]

    def set_log_potential(self, log_potential):
        """Sets the variable's score (used by the next solve)."""
        value = as_double(log_potential, "log_potential")
        if self._graph is None:
            self._score = value
        else:
            self._graph._scores[self._id] = value

    def get_id(self):
        """The variable's index in its graph's variables (the position of
        its posterior), -1 when it belongs to no graph."""
        return self._id

    def get_degree(self):
        """The number of factor links of the variable."""
        return 0 if self._graph is None else self._graph._degrees[self._id]


class PMultiVariable:
    """A multi-valued variable: consecutive binary variables, one per state.
    It constrains nothing by itself: dense factors, or the XOR that
    ``fix_multi_variables_without_factors`` adds, keep it one-hot.
    Indexing reads and writes the states' log-potentials."""

    def __init__(self, allocate=True):
        self._graph = None
        self._first = 0
        self._states = 0

    @classmethod
    def _of(cls, graph, first, num_states):
        variable = cls(allocate=False)
        variable._graph = graph
        variable._first = first
        variable._states = num_states
        return variable

    def __len__(self):
        return self._states

    def _check(self, i):
        if not 0 <= i < self._states:
            raise IndexError("State {:d} is out of bounds.".format(i))

    def get_state(self, i, validate=True):
        """The binary variable of state i. The state is checked even with
        validate=False (AD3 then reads out of bounds, and a factor over such
        a variable would be over another variable or none)."""
        i = as_int(i, "i")
        self._check(i)
        return PBinaryVariable._of(self._graph, self._first + i)

    def __getitem__(self, i):
        i = as_int(i, "i")
        self._check(i)
        return self._graph._scores[self._first + i]

    def __setitem__(self, i, log_potential):
        i = as_int(i, "i")
        value = as_double(log_potential, "log_potential")
        self._check(i)
        self._graph._scores[self._first + i] = value

    def get_log_potential(self, i):
        """The score of state i."""
        return self[i]

    def set_log_potential(self, i, log_potential):
        """Sets the score of state i."""
        self[i] = log_potential

    def set_log_potentials(self, log_potentials, validate=True):
        """Sets every state's score from a sequence of numbers."""
        values = as_doubles(log_potentials, "log_potentials")
        if validate and len(values) != self._states:
            raise IndexError("Expected buffer of length {}".format(self._states))
        count = min(len(values), self._states)
        # Python floats, as AD3's getters return (not NumPy scalars)
        self._graph._scores[self._first:self._first + count] = values[:count].tolist()


class PFactor:
    """A factor of a PFactorGraph, bound to binary variables in order
    (its links). Its additional log-potentials score the additional
    outputs it has (PAIR: both variables on; DENSE: each joint state;
    extension factors: as their ``initialize`` lays them out)."""

    def __init__(self, *args, **kwargs):
        self._graph = None
        self._variables = []
        self._additionals = []
        self._last_qp = None
        self._qp_use = None  # the graph's use (PFactorGraph._uses) of the last QP
        self._alone = None   # (graph, solver, C factor id) of this factor alone

    # ---- what every factor family defines

    def _build(self, graph, variables):
        """Adds the factor to a concord._core.Graph over the variable ids
        given (the factor's own, or hidden copies of repeated ones);
        returns its C factor id."""
        raise NotImplementedError("%s cannot be solved: it was never initialized"
                                  % type(self).__name__)

    def _additional_index(self):
        """Where each additional log-potential goes among the C factor's
        additional outputs (None: the same places), and how many the C
        factor has."""
        return None, len(self._additionals)

    def _expected_additionals(self):
        """How many additional log-potentials the factor needs (None: any
        number is the factor's own layout)."""
        return None

    def _num_additionals(self):
        """How many additional log-potentials the factor has."""
        expected = self._expected_additionals()
        return len(self._additionals) if expected is None else expected

    # ---- AD3's API

    def set_allocate(self, allocate):
        """Ownership of the C factor in AD3; concord's graphs own every
        factor, so this does nothing."""

    def get_additional_log_potentials(self):
        """The additional log-potentials, as a list."""
        return list(self._additionals)

    def set_additional_log_potentials(self, additional_log_potentials):
        """Replaces the additional log-potentials (read at the next solve)."""
        self._additionals = as_doubles(additional_log_potentials,
                                       "additional_log_potentials").tolist()

    def get_degree(self):
        """The number of variables the factor is bound to."""
        return len(self._variables)

    def get_link_id(self, i):
        """The global number of the factor's i-th link (links are numbered
        factor by factor, in declaration order)."""
        if self._graph is None:
            raise ValueError("the factor is bound to no graph (declare_factor first)")
        return self._graph._link_offset(self) + self._link(i)

    def get_variable(self, i):
        """The factor's i-th variable."""
        return PBinaryVariable._of(self._graph, self._variables[self._link(i)])

    def _link(self, i):
        """Index i of one of the factor's links, checked (IndexError: AD3
        reads out of bounds)."""
        i = as_int(i, "i")
        if not 0 <= i < len(self._variables):
            raise IndexError("variable %d of a factor of degree %d" % (i, len(self._variables)))
        return i

    def solve_map(self, variable_log_potentials, additional_log_potentials):
        """The factor's MAP on its own at the given scores (one per link,
        then the additional ones; an empty list means the factor's own
        additional log-potentials): (value, posteriors, additional
        posteriors), as lists."""
        a, b = self._local_scores(variable_log_potentials, additional_log_potentials)
        graph, solver, factor = self._single_factor_solver()
        value, u, v = solver.factor_map(factor, a, b)
        return value, u.tolist(), self._from_c_additionals(v).tolist()

    def solve_qp(self, variable_scores, additional_scores, max_iter=10, keep_state=True):
        """SparseMAP of the factor on its own: the argmax over its polytope
        of a.u + b.v - |u|^2 / 2. Returns (posteriors, additional
        posteriors) as lists. lp-sparsemap's max_iter (its active set's
        iterations) and keep_state are accepted and ignored: concord solves
        the QP until its solution is certified, from a fresh active set."""
        a, b = self._local_scores(variable_scores, additional_scores)
        self._last_qp = (a, b, None)
        graph, solver, factor = self._single_factor_solver()
        self._qp_use = self._graph._uses if self._graph is not None else None
        u, v = solver.factor_qp(factor, a, b)
        return u.tolist(), self._from_c_additionals(v).tolist()

    def solve_qp_adjusted(self, variable_scores, additional_scores, degrees, max_iter=10):
        """lp-sparsemap's degree-adjusted QP: the argmax of a.u + b.v -
        |u|^2 / 2 over the polytope scaled by 1 / sqrt(degrees) per
        variable (solve_qp when every degree is 1); max_iter is accepted
        and ignored, as in solve_qp."""
        a, b = self._local_scores(variable_scores, additional_scores)
        root = np.sqrt(as_doubles(degrees, "degrees"))
        if root.shape != a.shape or not (root > 0).all():
            raise ValueError("degrees: expected %d positive values" % a.size)
        self._last_qp = (a / root, b, 1.0 / root ** 2)
        graph, solver, factor = self._single_factor_solver()
        self._qp_use = self._graph._uses if self._graph is not None else None
        mu, v = solver.factor_qp(factor, *self._last_qp)
        return (mu / root).tolist(), self._from_c_additionals(v).tolist()

    def jacobian_vec(self, v):
        """lp-sparsemap's factor Jacobian-vector product at the factor's last
        solve_qp or solve_qp_adjusted: the derivatives of that QP's solution
        (u, and its additional outputs) w.r.t. its variable scores, along v
        (one value per variable), as two lists. Computed by concord's
        backward pass on a graph of the factor alone (the Jacobian is
        symmetric). After solve_qp_adjusted(a, b, d) the solution is u =
        mu / sqrt(d) with mu the argmax of (a / sqrt(d)).mu + b.v -
        sum(mu^2 / d) / 2, so the product is D^-1/2 J_mu D^-1/2 v for u and
        J_v D^-1/2 v for the additional outputs (D = diag(d))."""
        last = self._last_qp
        if last is None:
            raise ValueError("jacobian_vec follows solve_qp or solve_qp_adjusted")
        a, b, weights = last
        v = as_doubles(v, "v")
        if v.size != a.size:
            raise ValueError("v: expected %d values, got %d" % (a.size, v.size))
        graph, factor = self._graph_alone()
        # the adjusted QP's scaling: 1 / sqrt(d) per variable, 1 for solve_qp
        scale = np.ones(a.size) if weights is None else np.sqrt(weights)
        if weights is not None:
            graph.set_regularization(weights, 0)
        graph.set_variable_scores(a)
        if len(b):
            graph.set_additional_scores(b, graph.factor_additionals(factor)[0])
        solver = _core.Solver(graph)
        solver.solve_sparse(_core.Settings(tol=1e-12, max_iter=1000000))
        du, dv, _ = solver.backward(scale * v)
        return (scale * du).tolist(), self._from_c_additionals(dv).tolist()

    # ---- shared machinery

    def _single_factor_solver(self):
        """(graph, solver, C factor id) for the factor's own calls (counted
        in the graph's _uses, to order them after or before its solves)."""
        if self._graph is None:
            raise ValueError("the factor is bound to no graph (declare_factor first)")
        self._graph._uses += 1
        return self._solver_alone()

    def _solver_alone(self):
        """(graph, solver, C factor id) of a graph of this factor alone,
        built once per layout: a factor solves its own problem, as in AD3
        and lp-sparsemap, so that another factor of its graph (one not
        initialized yet, or one that allows no configuration) cannot fail
        its calls."""
        if self._alone is None:
            graph, factor = self._graph_alone()
            self._alone = (graph, _core.Solver(graph), factor)
        return self._alone

    def _single_factor_degree(self):
        """The number of variable scores the factor's own calls take."""
        return len(self._variables)

    def _graph_alone(self):
        """(graph, C factor id): a new graph holding only this factor, over
        one variable per link."""
        degree = self._single_factor_degree()
        graph = _core.Graph()
        graph.add_variables(degree)
        return graph, self._build(graph, np.arange(degree))

    def _local_scores(self, variable_log_potentials, additional_log_potentials):
        """The scores of a single-factor call, in the C factor's layout."""
        degree = self._single_factor_degree()
        a = as_doubles(variable_log_potentials, "variable scores")
        if a.size != degree:
            raise ValueError("expected %d variable log-potentials, got %d" % (degree, a.size))
        b = as_doubles(additional_log_potentials, "additional scores")
        if b.size == 0:
            b = np.asarray(self._additionals, dtype=np.float64)
        return a, self._to_c_additionals(b)

    def _to_c_additionals(self, values):
        """Additional log-potentials (the factor's layout) in the C factor's
        layout, zeros where the C factor has outputs the factor has not."""
        index, count = self._additional_index()
        expected = self._expected_additionals()
        if expected is not None and len(values) < expected:
            raise ValueError("%s: expected %d additional log-potentials, got %d"
                             % (type(self).__name__, expected, len(values)))
        if expected is not None:
            values = values[:expected]  # AD3 reads the first ones and ignores the rest
        if index is None:
            return np.asarray(values, dtype=np.float64)
        out = np.zeros(count)
        out[index] = values
        return out

    def _from_c_additionals(self, values):
        """The C factor's additional values in the factor's layout."""
        index, _ = self._additional_index()
        return values if index is None else values[index]


class PGenericFactor(PFactor):
    """The base of AD3's extension factors (concord.ad3.extensions), whose
    QP comes from concord's generic active set."""

    def _layout_changed(self):
        """The C factor must be built anew (its layout or its forbidden
        outputs changed): the last QP was solved over the former one, so
        jacobian_vec and get_sparse_solution wait for the next solve_qp."""
        self._last_qp = None
        self._alone = None
        if self._graph is not None:
            self._graph._structure_changed()

    def get_sparse_solution(self):
        """The sparse distribution behind the factor's last QP:
        (configurations, probabilities), each configuration the 0/1 list of
        the factor's variables (the adjusted QP's before its scaling), or
        the factor's own form where it has one (lp-sparsemap's sequence and
        tree). The last QP is the factor's own solve_qp (or
        solve_qp_adjusted), or, as in lp-sparsemap, its graph's
        solve_qp_ad3 (solve_qp) when that came later and nothing has used
        the graph's solver since: the distribution behind the factor's
        part of that solution."""
        if self._graph is not None:
            found = self._graph._sparse_distribution(self, self._qp_use)
            if found is not None:
                weights, U = found
                return [self._configuration(row) for row in U], weights.tolist()
        last = self._last_qp
        if last is None:
            raise ValueError("no QP solved on this factor yet (call solve_qp first, or the "
                             "graph's solve_qp_ad3)")
        graph, solver, factor = self._single_factor_solver()
        _, _, (weights, U, _) = solver.factor_qp(factor, *last, distribution=True)
        return [self._configuration(row) for row in U], weights.tolist()

    def _configuration(self, values):
        """A configuration (0/1 values of the factor's variables) as
        get_sparse_solution gives it."""
        return values.tolist()


class ForbiddenOutputs:
    """A mixin for factors whose additional log-potentials of -inf forbid
    their outputs, as in AD3's dynamic programs (a DENSE factor's joint
    states, a sequence's transitions, a tree's edge states, an automaton's
    sibling pairs): concord holds the forbidden outputs in the C factor's
    structure, so changing which log-potentials are -inf rebuilds the
    graph; the -inf sent to a solve there reads as 0."""

    def _forbidden(self):
        """Which outputs the factor's own log-potentials forbid (of the
        first ones, those it uses), in the C factor's layout."""
        used = self._additionals[:self._expected_additionals()]
        forbidden = np.isneginf(np.asarray(used, dtype=np.float64))
        index, count = self._additional_index()
        if index is None or forbidden.size != len(index):
            return forbidden
        out = np.zeros(count, dtype=bool)
        out[index] = forbidden
        return out

    def _forbidding_scores(self):
        """Scores for the C builder: -inf at the forbidden outputs and 0
        elsewhere, in the C factor's layout; None when none is forbidden
        (or not every log-potential is given yet)."""
        index, count = self._additional_index()
        expected = count if index is not None else self._expected_additionals()
        forbidden = self._forbidden()
        if forbidden.size != expected or not forbidden.any():
            return None
        return np.where(forbidden, -np.inf, 0.0)

    def set_additional_log_potentials(self, additional_log_potentials):
        """Replaces the additional log-potentials (read at the next solve)."""
        before = self._forbidden()
        super().set_additional_log_potentials(additional_log_potentials)
        if not np.array_equal(before, self._forbidden()):
            self._layout_changed()
