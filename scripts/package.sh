#!/usr/bin/env bash
# Builds memprof's Debian package with `cpack -G DEB` and tries it without installing it on
# the system: unpacks it with dpkg-deb -x into a folder and runs the memprof found there on
# zoo:mobilenet_v2. Usage:
#   scripts/package.sh [BUILD_DIR [OUT_DIR]]
# BUILD_DIR (default build-package/) is configured (Release, warnings as errors, no tests)
# when it holds no build yet, else used as it is configured; it is built, then packaged. The
# .deb goes to OUT_DIR (default BUILD_DIR), unpacked in OUT_DIR/root. Prints the package's
# fields (dpkg-deb -I: Depends from dpkg-shlibdeps, so dpkg-dev is needed) and its files.
# Install it for real with: sudo apt install ./memprof_VERSION_ARCH.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-package}
out=${2:-$build}
[ $# -le 2 ] || { echo "usage: $0 [BUILD_DIR [OUT_DIR]]" >&2; exit 2; }
command -v dpkg-shlibdeps >/dev/null ||
  { echo "scripts/package.sh: needs dpkg-shlibdeps, Debian package dpkg-dev" >&2; exit 1; }

if [ ! -f "$build/CMakeCache.txt" ]; then
  "$root/scripts/deps.sh"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMP_WERROR=ON -DMP_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" >/dev/null
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/memprof_*.deb
(cd "$build" && cpack -G DEB -B "$out" >"$out/cpack.log" 2>&1) ||
  { cat "$out/cpack.log" >&2; exit 1; }
deb=$(ls "$out"/memprof_*.deb)
echo "== $deb"
dpkg-deb -f "$deb"
rm -rf "$out/root"
dpkg-deb -x "$deb" "$out/root"
echo "== files"
(cd "$out/root" && find . -type f | sort)
echo "== $out/root/usr/bin/memprof run zoo:mobilenet_v2"
"$out/root/usr/bin/memprof" run zoo:mobilenet_v2
