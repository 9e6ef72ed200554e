"""Resident memory over many build/solve cycles of the Python package.

Each cycle builds a FactorGraph from NumPy arrays (a 6 x 6 LP-matching and
a chain of PAIR factors), solves it by LP-SparseMAP and decodes it; every
tenth cycle adds a Python oracle that raises, whose exception is caught.
The resident set size is printed every tenth of the run: flat means
nothing leaks (neither the C graphs and solvers nor the Python objects and
exceptions around them).

    .venv/bin/python bench/python_memory.py [CYCLES]     (default 100000)
"""
import gc
import os
import sys
import time

import numpy as np

import concord


class OracleFailure(Exception):
    """The exception failing_oracle raises."""


def failing_oracle(a, b):
    """A MAP oracle that always raises OracleFailure, carrying an array."""
    raise OracleFailure(np.zeros(1000))


def cycle(rng, k):
    """One cycle: a 6 x 6 LP-matching and a chain of PAIR factors, solved by LP-SparseMAP and
    decoded; when k is a multiple of 10, with a failing oracle added instead, its exception
    caught."""
    fg = concord.FactorGraph()
    x = fg.variable_from(rng.normal(size=(6, 6)))
    for i in range(6):
        fg.add(concord.Xor(x[i]))
        fg.add(concord.AtMostOne(x[:, i]))
    fg.add(concord.Pair(x[0, :-1], x[0, 1:], rng.normal(size=5)))
    if k % 10 == 0:
        fg.add(concord.Factor(x[1], map=failing_oracle))
        try:
            fg.solve()
        except OracleFailure:
            pass
    else:
        fg.solve()
        fg.decode()


def resident_kib():
    """The process's resident set size in KiB, from /proc/self/statm."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def main():
    """Runs CYCLES cycles, printing the resident size every tenth of the run, then the time per
    cycle."""
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    print("%9s %12s" % ("cycles", "RSS KiB"))
    for k in range(cycles):
        cycle(rng, k)
        if (k + 1) % (cycles // 10) == 0:
            gc.collect()
            print("%9d %12d" % (k + 1, resident_kib()))
    print("%.1f s, %.0f us per cycle" % (time.perf_counter() - start,
                                          1e6 * (time.perf_counter() - start) / cycles))


if __name__ == "__main__":
    main()
