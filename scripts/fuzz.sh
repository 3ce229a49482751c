#!/usr/bin/env bash
# Fuzz the .tflite reader with libFuzzer for SECONDS (default 60).
#
# Usage: scripts/fuzz.sh [SECONDS]
# Builds tests/fuzz/fuzz_reader with clang in build-fuzz/, seeds a corpus from
# tests/fuzz/seeds plus the shared models under 100 KB (when ../shared is present), and
# runs the fuzzer. Exits non-zero when it finds a crash, leak, timeout or out-of-memory;
# the reproducer is left in build-fuzz/fuzz-artifacts/ (rerun it with
# build-fuzz/tests/fuzz/fuzz_reader <file>). The corpus in build-fuzz/fuzz-corpus is kept
# between runs, so later runs start from what earlier ones found.
set -euo pipefail

secs="${1:-60}"
case "$secs" in
  ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
shared="${MP_SHARED_DIR:-$root/../shared}"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"

command -v clang >/dev/null || { echo "fuzz.sh: clang not found (libFuzzer needs it)" >&2; exit 2; }

CC=clang cmake -S "$root" -B "$build" -DMP_FUZZ=ON -DMP_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target fuzz_reader

mkdir -p "$corpus" "$artifacts"
cp -f "$root"/tests/fuzz/seeds/* "$corpus"/
if [ -d "$shared/models" ]; then
  find "$shared/models" -maxdepth 1 -name '*.tflite' -size -100k -exec cp -f {} "$corpus"/ \;
else
  echo "fuzz.sh: $shared/models not found; fuzzing from the seeds only"
fi

# Leftovers from an earlier run must not be mistaken for new findings.
rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*

echo "fuzz.sh: fuzzing for ${secs}s with corpus $corpus"
status=0
"$build/tests/fuzz/fuzz_reader" "$corpus" \
  -max_total_time="$secs" -rss_limit_mb=2048 -max_len=200000 -timeout=25 \
  -dict="$root/tests/fuzz/tflite.dict" -artifact_prefix="$artifacts/" \
  -print_final_stats=1 || status=$?

found="$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -n 5)"
if [ "$status" -ne 0 ] || [ -n "$found" ]; then
  echo "fuzz.sh: the fuzzer found a problem (exit status $status)" >&2
  [ -n "$found" ] && echo "$found" >&2
  exit 1
fi
echo "fuzz.sh: no crash in ${secs}s"
