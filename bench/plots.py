"""Draws the figures of docs/performance.md from the benchmarks' outputs.

`make bench` saves what each benchmark prints in build/bench-results/
(NAME.txt); this script reads those files and writes one PNG per figure:

    .venv/bin/python bench/plots.py build/bench-results docs/img

  ad3_inproc.png   concord's LP-MAP solve against AD3's, in one process
                   (ad3_inproc.txt: the output of the ad3_inproc anchor,
                   which links AD3 and is built outside this repository;
                   the figure is skipped without it)
  uai.png          LP-MAP solve time and iterations on the UAI instances
  sparse.png       LP-SparseMAP forward and backward, and warm against cold
                   starts after small score changes
  python.png       a batch on 1 and 2 threads from Python, and resident
                   memory over 10^5 build/solve cycles

A missing input file skips its figure with a line saying so.
"""
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def table(text):
    """The data rows of a benchmark's table, split on whitespace: the lines
    with a number in their second or third field (headers have none)."""
    out = []
    for line in text.splitlines():
        fields = line.split()
        if any(len(fields) > k and re.fullmatch(r"-?[0-9.]+", fields[k]) for k in (1, 2)):
            out.append(fields)
    return out


def read(results, name):
    """The text of the file name in the results folder."""
    with open(os.path.join(results, name)) as f:
        return f.read()


def log_bars(path, names, values, xlabel, title, colors="tab:blue", notes=None, mark=None):
    """One horizontal bar per name on a log scale, first name on top;
    notes, when given, are written at the bars' ends; mark, a value to draw
    a vertical line at."""
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.barh(names, values, color=colors)
    if mark is not None:
        ax.axvline(mark, color="black", linewidth=0.8)
    for y, note in enumerate(notes or []):
        ax.text(values[y], y, " " + note, va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def ad3_inproc(results, out):
    """ad3_inproc.png: AD3's solve time over concord's, graph by graph (ad3_inproc.txt)."""
    data = table(read(results, "ad3_inproc.txt"))
    ratio = [float(r[3]) for r in data]
    log_bars(os.path.join(out, "ad3_inproc.png"), [r[0].replace(".fg", "") for r in data], ratio,
             "AD3 solve time / concord solve time (in one process; > 1: concord faster)",
             "LP-MAP on AD3's example graphs",
             colors=["tab:green" if x >= 1 else "tab:red" for x in ratio], mark=1.0)


def uai(results, out):
    """uai.png: the median LP-MAP solve time of each UAI instance, its iterations noted
    (bench_uai.txt)."""
    data = table(read(results, "bench_uai.txt"))
    log_bars(os.path.join(out, "uai.png"), [r[0] for r in data], [float(r[2]) for r in data],
             "LP-MAP solve, CPU ms (median)", "UAI 2014 MAP instances",
             notes=["%s it" % r[4] for r in data])


def sparse(results, out):
    """sparse.png: LP-SparseMAP's forward and backward times, and cold against warm starts
    (bench_sparse.txt's two tables)."""
    first, _, second = read(results, "bench_sparse.txt").partition("\n\n")
    passes, warm = table(first), table(second)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = [r[0] for r in passes]
    x = range(len(names))
    left.bar([i - 0.2 for i in x], [float(r[1]) for r in passes], 0.4, label="forward")
    left.bar([i + 0.2 for i in x], [float(r[6]) for r in passes], 0.4, label="backward (CG)")
    left.set_xticks(list(x), names)
    left.set_ylabel("CPU ms (median)")
    left.set_title("LP-SparseMAP forward and backward")
    left.legend()
    labels = ["%s\n%s" % (r[0], r[1].replace("LP-SparseMAP", "SparseMAP")) for r in warm]
    x = range(len(labels))
    right.bar([i - 0.2 for i in x], [float(r[2]) for r in warm], 0.4, label="cold start")
    right.bar([i + 0.2 for i in x], [float(r[4]) for r in warm], 0.4, label="warm start")
    right.set_xticks(list(x), labels, fontsize=7)
    right.set_ylabel("CPU ms (median)")
    right.set_title("Solving again after a 1% change of the scores")
    right.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sparse.png"), dpi=110)


def python(results, out):
    """python.png: the batch on 1 and 2 threads, and resident memory over the cycles
    (python_batch.txt, python_memory.txt)."""
    batch, memory = read(results, "python_batch.txt"), read(results, "python_memory.txt")
    lines = [m for m in re.finditer(r"^(.+?)\s+([0-9.]+) ms\s+([0-9.]+) ms", batch, re.M)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = [m.group(1).strip() for m in lines]
    x = range(len(names))
    left.bar([i - 0.2 for i in x], [float(m.group(2)) for m in lines], 0.4, label="1 thread")
    left.bar([i + 0.2 for i in x], [float(m.group(3)) for m in lines], 0.4, label="2 threads")
    left.set_xticks(list(x), names, fontsize=8)
    left.set_ylabel("wall ms (best of 5)")
    left.set_title("256 LP-matchings 20x20 from Python")
    left.legend()
    points = [(int(r[0]), int(r[1])) for r in table(memory) if len(r) == 2]
    right.plot([p[0] for p in points], [p[1] / 1024 for p in points], marker="o")
    right.set_ylim(0, max(p[1] for p in points) / 1024 * 1.2)
    right.set_xlabel("build/solve cycles")
    right.set_ylabel("resident memory, MB")
    right.set_title("Memory over repeated cycles")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "python.png"), dpi=110)


def main():
    """Draws every figure from RESULTS_DIR into OUTPUT_DIR, printing each one written or
    skipped."""
    if len(sys.argv) != 3:
        sys.exit("usage: bench/plots.py RESULTS_DIR OUTPUT_DIR")
    results, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for figure in (ad3_inproc, uai, sparse, python):
        try:
            figure(results, out)
            print("wrote %s.png" % os.path.join(out, figure.__name__))
        except FileNotFoundError as missing:
            print("skipped %s: no %s" % (figure.__name__, missing.filename))


if __name__ == "__main__":
    main()
