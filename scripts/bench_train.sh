#!/usr/bin/env bash
# A training step's time and GFLOP/s beside one inference's, same model, batch and threads
# (issue 17): for zoo:mnist_mlp and zoo:mobilenet_v2, in rounds that alternate
#   memprof train MODEL --batch B --steps S --threads T   (the median step, and the training
#                                                          engine's forward, median of 3)
#   memprof bench MODEL' --shape input=B,... --threads T  (the inference engine, static mode:
#                                                          the median of its later runs)
# and prints the medians over the rounds, each at the training engine's FLOP count of the
# model and batch, and the ratio step GFLOP/s / inference GFLOP/s (goal: at least 0.5 for
# MobileNet v2). MODEL' is the zoo model written out with the batch in its RESHAPE's target
# shape (the zoo models reshape to [1, classes], which a batch of B cannot take). Reports;
# asserts nothing.
# Usage: scripts/bench_train.sh [MEMPROF] [BATCH] [THREADS] [ROUNDS]
# (defaults: build/memprof, MobileNet v2 batch 4, 1 thread, 5 rounds; MNIST at batch 256).
# Needs python3 (the bench's JSON, the model's RESHAPE).
set -euo pipefail
mp=${1:-build/memprof}
b=${2:-4}
threads=${3:-1}
rounds=${4:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# batch_model ZOO_NAME WIDTH BATCH OUT: the zoo model with its [1, WIDTH] reshape target (the
# shape constant, the option's new_shape and the [1, WIDTH] tensor shapes) made [BATCH, WIDTH]
batch_model() {
  "$mp" zoo "$1" -o "$tmp/zoo.tflite" >/dev/null
  python3 - "$tmp/zoo.tflite" "$2" "$3" "$4" <<'PY'
import struct, sys
src, width, batch, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = bytearray(open(src, "rb").read())
pat, i, n = struct.pack("<ii", 1, width), 0, 0
while (i := d.find(pat, i + 1)) > 0:
    # a 2-vector of int32 (a shape) or an 8-byte buffer (the shape constant)
    if struct.unpack("<I", d[i - 4:i])[0] in (2, 8):
        d[i:i + 4] = struct.pack("<i", batch)
        n += 1
if n == 0:
    sys.exit(f"{src}: no [1, {width}] shape found")
open(out, "wb").write(d)
PY
}

# median of the arguments
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

# bench_one NAME ZOO BATCH INPUT_DIMS WIDTH STEPS RUNS
bench_one() {
  local name=$1 zoo=$2 batch=$3 dims=$4 width=$5 steps=$6 runs=$7
  local st=() fw=() inf=() gstep gfwd
  batch_model "$zoo" "$width" "$batch" "$tmp/model.tflite"
  for _ in $(seq "$rounds"); do
    "$mp" train "zoo:$zoo" --batch "$batch" --steps "$steps" --samples "$batch" \
      --optimizer sgd --learning-rate 0.001 --threads "$threads" >"$tmp/train.txt"
    st+=("$(awk '$1 == "step" {print $2}' "$tmp/train.txt")")
    fw+=("$(awk '$1 == "forward" {print $2}' "$tmp/train.txt")")
    gstep=$(awk '$1 == "step" {print $5}' "$tmp/train.txt")
    gfwd=$(awk '$1 == "forward" {print $7}' "$tmp/train.txt")
    "$mp" bench "$tmp/model.tflite" --shape "0=$batch,$dims" --threads "$threads" -r "$runs" \
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
bench_one zoo:mnist_mlp mnist_mlp 256 28,28,1 784 20 20
bench_one zoo:mobilenet_v2 mobilenet_v2 "$b" 224,224,3 1001 5 10
