#!/usr/bin/env python3
"""Writes tests/data/sparse_arborescence.fg: an ARBORESCENCE over 14 tokens
with all 196 arcs, arc scores N(0, 0.05) (numpy default_rng(1), arcs ordered
by head then modifier), and a BUDGET 2 on each head's outgoing arcs, so that
the graph does not separate. With scores this flat the tree's LP-SparseMAP
solution is a mixture of about 175 trees: when the active set held at most
128 configurations, the solve never converged (100,000 iterations with the
residuals far below the tolerance), as on AD3's parsing01.fg.

    scripts/make_sparse_arborescence.py > tests/data/sparse_arborescence.fg
"""
import numpy as np

TOKENS, SIGMA, SEED, BUDGET = 14, 0.05, 1, 2

rng = np.random.default_rng(SEED)
arcs = [(h, m) for h in range(TOKENS + 1) for m in range(1, TOKENS + 1) if h != m]
scores = rng.normal(0.0, SIGMA, len(arcs))
factors = ["ARBORESCENCE %d %s %d %s" % (
    len(arcs), " ".join(str(k + 1) for k in range(len(arcs))), TOKENS + 1,
    " ".join("%d %d" % arc for arc in arcs))]
for head in range(TOKENS + 1):
    out = [k + 1 for k, (h, _) in enumerate(arcs) if h == head]
    factors.append("BUDGET %d %s %d" % (len(out), " ".join(map(str, out)), BUDGET))
print("# scripts/make_sparse_arborescence.py: %d tokens, all %d arcs, scores N(0, %g),"
      % (TOKENS, len(arcs), SIGMA))
print("# seed %d, BUDGET %d per head; LP-SparseMAP needs ~175 trees (see the script)"
      % (SEED, BUDGET))
print(len(arcs))
print(len(factors))
for s in scores:
    print("%.6f" % s)
for line in factors:
    print(line)
print()
