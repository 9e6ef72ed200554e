"""A batch of LP-matchings solved on C threads from Python: 1 thread against 2.

256 LP-matchings of 20 x 20 (an Xor per row, an AtMostOne per column), each
its own FactorGraph with its own scores, solved by LP-SparseMAP (and by AD3)
with concord.solve_batch, which runs concord_solve_batch with the GIL
released; warm_start=False so that every run repeats the same work. The
last row is the same batch through concord.torch (one shared graph, a
(256, 400) score tensor): LP-SparseMAP forward and backward. Wall times,
best of five runs, the thread counts alternating; the results of every run
are checked to be bit for bit the same. The machine's load is printed too:
another process on a core takes its share of the speed-up. Last, the
fixed cost of a batch call: 8 graphs of one 4-variable Xor (a few
microseconds of solving in all), the median wall time of 2000 calls, best
of five runs; on several threads it includes starting them, and the thread
that runs the batch while the calling one watches for Ctrl-C.

    .venv/bin/python bench/python_batch.py
"""
import os
import time

import numpy as np

import concord

BATCH, N, RUNS = 256, 20, 5


def lp_matchings():
    """BATCH N x N LP-matchings of N(0, 1) scores: (graphs, their variables)."""
    rng = np.random.default_rng(0)
    graphs, variables = [], []
    for _ in range(BATCH):
        fg = concord.FactorGraph()
        x = fg.variable_from(rng.normal(size=(N, N)))
        for i in range(N):
            fg.add(concord.Xor(x[i, :]))
            fg.add(concord.AtMostOne(x[:, i]))
        graphs.append(fg)
        variables.append(x)
    return graphs, variables


def main():
    """Times the batch on 1 and 2 threads by LP-SparseMAP and by AD3, then through
    concord.torch, then the cost of a call, and prints the table."""
    graphs, variables = lp_matchings()
    print("%d LP-matchings %dx%d; load average %.2f %.2f %.2f; %d processors" % (
        (BATCH, N, N) + os.getloadavg() + (os.cpu_count(),)))
    print("%-14s %10s %10s %8s" % ("algorithm", "1 thread", "2 threads", "speed-up"))
    for algorithm, label in (("sparse", "LP-SparseMAP"), ("map", "LP-MAP (AD3)")):
        best, reference = {}, None
        for _ in range(RUNS):
            for threads in (1, 2):
                start = time.perf_counter()
                concord.solve_batch(graphs, algorithm, threads=threads, warm_start=False)
                elapsed = time.perf_counter() - start
                best[threads] = min(best.get(threads, np.inf), elapsed)
                values = np.stack([x.value for x in variables])
                if reference is None:
                    reference = values
                assert np.array_equal(values, reference), "threads changed a result"
        print("%-14s %8.1f ms %8.1f ms %7.2fx" % (label, 1e3 * best[1], 1e3 * best[2],
                                                  best[1] / best[2]))
    torch_batch(np.stack([x.scores for x in variables]))
    call_cost()


def torch_batch(scores):
    """The batch through concord.torch.lp_sparsemap, forward and backward."""
    import torch

    from concord import _core
    from concord.torch import lp_sparsemap
    graph = _core.Graph()
    graph.add_variables(N * N)
    for i in range(N):
        graph.add_logic("XOR", np.arange(N) + N * i)
        graph.add_logic("ATMOSTONE", N * np.arange(N) + i)
    weights = torch.arange(N * N, dtype=torch.float64)
    empty = torch.zeros(0, dtype=torch.float64)
    best, reference = {}, None
    for _ in range(RUNS):
        for threads in (1, 2):
            theta = torch.tensor(scores.reshape(BATCH, -1), requires_grad=True)
            start = time.perf_counter()
            us, _, _ = lp_sparsemap([graph] * BATCH, list(theta), [empty] * BATCH,
                                    threads=threads, warm_start=False)
            (torch.stack(us) * weights).sum().backward()
            elapsed = time.perf_counter() - start
            best[threads] = min(best.get(threads, np.inf), elapsed)
            if reference is None:
                reference = theta.grad
            assert torch.equal(theta.grad, reference), "threads changed a gradient"
    print("%-14s %8.1f ms %8.1f ms %7.2fx" % ("torch fwd+bwd", 1e3 * best[1], 1e3 * best[2],
                                              best[1] / best[2]))


def call_cost():
    """The wall time of a batch call of 8 tiny solves, 1 thread against 2."""
    rng = np.random.default_rng(0)
    graphs = []
    for _ in range(8):
        fg = concord.FactorGraph()
        fg.add(concord.Xor(fg.variable_from(rng.normal(size=4))))
        graphs.append(fg)
    best = {}
    for _ in range(RUNS):
        for threads in (1, 2):
            times = []
            for _ in range(2000):
                start = time.perf_counter()
                concord.solve_batch(graphs, "sparse", threads=threads)
                times.append(time.perf_counter() - start)
            best[threads] = min(best.get(threads, np.inf), float(np.median(times)))
    print("%-14s %8.1f us %8.1f us" % ("8 tiny solves", 1e6 * best[1], 1e6 * best[2]))


if __name__ == "__main__":
    main()
