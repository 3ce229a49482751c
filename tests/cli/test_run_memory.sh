#!/usr/bin/env bash
# memprof run's memory options: the report's sections, memory modes, shape changes at each
# point of the call order (A-E), the debug switch that keeps a stale arena (duplicated bytes
# must show), the trace file (written whole or not at all), and bad values (exit 2).
# Usage: test_run_memory.sh MEMPROF SHARED_DIR
set -u
mp=$1
shared=${2:-}
. "$(dirname "$0")/lib.sh"

# the report of a plain run: every section, a balanced trace, nothing held twice
expect 0 "$mp" run zoo:mnist_mlp --runs 3
for s in "Heap peak" "Largest alive at peak" "Allocations per run" "Static bytes" \
         "Dynamic bytes" "Duplicated bytes      0 B" "Copies in" "every byte allocated has been freed" \
         "Unaccounted heap" "bytes per event"; do
  has out "$s"
done
# A: planned at prepare, so no run allocates
grep -A1 '^Allocations per run' "$tmp/out" | grep -q 'allocations  *0  *0' ||
  fail "call order A: runs allocate: $(grep -A1 '^Allocations per run' "$tmp/out")"

# dynamic mode: no arena; the trace still balances
expect 0 "$mp" run zoo:mnist_mlp --memory dynamic --runs 2
has out "Static bytes          0 B"
hasnt out "Dynamic bytes         0 B"
has out "every byte allocated has been freed"

# trace file: written atomically, a memprof trace; refused in a missing folder (exit 3)
expect 0 "$mp" run zoo:mnist_mlp --trace "$tmp/t.json"
head -c 60 "$tmp/t.json" | grep -q '"format": *"memprof-trace"' || fail "trace lacks its format name"
expect 3 "$mp" run zoo:mnist_mlp --trace "$tmp/no/such/dir/t.json"
ls "$tmp/no" >/dev/null 2>&1 && fail "a failed trace left something behind"

# bad values
expect 2 "$mp" run zoo:mnist_mlp --memory sometimes; has err "--memory"
expect 2 "$mp" run zoo:mnist_mlp --shape-at later; has err "--shape-at"
expect 2 "$mp" run zoo:mnist_mlp --planner nosuch; has err "no planner 'nosuch'"
expect 2 "$mp" run zoo:mnist_mlp --io share; has err "--io"
expect 2 "$mp" run zoo:mnist_mlp --record off --trace "$tmp/u.json"; has err "--record on"
[ -e "$tmp/u.json" ] && fail "a refused run wrote a trace"
expect 2 "$mp" run zoo:mnist_mlp --shape input=1,784 --shape input=2,784; has err "several shapes"

if [ -z "$shared" ] || [ ! -f "$shared/models/tiny_ic_resnet8_float.tflite" ]; then
  echo "SKIP (partly): $shared/models/tiny_ic_resnet8_float.tflite absent; call orders C-E not checked"
  exit $((fails ? 1 : 0))
fi
m=$shared/models/tiny_ic_resnet8_float.tflite
# C: shape changed after prepare; E: one shape before prepare and another after; D: each run
for args in "--shape input_1=2,32,32,3 --shape-at run" \
            "--shape input_1=2,32,32,3 --shape input_1=3,32,32,3 --shape-at run" \
            "--shape input_1=1,32,32,3 --shape input_1=2,32,32,3 --shape-at each-run"; do
  # shellcheck disable=SC2086
  expect 0 "$mp" run "$m" $args --runs 4
  has out "Duplicated bytes      0 B"
  has out "every byte allocated has been freed"
  has out "Dynamic bytes         0 B"
done
# C and E: the first run plans, later runs allocate nothing
expect 0 "$mp" run "$m" --shape input_1=2,32,32,3 --shape-at run --runs 4 --io bind
grep -A1 '^Allocations per run' "$tmp/out" | grep -Eq 'allocations  *[1-9][0-9]*  *0$' ||
  fail "call order C: later runs allocate: $(grep -A1 '^Allocations per run' "$tmp/out")"
has out "Copies in             0 copies"
# the debug switch reproducing Samsung ONE's stale arena: the duplication must show
expect 0 "$mp" run "$m" --shape input_1=2,32,32,3 --shape-at run --keep-stale-arena
hasnt out "Duplicated bytes      0 B"
has out "in 2 homes"
exit $((fails ? 1 : 0))
