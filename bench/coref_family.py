"""Writes coreference-shaped graphs to a folder, one .fg file per graph.

A solve's iteration count is chaotic: one graph, timed against another
build, can come out tens of percent faster or slower by the path its
iterations happen to take. This writes a family of graphs of one shape
(coreference with transitivity, as AD3's coref.fg: a variable per pair of
mentions, three ORs per triple) so that builds are compared over many of
them, graph by graph (docs/performance.md gives the figures and the
driver that timed them):

  random_MM_SS.fg   bench/penalty_sweep.py's coreference graphs: MM mentions
                    (6, 8, 10, 12, 14), seeds SS 0-23, noise 0.5, 1 or 2 by
                    seed (its coref set is seeds 0-5 of these)
  perturbed_SS.fg   AD3's coref.fg with each of its 45 pair scores moved by
                    N(0, (0.01 sd)^2), sd the spread of those scores; seeds
                    0-39
  fresh_SS.fg       coref.fg's factors with its 45 scores drawn afresh from
                    N(mean, sd^2) of its scores; seeds 0-39

The last two need ../shared/data/ad3/coref.fg and are skipped, with a line
naming it, without it.

    /usr/bin/python3 bench/coref_family.py FOLDER
"""
import importlib.util
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COREF = os.path.join(HERE, "..", "..", "shared", "data", "ad3", "coref.fg")


def penalty_sweep():
    """bench/penalty_sweep.py, loaded from its file as a module."""
    spec = importlib.util.spec_from_file_location("penalty_sweep",
                                                  os.path.join(HERE, "penalty_sweep.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(folder, name, text):
    """Writes text to the file name in folder."""
    with open(os.path.join(folder, name), "w") as out:
        out.write(text)


def main():
    """Writes the random graphs to FOLDER, then the perturbed and fresh ones when coref.fg is
    there."""
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    coreference_graph = penalty_sweep().coreference_graph
    for mentions in (6, 8, 10, 12, 14):
        for seed in range(24):
            text = coreference_graph(mentions, 100 * mentions + seed, (0.5, 1.0, 2.0)[seed % 3])
            write(folder, "random_%02d_%02d.fg" % (mentions, seed), text)
    if not os.path.exists(COREF):
        print("skipping perturbed and fresh: %s is missing" % os.path.normpath(COREF))
        return
    with open(COREF) as graph:
        lines = graph.read().split("\n")
    count = int(lines[0])
    scores = [float(x) for x in lines[2:2 + count]]
    mean, spread = statistics.mean(scores), statistics.pstdev(scores)
    for kind in ("perturbed", "fresh"):
        for seed in range(40):
            rng = random.Random(seed)
            if kind == "perturbed":
                drawn = [s + rng.gauss(0, 0.01 * spread) for s in scores]
            else:
                drawn = [rng.gauss(mean, spread) for _ in scores]
            text = "\n".join(lines[:2] + ["%.6f" % s for s in drawn] + lines[2 + count:])
            write(folder, "%s_%02d.fg" % (kind, seed), text)


if __name__ == "__main__":
    main()
