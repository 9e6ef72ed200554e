"""Word alignment as an LP-matching, drawn as heat maps.

Each source word aligns to exactly one target word (an Xor over its row)
and each target word receives at most one source word (an AtMostOne over
its column). LP-MAP (AD3) picks one alignment; LP-SparseMAP returns a sparse
mixture of alignments whose marginals show where the scores hesitate (here
"black cat" against "chat noir", whose order differs between the
languages). The two solutions are drawn side by side.

    .venv/bin/python examples/python/alignment.py --output alignment.png
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import concord  # noqa: E402

SOURCE = "the black cat sleeps on the mat".split()
TARGET = "le chat noir dort sur le tapis".split()
LEXICON = {("the", "le"): 2.0, ("black", "noir"): 2.2, ("black", "chat"): 1.6,
           ("cat", "chat"): 2.4, ("cat", "noir"): 1.2, ("sleeps", "dort"): 3.0,
           ("on", "sur"): 2.5, ("mat", "tapis"): 2.8}


def alignment_scores():
    """Lexical scores, a pull towards the diagonal, a little noise."""
    rng = np.random.default_rng(0)
    scores = np.full((len(SOURCE), len(TARGET)), -1.0)
    for i, s in enumerate(SOURCE):
        for j, t in enumerate(TARGET):
            scores[i, j] += LEXICON.get((s, t), 0.0) - 0.15 * abs(i - j)
    return scores + 0.1 * rng.normal(size=scores.shape)


def lp_matching(scores):
    """The graph: one variable per (source, target) pair, an Xor per row, an
    AtMostOne per column."""
    fg = concord.FactorGraph()
    x = fg.variable_from(scores)
    for i in range(scores.shape[0]):
        fg.add(concord.Xor(x[i, :]))
    for j in range(scores.shape[1]):
        fg.add(concord.AtMostOne(x[:, j]))
    return fg, x


def main():
    """Solves the alignment by LP-MAP and by LP-SparseMAP, prints both and LP-SparseMAP's link
    probabilities, and draws the two heat maps."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="alignment.png", help="the PNG to write")
    args = parser.parse_args()
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)

    print("Aligning '%s'\n      to '%s'\n(an Xor per source word, an AtMostOne per "
          "target word)" % (" ".join(SOURCE), " ".join(TARGET)))
    fg, x = lp_matching(alignment_scores())
    info = fg.solve_map()
    lp_map = x.value
    print("LP-MAP:       %s, value %.3f, %d iterations" % (info.status, info.value,
                                                          info.iterations))
    info = fg.solve()
    sparse = x.value
    print("LP-SparseMAP: %s, value %.3f, %d iterations" % (info.status, info.value,
                                                          info.iterations))
    print("(LP-SparseMAP's value subtracts |u|^2/2: it is not comparable with LP-MAP's.)")
    print("LP-SparseMAP's probability of each link, target words numbered by position:")
    for i, word in enumerate(SOURCE):
        picks = ", ".join("%s(%d) %.2f" % (TARGET[j], j + 1, sparse[i, j])
                          for j in np.flatnonzero(sparse[i] > 1e-9))
        print("  %-7s -> %s" % (word, picks))

    figure, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    for ax, values, title in ((axes[0], lp_map, "LP-MAP (AD3)"),
                              (axes[1], sparse, "LP-SparseMAP")):
        image = ax.imshow(values, cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks(range(len(TARGET)), TARGET, rotation=45, ha="right")
        ax.set_yticks(range(len(SOURCE)), SOURCE)
        ax.set_title(title)
        for (i, j), v in np.ndenumerate(values):
            if v > 1e-9:
                ax.text(j, i, "%.2f" % v, ha="center", va="center",
                        color="white" if v > 0.6 else "black", fontsize=8)
    figure.colorbar(image, ax=axes, shrink=0.8, label="P(aligned)")
    figure.savefig(args.output, dpi=100, bbox_inches="tight")
    print("wrote %s: LP-MAP's alignment beside LP-SparseMAP's probabilities" % args.output)


if __name__ == "__main__":
    main()
