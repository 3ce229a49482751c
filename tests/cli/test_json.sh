#!/usr/bin/env bash
# The JSON every command writes (issue 20): with --format json and no -o the document alone
# is on standard output (the other lines on stderr), with -o it is written to the file and
# the same document (diff, train and pipeline too); every document validates against its
# schema in docs/schemas/ (units:
# *_bytes and *_ns integers); readers keep accepting the versions before (a version-1
# baseline, a version-2 trace); report T -o T is refused; progress lines never reach a
# redirected stderr.
# Usage: test_json.sh MEMPROF SHARED_DIR
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
py=/usr/bin/python3
mp_need python3 "the JSON checks" "$py" -c 'import json'
mp_need python3-jsonschema "validating the JSON outputs against docs/schemas" \
  "$py" -c 'import jsonschema; jsonschema.Draft202012Validator'
cd "$tmp" || exit 1

# same A B : two documents are equal (times aside: members ending in _ns and ratios)
same() {
  "$py" - "$1" "$2" <<'EOF' || fail "$1 and $2 differ"
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not (k.endswith("_ns") or k.startswith("ratio")
                or k in ("rss", "unaccounted", "kernel_bytes", "peak_ratio_to_static"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
EOF
}
# json_cmd NAME ARGS... : ARGS with --format json to stdout (nothing on stderr but what
# the command prints for people, no progress), then with -o NAME-o.json; both valid
json_cmd() {
  local name=$1; shift
  expect 0 "$mp" "$@" --format json
  cp "$tmp/out" "$name.json"
  "$py" -c 'import json,sys; json.load(open(sys.argv[1]))' "$name.json" 2>/dev/null ||
    fail "$*: stdout is not one JSON document: $(head -c 200 "$name.json")"
  valid "$name.json"
  grep -q $'\r' "$tmp/err" && fail "$*: a progress line reached a redirected stderr"
  expect 0 "$mp" "$@" --format json -o "$name-o.json"
  valid "$name-o.json"
}

mn=zoo:mnist_mlp
"$mp" run $mn --runs 3 --trace t.json >/dev/null || fail "cannot record a trace"
"$mp" run $mn --runs 2 --memory dynamic --trace t2.json >/dev/null || fail "cannot record a trace"
valid t.json

# ---- every command with --format json ---------------------------------------------------
json_cmd run run $mn --runs 2
head -c 1 "$tmp/out" | grep -q '{' && fail "run -o: the JSON reached stdout"
has out "report   run-o.json"
json_cmd report report t.json
same report.json report-o.json
json_cmd diff report t.json t2.json
json_cmd plan plan $mn --peer xnnpack
json_cmd bench bench $mn -r 2 -w 0
json_cmd scenarios scenarios zoo:mobilenet_v2_dynamic --shape input=1,64,64,3 -r 1 -w 0
json_cmd check check $mn --max-peak 1MiB
json_cmd inspect inspect $mn
json_cmd inspect-nt inspect $mn --no-tensors
json_cmd zoo zoo list
same zoo.json zoo-o.json
same inspect.json inspect-o.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit("tensors" in j)' inspect-nt.json ||
  fail "inspect --no-tensors: tensors listed"
# a model of several subgraphs (tools/gen_model while: main calls cond 1 and body 2 from one
# WHILE): every subgraph listed with its operators, the WHILE's calls named
gen="$(dirname "$mp")/gen_model"
if [ -x "$gen" ]; then
  "$gen" while 3 loop.tflite || fail "gen_model while failed"
  json_cmd inspect-while inspect loop.tflite --no-tensors
  "$py" -c 'import json,sys
j = json.load(open(sys.argv[1]))
subs = j["subgraphs"]
assert [s["name"] for s in subs] == ["main", "cond", "body"], subs
assert [o["name"] for o in subs[1]["ops"]] == ["LESS"], subs[1]
assert j["ops"][0]["name"] == "WHILE" and j["ops"][0]["calls"] == [1, 2], j["ops"]
assert "calls" not in subs[2]["ops"][0]' inspect-while.json || fail "inspect of a WHILE model: $(head -c 300 inspect-while.json)"
  "$py" -c 'import json,sys; sys.exit("subgraphs" in json.load(open(sys.argv[1])))' inspect-nt.json ||
    fail "inspect of a one-subgraph model lists subgraphs"
else
  echo "note: $gen absent, the subgraph inspection is skipped"
fi

# run: the document on stdout is the report of the run, and nothing else is there
expect 0 "$mp" run $mn --runs 2 --trace t3.json --format json
cp "$tmp/out" run-stdout.json
valid run-stdout.json
has err "recorder "; has err "trace    t3.json"; has err "output 0"
expect 0 "$mp" run $mn --runs 2 --format json -o -
cp "$tmp/out" run-dash.json; valid run-dash.json
expect 0 "$mp" run $mn --format svg
head -c 5 "$tmp/out" | grep -q '<' || fail "run --format svg: stdout does not start with the SVG"
has err "recorder "

# check: the baseline, then JSON against it; the 'baseline written' line off stdout
expect 0 "$mp" check $mn --save-baseline base.json --format json
cp "$tmp/out" check-save.json; valid check-save.json; valid base.json
has err "baseline base.json written"
expect 0 "$mp" check $mn --baseline base.json --format json
cp "$tmp/out" check-base.json; valid check-base.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["result"] == "pass" and j["n_checks"] == 5 and j["changes"] is not None))' check-base.json ||
  fail "check --baseline JSON: not 5 passed checks with changes"
expect 1 "$mp" check $mn --max-peak 1KiB --format json
cp "$tmp/out" check-fail.json; valid check-fail.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); c=j["checks"][0]; sys.exit(not (j["result"] == "fail" and c["over_bytes"] == c["now_bytes"] - 1024))' check-fail.json ||
  fail "check JSON: the failed check's bytes"
# the run's outputs index
expect 0 "$mp" run $mn --output-dir outdir
valid outdir/outputs.json

# diff: two traces are the comparison of report A B (memprof-diff); a baseline on a side is
# memprof-baseline-diff, whose figures of a are the baseline file's own
json_cmd diff-traces diff t.json t2.json
same diff-traces.json diff.json
json_cmd diff-base diff base.json t2.json
"$py" - diff-base.json base.json <<'EOF2' || fail "diff --format json: figures not the baseline's, or a change not b - a"
import json, sys
d, base = (json.load(open(p)) for p in sys.argv[1:3])
figs = {f["name"]: f for f in d["figures"]}
ok = d["format"] == "memprof-baseline-diff" and d["a"]["kind"] == "baseline" and d["b"]["kind"] == "trace"
for name, v in base["figure_bytes"].items():
    ok &= figs[name]["a_bytes"] == v
for f in d["figures"]:
    both = f["a_bytes"] is not None and f["b_bytes"] is not None
    ok &= f["change_bytes"] == (f["b_bytes"] - f["a_bytes"] if both else None)
# kernel, engine, heap: machine dependent, never in a baseline file, known from the trace
ok &= figs["kernel"]["a_bytes"] is None and figs["kernel"]["b_bytes"] > 0
ok &= d["n_tensors_changed"] == len(d["tensors"])
sys.exit(0 if ok else 1)
EOF2
expect 0 "$mp" diff base.json base.json --format json
cp "$tmp/out" diff-same.json; valid diff-same.json
"$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["tensors"] == [] and all(f["change_bytes"] == 0 for f in j["figures"])))' diff-same.json ||
  fail "diff of a baseline with itself: a change"
expect 2 "$mp" diff base.json t2.json -o base.json --format json; has err "refusing to overwrite"
expect 3 "$mp" diff base.json t2.json -o no/such/dir/d.json

# train: memprof-train on stdout alone (its -o is the trained model), trained and memory only
expect 0 "$mp" train $mn --batch 8 --steps 3 --format json -o trained.tflite
cp "$tmp/out" train.json; valid train.json
[ -s "$tmp/err" ] && fail "train --format json: stderr not empty: $(head -c 200 "$tmp/err")"
[ -s trained.tflite ] || fail "train --format json -o: no trained model"
expect 0 "$mp" train $mn --batch 8 --memory-only --format json
cp "$tmp/out" train-mo.json; valid train-mo.json
"$py" - train.json train-mo.json <<'EOF2' || fail "train JSON: figures inconsistent"
import json, sys
t, mo = (json.load(open(p)) for p in sys.argv[1:3])
ok = t["training"]["steps"] == 3 and len(t["training"]["epoch_loss"]) == t["training"]["epochs"]
ok &= mo["training"] is None and all(c["measured_peak_bytes"] is None for c in mo["categories"])
for j in (t, mo):
    ok &= sum(c["held_bytes"] for c in j["categories"]) == j["held_bytes"]
    ok &= sum(c["planned_alone_bytes"] for c in j["categories"]) == j["planned_alone_bytes"]
    p = j["planned"]
    ok &= p["total_bytes"] == p["arena_bytes"] + p["persistent_bytes"]
    ok &= j["lower_bound"]["total_bytes"] <= p["total_bytes"] <= j["held_bytes"]
ok &= t["output"] == "trained.tflite"
sys.exit(0 if ok else 1)
EOF2

# pipeline: --format json is the chain's trace report (memprof-report, as run's); --json the
# pipeline's own document (memprof-pipeline), '-' for stdout
expect 0 "$mp" split $mn --at 2 -o mlp
json_cmd pipeline-report pipeline mlp-1.tflite mlp-2.tflite -r 2
has out "pipeline 2 models"; has out "report   pipeline-report-o.json"
expect 0 "$mp" pipeline mlp-1.tflite mlp-2.tflite --format json
has err "pipeline 2 models"
expect 0 "$mp" pipeline mlp-1.tflite mlp-2.tflite -r 2 --json -
cp "$tmp/out" pipeline.json; valid pipeline.json
has err "pipeline 2 models"
expect 0 "$mp" pipeline mlp-1.tflite mlp-2.tflite -r 2 --record off --io bind --json pipeline-off.json
valid pipeline-off.json
expect 2 "$mp" pipeline mlp-1.tflite mlp-2.tflite --json - --format json

# ---- units: no *_ms, every *_bytes and *_ns an integer ---------------------------------
for f in *.json outdir/outputs.json; do
  "$py" - "$f" <<'EOF' || fail "$f: a unit out of convention: $(cat "$tmp/why")"
import json, sys
bad = []
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            if k.endswith("_ms"): bad.append(path + k)
            if (k.endswith("_bytes") or k.endswith("_ns") or k == "bytes") and not (
                    x is None or isinstance(x, (int, dict)) or
                    (isinstance(x, list) and all(isinstance(y, int) for y in x))):
                bad.append(path + k)
            walk(x, path + k + ".")
    elif isinstance(v, list):
        for x in v[:50]: walk(x, path)
j = json.load(open(sys.argv[1]))
if j.get("format") == "memprof-trace": j = j["meta"]
walk(j, "")
open("why", "w").write(", ".join(bad[:5]))
sys.exit(1 if bad else 0)
EOF
done

# ---- older versions are still read --------------------------------------------------------
# a version-1 baseline (objects "figures" and "tensors", figure "peak" for tensors) checks as
# the current one does
"$py" - base.json base_v1.json <<'EOF' || fail "cannot write a version-1 baseline"
import json, sys
j = json.load(open(sys.argv[1]))
j["version"] = 1; j["figures"] = j.pop("figure_bytes"); j["tensors"] = j.pop("tensor_bytes")
j["figures"]["peak"] = j["figures"].pop("tensors")
open(sys.argv[2], "w").write(json.dumps(j, indent=2, sort_keys=True) + "\n")
EOF
expect 0 "$mp" check $mn --baseline base_v1.json; has out "PASS: 5 checks"
expect 0 "$mp" diff base_v1.json base.json; has out "no tensor changed bytes"
# a version-2 trace (meta process_heap_peak, allocator_overhead) reports the same
sed '1s/"version":3/"version":2/; 2s/"process_heap_peak_bytes"/"process_heap_peak"/; 2s/"allocator_overhead_bytes"/"allocator_overhead"/' \
  t.json > t_v2.json
grep -q '"version":2' t_v2.json && grep -q '"process_heap_peak":' t_v2.json || fail "cannot write a version-2 trace"
expect 0 "$mp" report t_v2.json --format json -o report_v2.json
cmp -s report-o.json report_v2.json || fail "a version-2 trace reports differently from its version-3 self"
expect 0 "$mp" check t.json --save-baseline base_t.json
expect 0 "$mp" check t_v2.json --baseline base_t.json; has out "PASS"

# ---- no output is its own input; nothing half written -----------------------------------
cp t.json t.orig
expect 2 "$mp" report t.json -o t.json --format json; has err "refusing to overwrite"
cmp -s t.json t.orig || fail "report T -o T changed the trace"
expect 2 "$mp" inspect t.json -o t.json --format json
expect 2 "$mp" check t.json --max-peak 1GiB --format json -o t.json
cmp -s t.json t.orig || fail "check T -o T changed the trace"
expect 3 "$mp" inspect $mn --format json -o no/such/dir/m.json
expect 3 "$mp" zoo list --format json -o no/such/dir/z.json
expect 2 "$mp" check $mn --max-peak 1GiB --format json -o no/such/dir/c.json
expect 2 "$mp" zoo mnist_mlp -o m.tflite --format json; has err "zoo list"
ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls ./*.tmp.*)"

# ---- progress: on a terminal only ------------------------------------------------------
# redirected (every command above): no carriage return reached stderr; nor with the line
# due from the first run (MP_PROGRESS_AFTER_MS=0); on a terminal: test_progress.sh
MP_PROGRESS_AFTER_MS=0 expect 0 "$mp" run $mn --runs 300
grep -q $'\r' "$tmp/err" && fail "run --runs: a progress line on a redirected stderr"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "json: every document valid"
