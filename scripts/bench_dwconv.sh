#!/usr/bin/env bash
# DEPTHWISE_CONV_2D on XNNPACK against the plain-C kernel (engine/kernels/dwconv.c), the same
# shapes in one run (tools/bench_dwconv: per shape and dtype the taps, median ms, GFLOP/s of
# each and their ratio; the quantized kinds on XNNPACK only), then the conformer model of
# ../shared with its depthwise convolutions on XNNPACK and as the engine chooses (median of
# 5 sessions' medians), at 1 and 2 threads.
# Usage: scripts/bench_dwconv.sh [RUNS] [MODEL]
# (default 20 runs per shape; MODEL default ../shared/models/litert_torchaudio_conformer.tflite,
# skipped when absent; BUILD_DIR, default build/, chooses the build folder).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
model=${2:-../shared/models/litert_torchaudio_conformer.tflite}
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_dwconv >/dev/null
margs=()
[ -f "$model" ] && margs=(--model "$model")
for t in 1 2; do
  echo "\$ bench_dwconv --runs $runs --threads $t ${margs[*]}"
  "$build/bench_dwconv" --runs "$runs" --threads "$t" --dtype "$([ "$t" = 1 ] && echo all || echo f32)" \
    "${margs[@]}"
done
