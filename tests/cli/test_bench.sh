#!/usr/bin/env bash
# memprof bench and memprof scenarios. scenarios: the memory columns of the call orders A-E
# on a real model with a dynamic batch (tiny_ic_resnet8_float), checked against arena sizes
# this script derives on its own from the model's operator list and tensor shapes (the
# live-set lower bound, which the default planner reaches on this model, plus the 16 bytes
# every arena carries past its end); --strict failing on the debug switch that keeps the
# stale arena and passing without it. bench: the JSON output parses and has every
# documented field, with the peer; text fits 80 columns. Both: usage errors exit 2, a bad
# model 4, the peer on a model with an operator it lacks 5 naming the operator.
# Usage: test_bench.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$1
shared=${2:-}

py=/usr/bin/python3
mp_need python3 "$(basename "$0")" test -x "$py"
# jcheck FILE CODE : run Python CODE on the parsed document j; it prints what is wrong
jcheck() {
  local out
  out=$("$py" -c 'import json,sys
j=json.load(open(sys.argv[1]))
bad=[]
def need(c, what):
    if not c: bad.append(what)
exec(sys.argv[2])
print("; ".join(bad))' "$1" "$2" 2>&1) || { fail "$1: $out"; return; }
  [ -z "$out" ] || fail "$1: $out"
}
# text_ok FILE : no line wider than 80 characters
text_ok() {
  local wide
  wide=$(awk 'length($0) > 80 {printf "line %d: %d columns\n", NR, length($0)}' "$1")
  [ -z "$wide" ] || fail "$1 has lines over 80 columns: $(echo "$wide" | head -3)"
  # a line cut at 80 columns ends with "..."
  if grep -q '\.\.\.$' "$1"; then fail "$1 has a line cut short: $(grep '\.\.\.$' "$1" | head -1)"; fi
}

# ---- help and usage errors ----------------------------------------------------------------
for c in bench scenarios; do
  expect 0 "$mp" "$c" --help; has out "Usage: memprof $c"; has out "Examples:"
done
expect 2 "$mp" bench; has err "missing MODEL"
expect 2 "$mp" bench zoo:mnist_mlp --bogus; has err "unknown option"
expect 2 "$mp" bench zoo:mnist_mlp -r 0; has err "\-r"
expect 2 "$mp" bench zoo:mnist_mlp --runs; has err "needs a value"
expect 2 "$mp" bench zoo:mnist_mlp --peer tflite; has err "xnnpack"
expect 2 "$mp" bench zoo:mnist_mlp --format xml; has err "\-\-format"
expect 2 "$mp" bench zoo:mnist_mlp --shape-at later; has err "\-\-shape-at"
expect 2 "$mp" bench zoo:mnist_mlp --peer xnnpack --shape input=1,28,28,1 --shape-at each-run
has err "each-run"
expect 2 "$mp" bench zoo:mnist_mlp --shape nosuch=1,2 -r 1; has err "no input 'nosuch'"
expect 2 "$mp" scenarios zoo:mnist_mlp; has err "\-\-shape"
expect 2 "$mp" scenarios zoo:mnist_mlp --shape input=1,28,28,1 --memory sometimes
expect 2 "$mp" scenarios zoo:mnist_mlp --shape input=1,28,28,1 -w -1
expect 2 "$mp" scenarios; has err "missing MODEL"

# ---- bad models ---------------------------------------------------------------------------
printf 'not a model at all' > "$tmp/garbage.tflite"
expect 4 "$mp" bench "$tmp/garbage.tflite" -r 1; has err "garbage.tflite"
expect 4 "$mp" scenarios "$tmp/garbage.tflite" --shape x=1; has err "garbage.tflite"
expect 3 "$mp" bench "$tmp/does-not-exist.tflite"; has err "does-not-exist"

# ---- bench: text and JSON, with the peer --------------------------------------------------
expect 0 "$mp" bench zoo:mnist_mlp -r 2 -w 0 --no-huge-pages --format json -o "$tmp/nh.json"
jcheck "$tmp/nh.json" 'need(j.get("huge_pages") is False, "--no-huge-pages: huge_pages not false")'
expect 0 "$mp" bench zoo:mnist_mlp -r 2 -w 0 --no-huge-pages; has out "ordinary pages"
expect 0 "$mp" bench zoo:mnist_mlp -r 3 -w 1 --peer xnnpack
for s in "Time, us" "later runs" "Memory" "Resident memory" "xnnpack" "/static"; do
  has out "$s"
done
# the MLP runs in microseconds: the table is in us, so its later runs' medians are not 0.000
awk '/^later runs/ { on = 1; next } on && /^  [a-z]/ { print $4 } on && !/^  / { on = 0 }' \
  "$tmp/out" >"$tmp/medians"
[ "$(wc -l <"$tmp/medians")" -eq 4 ] || fail "later runs: not four rows: $(cat "$tmp/out")"
grep -qx '0.000' "$tmp/medians" && fail "a later-run median printed as 0.000: $(cat "$tmp/medians")"
# MobileNet v2 runs in milliseconds: the table stays in ms
expect 0 "$mp" bench zoo:mobilenet_v2 -r 1 -w 0; has out "Time, ms"
cp "$tmp/out" "$tmp/bench.txt"; text_ok "$tmp/bench.txt"
expect 0 "$mp" bench zoo:mnist_mlp -r 3 -w 1 --peer xnnpack --format json -o "$tmp/b.json"
[ -s "$tmp/out" ] && fail "bench -o printed on stdout: $(head -c 200 "$tmp/out")"
jcheck "$tmp/b.json" '
need(j.get("format") == "memprof-bench" and j.get("version") == 2, "format/version")
for k in ("model", "threads", "runs", "warmup", "shape_at", "shapes", "modes", "rss"):
    need(k in j, "no field " + k)
need(j["runs"] == 3 and j["warmup"] == 1 and j["threads"] == 1, "runs/warmup/threads")
need(j.get("huge_pages") is True, "huge_pages is not true by default")
names = [m["name"] for m in j["modes"]]
need(names == ["static", "dynamic", "auto", "xnnpack"], "modes %s" % names)
stat = ("n", "mean_ns", "median_ns", "min_ns", "max_ns", "geomean_ns")
memk = ("first_run_allocations", "first_run_bytes", "later_run_allocations_max",
        "later_run_max_bytes", "peak_bytes", "peak_ratio_to_static")
for m in j["modes"]:
    peer = m["name"] == "xnnpack"
    need(m["kind"] == ("peer" if peer else "memory_mode"), m["name"] + " kind")
    for ph in ("load", "prepare", "first_run", "later_runs"):
        s = m[ph]
        if peer and ph == "load":
            need(s is None, "the peer has a load phase")
            continue
        for k in stat:
            need(k in s, "%s %s lacks %s" % (m["name"], ph, k))
        need(s["min_ns"] <= s["median_ns"] <= s["max_ns"], "%s %s: min/median/max" % (m["name"], ph))
        need(s["min_ns"] <= s["geomean_ns"] <= s["mean_ns"], "%s %s: geomean" % (m["name"], ph))
        need(s["n"] == (3 if ph == "later_runs" else 1), "%s %s: n %s" % (m["name"], ph, s["n"]))
        need(ph in m["ratio_to_static"], "%s: no ratio for %s" % (m["name"], ph))
    for k in memk + (("workspace_bytes", "live_bytes", "run_allocations") if peer
                     else ("static_bytes", "dynamic_bytes", "dup_bytes")):
        need(k in m["memory"], "%s memory lacks %s" % (m["name"], k))
    need(m["memory"]["peak_bytes"] > 0, m["name"] + " peak 0")
M = {m["name"]: m["memory"] for m in j["modes"]}
need(j["modes"][0]["ratio_to_static"]["later_runs"] == 1.0, "static ratio is not 1")
# planned modes allocate nothing in a run after the first; the dynamic mode does
need(M["static"]["later_run_allocations_max"] == 0, "static: later runs allocate")
need(M["auto"]["later_run_allocations_max"] == 0, "auto: later runs allocate")
need(M["dynamic"]["later_run_allocations_max"] > 0, "dynamic: later runs allocate nothing")
need(M["dynamic"]["static_bytes"] == 0 and M["static"]["dynamic_bytes"] == 0, "static/dynamic bytes")
need(M["xnnpack"]["run_allocations"] == 0, "the peer allocates while running")
need(len(j["rss"]) >= 8, "rss steps %d" % len(j["rss"]))
for r in j["rss"]:
    need(r["rss_bytes"] > 0 and r["hwm_bytes"] >= r["rss_bytes"] and "recorded_bytes" in r,
         "rss step %s" % r)
need(j["rss"][0]["after"] == "start" and j["rss"][-1]["after"].startswith("later runs"), "rss labels")
'
# a shape change after prepare, in every mode
expect 0 "$mp" bench zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --shape-at run -r 2 -w 0 \
  --format json -o "$tmp/b2.json"
jcheck "$tmp/b2.json" '
need(j["shape_at"] == "run" and j["shapes"][0]["dims"] == [1, 96, 96, 3], "shapes %s" % j["shapes"])
for m in j["modes"]:
    need(m["memory"]["dup_bytes"] == 0, m["name"] + " holds a tensor twice")
'
expect 3 "$mp" bench zoo:mnist_mlp -r 1 --format json -o "$tmp/no/such/dir/b.json"
[ -e "$tmp/no" ] && fail "a failed bench left a file"

# ---- scenarios ----------------------------------------------------------------------------
expect 0 "$mp" scenarios zoo:mnist_mlp --shape input=1,28,28,1 -r 2 -w 1
for c in A B C D E; do grep -q "^$c " "$tmp/out" || fail "scenarios: no row for case $c"; done
has out "flagged: none"
cp "$tmp/out" "$tmp/sc.txt"; text_ok "$tmp/sc.txt"
# the MLP runs in microseconds: the time columns are in us and no later median is 0.000
has out "run us  med. us"
awk '/^[A-E] / { print $5 }' "$tmp/sc.txt" | grep -qx '0.000' &&
  fail "scenarios: a later median printed as 0.000: $(grep -E '^[A-E] ' "$tmp/sc.txt")"

m=$shared/models/tiny_ic_resnet8_float.tflite
if [ -z "$shared" ] || [ ! -f "$m" ]; then
  echo "SKIP (partly): $m absent; the scenario table's figures and the peer's refusal are not checked"
  exit $((fails ? 1 : 0))
fi
# the model reached through a path longer than a line: titles keep 80 columns and the file
# name (CI's checkout path once cut a title short)
deep=$tmp/a-directory-with-a-rather-long-name/and-another-one-below-it/and-a-third-one-too
mkdir -p "$deep" && ln -s "$(cd "$(dirname "$m")" && pwd)/$(basename "$m")" "$deep/resnet8.tflite"
m=$deep/resnet8.tflite

# The arena each batch needs, derived here from `memprof inspect`'s operator list and tensor
# shapes (not from any memory figure): a non-constant tensor lives from the first operator
# using it to the last (model inputs from step 0, outputs to the last step); its bytes are
# its elements (batch dimension = N) x 4 (every such tensor is f32), rounded up to 64; the
# lower bound is the largest sum over one step; an arena is that plus 16 bytes.
"$mp" inspect "$m" > "$tmp/inspect.txt" || fail "inspect $m"
arena() {
  awk -v N="$1" '
    /^inputs/ {sect = "in"; next}
    /^outputs/ {sect = "out"; next}
    /^operators/ {sect = "ops"; next}
    /^tensors \(/ {sect = "t"; next}
    NF == 0 {next}
    sect == "in" {isin[$1] = 1}
    sect == "out" {isout[$1] = 1}
    sect == "ops" && $1 ~ /^#/ {
      op = substr($1, 2) + 0; if (op + 1 > nops) nops = op + 1
      line = $0; gsub(/[()]/, " ", line); n = split(line, f, " ")
      for (i = 3; i <= n; i++) if (f[i] != "->") uses[op] = uses[op] " " f[i]
    }
    sect == "t" {
      c = ($1 == "*"); idx = c ? $2 : $1; konst[idx] = c
      for (i = 2; i <= NF; i++) if ($i ~ /^\[/) break
      s = $i; gsub(/[\[\]]/, "", s); k = split(s, d, ",")
      e = 1; for (q = 1; q <= k; q++) e *= (q == 1 ? N : d[q])
      bytes[idx] = int((e * 4 + 63) / 64) * 64
    }
    END {
      for (op = 0; op < nops; op++) {
        k = split(uses[op], u, " ")
        for (q = 1; q <= k; q++) {
          t = u[q]; if (konst[t]) continue
          if (!(t in first) || op < first[t]) first[t] = op
          if (!(t in last) || op > last[t]) last[t] = op
        }
      }
      for (t in isin) first[t] = 0
      for (t in isout) last[t] = nops - 1
      best = 0
      for (s = 0; s < nops; s++) {
        sum = 0
        for (t in first) if (first[t] <= s && s <= last[t]) sum += bytes[t]
        if (sum > best) best = sum
      }
      print best + 16
    }' "$tmp/inspect.txt"
}
a1=$(arena 1); a2=$(arena 2); a3=$(arena 3)
[ "$a1" -gt 16 ] && [ "$a2" -gt "$a1" ] && [ "$a3" -gt "$a2" ] ||
  fail "derived arenas for batch 1, 2, 3: '$a1' '$a2' '$a3'"
echo "derived arenas: batch 1 $a1, batch 2 $a2, batch 3 $a3 bytes"

# S1 = batch 2, S2 = batch 3: A keeps the file's batch 1; B plans batch 2; C plans batch 1 at
# prepare, then batch 2 (never both at once: static bytes are the larger); D plans batch 1,
# then batches 2 and 3 in turn; E plans batch 2, then batch 3.
expect 0 "$mp" scenarios "$m" --shape input_1=2,32,32,3 --shape input_1=3,32,32,3 -r 3 -w 1 \
  --format json -o "$tmp/s.json"
jcheck "$tmp/s.json" "
need(j['format'] == 'memprof-scenarios' and j['version'] == 3, 'format/version')
for k in ('model', 'mode', 'threads', 'runs', 'warmup', 'keep_stale_arena', 'cases', 'flagged'):
    need(k in j, 'no field ' + k)
want = {'A': $a1, 'B': $a2, 'C': $a2, 'D': $a3, 'E': $a3}
need([c['case'] for c in j['cases']] == list('ABCDE'), 'cases')
for c in j['cases']:
    n = c['case']
    for k in ('calls', 'shape_at', 'shapes', 'runs', 'first_run_ns', 'later_runs',
              'static_bytes', 'dynamic_bytes', 'peak_bytes', 'dup_bytes', 'first_run_allocations',
              'first_run_bytes', 'later_run_allocations_max', 'later_run_max_bytes',
              'plans_made', 'plans_reused', 'flags'):
        need(k in c, n + ' lacks ' + k)
    need(c['static_bytes'] == want[n], '%s: static bytes %d, derived %d' % (n, c['static_bytes'], want[n]))
    need(c['dynamic_bytes'] == 0, '%s: dynamic bytes %d' % (n, c['dynamic_bytes']))
    need(c['dup_bytes'] == 0, '%s: duplicated bytes %d' % (n, c['dup_bytes']))
    need(c['peak_bytes'] >= c['static_bytes'], '%s: peak below the arena' % n)
    need(c['runs'] == 5, '%s: %d runs' % (n, c['runs']))
    need(c['flags'] == [], '%s flagged %s' % (n, c['flags']))
    if n != 'D':
        need(c['later_run_allocations_max'] == 0, '%s: a later run allocates' % n)
need(j['flagged'] == 0, 'flagged')
P = {c['case']: c for c in j['cases']}
need(P['D']['plans_made'] == 3, 'D: plans made %d (batches 1, 2, 3)' % P['D']['plans_made'])
need(P['B']['peak_bytes'] - P['B']['static_bytes'] > 0, 'B: nothing beside the arena')
"
# the peak column is the heap peak `memprof run` reports for the same call order, less the
# caller's own buffers alive then (run copies the outputs out for its summary, and records
# those copies; the scenarios' sessions do not)
peak_of() { "$py" -c 'import json,sys; print([c for c in json.load(open(sys.argv[1]))["cases"] if c["case"] == sys.argv[2]][0]["peak_bytes"])' "$tmp/s.json" "$1"; }
run_peak() {
  local heap caller
  heap=$(grep '^Heap peak' "$tmp/out" | sed 's/.*(\([0-9]*\) B).*/\1/')
  caller=$(sed -n -e "s/^  of io: caller's *\([0-9]*\) B .*/\1/p" \
    -e "s/^  of io: caller's *[0-9.]* [KMG]iB (\([0-9]*\) B).*/\1/p" "$tmp/out" | head -1)
  echo $((heap - ${caller:-0}))
}
expect 0 "$mp" run "$m" --runs 5 --exact; [ "$(run_peak)" = "$(peak_of A)" ] ||
  fail "A: peak $(peak_of A), memprof run says $(run_peak)"
expect 0 "$mp" run "$m" --shape input_1=2,32,32,3 --runs 5 --exact; [ "$(run_peak)" = "$(peak_of B)" ] ||
  fail "B: peak $(peak_of B), memprof run says $(run_peak)"

# --strict: passes with the policy, fails (exit 1) with the stale arena kept, naming the cases
expect 0 "$mp" scenarios "$m" --shape input_1=2,32,32,3 -r 2 -w 0 --strict
has out "flagged: none"
expect 1 "$mp" scenarios "$m" --shape input_1=2,32,32,3 -r 2 -w 0 --strict --keep-stale-arena
has err "case C is flagged"; has out "dup"
cp "$tmp/out" "$tmp/stale.txt"; text_ok "$tmp/stale.txt"
expect 0 "$mp" scenarios "$m" --shape input_1=2,32,32,3 -r 2 -w 0 --keep-stale-arena \
  --format json -o "$tmp/stale.json"
jcheck "$tmp/stale.json" "
P = {c['case']: c for c in j['cases']}
need(P['C']['dup_bytes'] > 0 and 'dup' in P['C']['flags'], 'C: no duplicated bytes flagged')
need(P['A']['dup_bytes'] == 0 and P['B']['dup_bytes'] == 0, 'A/B hold tensors twice')
need(j['flagged'] >= 1 and j['keep_stale_arena'] is True, 'flagged')
"
# an impossible shape (outside the signature): exit 6 before any case runs
expect 6 "$mp" scenarios "$m" --shape input_1=1,31,32,3 -r 1

# the peer refuses a model with an operator XNNPACK's runtime lacks, naming it
m2=$shared/models/mpromonet_mnist.tflite
if [ -f "$m2" ]; then
  expect 5 "$mp" bench "$m2" -r 1 -w 0 --peer xnnpack; has err "TANH"
  [ -s "$tmp/out" ] && fail "a refused bench printed a table"
  expect 0 "$mp" bench "$m2" -r 1 -w 0
else
  echo "SKIP (partly): $m2 absent; the peer's refusal is not checked"
fi

[ "$fails" -eq 0 ] && echo "bench/scenarios: all checks passed"
exit $((fails > 0))
