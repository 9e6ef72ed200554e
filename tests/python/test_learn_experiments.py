"""Short runs of the experiments in experiments/ (their own run functions):
learning happens (the training loss falls, the test score beats a simple
baseline). Each runs on the repository's small generated data sets
(tests/data/learn) and, when ../shared/data is beside the repository, on a
slice of the real data (skipped otherwise, naming the missing file)."""

import os
import sys

import numpy as np
import pytest

from concord.learn.datasets import load_conllu, load_mulan_split

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments"))
import multilabel_neural  # noqa: E402
import multilabel_ssvm  # noqa: E402
import pos_tagging  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "data", "learn")
SHARED = os.path.join(ROOT, "..", "shared", "data")


def existing(*paths):
    for path in paths:
        if not os.path.exists(path):
            pytest.skip("%s not found" % os.path.relpath(path, ROOT))
    return paths


def mulan(folder, name):
    try:
        return load_mulan_split(folder, name)
    except FileNotFoundError as missing:
        pytest.skip("%s not found" % os.path.relpath(missing.filename, ROOT))


def fixture_multilabel():
    return mulan(FIXTURES, "multilabel")


def quiet(*args):
    pass


def check_multilabel_ssvm(train, test, epochs, inference="map"):
    results, all_off = multilabel_ssvm.run(train, test, epochs=epochs, inference=inference,
                                           threads=2, log=quiet)
    for result in results.values():
        assert result["loss_curve"][-1] < 0.7 * result["loss_curve"][0]
        assert result["hamming"] < 0.8 * all_off
    assert {len(r["learner"].model.edges_) for r in results.values()} == {
        0, train[1].shape[1] - 1, train[1].shape[1] * (train[1].shape[1] - 1) // 2}


@pytest.mark.parametrize("inference", ["map", "exact"])
def test_multilabel_ssvm_on_the_fixture(inference):
    check_multilabel_ssvm(*fixture_multilabel(), epochs=5, inference=inference)


def test_multilabel_ssvm_on_yeast_and_emotions():
    for name in ("yeast", "emotions"):
        (X, Y), test = mulan(os.path.join(SHARED, "multilabel", name), name)
        check_multilabel_ssvm((X[:300], Y[:300]), test, epochs=4)


def check_pos_tagging(train, test, epochs, rounds):
    results = pos_tagging.run(train, test, epochs=epochs, distrep_rounds=rounds, threads=2,
                              log=quiet)
    for name in ("SubgradientSSVM", "DistRepSSVM"):
        history = results[name]["history"]
        assert history["loss"][-1] < 0.7 * history["loss"][0]
        assert results[name]["accuracy"] > results["baseline"]
    assert results["DistRepSSVM"]["history"]["steps"] == ["w", "A"] * (rounds - 1) + ["w"]
    return results


def test_pos_tagging_on_the_fixture():
    paths = [os.path.join(FIXTURES, "pos-%s.conllu" % part) for part in ("train", "test")]
    check_pos_tagging(*(load_conllu(p) for p in paths), epochs=4, rounds=3)


def test_pos_tagging_on_english_ewt():
    dev, test = existing(*(os.path.join(SHARED, "ud_english_ewt", "en_ewt-ud-%s.conllu" % part)
                           for part in ("dev", "test")))
    results = check_pos_tagging(load_conllu(dev)[:400], load_conllu(test)[:300], epochs=3,
                                rounds=2)
    assert results["SubgradientSSVM"]["accuracy"] > 75.0


def most_frequent_label_f1(Y, Y_test):
    """example-F1 of predicting the training set's most frequent label."""
    predicted = np.zeros_like(Y_test)
    predicted[:, np.argmax(Y.sum(axis=0))] = 1
    return multilabel_neural.example_f1(Y_test, predicted)


def test_nonempty_predicts_the_best_label_only_where_none_is_on():
    predicted = np.array([[0, 1, 0], [0, 0, 0], [1, 0, 1], [0, 0, 0]], dtype=bool)
    theta = np.array([[5.0, -1.0, 0.0], [-3.0, -0.5, -2.0], [-1.0, 4.0, 0.0], [0.1, -1.0, 2.0]])
    got = multilabel_neural.nonempty(predicted, theta)
    expected = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1], [0, 0, 1]], dtype=bool)
    assert np.array_equal(got, expected)
    assert not predicted[1].any()  # the input is left alone


@pytest.mark.parametrize("kind", ["hinge", "hinge-fp"])
def test_structured_hinges_equal_brute_force(kind):
    """Both hinges of the bibtex experiment against enumeration over the
    labelings of a 4-label fully connected MRF (attractive pair scores, so
    LP-MAP is exact): the value, and the gradient u* - y in the label
    scores. The Hamming cost counts false positives and negatives, the
    other false positives only."""
    import itertools
    import torch
    labels = 4
    graph = multilabel_neural.pairwise_graph(labels)
    rng = np.random.default_rng(7)
    pair_list = list(zip(*np.triu_indices(labels, 1)))
    for trial in range(5):
        theta = torch.tensor(rng.normal(size=(1, labels)), dtype=torch.float64,
                             requires_grad=True)
        pairs = torch.tensor(rng.uniform(0.1, 1.0, size=len(pair_list)), dtype=torch.float64)
        y = torch.tensor(rng.integers(0, 2, size=(1, labels)), dtype=torch.float64)
        t, p, gold = theta.detach().numpy()[0], pairs.numpy(), y.numpy()[0]

        def score(u):
            return t @ u + sum(w * u[i] * u[j] for w, (i, j) in zip(p, pair_list))

        def cost(u):
            false_positives = np.sum(u * (1 - gold))
            return false_positives + (np.sum(gold * (1 - u)) if kind == "hinge" else 0.0)

        labelings = [np.array(u, dtype=float) for u in itertools.product((0, 1), repeat=labels)]
        values = [score(u) + cost(u) for u in labelings]
        best = labelings[int(np.argmax(values))]
        assert sorted(values)[-2] < max(values) - 1e-3  # a unique maximiser
        loss = multilabel_neural.structured_loss(graph, theta, pairs, y, kind, threads=1)
        assert loss.item() == pytest.approx(max(values) - score(gold), abs=1e-6)
        loss.sum().backward()
        assert np.allclose(theta.grad.numpy()[0], best - gold, atol=1e-6)


def check_multilabel_neural(train, test, epochs, hidden):
    results = multilabel_neural.run(train, test, epochs=epochs, hidden=hidden, threads=2,
                                    log=quiet)
    baseline = most_frequent_label_f1(train[1], test[1])
    for kind, history in results.items():
        assert history["train_loss"][-1] < 0.9 * history["train_loss"][0], kind
        assert history["test_f1"][-1] > baseline + 5, kind
    return results


def test_multilabel_neural_losses_on_the_fixture():
    check_multilabel_neural(*fixture_multilabel(), epochs=12, hidden=32)


def test_multilabel_neural_losses_on_bibtex_labels():
    """The 12 most frequent labels of bibtex (the full graph of its 159
    labels is the experiment's, minutes per epoch)."""
    (X, Y), (X_test, Y_test) = mulan(os.path.join(SHARED, "multilabel", "bibtex"), "bibtex")
    labels = np.argsort(-Y.sum(axis=0))[:12]
    keep = Y[:, labels].any(axis=1)
    keep_test = Y_test[:, labels].any(axis=1)
    check_multilabel_neural((X[keep][:1200], Y[keep][:1200, labels]),
                            (X_test[keep_test][:300], Y_test[keep_test][:300, labels]),
                            epochs=5, hidden=64)
