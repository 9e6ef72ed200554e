"""Training throughput of concord.learn's SubgradientSSVM: examples per
second on 1 thread against 2.

Random training sets of 256 examples (seeded), every example's
loss-augmented inference solved by concord_solve_batch in minibatches of
64 on `threads` C threads:

- chain: ChainCRF with 17 states, sentences of 20 to 40 tokens, LP-MAP
  (one SEQUENCE factor: Viterbi, exact);
- multilabel: MultiLabelClf with 40 labels and every pair of them (780
  PAIR factors), LP-MAP and LP-SparseMAP;
- grid: GraphCRF with 4 states on a 5 x 5 grid (40 DENSE factors), LP-MAP
  and LP-SparseMAP.

Each figure is one epoch's examples over its wall time (the second epoch
of a fit, time_curve_[1] - time_curve_[0]: the factor graphs are built in
the first), the median of RUNS runs (default 7) with the thread counts
alternating;
every run's weights are checked to be the same on both thread counts. The
machine's load is printed too: another process on a core takes its share
of the speed-up.

    .venv/bin/python bench/learn_throughput.py [RUNS]
"""
import argparse
import os

import numpy as np

from concord.learn import ChainCRF, GraphCRF, MultiLabelClf, SubgradientSSVM

EXAMPLES = 256
BATCH = 64
FEATURES = 20


def chains(rng, states=17):
    """Tag sequences of 20 to 40 tokens with noisy one-hot features."""
    X, Y = [], []
    for _ in range(EXAMPLES):
        y = rng.integers(states, size=int(rng.integers(20, 41)))
        X.append(rng.normal(size=(len(y), FEATURES)) + 0.5 * np.eye(states, FEATURES)[y])
        Y.append(y)
    return X, Y


def multilabels(rng, labels=40):
    """Labels from a noisy linear model of Gaussian features (and a bias)."""
    X = np.hstack([rng.normal(size=(EXAMPLES, FEATURES - 1)), np.ones((EXAMPLES, 1))])
    Y = X @ rng.normal(size=(labels, FEATURES)).T + rng.normal(size=(EXAMPLES, labels)) > 0
    return X, Y.astype(int)


def grids(rng, side=5, states=4):
    """Grid graphs with one state per node and noisy one-hot features."""
    nodes = np.arange(side * side).reshape(side, side)
    edges = np.vstack([np.c_[nodes[:, :-1].ravel(), nodes[:, 1:].ravel()],
                       np.c_[nodes[:-1, :].ravel(), nodes[1:, :].ravel()]])
    X, Y = [], []
    for _ in range(EXAMPLES):
        y = rng.integers(states, size=side * side)
        X.append((rng.normal(size=(len(y), FEATURES)) + 0.5 * np.eye(states, FEATURES)[y],
                  edges))
        Y.append(y)
    return X, Y


def throughput(make_model, X, Y, runs):
    """Median examples/s of one epoch on 1 and 2 threads over `runs` runs."""
    rates = {1: [], 2: []}
    reference = None
    for _ in range(runs):
        for threads in (1, 2):
            learner = SubgradientSSVM(make_model(), max_iter=2, batch_size=BATCH,
                                      random_state=0, threads=threads).fit(X, Y)
            rates[threads].append(len(X) / (learner.time_curve_[1] - learner.time_curve_[0]))
            if reference is None:
                reference = learner.w
            assert np.array_equal(learner.w, reference), "threads changed the weights"
    return np.median(rates[1]), np.median(rates[2])


def main():
    """Prints the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="?", type=int, default=7,
                        help="runs per thread count (default 7)")
    runs = parser.parse_args().runs
    if runs < 1:
        parser.error("runs must be at least 1")
    rng = np.random.default_rng(0)
    chain, multilabel, grid = chains(rng), multilabels(rng), grids(rng)
    cases = [
        ("chain, 17 states, LP-MAP", lambda: ChainCRF(17), chain),
        ("multilabel 40, full, LP-MAP", lambda: MultiLabelClf(40, edges="full"), multilabel),
        ("multilabel 40, full, LP-SparseMAP",
         lambda: MultiLabelClf(40, edges="full", inference_method="sparse"), multilabel),
        ("grid 5x5, 4 states, LP-MAP", lambda: GraphCRF(4), grid),
        ("grid 5x5, 4 states, LP-SparseMAP", lambda: GraphCRF(4, inference_method="sparse"),
         grid),
    ]
    print("SubgradientSSVM, one epoch of %d examples, minibatches of %d, median of %d runs; "
          "load average %.2f %.2f %.2f; %d processors" % ((EXAMPLES, BATCH, runs)
                                                         + os.getloadavg() + (os.cpu_count(),)))
    print("%-36s %12s %12s %9s" % ("training set", "1 thread", "2 threads", "speed-up"))
    for name, make_model, (X, Y) in cases:
        one, two = throughput(make_model, X, Y, runs)
        print("%-36s %10.0f/s %10.0f/s %8.2fx" % (name, one, two, two / one))


if __name__ == "__main__":
    main()
