"""Constrained dependency parsing: the sparse set of trees SparseMAP selects.

"I saw the man with a telescope": does "with" attach to "saw" or to "man"?
The arc scores hesitate. SparseMAP over dependency trees (one DepTree
factor) answers with a sparse distribution: a few trees and their weights
(the tree factor's distribution, concord_solver_factor_distribution). A
budget, "no word takes more than two dependents" (one Budget factor per
head, LP-SparseMAP over the tree and the budgets), moves that mass. Both
distributions are drawn, one tree per panel.

    .venv/bin/python examples/python/dependency_parsing.py --output trees.png
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Arc  # noqa: E402

import concord  # noqa: E402

WORDS = "I saw the man with a telescope".split()
ARCS = {("ROOT", "saw"): 3.0, ("saw", "I"): 2.5, ("saw", "man"): 2.4, ("man", "the"): 2.5,
        ("telescope", "a"): 2.5, ("with", "telescope"): 2.4, ("saw", "with"): 1.3,
        ("man", "with"): 1.0, ("saw", "telescope"): 0.4}


def arc_scores():
    """scores[h, m]: word h heads word m; scores[m, m]: the root heads m."""
    n = len(WORDS)
    scores = np.full((n, n), -2.0)
    for (head, modifier), score in ARCS.items():
        m = WORDS.index(modifier)
        scores[m if head == "ROOT" else WORDS.index(head), m] = score
    return scores


def parse(scores, max_dependents=None):
    """SparseMAP over single-rooted trees, with at most max_dependents per
    head when given; returns the tree factor's distribution."""
    fg = concord.FactorGraph()
    x = fg.variable_from(scores)
    tree = fg.add(concord.DepTree(x, single_root=True))
    if max_dependents is not None:
        n = scores.shape[0]
        for h in range(n):
            fg.add(concord.Budget(x[h, [m for m in range(n) if m != h]], max_dependents))
    info = fg.solve(tol=1e-9)
    weights, trees = fg.distribution(tree)
    order = np.argsort(-weights)
    return info, weights[order], trees[order]


def draw_tree(ax, tree, title):
    """Arcs above the sentence, from head to modifier (node 0 is the root)."""
    ax.set_xlim(-0.5, len(WORDS) + 0.5)
    ax.axis("off")
    highest = 0.0
    for k, word in enumerate(["ROOT"] + WORDS):
        ax.text(k, -0.3, word, ha="center", va="center", fontsize=9)
    for h, m in zip(*np.nonzero(tree > 0.5)):
        head, modifier = (0 if h == m else h + 1), m + 1
        span = abs(head - modifier)
        ax.add_patch(Arc(((head + modifier) / 2, 0), span, 0.6 * span, theta1=0, theta2=180,
                         color="tab:blue", lw=1.5))
        ax.plot([modifier], [0.02], marker="v", color="tab:blue", markersize=6)
        highest = max(highest, 0.3 * span)
    ax.set_ylim(-0.5, highest + 0.2)
    ax.set_title(title, fontsize=10)


def main():
    """Parses the sentence with and without the budget, prints each distribution and draws its
    trees."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="trees.png", help="the PNG to write")
    args = parser.parse_args()
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)

    scores = arc_scores()
    rows = [("SparseMAP", parse(scores)),
            ("at most 2 dependents", parse(scores, max_dependents=2))]
    columns = max(len(weights) for _, (_, weights, _) in rows)
    figure, axes = plt.subplots(len(rows), columns, figsize=(4.5 * columns, 1.8 * len(rows)),
                                squeeze=False)
    for r, (label, (info, weights, trees)) in enumerate(rows):
        print("%s: %s in %d iteration%s, %d tree%s with weights %s" % (
            label, info.status, info.iterations, "" if info.iterations == 1 else "s",
            len(weights), "" if len(weights) == 1 else "s", np.round(weights, 3)))
        for c in range(columns):
            if c < len(weights):
                draw_tree(axes[r, c], trees[c], "%s: weight %.2f" % (label, weights[c]))
            else:
                axes[r, c].axis("off")
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
