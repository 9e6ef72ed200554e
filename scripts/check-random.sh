#!/bin/sh
# Runs tests/test_lp_random (LP-MAP and LP-SparseMAP against GLPK and brute
# force on 320 random graphs) with the graphs drawn from other seeds: the
# suite draws one fixed sequence, this draws as many as asked, two at a time.
# usage: scripts/check-random.sh BUILD_DIR FIRST_SEED COUNT
#   Prints each seed that fails, with the tests it fails, and a tally; the
#   output of a failing seed (its graphs printed as ready ref_graph
#   reproducers) stays in BUILD_DIR/check-random/SEED.log. Exits 1 when a
#   seed fails.
set -eu
build=$1
first=$2
count=$3
program="$build/tests/test_lp_random"
out="$build/check-random"
rm -rf "$out"
mkdir -p "$out"
export program out
seq "$first" $((first + count - 1)) | xargs -P 2 -I{} sh -c \
  'CONCORD_TEST_SEED={} "$program" >"$out/{}.log" 2>&1 && rm "$out/{}.log" || true'
failed=0
for log in $(ls "$out" | sort -n); do
  seed=${log%.log}
  tests=$(sed -n 's/^\[  FAILED  \] \([a-z_0-9]*\)$/\1/p' "$out/$log" | sort -u | tr '\n' ' ')
  echo "seed $seed: ${tests:-did not finish}"
  failed=$((failed + 1))
done
echo "$((count - failed)) seeds passed, $failed failed"
[ "$failed" -eq 0 ]
