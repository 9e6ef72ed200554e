"""AD3's ``ad3.factor_graph.PFactorGraph`` (and lp-sparsemap's, which adds
LP-SparseMAP and its backward pass), solved by concord.

The graph records its variables, scores and factors as AD3 builds them
(factors may be declared first and initialized later, scores set at any
time) and builds a concord graph from them when it first solves, again
only after its structure changed. Each factor is one C factor, so links,
additional outputs and their order are AD3's. Solver settings persist
between calls, as in AD3; every solve starts cold, so that equal graphs
give equal results bit for bit.

docs/python.md lists where the results differ from AD3's and why.
"""

import numpy as np

from concord import _core
from concord.ad3._checks import (as_double, as_doubles, as_int, as_list, negations,
                                 variables_of)
from concord.ad3.base import (ForbiddenOutputs, PBinaryVariable, PFactor, PGenericFactor,
                              PMultiVariable)

__all__ = ["PFactorGraph"]

STATUS_NAMES = ["integral", "fractional", "infeasible", "unsolved"]
LOGIC_TYPES = ("XOR", "XOROUT", "ATMOSTONE", "OR", "OROUT", "ANDOUT", "IMPLY")


def _status_code(info, exact=False):
    """AD3's status code of a solve: 0 integral (exact MAP: proved
    optimal), 1 fractional, 2 infeasible (exact MAP only: no assignment
    satisfies every factor), 3 unsolved (stopped by a cap; also a
    relaxation found infeasible, which AD3's relaxations report so, with
    their last iterate)."""
    codes = {"integral": 0, "optimal": 0, "fractional": 1}
    if exact:
        codes["infeasible"] = 2
    return codes.get(info.status, 3)


def _step(eta):
    """A penalty or step size: a number, not NaN (which no comparison would
    tell from the default's 0 or less)."""
    value = as_double(eta, "eta")
    if np.isnan(value):
        raise ValueError("eta must be a number, not nan")
    return value


def _float64_buffer(out, size, name):
    """An output argument typed ``double[:]`` in lp-sparsemap, as a NumPy
    view of its memory: a writable buffer of `size` float64 entries."""
    try:
        view = memoryview(out)
    except TypeError:
        raise TypeError("%s: expected a writable float64 buffer (a NumPy array), got %s"
                        % (name, type(out).__name__)) from None
    if view.format != "d":
        raise TypeError("%s: expected float64 entries, got buffer format %r"
                        % (name, view.format))
    if view.readonly or view.nbytes != 8 * size:
        raise ValueError("%s: expected a writable buffer of %d float64 entries, got %d%s"
                         % (name, size, view.nbytes // 8, " (read-only)" if view.readonly
                            else ""))
    return np.asarray(view)


class _Logic(PFactor):
    """A logic factor (create_factor_logic)."""

    def __init__(self, kind, negated):
        super().__init__()
        self._kind = kind
        self._negated = negated

    def _build(self, graph, variables):
        return graph.add_logic(self._kind, variables, self._negated)

    def _expected_additionals(self):
        return 0


class _Pair(PFactor):
    """A PAIR factor: one additional output, both variables on."""

    def _build(self, graph, variables):
        return graph.add_pair(variables[0], variables[1], 0.0)

    def _expected_additionals(self):
        return 1


class _Budget(PFactor):
    """A BUDGET factor: at most (force_budget: exactly) `budget` literals on."""

    def __init__(self, budget, negated, exact):
        super().__init__()
        self._budget = budget
        self._negated = negated
        self._exact = exact

    def _build(self, graph, variables):
        return graph.add_budget(variables, self._budget, self._exact, self._negated)

    def _expected_additionals(self):
        return 0


class _Knapsack(PFactor):
    """A KNAPSACK factor: costs . literals <= budget (continuous polytope)."""

    def __init__(self, costs, budget, negated):
        super().__init__()
        self._costs = costs
        self._budget = budget
        self._negated = negated

    def _build(self, graph, variables):
        return graph.add_knapsack(variables, self._costs, self._budget, self._negated)

    def _expected_additionals(self):
        return 0


class _Dense(ForbiddenOutputs, PGenericFactor):
    """A DENSE factor over multi-variables (their states, in turn). A
    log-potential of -inf forbids its joint state, as in AD3."""

    def __init__(self, num_states):
        super().__init__()
        self._num_states = num_states

    def _build(self, graph, variables):
        return graph.add_dense(self._num_states, variables, self._forbidding_scores())

    def _expected_additionals(self):
        return int(np.prod(self._num_states, dtype=np.int64))

    def _configuration(self, values):
        """A joint state as lp-sparsemap's get_sparse_solution gives it:
        the state of each multi-variable in turn."""
        states, start = [], 0
        for count in self._num_states:
            states.append(int(np.argmax(values[start:start + count])))
            start += count
        return states


class PFactorGraph:
    """A factor graph: binary and multi-valued variables, factors over
    them, and the solvers of AD3's API (LP-MAP by AD3; lp-sparsemap's
    LP-SparseMAP and its Jacobian-vector products).

    Defaults, as AD3's: eta 0.1 (adapted), 1000 iterations, residual
    threshold 1e-6; LP-SparseMAP active-set iterations 10."""

    def __init__(self):
        self._scores = []      # per binary variable (multi-variable states included)
        self._degrees = []     # links per binary variable
        self._factors = []     # in declaration order
        self._multi = []       # (PMultiVariable, constrained) per multi-variable
        self._verbosity = 0
        self._eta = 0.1
        self._adapt = True
        self._max_iter = 1000
        self._tol = 1e-6
        self._inner_iter = None  # concord's default unless set
        self._eta_psdd = 1.0
        self._max_iter_psdd = 1000
        self._built = None     # (core graph, C factor id per factor) of the structure
        self._solver = None    # the solver of the last solve, for its state
        self._solved_links = None  # per factor: its C links (those of the last solve)
        self._uses = 0         # solves and single-factor calls so far, in order
        self._sparse_use = None  # the use of the last solve when it was LP-SparseMAP

    # ---- variables

    def create_binary_variable(self):
        """A new binary variable (score 0); its id is its creation index."""
        self._scores.append(0.0)
        self._degrees.append(0)
        self._structure_changed()
        return PBinaryVariable._of(self, len(self._scores) - 1)

    def create_multi_variable(self, num_states):
        """A new variable of num_states >= 1 states: that many consecutive
        binary variables (scores 0)."""
        num_states = as_int(num_states, "num_states")
        if num_states < 1:
            raise ValueError("a multi-variable needs at least one state (got %d)" % num_states)
        first = len(self._scores)
        self._scores.extend([0.0] * num_states)
        self._degrees.extend([0] * num_states)
        variable = PMultiVariable._of(self, first, num_states)
        self._multi.append([variable, False])
        self._structure_changed()
        return variable

    # ---- factors

    def _declare(self, factor, variables):
        """Binds a factor to variables (PBinaryVariable objects) and
        appends it to the graph."""
        if factor._graph is not None:
            raise ValueError("this factor is already declared in a factor graph")
        factor._graph = self
        factor._variables = [v._id for v in variables]
        for v in factor._variables:
            self._degrees[v] += 1
        self._factors.append(factor)
        self._structure_changed()
        return factor

    def create_factor_logic(self, factor_type, p_variables, negated=None, owned_by_graph=True):
        """A logic factor: factor_type is XOR, XOROUT, ATMOSTONE, OR, OROUT,
        ANDOUT or IMPLY (for XOROUT, OROUT and ANDOUT the last variable is
        the output, for IMPLY the consequent); negated: None or one flag
        per variable. Returns the factor."""
        if not isinstance(factor_type, str) and factor_type is not None:
            raise TypeError("Argument 'factor_type' has incorrect type (expected str, got %s)"
                            % type(factor_type).__name__)
        variables_of(p_variables, PBinaryVariable, self)
        flags = negations(negated, len(p_variables))
        if factor_type not in LOGIC_TYPES:
            raise NotImplementedError("Unknown factor type: {}".format(factor_type))
        if not p_variables:
            raise ValueError("%s factor: needs at least one variable" % factor_type)
        return self._declare(_Logic(factor_type, flags), p_variables)

    def create_factor_pair(self, p_variables, edge_log_potential, owned_by_graph=True):
        """A PAIR factor over two variables, scoring edge_log_potential when
        both are on (its one additional log-potential). Returns the factor
        (AD3 returns None)."""
        variables_of(p_variables, PBinaryVariable, self)
        score = as_double(edge_log_potential, "edge_log_potential")
        if len(p_variables) != 2:
            raise ValueError("Pair factors require exactly two binary variables.")
        factor = _Pair()
        factor._additionals = [score]
        return self._declare(factor, p_variables)

    def create_factor_budget(self, p_variables, budget, negated=None, owned_by_graph=True,
                             force_budget=False):
        """A BUDGET factor: at most `budget` of the (possibly negated)
        variables on; exactly `budget` with force_budget (lp-sparsemap's
        unreleased keyword). Returns the factor (AD3 returns None)."""
        variables_of(p_variables, PBinaryVariable, self)
        budget = as_int(budget, "budget")
        flags = negations(negated, len(p_variables))
        if budget < 0 or (force_budget and budget > len(p_variables)):
            raise ValueError("budget %d is impossible for %d variables"
                             % (budget, len(p_variables)))
        return self._declare(_Budget(budget, flags, bool(force_budget)), p_variables)

    def create_factor_knapsack(self, p_variables, costs, budget, negated=None,
                               owned_by_graph=True):
        """A KNAPSACK factor: sum of costs[i] x literal_i <= budget, over the
        continuous knapsack polytope (its vertices may be fractional). A
        negative cost c is the cost -c of the opposite literal with the
        budget raised by -c (c l = c - c (1 - l)); a budget below the sum of
        the negative costs, which no assignment meets, is a ValueError.
        Returns the factor (AD3 returns None)."""
        variables_of(p_variables, PBinaryVariable, self)
        costs = as_doubles(costs, "costs")
        budget = as_double(budget, "budget")
        flags = negations(negated, len(p_variables))
        if costs.size != len(p_variables):
            raise ValueError("Must provide one cost per variable.")
        below = costs < 0
        if below.any():
            least = float(costs[below].sum())
            if budget < least:
                raise ValueError("knapsack budget %r is below the least total cost %r: no "
                                 "assignment fits" % (budget, least))
            given = flags if flags is not None else [False] * len(p_variables)
            flags = [flag != bool(flip) for flag, flip in zip(given, below)]
            costs, budget = np.abs(costs), budget - least
        if budget < 0:
            raise ValueError("knapsack budget %r is negative: no assignment fits" % budget)
        return self._declare(_Knapsack(costs, budget, flags), p_variables)

    def create_factor_dense(self, p_multi_variables, additional_log_potentials,
                            owned_by_graph=True):
        """A DENSE factor over multi-variables: one log-potential per joint
        state, row-major with the last variable fastest (``table.ravel()``);
        -inf forbids a joint state. Returns the factor (AD3 returns None)."""
        variables_of(p_multi_variables, PMultiVariable, self, "p_multi_variables")
        scores = as_doubles(additional_log_potentials, "additional_log_potentials")
        num_states = [len(v) for v in p_multi_variables]
        if scores.size != int(np.prod(num_states, dtype=np.int64)):
            raise ValueError("Must provide one log-potential per joint state assignment of "
                             "all the variables.")
        factor = _Dense(num_states)
        factor._additionals = scores.tolist()
        states = [v.get_state(k) for v in p_multi_variables for k in range(len(v))]
        for entry in self._multi:
            if any(entry[0]._first == v._first for v in p_multi_variables):
                entry[1] = True
        return self._declare(factor, states)

    def declare_factor(self, p_factor, p_variables, owned_by_graph=False):
        """Binds a factor made separately (concord.ad3.extensions) to
        variables, in order. The graph keeps it alive."""
        if not isinstance(p_factor, PFactor):
            raise TypeError("Argument 'p_factor' has incorrect type (expected PFactor, got %s)"
                            % type(p_factor).__name__)
        variables_of(p_variables, PBinaryVariable, self)
        self._declare(p_factor, p_variables)

    def fix_multi_variables_without_factors(self):
        """Adds an XOR over the states of every multi-variable that nothing
        keeps one-hot yet (no dense factor, no XOR added before)."""
        for entry in self._multi:
            variable, constrained = entry
            if not constrained:
                states = [variable.get_state(k) for k in range(len(variable))]
                self._declare(_Logic("XOR", None), states)
                entry[1] = True

    # ---- settings

    def set_verbosity(self, verbosity):
        """AD3's verbosity; concord prints nothing (its solves report through
        their results), so this only records it."""
        self._verbosity = as_int(verbosity, "verbosity")

    def set_eta_ad3(self, eta):
        """The initial ADMM penalty (relative to the scores' scale in
        concord); 0 or less, which AD3 and lp-sparsemap accept, means
        concord's default, 0.1; NaN is a ValueError."""
        self._eta = _step(eta)

    def adapt_eta_ad3(self, adapt):
        """Whether the penalty adapts."""
        self._adapt = bool(adapt)

    def set_max_iterations_ad3(self, max_iterations):
        """The iteration cap of AD3 and LP-SparseMAP."""
        self._max_iter = as_int(max_iterations, "max_iterations")

    def set_residual_threshold_ad3(self, threshold):
        """The residual tolerance (concord's per-link tolerance, kept within
        (0, 0.5])."""
        self._tol = as_double(threshold, "threshold")

    def set_inner_iter(self, max_iter):
        """Active-set iterations per factor QP of LP-SparseMAP (lp-sparsemap)."""
        self._inner_iter = as_int(max_iter, "max_iter")

    def set_autodetect_acyclic(self, autodetect):
        """lp-sparsemap's switch for solving graphs without shared variables
        exactly; concord always does, so this only records it."""
        self._autodetect = bool(autodetect)

    def set_eta_psdd(self, eta):
        """The projected subgradient step size (relative to the scores'
        scale in concord); 0 or less means concord's default, 1; NaN is a
        ValueError."""
        self._eta_psdd = _step(eta)

    def set_max_iterations_psdd(self, max_iterations):
        """The projected subgradient iteration cap."""
        self._max_iter_psdd = as_int(max_iterations, "max_iterations")

    def _settings(self, **overrides):
        settings = dict(max_iter=max(self._max_iter, 1), tol=min(max(self._tol, 1e-300), 0.5),
                        adapt_eta=self._adapt, warm_start=False)
        if self._eta > 0:  # else concord's default
            settings["eta"] = self._eta
        if self._inner_iter is not None:
            settings["max_inner_iter"] = max(self._inner_iter, 1)
        settings.update(overrides)
        return _core.Settings(**settings)

    # ---- scores

    def set_log_potentials(self, scores):
        """Sets every binary variable's score from a sequence (lp-sparsemap)."""
        values = as_doubles(scores, "scores")
        if values.size < len(self._scores):
            raise IndexError("expected %d scores, got %d" % (len(self._scores), values.size))
        self._scores[:] = values[:len(self._scores)].tolist()

    def set_all_additionals(self, scores):
        """Gives each factor that has additional log-potentials, in order,
        the next entry of `scores` (lp-sparsemap): a list of one entry per
        such factor (ValueError for more or fewer)."""
        as_list(scores, "scores")
        factors = [factor for factor in self._factors if factor._num_additionals()]
        if len(scores) != len(factors):
            raise ValueError("set_all_additionals: expected one entry per factor with "
                             "additional log-potentials (%d), got %d"
                             % (len(factors), len(scores)))
        for factor, entry in zip(factors, scores):
            factor.set_additional_log_potentials(entry)

    # ---- building and solving

    def _structure_changed(self):
        self._built = None
        self._solver = None
        self._solved_links = None
        self._sparse_use = None

    def _build(self):
        """The concord graph of the current structure (built once per
        structure): the variables in order, then each factor as one C
        factor. A variable that appears twice in a factor (AD3 allows it)
        is given a hidden copy held equal to it by an XOR with one link
        negated; hidden copies come after every variable of the graph. A
        variable and its k - 1 copies each weigh 1/k in LP-SparseMAP's
        regularization, so that together they count once, as in AD3."""
        if self._built is not None:
            return self._built
        graph = _core.Graph()
        graph.add_variables(len(self._scores))
        ids = []
        copies = {}  # variable -> its hidden copies
        for factor in self._factors:
            variables = list(factor._variables)
            seen = set()
            for j, v in enumerate(variables):
                if v in seen:
                    copy = graph.add_variables(1)
                    graph.add_logic("XOR", [v, copy], [False, True])
                    copies.setdefault(v, []).append(copy)
                    variables[j] = copy
                seen.add(v)
            ids.append(factor._build(graph, variables))
        for v, held_equal in copies.items():
            share = 1.0 / (1 + len(held_equal))
            for member in [v] + held_equal:
                graph.set_regularization([share], member)
        self._built = (graph, ids)
        return self._built

    def _build_if_feasible(self):
        """_build, or None when a factor's builder proves the constraints
        infeasible (a DENSE table of -inf only, say)."""
        try:
            return self._build()
        except _core.InfeasibleError:
            return None

    def _push_scores(self, graph, ids):
        """Sends the current variable and additional scores to the graph."""
        scores = np.zeros(graph.num_variables)
        scores[:len(self._scores)] = self._scores
        graph.set_variable_scores(scores)
        for factor, c_id in zip(self._factors, ids):
            first, count = graph.factor_additionals(c_id)
            if count:
                graph.set_additional_scores(factor._to_c_additionals(factor._additionals), first)

    def _current_solver(self, graph):
        if self._solver is None:
            self._solver = _core.Solver(graph)
        return self._solver

    def _solve(self, kind, **settings):
        """Solves with the current settings (kind: "map", "sparse", "exact"
        or "psdd", a _core.Solver method's suffix; settings: overrides);
        returns (value, posteriors, additional posteriors, info) with
        lists. A relaxation returns its last iterate even when it found the
        constraints infeasible, as AD3's do; a solve that holds no solution
        at all (dynamic programming or an exact search that proved them
        infeasible, or a factor that allows no configuration, such as a
        DENSE table of -inf only) returns value -inf and posteriors 0.

        LP-SparseMAP on a graph in which no variable has two links (a
        single factor, say) is each factor's SparseMAP, which lp-sparsemap
        reaches in one iteration at penalty 0 (its examples/sequence.py
        solves so, with set_eta_ad3(0.0) and set_max_iterations_ad3(1));
        concord solves each factor's QP by an active set whose rounds of
        oracle calls the iteration cap counts, and needs a few, so there
        the cap is at least its default, 1000: the solve converges, as
        LP-MAP's dynamic programming does on such graphs."""
        self._uses += 1
        self._sparse_use = None  # until this solve, if LP-SparseMAP, ends
        if kind == "sparse" and max(self._degrees, default=0) <= 1:
            settings.setdefault("max_iter", max(self._max_iter, 1000))
        no_solution = (float("-inf"), [0.0] * len(self._scores),
                       [0.0] * self._num_additionals())
        built = self._build_if_feasible()
        if built is None:
            info = _core.Info("infeasible", 0, float("-inf"), float("-inf"), 0.0, 0.0, False,
                              0.0, 0.0, 0, 0, False)
            return no_solution + (info,)
        graph, ids = built
        self._push_scores(graph, ids)
        solver = self._current_solver(graph)
        info = getattr(solver, "solve_" + kind)(self._settings(**settings))
        if solver.variables is None:
            return no_solution + (info,)
        u, v = solver.variables, solver.additionals
        additionals = []
        for factor, c_id in zip(self._factors, ids):
            first, count = graph.factor_additionals(c_id)
            additionals.extend(factor._from_c_additionals(v[first:first + count]).tolist())
        self._solved_links = ids
        if kind == "sparse":
            self._sparse_use = self._uses
        return info.value, u[:len(self._scores)].tolist(), additionals, info

    def _sparse_distribution(self, factor, since):
        """The sparse distribution behind factor's part of the graph's last
        LP-SparseMAP solution, (weights, U) with U over the factor's links,
        when that solve is the graph's last and came after use `since` (the
        factor's own last QP; None: never); else None."""
        if self._sparse_use is None or (since is not None and since > self._sparse_use):
            return None
        _, ids = self._built
        weights, U, _ = self._solver.factor_distribution(ids[self._factors.index(factor)])
        return weights, U

    def _num_additionals(self):
        return sum(factor._num_additionals() for factor in self._factors)

    def solve_lp_map_ad3(self):
        """LP-MAP by AD3 with the current settings: (value, posteriors,
        additional posteriors, status), status 0 integral, 1 fractional, 3
        unsolved (not converged, or the constraints proved infeasible: the
        last iterate, as AD3 returns it, or value -inf and posteriors 0
        when dynamic programming solved the graph and left none)."""
        value, u, v, info = self._solve("map")
        return value, u, v, _status_code(info)

    def solve_qp_ad3(self):
        """LP-SparseMAP (lp-sparsemap): the argmax over the local polytope
        of theta.u + phi.v - |u|^2 / 2, as solve_lp_map_ad3 returns; value
        is that objective."""
        value, u, v, info = self._solve("sparse")
        return value, u, v, _status_code(info)

    def solve_exact_map_ad3(self):
        """Exact MAP by branch and bound over AD3 (each node's LP-MAP with
        the current AD3 settings): (value, posteriors, additional
        posteriors, status), status 0 when the best assignment is proved
        optimal, 2 when no assignment satisfies every factor (value -inf,
        posteriors 0), 3 when stopped early (the best assignment so far)."""
        value, u, v, info = self._solve("exact")
        return value, u, v, _status_code(info, exact=True)

    def solve_lp_map_psdd(self):
        """LP-MAP by projected subgradient dual decomposition, with
        set_eta_psdd's step (relative to the scores' scale in concord) and
        set_max_iterations_psdd's cap: (value, posteriors, additional
        posteriors), three values as AD3 returns them (no status): the
        posteriors are the step-weighted average of the factors' MAPs (a
        certified MAP when the factors agreed on one), the value theirs."""
        step = {"psdd_eta": self._eta_psdd} if self._eta_psdd > 0 else {}  # else the default
        value, u, v, _ = self._solve("psdd", max_iter=max(self._max_iter_psdd, 1), **step)
        return value, u, v

    def jacobian_vec(self, du, out, n_iter=100, atol=1e-8):
        """After solve_qp_ad3: writes into `out` (a writable buffer of
        float64, such as a NumPy array, with one entry per variable; else
        TypeError or ValueError) the product of du with the Jacobian of the
        solution w.r.t. the variable scores, and returns, per factor in
        order, the product w.r.t. its additional log-potentials (a list,
        empty for factors without any). Exact (concord's implicit backward
        pass, to 1e-10): n_iter and atol are accepted and ignored."""
        if self._solver is None or self._solved_links is None:
            raise ValueError("solve_qp_ad3 first")
        du = as_doubles(du, "du")
        if du.size != len(self._scores):
            raise ValueError("du: expected %d values, got %d" % (len(self._scores), du.size))
        target = _float64_buffer(out, len(self._scores), "out")
        dtheta, grads = self._jacobian_products(du)
        target[...] = dtheta.reshape(target.shape)
        return [g.tolist() for g in grads]

    def _jacobian_products(self, du, dv=None):
        """J (du, dv) at the last solve_qp_ad3, J the Jacobian of its
        solution (the variables' values, then every factor's additional
        values) w.r.t. (the variable scores, the additional
        log-potentials): du one value per variable, dv None (zeros) or one
        array per factor with additional log-potentials, in order, as
        set_all_additionals takes them. Returns (the variables' part, one
        array per factor in its own layout). J is symmetric, so these are
        jacobian_vec's products and also the solution's tangents along
        (du, dv) (forward mode)."""
        graph, ids = self._built
        full_du = np.zeros(graph.num_variables)
        full_du[:du.size] = du
        full_dv = None
        if dv is not None:
            full_dv = np.zeros(graph.num_additionals)
            given = iter(dv)
            for factor, c_id in zip(self._factors, ids):
                if factor._num_additionals():
                    first, count = graph.factor_additionals(c_id)
                    full_dv[first:first + count] = factor._to_c_additionals(next(given))
        dtheta, dphi, _ = self._solver.backward(full_du, full_dv)
        grads = []
        for factor, c_id in zip(self._factors, ids):
            first, count = graph.factor_additionals(c_id)
            grads.append(factor._from_c_additionals(dphi[first:first + count]))
        return dtheta[:len(self._scores)], grads

    def get_dual_variables(self):
        """The last solve's multipliers, one per link (AD3's scale: factors
        see theta_i / deg_i + 2 lambda); 0 after a solve by dynamic
        programming (a graph without cycles), which has none; [] before
        any solve."""
        return self._link_state(0)

    def get_local_primal_variables(self):
        """The factors' copies of their variables at the end of the last
        solve, one per link (after a solve by dynamic programming, the
        solution's values); [] before any solve."""
        return self._link_state(1)

    def get_global_primal_variables(self):
        """The last solve's posteriors, one per variable; [] before any."""
        if self._solved_links is None:
            return []
        return self._solver.variables[:len(self._scores)].tolist()

    def _link_state(self, which):
        if self._solved_links is None:
            return []
        graph, ids = self._built
        multipliers, copies = self._solver.links()
        values = multipliers / 2.0 if which == 0 else copies
        starts = np.concatenate([[0], np.cumsum([graph.factor_degree(f)
                                                 for f in range(graph.num_factors)])])
        out = []
        for c_id in ids:
            out.extend(values[starts[c_id]:starts[c_id + 1]].tolist())
        return out

    def _link_offset(self, factor):
        offset = 0
        for other in self._factors:
            if other is factor:
                return offset
            offset += len(other._variables)
        raise ValueError("the factor is not in this graph")

    def _configure(self, eta, adapt, max_iter, tol, ensure_multi_variables, verbose):
        """What solve() and solve_qp() set before solving, as AD3 does."""
        self.set_verbosity(int(verbose))
        self.set_eta_ad3(eta)
        self.adapt_eta_ad3(adapt)
        self.set_max_iterations_ad3(max_iter)
        self.set_residual_threshold_ad3(tol)
        if ensure_multi_variables:
            self.fix_multi_variables_without_factors()

    def solve(self, eta=0.1, adapt=True, max_iter=1000, tol=1e-6, ensure_multi_variables=True,
              verbose=False, branch_and_bound=False):
        """Sets the AD3 settings, makes multi-variables one-hot when asked
        (fix_multi_variables_without_factors), and solves: LP-MAP by AD3, or
        exact MAP with branch_and_bound. Returns (value, posteriors,
        additional posteriors, status), status "integral", "fractional",
        "infeasible" or "unsolved"."""
        self._configure(eta, adapt, max_iter, tol, ensure_multi_variables, verbose)
        result = self.solve_exact_map_ad3() if branch_and_bound else self.solve_lp_map_ad3()
        value, posteriors, additionals, code = result
        return value, posteriors, additionals, STATUS_NAMES[code]

    def solve_qp(self, eta=0.1, adapt=True, max_iter=1000, tol=1e-6,
                 ensure_multi_variables=True, verbose=False, branch_and_bound=False):
        """solve() for LP-SparseMAP (lp-sparsemap): branch_and_bound is
        ignored."""
        self._configure(eta, adapt, max_iter, tol, ensure_multi_variables, verbose)
        value, posteriors, additionals, code = self.solve_qp_ad3()
        return value, posteriors, additionals, STATUS_NAMES[code]
