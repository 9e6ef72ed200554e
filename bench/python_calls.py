"""What one small differentiable call costs from PyTorch, forward and backward.

Small problems are where the Python around the solver shows: each cycle
makes a float64 score tensor that requires a gradient, runs one forward
call (building the graph where the API builds one per call, solving it by
LP-SparseMAP, reading the solution) and back-propagates a fixed random
direction through it; forward and backward are timed apart in process CPU
time, and each figure is the median of REPS cycles (after 100 untimed
ones).

Calls: an 8-word dependency tree with at most two children per word
(DepTree and one Budget per head, as bench/python_lpsmap_torch.py builds
it) through concord.FactorGraph and through the lp-sparsemap drop-in's
TorchFactorGraph; the SparseMAP layers of one example (tree_sparsemap
n = 8, sequence_sparsemap over 10 positions and 5 states with transition
scores, matching_sparsemap 5 x 5) and tree_sparsemap_loss.

    .venv/bin/python bench/python_calls.py [REPS]
"""
import statistics
import sys
import time

import numpy as np
import torch

import concord
import concord.lpsmap
import concord.torch as ct

WORDS = 8


def concord_tree(scores):
    """scores[h, m]: the arc h -> m (concord's DepTree layout)."""
    fg = concord.FactorGraph()
    x = fg.variable_from(scores)
    fg.add(concord.DepTree(x))
    for h in range(WORDS):
        fg.add(concord.Budget(x[h, [m for m in range(WORDS) if m != h]], 2))
    fg.solve()
    return x.value


def dropin_tree(scores):
    """The same trees in lp-sparsemap's packed layout: scores[m, h]."""
    fg = concord.lpsmap.TorchFactorGraph()
    x = fg.variable_from(scores)
    fg.add(concord.lpsmap.DepTree(x, packed=True))
    for h in range(WORDS):
        fg.add(concord.lpsmap.Budget(x[[m for m in range(WORDS) if m != h], h], 2))
    fg.solve()
    return x.value


def calls(rng):
    """(name, forward(*tensors) -> tensor, score arrays)."""
    tree = rng.normal(size=(WORDS, WORDS))
    gold = np.eye(WORDS)
    return [
        ("FactorGraph: 8-word tree + budgets", concord_tree, [tree]),
        ("lp-sparsemap drop-in: the same", dropin_tree, [tree.T.copy()]),
        ("tree_sparsemap, n = 8", ct.tree_sparsemap, [tree]),
        ("sequence_sparsemap, 10 x 5", ct.sequence_sparsemap,
         [rng.normal(size=(10, 5)), rng.normal(size=(9, 5, 5))]),
        ("matching_sparsemap, 5 x 5", ct.matching_sparsemap, [rng.normal(size=(5, 5))]),
        ("tree_sparsemap_loss, n = 8", lambda s: ct.tree_sparsemap_loss(s, gold), [tree]),
    ]


def medians(forward, arrays, direction, reps):
    """Median forward and backward CPU seconds of one call."""
    times = ([], [])
    for rep in range(reps + 100):
        leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        start = time.process_time()
        out = forward(*leaves)
        middle = time.process_time()
        (out * direction).sum().backward()
        end = time.process_time()
        if rep >= 100:
            times[0].append(middle - start)
            times[1].append(end - middle)
    return statistics.median(times[0]), statistics.median(times[1])


def main():
    """Times every call of calls() over REPS cycles and prints the table of median forward and
    backward us."""
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = np.random.default_rng(0)
    print("one call, forward and backward (medians of %d cycles, process CPU time)" % reps)
    print("| call | forward us | backward us |")
    print("|---|---:|---:|")
    for name, forward, arrays in calls(rng):
        shape = forward(*[torch.tensor(a) for a in arrays]).shape
        direction = torch.tensor(rng.normal(size=shape))
        f, b = medians(forward, arrays, direction, reps)
        print("| %s | %.1f | %.1f |" % (name, 1e6 * f, 1e6 * b))


if __name__ == "__main__":
    main()
