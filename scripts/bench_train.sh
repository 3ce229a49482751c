#!/usr/bin/env bash
# A training step's time and GFLOP/s beside one inference's, same model, batch and threads
# (issue 17): for zoo:mnist_mlp and zoo:mobilenet_v2, in rounds that alternate
#   memprof train MODEL --batch B --steps S --threads T   (the median step, and the training
#                                                          engine's forward, median of 3)
#   memprof bench MODEL --shape input=B,... --threads T   (the inference engine, static mode:
#                                                          the median of its later runs)
# and prints the medians over the rounds, each at the training engine's FLOP count of the
# model and batch, and the ratio step GFLOP/s / inference GFLOP/s (goal: at least 0.5 for
# MobileNet v2). Reports; asserts nothing.
# Usage: scripts/bench_train.sh [MEMPROF] [BATCH] [THREADS] [ROUNDS]
# (defaults: build/memprof, MobileNet v2 batch 4, 1 thread, 5 rounds; MNIST at batch 256).
# Needs python3 (the bench's JSON).
set -euo pipefail
mp=${1:-build/memprof}
b=${2:-4}
threads=${3:-1}
rounds=${4:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of the arguments
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

# bench_one NAME ZOO BATCH INPUT_DIMS STEPS RUNS
bench_one() {
  local name=$1 zoo=$2 batch=$3 dims=$4 steps=$5 runs=$6
  local st=() fw=() inf=() gstep gfwd
  for _ in $(seq "$rounds"); do
    "$mp" train "zoo:$zoo" --batch "$batch" --steps "$steps" --samples "$batch" \
      --optimizer sgd --learning-rate 0.001 --threads "$threads" >"$tmp/train.txt"
    st+=("$(awk '$1 == "step" {print $2}' "$tmp/train.txt")")
    fw+=("$(awk '$1 == "forward" {print $2}' "$tmp/train.txt")")
    gstep=$(awk '$1 == "step" {print $5}' "$tmp/train.txt")
    gfwd=$(awk '$1 == "forward" {print $7}' "$tmp/train.txt")
    "$mp" bench "zoo:$zoo" --shape "0=$batch,$dims" --threads "$threads" -r "$runs" \
      -w 2 --format json -o "$tmp/bench.json"
    inf+=("$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
m = next(m for m in d["modes"] if m["name"] == "static")
print("%.2f" % (m["later_runs"]["median_ns"] / 1e6))' "$tmp/bench.json")")
  done
  local s f i
  s=$(median "${st[@]}") f=$(median "${fw[@]}") i=$(median "${inf[@]}")
  echo "== $name, batch $batch, $threads thread(s): medians of $rounds rounds ($steps training" \
    "steps; $runs inference runs each)"
  awk -v s="$s" -v f="$f" -v i="$i" -v gs="$gstep" -v gf="$gfwd" 'BEGIN {
    printf "  training step     %9.2f ms  %7.3f GFLOP  %6.1f GFLOP/s\n", s, gs, gs / s * 1e3
    printf "  training forward  %9.2f ms  %7.3f GFLOP  %6.1f GFLOP/s\n", f, gf, gf / f * 1e3
    printf "  inference run     %9.2f ms  %7.3f GFLOP  %6.1f GFLOP/s\n", i, gf, gf / i * 1e3
    printf "  step / inference GFLOP/s: %.2f\n", (gs / s) / (gf / i) }'
  echo "  (per round: step ms ${st[*]}; inference ms ${inf[*]})"
}

echo "memprof train against memprof bench (inference, static mode), $(nproc) processors," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
bench_one zoo:mnist_mlp mnist_mlp 256 28,28,1 20 20
bench_one zoo:mobilenet_v2 mobilenet_v2 "$b" 224,224,3 5 10
