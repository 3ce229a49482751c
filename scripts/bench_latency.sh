#!/usr/bin/env bash
# Latency benchmark: median run time of a model at 1 and 2 threads, several repetitions,
# printed side by side. Usage: scripts/bench_latency.sh [MODEL] [RUNS] [REPEATS]
# (default zoo:mobilenet_v2, 30 timed runs after 5 warm-up runs, 3 repetitions).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-zoo:mobilenet_v2}
runs=${2:-30}
reps=${3:-3}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target memprof >/dev/null
echo "model $model: median of $runs runs (after 5 warm-up), $reps repetitions per thread count"
for t in 1 2; do
  meds=()
  for r in $(seq "$reps"); do
    meds+=("$(./build/memprof run "$model" --threads "$t" --runs "$runs" --warmup 5 |
              sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')")
  done
  printf 'threads %d: medians %s ms -> median of medians %s ms\n' "$t" "${meds[*]}" \
    "$(printf '%s\n' "${meds[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p")"
done
