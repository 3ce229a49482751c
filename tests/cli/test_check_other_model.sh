#!/usr/bin/env bash
# memprof check (issue 19, item 8): a baseline of another model is refused (exit 2, naming
# both models) unless --allow-other-model; a baseline of the same model is still accepted.
# Usage: test_check_other_model.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
mp=$(realpath "$1")
expect 0 "$mp" check zoo:mnist_mlp --save-baseline "$tmp/mlp.json"
expect 0 "$mp" check zoo:mnist_mlp --baseline "$tmp/mlp.json"
expect 2 "$mp" check zoo:mobilenet_v1 --baseline "$tmp/mlp.json"
has err "baseline of model zoo:mnist_mlp, not of zoo:mobilenet_v1"
has err "allow-other-model"
# accepted when asked for: then the figures are compared (and MobileNet's are larger)
expect 1 "$mp" check zoo:mobilenet_v1 --baseline "$tmp/mlp.json" --allow-other-model
[ "$fails" -eq 0 ] && echo "ok" || exit 1
