#!/usr/bin/env bash
# memprof check's named figures (issue 19 item 7; issue 17's "check --max KIND=BYTES gates on
# the training categories"): --max-tensors gates tensor memory (what --max-peak gated: still
# accepted, deprecated in one line on stderr), --max-heap the Heap peak memprof run prints
# (the same number), --max-rss the process's peak resident set (exit 2 where not measured),
# --max KIND=SIZE every kind and training category, on traces of memprof train; every gated
# figure printed beside the heap peak; baselines with the old "peak" figure still read.
# Expected figures are worked out here from the models' shapes, or taken from another
# command (memprof run, memprof report) or from the trace's own samples.
# Usage: test_check_figures.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")
py=/usr/bin/python3
mp_need python3 "$(basename "$0")" test -x "$py"
cd "$tmp" || exit 1
# json FILE EXPR: a Python expression over the JSON document j of FILE, printed
json() { "$py" -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# ---- tensors: the old peak, under its name ---------------------------------------------
# zoo:mnist_mlp, batch 1: the input [1,28,28] float32 (3136 B, + the 16 bytes XNNPACK may
# read past an input) and its reshape [1,784] (3136 B) are live at once: 6288 B
expect 0 "$mp" check zoo:mnist_mlp --max-tensors 6288 --exact
has out "tensors <= limit  *6288  *6288  *-  ok"; hasnt err "deprecated"
expect 1 "$mp" check zoo:mnist_mlp --max-tensors 6287 --exact
has out "tensors <= limit  *6288  *6287  *+1 B  FAIL"
# --max-peak keeps its meaning, and says once that it is deprecated and what to use
expect 1 "$mp" check zoo:mnist_mlp --max-peak 6287 --exact
has out "tensors <= limit  *6288  *6287"; has err "deprecated"; has err "--max-tensors"
has err "--max-heap"
[ "$(grep -c deprecated "$tmp/err")" -eq 1 ] || fail "--max-peak: not one line on stderr"
expect 0 "$mp" check zoo:mnist_mlp --max peak=6288 --max-peak 7000
has err "deprecated"; [ "$(grep -c deprecated "$tmp/err")" -eq 1 ] || fail "said twice"
# an unknown figure: the refusal names every figure, the training categories too
expect 2 "$mp" check zoo:mnist_mlp --max bogus=1
for f in tensors heap rss static dynamic scratch io const kernel engine variable activation \
         trainable backprop gradient optimizer disposable extra; do
  grep -q "[(, ]$f[,)]" "$tmp/err" || fail "--max bogus=: '$f' not named: $(cat "$tmp/err")"
done
hasnt err "peak"

# ---- heap: the number memprof run prints --------------------------------------------------
expect 0 "$mp" zoo mnist_mlp -o mlp.tflite
expect 0 "$mp" run mlp.tflite --exact
heap=$(sed -n 's/^Heap peak .*(\([0-9]*\) B)$/\1/p' "$tmp/out")
[ -n "$heap" ] || fail "memprof run printed no Heap peak: $(head -c 300 "$tmp/out")"
expect 0 "$mp" check mlp.tflite --max-heap "$heap" --exact
has out "heap <= limit  *$heap  *$heap  *-  ok"
has out "^  heap peak  $heap (gated)"
expect 1 "$mp" check mlp.tflite --max-heap $((heap - 1))
expect 0 "$mp" check mlp.tflite --max heap="$heap"
# the gated figures beside the heap peak: tensors 6288 (gated) vs the heap peak (not gated)
expect 0 "$mp" check mlp.tflite --max-tensors 1MiB --max static=1MiB --exact
has out "^  heap peak  $heap (not gated)"; has out "^  gated      tensors 6288, static 6288$"
# a zoo: model's bytes are on the heap: the heap figure adds them to run's Heap peak
expect 0 "$mp" check zoo:mnist_mlp --max-heap 1GiB --exact
size=$(stat -c %s mlp.tflite)
has out "^  heap peak  $((heap + size)) (gated): memprof run's Heap peak $heap$"
has out "^             + $size of the model, held on the heap"

# ---- rss: the process's peak resident set -------------------------------------------------
expect 0 "$mp" check mlp.tflite --max-rss 64GiB --format json -o rss.json
rss=$(json rss.json 'j["figure_bytes"]["rss"]')
[ "$rss" -gt $((1 << 20)) ] || fail "rss $rss B: not above 1 MiB"
expect 1 "$mp" check mlp.tflite --max-rss 1MiB; has out "rss <= limit"
# a trace of memprof run holds RSS samples: rss is their largest high-water mark (VmHWM)
expect 0 "$mp" run mlp.tflite --runs 2 --trace run.json
hwm=$("$py" -c 'import json, sys
j = json.load(open(sys.argv[1])); f = j["event_fields"]
print(max(e[f.index("aux")] for e in j["events"] if e[f.index("type")] == 9))' run.json)
expect 0 "$mp" check run.json --max-rss "$hwm" --exact; has out "rss <= limit  *$hwm  *$hwm"
expect 1 "$mp" check run.json --max-rss $((hwm - 1))
# the trace's heap is the Heap peak too
expect 0 "$mp" check run.json --max-heap "$heap"
# samples are paced on many short runs: after load, prepare, the first and the last run, and
# between those at most one per millisecond of runs (so the high-water mark of the last one
# still covers every run)
expect 0 "$mp" run mlp.tflite --runs 3000 --warmup 0 --trace many.json
"$py" - many.json <<'PY' || fail "RSS samples of 3000 runs not paced: $(cat "$tmp/pace.log")"
import json, sys
j = json.load(open(sys.argv[1])); f = j["event_fields"]
ty, aux, t = f.index("type"), f.index("aux"), f.index("t_ns")
ev = j["events"]
runs = [i for i, e in enumerate(ev) if e[ty] == 5 and e[aux] == 4]
ends = [next(k for k in range(i, len(ev)) if ev[k][ty] == 6) for i in runs]
rss = [i for i, e in enumerate(ev) if e[ty] == 9]
log = open("pace.log", "w")
print(len(runs), "runs,", len(rss), "samples", file=log)
assert len(runs) == 3000, len(runs)
after_first = [i for i in rss if ends[0] < i < runs[1]]
after_last = [i for i in rss if i > ends[-1]]
between = [i for i in rss if runs[1] < i < ends[-1]]
span_ms = (ev[ends[-1]][t] - ev[ends[0]][t]) / 1e6
print(len(between), "between, over", span_ms, "ms", file=log)
assert len(after_first) == 1 and len(after_last) >= 1
assert len(between) <= span_ms + 1 and len(rss) < 3000
PY
# a baseline holds no rss: asking for it is an error, not a failure
expect 0 "$mp" check mlp.tflite --save-baseline mlp.base.json
expect 2 "$mp" check mlp.base.json --max-rss 1GiB; has err "no figure rss"
has err "machine-dependent"

# ---- training: the categories of a training step ------------------------------------------
# zoo:mnist_mlp trained at batch 16: weights 784x128 + 128 + 128x10 + 10 = 101770 floats
# (407080 B); Adam keeps two variables per weight (814160 B)
expect 0 "$mp" train zoo:mnist_mlp --batch 16 --steps 1 --memory held --trace held.json
expect 0 "$mp" train zoo:mnist_mlp --batch 16 --steps 1 --trace planned.json
# held: each category one block; back-prop holds dL/d of every activation:
# 16 x (784 + 128 + 10) floats = 59008 B
expect 0 "$mp" report held.json --format json -o held.report.json
[ "$(json held.report.json 'j["summary"]["peak"]["kind_peak_bytes"]["backprop"]')" = 59008 ] ||
  fail "memprof report: backprop of the held step is not 59008 B"
expect 0 "$mp" check held.json --max backprop=59008 --max trainable=407080 \
  --max optimizer=814160 --exact
has out "backprop <= limit  *59008  *59008  *-  ok"; has out "PASS: 3 checks"
expect 1 "$mp" check held.json --max backprop=59007; has out "FAIL: 1 of 1"
expect 1 "$mp" check held.json --max trainable=407079
expect 1 "$mp" check held.json --max optimizer=814159
# planned: the back-prop tensors share the step's arena; the most live at once are dL/d of
# the reshaped input and of the hidden layer, in the first layer's backward:
# 16 x (784 + 128) floats = 58368 B
expect 0 "$mp" check planned.json --max backprop=58368 --max optimizer=814160 --exact
has out "backprop <= limit  *58368"; has out "PASS: 2 checks"
expect 1 "$mp" check planned.json --max backprop=58367
expect 1 "$mp" check planned.json --max optimizer=814159
# the heap peak beside them is the one memprof report prints
expect 0 "$mp" report planned.json --format json -o planned.report.json
theap=$(json planned.report.json 'j["summary"]["peak"]["heap_bytes"]')
expect 0 "$mp" check planned.json --max backprop=1MiB --max optimizer=1MiB --exact
has out "^  heap peak  $theap (not gated)"; has out "^  gated      backprop 58368, optimizer 814160$"
# a training trace has no RSS samples
expect 2 "$mp" check planned.json --max-rss 1GiB; has err "no RSS samples"
# the categories go into a baseline and are compared with it; an inference baseline
# holds none of them
expect 0 "$mp" check held.json --save-baseline held.base.json
grep -q '^    "backprop": 59008,$' held.base.json || fail "held.base.json: no backprop line"
grep -q '"activation"' mlp.base.json && fail "an inference baseline holds training categories"
expect 0 "$mp" check held.json --baseline held.base.json; has out "backprop vs baseline"
expect 0 "$mp" diff held.base.json held.json; has out "backprop"

# ---- baselines of the old format: figure "peak" -------------------------------------------
"$py" - mlp.base.json old.base.json <<'EOF' || fail "cannot write a version-2 baseline"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["version"] == 3 and "peak" not in j["figure_bytes"]
j["version"] = 2
j["figure_bytes"]["peak"] = j["figure_bytes"].pop("tensors")
json.dump(j, open(sys.argv[2], "w"), indent=2, sort_keys=True)
EOF
expect 0 "$mp" check mlp.tflite --baseline old.base.json; has out "tensors vs baseline"
has out "PASS: 5 checks"
expect 0 "$mp" check old.base.json --save-baseline again.base.json
cmp -s mlp.base.json again.base.json || fail "a version-2 baseline does not read back as written"

# ---- JSON: the figure is named tensors; the heap peak's parts ---------------------------
expect 0 "$mp" check zoo:mnist_mlp --max-tensors 1MiB --format json -o c.json
[ "$(json c.json 'j["version"], "tensors" in j["figure_bytes"], "peak" in j["figure_bytes"]')" = "(2, True, False)" ] ||
  fail "check JSON: not version 2 with tensors and no peak"
[ "$(json c.json 'j["figure_bytes"]["heap"] == j["run_heap_peak_bytes"] + j["model_heap_bytes"]')" = True ] ||
  fail "check JSON: heap is not run_heap_peak_bytes + model_heap_bytes"
[ "$(json c.json 'j["model_heap_bytes"]')" = "$size" ] || fail "check JSON: model_heap_bytes"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all check figure tests passed"
