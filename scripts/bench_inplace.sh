#!/usr/bin/env bash
# What outputs sharing an input's slot save (RESHAPE, SQUEEZE, EXPAND_DIMS, and ADD, SUB,
# MUL, DIV taking an input nobody reads after them: memprof's --in-place on, the default,
# against off), per model: the default planner's arena in bytes and the slots it plans
# (memprof plan --exact), their ratio on / off, and the static mode's latency, sessions of
# the two interleaved, each session's median over RUNS runs, then the median of those medians
# and the ratio on / off.
# Usage: scripts/bench_inplace.sh [RUNS] [SESSIONS] [MODEL...]
# (default 20 runs, 5 sessions each; models default: the conformer and the LSTM of ../shared,
# skipped when absent, and zoo:mobilenet_v2; BUILD_DIR, default build/, chooses the build folder).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
sessions=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(../shared/models/litert_torchaudio_conformer.tflite
                                   ../shared/models/tfmicro_mnist_lstm_float.tflite zoo:mobilenet_v2)
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target memprof >/dev/null
mp="$build/memprof"
. scripts/bench_lib.sh
for m in "${models[@]}"; do
  case "$m" in zoo:*) ;; *) [ -f "$m" ] || { echo "skip $m (absent)"; continue; } ;; esac
  echo "== $(basename "$m")"
  declare -A arena slots
  for ip in on off; do
    out=$("$mp" plan "$m" --planner best --in-place "$ip" --exact)
    arena[$ip]=$(echo "$out" | awk '/^  best / {getline; print $1; exit}')
    slots[$ip]=$(echo "$out" | sed -n 's/^  \([0-9]*\) tensors and \([0-9]*\) kernel.*/\1 + \2/p' | head -1)
  done
  echo "  arena (best planner): on ${arena[on]} B, off ${arena[off]} B, on / off" \
       "$(awk -v a="${arena[on]}" -v b="${arena[off]}" 'BEGIN {printf "%.3f", a / b}')" \
       "; slots (tensors + scratch): on ${slots[on]}, off ${slots[off]}"
  mp_onoff "$sessions" --in-place "$mp" run "$m" --memory static -r "$runs" -w 2
  mon=$MP_ON_MEDIAN moff=$MP_OFF_MEDIAN
  echo "  latency (static, median of $sessions sessions x $runs runs): on ${MP_ON[*]} -> $mon ms;" \
       "off ${MP_OFF[*]} -> $moff ms; on / off $(awk -v a="$mon" -v b="$moff" 'BEGIN {printf "%.3f", a / b}')"
done
