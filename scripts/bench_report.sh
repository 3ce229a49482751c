#!/usr/bin/env bash
# Scale benchmark of saved traces: builds (Release), writes one large realistic trace once
# (tools/trace_gen: a recorded MobileNet v2 session whose run is repeated up to EVENTS
# events) into a temporary folder, then prints the wall time and peak RSS (GNU time) of
# reading it: a full pass through a file source (tools/trace_scan), the summary over the
# source (two passes), mp_trace_load (the whole trace in memory, for comparison), and
# `memprof report TRACE --format F -o OUT` for each format F (n/a when the command fails,
# e.g. a format memprof does not have yet). Then the same for a trace of as many events
# made of many short runs (MNIST MLP: about 24 events per run, so 10M events are 400k runs),
# where a cost per run shows (a search over the runs made 200k runs take 21 s instead of
# 2 s). The folder is removed at the end.
# Usage: [BUILD_DIR=build] scripts/bench_report.sh [EVENTS=10000000]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-10000000}
build=${BUILD_DIR:-build} # (BUILD_DIR: another build folder)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target memprof trace_gen trace_scan >/dev/null
[ -x /usr/bin/time ] || { echo "bench_report: needs GNU time (/usr/bin/time)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mp_bench_report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trace=$tmp/trace.json

t0=$(date +%s.%N)
gen=$("$build/trace_gen" "$trace" "$events")
t1=$(date +%s.%N)
n=$(sed -n 's/^[^:]*: \([0-9]*\) events.*/\1/p' <<<"$gen")
size=$(stat -c %s "$trace")
printf 'trace    %s events, %.1f MB (%d bytes/event), written in %.1f s\n' "$n" \
  "$(awk -v s="$size" 'BEGIN { print s / 1e6 }')" "$((size / n))" \
  "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
echo "         ${gen#*: }"
printf '%-48s %10s %12s\n' "command" "wall" "peak RSS"

# run LABEL CMD...: one line with the wall time and peak RSS, or n/a when CMD fails.
run() {
  local label=$1
  shift
  if /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err"; then
    read -r wall kib < <(tail -n 1 "$tmp/time")
    printf '%-48s %8s s %8.1f MiB\n' "$label" "$wall" "$(awk -v k="$kib" 'BEGIN { print k / 1024 }')"
    return 0
  fi
  local why
  why=$(head -n 1 "$tmp/err" | cut -c1-60)
  printf '%-48s %10s %12s   (%s)\n' "$label" "n/a" "n/a" "${why:-failed}"
  return 1
}

run "source pass (trace_scan)" "$build/trace_scan" "$trace" && pass=$(cat "$tmp/out")
run "summary over the source (trace_scan --summary)" "$build/trace_scan" "$trace" --summary || true
run "mp_trace_load (trace_scan --load)" "$build/trace_scan" "$trace" --load || true
for f in text json svg html chrome; do
  run "memprof report --format $f" "$build/memprof" report "$trace" --format "$f" \
    -o "$tmp/report.$f" || true
done
runs_trace=$tmp/runs.json
gen=$("$build/trace_gen" "$runs_trace" "$events" --model zoo:mnist_mlp)
rm -f "$trace" # one large trace on disk at a time
echo "runs     ${gen#*: }"
run "memprof report, many runs (text)" "$build/memprof" report "$runs_trace" \
  -o "$tmp/report.txt" || true
if [ -n "${pass:-}" ]; then
  echo "source pass: $(sed 's/^[^;]*; open [0-9.]* s; a pass: //; s/ (checksum.*//' <<<"$pass")"
fi
