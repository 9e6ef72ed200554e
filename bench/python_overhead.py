"""Building and solving one LP-matching from Python against the same work in C.

One cycle builds a 20 x 20 LP-matching from scratch (400 variables from a
score array, an Xor per row, an AtMostOne per column), solves it (by
LP-SparseMAP, and by AD3) and reads the solution; the Python cycle goes
through concord.FactorGraph, the C one through the C API
(bench/bench_lp_matching.c, given the same scores). Both report the median
CPU time of a cycle; the runs alternate, and each figure is the best of
three medians.

    make build && .venv/bin/python bench/python_overhead.py [build/bench_lp_matching]
"""
import subprocess
import sys
import time

import numpy as np

import concord

N, REPS, ROUNDS = 20, 300, 3


def python_cycle(scores, method):
    """One Python cycle: builds the N x N LP-matching over scores, solves it by the FactorGraph
    method named method and returns the solution."""
    fg = concord.FactorGraph()
    x = fg.variable_from(scores)
    for i in range(N):
        fg.add(concord.Xor(x[i, :]))
    for j in range(N):
        fg.add(concord.AtMostOne(x[:, j]))
    getattr(fg, method)()
    return x.value


def python_medians(scores):
    """The median CPU us of a Python cycle over REPS, by LP-SparseMAP ("sparse") and by AD3
    ("map")."""
    out = {}
    for name, method in (("sparse", "solve"), ("map", "solve_map")):
        times = []
        for _ in range(REPS):
            start = time.process_time()
            python_cycle(scores, method)
            times.append(time.process_time() - start)
        out[name] = 1e6 * float(np.median(times))
    return out


def c_medians(binary, scores):
    """The C cycle's medians in us, {"sparse": ..., "map": ...}, as the binary prints them
    given N, REPS and the scores."""
    text = "%d %d\n%s\n" % (N, REPS, " ".join("%.17g" % s for s in scores.reshape(-1)))
    result = subprocess.run([binary], input=text, capture_output=True, text=True, check=True)
    return {line.split()[0]: float(line.split()[1]) for line in result.stdout.splitlines()}


def main():
    """Prints, per algorithm, the best of ROUNDS median cycle times in C and in Python, and
    their ratio."""
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/bench_lp_matching"
    scores = np.random.default_rng(0).normal(size=(N, N))
    best = {"C": {}, "Python": {}}
    for _ in range(ROUNDS):
        for side, medians in (("C", c_medians(binary, scores)), ("Python", python_medians(scores))):
            for name, value in medians.items():
                best[side][name] = min(best[side].get(name, np.inf), value)
    print("one %dx%d LP-matching, built and solved (median CPU time of a cycle, best of %d)"
          % (N, N, ROUNDS))
    print("%-14s %10s %10s %8s" % ("algorithm", "C (us)", "Python (us)", "ratio"))
    for name, label in (("sparse", "LP-SparseMAP"), ("map", "LP-MAP (AD3)")):
        c, py = best["C"][name], best["Python"][name]
        print("%-14s %10.1f %10.1f %8.2f" % (label, c, py, py / c))


if __name__ == "__main__":
    main()
