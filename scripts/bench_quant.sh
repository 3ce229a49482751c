#!/usr/bin/env bash
# The int8 model against XNNPACK's own runtime and against its float original, in one run:
# zoo:mobilenet_v2_int8 in static mode against the peer (memprof bench --peer xnnpack) at 1
# and 2 threads, the ratio static / xnnpack of the later runs' medians in each of several
# benches and the median of those ratios, with the medians themselves beside (as
# bench_peer.sh, with the default huge-page pool); then the heap peak of the int8 model
# against the float zoo:mobilenet_v2's, in static mode and in the peer (exact bytes from
# memprof-bench JSON, docs/json.md).
# Usage: scripts/bench_quant.sh [RUNS] [REPEATS]
# (default 40 timed runs after 5 warm-up runs, 5 repetitions; BUILD_DIR, default build/,
# chooses the build folder). Needs python3 (JSON).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-40}
reps=${2:-5}
int8=zoo:mobilenet_v2_int8
float=zoo:mobilenet_v2
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target memprof >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# field FILE MODE KEY... : one number of a memprof-bench JSON (mode by name)
field() {
  python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
v = next(m for m in doc["modes"] if m["name"] == sys.argv[2])
for k in sys.argv[3:]:
    v = v[k]
print(v)
PY
}
# bench MODEL T N : one bench with the peer, JSON in $tmp/last.json
bench() {
  "$build/memprof" bench "$1" --peer xnnpack --threads "$2" -r "$3" -w 5 --format json \
    -o "$tmp/last.json"
}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
echo "$int8: static / xnnpack, later-run medians of $runs runs, $reps benches each"
echo "(command: memprof bench $int8 --peer xnnpack --threads T -r $runs -w 5 --format json)"
for t in 1 2; do
  ratios=() ms_s=() ms_x=()
  for _ in $(seq "$reps"); do
    bench "$int8" "$t" "$runs"
    s=$(field "$tmp/last.json" static later_runs median_ns | awk '{printf "%.6f", $1 / 1e6}')
    x=$(field "$tmp/last.json" xnnpack later_runs median_ns | awk '{printf "%.6f", $1 / 1e6}')
    ms_s+=("$s") ms_x+=("$x")
    ratios+=("$(awk -v s="$s" -v x="$x" 'BEGIN {printf "%.3f", s / x}')")
  done
  printf 'threads %d: static / xnnpack %s -> median %s (static %.3f ms, xnnpack %.3f ms)\n' \
    "$t" "${ratios[*]}" "$(median "${ratios[@]}")" "$(median "${ms_s[@]}")" \
    "$(median "${ms_x[@]}")"
done
echo "heap peak, int8 / float (command: memprof bench MODEL --peer xnnpack -r 3 --format json)"
bench "$int8" 1 3
cp "$tmp/last.json" "$tmp/int8.json"
bench "$float" 1 3
for mode in static xnnpack; do
  q=$(field "$tmp/int8.json" "$mode" memory peak_bytes)
  f=$(field "$tmp/last.json" "$mode" memory peak_bytes)
  awk -v m="$mode" -v q="$q" -v f="$f" 'BEGIN {
    printf "%-8s %s %d bytes (%.2f MiB), %s %d bytes (%.2f MiB): int8 / float %.3f\n",
           m, "int8", q, q / 1048576, "float", f, f / 1048576, q / f }'
done
