#!/bin/sh
# The demo: concord solves the bundled word-alignment problem
# (examples/data/alignment.fg), decodes it, and the chosen alignment is
# drawn as a matrix, source words down, target words across; then the
# Python package (installed in VENV_DIR) solves a longer alignment as an
# LP-matching and draws LP-MAP and LP-SparseMAP as heat maps.
# usage: scripts/demo.sh BUILD_DIR VENV_DIR
set -eu
build=$1
venv=$2
root=$(cd "$(dirname "$0")/.." && pwd)
graph="$root/examples/data/alignment.fg"
decoded=$(mktemp)
trap 'rm -f "$decoded"' EXIT
echo "Word alignment as a factor graph: 16 binary variables (source word i aligned"
echo "to target word j), each source word aligned exactly once (XOR), each target"
echo "word at most once (ATMOSTONE), PAIR factors rewarding the 'black cat' swap."
echo
# the command as a newcomer can paste it; its summary shows, and the
# assignment it prints is drawn below
echo "\$ $build/concord solve examples/data/alignment.fg --decode"
"$build/concord" solve "$graph" --decode 2>&1 >"$decoded"
echo
# the words are on the file's second comment line:
#   # Source: the black cat sleeps   Target: le chat noir dort
awk -v decoded="$decoded" '
    /^# Source:/ {
        sub(/^# Source: */, ""); split($0, halves, / *Target: */)
        ns = split(halves[1], source, " "); nt = split(halves[2], target, " ")
    }
    END {
        k = 0
        while ((getline line < decoded) > 0 && k < ns * nt) x[k++] = line + 0
        printf "%-10s", ""
        for (j = 1; j <= nt; ++j) printf "%6s", target[j]
        printf "\n"
        for (i = 1; i <= ns; ++i) {
            printf "%-10s", source[i]
            for (j = 1; j <= nt; ++j) printf "%6s", (x[(i - 1) * nt + j - 1] > 0.5 ? "X" : ".")
            printf "\n"
        }
    }' "$graph"
echo
echo "The Python package on a longer sentence, the same constraints without the"
echo "PAIR factors: LP-MAP (AD3) picks one alignment, LP-SparseMAP a sparse"
echo "mixture of alignments whose probabilities show where the scores hesitate."
echo
echo "\$ $venv/bin/python examples/python/alignment.py --output $build/alignment.png"
"$venv/bin/python" "$root/examples/python/alignment.py" --output "$build/alignment.png"
