#!/bin/sh
# Runs the C tests (ctest: plain, ASan+UBSan and ThreadSanitizer builds,
# examples, the installed library) and the Python tests (pytest, one worker
# per core, against the package installed in VENV_DIR; they compare it with
# BUILD_DIR's command-line tool),
# naming the shared inputs missing from a clone without ../shared, then
# prints one overall tally as the last line: "N passed, M failed".
# Exits non-zero when anything failed.
# usage: scripts/run-tests.sh BUILD_DIR VENV_DIR
set -u
build=$(cd "$1" && pwd)
venv=$(cd "$2" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
log="$build/test-log"
mkdir -p "$log"

(cd "$build" && ctest --output-on-failure -j "$jobs") >"$log/ctest.txt" 2>&1
c_status=$?
# failures in full (ctest prints their output), then ctest's summary
grep -v -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed|^ +Start +[0-9]+: ' "$log/ctest.txt"
c_total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log/ctest.txt" | tail -1)
c_failed=$(sed -n 's/.* \([0-9]*\) tests failed out of .*/\1/p' "$log/ctest.txt" | tail -1)
c_total=${c_total:-0}
c_failed=${c_failed:-$c_total}
[ "$c_status" -eq 0 ] || [ "$c_failed" -gt 0 ] || c_failed=1
# the shared inputs the C tests did not find (a clone without ../shared)
missing=$(sed -n 's/^skipped: \(.*\) not found$/\1/p' "$build/Testing/Temporary/LastTest.log" \
  2>/dev/null | sed 's|^.*/\.\./shared/|../shared/|' | sort -u)
[ -z "$missing" ] ||
  printf 'C tests skipped their checks on %d missing files:\n%s\n' "$(echo "$missing" | wc -l)" \
    "$(echo "$missing" | sed 's/^/  /')"

(cd "$root" && CONCORD_CLI="$build/concord" PYTHONDONTWRITEBYTECODE=1 \
  "$venv/bin/python" -m pytest tests/python -q -rfEs -p no:cacheprovider -n "$jobs") \
  >"$log/pytest.txt" 2>&1
py_status=$?
tail -n 25 "$log/pytest.txt"
py_passed=$(grep -oE '[0-9]+ passed' "$log/pytest.txt" | tail -1 | cut -d' ' -f1)
py_failed=$(grep -oE '[0-9]+ (failed|error)' "$log/pytest.txt" | awk '{n += $1} END {print n + 0}')
py_passed=${py_passed:-0}
[ "$py_status" -eq 0 ] || [ "$py_failed" -gt 0 ] || py_failed=1

passed=$((c_total - c_failed + py_passed))
failed=$((c_failed + py_failed))
echo "C: $((c_total - c_failed)) of $c_total test programs passed; Python: $py_passed passed, $py_failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
