"""Multilabel classification with a neural network and sparse structured
losses (the LP-SparseMAP paper, section 5.3, Table 4).

A multilayer perceptron (two hidden layers of 300 ReLUs) scores every
label; the structured models add a learned score for every pair of labels
(a fully connected pairwise MRF, one PAIR factor per pair). Four losses:

- independent: the binary logistic loss of every label (prediction: score
  > 0);
- hinge: the structured hinge with the Hamming cost, by LP-MAP
  (prediction: LP-MAP's solution rounded at 1/2);
- hinge-fp: the structured hinge whose cost counts false positives only,
  the cost of the authors' public DyNet implementation of this model
  (prediction as hinge);
- LP-SparseMAP: the LP-SparseMAP loss (prediction: LP-SparseMAP's
  solution rounded at 1/2),

each trained by Adam (learning rate 1e-3, minibatches of 32), the solvers
limited to 100 iterations. Every bibtex example has at least one label, so
no model predicts an empty set: where its decoded set is empty, the label
of highest score is predicted (the same rule for the three models; the
table also gives the example-F1 without it). 10% of the training set is
held out to pick the epoch; the table gives the test set's example-F1 at
that epoch.

    .venv/bin/python experiments/multilabel_neural.py --output multilabel_neural.png
"""
import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import concord.torch  # noqa: E402
from concord import _core  # noqa: E402
from concord.learn.datasets import load_mulan_split  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "multilabel", "bibtex")
LOSSES = ("independent", "hinge", "hinge-fp", "LP-SparseMAP")
# Table 4, bibtex (the paper's structured hinge for both hinge rows)
PAPER = {"independent": 42.28, "hinge": 37.70, "hinge-fp": 37.70, "LP-SparseMAP": 43.43}
TITLE = {"independent": "independent logistic losses",
         "hinge": "structured hinge, Hamming cost (LP-MAP)",
         "hinge-fp": "structured hinge, false-positive cost (LP-MAP)",
         "LP-SparseMAP": "LP-SparseMAP loss"}
SOLVER = {"max_iter": 100}


def example_f1(Y, predicted):
    """Mean over examples of 2 |y & y'| / (|y| + |y'|) (1 when both are
    empty), in percent."""
    Y, predicted = np.asarray(Y, dtype=bool), np.asarray(predicted, dtype=bool)
    both = (Y & predicted).sum(axis=1)
    size = Y.sum(axis=1) + predicted.sum(axis=1)
    return 100.0 * np.mean(np.where(size > 0, 2.0 * both / np.maximum(size, 1), 1.0))


def pairwise_graph(labels):
    """The fully connected pairwise MRF over the labels (a low-level graph
    shared by every example)."""
    graph = _core.Graph()
    graph.add_variables(labels)
    for i, j in zip(*np.triu_indices(labels, 1)):
        graph.add_pair(int(i), int(j), 0.0)
    return graph


class Scorer(torch.nn.Module):
    """The label scores of an MLP and, for structured losses, a score per
    label pair."""

    def __init__(self, features, labels, hidden, structured):
        super().__init__()
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(features, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
            torch.nn.Linear(hidden, labels))
        pairs = labels * (labels - 1) // 2
        self.pairs = torch.nn.Parameter(torch.zeros(pairs)) if structured else None

    def forward(self, x):
        """The label scores of the feature rows x."""
        return self.mlp(x)


def structured_loss(graph, theta, pairs, y, kind, threads):
    """The structured losses of a minibatch (one per row of theta, the
    label scores; pairs the pair scores, y the 0/1 labels): kind "hinge"
    (Hamming cost), "hinge-fp" (false-positive cost) or "LP-SparseMAP".

    The Hamming cost of u is sum_i u_i (1 - 2 y_i) + |y|, and the hinge
    with it at scores theta + y is max_u theta.u + phi.v + sum_i u_i (1 -
    y_i) - theta.y - phi.v_y: the hinge whose cost counts false positives
    only, with the same gradient in theta."""
    if kind == "hinge-fp":
        theta = theta + y
    return concord.torch.lp_sparsemap_loss(
        [graph] * len(theta), list(theta), [pairs] * len(theta), list(y),
        kind="sparsemap" if kind == "LP-SparseMAP" else "hinge", threads=threads, **SOLVER)


def batch_loss(model, graph, kind, x, y, threads):
    """The minibatch's mean loss of the given kind (a 0-d tensor)."""
    theta = model(x)
    if kind == "independent":
        return torch.nn.functional.binary_cross_entropy_with_logits(theta, y)
    return structured_loss(graph, theta, model.pairs, y, kind, threads).mean()


def nonempty(predicted, theta):
    """The predictions with, in every row where none is on, the label of
    highest score theta on."""
    predicted = np.array(predicted, dtype=bool)
    empty = np.flatnonzero(~predicted.any(axis=1))
    predicted[empty, np.argmax(theta[empty], axis=1)] = True
    return predicted


def predict(model, graph, kind, X, threads, chunk=64):
    """0/1 predictions and the label scores: scores > 0, or the solution of
    LP-MAP (the hinges) or LP-SparseMAP rounded at 1/2."""
    with torch.no_grad():
        theta = model(X).double().numpy()
        if kind == "independent":
            return theta > 0, theta
        pairs = model.pairs.detach().double().numpy()
    solvers = [_core.Solver(graph) for _ in range(min(chunk, len(theta)))]
    algorithm = "sparse" if kind == "LP-SparseMAP" else "map"
    settings = _core.Settings(warm_start=False, **SOLVER)
    out = []
    for start in range(0, len(theta), chunk):
        part = theta[start:start + chunk]
        for solver, scores in zip(solvers, part):
            solver.set_scores(scores, pairs)
        _core.solve_batch(solvers[:len(part)], algorithm, settings, threads)
        out += [solver.variables > 0.5 for solver in solvers[:len(part)]]
    return np.array(out), theta


def run(train, test, epochs=20, losses=LOSSES, hidden=300, batch_size=32, threads=None,
        validation=0.1, seed=0, log=print):
    """Trains one model per loss; returns {loss: history}, the history a
    dict of per-epoch lists (train_loss, validation_f1, test_f1,
    test_f1_empty_allowed, seconds; the F1s of non-empty predictions but
    the last) and the test F1s at the epoch of best validation F1
    (selected_f1, selected_f1_empty_allowed)."""
    (X, Y), (X_test, Y_test) = train, test
    order = np.random.default_rng(seed).permutation(len(X))
    held = order[:int(round(validation * len(X)))]
    kept = order[len(held):]
    to_tensor = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float32)  # noqa: E731
    X_train, Y_train = to_tensor(X[kept]), to_tensor(Y[kept])
    X_held, X_test_t = to_tensor(X[held]), to_tensor(X_test)
    graph = pairwise_graph(Y.shape[1])
    results = {}
    for kind in losses:
        torch.manual_seed(seed)
        model = Scorer(X.shape[1], Y.shape[1], hidden, kind != "independent")
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        history = {"train_loss": [], "validation_f1": [], "test_f1": [],
                   "test_f1_empty_allowed": [], "seconds": []}
        shuffle = torch.Generator().manual_seed(seed)
        elapsed = 0.0
        for epoch in range(epochs):
            start = time.perf_counter()
            total = 0.0
            for batch in torch.randperm(len(X_train), generator=shuffle).split(batch_size):
                optimizer.zero_grad()
                loss = batch_loss(model, graph, kind, X_train[batch], Y_train[batch], threads)
                loss.backward()
                optimizer.step()
                total += loss.item() * len(batch)
            elapsed += time.perf_counter() - start
            history["train_loss"].append(total / len(X_train))
            history["seconds"].append(elapsed)
            history["validation_f1"].append(example_f1(
                Y[held], nonempty(*predict(model, graph, kind, X_held, threads))))
            predicted, theta = predict(model, graph, kind, X_test_t, threads)
            history["test_f1"].append(example_f1(Y_test, nonempty(predicted, theta)))
            history["test_f1_empty_allowed"].append(example_f1(Y_test, predicted))
            log("%-12s epoch %2d: train loss %.4f, validation F1 %.2f, test F1 %.2f, %.0fs"
                % (kind, epoch + 1, history["train_loss"][-1], history["validation_f1"][-1],
                   history["test_f1"][-1], elapsed))
        best = int(np.argmax(history["validation_f1"]))
        history["selected_epoch"] = best + 1
        history["selected_f1"] = history["test_f1"][best]
        history["selected_f1_empty_allowed"] = history["test_f1_empty_allowed"][best]
        results[kind] = history
    return results


def plot(results, path):
    """Test example-F1 (against the paper's) and training loss per epoch."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for (kind, history), color in zip(results.items(), ("C0", "C3", "C1", "C2")):
        epochs = np.arange(1, len(history["test_f1"]) + 1)
        left.plot(epochs, history["test_f1"], "o-", color=color, label="%s (ours)" % kind)
        left.axhline(PAPER[kind], color=color, linestyle="--", linewidth=1,
                     label="%s (paper, Table 4)" % kind)
        right.plot(epochs, np.array(history["train_loss"]) / history["train_loss"][0], "o-",
                   color=color, label=kind)
    left.set_xlabel("epoch")
    left.set_ylabel("test example-F1 (%)")
    left.set_title("bibtex: test example-F1")
    left.legend(fontsize=7)
    right.set_xlabel("epoch")
    right.set_ylabel("training loss / first epoch's")
    right.set_title("training loss")
    right.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    """Trains the four models on bibtex and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DATA, help="the folder of bibtex-{train,test}.arff")
    parser.add_argument("--epochs", type=int, default=20, help="training epochs of each model")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads of the structured solves (default: one per processor)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the held-out split, the initial weights and the minibatches")
    parser.add_argument("--losses", nargs="+", choices=LOSSES, default=list(LOSSES),
                        help="the losses to train with (default: all four)")
    parser.add_argument("--output", default="multilabel_neural.png", help="the PNG to write")
    args = parser.parse_args()
    name = os.path.basename(os.path.normpath(args.data))
    try:
        (X, Y), (X_test, Y_test) = load_mulan_split(args.data, name)
    except FileNotFoundError as missing:
        sys.exit("%s not found" % missing.filename)
    print("%s: %d training examples, %d test, %d features, %d labels"
          % (name, len(X), len(X_test), X.shape[1], Y.shape[1]))
    results = run((X, Y), (X_test, Y_test), epochs=args.epochs, losses=args.losses,
                  threads=args.threads, seed=args.seed)
    print("\n| loss | example-F1 (epoch) | empty sets allowed | paper (Table 4) "
          "| training s/epoch |")
    print("|---|---|---|---|---|")
    for kind, history in results.items():
        print("| %s | %.2f (%d) | %.2f | %.2f | %.0f |" % (
            TITLE[kind], history["selected_f1"], history["selected_epoch"],
            history["selected_f1_empty_allowed"], PAPER[kind],
            history["seconds"][-1] / len(history["seconds"])))
    plot(results, args.output)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
