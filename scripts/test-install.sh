#!/bin/sh
# Installs a build into a fresh prefix and builds programs against the
# installed library the two ways users do: examples/batch.c and the C
# program of README.md with pkg-config, and a CMake project with
# find_package(concord). Runs them.
# usage: scripts/test-install.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
work="$build/install-test"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

# pkg-config, against the shared library
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name concord.pc)")"
cc -std=c11 -Wall -Wextra "$root/examples/batch.c" $(pkg-config --cflags --libs concord) \
  -o "$work/batch"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir concord)" "$work/batch" >/dev/null
echo "pkg-config: examples/batch.c built and run against $prefix"

# the README's C program (its only C block), which prints the LP-MAP and
# LP-SparseMAP solutions, then its batch's (test_doc_blocks checks them
# all against its own)
awk '/^```c$/ {inside = 1; next} /^```$/ {inside = 0} inside' "$root/README.md" >"$work/readme.c"
cc -std=c11 -Wall -Wextra -Werror "$work/readme.c" $(pkg-config --cflags --libs concord) \
  -o "$work/readme"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir concord)" "$work/readme" >"$work/readme.out"
[ "$(head -n 2 "$work/readme.out")" = "LP-MAP integral: 0 1 0
LP-SparseMAP fractional: 0.25 0.75 0" ]
echo "pkg-config: the README's C program built and run against $prefix"

# find_package, against the static library
mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(concord 0.2 REQUIRED)
add_executable(batch ${BATCH_SOURCE})
target_link_libraries(batch PRIVATE concord::concord_static)
CMAKE
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DBATCH_SOURCE="$root/examples/batch.c" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/batch" >/dev/null
echo "find_package(concord): examples/batch.c built and run against $prefix"
