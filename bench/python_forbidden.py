"""What forbidden transitions cost a batch of sequence layers.

64 sentences of 30 words with 9 BIO tags (O, B-x and I-x for 4 types x),
concord.torch.sequence_sparsemap forward and backward, with random
transition scores as they are ("free") and with the transitions into each
I-x from anything but B-x and I-x forbidden, as are starts in an I-x
("BIO mask"). Medians of 15 calls; the two settings alternate twice.

    .venv/bin/python bench/python_forbidden.py
"""
import time

import torch

import concord.torch as ct

BATCH, LENGTH, TYPES, CALLS = 64, 30, 4, 15


def bio_mask():
    """Forbidden transitions (previous tag, next tag) and starts of BIO."""
    tags = 1 + 2 * TYPES
    transitions = torch.zeros(tags, tags, dtype=torch.bool)
    for x in range(TYPES):
        inside = 1 + TYPES + x
        for previous in range(tags):
            if previous not in (1 + x, inside):
                transitions[previous, inside] = True
    start = torch.zeros(tags, dtype=torch.bool)
    start[1 + TYPES:] = True
    return transitions, start


def median_ms(unary, transitions, start):
    """Median wall ms of one sequence_sparsemap forward and backward on a copy of unary, over
    CALLS calls."""
    times = []
    for _ in range(CALLS):
        scores = unary.clone().requires_grad_()
        begin = time.perf_counter()
        ct.sequence_sparsemap(scores, transitions, start).sum().backward()
        times.append(time.perf_counter() - begin)
    return 1e3 * sorted(times)[CALLS // 2]


def main():
    """Prints the median times with free transitions and with the BIO mask, twice each."""
    generator = torch.Generator().manual_seed(0)
    tags = 1 + 2 * TYPES
    unary = torch.randn(BATCH, LENGTH, tags, generator=generator, dtype=torch.float64)
    transitions = torch.randn(tags, tags, generator=generator, dtype=torch.float64)
    forbidden, forbidden_start = bio_mask()
    masked = transitions.masked_fill(forbidden, -float("inf"))
    start = torch.zeros(tags, dtype=torch.float64).masked_fill(forbidden_start, -float("inf"))
    print("%d sentences x %d words, %d BIO tags: forward and backward, median of %d calls"
          % (BATCH, LENGTH, tags, CALLS))
    for _ in range(2):
        print("free      %6.1f ms" % median_ms(unary, transitions, None))
        print("BIO mask  %6.1f ms" % median_ms(unary, masked, start))


if __name__ == "__main__":
    main()
