#!/usr/bin/env bash
# memprof plan on models of several subgraphs (tools/gen_model while, grow and callonce): exit 0, a
# section per subgraph (named, its caller, when it is planned, its planner table), the model's
# total (the subgraphs' arenas held at once, the session's figure equal to the arenas a traced
# run of memprof run allocates), the JSON valid against its schema with one entry per further
# subgraph; a model of one subgraph prints no subgraph section and no total.
# Usage: test_plan_subgraphs.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")
gen="$(dirname "$mp")/gen_model"
py=/usr/bin/python3
mp_need python3-jsonschema "validating memprof plan's JSON against docs/schemas" \
  "$py" -c 'import jsonschema; jsonschema.Draft202012Validator'
[ -x "$gen" ] || { echo "SKIP: $gen not built"; exit 77; }
cd "$tmp" || exit 1
"$gen" while 3 loop.tflite || fail "gen_model while failed"
"$gen" callonce 8 once.tflite || fail "gen_model callonce failed"
"$gen" grow 3 grow.tflite || fail "gen_model grow failed"

# ---- text: a section per subgraph, then the total ----------------------------------------
expect 0 "$mp" plan loop.tflite --exact
cp "$tmp/out" loop.txt
has out "subgraph 0 main of 3 (the others and the total follow)"
has out "^Subgraph 1 cond, called by WHILE (op #0 of subgraph 0)"
has out "^Subgraph 2 body, called by WHILE (op #0 of subgraph 0)"
[ "$(grep -c '^  planned at prepare for its caller' loop.txt)" = 2 ] || fail "not 2 subgraphs planned at prepare"
[ "$(grep -c '^  best  ' loop.txt)" = 3 ] || fail "not one planner table per subgraph: $(grep -c '^  best  ' loop.txt)"
has out "^Lower bound: .* alive at op #0 LESS"
has out "^Lower bound: .* alive at op #0 MUL"
has out "^Model total (best planner): 3 subgraphs"
has out "as TensorFlow Lite does"
# the session's figure: the arenas a run allocates (memprof run's trace, its arena blocks)
held=$(sed -n 's/^  held at once from prepare .*(\([0-9]*\))$/\1/p' loop.txt)
[ -n "$held" ] || fail "no 'held at once' figure: $(grep held loop.txt)"
expect 0 "$mp" run loop.tflite --trace loop-trace.json
"$py" - loop-trace.json "$held" <<'PY' || fail "the session's arenas differ from the run's"
import json, sys
t = json.load(open(sys.argv[1])); ix = {n: i for i, n in enumerate(t["event_fields"])}
live = peak = 0
for e in t["events"]:
    if e[ix["kind"]] != 1:      # static: the planned arenas
        continue
    live += {0: e[ix["bytes"]], 1: -e[ix["bytes"]]}.get(e[ix["type"]], 0)
    peak = max(peak, live)
print("arenas of the run: peak %d, plan says %s" % (peak, sys.argv[2]))
sys.exit(0 if peak == int(sys.argv[2]) else 1)
PY

# a CALL_ONCE's subgraph: planned in the first run only
expect 0 "$mp" plan once.tflite
has out "^Subgraph 1 init, called by CALL_ONCE (op #0 of subgraph 0)"
has out "planned when the first run calls it, freed once it ran"
has out "^  1 init  *first run"

# a loop whose variable grows: cond and body planned at prepare and again while running
expect 0 "$mp" plan grow.tflite
[ "$(grep -c 'and again while$' "$tmp/out")" = 2 ] || fail "grow: not 2 subgraphs planned again"
has out "^  2 body  *prepare\*"
has out "^  \* planned again while running"

# one subgraph: no section, no total
expect 0 "$mp" plan zoo:mnist_mlp
hasnt out "^Subgraph "
hasnt out "^Model total"
hasnt out "subgraph 0"

# ---- JSON ---------------------------------------------------------------------------------
expect 0 "$mp" plan loop.tflite --format json -o loop.json
valid loop.json
"$py" - loop.json <<'PY' || fail "loop.json: subgraphs or total wrong"
import json, sys
j = json.load(open(sys.argv[1]))
subs = j["subgraphs"]
assert j["version"] == 3 and j["subgraph_name"] == "main", j["version"]
assert [(s["index"], s["name"], s["planned"]) for s in subs] == [(1, "cond", "prepare"), (2, "body", "prepare")], subs
for s in [j] + subs:      # each plan's slots: no two alive together overlap
    sl = s["plan"]["slots"]
    for a in sl:
        for b in sl:
            if a is not b and a["first"] <= b["last"] and b["first"] <= a["last"]:
                assert a["offset"] + a["bytes"] <= b["offset"] or b["offset"] + b["bytes"] <= a["offset"], (a, b)
t = j["total"]
best = lambda s: [p["arena_bytes"] for p in s["planners"] if p["name"] == "best"][0]
assert t["n_subgraphs"] == 3 and t["held_at_once"], t
assert t["prepare_arena_bytes"] == sum(best(s) for s in [j] + subs), t
assert t["prepare_session_bytes"] == sum(s["session_arena_bytes"] for s in [j] + subs), t
PY
expect 0 "$mp" plan once.tflite --format json -o once.json
valid once.json
expect 0 "$mp" plan grow.tflite --format json -o grow.json
valid grow.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit([s["planned"] for s in j["subgraphs"]] != ["prepare_and_run"] * 2)' grow.json ||
  fail "grow.json: the subgraphs are not planned again while running"
expect 0 "$mp" plan zoo:mnist_mlp --format json -o mlp.json
valid mlp.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(j["subgraphs"] != [] or j["total"]["n_subgraphs"] != 1)' mlp.json ||
  fail "mnist_mlp: subgraphs listed or a total of several"

exit $((fails > 0))
