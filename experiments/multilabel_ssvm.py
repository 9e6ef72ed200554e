"""Multilabel classification with structured SVMs: independent labels, a
Chow-Liu tree of labels and every pair of labels (MultiLabelClf trained by
SubgradientSSVM; loss-augmented inference and prediction by LP-MAP, or
with --inference by exact MAP or LP-SparseMAP).

On MULAN's yeast and emotions (their train/test splits), features
standardised on the training set plus a bias feature; each model's test
Hamming loss (the fraction of wrong labels), training time, and the
trivial baseline that predicts every label off.

    .venv/bin/python experiments/multilabel_ssvm.py --output multilabel_ssvm.png
"""
import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from concord.learn import INFERENCE_METHODS, MultiLabelClf, SubgradientSSVM  # noqa: E402
from concord.learn.datasets import load_mulan_split  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "multilabel")
DATASETS = ("yeast", "emotions")
EDGES = {"independent": None, "tree": "tree", "full": "full"}


def hamming_loss(Y, predicted):
    """The fraction of wrong labels."""
    return float(np.mean(np.asarray(Y) != np.asarray(predicted)))


def standardise(X, X_test):
    """Features scaled by the training set's mean and deviation, with a
    bias column."""
    mean, deviation = X.mean(axis=0), X.std(axis=0)
    deviation[deviation == 0] = 1.0
    bias = lambda A: np.hstack([(A - mean) / deviation, np.ones((len(A), 1))])  # noqa: E731
    return bias(X), bias(X_test)


def run(train, test, epochs=30, C=1.0, learning_rate=0.03, batch_size=32, inference="map",
        threads=None, seed=0, log=print):
    """Trains the three edge structures on train = (X, Y), tests on test.
    Returns {structure: {hamming, seconds, loss_curve, learner}} and the
    all-off baseline's Hamming loss."""
    (X, Y), (X_test, Y_test) = train, test
    X, X_test = standardise(X, X_test)
    results = {}
    for name, edges in EDGES.items():
        model = MultiLabelClf(Y.shape[1], edges=edges, inference_method=inference)
        learner = SubgradientSSVM(model, C=C, max_iter=epochs, batch_size=batch_size,
                                  learning_rate=learning_rate, random_state=seed,
                                  threads=threads)
        start = time.perf_counter()
        learner.fit(X, Y)
        seconds = time.perf_counter() - start
        hamming = hamming_loss(Y_test, learner.predict(X_test))
        results[name] = {"hamming": hamming, "seconds": seconds,
                         "loss_curve": learner.loss_curve_, "learner": learner}
        log("%-11s %d edges: training loss %.4f -> %.4f, test Hamming loss %.4f, %.1fs"
            % (name, len(learner.model.edges_), learner.loss_curve_[0],
               learner.loss_curve_[-1], hamming, seconds))
    return results, hamming_loss(Y_test, np.zeros_like(Y_test))


def plot(all_results, path):
    """Test Hamming losses (bars) and training losses per epoch, per data set."""
    figure, axes = plt.subplots(1, 1 + len(all_results), figsize=(4.2 * (1 + len(all_results)),
                                                                  3.8))
    names = list(EDGES)
    for k, (dataset, (results, baseline)) in enumerate(all_results.items()):
        bars = axes[0].bar(np.arange(len(names)) + 0.4 * k,
                           [results[n]["hamming"] for n in names], width=0.4, label=dataset)
        axes[0].bar_label(bars, fmt="%.4f", fontsize=7)
        axes[0].plot([-0.2, len(names) - 0.2], [baseline] * 2, "--", color="C%d" % k,
                     linewidth=1, label="%s: all labels off" % dataset)
        for name in names:
            curve = results[name]["loss_curve"]
            axes[k + 1].plot(np.arange(1, len(curve) + 1), curve, label=name)
        axes[k + 1].set_title("%s: training loss" % dataset)
        axes[k + 1].set_xlabel("epoch")
        axes[k + 1].set_ylabel("mean structured hinge")
        axes[k + 1].legend(fontsize=8)
    axes[0].set_xticks(np.arange(len(names)) + 0.2, names)
    axes[0].set_ylim(0.15, 0.35)
    axes[0].set_ylabel("test Hamming loss")
    axes[0].set_title("test Hamming loss (lower is better)")
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    """Runs every data set and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DATA, help="the folder of MULAN's data sets")
    parser.add_argument("--epochs", type=int, default=30, help="SubgradientSSVM's epochs")
    parser.add_argument("--inference", default="map", choices=INFERENCE_METHODS,
                        help="the models' inference: LP-MAP, LP-SparseMAP or exact MAP")
    parser.add_argument("--threads", type=int, default=None,
                        help="C threads of the minibatches' inference (default: one per processor)")
    parser.add_argument("--output", default="multilabel_ssvm.png", help="the PNG to write")
    args = parser.parse_args()
    all_results = {}
    for dataset in DATASETS:
        try:
            (X, Y), (X_test, Y_test) = load_mulan_split(os.path.join(args.data, dataset), dataset)
        except FileNotFoundError as missing:
            sys.exit("%s not found" % missing.filename)
        print("%s: %d training examples, %d test, %d features, %d labels"
              % (dataset, len(X), len(X_test), X.shape[1], Y.shape[1]))
        all_results[dataset] = run((X, Y), (X_test, Y_test), epochs=args.epochs,
                                   inference=args.inference, threads=args.threads)
    print("\ninference: %s" % args.inference)
    print("\n| data set | edges | test Hamming loss | training seconds |")
    print("|---|---|---|---|")
    for dataset, (results, baseline) in all_results.items():
        print("| %s | all labels off | %.4f | |" % (dataset, baseline))
        for name, result in results.items():
            print("| %s | %s (%d) | %.4f | %.1f |" % (
                dataset, name, len(result["learner"].model.edges_), result["hamming"],
                result["seconds"]))
    plot(all_results, args.output)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
