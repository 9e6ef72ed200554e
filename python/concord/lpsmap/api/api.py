"""lp-sparsemap's ``lpsmap.api.api``: tensors of binary variables, slices of
them, and the numpy FactorGraph (LP-SparseMAP)."""

import sys
import warnings

import numpy as np

from concord.ad3.factor_graph import PFactorGraph
from concord.graph import has_solution, is_tensor, span

__all__ = ["Variable", "Slice", "FactorGraph"]


def solved_values(pfg, kind):
    """(the variables' values after pfg's solve of `kind` ("sparse":
    LP-SparseMAP, "map": LP-MAP), whether they are a solution). When the
    factors' constraints have no common solution, which concord's solver
    proves, the values are its last iterate (lp-sparsemap returns its own
    silently) and a RuntimeWarning says they solve nothing."""
    _, u, _, info = pfg._solve(kind)
    solved = has_solution(info)
    if not solved:
        warnings.warn("the factors' constraints admit no common solution: the values are the "
                      "solver's last iterate, not a solution", RuntimeWarning, stacklevel=3)
    return u, solved


class Variable:
    """Binary variables shaped like their scores, which it keeps (read at
    each solve). ``value`` holds the last solution; indexing gives a Slice."""

    def __init__(self, scores):
        self.shape = scores.shape
        self._ix = np.arange(int(np.prod(self.shape, dtype=np.int64))).reshape(self.shape)
        self._scores = scores

    def __getitem__(self, index):
        return Slice(self, index)

    def __repr__(self):
        return "Variable(shape={})".format(self.shape)


class Slice:
    """Part of a Variable (or of a Slice), picked by any numpy index, as
    lp-sparsemap's ``Slice(variable, index)``; factors see its variables in
    C order. Slicing a slice composes the indices."""

    def __init__(self, variable, index):
        self._base_var = getattr(variable, "_base_var", variable)
        self._ix = variable._ix[index]

    def __getitem__(self, index):
        return Slice(self, index)

    @property
    def shape(self):
        """The slice's shape."""
        return self._ix.shape

    @property
    def value(self):
        """The slice of the variable's value (a tensor for TorchFactorGraph)."""
        value = self._base_var.value
        if is_tensor(value):
            return value.reshape(-1)[sys.modules["torch"].as_tensor(self._ix)]
        return value.flat[self._ix]

    def __repr__(self):
        return "Slice(shape={})".format(self.shape)


class FactorGraph:
    """Variables (``variable_from``, ``variable``) and factor descriptions
    (``add``), solved by LP-SparseMAP (``solve``): every variable's
    ``value`` becomes its solution, a float64 array."""

    def __init__(self):
        self.variables = []
        self.factors = []

    def variable_from(self, scores):
        """A Variable over scores (an array; a tensor for TorchFactorGraph)."""
        variable = Variable(scores)
        self.variables.append(variable)
        return variable

    def variable(self, shape):
        """A Variable with zero scores."""
        return self.variable_from(np.zeros(shape))

    def add(self, factor):
        """Adds a factor description."""
        self.factors.append(factor)

    def _cat(self, scores):
        return np.concatenate(scores)

    def _ravel(self, x):
        return np.asarray(x).ravel()  # lists of scores too

    def _make_variables(self, pfg):
        """One binary variable per element of every Variable, in order;
        returns (offsets, variables, concatenated scores)."""
        offset, pvars, scores = {}, [], []
        for variable in self.variables:
            offset[variable] = len(pvars)
            scores.append(self._ravel(variable._scores))
            pvars.extend(pfg.create_binary_variable() for _ in range(variable._ix.size))
        return offset, pvars, self._cat(scores)

    def _vars_to_pvar(self, variables, offset, pvars):
        """The binary variables of a factor argument (a Variable, a Slice or
        a tuple of them), flattened in C order."""
        if isinstance(variables, tuple):
            return tuple(self._vars_to_pvar(v, offset, pvars) for v in variables)
        if isinstance(variables, Variable):
            base = variables
        elif isinstance(variables, Slice):
            base = variables._base_var
        else:
            raise NotImplementedError("a factor's variables must be a Variable, a Slice or a "
                                      "tuple of them")
        if base not in offset:
            raise ValueError("a factor's variable %r is not in this FactorGraph" % (base,))
        ix = np.asarray(variables._ix).ravel() + offset[base]
        return [pvars[i] for i in ix]

    def _make_factors(self, pfg, offset, pvars):
        """Adds every factor; returns the additional scores of those that
        have any, flattened (a sequence of one position has none)."""
        scores = []
        for factor in self.factors:
            _, additionals = factor._construct(pfg, self._vars_to_pvar(factor._variables,
                                                                       offset, pvars))
            scores.extend(part for part in map(self._ravel, additionals) if len(part))
        return scores

    def _graph(self, max_iter, max_inner_iter, tol, step_size, adapt, verbose):
        """A new PFactorGraph with the variables, factors and settings;
        returns (graph, offsets, scores, additional scores)."""
        if not self.variables:
            raise ValueError("the FactorGraph has no variables to solve for (variable_from adds "
                             "them)")
        pfg = PFactorGraph()
        offset, pvars, scores = self._make_variables(pfg)
        scores_add = self._make_factors(pfg, offset, pvars)
        pfg.set_verbosity(verbose)
        pfg.set_eta_ad3(step_size)
        pfg.adapt_eta_ad3(adapt)
        pfg.set_max_iterations_ad3(max_iter)
        pfg.set_residual_threshold_ad3(tol)
        pfg.set_inner_iter(max_inner_iter)
        return pfg, offset, scores, scores_add

    def _set_values(self, u, offset):
        for variable in self.variables:
            k = offset[variable]
            variable.value = span(u, k, variable._ix.size).reshape(variable._ix.shape)

    def solve(self, max_iter=1000, max_inner_iter=10, tol=1e-6, step_size=.1, adapt=True,
              verbose=False):
        """LP-SparseMAP: the argmax over the local polytope of theta.u +
        phi.v - |u|^2 / 2; sets every variable's value. The settings are
        TorchFactorGraph.solve's."""
        pfg, offset, scores, scores_add = self._graph(max_iter, max_inner_iter, tol, step_size,
                                                      adapt, verbose)
        pfg.set_log_potentials(scores)
        pfg.set_all_additionals([np.atleast_1d(x) for x in scores_add])
        self._set_values(np.array(solved_values(pfg, "sparse")[0]), offset)
