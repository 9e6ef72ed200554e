"""Factor graphs as plain data, for the reference tests, and their build with
the installed package's low-level module (concord._core).

GraphSpec is a description of a factor graph (build steps in order, scores);
`build` creates it through concord._core.Graph's builders, one call per
step, and returns a Solver over it with the spec's scores. The tests'
references read the same GraphSpec and derive the factors' meaning from
concord.h's documentation on their own; nothing here knows how concord
solves anything.
"""

import numpy as np

from concord import _core


class GraphSpec:
    """A factor graph as plain data, in build order.

    steps: list of tuples, each one API call:
      ("vars", count)                      binary variables
      ("multi", num_states, one_hot)       a multi-variable (one_hot adds an XOR)
      ("logic", name, vars, negated)       name in concord._core.LOGIC_KINDS
      ("budget", vars, negated, budget, exact)
      ("knapsack", vars, negated, costs, budget)
      ("pair", var1, var2)                 its score is phi at its additional
      ("dense", num_states, vars, forbidden)  forbidden: joint states (bools)
    theta: variable scores (length n_vars); phi: additional scores (length
    n_add; the entries of forbidden DENSE states are ignored); weights:
    LP-SparseMAP's regularization weights (length n_vars), or None for 1.
    """

    def __init__(self, steps, theta, phi, weights=None):
        self.steps = list(steps)
        self.theta = np.asarray(theta, dtype=float)
        self.phi = np.asarray(phi, dtype=float)
        self.weights = None if weights is None else np.asarray(weights, dtype=float)

    def sizes(self):
        """(n_vars, n_add) implied by the steps."""
        n_vars = n_add = 0
        for step in self.steps:
            if step[0] in ("vars", "multi"):
                n_vars += step[1]
            elif step[0] == "pair":
                n_add += 1
            elif step[0] == "dense":
                n_add += int(np.prod(step[1]))
        return n_vars, n_add

    def describe(self):
        """A reproducer: the steps and scores as Python literals."""
        weights = None if self.weights is None else self.weights.tolist()
        return "GraphSpec(%r,\n  theta=%r,\n  phi=%r,\n  weights=%r)" % (
            self.steps, self.theta.tolist(), self.phi.tolist(), weights)


def _add(graph, step):
    kind = step[0]
    if kind == "vars":
        graph.add_variables(step[1])
    elif kind == "multi":
        graph.add_multi_variable(step[1], one_hot=step[2])
    elif kind == "logic":
        _, name, vars_, negated = step
        graph.add_logic(name, vars_, negated)
    elif kind == "budget":
        _, vars_, negated, budget, exact = step
        graph.add_budget(vars_, budget, exact, negated)
    elif kind == "knapsack":
        _, vars_, negated, costs, budget = step
        graph.add_knapsack(vars_, costs, budget, negated)
    elif kind == "pair":
        graph.add_pair(step[1], step[2], 0.0)
    elif kind == "dense":
        _, states, vars_, forbidden = step
        graph.add_dense(states, vars_, np.where(np.asarray(forbidden, dtype=bool), -np.inf, 0.0))
    else:
        raise ValueError(kind)


def build(spec):
    """A concord._core.Solver over the graph the spec describes, holding the
    spec's scores as its own."""
    graph = _core.Graph()
    for step in spec.steps:
        _add(graph, step)
    assert (graph.num_variables, graph.num_additionals) == spec.sizes()
    if spec.weights is not None:
        graph.set_regularization(spec.weights)
    solver = _core.Solver(graph)
    solver.set_scores(spec.theta, spec.phi)
    return solver


def solve_sparse(solver, settings=None):
    """LP-SparseMAP: (u, v, Info)."""
    info = solver.solve_sparse(settings)
    return solver.variables, solver.additionals, info


def loss_of(solver, which, u_gold, v_gold=None, settings=None):
    """concord_solver_loss_sparsemap (which="sparsemap") or _hinge ("hinge"):
    (loss, dtheta, dphi, Info)."""
    method = solver.loss_sparsemap if which == "sparsemap" else solver.loss_hinge
    return method(u_gold, v_gold, settings)
