"""Part-of-speech tagging with a linear-chain structured SVM, with and
without distributed label representations.

A ChainCRF over the 17 universal POS tags of UD English-EWT, trained on the
development set and tested on the test set (the treebank's training set is
not in ../shared/data), with sparse binary features of each token (its
lower-cased form, prefixes and suffixes, shape, the neighbouring forms):

- SubgradientSSVM: one weight vector per tag and a tag-transition matrix;
- DistRepSSVM: each tag a vector (a column of A) scoring w . vec(a_y phi^T)
  for tokens and a_y^T W_p a_y' for transitions, with a nuclear-norm
  penalty on A (alternating w- and A-steps; the rank of A is reported).

Both use LP-MAP as loss-augmented inference (Viterbi, the chain's exact
MAP) on C threads. The baseline tags every word with its most frequent tag
in training (the most frequent tag overall for unknown words).

    .venv/bin/python experiments/pos_tagging.py --output pos_tagging.png
"""
import argparse
import collections
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse  # noqa: E402

from concord.learn import ChainCRF, DistRepSSVM, SubgradientSSVM  # noqa: E402
from concord.learn.datasets import load_conllu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "ud_english_ewt")


def token_features(words, i):
    """The names of token i's features."""
    word = words[i]
    lower = word.lower()
    names = ["bias", "w=" + lower, "p1=" + lower[:1], "p2=" + lower[:2], "s1=" + lower[-1:],
             "s2=" + lower[-2:], "s3=" + lower[-3:],
             "prev=" + (words[i - 1].lower() if i > 0 else "<s>"),
             "next=" + (words[i + 1].lower() if i + 1 < len(words) else "</s>")]
    if word[0].isupper():
        names.append("first upper" if i == 0 else "upper")
    if word.isupper():
        names.append("all upper")
    if any(c.isdigit() for c in word):
        names.append("digit")
    if "-" in word:
        names.append("hyphen")
    if not any(c.isalnum() for c in word):
        names.append("punctuation")
    return names


class Features:
    """Sparse binary token features, indexed on the training sentences."""

    def __init__(self, sentences):
        self.index = {}
        for words, _ in sentences:
            for i in range(len(words)):
                for name in token_features(words, i):
                    self.index.setdefault(name, len(self.index))

    def __call__(self, words):
        rows, cols = [], []
        for i in range(len(words)):
            for name in token_features(words, i):
                if name in self.index:
                    rows.append(i)
                    cols.append(self.index[name])
        return scipy.sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                       shape=(len(words), len(self.index)))


def accuracy(Y, predicted):
    """Fraction of tokens tagged right, in percent."""
    right = sum(int(np.sum(np.asarray(y) == np.asarray(p))) for y, p in zip(Y, predicted))
    return 100.0 * right / sum(len(y) for y in Y)


def most_frequent_tag(train, test, tags):
    """The baseline: every word's most frequent training tag."""
    counts = collections.defaultdict(collections.Counter)
    overall = collections.Counter()
    for words, word_tags in train:
        for word, tag in zip(words, word_tags):
            counts[word][tag] += 1
            overall[tag] += 1
    default = overall.most_common(1)[0][0]
    return [np.array([tags.index(counts[w].most_common(1)[0][0] if w in counts else default)
                      for w in words]) for words, _ in test]


def run(train, test, epochs=15, distrep_rounds=8, dim=None, lambda1=1e-4, lambda2=0.2,
        learning_rate=0.3, a_learning_rate=0.02, batch_size=32, threads=None, seed=0,
        log=print):
    """Trains both learners on `train` ((words, tags) sentences) and
    evaluates them on `test`. Returns a dict: tags, baseline accuracy, and
    per learner its history (per epoch: test accuracy, training loss,
    objective, seconds; DistRep also the rank of A and the step kind), its
    final test accuracy and training seconds (the evaluations excluded)."""
    tags = sorted({t for _, sentence_tags in train for t in sentence_tags})
    features = Features(train)
    X = [features(words) for words, _ in train]
    Y = [np.array([tags.index(t) for t in sentence_tags]) for _, sentence_tags in train]
    X_test = [features(words) for words, _ in test]
    Y_test = [np.array([tags.index(t) if t in tags else -1 for t in sentence_tags])
              for _, sentence_tags in test]
    results = {"tags": tags, "features": len(features.index),
               "baseline": accuracy(Y_test, most_frequent_tag(train, test, tags))}
    learners = {
        "SubgradientSSVM": SubgradientSSVM(
            ChainCRF(len(tags)), C=1.0 / (lambda1 * len(X)), max_iter=epochs,
            batch_size=batch_size, learning_rate=learning_rate, random_state=seed,
            threads=threads),
        "DistRepSSVM": DistRepSSVM(
            ChainCRF(len(tags)), dim=dim, lambda1=lambda1, lambda2=lambda2,
            max_iter=distrep_rounds, w_epochs=1, a_epochs=1, batch_size=batch_size,
            learning_rate=learning_rate, a_learning_rate=a_learning_rate, random_state=seed,
            threads=threads)}
    for name, learner in learners.items():
        history = {"test_accuracy": []}

        def evaluate(fitted, history=history, name=name):
            history["test_accuracy"].append(accuracy(Y_test, fitted.predict(X_test)))
            extra = ""
            if isinstance(fitted, DistRepSSVM):
                extra = ", %s-step, rank(A) %d" % (fitted.step_curve_[-1],
                                                   fitted.rank_curve_[-1])
            log("%-15s epoch %2d: training loss %.4f, objective %.4f, test accuracy %.2f%s"
                % (name, len(fitted.loss_curve_), fitted.loss_curve_[-1],
                   fitted.objective_curve_[-1], history["test_accuracy"][-1], extra))
        learner.set_params(callback=evaluate)
        learner.fit(X, Y)
        history.update(loss=learner.loss_curve_, objective=learner.objective_curve_,
                       seconds=learner.time_curve_)
        if isinstance(learner, DistRepSSVM):
            history.update(rank=learner.rank_curve_, steps=learner.step_curve_)
        results[name] = {"history": history, "accuracy": history["test_accuracy"][-1],
                         "seconds": learner.time_curve_[-1], "epochs": len(learner.loss_curve_),
                         "learner": learner}
    return results


def plot(results, path):
    """Test accuracy over training time; DistRepSSVM's objective and rank of A."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, color in (("SubgradientSSVM", "C0"), ("DistRepSSVM", "C3")):
        history = results[name]["history"]
        left.plot(history["seconds"], history["test_accuracy"], "o-", color=color, label=name)
    left.axhline(results["baseline"], color="gray", linestyle="--", label="most frequent tag")
    left.set_xlabel("training seconds")
    left.set_ylabel("test accuracy (%)")
    left.set_title("UD English-EWT (train: dev, test: test)")
    left.legend(fontsize=8)
    history = results["DistRepSSVM"]["history"]
    epochs = np.arange(1, len(history["rank"]) + 1)
    right.plot(epochs, history["objective"], "o-", color="C3", label="objective (1)")
    right.set_xlabel("DistRepSSVM epoch (w-steps and A-steps alternate)")
    right.set_ylabel("objective (1)")
    twin = right.twinx()
    twin.step(epochs, history["rank"], where="mid", color="k", label="rank of A")
    twin.set_ylabel("rank of A")
    twin.set_ylim(0, len(results["tags"]) + 1)
    right.set_title("DistRepSSVM: objective and rank of A")
    lines = right.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    right.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    """Trains both learners on the dev set, tests on the test set, prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DATA, help="the folder of en_ewt-ud-{dev,test}.conllu")
    parser.add_argument("--epochs", type=int, default=15, help="SubgradientSSVM's epochs")
    parser.add_argument("--rounds", type=int, default=8,
                        help="DistRepSSVM's rounds (a w-step each, an A-step between)")
    parser.add_argument("--dim", type=int, default=None,
                        help="DistRepSSVM's label vectors' size (default: the number of tags)")
    parser.add_argument("--threads", type=int, default=None,
                        help="C threads of the minibatches' inference (default: one per processor)")
    parser.add_argument("--output", default="pos_tagging.png", help="the PNG to write")
    args = parser.parse_args()
    paths = [os.path.join(args.data, "en_ewt-ud-%s.conllu" % part) for part in ("dev", "test")]
    for path in paths:
        if not os.path.exists(path):
            sys.exit("%s not found" % path)
    train, test = load_conllu(paths[0]), load_conllu(paths[1])
    results = run(train, test, epochs=args.epochs, distrep_rounds=args.rounds, dim=args.dim,
                  threads=args.threads)
    print("\n%d training sentences (%d tokens), %d test sentences (%d tokens), %d features, "
          "%d tags" % (len(train), sum(len(w) for w, _ in train), len(test),
                       sum(len(w) for w, _ in test), results["features"], len(results["tags"])))
    print("\n| model | test accuracy | training seconds | epochs | rank of A |")
    print("|---|---|---|---|---|")
    print("| most frequent tag | %.2f | | | |" % results["baseline"])
    for name in ("SubgradientSSVM", "DistRepSSVM"):
        result = results[name]
        rank = (str(result["history"]["rank"][-1]) if name == "DistRepSSVM"
                else "(%d tags)" % len(results["tags"]))
        print("| %s | %.2f | %.1f | %d | %s |" % (name, result["accuracy"], result["seconds"],
                                                  result["epochs"], rank))
    plot(results, args.output)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
