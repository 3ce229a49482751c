#!/usr/bin/env bash
# Cost of recording the trace: median run latency of a model with recording on and off,
# the two interleaved round by round so that machine noise hits both alike, printed side by
# side with their ratio, and the recorder's bytes per event.
# Usage: scripts/bench_recording.sh [MODEL] [RUNS] [ROUNDS] [THREADS]
# (default zoo:mobilenet_v2, 30 timed runs after 5 warm-up runs, 7 rounds, 1 thread).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-zoo:mobilenet_v2}
runs=${2:-30}
rounds=${3:-7}
threads=${4:-1}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target memprof >/dev/null
. scripts/bench_lib.sh
mp_onoff "$rounds" --record ./build/memprof run "$model" --threads "$threads" --runs "$runs" --warmup 5
mon=$MP_ON_MEDIAN on=("${MP_ON[@]}")
moff=$MP_OFF_MEDIAN off=("${MP_OFF[@]}")
echo "model $model, $threads thread(s): median latency of $runs runs, $rounds interleaved rounds"
printf '  recording on : %s ms   (rounds: %s)\n' "$mon" "${on[*]}"
printf '  recording off: %s ms   (rounds: %s)\n' "$moff" "${off[*]}"
awk -v a="$mon" -v b="$moff" 'BEGIN { printf "  on / off     : %.4f (%+.2f %%)\n", a / b, (a / b - 1) * 100 }'
./build/memprof run "$model" --threads "$threads" --runs "$runs" --warmup 5 | grep '^recorder'
