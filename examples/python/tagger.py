"""A sequence tagger with a budget, trained through LP-SparseMAP in PyTorch.

Tokens are tagged O or NAME by a linear model over a few word features and
a learned transition matrix. Its structured layer is an LP-SparseMAP graph:
a Sequence factor over the tags, and a Budget factor allowing at most two
NAME tokens per sentence. Training minimizes the LP-SparseMAP loss
(fg.loss, the Fenchel-Young loss of the graph), whose gradients flow back to
the model through concord.torch. The picture shows the tag marginals of a
new sentence with three capitalized words, with and without the budget.

    .venv/bin/python examples/python/tagger.py --output tagger.png
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import concord  # noqa: E402

TAGS = ["O", "NAME"]
NAME = 1
BUDGET = 2
TRAIN = [("Alice met Bob at the station", "NAME O NAME O O O"),
         ("Yesterday Carol called", "O NAME O"),
         ("The dog barked at Dave", "O O O O NAME"),
         ("Eve and Frank left early", "NAME O NAME O O"),
         ("We saw Grace in the park", "O O NAME O O O"),
         ("Nobody came", "O O")]
TEST = "Today Heidi thanked Ivan and Judy"


def features(words):
    """Per token: a bias, capitalized, first in the sentence, capitalized
    and not first."""
    rows = []
    for i, word in enumerate(words):
        upper = float(word[0].isupper())
        rows.append([1.0, upper, float(i == 0), upper * float(i > 0)])
    return torch.tensor(rows)


class Tagger(torch.nn.Module):
    """Tag scores from a linear layer over the token features, and a learned transition matrix."""
    def __init__(self):
        super().__init__()
        self.emissions = torch.nn.Linear(4, len(TAGS))
        self.transitions = torch.nn.Parameter(torch.zeros(len(TAGS), len(TAGS)))

    def graph(self, words, budget=BUDGET):
        """The LP-SparseMAP graph of a sentence: (graph, tag variable)."""
        fg = concord.FactorGraph()
        x = fg.variable_from(self.emissions(features(words)))
        fg.add(concord.Sequence(x, self.transitions.expand(len(words) - 1, 2, 2)))
        if budget is not None:
            fg.add(concord.Budget(x[:, NAME], budget))
        return fg, x


def one_hot(tags):
    """The space-separated tags as one-hot rows over TAGS."""
    return np.eye(len(TAGS))[[TAGS.index(t) for t in tags.split()]]


def main():
    """Trains the tagger on TRAIN, prints the loss of the first and last epochs and TEST's NAME
    marginals with and without the budget, and writes the picture."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="tagger.png", help="the PNG to write")
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args()
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)

    torch.manual_seed(0)
    model = Tagger()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        total = 0.0
        for sentence, tags in TRAIN:
            fg, x = model.graph(sentence.split())
            total = total + fg.loss({x: one_hot(tags)})
        total.backward()
        optimizer.step()
        if epoch in (0, args.epochs - 1):
            print("epoch %2d: LP-SparseMAP loss %.4f" % (epoch, total.item()))

    words = TEST.split()
    with torch.no_grad():
        graphs = [model.graph(words, budget) for budget in (None, BUDGET)]
        infos = concord.solve_batch([fg for fg, _ in graphs], threads=2)
    panels = [("no budget", graphs[0][1].value.numpy(), infos[0]),
              ("at most %d NAME tokens" % BUDGET, graphs[1][1].value.numpy(), infos[1])]
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, (title, marginals, info) in zip(axes, panels):
        print("%s: %s, NAME marginals %s" % (title, info.status,
                                            np.round(marginals[:, NAME], 3)))
        ax.imshow(marginals.T, cmap="Oranges", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(words)), words, rotation=30, ha="right")
        ax.set_yticks(range(len(TAGS)), TAGS)
        ax.set_title(title)
        for (i, t), v in np.ndenumerate(marginals):
            ax.text(i, t, "%.2f" % v, ha="center", va="center", fontsize=8,
                    color="white" if v > 0.6 else "black")
    figure.tight_layout()
    figure.savefig(args.output, dpi=100)
    print("wrote %s" % args.output)


if __name__ == "__main__":
    main()
