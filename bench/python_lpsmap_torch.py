"""LP-SparseMAP forward and backward from PyTorch: concord.torch against
lp-sparsemap's TorchFactorGraph, on the same problems in one process.

Each cycle builds the factor graph around a float64 score tensor, solves it
(LP-SparseMAP) and back-propagates a fixed random direction through the
solution; forward and backward are timed apart (process CPU time) and each
figure is the median of REPS cycles, the two libraries alternating. Two
settings, given to both: lp-sparsemap's defaults (1000 iterations,
tolerance 1e-6, step 0.1 adapted) and tight ones (20000 iterations,
tolerance 1e-10). The largest difference between the two solutions is
printed alongside (the libraries measure their tolerance differently).

Problems: LP matching (an Xor per row, an AtMostOne per column, n x n),
a tag sequence with a budget on one tag (length L, S tags), and
dependency trees of n words with at most two children per word (budgets on
the tree's columns, as lp-sparsemap's constrained_tree example).

lp-sparsemap is not part of concord: build and install it outside the
repository and put it on PYTHONPATH; without it the benchmark says so and
exits 0.

    PYTHONPATH=<lp-sparsemap site-packages> .venv/bin/python bench/python_lpsmap_torch.py
"""
import statistics
import sys
import time

import numpy as np
import torch

import concord
import concord.torch  # noqa: F401  (tensor scores)

try:
    import lpsmap
except ImportError as error:
    print("lp-sparsemap is not importable (%s): nothing to compare; skipped" % error)
    sys.exit(0)

REPS = 30


def matching(lib, scores):
    """An LP matching in lib (concord or lpsmap) over scores, an Xor per row and an AtMostOne
    per column: (graph, variable)."""
    fg = lib.TorchFactorGraph() if lib is lpsmap else concord.FactorGraph()
    x = fg.variable_from(scores)
    for i in range(scores.shape[0]):
        fg.add(lib.Xor(x[i, :]))
    for j in range(scores.shape[1]):
        fg.add(lib.AtMostOne(x[:, j]))
    return fg, x


def tagging(lib, scores, transitions):
    """A tag sequence in lib over scores and transitions, with a budget of 2 on tag 1: (graph,
    variable)."""
    fg = lib.TorchFactorGraph() if lib is lpsmap else concord.FactorGraph()
    x = fg.variable_from(scores)
    fg.add(lib.Sequence(x, transitions))
    fg.add(lib.Budget(x[:, 1], 2))
    return fg, x


def trees(lib, scores):
    """lp-sparsemap's packed layout is (modifier, head); concord's DepTree
    takes (head, modifier), so concord gets the transpose."""
    n = scores.shape[0]
    fg = lib.TorchFactorGraph() if lib is lpsmap else concord.FactorGraph()
    if lib is lpsmap:
        x = fg.variable_from(scores)
        fg.add(lpsmap.DepTree(x, packed=True))
        children = [x[[m for m in range(n) if m != k], k] for k in range(n)]
    else:
        x = fg.variable_from(scores.t())
        fg.add(concord.DepTree(x))
        children = [x[k, [m for m in range(n) if m != k]] for k in range(n)]
    for child_arcs in children:
        fg.add(lib.Budget(child_arcs, 2))
    return fg, x


SETTINGS = {"default": dict(max_iter=1000, tol=1e-6), "tight": dict(max_iter=20000, tol=1e-10)}


def cycle(lib, build, tensors, direction, settings, transpose=False):
    """One forward and backward pass; returns (forward s, backward s,
    solution as numpy in lp-sparsemap's layout)."""
    leaves = [t.detach().clone().requires_grad_(True) for t in tensors]
    start = time.process_time()
    fg, x = build(lib, *leaves)
    fg.solve(**settings)
    value = x.value.t() if transpose else x.value
    forward = time.process_time() - start
    start = time.process_time()
    (value * direction).sum().backward()
    backward = time.process_time() - start
    return forward, backward, value.detach().numpy()


def compare(name, build, tensors, transpose_concord=False):
    """Times both libraries on one problem, REPS cycles per setting, and prints a row per
    setting."""
    direction = torch.randn(tensors[0].shape, dtype=torch.float64)
    for label, settings in SETTINGS.items():
        times = {lib: ([], []) for lib in (concord, lpsmap)}
        solutions = {}
        for _ in range(REPS):
            for lib in (concord, lpsmap):
                forward, backward, solution = cycle(lib, build, tensors, direction, settings,
                                                    transpose_concord and lib is concord)
                times[lib][0].append(forward)
                times[lib][1].append(backward)
                solutions[lib] = solution
        print_row("%s, %s" % (name, label), times, solutions)


def print_row(name, times, solutions):
    """Prints a table row: each library's median forward and backward ms and the largest
    difference between the two solutions."""
    row = [name]
    for lib in (concord, lpsmap):
        row += ["%.3f" % (1e3 * statistics.median(t)) for t in times[lib]]
    row.append("%.1e" % np.abs(solutions[concord] - solutions[lpsmap]).max())
    print("| " + " | ".join(row) + " |")


def main():
    """Prints the table: each problem at two sizes, in both settings."""
    rng = np.random.RandomState(0)
    print("medians of %d cycles, ms" % REPS)
    print("| problem | concord forward | concord backward | lp-sparsemap forward "
          "| lp-sparsemap backward | max |u difference| |")
    print("|---|---|---|---|---|---|")
    for n in (10, 20):
        compare("LP matching %dx%d" % (n, n), matching,
                [torch.tensor(rng.randn(n, n))])
    for length, tags in ((20, 5), (50, 10)):
        compare("sequence L=%d S=%d + budget" % (length, tags), tagging,
                [torch.tensor(rng.randn(length, tags)),
                 torch.tensor(rng.randn(length - 1, tags, tags))])
    for n in (8, 15):
        compare("tree n=%d + child budgets" % n, trees, [torch.tensor(rng.randn(n, n))],
                transpose_concord=True)


if __name__ == "__main__":
    main()
