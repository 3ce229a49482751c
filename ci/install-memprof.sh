#!/usr/bin/env bash
# Builds memprof from this checkout and installs it (the program, its man pages, bash
# completion and CMake package: docs/install.md), for a CI job that gates on memory
# (docs/check.md). Usage:
#   ci/install-memprof.sh [PREFIX]      PREFIX defaults to /usr/local
# Installs the Debian packages the build needs when they are missing (scripts/deps.sh: as
# root, or through sudo; MEMPROF_NO_DEPS=1 skips that), builds in MEMPROF_BUILD_DIR (default
# build-install/ in the checkout; Release, warnings not fatal, no tests), installs with
# `cmake --install` (through sudo when PREFIX is not writable), and checks that the
# installed program runs. With PREFIX/bin on the PATH, `memprof` is then found by the shell,
# and `find_package(memprof)` by CMake (CMAKE_PREFIX_PATH=PREFIX unless PREFIX is a
# system prefix such as /usr/local).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case $# in
  0) prefix=/usr/local ;;
  1) prefix=$1 ;;
  *) echo "usage: $0 [PREFIX]" >&2; exit 2 ;;
esac
case $prefix in
  -*) echo "usage: $0 [PREFIX]" >&2; exit 2 ;;
  /*) ;;
  *) prefix=$(pwd)/$prefix ;;
esac
build=${MEMPROF_BUILD_DIR:-$root/build-install}

[ "${MEMPROF_NO_DEPS:-0}" = 1 ] || "$root/scripts/deps.sh"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMP_WERROR=OFF -DMP_TESTS=OFF \
      -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

# sudo only when needed: the prefix (or the folder that will hold it) is not writable
probe=$prefix
while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
sudo_cmd=()
if [ ! -w "$probe" ] && [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" cmake --install "$build" >/dev/null

"$prefix/bin/memprof" --version
echo "memprof installed in $prefix (man pages, bash completion, CMake package: docs/install.md)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on the PATH" ;;
esac
