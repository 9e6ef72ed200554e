"""LP-SparseMAP with regularization weights: accuracy and iterations.

For random graphs of up to 12 variables (every closed-form and generic
family, the generator of tests/python/test_lp_sparsemap_forward.py) and
weights of several kinds, a solve at the default settings (tolerance 1e-6)
against the polished cvxopt reference of that test: the largest
|u - reference| over the solves that converged, the median and largest
iteration counts, and the solves that reached the iteration cap. Weights that are all equal to w
are checked against the reference of the unweighted problem at scores
theta/w and phi/w (the same solution); other weights against the
weighted reference, whose unpolished cases are skipped (counted). The
kinds: every weight equal to 1e-6 ... 1e6; drawn log-uniformly from
0.1-10, 1e-2-1e2, 1e-3-1e3 and 1e-6-1e6; and the drop-ins' (1 but for a third of
the variables, at 1/2 or 1/3).

    .venv/bin/python bench/sparse_weights.py [GRAPHS] [MAX_ITER]
        GRAPHS per kind (default 80), MAX_ITER the iteration cap (200000)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

from concord import _core  # noqa: E402
from graph_specs import build, solve_sparse  # noqa: E402
from test_lp_sparsemap_forward import LocalQP, feasible_spec, solve_reference  # noqa: E402


def kinds(rng, n):
    """name -> (weights, equal): the kinds of weights for n variables."""
    out = {"all %g" % w: (np.full(n, w), True)
           for w in (1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e3, 1e4, 1e6)}
    for low, high in ((0.1, 10.0), (1e-2, 1e2), (1e-3, 1e3), (1e-6, 1e6)):
        out["spread %g-%g" % (low, high)] = (np.exp(rng.uniform(np.log(low), np.log(high), n)),
                                             False)
    out["drop-ins' 1/k"] = (np.where(rng.random(n) < 1 / 3, 1.0 / rng.integers(2, 4, n), 1.0),
                            False)
    return out


def reference(spec, factors, weights, equal):
    """The reference solution u, or None when it does not polish."""
    try:
        if equal:
            w = weights[0]
            ref = solve_reference(LocalQP(spec, factors, spec.theta / w, spec.phi / w))
        else:
            spec.weights = weights
            ref = solve_reference(LocalQP(spec, factors, spec.theta, spec.phi))
    except (RuntimeError, ValueError, ArithmeticError):
        return None
    finally:
        spec.weights = None
    return ref.u if ref.polished else None


def main():
    """Solves GRAPHS random graphs with every kind of weights and prints the table, a row per
    kind."""
    graphs = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    max_iter = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    rng, weight_rng = np.random.default_rng(5), np.random.default_rng(9)
    settings = _core.Settings(max_iter=max_iter)
    rows = {}
    for _ in range(graphs):
        spec, factors, _ = feasible_spec(rng)
        for name, (weights, equal) in kinds(weight_rng, spec.sizes()[0]).items():
            row = rows.setdefault(name, {"errors": [], "iterations": [], "capped": 0,
                                         "skipped": 0})
            u_ref = reference(spec, factors, weights, equal)
            if u_ref is None:
                row["skipped"] += 1
                continue
            spec.weights = weights
            u, _, info = solve_sparse(build(spec), settings)
            spec.weights = None
            row["iterations"].append(info.iterations)
            if info.converged:
                row["errors"].append(np.abs(u - u_ref).max())
            else:
                row["capped"] += 1
    print("LP-SparseMAP with regularization weights, %d random graphs per kind, tol 1e-6, "
          "at most %d iterations" % (graphs, max_iter))
    print("| weights | graphs | max abs(u - reference), converged | median iterations "
          "| max iterations | at the cap | skipped |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in rows.items():
        its = np.array(row["iterations"])
        print("| %s | %d | %.1e | %d | %d | %d | %d |" % (
            name, len(its), max(row["errors"], default=0.0), np.median(its), its.max(),
            row["capped"],
            row["skipped"]))


if __name__ == "__main__":
    main()
