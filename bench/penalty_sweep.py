"""Iteration counts over initial penalties, for one build or side by side.

A solve's iteration count is chaotic in its initial penalty: a change of
the penalty schedule, the acceleration or the caching can gain or lose
tens of percent on one graph at one penalty by luck. This benchmark sums
the iterations of every graph over nine initial penalties
0.05 * 2^(k/4), k = 0..8 (0.05 to 0.2), by the CLI's LP-MAP (or with
--sparse, LP-SparseMAP), and compares builds graph by graph: for each set
of graphs the iterations over all of them, the geometric mean of the
per-graph ratios to the first build, and how many graphs took over 5%
fewer or more iterations. docs/design.md quotes its figures.

The sets:
  coref      30 random coreference graphs: 6 to 14 mentions, a variable
             per pair scored by planted clusters plus Gaussian noise of
             0.5, 1 or 2, transitivity as three ORs per triple (the shape
             of AD3's coref.fg); written here
  matching   40 LP-matchings (an XOR per row, an ATMOSTONE per column):
             10 x 10 and 20 x 20, scores N(0, 1) of seeds 0-19; written
             here
  mixture    100 random graphs of every closed-form family
             (scripts/gen-test-data.py's mixture_graph: 150 and 300
             variables of seeds 1000-1039, 600 of seeds 1000-1019)
  parsing,   the generated suite of bench_structured (gen_structured
  sequences  suite, from the first build's directory)
  ad3, uai   AD3's graphs and five UAI 2014 instances from ../shared/data
             (skipped, with a line naming the missing file, without it)

    bench/penalty_sweep.py [--sparse] [--sets coref,ad3,...] BUILD/concord [OTHER/concord ...]
"""
import argparse
import importlib.util
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
PENALTIES = [0.05 * 2 ** (k / 4) for k in range(9)]
UAI = ["Grids_26", "Segmentation_12", "Segmentation_14", "wcsp_15", "ProteinFolding_11"]
AD3 = ["coref", "mln_large", "parsing01", "parsing02", "parsing_excerpt"] + \
    ["srl_fract_%03d" % k for k in range(1, 6)]


def coreference_graph(mentions, seed, noise):
    """A coreference graph in AD3's .fg format: one variable per pair of
    mentions, scored +-0.5 by planted clusters plus N(0, noise^2), and for
    every triple the three ORs that make coreference transitive."""
    rng = random.Random(seed)
    clusters = rng.randint(2, max(2, mentions // 2))
    cluster = [rng.randrange(clusters) for _ in range(mentions)]
    pairs = list(itertools.combinations(range(mentions), 2))
    index = {pair: k + 1 for k, pair in enumerate(pairs)}
    scores = [(0.5 if cluster[i] == cluster[j] else -0.5) + rng.gauss(0, noise) for i, j in pairs]
    factors = []
    for i, j, k in itertools.combinations(range(mentions), 3):
        a, b, c = index[(i, j)], index[(j, k)], index[(i, k)]
        factors += ["OR 3 -%d -%d %d" % (a, b, c), "OR 3 -%d -%d %d" % (a, c, b),
                    "OR 3 -%d -%d %d" % (b, c, a)]
    return "%d\n%d\n%s\n%s\n" % (len(pairs), len(factors), "\n".join("%.6f" % s for s in scores),
                                 "\n".join(factors))


def matching_graph(n, seed):
    """An n x n LP-matching in AD3's .fg format: scores N(0, 1), an XOR per
    row, an ATMOSTONE per column."""
    rng = random.Random(seed)
    rows = ["XOR %d %s" % (n, " ".join(str(i * n + j + 1) for j in range(n))) for i in range(n)]
    columns = ["ATMOSTONE %d %s" % (n, " ".join(str(i * n + j + 1) for i in range(n)))
               for j in range(n)]
    scores = "\n".join("%.6f" % rng.gauss(0, 1) for _ in range(n * n))
    return "%d\n%d\n%s\n%s\n" % (n * n, 2 * n, scores, "\n".join(rows + columns))


def mixture_graphs():
    """The mixture set's graphs as .fg texts: scripts/gen-test-data.py's mixture_graph at 150
    and 300 variables (seeds 1000-1039) and 600 (seeds 1000-1019)."""
    path = os.path.join(HERE, "..", "scripts", "gen-test-data.py")
    spec = importlib.util.spec_from_file_location("gen_test_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sizes = ((150, range(1000, 1040)), (300, range(1000, 1040)), (600, range(1000, 1020)))
    return [module.mixture_graph(seed, n).text() for n, seeds in sizes for seed in seeds]


def graph_sets(names, binary, folder):
    """{set: [file]}; a file of AD3's format may hold many graphs, which one
    CLI call solves in turn."""
    sets = {}

    def joined(name, texts):
        path = os.path.join(folder, name + ".fg")
        with open(path, "w") as out:
            out.write("\n".join(t.rstrip("\n") + "\n" for t in texts))
        return [path]

    if "coref" in names:
        texts = [coreference_graph(n, 100 * n + seed, (0.5, 1.0, 2.0)[seed % 3])
                 for n in (6, 8, 10, 12, 14) for seed in range(6)]
        sets["coref"] = joined("coref", texts)
    if "matching" in names:
        sets["matching"] = joined("matching", [matching_graph(n, seed) for n in (10, 20)
                                               for seed in range(20)])
    if "mixture" in names:
        sets["mixture"] = joined("mixture", mixture_graphs())
    if "parsing" in names or "sequences" in names:
        suite = os.path.join(folder, "suite")
        os.makedirs(suite, exist_ok=True)
        generator = os.path.join(os.path.dirname(binary), "gen_structured")
        subprocess.run([generator, "suite", suite], check=True)
        for kind in ("parsing", "sequences"):
            if kind in names:
                files = sorted(f for f in os.listdir(suite) if f.startswith(kind + "_"))
                sets[kind] = [os.path.join(suite, f) for f in files]
    for kind, names_, extension, folder_ in (("ad3", AD3, ".fg", "ad3"),
                                            ("uai", UAI, ".uai", "uai2014")):
        if kind not in names:
            continue
        files = [os.path.join(SHARED, folder_, n + extension) for n in names_]
        missing = [f for f in files if not os.path.exists(f)]
        if missing:
            print("skipping %s: %s is missing" % (kind, os.path.normpath(missing[0])))
            continue
        sets[kind] = files
    return sets


def sweep(binary, path, sparse):
    """Per graph of the file: (iterations summed over the penalties,
    solves that stopped at max_iter)."""
    totals = None
    for eta in PENALTIES:
        command = [binary, "solve", "--json", "-q", "--eta", repr(eta), path]
        if sparse:
            command[2:2] = ["--algorithm", "sparse"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode not in (0, 4):
            sys.exit("%s failed on %s: %s" % (binary, path, result.stderr.strip()))
        rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        counts = [(r["iterations"], r["status"] == "max_iter") for r in rows]
        totals = counts if totals is None else [(a + c, b + d) for (a, b), (c, d) in zip(totals, counts)]
    return totals


def main():
    """Sweeps each set of graphs with every build and prints a line per set comparing the
    builds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binaries", nargs="+", help="concord executables; the first is the reference")
    parser.add_argument("--sparse", action="store_true", help="LP-SparseMAP instead of LP-MAP")
    parser.add_argument("--sets", default="coref,matching,mixture,parsing,sequences,ad3,uai",
                        help="comma-separated sets (default: all)")
    args = parser.parse_args()
    names = args.sets.split(",")
    print("%s, iterations summed over initial penalties %s" % (
        "LP-SparseMAP" if args.sparse else "LP-MAP", ", ".join("%.3g" % e for e in PENALTIES)))
    for k, binary in enumerate(args.binaries):
        print("build %d: %s" % (k, binary))
    with tempfile.TemporaryDirectory() as folder:
        for name, files in graph_sets(names, args.binaries[0], folder).items():
            per_build = []
            for binary in args.binaries:
                counts = []
                for path in files:
                    counts += sweep(binary, path, args.sparse)
                per_build.append(counts)
            reference = per_build[0]
            graphs = len(reference)
            cells = []
            for k, counts in enumerate(per_build):
                iterations = sum(c[0] for c in counts)
                capped = sum(c[1] for c in counts)
                cell = "build %d: %d iterations, %d at max_iter" % (k, iterations, capped)
                if k > 0:
                    ratios = [c[0] / r[0] for c, r in zip(counts, reference)]
                    mean = math.exp(sum(math.log(x) for x in ratios) / graphs)
                    fewer = sum(x < 1 / 1.05 for x in ratios)
                    more = sum(x > 1.05 for x in ratios)
                    cell += " (geometric mean %.3f, %d fewer / %d more)" % (mean, fewer, more)
                cells.append(cell)
            print("%-9s %3d graphs | %s" % (name, graphs, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
