"""What the backward pass costs where scores tie exactly.

At zero scores (a zero-initialized layer) every structure ties and the
backward pass first completes each factor's face with the tied
configurations (docs/design.md, backward pass), which costs O(k^2) per
configuration for a face of k; at random scores there is nothing to
complete. For each SparseMAP layer and size, one example: the median over
REPS cycles of the backward pass of a fixed random direction, in process
CPU time, at zero scores and at Gaussian scores (the forward pass is
untimed), and the face's configurations when it ties (the polytope's
dimension + 1, capped at CONCORD_FACE_COMPLETION_LIMIT = 512, beyond which
the backward pass warns).

    .venv/bin/python bench/python_ties.py [REPS]
"""
import statistics
import sys
import time
import warnings

import torch

import concord.torch as ct


def backward_ms(layer, scores, reps):
    """Median CPU ms of the backward pass of layer at scores."""
    direction = torch.randn(layer(scores).shape, dtype=torch.float64,
                            generator=torch.Generator().manual_seed(1))
    times = []
    for _ in range(reps):
        x = scores.clone().requires_grad_(True)
        y = layer(x)
        start = time.process_time()
        y.backward(direction)
        times.append(1e3 * (time.process_time() - start))
    return statistics.median(times)


def cases():
    """(name, layer, shape, configurations of the tied face)."""
    for n in (10, 15, 20, 23, 30):
        yield ("tree n=%d" % n, lambda a: ct.tree_sparsemap(a, threads=1), (n, n),
               n * (n - 1) + 1)
    for length, states in ((10, 10), (20, 20)):
        yield ("sequence L=%d S=%d" % (length, states),
               lambda a: ct.sequence_sparsemap(a, threads=1), (length, states),
               length * (states - 1) + 1)
    for n in (10, 20):
        yield ("perfect matching %dx%d" % (n, n),
               lambda a: ct.matching_sparsemap(a, every_row=True, every_col=True, threads=1),
               (n, n), (n - 1) ** 2 + 1)


def main():
    """Prints, per layer and size, the backward pass's median CPU ms at zero and at random
    scores and the configurations of the tied face."""
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    print("%-24s %12s %12s %14s" % ("layer", "zero ms", "random ms", "tied face"))
    generator = torch.Generator().manual_seed(0)
    for name, layer, shape, face in cases():
        zero = torch.zeros(shape, dtype=torch.float64)
        random = torch.randn(shape, dtype=torch.float64, generator=generator)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            tied = backward_ms(layer, zero, reps)
        print("%-24s %12.3f %12.3f %14s" % (name, tied, backward_ms(layer, random, reps),
                                          face if face <= 512 else "%d (capped)" % face))


if __name__ == "__main__":
    main()
