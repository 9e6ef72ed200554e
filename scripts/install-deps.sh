#!/bin/sh
# Installs the Debian packages a target needs, only those missing.
# usage: scripts/install-deps.sh build|python|test|fuzz|check-exact
# (python: what building the Python package into a venv and running its
# examples need; test includes it)
set -eu
python_pkgs="python3-venv python3-dev python3-setuptools python3-wheel cython3 python3-numpy python3-torch python3-matplotlib"
case "${1:-build}" in
  build) pkgs="gcc make cmake ninja-build" ;;
  python) pkgs="gcc $python_pkgs" ;;
  test) pkgs="gcc make cmake ninja-build pkgconf libcmocka-dev libglpk-dev glpk-utils toulbar2 clang libclang-rt-14-dev valgrind locales $python_pkgs python3-scipy python3-cvxopt python3-pytest python3-pytest-xdist" ;;
  fuzz) pkgs="clang libclang-rt-14-dev" ;;
  check-exact) pkgs="toulbar2" ;;
  *) echo "usage: $0 build|python|test|fuzz|check-exact" >&2; exit 2 ;;
esac
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages:$missing (run as root, or install them)" >&2
    exit 1
  fi
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi
# test: a locale whose decimal point is a comma, for the readers' test that
# numbers are read alike in every locale (generated once, as root; without
# it that test skips)
if [ "${1:-build}" = test ] && [ "$(id -u)" -eq 0 ] &&
  ! locale -a 2>/dev/null | grep -qix 'de_DE.utf-\{0,1\}8'; then
  localedef -i de_DE -f UTF-8 de_DE.UTF-8 2>/dev/null || true
fi
