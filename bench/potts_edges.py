"""What a Potts edge costs as a DENSE table against PAIR factors.

concord.learn's GraphCRF(pairwise="potts") gives each edge PAIR factors
over the states' indicators when its weights share a sign (the two
relaxations then have the same solutions) and a DENSE table with the
weights on its diagonal otherwise (docs/design.md). On grids of Gaussian
node scores and one positive weight per state, both built with
concord.FactorGraph: the median CPU time of REPS LP-MAP solves
(solve_map), the two alternating, with each solve's value, bound and
iterations.

    .venv/bin/python bench/potts_edges.py [REPS]
"""
import statistics
import sys
import time

import numpy as np

import concord


def grid(n, states, seed, dense):
    """An n x n grid of `states`-state nodes with Potts edges."""
    rng = np.random.default_rng(seed)
    fg = concord.FactorGraph()
    y = fg.multi_variable_from(rng.normal(size=(n * n, states)))
    edges = np.array([(i * n + j, i * n + j + 1) for i in range(n) for j in range(n - 1)] +
                     [(i * n + j, (i + 1) * n + j) for i in range(n - 1) for j in range(n)])
    weights = np.abs(rng.normal(size=states))
    if dense:
        for i, j in edges:
            fg.add(concord.Dense([y[i], y[j]], np.diag(weights)))
    else:
        fg.add(concord.Pair(y[edges[:, 0]], y[edges[:, 1]], np.tile(weights, (len(edges), 1))))
    return fg


def main():
    """Prints, per grid, the median PAIR and DENSE solve times, their ratio, the iterations and
    each solve's bound - value."""
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print("grid    states  PAIR ms  DENSE ms  ratio  PAIR its  DENSE its  PAIR bound - value"
          "  DENSE bound - value")
    for n, states in ((10, 3), (20, 4), (30, 5)):
        times = {False: [], True: []}
        infos = {}
        for _ in range(reps):
            for dense in (False, True):
                fg = grid(n, states, n, dense)
                start = time.process_time()
                infos[dense] = fg.solve_map()
                times[dense].append(time.process_time() - start)
        pair_ms, dense_ms = (1e3 * statistics.median(times[d]) for d in (False, True))
        print("%2dx%-2d  %6d  %7.2f  %8.2f  %5.2f  %8d  %9d  %18.3g  %19.3g" % (
            n, n, states, pair_ms, dense_ms, dense_ms / pair_ms, infos[False].iterations,
            infos[True].iterations, infos[False].upper_bound - infos[False].value,
            infos[True].upper_bound - infos[True].value))


if __name__ == "__main__":
    main()
