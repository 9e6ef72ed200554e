"""How LP-MAP (or LP-SparseMAP) converges on hard random logic graphs.

The graphs are scripts/gen-test-data.py's mixture_graph: every closed-form
family (XOR, XOROUT, ATMOSTONE, OR, OROUT, ANDOUT, IMPLY, BUDGET, KNAPSACK,
PAIR), twice as many factors as variables, over windows of nearby
variables, constrained around a planted assignment; 150 and 300 variables
of seeds 1000-1199 and 600 variables of seeds 1000-1099 (500 graphs). Each
is solved once in process at the default settings; per size the script
prints how many solves stopped at max_iter, the iterations over all of
them and the solve time over all of them. docs/design.md quotes these
figures (penalty adaptation, caching).

    .venv/bin/python bench/mixture_convergence.py [--sparse]
"""
import importlib.util
import os
import sys

import concord._core as core

SIZES = ((150, range(1000, 1200)), (300, range(1000, 1200)), (600, range(1000, 1100)))


def mixture_graph_function():
    """scripts/gen-test-data.py's mixture_graph, loaded from its file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts",
                        "gen-test-data.py")
    spec = importlib.util.spec_from_file_location("gen_test_data", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.mixture_graph


def main():
    """Solves every graph of SIZES once and prints, per size and over all, the graphs, the
    solves at max_iter, the iterations and the seconds."""
    sparse = "--sparse" in sys.argv[1:]
    mixture_graph = mixture_graph_function()
    print("%s on mixture_graph, default settings" % ("LP-SparseMAP" if sparse else "LP-MAP"))
    print("%9s %7s %9s %12s %10s" % ("variables", "graphs", "max_iter", "iterations", "seconds"))
    totals = [0, 0, 0, 0.0]
    for n, seeds in SIZES:
        row = [0, 0, 0, 0.0]
        for seed in seeds:
            text = mixture_graph(seed, n).text()
            solver = core.Solver(core.read_buffer(text, name="mixture_%d_%d" % (n, seed))[0])
            info = solver.solve_sparse() if sparse else solver.solve_map()
            row[0] += 1
            row[1] += info.status == "max_iter"
            row[2] += info.iterations
            row[3] += info.seconds
        print("%9d %7d %9d %12d %10.2f" % (n, *row))
        totals = [a + b for a, b in zip(totals, row)]
    print("%9s %7d %9d %12d %10.2f" % ("all", *totals))


if __name__ == "__main__":
    main()
