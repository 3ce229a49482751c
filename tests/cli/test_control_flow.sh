#!/usr/bin/env bash
# Models of several subgraphs (issue 16): a WHILE model written by tools/gen_model (built
# beside memprof: i < N, x = 2x + 1, subgraphs cond and body) runs in every memory mode with
# the loop's result, nothing left allocated, and each iteration visible in the saved trace
# (the body's operator marks carry the iteration in aux); inspect lists the subgraphs; split
# refuses the model (exit 5) in one line.
# Usage: test_control_flow.sh MEMPROF [SHARED_DIR]
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
gen=$(dirname "$mp")/gen_model
py=/usr/bin/python3
"$gen" while 5 "$tmp/loop.tflite" || { echo "FAIL: gen_model while"; exit 1; }

expect 0 "$mp" inspect "$tmp/loop.tflite" --no-tensors
has out "subgraphs   3"
has out "cond .* 1 operators"
has out "body .* 3 operators"
has out "#0   WHILE"

for mode in auto static dynamic; do
  expect 0 "$mp" run "$tmp/loop.tflite" --memory $mode --runs 2 --trace "$tmp/$mode.json"
  has out "output 1  i_end  i32 \[1\]"
  has out "min 5  max 5"
  has out "every byte allocated has been freed"
  "$py" - "$tmp/$mode.json" <<'PY' || fail "$mode: the trace does not show 5 iterations per run"
import json, sys
t = json.load(open(sys.argv[1]))
f = {name: i for i, name in enumerate(t["event_fields"])}
ops = [o["name"] for o in t["meta"]["ops"]]
assert ops[:2] == ["WHILE", "LESS"] and len(ops) == 5, ops
phases, seen = [], {}
for e in t["events"]:
    if e[f["type"]] == 5:                      # PHASE_BEGIN: aux = kind, id = run
        phases.append((e[f["aux"]], e[f["id"]]))
    elif e[f["type"]] == 7 and e[f["op"]] == 2:   # OP_BEGIN of the body's first operator
        kind, run = phases[e[f["phase"]]]
        seen.setdefault(run, []).append(e[f["aux"]])
assert seen == {1: [1, 2, 3, 4, 5], 2: [1, 2, 3, 4, 5]}, seen
PY
done

# a loop whose variable grows (gen_model grow): its outputs known only after the loop, so in
# the default mode one run holds planned tensors (the subgraphs' arenas) and dynamic ones (the
# WHILE's outputs, the loop variables, re-planned arenas), none held twice, nothing left
"$gen" grow 5 "$tmp/grow.tflite" || fail "gen_model grow"
expect 0 "$mp" run "$tmp/grow.tflite" --runs 2
has out "output 0  x_end  f32 \[1,69\]"
grep -q '^Static bytes  *0 B' "$tmp/out" && fail "grow: no static tensor in auto mode"
grep -q '^Dynamic bytes  *0 B' "$tmp/out" && fail "grow: no dynamic tensor in auto mode"
has out "Duplicated bytes      0 B"
has out "every byte allocated has been freed"

# the call orders on both: the input's shape changes between prepare and run and before
# every run (case D: [1,32], [1,64], ...) in every memory mode; each call sizes the called
# subgraph's inputs again (a block kept from the smaller shape was written past in dynamic
# mode: AddressSanitizer's heap-buffer-overflow in the sanitized build). The fixed loop
# allocates in no later run of an unchanged shape; the growing one does, by its nature.
expect 0 "$mp" scenarios "$tmp/loop.tflite" --shape x=1,32 --memory all -r 2 -w 1
has out "flagged: none"
expect 0 "$mp" scenarios "$tmp/grow.tflite" --shape x=1,32 --memory all -r 2 -w 1

expect 5 "$mp" split "$tmp/loop.tflite" --at 1 -o "$tmp/part"
has err "the model has 3 subgraphs (WHILE / IF); memprof splits single-subgraph models"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "split: message over several lines"

[ "$fails" -eq 0 ] || exit 1
echo "PASS"
