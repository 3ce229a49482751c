#!/bin/sh
# One training step's time and GFLOP/s beside one inference forward's (same model, same batch),
# from memprof train's own measurement (median step; median of 3 forwards), for the MNIST MLP
# and MobileNet v2 1.0 224. Reports; asserts nothing (issue 17).
# Usage: scripts/bench_train.sh [MEMPROF] [MOBILENET_BATCH]
set -eu
mp=${1:-build/memprof}
b=${2:-8}
for spec in "zoo:mnist_mlp 256 20" "zoo:mobilenet_v2 $b 3"; do
  set -- $spec
  echo "== $1, batch $2, $3 steps"
  "$mp" train "$1" --batch "$2" --steps "$3" --samples "$2" --optimizer sgd \
    --learning-rate 0.001 | grep -E '^  (step|forward) '
done
