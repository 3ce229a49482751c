#!/usr/bin/env bash
# memprof report and memprof plan. report: every format of traces recorded from zoo models
# (auto, dynamic, a shape change) is written and well formed, its figures agree with each
# other and with the trace's own events, two traces compare, bad traces are refused with
# exit 4 leaving no file. plan: one row per planner, and the chosen plan's slots checked
# independently (no overlap, aligned, the lower bound recomputed), the XNNPACK peer, --shape.
# Usage: test_report_plan.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")          # absolute: the checks run inside $tmp
shared=${2:-}; [ -z "$shared" ] || shared=$(realpath -m "$shared")

py=/usr/bin/python3
mp_need python3 "$(basename "$0")" test -x "$py"
have_xmllint=0; command -v xmllint >/dev/null && have_xmllint=1
[ "$have_xmllint" -eq 1 ] || echo "note: xmllint absent, SVG and HTML are not validated"
# json_ok FILE : the file parses as JSON
json_ok() {
  if command -v jq >/dev/null; then jq empty "$1" 2>/dev/null
  else "$py" -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; fi
}
# jget FILE EXPR : a value of a JSON file, EXPR in Python on the parsed document j
jget() { "$py" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
svg_ok() { [ "$have_xmllint" -eq 0 ] || xmllint --noout "$1" 2>/dev/null || fail "$1: not well-formed XML"; }
# HTML5 tags (header, section, svg, ...) are unknown to libxml2's HTML 4 parser: ignore those
html_ok() {
  [ "$have_xmllint" -eq 0 ] && return
  local errs
  errs=$(xmllint --html --noout "$1" 2>&1 | grep 'error' | grep -Ev 'Tag [a-zA-Z0-9]+ invalid')
  [ -z "$errs" ] || fail "$1: HTML errors: $(echo "$errs" | head -3)"
}
# text_ok FILE : no line wider than 80 characters (counted as characters, not bytes)
text_ok() {
  local wide
  wide=$("$py" -c 'import sys
for n, l in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n"), 1):
    if len(l) > 80: print("line %d: %d columns" % (n, len(l)))' "$1")
  [ -z "$wide" ] || fail "$1 has lines over 80 columns: $(echo "$wide" | head -3)"
}

# ---- traces --------------------------------------------------------------------------
cd "$tmp" || exit 1
expect 0 "$mp" run zoo:mnist_mlp --runs 3 --trace mlp.json
expect 0 "$mp" run zoo:mnist_mlp --runs 3 --memory dynamic --trace mlp_dyn.json
expect 0 "$mp" run zoo:mobilenet_v2 --memory dynamic --trace mnv2_dyn.json
expect 0 "$mp" run zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --shape input=1,128,128,3 \
  --shape-at run --trace mnv2_shape.json
expect 0 "$mp" run zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --trace s96.json
expect 0 "$mp" run zoo:mobilenet_v2_dynamic --shape input=1,128,128,3 --trace s128.json
traces="mlp mlp_dyn mnv2_dyn mnv2_shape"

# ---- every format of every trace: exit 0, a file, well formed ------------------------
for t in $traces; do
  for f in text json svg html chrome; do
    expect 0 "$mp" report "$t.json" --format "$f" -o "$t-report.$f"
    [ -s "$t-report.$f" ] || { fail "report $t --format $f wrote no file"; continue; }
    case $f in
      text) text_ok "$t-report.$f" ;;
      svg) svg_ok "$t-report.$f" ;;
      html) html_ok "$t-report.$f" ;;
      json | chrome) json_ok "$t-report.$f" || fail "report $t --format $f is not valid JSON" ;;
    esac
  done
  expect 0 "$mp" report "$t.json" --exact; cp "$tmp/out" "$t-report.exact"; text_ok "$t-report.exact"
done
ls ./*.tmp.* >/dev/null 2>&1 && fail "report left temporary files: $(ls ./*.tmp.*)"
# without -o the text goes to stdout, the same as the file
expect 0 "$mp" report mlp.json; cmp -s "$tmp/out" mlp-report.text || fail "report to stdout differs from -o"

# ---- the JSON report: its figures against the text report and against the events ------
for t in $traces; do
  [ "$(jget "$t-report.json" 'j["format"]')" = "memprof-report" ] || fail "$t-report.json: format is not memprof-report"
  [ "$(jget "$t-report.json" 'j["version"]')" = 2 ] || fail "$t-report.json: version is not 2"
  # the peak: JSON = the text's "Heap peak ... (N B)" in --exact mode
  jpeak=$(jget "$t-report.json" 'j["summary"]["peak"]["heap_bytes"]')
  tpeak=$(sed -n 's/^Heap peak .*(\([0-9]*\) B).*/\1/p' "$t-report.exact")
  [ "$jpeak" = "${tpeak:-none}" ] || fail "$t: JSON peak $jpeak, text peak '$tpeak'"
  # ... = the kinds alive at the peak (const is mapped, not heap) ...
  sum=$(jget "$t-report.json" 'sum(v for k, v in j["summary"]["peak"]["live_bytes"].items() if k != "const")')
  [ "$sum" = "$jpeak" ] || fail "$t: peak $jpeak but the kinds alive then add up to $sum"
  # ... = replaying the trace's alloc/free/realloc events (kind 0 const is not heap)
  replay=$("$py" - "$t.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1])); ix = {n: i for i, n in enumerate(t["event_fields"])}
cur = peak = 0
for e in t["events"]:
    ty, b = e[ix["type"]], e[ix["bytes"]]
    if e[ix["kind"]] == 0: continue
    cur += {0: b, 1: -b, 2: b - e[ix["aux"]]}.get(ty, 0)
    peak = max(peak, cur)
print(peak, cur)
EOF
)
  [ "$replay" = "$jpeak 0" ] || fail "$t: replaying the events gives peak/end '$replay', report says $jpeak"
  [ "$(jget "$t-report.json" 'j["summary"]["balance"]["live_end_bytes"]')" = 0 ] || fail "$t: bytes live at end"
  # static bytes: JSON = text "Static bytes ... (N B)"
  jst=$(jget "$t-report.json" 'j["summary"]["static_bytes"]')
  tst=$(sed -n 's/^Static bytes .*(\([0-9]*\) B).*/\1/p; s/^Static bytes  *0 B.*/0/p' "$t-report.exact")
  [ "$jst" = "$tst" ] || fail "$t: JSON static bytes $jst, text '$tst'"
done
# the arenas of the report: slots alive together never overlap; the lower bound and the bytes
# used recomputed from the slots; in the shape-change trace the later (128x128) arena is larger
for t in mlp mnv2_shape; do
  "$py" - "$t-report.json" <<'EOF' || fail "$t-report.json: arena slots inconsistent"
import json, sys
bad = []
for ar in json.load(open(sys.argv[1]))["arenas"]["list"]:
    s = ar["slots"]
    for i, x in enumerate(s):
        for y in s[i + 1:]:
            if x["first_op"] <= y["last_op"] and y["first_op"] <= x["last_op"] and \
               x["offset"] < y["offset"] + y["bytes"] and y["offset"] < x["offset"] + x["bytes"]:
                bad.append("arena %d: %s and %s overlap" % (ar["id"], x["name"], y["name"]))
    steps = range(min(x["first_op"] for x in s), max(x["last_op"] for x in s) + 1)
    lb = max(sum(x["bytes"] for x in s if x["first_op"] <= t <= x["last_op"]) for t in steps)
    used = max(x["offset"] + x["bytes"] for x in s)
    if (lb, used) != (ar["lower_bound_bytes"], ar["used_bytes"]) or used > ar["bytes"]:
        bad.append("arena %d: lower bound/used %d/%d, from the slots %d/%d, size %d"
                   % (ar["id"], ar["lower_bound_bytes"], ar["used_bytes"], lb, used, ar["bytes"]))
print("; ".join(bad[:3])); sys.exit(1 if bad else 0)
EOF
done
[ "$(jget mnv2_shape-report.json '[a["bytes"] for a in j["arenas"]["list"] if a["reference_run"]] > [max(a["bytes"] for a in j["arenas"]["list"] if not a["reference_run"])]')" = True ] ||
  fail "shape change to 128x128: the reference arena is not the largest"
[ "$(jget mlp-report.json 'j["meta"]["model"]')" = "zoo:mnist_mlp" ] || fail "mlp.json: meta.model"
[ "$(jget mlp-report.json 'len(j["summary"]["time"]["runs"])')" = 3 ] || fail "mlp.json: not 3 runs"
[ "$(jget mnv2_dyn-report.json 'j["summary"]["static_bytes"]')" = 0 ] || fail "dynamic mode has static bytes"
[ "$(jget mnv2_shape-report.json 'j["summary"]["time"]["phases"]["shape"]["count"] > 0')" = True ] ||
  fail "the shape-change trace has no shape phase"

# allocations per run: dynamic mode allocates in every run, auto mode only before the runs
[ "$(jget mlp_dyn-report.json 'all(r["n_alloc"] > 0 for r in j["summary"]["time"]["runs"])')" = True ] ||
  fail "dynamic mode: a run allocated nothing"
[ "$(jget mlp-report.json 'all(r["n_alloc"] == 0 for r in j["summary"]["time"]["runs"][1:])')" = True ] ||
  fail "auto mode: a later run allocated"
grep -A1 '^Allocations per run' mlp_dyn-report.text | grep -Eq 'allocations  *[1-9][0-9]*  *[1-9]' ||
  fail "dynamic mode text: $(grep -A1 '^Allocations per run' mlp_dyn-report.text)"
grep -A1 '^Allocations per run' mlp-report.text | grep -Eq 'allocations  *[0-9]+  *0$' ||
  fail "auto mode text: $(grep -A1 '^Allocations per run' mlp-report.text)"

# Chrome: every operator slice lies inside the slice of its run (times compared in ns)
for t in $traces; do
  "$py" - "$t-report.chrome" <<'EOF' || fail "$t-report.chrome: operator slices outside their run"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
ns = lambda x: round(x * 1000)
runs = {e["args"]["run"]: e for e in ev if e.get("cat") == "phase" and "run" in e.get("args", {})}
ops = [e for e in ev if e.get("cat") == "op"]
bad = 0
if not ops or not runs: print("no operator or run slices"); sys.exit(1)
for o in ops:
    r = runs.get(o["args"]["run"])
    if r is None or not (ns(r["ts"]) <= ns(o["ts"]) and
                         ns(o["ts"]) + ns(o["dur"]) <= ns(r["ts"]) + ns(r["dur"])):
        bad += 1; print(o)
sys.exit(1 if bad else 0)
EOF
done

# ---- two traces: MobileNet v2 at 96x96, then at 128x128 -------------------------------
expect 0 "$mp" report s96.json s128.json
has out "memprof diff"
grep -q '^  static ' "$tmp/out" || fail "diff text has no static row"
expect 0 "$mp" report s96.json s128.json --exact
read -r sa sb < <(awk '$1 == "static" {print $2, $3; exit}' "$tmp/out")
[ "${sa:-0}" -lt "${sb:-0}" ] 2>/dev/null || fail "diff text: static bytes $sa -> $sb did not grow"
expect 0 "$mp" report s96.json s128.json --format json -o diff.json
json_ok diff.json || fail "diff JSON does not parse"
[ "$(jget diff.json 'j["format"]')" = "memprof-diff" ] || fail "diff JSON: format"
[ "$(jget diff.json 'j["kinds"]["static"]["at_peak_bytes"]["b"] > j["kinds"]["static"]["at_peak_bytes"]["a"] > 0')" = True ] ||
  fail "diff JSON: static did not grow"
[ "$(jget diff.json 'j["reference_arena_bytes"]["change"] > 0')" = True ] || fail "diff JSON: arena did not grow"
# its "before" and "after" are the two traces' own reports
for side in a:s96 b:s128; do
  expect 0 "$mp" report "${side#*:}.json" --format json -o "${side#*:}-report.json"
  [ "$(jget diff.json "j['peak_bytes']['${side%%:*}']")" = "$(jget "${side#*:}-report.json" 'j["summary"]["peak"]["heap_bytes"]')" ] ||
    fail "diff JSON: peak of ${side%%:*} differs from the report of ${side#*:}.json"
done
expect 2 "$mp" report s96.json s128.json --format svg -o diff.svg
[ -e diff.svg ] && fail "a refused diff wrote a file"

# ---- bad traces: exit 3 or 4, the problem named, nothing written ----------------------
mkdir bad && cp mlp.json bad/ && cd bad || exit 1
n=$(stat -c %s mlp.json)
# cut after a whole line (the reader then meets the end of the file inside the events), and
# cut in the middle of a byte run (the message depends on where: only the exit code is fixed)
head -n $(( $(wc -l < mlp.json) / 2 )) mlp.json > trunc.json
head -c $((n / 2)) mlp.json > cut.json
sed -E '1s/"version": *[0-9]+/"version":99/' mlp.json > version.json
grep -q '"version":99' version.json || fail "could not make the wrong-version trace"
# the first event's bytes as a string (its position taken from event_fields)
col=$(grep -o '"event_fields":\[[^]]*\]' mlp.json | sed 's/.*\[//; s/\]//' | tr , '\n' |
      grep -nx '"bytes"' | cut -d: -f1)
awk -F, -v OFS=, -v c="$col" 'ev == 1 { $c = "\"" $c "\""; ev = 2 } /"events":\[/ { ev = ev ? ev : 1 } 1' \
  mlp.json > type.json
grep -q '^\[[^"]*"[0-9]*"' type.json || fail "could not make the wrong-type trace"
expect 3 "$mp" report missing.json -o out.txt; has err "missing.json"
expect 4 "$mp" report trunc.json -o out.txt; has err "trunc.json"; has err "end of file"
expect 4 "$mp" report cut.json -o out.txt; has err "cut.json"
expect 4 "$mp" report version.json -o out.txt; has err "version 99"
expect 4 "$mp" report type.json -o out.txt; has err "'bytes'"; has err "event 0"
for f in json html chrome; do expect 4 "$mp" report trunc.json --format "$f" -o "out.$f"; done
expect 4 "$mp" report mlp.json trunc.json -o out.txt; has err "trunc.json"
expect 3 "$mp" report mlp.json -o no/such/dir/out.txt
# byte counts beyond 2^63-1: two slots of 2^62 bytes in one arena (event 3), and blocks of
# 2^62 bytes allocated and freed twice (allocated in all: 2^63 at event 3); every format
# refuses them as malformed, naming the event, and writes nothing
huge_trace() { # EVENTS... (after a run phase begins)
  printf '{"format":"memprof-trace","version":2,\n"meta":{"model":"hand","mode":"auto",'
  printf '"planner":"best","threads":1,"process_heap_peak":-1,"allocator_overhead":-1,\n'
  printf '"tensors":[{"name":"a","dtype":0,"const":false},{"name":"b","dtype":0,"const":false}],\n'
  printf '"ops":[{"name":"ADD","inputs":[0],"outputs":[1]}],"inputs":[0],"outputs":[1]},\n'
  printf '"event_fields":["type","t_ns","phase","kind","tensor","op","op_last","bytes","id","aux","align_log2"],\n'
  printf '"events":[\n[5,1,0,0,-1,-1,-1,0,1,4,0]'
  printf ',\n%s' "$@"
  printf ']}\n'
}
huge_trace '[0,2,0,1,-1,-1,-1,64,7,0,6]' '[3,3,0,1,0,0,0,4611686018427387904,7,0,0]' \
  '[3,4,0,1,1,0,0,4611686018427387904,7,0,0]' > huge_plan.json
huge_trace '[0,2,0,2,0,-1,-1,4611686018427387904,1,0,6]' '[1,3,0,2,0,-1,-1,4611686018427387904,1,0,6]' \
  '[0,4,0,2,0,-1,-1,4611686018427387904,2,0,6]' '[1,5,0,2,0,-1,-1,4611686018427387904,2,0,6]' \
  > huge_alloc.json
for f in text json svg html chrome; do
  expect 4 "$mp" report huge_plan.json --format "$f" -o "huge.$f"
  has err "huge_plan.json: event 3: "; has err "2^63-1"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "huge_plan.json: message over several lines"
done
for f in text json svg html; do
  expect 4 "$mp" report huge_alloc.json --format "$f" -o "huge.$f"
  has err "huge_alloc.json: event 3: the bytes allocated add up to more than 2^63-1"
done
expect 4 "$mp" report huge_plan.json mlp.json -o huge.txt; has err "huge_plan.json: event 3"
extra=$(find . -mindepth 1 ! -name mlp.json ! -name trunc.json ! -name cut.json ! -name version.json \
        ! -name type.json ! -name huge_plan.json ! -name huge_alloc.json)
[ -z "$extra" ] || fail "refused reports left files: $extra"
cd "$tmp" || exit 1

# usage errors
expect 2 "$mp" report mlp.json --format nosuch; has err "--format"
expect 2 "$mp" report; has err "no TRACE"
expect 2 "$mp" report mlp.json mlp.json mlp.json
expect 2 "$mp" report mlp.json --points 0

# ---- memprof plan ----------------------------------------------------------------------
expect 0 "$mp" plan --help
planners=$(sed -n '/^Planners:/,$p' "$tmp/out" | awk 'NR > 1 && NF {print $1}')
[ -n "$planners" ] || fail "plan --help lists no planners"
expect 0 "$mp" plan zoo:mobilenet_v2
cp "$tmp/out" plan.txt
for p in $planners; do
  [ "$(grep -c "^  $p  " plan.txt)" -eq 1 ] || fail "plan: not one row for planner $p"
done
has out "the lower bound is reached"
awk '$1 == "bump" {exit !($5 == "1.000")}' plan.txt || fail "bump / naive is not 1.000: $(grep '^  bump' plan.txt)"
default=$(awk '/ default$/ {print $1}' plan.txt)
[ -n "$default" ] || fail "plan marks no planner as default"
expect 0 "$mp" plan zoo:mobilenet_v2 --format json -o plan.json
json_ok plan.json || fail "plan JSON does not parse"
[ "$(jget plan.json 'j["format"]')" = "memprof-plan" ] || fail "plan JSON: format"
[ "$(jget plan.json '[p["arena_bytes"] for p in j["planners"] if p["name"] == "'"$default"'"] == [j["lower_bound_bytes"]]')" = True ] ||
  fail "the default planner $default does not reach the lower bound"
[ "$(jget plan.json '[p["arena_bytes"] for p in j["planners"] if p["name"] == "bump"] == [j["naive_bytes"]]')" = True ] ||
  fail "bump's arena is not the naive total"
# in place: MobileNet v2's ten residual ADDs (stride-1 blocks of equal width: blocks 2, 4,
# 5, 7, 8, 9, 11, 12, 14, 15) each take the slot of their projection's output, read by
# nobody after, and the RESHAPE before the softmax its input's: 11 tensors in the slot of
# another; with --in-place off each has its own
[ "$(jget plan.json 'j["n_in_place"]')" = 11 ] || fail "plan: n_in_place $(jget plan.json 'j["n_in_place"]'), expected 11"
grep -q "^  and 11 tensors in place in those slots" plan.txt || fail "plan: no line for the 11 tensors in place"
expect 0 "$mp" plan zoo:mobilenet_v2 --in-place off --format json -o plan-off.json
[ "$(jget plan-off.json 'j["n_in_place"]')" = 0 ] || fail "plan --in-place off: tensors in place"
[ "$(jget plan-off.json 'j["n_tensors"]')" = $(( $(jget plan.json 'j["n_tensors"]') + 11 )) ] ||
  fail "plan --in-place off: $(jget plan-off.json 'j["n_tensors"]') slots, expected 11 more than $(jget plan.json 'j["n_tensors"]')"
valid plan.json
valid plan-off.json
expect 2 "$mp" plan zoo:mobilenet_v2 --in-place maybe; has err "--in-place takes on or off"
# the exact text figures agree with the JSON
expect 0 "$mp" plan zoo:mobilenet_v2 --exact
grep -q "lower bound .*($(jget plan.json 'j["lower_bound_bytes"]'))" "$tmp/out" || fail "plan --exact: lower bound differs from JSON"

# the slots of every planner's plan: checked without trusting memprof's figures
cat > slots.py <<'EOF'
import json, sys
p = json.load(open(sys.argv[1])); a = p["align_bytes"]; s = p["plan"]["slots"]; bad = []
up = lambda b: (b + a - 1) // a * a
for x in s:
    if x["offset"] % a: bad.append("offset %d of %s is not a multiple of %d" % (x["offset"], x["name"], a))
    if x["offset"] + x["bytes"] > p["plan"]["arena_bytes"]: bad.append("%s ends past the arena" % x["name"])
for i, x in enumerate(s):
    for y in s[i + 1:]:
        if x["first"] <= y["last"] and y["first"] <= x["last"] and \
           x["offset"] < y["offset"] + y["bytes"] and y["offset"] < x["offset"] + x["bytes"]:
            bad.append("%s and %s overlap while both alive" % (x["name"], y["name"]))
steps = range(min(x["first"] for x in s), max(x["last"] for x in s) + 1)
lb = max(sum(up(x["bytes"]) for x in s if x["first"] <= t <= x["last"]) for t in steps)
if lb != p["lower_bound_bytes"]: bad.append("lower bound %d, computed from the slots %d" % (p["lower_bound_bytes"], lb))
if p["plan"]["arena_bytes"] < p["lower_bound_bytes"]: bad.append("the arena is below the lower bound")
print("; ".join(bad[:3])); sys.exit(1 if bad else 0)
EOF
for m in zoo:mobilenet_v2 zoo:mnist_mlp; do
  for p in $planners; do
    expect 0 "$mp" plan "$m" --planner "$p" --format json -o "slots.json"
    msg=$("$py" slots.py slots.json) || fail "plan $m --planner $p: $msg"
  done
done

expect 0 "$mp" plan zoo:mobilenet_v2 --planner greedy --format svg -o g.svg
if [ -s g.svg ]; then svg_ok g.svg; else fail "plan --format svg wrote nothing"; fi
expect 2 "$mp" plan zoo:mobilenet_v2 --planner nosuch; has err "nosuch"
expect 2 "$mp" plan zoo:mobilenet_v2 --peer nosuch

# --shape: a larger input needs a larger arena
expect 0 "$mp" plan zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --format json -o p96.json
expect 0 "$mp" plan zoo:mobilenet_v2_dynamic --shape input=1,128,128,3 --format json -o p128.json
lb96=$(jget p96.json 'j["lower_bound_bytes"]'); lb128=$(jget p128.json 'j["lower_bound_bytes"]')
[ "$lb96" -lt "$lb128" ] 2>/dev/null || fail "lower bound at 96x96 $lb96, at 128x128 $lb128"

# the XNNPACK peer
expect 0 "$mp" plan zoo:mobilenet_v2 --peer xnnpack
has out "^Peer"; has out "XNNPACK"
m=$shared/models/mpromonet_mnist.tflite
if [ -n "$shared" ] && [ -f "$m" ]; then
  expect 5 "$mp" plan "$m" --peer xnnpack
  cat "$tmp/err" >> "$tmp/out"
  has out "TANH"
  has out "^  best "    # the rest is still printed
else
  echo "SKIP (partly): $m absent; the peer's refusal is not checked"
fi

[ "$fails" -eq 0 ] && echo "report/plan: all checks passed"
exit $((fails > 0))
