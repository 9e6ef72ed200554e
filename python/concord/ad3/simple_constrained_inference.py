"""AD3's ``ad3.simple_constrained_inference``: the pairwise models of
simple_inference with logic constraints between node states. The model is
binarized: a binary variable per (node, state) with an XOR per node, a
binary variable per (edge, source state, target state) tied to the node
states by XORs, and one logic factor per constraint."""

import numpy as np

from concord.ad3 import factor_graph as fg
from concord.ad3.simple_inference import _check_simple, _node_at

__all__ = ["general_constrained_graph", "general_constrained_graph_singletype",
           "general_constrained_graph_multitype"]


def general_constrained_graph(unaries, edges, edge_weights, constraints, verbose=1,
                              n_iterations=1000, eta=0.1, exact=False):
    """general_graph with constraints: single-type form (unaries an array)
    or typed form (a list), see general_constrained_graph_singletype and
    general_constrained_graph_multitype. Returns (marginals, edge
    marginals, value, status)."""
    if isinstance(unaries, list):
        return general_constrained_graph_multitype(unaries, edges, edge_weights, constraints,
                                                   verbose, n_iterations, eta, exact)
    return general_constrained_graph_singletype(unaries, edges, edge_weights, constraints,
                                                verbose, n_iterations, eta, exact)


def _node_variables(graph, unaries):
    """A binary variable per (node, state), node-major, with an XOR per
    node; returns them as a (nodes, states) list of lists."""
    rows = []
    for scores in np.asarray(unaries, dtype=np.float64):
        row = []
        for score in scores:
            variable = graph.create_binary_variable()
            variable.set_log_potential(score)
            row.append(variable)
        graph.create_factor_logic("XOR", row)
        rows.append(row)
    return rows


def _edge_variables(graph, source, target, table):
    """Binary variables for the joint states of an edge, source state
    major, scored by table, each node state the sum of its row (column)
    of joint states (an XOR over the node state negated and the joint
    states)."""
    joint = []
    for scores in np.asarray(table, dtype=np.float64):
        row = []
        for score in scores:
            variable = graph.create_binary_variable()
            variable.set_log_potential(score)
            row.append(variable)
        joint.append(row)
    for k, row in enumerate(joint):
        graph.create_factor_logic("XOR", [source[k]] + row, [True] + [False] * len(row))
    for l, column in enumerate(zip(*joint)):
        graph.create_factor_logic("XOR", [target[l]] + list(column),
                                  [True] + [False] * len(column))


def _broadcast(values, count):
    """AD3's rule: anything that is not a list stands for every position."""
    return values if isinstance(values, list) else [values] * count


def _listed(constraints):
    """The constraints to add: none for None, False or True (True asks for
    the binarized model without constraints)."""
    return () if constraints is None or isinstance(constraints, bool) else constraints


def _solve(graph, verbose, n_iterations, eta, exact):
    return graph.solve(eta=eta, adapt=True, max_iter=n_iterations, branch_and_bound=exact,
                       verbose=verbose)


def general_constrained_graph_singletype(unaries, edges, edge_weights, constraints, verbose=1,
                                         n_iterations=1000, eta=0.1, exact=False):
    """Single-type form: unaries (nodes, states), edges (edges, 2),
    edge_weights (edges, states, states), constraints a list of
    (operator, nodes, states, negated) with operator a logic factor type
    (XOR, OR, ATMOSTONE, IMPLY, XOROUT, OROUT, ANDOUT) over the variables
    "node nodes[k] is in state states[k]" (states and negated may be
    single values for every k; a state outside 0 .. states - 1 is a
    ValueError). Returns (marginals (nodes, states), edge
    marginals (edges, states, states), value, status)."""
    _check_simple(unaries, edges, edge_weights)
    n_nodes, n_states = unaries.shape
    graph = fg.PFactorGraph()
    nodes = _node_variables(graph, unaries)
    for c, (op, l_nodes, l_states, l_negated) in enumerate(_listed(constraints)):
        l_states = _broadcast(l_states, len(l_nodes))
        l_negated = _broadcast(l_negated, len(l_nodes))
        if len(l_states) != len(l_nodes):
            raise ValueError("Number of states differs from unary index number.")
        if len(l_negated) != len(l_nodes):
            raise ValueError("Number of negated differs from unary index number.")
        if any(state >= n_states or state < 0 for state in l_states):
            raise ValueError("State should in [%d, %d]" % (0, n_states - 1))
        where = "constraint %d" % c
        graph.create_factor_logic(op, [_node_at(nodes, i, where)[k]
                                       for i, k in zip(l_nodes, l_states)], list(l_negated))
    for k, ((source, target), table) in enumerate(zip(edges, edge_weights)):
        where = "edge %d" % k
        _edge_variables(graph, _node_at(nodes, source, where), _node_at(nodes, target, where),
                        table)
    value, posteriors, _, status = _solve(graph, verbose, n_iterations, eta, exact)
    posteriors = np.array(posteriors)
    size = n_nodes * n_states
    return (posteriors[:size].reshape(unaries.shape),
            posteriors[size:].reshape(edge_weights.shape), value, status)


def general_constrained_graph_multitype(l_unaries, l_edges, l_edge_weights, constraints,
                                        verbose=1, n_iterations=1000, eta=0.1, exact=False):
    """Typed form: l_unaries a list of T arrays (nodes_t, states_t),
    l_edges and l_edge_weights lists of T^2 entries (type pair t1 * T + t2),
    as general_graph's typed form. A constraint is (operator, l_nodes,
    l_states, l_negated), one list per type (nodes of that type, their
    states, their negations), optionally followed by the last variable of
    the factor as (type, node, state, negated) (the output of OROUT...).
    Returns lists: marginals per type (nodes_t, states_t), edge marginals
    per type pair (edges, states_t1 * states_t2); then value, status."""
    n_types = len(l_unaries)
    assert n_types ** 2 == len(l_edges)
    assert len(l_edges) == len(l_edge_weights)
    graph = fg.PFactorGraph()
    nodes = [_node_variables(graph, unaries) for unaries in l_unaries]
    states = [np.shape(unaries)[1] for unaries in l_unaries]
    for c, constraint in enumerate(_listed(constraints)):
        op, l_nodes, l_states, l_negated = constraint[:4]
        where = "constraint %d" % c
        last = constraint[4] if len(constraint) > 4 else None
        variables, flags = [], []
        for typ, (t_nodes, t_states, t_negated) in enumerate(zip(l_nodes, l_states, l_negated)):
            if not t_nodes:
                continue
            t_states = _broadcast(t_states, len(t_nodes))
            t_negated = _broadcast(t_negated, len(t_nodes))
            if len(t_states) != len(t_nodes):
                raise ValueError("Type %d: Number of states differs from unary index number."
                                 % typ)
            if len(t_negated) != len(t_nodes):
                raise ValueError("type %d: Number of negated differs from unary index number."
                                 % typ)
            if max(t_states) >= states[typ] or min(t_states) < 0:
                raise ValueError("Type %d: State should in [%d, %d]" % (typ, 0, states[typ] - 1))
            variables.extend(_node_at(nodes[typ], i, where)[k] for i, k in zip(t_nodes, t_states))
            flags.extend(t_negated)
        if last is not None:
            last_type, last_node, last_state, last_negated = last
            _node_at(range(n_types), last_type, where, "last type")
            if not 0 <= last_state < states[last_type]:
                raise ValueError("(last) Type %d: State should in [%d, %d]"
                                 % (last_type, 0, states[last_type] - 1))
            variables.append(_node_at(nodes[last_type], last_node, where)[last_state])
            flags.append(last_negated)
        graph.create_factor_logic(op, variables, list(flags))
    pairs = [(t1, t2) for t1 in range(n_types) for t2 in range(n_types)]
    for (t1, t2), edges, weights in zip(pairs, l_edges, l_edge_weights):
        if len(edges):
            assert np.shape(weights)[1:] == (states[t1], states[t2])
        for k, ((source, target), table) in enumerate(zip(edges, weights)):
            where = "type (%d, %d) edge %d" % (t1, t2, k)
            _edge_variables(graph, _node_at(nodes[t1], source, where),
                            _node_at(nodes[t2], target, where), table)
    value, posteriors, _, status = _solve(graph, verbose, n_iterations, eta, exact)
    posteriors = np.array(posteriors)
    node_out, at = [], 0
    for unaries, k in zip(l_unaries, states):
        size = len(unaries) * k
        node_out.append(posteriors[at:at + size].reshape(len(unaries), k))
        at += size
    edge_out = []
    for (t1, t2), edges in zip(pairs, l_edges):
        width = states[t1] * states[t2]
        size = len(edges) * width
        edge_out.append(posteriors[at:at + size].reshape(len(edges), width))
        at += size
    return node_out, edge_out, value, status
