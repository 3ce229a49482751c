#!/usr/bin/env bash
# Data-dependent shapes in auto mode (issue 16), on TensorFlow Lite's dynamic_shapes test
# model: its input z (a float) is cast, gathered and sliced into the output's middle
# dimension, so the output [8, z, 1024] is known only while running. In the default (auto)
# mode one run holds both planned (static) tensors and dynamic ones (the operators
# downstream of the data-dependent shape), no tensor is held twice, and the plan made in the
# first run is reused by the later runs: no plan event after run 1 (read from the trace).
# Usage: test_data_dependent.sh MEMPROF SHARED_DIR
set -u
mp=$1
shared=${2:-}
. "$(dirname "$0")/lib.sh"
model=$shared/models/litert_tfl_testdata_dynamic_shapes.tflite
if [ ! -f "$model" ]; then
  echo "SKIP: $model is absent (the shared real models)"
  exit 77
fi
py=/usr/bin/python3
for z in 3 7; do
  # z as a little-endian float32: 3.0 = 0x40400000, 7.0 = 0x40e00000
  case $z in 3) bytes='\000\000\100\100' ;; 7) bytes='\000\000\340\100' ;; esac
  printf "$bytes" >"$tmp/z.bin"
  expect 0 "$mp" run "$model" --input z="$tmp/z.bin" --runs 3 --trace "$tmp/t$z.json"
  has out "output 0  Identity  f32 \[8,$z,1024\]"
  grep -q '^Static bytes  *0 B' "$tmp/out" && fail "z=$z: no static tensor in auto mode"
  grep -q '^Dynamic bytes  *0 B' "$tmp/out" && fail "z=$z: no dynamic tensor in auto mode"
  has out "Duplicated bytes      0 B"
  has out "every byte allocated has been freed"
  "$py" - "$tmp/t$z.json" <<'PY' || fail "z=$z: a plan was made after the first run"
import json, sys
t = json.load(open(sys.argv[1]))
f = {name: i for i, name in enumerate(t["event_fields"])}
phases, plans = [], []
for e in t["events"]:
    if e[f["type"]] == 5:                      # PHASE_BEGIN: aux = kind, id = run
        phases.append((e[f["aux"]], e[f["id"]]))
    elif e[f["type"]] == 3:                    # PLAN
        plans.append(e[f["phase"]])
RUN = 4
late = [p for p in plans if p < len(phases) and phases[p][0] == RUN and phases[p][1] > 1]
runs = {r for k, r in phases if k == RUN}
sys.exit(0 if plans and not late and runs == {1, 2, 3} else 1)
PY
done
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
