#!/usr/bin/env bash
# Fuzz the files people pass around with libFuzzer, SECONDS in all (default 60), split
# evenly between the three harnesses of tests/fuzz, run one after the other:
#   fuzz_reader    .tflite models: the reader, shape inference and one run
#   fuzz_trace     saved traces: the streaming reader, the profile, every report format,
#                  the baseline of a trace and the TUI's index
#   fuzz_baseline  baseline files: parse, write and parse again (a round trip), diff, gate
#
# Usage: [MP_FUZZ_BUILD=DIR] scripts/fuzz.sh [SECONDS] [HARNESS...]
# Builds the harnesses with clang in DIR (default build-fuzz/), seeds each corpus from
# tests/fuzz/seeds* (the reader's also from the shared models under 100 KB, when ../shared
# is present), and runs each fuzzer. Exits non-zero when any finds a crash, leak, timeout or
# out-of-memory, after naming the harness and its reproducer, left in DIR/fuzz-artifacts/NAME/
# (rerun it with DIR/tests/fuzz/NAME <file>). Each corpus (DIR/fuzz-corpus/NAME) is kept
# between runs, so later runs start from what earlier ones found.
set -euo pipefail

secs="${1:-60}"
case "$secs" in
  ''|*[!0-9]*) echo "usage: $0 [SECONDS] [HARNESS...]" >&2; exit 2 ;;
esac
shift || true
all=(fuzz_reader fuzz_trace fuzz_baseline)
harnesses=("$@")
[ "${#harnesses[@]}" -gt 0 ] || harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
  case " ${all[*]} " in
    *" $h "*) ;;
    *) echo "fuzz.sh: unknown harness '$h' (one of: ${all[*]})" >&2; exit 2 ;;
  esac
done
each=$((secs / ${#harnesses[@]}))
[ "$each" -ge 1 ] || each=1

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${MP_FUZZ_BUILD:-$root/build-fuzz}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
shared="${MP_SHARED_DIR:-$root/../shared}"
seeds="$root/tests/fuzz"

command -v clang >/dev/null || { echo "fuzz.sh: clang not found (libFuzzer needs it)" >&2; exit 2; }

CC=clang cmake -S "$root" -B "$build" -DMP_FUZZ=ON -DMP_TESTS=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target "${harnesses[@]}"

# fuzz NAME SEEDS_DIR DICT MAX_LEN: one harness for $each seconds; 0 when it found nothing.
fuzz() {
  local name=$1 seed_dir=$2 dict=$3 max_len=$4
  local corpus="$build/fuzz-corpus/$name" artifacts="$build/fuzz-artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  cp -f "$seed_dir"/* "$corpus"/
  if [ "$name" = fuzz_reader ]; then
    if [ -d "$shared/models" ]; then
      find "$shared/models" -maxdepth 1 -name '*.tflite' -size -100k -exec cp -f {} "$corpus"/ \;
    else
      echo "fuzz.sh: $shared/models not found; fuzzing the reader from the seeds only"
    fi
  fi
  # Leftovers from an earlier run must not be mistaken for new findings.
  rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*

  echo "fuzz.sh: $name for ${each}s with corpus $corpus"
  local status=0
  "$build/tests/fuzz/$name" "$corpus" \
    -max_total_time="$each" -rss_limit_mb=2048 -max_len="$max_len" -timeout=25 \
    -dict="$dict" -artifact_prefix="$artifacts/" -print_final_stats=1 || status=$?

  local found
  found="$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -n 5)"
  if [ "$status" -ne 0 ] || [ -n "$found" ]; then
    echo "fuzz.sh: $name found a problem (exit status $status)" >&2
    [ -n "$found" ] && echo "$found" >&2
    return 1
  fi
  echo "fuzz.sh: $name: no crash in ${each}s"
}

failed=()
for h in "${harnesses[@]}"; do
  case "$h" in
    fuzz_reader) fuzz "$h" "$seeds/seeds" "$seeds/tflite.dict" 200000 || failed+=("$h") ;;
    fuzz_trace) fuzz "$h" "$seeds/seeds_trace" "$seeds/json.dict" 100000 || failed+=("$h") ;;
    fuzz_baseline) fuzz "$h" "$seeds/seeds_baseline" "$seeds/json.dict" 20000 || failed+=("$h") ;;
  esac
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: problems found by: ${failed[*]} (reproducers in $build/fuzz-artifacts/)" >&2
  exit 1
fi
echo "fuzz.sh: no crash in ${secs}s (${harnesses[*]}, ${each}s each)"
