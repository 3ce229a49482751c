#!/usr/bin/env bash
# DEPTHWISE_CONV_2D with depth multipliers 1, 2, 4 and 8 (and 3, 16, fewer than sixteen input
# channels): XNNPACK's path (a GEMM of M output channels per group) against the plain-C
# kernel's (engine/kernels/dwconv.c) side by side in one run, float32 and int8 per channel
# (tools/bench_dwconv --set mult: per shape the taps, median ms, GFLOP/s of each, their ratio;
# each multiplier beside the multiplier-1 convolution of as many output channels, the same
# multiply-adds), then the same one-operator models under `memprof bench --peer xnnpack`:
# the median of the later runs of our static session (the engine's choice) and of XNNPACK's
# own subgraph runtime.
# Usage: scripts/bench_dwconv_mult.sh [RUNS] [PEER_RUNS]
# (default 15 runs per shape, 20 per memprof bench mode; BUILD_DIR, default build/, chooses
# the build folder; THREADS, default 1.)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
peer_runs=${2:-20}
build=${BUILD_DIR:-build}
threads=${THREADS:-1}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_dwconv memprof >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for dt in f32 qc8; do
  echo "\$ bench_dwconv --set mult --runs $runs --threads $threads --dtype $dt"
  "$build/bench_dwconv" --set mult --runs "$runs" --threads "$threads" --dtype "$dt" \
    --save "$dir" | tee "$dir/log" | grep -v '^# wrote '
  sed -n 's/^# wrote //p' "$dir/log" >>"$dir/models"
done
echo
echo "\$ memprof bench MODEL -r $peer_runs --threads $threads --peer xnnpack (median ms, later runs)"
printf '%-30s %10s %10s %8s\n' model static xnnpack ratio
while read -r m; do
  "$build/memprof" bench "$m" -r "$peer_runs" --threads "$threads" --peer xnnpack |
    awk -v name="$(basename "$m" .tflite)" '
      /^later runs/ { on = 1; next }
      on && $1 == "static" { s = $4 }
      on && $1 == "xnnpack" { x = $4; on = 0 }
      END { printf "%-30s %10.3f %10.3f %7.2fx\n", substr(name, 4), s, x, (s > 0 ? x / s : 0) }'
done <"$dir/models"
