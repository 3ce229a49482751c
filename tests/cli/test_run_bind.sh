#!/usr/bin/env bash
# memprof run --io bind (issue 18): outputs are written into the caller's buffers when their
# size is known before the run (no copy out), and an output that cannot be bound falls back
# to one copy out with one line naming it and why: shapes changed after prepare (call orders
# C and D), or a shape known only while running (a data-dependent output, on the shared
# dynamic_shapes model). The copies are read from the report's Copies lines, and the outputs
# of every bound or fallen-back run equal those of --io copy byte for byte.
# Usage: test_run_bind.sh MEMPROF SHARED_DIR
set -u
mp=$1
shared=${2:-}
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1
dyn=zoo:mobilenet_v2_dynamic
# copies COUNT_IN COUNT_OUT : the last run's report says so
copies() {
  has out "^Copies in  *$1 cop"
  has out "^Copies out  *$2 cop"
}

# shapes known before prepare: every output bound, nothing copied, no fallback line
expect 0 "$mp" run zoo:mnist_mlp --io bind --runs 2 --output-dir bind-a
hasnt out "not bound"; copies 0 0
expect 0 "$mp" run zoo:mnist_mlp --runs 2 --output-dir copy-a
hasnt out "not bound"; copies 2 1
cmp -s bind-a/output_0.bin copy-a/output_0.bin || fail "A: the bound output differs from the copied one"
expect 0 "$mp" run $dyn --shape input=1,48,48,3 --io bind
hasnt out "not bound"; copies 0 0

# shapes changed after prepare: the output stays the engine's and is copied out, once
for at in run each-run; do
  expect 0 "$mp" run $dyn --shape input=1,48,48,3 --shape-at $at --io bind --runs 2 --output-dir "bind-$at"
  has out "^  output 0 not bound, copied out: shapes changed after prepare"
  [ "$(grep -c 'not bound' "$tmp/out")" = 1 ] || fail "$at: not one fallback line"
  copies 0 1
  expect 0 "$mp" run $dyn --shape input=1,48,48,3 --shape-at $at --runs 2 --output-dir "copy-$at"
  hasnt out "not bound"
  cmp -s "bind-$at/output_0.bin" "copy-$at/output_0.bin" || fail "$at: the output differs from --io copy's"
done
# with the report as a document on stdout, the line goes to stderr with the other lines
expect 0 "$mp" run $dyn --shape input=1,48,48,3 --shape-at run --io bind --format json
has err "output 0 not bound, copied out"
grep -q "not bound" "$tmp/out" && fail "--format json: the fallback line on stdout"

# a data-dependent output: copied out, and the run no longer fails on the placeholder
model=$shared/models/litert_tfl_testdata_dynamic_shapes.tflite
if [ -f "$model" ]; then
  printf '\000\000\100\100' > z.bin # 3.0 as float32: the output is [8,3,1024]
  expect 0 "$mp" run "$model" --input z=z.bin --io bind --runs 2 --output-dir bind-dd
  has out "^  output 0 not bound, copied out: its shape is known only while running"
  copies 0 1
  expect 0 "$mp" run "$model" --input z=z.bin --runs 2 --output-dir copy-dd
  cmp -s bind-dd/output_0.bin copy-dd/output_0.bin || fail "data-dependent: the output differs from --io copy's"
else
  echo "note: $model absent (the shared real models): the data-dependent case is not checked"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "run --io bind: bound, or copied with the reason"
