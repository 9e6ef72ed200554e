"""concord.learn against independent references.

* Loss-augmented inference (and plain inference) returns the maximiser of
  w . joint_feature(x, y') + Hamming(y, y') found by enumerating every
  labelling y' of small examples, for every model (multilabel trees, chains,
  graphs with DENSE and Potts edges, hard constraints); exact MAP always,
  LP-MAP on trees; on graphs with cycles LP-MAP is a relaxation, so there
  its value bounds the enumerated maximum and, when integral, equals it.
* GraphCRF's Potts edges (PAIR factors for weights of one sign, DENSE
  tables for both signs) give the optimum over the local polytope with a
  joint distribution per edge: scipy's LP for LP-MAP, cvxopt's QP for
  LP-SparseMAP, on paths and cycles, and one edge where PAIR factors alone
  would score above the MAP.
* The structured hinge's subgradient equals central finite differences of
  the loss along random directions, for LP-MAP and exact MAP (piecewise
  linear: points where the one-sided differences disagree are kinks,
  skipped and counted) and LP-SparseMAP (differentiable); so does
  DistRepSSVM's gradient with respect to the label matrix A.
* nuclear_norm_prox equals soft-thresholding computed from the
  eigendecomposition of X^T X, and is the unique minimiser of its
  objective: random perturbations of it only increase the objective.
* DistRepSSVM with A fixed to the identity trains the same model as
  SubgradientSSVM (no regularisation; and lambda1 = 1 / (C n)).
* chow_liu_tree has the largest total mutual information of all spanning
  trees (enumerated by Pruefer sequences).
* A gold labelling is refused, before any training, exactly when it breaks
  a hard constraint: every labelling of small examples against each
  constraint's meaning written out in Python; labellings of the wrong
  length, dtype or labels and examples that are not feature matrices are
  refused naming the example; labellings as columns (a multilabel
  example's as a row), numpy.matrix and scipy sparse Y train as 1-D
  labellings do; constraints set after fit are the ones
  predict meets (the enumerated best allowed labelling); fit and score
  read each gold labelling once.
* A graph's joint score is the brute-force sum of its node scores and one
  pair score per edge; an edge list naming a pair twice is refused.
* The readers name the line of a malformed row.
* The python blocks of docs/learning.md run (their assertions included).
"""

import itertools
import os
import re

import numpy as np
import pytest

import concord
from concord.learn import (ChainCRF, DistRepSSVM, GraphCRF, MultiLabelClf, SubgradientSSVM,
                           chow_liu_tree, nuclear_norm_prox, structured_hinge)
from concord.learn import learners
from concord.learn.datasets import load_conllu, load_mulan, load_mulan_split
from test_docs import python_blocks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "data", "learn")
TIGHT = {"tol": 1e-13, "max_iter": 100000}


def chain_data(rng, n, states=3, features=4, lengths=(2, 5)):
    """n random sequences of lengths in `lengths`: states, and features
    that are noisy one-hot codes of them."""
    X, Y = [], []
    for _ in range(n):
        length = int(rng.integers(lengths[0], lengths[1] + 1))
        y = rng.integers(states, size=length)
        X.append(rng.normal(size=(length, features)) + np.eye(states, features)[y])
        Y.append(y)
    return X, Y


# BIO tags of two types: 0 O, 1 B-a, 2 I-a, 3 B-b, 4 I-b; I-x follows only
# B-x or I-x and never starts a sequence
BIO_FORBIDDEN = np.ones((5, 5), dtype=bool)
BIO_FORBIDDEN[:, [0, 1, 3]] = False
BIO_FORBIDDEN[[1, 2], 2] = BIO_FORBIDDEN[[3, 4], 4] = False
BIO_FORBIDDEN_STARTS = np.array([False, False, True, False, True])


def bio_allowed(y):
    """Whether the tags y keep the BIO rules (BIO_FORBIDDEN*)."""
    return not BIO_FORBIDDEN_STARTS[y[0]] and not BIO_FORBIDDEN[y[:-1], y[1:]].any()


def bio_data(rng, n, lengths=(2, 6)):
    """n random BIO tag sequences (a name of a random type begun with
    probability 0.3, continued with probability 0.5) and noisy one-hot
    features with a bias column."""
    X, Y = [], []
    for _ in range(n):
        y, inside = [], None
        for _ in range(int(rng.integers(lengths[0], lengths[1] + 1))):
            if inside is not None and rng.random() < 0.5:
                y.append(inside)
            elif rng.random() < 0.3:
                begin = int(rng.choice([1, 3]))
                y.append(begin)
                inside = begin + 1
                continue
            else:
                y.append(0)
            if y[-1] == 0:
                inside = None
        y = np.array(y)
        assert bio_allowed(y)
        X.append(np.hstack([rng.normal(size=(len(y), 5)) + 2 * np.eye(5)[y],
                            np.ones((len(y), 1))]))
        Y.append(y)
    return X, Y


def test_chain_forbidden_transitions_are_never_inferred_nor_taken_as_gold():
    """ChainCRF with BIO's forbidden transitions and starts: they have no
    weight; inference and loss-augmented inference at random weights are
    the enumerated best among the tag sequences that keep the rules (scored
    from W and P directly); a trained tagger's predictions keep them; a
    gold sequence that breaks them is refused, naming the example."""
    rng = np.random.default_rng(11)
    model = ChainCRF(5, forbidden_transitions=BIO_FORBIDDEN,
                     forbidden_starts=BIO_FORBIDDEN_STARTS, inference_settings=TIGHT)
    X, Y = bio_data(rng, 40)
    model.initialize(X, Y)
    assert model.size_joint_feature == 5 * 6 + int((~BIO_FORBIDDEN).sum())

    def score(x, y, W, P):
        return sum(W[t] @ x[i] for i, t in enumerate(y)) + sum(P[a, b] for a, b in zip(y, y[1:]))

    for x, y in [(x, y) for x, y in zip(X, Y) if len(y) <= 5][:6]:
        w = rng.normal(size=model.size_joint_feature) * 2
        W, P = model.split_weights(w)
        candidates = [np.array(c) for c in itertools.product(range(5), repeat=len(y))
                      if bio_allowed(np.array(c))]
        labels = model.inference(x, w)
        assert bio_allowed(labels)
        assert score(x, labels, W, P) == pytest.approx(
            max(score(x, c, W, P) for c in candidates), abs=1e-9)
        labels = model.loss_augmented_inference(x, y, w)
        assert bio_allowed(labels)
        assert score(x, labels, W, P) + np.sum(labels != y) == pytest.approx(
            max(score(x, c, W, P) + np.sum(c != y) for c in candidates), abs=1e-9)
    tagger = SubgradientSSVM(model, max_iter=20, random_state=0).fit(X[:30], Y[:30])
    predictions = tagger.predict(X[30:])
    assert all(bio_allowed(p) for p in predictions)
    assert np.mean(np.concatenate(predictions) == np.concatenate(Y[30:])) > 0.8
    broken = list(Y)
    broken[4] = Y[4].copy()
    broken[4][0] = 2
    with pytest.raises(ValueError, match="example 4: the labelling starts in state 2"):
        SubgradientSSVM(model, max_iter=1).fit(X, broken)
    broken[4][:2] = [0, 4]
    with pytest.raises(ValueError, match="example 4: the labelling goes from state 0 at "
                                         "position 0 to state 4"):
        SubgradientSSVM(model, max_iter=1).fit(X, broken)
    with pytest.raises(ValueError, match="forbidden_starts forbids every state"):
        ChainCRF(5, forbidden_starts=np.ones(5, dtype=bool)).initialize(X, Y)
    with pytest.raises(ValueError, match="forbidden_transitions must be None or a boolean"):
        ChainCRF(5, forbidden_transitions=np.ones((5, 4), dtype=bool)).initialize(X, Y)
    only_o = np.ones((5, 5), dtype=bool)
    only_o[0, 0] = False   # O -> O only, and every sequence starts in B-a
    stuck = ChainCRF(5, forbidden_transitions=only_o, forbidden_starts=np.arange(5) != 1)
    stuck.initialize(X, Y)
    with pytest.raises(ValueError, match="leave no labelling of length %d" % len(X[0])):
        stuck.inference(X[0], np.zeros(stuck.size_joint_feature))


def multilabel_data(rng, n, labels=5, features=4):
    """n examples of `labels` labels from a random linear model with
    noise (features with a bias column)."""
    X = np.hstack([rng.normal(size=(n, features - 1)), np.ones((n, 1))])
    Y = (X @ rng.normal(size=(labels, features)).T + rng.normal(size=(n, labels)) > 0)
    return X, Y.astype(int)


def graph_data(rng, n, nodes=5, states=3, features=4, cycle=True):
    """n random graphs of `nodes` nodes (a path, closed into a cycle when
    `cycle`): states, and features that are noisy one-hot codes of them."""
    X, Y = [], []
    for _ in range(n):
        edges = [(i, i + 1) for i in range(nodes - 1)] + ([(nodes - 1, 0)] if cycle else [])
        y = rng.integers(states, size=nodes)
        X.append((rng.normal(size=(nodes, features)) + np.eye(states, features)[y],
                  np.array(edges)))
        Y.append(y)
    return X, Y


def labellings(model, x):
    """Every labelling of x."""
    if isinstance(model, MultiLabelClf):
        shape, states = model.n_labels, 2
    elif isinstance(model, ChainCRF):
        shape, states = x.shape[0], model.n_labels
    else:
        shape, states = x[0].shape[0], model.n_labels
    return [np.array(y) for y in itertools.product(range(states), repeat=shape)]


def brute_force(model, x, y, w, allowed=lambda y: True):
    """max over labellings y' (those `allowed`) of w . joint_feature + Hamming."""
    best = -np.inf
    for candidate in labellings(model, x):
        if allowed(candidate):
            value = w @ model.joint_feature(x, candidate)
            if y is not None:
                value += model.loss(y, candidate)
            best = max(best, value)
    return best


MODELS = [
    ("multilabel tree", lambda: MultiLabelClf(5, edges="tree"), multilabel_data, True),
    ("multilabel full", lambda: MultiLabelClf(5, edges="full"), multilabel_data, False),
    ("chain", lambda: ChainCRF(3), chain_data, True),
    ("graph dense path", lambda: GraphCRF(3),
     lambda rng, n: graph_data(rng, n, cycle=False), True),
    ("graph dense cycle", lambda: GraphCRF(3), graph_data, False),
    ("graph potts path", lambda: GraphCRF(3, pairwise="potts"),
     lambda rng, n: graph_data(rng, n, cycle=False), True),
    ("graph potts cycle", lambda: GraphCRF(3, pairwise="potts"), graph_data, False),
]


@pytest.mark.parametrize("method", ["map", "exact"])
@pytest.mark.parametrize("name, make, data, exact", MODELS, ids=[m[0] for m in MODELS])
def test_loss_augmented_inference_is_the_enumerated_maximiser(name, make, data, exact, method):
    """Inference and loss-augmented inference reach the maximum found by
    enumerating every labelling (LP-MAP: bounds it on cycles, equals it
    when integral)."""
    rng = np.random.default_rng(1)
    model = make().set_params(inference_method=method, inference_settings=TIGHT)
    exact = exact or method == "exact"
    X, Y = data(rng, 12)
    model.initialize(X, Y)
    checked = integral = 0
    for scale in (0.5, 2.0):
        w = rng.normal(size=model.size_joint_feature) * scale
        for x, y in zip(X, Y):
            for gold in (y, None):
                best = brute_force(model, x, gold, w)
                if gold is None:
                    u, Q = model.inference(x, w, relaxed=True)
                    labels = model.inference(x, w)
                    value = w @ model.joint_feature(x, (u, Q))
                else:
                    u, Q = model.loss_augmented_inference(x, gold, w, relaxed=True)
                    labels = model.loss_augmented_inference(x, gold, w)
                    cost, constant = model.cost(model.gold_indicators(
                        model._design(model._one(x)), [gold]))
                    value = (w @ model.joint_feature(x, (u, Q)) + np.sum(cost * u.reshape(
                        cost.shape)) + constant.sum())
                found = w @ model.joint_feature(x, labels) + (
                    0 if gold is None else model.loss(gold, labels))
                is_integral = np.allclose(u, np.round(u), atol=1e-7)
                assert value >= best - 1e-6          # the LP bounds the maximum
                assert is_integral or method != "exact"
                if exact or is_integral:
                    assert value == pytest.approx(best, abs=1e-6)
                    assert found == pytest.approx(best, abs=1e-6)
                integral += is_integral
                checked += 1
    assert integral >= checked // 2   # the integral case is the common one


def local_polytope_optimum(theta, edges, diagonal, sparse):
    """The optimum over the local polytope of nodes with one-hot states and
    per edge a joint distribution mu (states x states) with the two nodes'
    marginals, of theta . u + sum over the edges of diagonal . diag(mu)
    (sparse: minus |u|^2 / 2, LP-SparseMAP's): scipy's LP solver, cvxopt's
    QP. Returns the optimal value and u."""
    from scipy.optimize import linprog
    n, states = theta.shape
    n_u, block = n * states, states * states
    size = n_u + len(edges) * block
    rows, rhs = [], []
    for i in range(n):
        row = np.zeros(size)
        row[i * states:(i + 1) * states] = 1
        rows.append(row)
        rhs.append(1.0)
    for e, (i, j) in enumerate(edges):
        mu = n_u + e * block + np.arange(block).reshape(states, states)
        # every row sum, and all column sums but the last (implied by the
        # rest: both nodes' states sum to 1), so that the rows are independent
        for s in range(states):
            row = np.zeros(size)
            row[mu[s]] = 1
            row[i * states + s] = -1
            rows.append(row)
            rhs.append(0.0)
        for t in range(states - 1):
            row = np.zeros(size)
            row[mu[:, t]] = 1
            row[j * states + t] = -1
            rows.append(row)
            rhs.append(0.0)
    gain = np.zeros(size)
    gain[:n_u] = theta.reshape(-1)
    for e in range(len(edges)):
        gain[n_u + e * block + np.arange(states) * (states + 1)] = diagonal
    A, b = np.array(rows), np.array(rhs)
    if not sparse:
        lp = linprog(-gain, A_eq=A, b_eq=b, bounds=(0, None), method="highs")
        assert lp.status == 0
        return -lp.fun, lp.x[:n_u].reshape(n, states)
    from cvxopt import matrix, solvers
    curvature = np.zeros((size, size))
    curvature[np.arange(n_u), np.arange(n_u)] = 1.0
    qp = solvers.coneqp(matrix(curvature), matrix(-gain), G=matrix(-np.eye(size)),
                        h=matrix(np.zeros(size)), A=matrix(A), b=matrix(b), kktsolver="ldl",
                        options={"show_progress": False, "abstol": 1e-10, "reltol": 1e-10,
                                 "feastol": 1e-10, "maxiters": 200})
    assert qp["status"] == "optimal"
    return -qp["primal objective"], np.array(qp["x"]).reshape(-1)[:n_u].reshape(n, states)


@pytest.mark.parametrize("method", ["map", "sparse"])
@pytest.mark.parametrize("signs", ["positive", "negative", "mixed"])
def test_potts_edges_give_the_local_polytope_optimum_for_weights_of_any_signs(signs, method):
    """GraphCRF(pairwise="potts") gives each edge PAIR factors when its
    weights are all >= 0 or all <= 0 and a DENSE table otherwise; either way
    its relaxed inference is the optimum over the local polytope with a
    joint distribution per edge (scipy's LP for LP-MAP: the same value;
    cvxopt's QP for LP-SparseMAP: the same node values), on paths and on
    cycles, and on paths LP-MAP is the enumerated maximum."""
    rng = np.random.default_rng(21)
    model = GraphCRF(3, pairwise="potts", inference_method=method, inference_settings=TIGHT)
    X, Y = graph_data(rng, 6)
    X += graph_data(rng, 6, cycle=False)[0]
    model.initialize(X, Y + Y)
    cases = []
    for x in X:
        w = rng.normal(size=model.size_joint_feature) * 2
        diagonal = w[-3:]
        if signs != "mixed":
            w[-3:] = np.abs(diagonal) * (1 if signs == "positive" else -1)
        elif (diagonal >= 0).all() or (diagonal <= 0).all():
            w[-3:] = [1.0, -1.0, 0.5]
        cases.append((model, x, w))
    if signs == "mixed":
        # one edge, where PAIR factors' relaxation scores 3.9 above the
        # MAP's 2.7 (u: both nodes half in states 0 and 2)
        edge = GraphCRF(3, pairwise="potts", inference_method=method, inference_settings=TIGHT)
        x = (np.eye(2), np.array([[0, 1]]))
        edge.initialize([x], [np.zeros(2, dtype=int)])
        theta = np.array([[3.9, -3.0, -0.8], [2.3, -1.2, -2.2]])
        cases.append((edge, x, edge.join_weights(theta.T, np.diag([-4.0, -2.1, 4.6]))))
    for model_, x, w in cases:
        W, P = model_.split_weights(w)
        theta = x[0] @ W.T
        u, Q = model_.inference(x, w, relaxed=True)
        best, expected = local_polytope_optimum(theta, x[1], np.diag(P), method == "sparse")
        if method == "sparse":
            np.testing.assert_allclose(u, expected, atol=1e-6)
        else:
            assert w @ model_.joint_feature(x, (u, Q)) == pytest.approx(best, abs=1e-6)
            if len(x[1]) < len(x[0]):  # a tree: LP-MAP is exact
                assert best == pytest.approx(brute_force(model_, x, None, w), abs=1e-6)
    pairs = [isinstance(f, concord.Pair) for pool in model._slots.values() for slot in pool
             for f in slot.factors]
    assert pairs and all(pairs) == (signs != "mixed") and any(pairs) == (signs != "mixed")


@pytest.mark.parametrize("name, make, data, exact", MODELS[:3], ids=[m[0] for m in MODELS[:3]])
def test_a_minibatch_in_any_order_has_each_examples_hinge(name, make, data, exact):
    """The losses of a minibatch that is not the data's first examples, in
    shuffled order, are each example's enumerated hinge (the Hamming
    constant of the multi-label models, the number of gold labels, was
    once taken from the examples at the minibatch's positions)."""
    rng = np.random.default_rng(4)
    model = make().set_params(inference_method="exact", inference_settings=TIGHT)
    X, Y = data(rng, 8)
    model.initialize(X, Y)
    data_set = learners._Training(model, model._design(X), Y)
    w = rng.normal(size=model.size_joint_feature)
    W, P = model.split_weights(w)
    indices = [5, 2, 7, 0]
    losses, _, _ = learners._hinge_batch(model, data_set, indices, W, P, None)
    for k, loss in zip(indices, losses):
        expected = brute_force(model, X[k], Y[k], w) - w @ model.joint_feature(X[k], Y[k])
        assert loss == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("method", ["map", "exact"])
def test_constraints_restrict_inference_to_feasible_labellings(method):
    """With a budget on state 0, loss-augmented inference meets it and, when
    integral, is the enumerated best labelling among those that meet it;
    an exact budget holds in every prediction."""
    rng = np.random.default_rng(2)
    budget = 1
    model = ChainCRF(3, constraints=[lambda y: concord.Budget(y[:, 0], budget)],
                     inference_method=method, inference_settings=TIGHT)
    X, Y = chain_data(rng, 15, lengths=(3, 5))
    Y = [np.where(np.cumsum(y == 0) > budget, 1, y) for y in Y]   # feasible gold
    model.initialize(X, Y)
    integral = 0
    for x, y in zip(X, Y):
        w = rng.normal(size=model.size_joint_feature) * 2
        labels = model.loss_augmented_inference(x, y, w)
        assert np.sum(labels == 0) <= budget
        u, Q = model.loss_augmented_inference(x, y, w, relaxed=True)
        if np.allclose(u, np.round(u), atol=1e-7):
            integral += 1
            best = brute_force(model, x, y, w, allowed=lambda c: np.sum(c == 0) <= budget)
            assert w @ model.joint_feature(x, labels) + model.loss(y, labels) == pytest.approx(
                best, abs=1e-6)
    assert integral == len(X) if method == "exact" else integral >= 5

    labels = MultiLabelClf(4, constraints=[lambda y: concord.Budget(y, 2, exact=True)],
                           inference_method=method)
    X, Y = multilabel_data(rng, 20, labels=4)
    Y = np.zeros_like(Y)
    Y[:, :2] = 1
    fitted = SubgradientSSVM(labels, max_iter=2, random_state=0).fit(X, Y)
    assert (fitted.predict(X).sum(axis=1) == 2).all()


@pytest.mark.parametrize("method", ["map", "sparse", "exact"])
def test_constraints_no_labelling_meets_are_an_error_not_a_prediction(method):
    # exactly one label, and one of labels 0, 1, and one of labels 2, 3:
    # no labelling of 4 meets them all (brute force below)
    """Constraints no labelling meets: fit refuses every gold (naming the
    first constraint broken, by brute force), inference raises
    InfeasibleError."""
    impossible = [lambda y: concord.Budget(y, 1, exact=True), lambda y: concord.Or(y[[0, 1]]),
                  lambda y: concord.Or(y[[2, 3]])]
    assert not any(sum(c) == 1 and (c[0] or c[1]) and (c[2] or c[3])
                   for c in itertools.product((0, 1), repeat=4))
    rng = np.random.default_rng(5)
    X, Y = multilabel_data(rng, 6, labels=4)
    model = MultiLabelClf(4, constraints=impossible, inference_method=method)
    # no gold labelling meets them either: fit refuses the first example,
    # naming the first constraint it breaks
    first = next(c for c, holds in enumerate((Y[0].sum() == 1, Y[0][0] or Y[0][1],
                                               Y[0][2] or Y[0][3])) if not holds)
    with pytest.raises(ValueError, match=r"^example 0: .* constraints\[%d\]$" % first):
        SubgradientSSVM(model, max_iter=1).fit(X, Y)
    model.initialize(X, Y)
    with pytest.raises(concord.InfeasibleError, match="no labelling"):
        model.batch_inference(X[:2], np.zeros(model.size_joint_feature))


# Hard constraints with a transcription of each one's meaning in plain
# Python (the reference the gold checks are compared with): the model, its
# constraints, the meanings, a node count and states per node.
CONSTRAINED = [
    ("chain", lambda cs: ChainCRF(3, constraints=cs),
     [lambda y: concord.Budget(y[:, 0], 1),               # state 0 at most once
      lambda y: concord.Imply(y[[0, 2], [1, 1]]),          # node 0 in 1 -> node 2 in 1
      lambda y: concord.Or(~y[:, 2])],                     # not every node in state 2
     [lambda c: np.sum(c == 0) <= 1, lambda c: c[0] != 1 or c[2] == 1,
      lambda c: (c != 2).any()], 3, 3),
    ("multilabel", lambda cs: MultiLabelClf(4, edges="full", constraints=cs),
     [lambda y: concord.Budget(y, 2), lambda y: concord.Imply(y[[3, 0]]),
      lambda y: concord.AtMostOne(y[[1, 2]])],
     [lambda c: c.sum() <= 2, lambda c: not c[3] or c[0], lambda c: c[1] + c[2] <= 1], 4, 2),
    ("graph", lambda cs: GraphCRF(3, constraints=cs),
     [lambda y: concord.Budget(y[:, 2], 1), lambda y: concord.Or(y[:, 0])],
     [lambda c: np.sum(c == 2) <= 1, lambda c: (c == 0).any()], 3, 3),
]


def constrained_examples(name, rng, n, nodes):
    """n examples of `nodes` nodes for the model `name` of CONSTRAINED."""
    if name == "multilabel":
        return list(multilabel_data(rng, n, labels=nodes)[0])
    if name == "chain":
        return [rng.normal(size=(nodes, 4)) for _ in range(n)]
    return [(rng.normal(size=(nodes, 4)), np.array([[0, 1], [1, 2]])) for _ in range(n)]


@pytest.mark.parametrize("name, make, constraints, meanings, nodes, states", CONSTRAINED,
                         ids=[c[0] for c in CONSTRAINED])
def test_a_gold_labelling_that_breaks_a_hard_constraint_is_refused_before_training(
        name, make, constraints, meanings, nodes, states):
    """Every labelling of a small example, as example 2's gold: fit trains
    exactly when each constraint's meaning holds, and otherwise raises
    before any step, naming the example and the first constraint broken;
    score, structured_hinge and loss-augmented inference refuse it too."""
    rng = np.random.default_rng(11)
    everything = [np.array(c) for c in itertools.product(range(states), repeat=nodes)]
    feasible = [c for c in everything if all(m(c) for m in meanings)]
    X = constrained_examples(name, rng, 5, nodes)
    Y = [feasible[k] for k in rng.integers(len(feasible), size=5)]
    trained = SubgradientSSVM(make(constraints), max_iter=1).fit(X, Y)
    refused = 0
    for candidate in everything:
        broken = [k for k, meaning in enumerate(meanings) if not meaning(candidate)]
        gold = Y[:2] + [candidate] + Y[3:]
        epochs = []
        learner = SubgradientSSVM(make(constraints), max_iter=1,
                                  callback=lambda learner: epochs.append(1))
        if not broken:
            learner.fit(X, gold)
            assert epochs == [1]
            continue
        refused += 1
        message = r"^example %%d: the labelling violates the hard constraint constraints\[%d\]$" \
            % broken[0]
        with pytest.raises(ValueError, match=message % 2):
            learner.fit(X, gold)
        assert epochs == [] and not hasattr(learner, "w")
        with pytest.raises(ValueError, match=message % 2):
            trained.score(X, gold)
        with pytest.raises(ValueError, match=message % 0):
            structured_hinge(trained.model, X[2], candidate, trained.w)
        with pytest.raises(ValueError, match=message % 0):
            trained.model.loss_augmented_inference(X[2], candidate, trained.w)
    assert 0 < refused < len(everything) and len(everything) - refused == len(feasible)


def test_a_constraint_is_factors_over_the_output_not_variables_of_its_own():
    """The gold's feasibility is decided on the output variables alone."""
    def with_a_variable(y):
        """Label 0 implies a variable the constraint makes."""
        return concord.Imply([y[[0]], y.graph.variable(1)])
    X, Y = multilabel_data(np.random.default_rng(15), 4, labels=3)
    with pytest.raises(ValueError, match=r"^constraints\[1\] added variables of its own"):
        SubgradientSSVM(MultiLabelClf(3, constraints=[lambda y: concord.Budget(y, 3),
                                                      with_a_variable]), max_iter=1).fit(X, Y)


def test_labellings_of_the_wrong_length_dtype_or_labels_are_refused_naming_the_example():
    """Each bad labelling, as example 3's gold, is refused by both learners'
    fit (before any weights exist), by score and by loss; 0/1 labels as
    booleans, integers or floats train the same weights."""
    rng = np.random.default_rng(12)
    chains_X, chains_Y = chain_data(rng, 4, lengths=(3, 3))
    graphs_X, graphs_Y = graph_data(rng, 4, nodes=3)
    X, Y = multilabel_data(rng, 4, labels=3)
    one_hot = "the labelling must be a 1-D array \\(or a column\\) of 3 integer states in " \
              "\\[0, 3\\)"
    binary = "the labelling must be a 1-D array \\(or a row\\) of 3 values in \\{0, 1\\}"
    cases = [(ChainCRF(3), chains_X, np.array([0, 3, 1]), one_hot),
             (ChainCRF(3), chains_X, np.array([0, -1, 1]), one_hot),
             (ChainCRF(3), chains_X, np.array([0.0, 1.0, 2.0]), one_hot),
             (ChainCRF(3), chains_X, np.array([True, False, True]), one_hot),
             (ChainCRF(3), chains_X, np.array([0, 1]), one_hot),
             (ChainCRF(3), chains_X, np.eye(3, dtype=int), one_hot),       # one-hot rows
             (GraphCRF(3), graphs_X, np.array([0, 1, 5]), one_hot),
             (GraphCRF(3, pairwise="potts"), graphs_X, np.array([0, 1, 2, 0]), one_hot),
             (MultiLabelClf(3), X, np.array([0, 2, 1]), binary),
             (MultiLabelClf(3), X, np.array([0.5, 1, 0]), binary),
             (MultiLabelClf(3), X, np.array(["0", "1", "1"]), binary),
             (MultiLabelClf(3), X, np.array([0, 1]), binary),
             (MultiLabelClf(3, edges="tree"), X, np.array([0, 1, 1, 0]), binary)]
    for model, examples, bad, message in cases:
        gold = {ChainCRF: chains_Y, GraphCRF: graphs_Y, MultiLabelClf: list(Y)}[type(model)]
        gold = gold[:3] + [bad]
        for learner in (SubgradientSSVM(model, max_iter=1), DistRepSSVM(model, max_iter=1)):
            with pytest.raises(ValueError, match="^example 3: %s, not " % message):
                learner.fit(examples, gold)
            assert not hasattr(learner, "w") and not hasattr(learner, "A")
        trained = SubgradientSSVM(model, max_iter=1).fit(examples, gold[:3] + gold[:1])
        with pytest.raises(ValueError, match="^example 3: %s, not " % message):
            trained.score(examples, gold)
        with pytest.raises(ValueError, match="^(y_hat must be a 1-D array|y has 3 labels but "
                                             "y_hat [24]$)"):
            model.loss(gold[0], bad)
        with pytest.raises(ValueError, match="^4 examples but 3 labellings$"):
            trained.score(examples, gold[:3])
        with pytest.raises(ValueError, match="^4 examples but 5 labellings$"):
            SubgradientSSVM(model, max_iter=1).fit(examples, gold[:3] + gold[:2])
        with pytest.raises(ValueError, match=r"^example 3: the labelling: a 1-D array \(or a "
                                             r"(column\) of states|row\) of 0/1 values) "
                                             r"expected, got rows of different lengths$"):
            SubgradientSSVM(model, max_iter=1).fit(examples, gold[:3] + [[[0], [1, 0]]])
    # labellings of different lengths are no Hamming loss
    model = ChainCRF(3)
    with pytest.raises(ValueError, match="^y has 3 labels but y_hat 2$"):
        model.loss([0, 1, 2], [0, 1])
    assert model.loss([0, 1, 2], [0, 2, 2]) == 1 and model.max_loss([0, 1, 2]) == 3
    # 0/1 labels as booleans, integers or floats are the same labels
    trained = [SubgradientSSVM(MultiLabelClf(3, edges="full"), max_iter=2,
                               random_state=0).fit(X, Y.astype(dtype)).w
               for dtype in (int, bool, float)]
    assert np.array_equal(trained[0], trained[1]) and np.array_equal(trained[0], trained[2])
    with pytest.raises(ValueError, match="^Y: an \\(n_samples, n_labels\\) array of 0/1"):
        chow_liu_tree(np.array([[0, 1], [2, 1]]))
    with pytest.raises(ValueError, match="^Y: an \\(n_samples, n_labels\\) array of 0/1"):
        chow_liu_tree(np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="^Y: an \\(n_samples, n_labels\\) array of 0/1 with "
                                         "n_samples, n_labels >= 1 expected, got shape "
                                         "\\(0, 3\\)$"):
        chow_liu_tree(np.zeros((0, 3), dtype=int))
    sparse = pytest.importorskip("scipy.sparse")
    assert np.array_equal(chow_liu_tree(sparse.csr_matrix(Y)), chow_liu_tree(Y))


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_labellings_as_columns_rows_and_matrices_are_the_vectors_they_hold():
    """A chain's or graph's labelling as an (n, 1) column (nodes are rows,
    as in X), a numpy.matrix Y, and a multilabel Y as a numpy.matrix, a
    scipy sparse matrix or rows (1, n_labels) train the same weights as the
    1-D labellings, and score, loss, joint_feature and structured_hinge
    read them the same; shapes that are not one example's labels in that
    layout are refused naming what to pass instead."""
    rng = np.random.default_rng(17)
    chains_X, chains_Y = chain_data(rng, 6)
    graphs_X, graphs_Y = graph_data(rng, 6, nodes=4)
    X, Y = multilabel_data(rng, 8, labels=3)
    same_length = [x[:2] for x in chains_X]
    sparse = pytest.importorskip("scipy.sparse")
    cases = [(ChainCRF(3), chains_X, chains_Y, [y[:, None] for y in chains_Y]),
             (ChainCRF(3), chains_X, chains_Y, [np.matrix(y).T for y in chains_Y]),
             (ChainCRF(3), same_length, [y[:2] for y in chains_Y],
              np.matrix([y[:2] for y in chains_Y])),
             (GraphCRF(3), graphs_X, graphs_Y, [y[:, None] for y in graphs_Y]),
             (GraphCRF(3, pairwise="potts"), graphs_X, graphs_Y, np.array(graphs_Y)[:, :, None]),
             (MultiLabelClf(3, edges="tree"), X, Y, np.matrix(Y)),
             (MultiLabelClf(3, edges="full"), X, Y, sparse.csr_matrix(Y)),
             (MultiLabelClf(3), X, Y, [y[None, :] for y in Y])]
    for model, examples, flat, shaped in cases:
        reference = SubgradientSSVM(model, max_iter=3, batch_size=2, random_state=0).fit(
            examples, flat)
        w = reference.w.copy()
        assert w.any()
        trained = SubgradientSSVM(model, max_iter=3, batch_size=2, random_state=0).fit(
            examples, shaped)
        assert np.array_equal(trained.w, w)
        assert trained.score(examples, shaped) == reference.score(examples, flat)
        if not isinstance(shaped, list):
            continue
        for x, y, y_shaped in zip(examples, flat, shaped):
            assert model.loss(y_shaped, y) == 0 and model.max_loss(y_shaped) == np.size(y)
            assert np.array_equal(model.joint_feature(x, y_shaped), model.joint_feature(x, y))
            assert structured_hinge(model, x, y_shaped, w)[0] == structured_hinge(model, x, y,
                                                                                   w)[0]
    # a row is no labelling of a chain's nodes, a column none of a label set
    with pytest.raises(ValueError, match=r"^example 1: the labelling must be a 1-D array \(or "
                                         r"a column\) of \d+ integer states"):
        SubgradientSSVM(ChainCRF(3), max_iter=1).fit(
            chains_X, chains_Y[:1] + [y[None, :] for y in chains_Y[1:]])
    with pytest.raises(ValueError, match=r"^example 0: the labelling must be a 1-D array \(or "
                                         r"a row\) of 3 values"):
        SubgradientSSVM(MultiLabelClf(3), max_iter=1).fit(X, [y[:, None] for y in Y])
    # a 1-D multilabel Y: one example's labels, or one label of each example?
    for bad in (Y[:, 0], Y[0], Y[:, :, None]):
        with pytest.raises(ValueError, match=r"^Y: an \(n_samples, n_labels\) array expected, "
                                             r"got shape \(\d+,( \d+, 1)?\) \(one label per "
                                             r"example: Y.reshape\(-1, 1\)"):
            SubgradientSSVM(MultiLabelClf(3), max_iter=1).fit(X[:1], bad)
    # one label per example, as a column: the 1-label model's Y
    column = SubgradientSSVM(MultiLabelClf(1), max_iter=2, random_state=0).fit(X, Y[:, :1])
    assert column.predict(X).shape == (8, 1)


class CountedLabelling:
    """A labelling that counts how often it is read as an array."""

    def __init__(self, y):
        """Keeps y; not read yet."""
        self.y, self.reads = np.asarray(y), 0

    def __array__(self, dtype=None, copy=None):
        """y, counted as one read."""
        self.reads += 1
        return self.y if dtype is None else self.y.astype(dtype)


@pytest.mark.parametrize("learner", [SubgradientSSVM, DistRepSSVM])
@pytest.mark.parametrize("name, make, data, exact", MODELS, ids=[m[0] for m in MODELS])
def test_fit_and_score_read_each_gold_labelling_once(name, make, data, exact, learner):
    """fit checks each gold labelling once, whatever the model learns from
    the labels (the Chow-Liu tree) and however many epochs it trains for,
    and trains as from the arrays themselves; score reads each once too."""
    rng = np.random.default_rng(16)
    X, Y = data(rng, 6)
    counted = [CountedLabelling(y) for y in Y]
    trained = learner(make(), max_iter=3, batch_size=2, random_state=0).fit(X, counted)
    assert [c.reads for c in counted] == [1] * 6
    reference = learner(make(), max_iter=3, batch_size=2, random_state=0).fit(X, Y)
    assert np.array_equal(trained.joint_w, reference.joint_w) and reference.joint_w.any()
    for c in counted:
        c.reads = 0
    assert trained.score(X, counted) == reference.score(X, Y)
    assert [c.reads for c in counted] == [1] * 6


def test_examples_that_are_not_feature_matrices_are_refused_naming_the_example():
    """Each malformed example among good ones is refused with its index and
    what is wrong; nested lists are matrices (the same training as arrays)."""
    rng = np.random.default_rng(13)
    chains_X, chains_Y = chain_data(rng, 3, lengths=(4, 4))
    graphs_X, graphs_Y = graph_data(rng, 3)
    X, Y = multilabel_data(rng, 4, labels=3)
    not_finite = [x.copy() for x in chains_X]
    not_finite[2][3, 1] = np.nan
    cases = [
        (ChainCRF(3), chains_X[:2] + [chains_X[2][0]], chains_Y, ValueError,
         r"X\[2\]: a \(rows, n_features\) matrix expected, got shape \(4,\)"),
        (ChainCRF(3), chains_X[:2] + [chains_X[2] * 1j], chains_Y, TypeError,
         r"X\[2\] must be real numbers, not complex128"),
        (ChainCRF(3), chains_X[:2] + [chains_X[2][:, :3]], chains_Y, ValueError,
         r"X\[2\] has 3 features but X\[0\] has 4"),
        (ChainCRF(3), chains_X[:2] + [np.zeros((0, 4))], chains_Y, ValueError,
         r"X\[2\]: a sequence of length 0"),
        (ChainCRF(3), not_finite, chains_Y, ValueError,
         r"X: features must be finite \(found inf or nan in example 2\)"),
        (GraphCRF(3), graphs_X[:2] + [graphs_X[2][0]], graphs_Y, ValueError,
         r"X\[2\]: a pair \(features, edges\) expected, got ndarray"),
        (GraphCRF(3), graphs_X[:2] + [(np.zeros((0, 4)), np.zeros((0, 2), int))], graphs_Y,
         ValueError, r"X\[2\]: a graph of 0 nodes"),
        (GraphCRF(3), graphs_X[:2] + [(graphs_X[2][0], np.array([[0, 5]]))], graphs_Y,
         ValueError, r"X\[2\] edges: pairs of distinct nodes in \[0, 5\) expected"),
        (MultiLabelClf(3), X[:, 0], Y, ValueError,
         r"X: a \(rows, n_features\) matrix expected, got shape \(4,\)"),
        (MultiLabelClf(3), X[:, :, None], Y, ValueError,
         r"X: a \(rows, n_features\) matrix expected, got shape \(4, 4, 1\)"),
        # nested lists of rows of different lengths are no matrix
        (MultiLabelClf(3), [[1.0, 2.0], [3.0]], Y[:2], ValueError,
         r"X: a \(rows, n_features\) matrix expected, got rows of different lengths"),
        (ChainCRF(3), chains_X[:2] + [[[1.0, 2.0, 3.0, 4.0], [5.0]]], chains_Y, ValueError,
         r"X\[2\]: a \(rows, n_features\) matrix expected, got rows of different lengths"),
        (GraphCRF(3), graphs_X[:2] + [(graphs_X[2][0], [[0, 1], [2]])], graphs_Y, ValueError,
         r"X\[2\] edges: an \(n_edges, 2\) array of index pairs expected, got rows of "
         r"different lengths"),
    ]
    for model, examples, labels, error, message in cases:
        with pytest.raises(error, match="^%s$" % message):
            SubgradientSSVM(model, max_iter=1).fit(examples, labels)
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(TypeError, match="^X must be real numbers, not complex128$"):
        SubgradientSSVM(MultiLabelClf(3), max_iter=1).fit(sparse.csr_matrix(X * 1j), Y)
    # nested lists are matrices too: the same training as arrays
    as_lists = SubgradientSSVM(ChainCRF(3), max_iter=2, random_state=0).fit(
        [x.tolist() for x in chains_X], [y.tolist() for y in chains_Y])
    as_arrays = SubgradientSSVM(ChainCRF(3), max_iter=2, random_state=0).fit(chains_X, chains_Y)
    assert np.array_equal(as_lists.w, as_arrays.w) and as_arrays.w.any()
    # graphs as the rows of an (n, 2) object array: the same training as tuples
    rows = np.empty((len(graphs_X), 2), dtype=object)
    for k, (features, edges) in enumerate(graphs_X):
        rows[k, 0], rows[k, 1] = features, edges
    as_rows = SubgradientSSVM(GraphCRF(3), max_iter=2, random_state=0).fit(rows, graphs_Y)
    as_pairs = SubgradientSSVM(GraphCRF(3), max_iter=2, random_state=0).fit(graphs_X, graphs_Y)
    assert np.array_equal(as_rows.w, as_pairs.w) and as_pairs.w.any()
    with pytest.raises(ValueError, match=r"^X\[1\]: a pair \(features, edges\) expected, "
                                         r"got ndarray$"):
        SubgradientSSVM(GraphCRF(3), max_iter=1).fit([graphs_X[0], rows[1, :1]], graphs_Y[:2])


def test_constraints_set_after_fit_are_the_ones_predict_meets():
    """The factor graphs kept for inference are rebuilt when the
    constraints change (set_params or the list changed in place)."""
    rng = np.random.default_rng(14)
    X, _ = multilabel_data(rng, 30, labels=4)
    Y = np.ones((30, 4), dtype=int)
    Y[::2, 1:] = 0
    learner = SubgradientSSVM(MultiLabelClf(4, inference_method="exact"), C=10.0,
                              max_iter=5, random_state=0).fit(X, Y)
    before = learner.predict(X)
    assert (before.sum(axis=1) > 1).sum() >= 10     # the training labels: 1 or 4 labels
    learner.set_params(model__constraints=[lambda y: concord.Budget(y, 1)])
    after = learner.predict(X)
    learner.model.constraints.append(lambda y: concord.Budget(y[[1, 2, 3]], 0))
    last = learner.predict(X)
    for x, once, never in zip(X, after, last):
        w = learner.w
        for constrained, allowed in ((once, lambda c: c.sum() <= 1),
                                     (never, lambda c: c.sum() <= 1 and not c[1:].any())):
            # the best labelling among those allowed, by enumeration
            best = brute_force(learner.model, x, None, w, allowed)
            assert allowed(constrained)
            assert w @ learner.model.joint_feature(x, constrained) == pytest.approx(best,
                                                                                   abs=1e-9)


def test_the_constraint_checks_are_built_once_per_structure_and_follow_the_constraints(
        monkeypatch):
    """structured_hinge checks its gold against the hard constraints on
    every call: the checking graphs are kept per structure, like
    inference's, and rebuilt when the constraints change."""
    rng = np.random.default_rng(15)
    X, _ = multilabel_data(rng, 12, labels=4)
    Y = np.zeros((12, 4), dtype=int)
    Y[:, 0] = 1
    model = MultiLabelClf(4, constraints=[lambda y: concord.Budget(y, 2)])
    learner = SubgradientSSVM(model, max_iter=2, random_state=0).fit(X, Y)
    built = []
    original = MultiLabelClf._new_slot
    monkeypatch.setattr(MultiLabelClf, "_new_slot",
                        lambda self, key, only=None: built.append(only) or
                        original(self, key, only=only))
    for x, y in zip(X[:5], Y[:5]):
        structured_hinge(model, x, y, learner.w)
    assert built.count(0) <= 1
    model.constraints.append(lambda y: concord.Budget(y[[1, 2]], 0))
    with pytest.raises(ValueError, match="violates the hard constraint constraints\\[1\\]"):
        structured_hinge(model, X[0], np.array([1, 1, 0, 0]), learner.w)


def finite_difference_check(loss, w, gradient, rng, h, directions=4):
    """Compares gradient . d with central differences of loss along random
    directions d; returns (checked, skipped kinks)."""
    checked = skipped = 0
    f0 = loss(w)
    for _ in range(directions):
        d = rng.normal(size=w.shape)
        plus, minus = loss(w + h * d), loss(w - h * d)
        forward, backward = (plus - f0) / h, (f0 - minus) / h
        # a kink jumps the slope by O(1); a smooth loss changes it by O(h)
        if abs(forward - backward) > 1e-3 * max(1.0, abs(forward)):
            skipped += 1
            continue
        assert (plus - minus) / (2 * h) == pytest.approx(gradient @ d, abs=1e-5, rel=1e-6)
        checked += 1
    return checked, skipped


@pytest.mark.parametrize("method", ["map", "sparse", "exact"])
@pytest.mark.parametrize("name, make, data, exact", MODELS, ids=[m[0] for m in MODELS])
def test_structured_hinge_subgradient_matches_finite_differences(name, make, data, exact,
                                                                 method):
    """The hinge's subgradient against central differences of the loss
    (kinks skipped and counted)."""
    rng = np.random.default_rng(3)
    model = make().set_params(inference_method=method, inference_settings=TIGHT)
    X, Y = data(rng, 6)
    model.initialize(X, Y)
    checked = skipped = positive = 0
    for x, y in zip(X, Y):
        w = rng.normal(size=model.size_joint_feature)
        loss, gradient = structured_hinge(model, x, y, w)
        assert loss >= 0
        positive += loss > 0
        result = finite_difference_check(lambda v: structured_hinge(model, x, y, v)[0], w,
                                         gradient, rng, h=1e-5)
        checked += result[0]
        skipped += result[1]
    assert checked > 3 * skipped and positive >= len(X) - 1


@pytest.mark.parametrize("method", ["map", "sparse"])
@pytest.mark.parametrize("name, make, data, exact", MODELS, ids=[m[0] for m in MODELS])
def test_structured_hinge_equals_the_c_library_losses(name, make, data, exact, method):
    """The C library's losses (checked against their definitions by
    test_losses.py) are the same functions at shifted scores: its hinge
    folds the cost 1 - 2u* into every binary variable (one-hot rows need
    theta + u* to make that 1 - u*), its LP-SparseMAP loss none (at theta +
    cost, the cost's value at u* is 0)."""
    rng = np.random.default_rng(10)
    model = make().set_params(inference_method=method, inference_settings=TIGHT)
    X, Y = data(rng, 5)
    model.initialize(X, Y)
    for x, y in zip(X, Y):
        w = rng.normal(size=model.size_joint_feature)
        loss, _ = structured_hinge(model, x, y, w)
        design = model._design(model._one(x))
        gold = model.gold_indicators(design, [y])
        W, P = model.split_weights(w)
        theta = np.asarray(design.phi @ W.T)
        if method == "sparse":
            theta = theta + model.cost(gold)[0]
        elif model.one_hot:
            theta = theta + gold
        slot = model._new_slot(model._slot_key(design.keys[0], P))
        slot.y.scores = theta.reshape(slot.y.shape)
        model._set_scores(slot, P)
        reference = slot.fg.loss({slot.y: gold.reshape(slot.y.shape)},
                                 kind="sparsemap" if method == "sparse" else "hinge", **TIGHT)
        assert loss == pytest.approx(reference, abs=1e-8)


def test_hinge_is_zero_at_a_large_margin_and_its_subgradient_vanishes():
    """Weights that score the gold at least 100 above any other labelling:
    no loss, no subgradient."""
    rng = np.random.default_rng(4)
    model = ChainCRF(3, inference_settings=TIGHT)
    X, Y = chain_data(rng, 4)
    model.initialize(X, Y)
    W = np.zeros((3, 4))
    W[:, :3] = 100 * np.eye(3)
    w = model.join_weights(W, np.zeros((3, 3)))
    X = [np.eye(3, 4)[y] for y in Y]
    for x, y in zip(X, Y):
        loss, gradient = structured_hinge(model, x, y, w)
        assert loss == 0 and not gradient.any()


def test_distrep_label_gradient_matches_finite_differences():
    """The A-step's gradient: d/dA of the hinge with W = A^T W_a, P = A^T W_p A."""
    rng = np.random.default_rng(5)
    model = ChainCRF(3, inference_method="sparse", inference_settings=TIGHT)
    X, Y = chain_data(rng, 3)
    model.initialize(X, Y)
    W_a, W_p = rng.normal(size=(2, 4)), rng.normal(size=(2, 2))
    A0 = rng.normal(size=(2, 3))

    def loss_and_gradient(A):
        """The hinge summed over the examples and its gradient w.r.t. A."""
        total, grad = 0.0, np.zeros_like(A)
        for x, y in zip(X, Y):
            loss, g = structured_hinge(model, x, y, model.join_weights(A.T @ W_a,
                                                                        A.T @ W_p @ A))
            dU, dQ = model.split_weights(g)
            total += loss
            grad += learners._label_gradient(A, W_a, W_p, dU, dQ)
        return total, grad

    _, gradient = loss_and_gradient(A0)
    checked, _ = finite_difference_check(lambda a: loss_and_gradient(a.reshape(A0.shape))[0],
                                         A0.reshape(-1), gradient.reshape(-1), rng, h=1e-5,
                                         directions=6)
    assert checked == 6


def nuclear_prox_reference(X, t):
    """Soft-thresholding from the eigendecomposition of X^T X: X = U S V^T
    with V the eigenvectors, S^2 the eigenvalues, U = X V / S."""
    eigenvalues, V = np.linalg.eigh(X.T @ X)
    s = np.sqrt(np.maximum(eigenvalues, 0.0))
    keep = s > t
    U = X @ V[:, keep] / s[keep]
    return (U * (s[keep] - t)) @ V[:, keep].T


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5)])
def test_nuclear_norm_prox_is_soft_thresholding_and_the_unique_minimiser(shape):
    """The prox against the eigendecomposition reference, and against
    random perturbations of it."""
    rng = np.random.default_rng(6)
    for t in (0.1, 1.0, 2.5):
        X = rng.normal(size=shape)
        Z = nuclear_norm_prox(X, t)
        assert np.allclose(Z, nuclear_prox_reference(X, t), atol=1e-10)

        def objective(U):
            """t ||U||_* + ||U - X||^2 / 2."""
            return t * np.linalg.svd(U, compute_uv=False).sum() + 0.5 * np.sum((U - X) ** 2)

        best = objective(Z)
        for scale in (1e-4, 1e-2, 1.0):
            for _ in range(20):
                assert objective(Z + scale * rng.normal(size=shape)) > best
    assert not nuclear_norm_prox(X, 100.0).any()
    assert np.allclose(nuclear_norm_prox(X, 0.0), X)


@pytest.mark.parametrize("method", ["map", "sparse", "exact"])
@pytest.mark.parametrize("kind", ["chain", "multilabel"])
def test_distrep_with_identity_labels_trains_the_ssvm(kind, method):
    """A fixed to the identity: DistRepSSVM's weights, losses and
    predictions are SubgradientSSVM's."""
    rng = np.random.default_rng(7)
    if kind == "chain":
        X, Y = chain_data(rng, 20)
        make = lambda: ChainCRF(3, inference_method=method)            # noqa: E731
    else:
        X, Y = multilabel_data(rng, 40)
        make = lambda: MultiLabelClf(5, edges="full", inference_method=method)  # noqa: E731
    for lambda1, C in ((0.0, np.inf), (0.05, 1 / (0.05 * len(X)))):
        ssvm = SubgradientSSVM(make(), C=C, max_iter=4, batch_size=7, learning_rate=0.3,
                               random_state=3).fit(X, Y)
        distrep = DistRepSSVM(make(), lambda1=lambda1, lambda2=0.0, max_iter=4, a_epochs=0,
                              init="identity", batch_size=7, learning_rate=0.3,
                              random_state=3).fit(X, Y)
        assert np.allclose(distrep.joint_w, ssvm.w, atol=1e-12)
        assert np.allclose(distrep.loss_curve_, ssvm.loss_curve_, atol=1e-12)
        assert distrep.loss_curve_[-1] < distrep.loss_curve_[0]
        assert distrep.step_curve_ == ["w"] * 4
        assert distrep.rank_curve_ == [ssvm.model.n_labels] * 4
        assert (distrep.predict(X) == ssvm.predict(X)).all() if kind == "multilabel" else all(
            (a == b).all() for a, b in zip(distrep.predict(X), ssvm.predict(X)))


def test_distrep_nuclear_norm_lowers_the_rank_and_keeps_labels_in_the_unit_ball():
    """A-steps keep every label vector in the unit ball; a large lambda2
    lowers the rank of A, none keeps it full."""
    rng = np.random.default_rng(8)
    X, Y = chain_data(rng, 30, states=4)
    ranks = []
    for lambda2 in (0.0, 3.0):
        learner = DistRepSSVM(ChainCRF(4), dim=4, lambda1=1e-3, lambda2=lambda2, max_iter=3,
                              a_learning_rate=0.2, random_state=0).fit(X, Y)
        assert (np.linalg.norm(learner.A, axis=0) <= 1 + 1e-12).all()
        assert learner.step_curve_ == ["w", "A", "w", "A", "w"]
        ranks.append(learner.rank_curve_[-1])
    assert ranks[0] == 4 and ranks[1] < 4


def test_chow_liu_tree_maximises_the_mutual_information():
    """chow_liu_tree's total mutual information against the best of every
    spanning tree (enumerated by Pruefer sequences)."""
    rng = np.random.default_rng(9)
    labels = 5
    hidden = rng.normal(size=(300, 2))
    Y = (hidden @ rng.normal(size=(2, labels)) + 0.7 * rng.normal(size=(300, labels)) > 0)
    Y = Y.astype(int)

    def information(i, j):
        """The smoothed mutual information of labels i and j."""
        total = 0.0
        for a in (0, 1):
            for b in (0, 1):
                p = (np.sum((Y[:, i] == a) & (Y[:, j] == b)) + 1) / (len(Y) + 4)
                pa = (np.sum(Y[:, i] == a) + 2) / (len(Y) + 4)
                pb = (np.sum(Y[:, j] == b) + 2) / (len(Y) + 4)
                total += p * np.log(p / (pa * pb))
        return total

    def tree_from_pruefer(sequence):
        """The edges of the labelled tree of a Pruefer sequence."""
        degree = np.ones(labels, dtype=int)
        for v in sequence:
            degree[v] += 1
        edges = []
        for v in sequence:
            leaf = int(np.flatnonzero(degree == 1)[0])
            edges.append((leaf, v))
            degree[leaf] -= 1
            degree[v] -= 1
        edges.append(tuple(np.flatnonzero(degree == 1)))
        return edges

    best = max(sum(information(i, j) for i, j in tree_from_pruefer(s))
               for s in itertools.product(range(labels), repeat=labels - 2))
    tree = chow_liu_tree(Y)
    assert tree.shape == (labels - 1, 2) and (tree[:, 0] < tree[:, 1]).all()
    assert sum(information(i, j) for i, j in tree) == pytest.approx(best, abs=1e-12)


def test_edges_that_are_not_integer_pairs_are_refused_not_reinterpreted():
    """Edges of the wrong shape or dtype are refused, naming edges."""
    rng = np.random.default_rng(6)
    X, Y = multilabel_data(rng, 4, labels=4)
    for edges, error in (([[0, 1, 2], [1, 2, 3]], ValueError), ([[0, 1.5]], TypeError)):
        with pytest.raises(error, match="edges"):
            MultiLabelClf(4, edges=edges).initialize(X, Y)
    model = MultiLabelClf(4, edges=[[0, 1], [2, 3]])
    model.initialize(X, Y)
    assert model.edges_.tolist() == [[0, 1], [2, 3]]
    graph = GraphCRF(2)
    features = rng.normal(size=(3, 2))
    with pytest.raises(ValueError, match="edges"):
        graph.initialize([(features, np.array([[0, 1, 2], [1, 2, 0]]))], [np.zeros(3, int)])


@pytest.mark.parametrize("pairwise", ["full", "potts"])
def test_each_pair_of_nodes_is_scored_once_and_an_edge_list_naming_one_twice_is_refused(
        pairwise):
    """A graph's joint score is, for every labelling, the brute-force sum
    of its nodes' W[s_i] . x_i and one pair score per edge (P[s_i, s_j];
    Potts: P[s, s] when both ends are in s), and exact inference finds the
    brute-force best. An edge list that names a pair of nodes twice
    (repeated, or reversed) would score the pair twice: joint_feature,
    inference and fit refuse it, naming both edges. MultiLabelClf's edges
    the same, against its brute-force score."""
    rng = np.random.default_rng(18)
    features = rng.normal(size=(4, 3))
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]])
    x = (features, edges)
    model = GraphCRF(3, pairwise=pairwise, inference_method="exact")
    model.initialize([x], [np.zeros(4, dtype=int)])
    w = rng.normal(size=model.size_joint_feature)
    W, P = model.split_weights(w)

    def score(y):
        """The brute-force joint score of labelling y."""
        nodes = sum(W[s] @ features[i] for i, s in enumerate(y))
        if pairwise == "potts":
            return nodes + sum(P[y[i], y[i]] for i, j in edges if y[i] == y[j])
        return nodes + sum(P[y[i], y[j]] for i, j in edges)

    candidates = [np.array(y) for y in itertools.product(range(3), repeat=4)]
    for y in candidates:
        assert w @ model.joint_feature(x, y) == pytest.approx(score(y), abs=1e-12)
    assert score(model.inference(x, w)) == pytest.approx(max(map(score, candidates)),
                                                         abs=1e-12)
    for repeated, j, i, edge in ((np.vstack([edges, [[1, 2]]]), 5, 1, (1, 2)),
                                 (np.vstack([edges[:3], [[2, 1]], edges[3:]]), 3, 1, (2, 1)),
                                 (np.vstack([[[2, 0]], edges]), 5, 0, (0, 2))):
        message = (r"^X\[%%d\] edges: edge %d \(%d, %d\) joins the nodes of edge %d \(%d, %d\) "
                   r"again \(one edge per pair: a second would add the pair's score again\)$"
                   % ((j,) + edge + (i,) + tuple(repeated[i])))
        for call, example in ((lambda: model.joint_feature((features, repeated), candidates[0]),
                               0),
                              (lambda: model.inference((features, repeated), w), 0),
                              (lambda: SubgradientSSVM(GraphCRF(3, pairwise=pairwise),
                                                       max_iter=1).fit(
                                  [x, (features, repeated)], candidates[:2]), 1)):
            with pytest.raises(ValueError, match=message % example):
                call()
    # MultiLabelClf: one pair weight per edge, scored once
    X, Y = multilabel_data(rng, 4, labels=4)
    labels = MultiLabelClf(4, edges=[[0, 1], [2, 1], [3, 0]])
    labels.initialize(X, Y)
    w = rng.normal(size=labels.size_joint_feature)
    W, P = labels.split_weights(w)
    for y in itertools.product((0, 1), repeat=4):
        expected = sum(W[l] @ X[0] for l in range(4) if y[l]) + sum(
            P[l, m] for l, m in labels.edges_ if y[l] and y[m])
        assert w @ labels.joint_feature(X[0], np.array(y)) == pytest.approx(expected, abs=1e-12)
    for edges, message in (([[0, 1], [2, 1], [0, 1]], r"edge 2 \(0, 1\) joins the labels of edge "
                                                      r"0 \(0, 1\) again"),
                           ([[0, 1], [1, 0]], r"edge 1 \(1, 0\) joins the labels of edge 0 "
                                              r"\(0, 1\) again")):
        with pytest.raises(ValueError, match="^edges: %s" % message):
            SubgradientSSVM(MultiLabelClf(4, edges=edges), max_iter=1).fit(X, Y)


def test_a_legacy_random_state_drives_the_learners_reproducibly_and_advances():
    """scikit-learn's form: random_state=np.random.RandomState(seed). The
    same state gives the same training, the state is drawn from (as
    scikit-learn's estimators draw from it), and another state shuffles
    otherwise."""
    rng = np.random.default_rng(17)
    X = rng.normal(size=(12, 5))
    Y = (X[:, :3] + 0.3 * rng.normal(size=(12, 3)) > 0).astype(int)
    for learner in (SubgradientSSVM, DistRepSSVM):
        def fit(state):
            return learner(MultiLabelClf(3), max_iter=3, batch_size=2,
                           random_state=state).fit(X, Y).w
        state = np.random.RandomState(5)
        first = fit(state)
        assert state.randint(2**31) != np.random.RandomState(5).randint(2**31)  # drawn from
        assert np.array_equal(fit(np.random.RandomState(5)), first)
        assert not np.array_equal(fit(np.random.RandomState(6)), first)


def test_degenerate_inputs_and_parameters_are_refused_with_their_name():
    """Empty or non-finite inputs, overflowing scores, parameters out of
    range and use before fit are refused, each naming its cause."""
    rng = np.random.default_rng(7)
    X, Y = multilabel_data(rng, 6, labels=4)
    chains_X, chains_Y = chain_data(rng, 3)
    graphs_X, graphs_Y = graph_data(rng, 3)
    for model, examples, labels in ((MultiLabelClf(4), X[:0], Y[:0]),
                                    (ChainCRF(3), [], []), (GraphCRF(3), [], [])):
        with pytest.raises(ValueError, match="no examples"):
            SubgradientSSVM(model, max_iter=1).fit(examples, labels)
    infinite = X.copy()
    infinite[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"X: features must be finite \(.* in example 2\)"):
        SubgradientSSVM(MultiLabelClf(4), max_iter=1).fit(infinite, Y)
    # finite features whose scores overflow once the weights grow: the
    # example is named, in training and in inference
    huge = X.copy()
    huge[2, 1] = 1e200
    with np.errstate(over="ignore", invalid="ignore"), \
            pytest.raises(ValueError, match="example 2: its scores .* overflow"):
        SubgradientSSVM(MultiLabelClf(4), max_iter=3).fit(huge, Y)
    model = MultiLabelClf(4)
    model.initialize(X, Y)
    with np.errstate(over="ignore", invalid="ignore"), \
            pytest.raises(ValueError, match="example 2: its scores .* overflow"):
        model.batch_inference(huge, np.full(model.size_joint_feature, 1e200))
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match=r"X: features must be finite \(.* in example 2\)"):
        SubgradientSSVM(MultiLabelClf(4), max_iter=1).fit(sparse.csr_matrix(infinite), Y)
    for learner, name in ((SubgradientSSVM(MultiLabelClf(4), C=0), "C"),
                          (SubgradientSSVM(MultiLabelClf(4), C=-1.0), "C"),
                          (SubgradientSSVM(MultiLabelClf(4), C=np.nan), "C"),
                          (SubgradientSSVM(MultiLabelClf(4), learning_rate=0), "learning_rate"),
                          (DistRepSSVM(MultiLabelClf(4), lambda1=-1e-3), "lambda1"),
                          (DistRepSSVM(MultiLabelClf(4), lambda2=np.nan), "lambda2"),
                          (DistRepSSVM(MultiLabelClf(4), a_learning_rate=-1), "a_learning_rate"),
                          (DistRepSSVM(MultiLabelClf(4), dim=0), "dim"),
                          (DistRepSSVM(MultiLabelClf(4), dim=2.5), "dim"),
                          (SubgradientSSVM(MultiLabelClf(4), batch_size=0), "batch_size"),
                          (SubgradientSSVM(MultiLabelClf(4), batch_size=2.5), "batch_size"),
                          (SubgradientSSVM(MultiLabelClf(4), max_iter=-1), "max_iter"),
                          (SubgradientSSVM(MultiLabelClf(4), max_iter=True), "max_iter"),
                          (DistRepSSVM(MultiLabelClf(4), w_epochs=-1), "w_epochs"),
                          (DistRepSSVM(MultiLabelClf(4), a_epochs=-1), "a_epochs"),
                          (DistRepSSVM(MultiLabelClf(4), init="ones"), "init"),
                          (SubgradientSSVM(MultiLabelClf(4), C="1"), "C"),
                          (SubgradientSSVM(MultiLabelClf(4), C=True), "C"),
                          (SubgradientSSVM(MultiLabelClf(4), learning_rate=np.inf),
                           "learning_rate"),
                          (DistRepSSVM(MultiLabelClf(4), lambda1=np.inf), "lambda1"),
                          (DistRepSSVM(MultiLabelClf(4), a_learning_rate=np.inf),
                           "a_learning_rate"),
                          (SubgradientSSVM(MultiLabelClf(4), callback=3), "callback"),
                          (SubgradientSSVM(MultiLabelClf(4), threads=1.5), "threads"),
                          (DistRepSSVM(MultiLabelClf(4), threads="2"), "threads"),
                          (SubgradientSSVM(MultiLabelClf(4), random_state=-1), "random_state"),
                          (DistRepSSVM(MultiLabelClf(4), random_state="0"), "random_state"),
                          (SubgradientSSVM(MultiLabelClf(0)), "n_labels"),
                          (SubgradientSSVM(ChainCRF(2.5)), "n_states"),
                          (SubgradientSSVM(GraphCRF(-1)), "n_states"),
                          (SubgradientSSVM(MultiLabelClf(4, inference_settings=[("tol", 1)])),
                           "inference_settings"),
                          (SubgradientSSVM(MultiLabelClf(4, constraints=lambda y: None)),
                           "constraints"),
                          (SubgradientSSVM(ChainCRF(3, constraints=[3])), "constraints"),
                          (DistRepSSVM(GraphCRF(3, constraints=None)), "constraints")):
        with pytest.raises(ValueError, match="^%s must be" % name):
            learner.fit(X, Y)
        assert not hasattr(learner, "w")   # refused before any training
    with pytest.raises(ValueError, match="^init: the label vectors must be finite"):
        DistRepSSVM(MultiLabelClf(4), dim=2, init=np.full((2, 4), np.nan)).fit(X, Y)
    outside = np.full((2, 4), 0.5)
    outside[:, 2] = [0.8, 0.7]  # norm 1.063
    with pytest.raises(ValueError, match="^init: the label vectors lie in the unit ball, but "
                                         "column 2 has norm 1.06301$"):
        DistRepSSVM(MultiLabelClf(4), dim=2, init=outside).fit(X, Y)
    # a tuple is a relaxed solution (u, Q) of the example's sizes: another
    # is refused, a labelling as a tuple included
    tagger = ChainCRF(3)
    tagger.initialize(chains_X, chains_Y)
    x, n = chains_X[0], len(chains_X[0])
    w = rng.normal(size=tagger.size_joint_feature)
    u, Q = tagger.inference(x, w, relaxed=True)
    assert np.allclose(tagger.joint_feature(x, (u, Q)),
                       tagger.joint_feature(x, tagger.inference(x, w)))
    for bad in ((u, Q[:2]), (u[:-1], Q), (u, Q, Q), tuple(chains_Y[0])):
        with pytest.raises(ValueError, match=r"^y: a tuple is a relaxed solution \(u, Q\), u "
                                             r"of %d values \(nodes x labels: %d x 3\) and Q "
                                             r"\(3, 3\)" % (3 * n, n)):
            tagger.joint_feature(x, bad)
    # the model's loss functions need initialize (a learner's fit) first
    with pytest.raises(concord.learn.NotFittedError, match="ChainCRF is not initialized"):
        structured_hinge(ChainCRF(3), chains_X[0], chains_Y[0], np.zeros(15))
    trained = SubgradientSSVM(MultiLabelClf(4), max_iter=1).fit(X, Y)
    with pytest.raises(ValueError, match="X has 5 features; the model was initialized with 4"):
        trained.predict(np.zeros((2, 5)))
    for learner, examples in ((SubgradientSSVM(ChainCRF(3)), chains_X),
                              (DistRepSSVM(GraphCRF(3)), graphs_X)):
        with pytest.raises(concord.learn.NotFittedError, match="call fit first"):
            learner.predict(examples)
        with pytest.raises(AttributeError):  # scikit-learn's convention
            learner.score(examples, chains_Y)
    fitted = SubgradientSSVM(ChainCRF(3), max_iter=1).fit(chains_X, chains_Y)
    with pytest.raises(ValueError, match="no examples"):
        fitted.score([], [])
    with pytest.raises(ValueError, match="3 examples but 2 labellings"):
        fitted.score(chains_X, chains_Y[:2])
    assert 0.0 <= fitted.score(chains_X, chains_Y) <= 1.0


def test_a_learner_refuses_a_model_another_fit_changed():
    """Learners that share one model: a second fit on other data makes the
    model another Chow-Liu tree (of as many edges), on which the first
    learner's weights were silently read; it now says so, and predicts as
    before once it has the model it was fitted with. A second fit on the
    same data changes nothing the weights depend on."""
    rng = np.random.default_rng(0)
    X = np.hstack([rng.normal(size=(40, 3)), np.ones((40, 1))])
    Y1 = (rng.random((40, 4)) > .5).astype(int)
    Y1[:, 1], Y1[:, 3] = Y1[:, 0], Y1[:, 2]
    Y2 = (rng.random((40, 4)) > .5).astype(int)
    Y2[:, 2], Y2[:, 3] = Y2[:, 0], Y2[:, 1]
    model = MultiLabelClf(4, edges="tree")
    first = SubgradientSSVM(model, max_iter=5, random_state=0).fit(X, Y1)
    edges, predicted = model.edges_.copy(), first.predict(X)
    SubgradientSSVM(model, max_iter=5, random_state=0).fit(X, Y1)
    assert np.array_equal(first.predict(X), predicted)
    SubgradientSSVM(model, max_iter=5, random_state=0).fit(X, Y2)
    assert not np.array_equal(model.edges_, edges)
    with pytest.raises(ValueError, match="edges_ changed since this SubgradientSSVM was fitted"):
        first.predict(X)
    with pytest.raises(ValueError, match="copy.deepcopy"):
        first.score(X, Y1)
    first.fit(X, Y1)
    assert np.array_equal(first.predict(X), predicted)


def test_parameters_follow_scikit_learn_conventions():
    """get_params, set_params (nested too), clones and repr as in
    scikit-learn."""
    model = ChainCRF(4, inference_method="sparse")
    learner = SubgradientSSVM(model, C=2.0, max_iter=3)
    params = learner.get_params()
    assert params["C"] == 2.0 and params["model"] is model
    assert params["model__inference_method"] == "sparse" and params["model__n_states"] == 4
    learner.set_params(C=5.0, model__inference_method="map")
    assert learner.C == 5.0 and model.inference_method == "map"
    # a parameter by the constructor's name, n_states (stored as n_labels)
    learner.set_params(model__n_states=3)
    assert model.n_states == 3 and model.get_params()["n_states"] == 3
    assert GraphCRF(2).set_params(n_states=5).n_labels == 5
    learner.set_params(model__n_states=4)
    clone = type(learner)(**learner.get_params(deep=False))
    assert clone.get_params() == learner.get_params()
    with pytest.raises(ValueError, match="no parameter"):
        learner.set_params(gamma=1)
    with pytest.raises(ValueError, match="inference_method"):
        SubgradientSSVM(ChainCRF(2, inference_method="viterbi")).fit(
            [np.ones((2, 1))], [np.array([0, 1])])
    assert "SubgradientSSVM(model=ChainCRF(n_states=4" in repr(learner)


def test_the_learning_guide_runs(monkeypatch):
    """Every python block of docs/learning.md, in order, in one namespace."""
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "docs"}
    for number, block in enumerate(python_blocks("docs/learning.md"), 1):
        exec(compile(block, "docs/learning.md, python block %d" % number, "exec"), namespace)
    assert number >= 3


def test_readers_on_the_repository_fixtures():
    """The readers on the repository's small data sets."""
    X, Y, names = load_mulan(os.path.join(FIXTURES, "multilabel-train.arff"),
                             os.path.join(FIXTURES, "multilabel.xml"))
    assert Y.shape == (len(X), len(names)) and set(np.unique(Y)) <= {0, 1}
    assert X.shape[1] == 24 and set(np.unique(X)) <= {0.0, 1.0}
    (X_split, Y_split), _ = load_mulan_split(FIXTURES, "multilabel")
    assert np.array_equal(X_split, X) and np.array_equal(Y_split, Y)
    with pytest.raises(FileNotFoundError, match="nothing-train.arff"):
        load_mulan_split(FIXTURES, "nothing")
    sentences = load_conllu(os.path.join(FIXTURES, "pos-train.conllu"))
    assert all(len(words) == len(tags) > 0 for words, tags in sentences)


def test_readers_name_the_line_of_a_malformed_row(tmp_path):
    """A well-formed toy file reads as written; each malformed row is a
    ValueError naming its file and line."""
    xml = tmp_path / "toy.xml"
    xml.write_text('<labels><label name="a"></label><label name="b"></label></labels>\n')
    header = "@relation toy\n@attribute f0 numeric\n@attribute a {0,1}\n@attribute b {0,1}\n" \
        "@data\n"
    arff = tmp_path / "toy.arff"
    arff.write_text(header + "0.5,1,0\n{0 2.5,2 1}\n")
    X, Y, names = load_mulan(arff, xml)
    assert X.tolist() == [[0.5], [2.5]] and Y.tolist() == [[1, 0], [0, 1]] and names == ["a", "b"]
    for row, message in (("0.5,?,0", "could not convert string to float: '\\?'"),
                         ("0.5,1", "2 values for 3 attributes"),
                         ("0.5,2,0", r"labels must be 0 or 1, got \[2. 0.\]"),
                         ("0.5,0.5,1", r"labels must be 0 or 1, got \[0.5 1. \]"),
                         ("nan,1,0", "a value that is not finite: nan"),
                         ("{0 -inf}", "a value that is not finite: -inf"),
                         ("{0 1,3 1}", r"attribute index 3 out of range \(3 attributes\)")):
        arff.write_text(header + "0.5,1,0\n%% a comment\n%s\n" % row)
        with pytest.raises(ValueError, match="^%s:8: %s$" % (re.escape(str(arff)), message)):
            load_mulan(arff, xml)
    for line, message in (("@attribute", "an @attribute line without a name"),
                          ("@attribute 'f 1 numeric",
                           "the quoted @attribute name 'f 1 numeric is not closed")):
        arff.write_text("@relation toy\n%s\n@data\n" % line)
        with pytest.raises(ValueError, match="^%s:2: %s$" % (re.escape(str(arff)), message)):
            load_mulan(arff, xml)
    # the XML read as XML: single quotes, entities, MULAN's namespace
    arff.write_text("@relation toy\n@attribute 'a&b' {0,1}\n@attribute f0 numeric\n"
                    "@data\n1,0.5\n")
    xml.write_text("<labels xmlns='http://mulan.sourceforge.net/labels'>"
                   "<label name = 'a&amp;b'/></labels>")
    X, Y, names = load_mulan(arff, xml)
    assert names == ["a&b"] and X.tolist() == [[0.5]] and Y.tolist() == [[1]]
    for text, message in (("<labels></labels>", 'no <label name="..."> element'),
                          ("<labels><label name='a'>", "not XML")):
        xml.write_text(text)
        with pytest.raises(ValueError, match="^%s: %s" % (re.escape(str(xml)), re.escape(message))):
            load_mulan(arff, xml)
    conllu = tmp_path / "toy.conllu"
    conllu.write_text("# text = a b\n1\ta\ta\tNOUN\n2 b b NOUN\n\n")
    with pytest.raises(ValueError, match="^%s:3: a token line of 1 tab-separated columns"
                       % re.escape(str(conllu))):
        load_conllu(conllu)
