#!/bin/sh
# Builds the libFuzzer targets with clang and fuzzes each for a bounded time.
# usage: scripts/fuzz.sh BUILD_DIR SECONDS [--if-changed]
#   (the library is compiled once for all three targets, a file per core,
#   and they are fuzzed side by side, each for SECONDS/3: the file readers'
#   two and the API's, which reaches what no file can say (bad arguments,
#   solvers over a changed graph, losses, backward, batches), so it runs in
#   make test too, the three sharing the time two had). With
#   --if-changed (make test), nothing is
#   done when the library's sources and the fuzz targets are those of the
#   last run that passed.
# Seeds: AD3's example graphs in ../shared/data/ad3 (when it is there), the
# repository's graphs and models in tests/data/fg and tests/data/uai, and the
# regression inputs in tests/data/fuzz/; for the API target, the programs in
# tests/data/fuzz_api/ (see fuzz/fuzz_api.c). A crash fails the run and leaves the input in
# BUILD_DIR/fuzz-artifacts/ (add it to tests/data/fuzz/ once fixed).
set -eu
build=$1
seconds=$(( $2 / 3 ))
root=$(cd "$(dirname "$0")/.." && pwd)
out="$build/fuzz"
mkdir -p "$out" "$build/fuzz-artifacts"
sources=$(ls "$root"/src/*.c "$root"/src/*/*.c)
stamp="$out/passed.sha256"
digest=$(cat $sources "$root"/src/*.h "$root"/src/*/*.h "$root"/include/*.h "$root"/fuzz/*.[ch] |
  sha256sum | cut -d' ' -f1)
if [ "${3:-}" = "--if-changed" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
  echo "fuzzing: the readers and solvers are unchanged since the last run that passed"
  exit 0
fi
rm -f "$stamp"
cflags="-std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -fno-sanitize-recover=all"
cflags="$cflags -I$root/include -I$root/src"
# The library's objects, shared by the targets (compiled for each target,
# they took two thirds of this script's time).
objects="$out/objects"
rm -rf "$objects"
mkdir -p "$objects"
export cflags objects
printf '%s\n' $sources | xargs -P 2 -n 1 sh -c \
  'clang $cflags -fsanitize=fuzzer-no-link,address,undefined -c "$1" \
     -o "$objects/$(basename "$1" .c).o"' compile
# One target: built, seeded, fuzzed; a failure prints its log and returns 1.
fuzz_target() {
  target=$1
  bin="$out/fuzz_$target"
  clang $cflags -fsanitize=fuzzer,address,undefined "$root/fuzz/fuzz_$target.c" \
    "$objects"/*.o -lm -o "$bin"
  corpus="$out/corpus_$target"
  mkdir -p "$corpus"
  case $target in
    fg) seeds="$root/../shared/data/ad3/*.fg $root/tests/data/fg/*.fg $root/tests/data/fuzz/*" ;;
    uai) seeds="$root/../shared/data/ad3/*.uai $root/tests/data/uai/*.uai $root/tests/data/fuzz_uai/*" ;;
    api) seeds="$root/tests/data/fuzz_api/*" ;;
  esac
  for f in $seeds; do
    [ -f "$f" ] || continue
    [ "$(wc -c < "$f")" -le 100000 ] && cp "$f" "$corpus/" 2>/dev/null || true
  done
  echo "fuzzing the $target target for $seconds s"
  "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=0 \
    -artifact_prefix="$build/fuzz-artifacts/" >"$out/fuzz_$target.log" 2>&1 || {
    tail -40 "$out/fuzz_$target.log"
    echo "fuzzing found a failure; input saved under $build/fuzz-artifacts/" >&2
    return 1
  }
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$out/fuzz_$target.log" | tail -1
}

# All targets at once (three on two cores: each runs for its wall time, so
# the total stays SECONDS).
fuzz_target fg & fg_job=$!
fuzz_target uai & uai_job=$!
fuzz_target api & api_job=$!
status=0
wait $fg_job || status=1
wait $uai_job || status=1
wait $api_job || status=1
[ $status -eq 0 ] || exit 1
echo "$digest" >"$stamp"
