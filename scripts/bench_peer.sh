#!/usr/bin/env bash
# Our static mode against XNNPACK's own runtime (memprof bench --peer xnnpack) at 1 and 2
# threads: the ratio static / xnnpack of the later runs' medians in each of several benches
# and the median of those ratios (1.00 or less: static is at least as fast), with our
# huge-page pool (the default) and without it (--no-huge-pages), side by side.
# Usage: scripts/bench_peer.sh [MODEL] [RUNS] [REPEATS]
# (default zoo:mobilenet_v2, 40 timed runs after 5 warm-up runs, 5 repetitions).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-zoo:mobilenet_v2}
runs=${2:-40}
reps=${3:-5}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target memprof >/dev/null
# ratio T [FLAGS...] : static / xnnpack of one bench
ratio() {
  local t=$1
  shift
  ./build/memprof bench "$model" --peer xnnpack --threads "$t" -r "$runs" -w 5 "$@" |
    awk '/^later runs/ {on = 1; next}
         on && $1 == "static" {s = $4}
         on && $1 == "xnnpack" {x = $4; on = 0}
         END {printf "%.3f", s / x}'
}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
echo "model $model: static / xnnpack, later-run medians of $runs runs, $reps benches each"
for t in 1 2; do
  huge=() plain=()
  for r in $(seq "$reps"); do # alternated, so that machine noise hits both alike
    huge+=("$(ratio "$t")")
    plain+=("$(ratio "$t" --no-huge-pages)")
  done
  printf 'threads %d, huge-page pool: %s -> median %s\n' "$t" "${huge[*]}" "$(median "${huge[@]}")"
  printf 'threads %d, --no-huge-pages: %s -> median %s\n' "$t" "${plain[*]}" \
    "$(median "${plain[@]}")"
done
