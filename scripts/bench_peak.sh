#!/usr/bin/env bash
# The machine's FP32 peak (large XNNPACK fully-connected operators) and a model's end-to-end
# throughput in static mode as a share of it, at 1 and 2 threads, printed side by side.
# Usage: scripts/bench_peak.sh [MODEL] [RUNS]   (default zoo:mobilenet_v2, median of 20 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-zoo:mobilenet_v2}
runs=${2:-20}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target fp32_peak >/dev/null
for t in 1 2; do
  ./build/fp32_peak --threads "$t" --runs "$runs" "$model"
done
