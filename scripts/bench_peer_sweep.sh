#!/usr/bin/env bash
# Static mode against XNNPACK's own runtime on every real model that the peer can express:
# per model, REPEATS runs of `memprof bench MODEL --peer xnnpack --threads THREADS -r N -w
# WARMUP --format json`, and one line with the medians over those benches of static's and
# xnnpack's later-run medians (ms) and of their ratio static / xnnpack; at the end the median
# of the models' ratios (1.00 or less: static is at least as fast). N is RUNS, or more for a
# model whose run is short (enough runs for about 0.3 s per contestant at the fastest of 3
# probing runs, at most 2000), so that a median of microsecond runs is stable too. Models the peer refuses (an operator
# XNNPACK's runtime has no equivalent of) or memprof cannot run are listed with the reason.
# With BEFORE=BINARY (an older memprof), every bench is run with it too, alternating with
# this build bench by bench, and each line shows its figures beside this build's.
# Usage: scripts/bench_peer_sweep.sh [RUNS] [WARMUP] [REPEATS] [MODEL...]
# (default 15 runs, 3 warm-up, 3 benches per model, every ../shared/models/*.tflite);
# THREADS (default 1), BUILD_DIR (default build), MEMPROF (a binary) and BEFORE in the
# environment.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
warmup=${2:-3}
reps=${3:-3}
shift $(($# < 3 ? $# : 3))
threads=${THREADS:-1}
build=${BUILD_DIR:-build}
if [ -z "${MEMPROF:-}" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target memprof >/dev/null
fi
memprof=${MEMPROF:-./$build/memprof}
before=${BEFORE:-}
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  [ -d ../shared/models ] || { echo "bench_peer_sweep: ../shared/models not found" >&2; exit 1; }
  models=(../shared/models/*.tflite)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

# fig FILE: "static_ms xnnpack_ms" of one bench's later runs (medians)
fig() {
  "$py" - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["name"]: x["later_runs"]["median_ns"] for x in d["modes"]}
print("%.6f %.6f" % (m["static"] / 1e6, m["xnnpack"] / 1e6))
EOF
}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
# bench BINARY MODEL N: "static_ms xnnpack_ms ratio" of one bench
bench() {
  "$1" bench "$2" --peer xnnpack --threads "$threads" -r "$3" -w "$warmup" --format json \
    -o "$tmp/b.json"
  local s x
  read -r s x < <(fig "$tmp/b.json")
  echo "$s $x $(awk -v s="$s" -v x="$x" 'BEGIN { printf "%.3f", s / x }')"
}
# figures ROWS...: "static xnnpack ratio" medians of rows of bench's three figures
figures() {
  local ss=() xs=() rs=() s x r
  for row in "$@"; do
    read -r s x r <<<"$row"
    ss+=("$s") xs+=("$x") rs+=("$r")
  done
  printf '%11.6f %11.6f %7s' "$(median "${ss[@]}")" "$(median "${xs[@]}")" "$(median "${rs[@]}")"
}

echo "static / xnnpack, $threads thread(s): per model the medians of $reps benches of"
echo "  memprof bench MODEL --peer xnnpack --threads $threads -r N -w $warmup --format json"
echo "  (N = $runs, or enough runs for 0.3 s per contestant, at most 2000)"
cols=$(printf '%11s %11s %7s' 'static ms' 'xnnpack ms' ratio)
if [ -n "$before" ]; then
  echo "before: $before; after: $memprof (alternating bench by bench)"
  printf '%-40s %5s   %-31s   %s\n' '' '' before after
  printf '%-40s %5s   %s   %s\n' model N "$cols" "$cols"
else
  printf '%-40s %5s   %s   %s\n' model N "$cols" 'ratios of the benches'
fi
ratios=() ratios_before=() skipped=()
for m in "${models[@]}"; do
  name=$(basename "$m" .tflite)
  set +e
  "$memprof" bench "$m" --peer xnnpack --threads "$threads" -r 3 -w 1 --format json \
    -o "$tmp/b.json" 2>"$tmp/err"
  rc=$?
  set -e
  if [ $rc -ne 0 ]; then
    skipped+=("$name: $(head -n 1 "$tmp/err" | sed 's/^memprof[a-z ]*: //' | cut -c 1-160)")
    continue
  fi
  # the fastest of the probe's runs: a run slowed by the machine's load must not cut N
  s0=$("$py" -c 'import json, sys
print(min(x["later_runs"]["min_ns"] for x in json.load(open(sys.argv[1]))["modes"]
          if x["name"] == "static") / 1e6)' "$tmp/b.json")
  n=$(awk -v r="$runs" -v s="$s0" 'BEGIN { n = s > 0 ? int(300 / s) : 2000; if (n > 2000) n = 2000;
                                         if (n < r) n = r; print n }')
  rows=() rows_before=()
  for _ in $(seq "$reps"); do
    [ -z "$before" ] || rows_before+=("$(bench "$before" "$m" "$n")")
    rows+=("$(bench "$memprof" "$m" "$n")")
  done
  after=$(figures "${rows[@]}")
  ratios+=("${after##* }")
  if [ -n "$before" ]; then
    was=$(figures "${rows_before[@]}")
    ratios_before+=("${was##* }")
    printf '%-40s %5d   %s   %s\n' "$name" "$n" "$was" "$after"
  else
    printf '%-40s %5d   %s   %s\n' "$name" "$n" "$after" "$(printf '%s ' "${rows[@]##* }")"
  fi
done
if [ ${#ratios[@]} -gt 0 ]; then
  if [ -n "$before" ]; then
    printf 'median ratio over %d models: before %s, after %s\n' "${#ratios[@]}" \
      "$(median "${ratios_before[@]}")" "$(median "${ratios[@]}")"
  else
    printf 'median ratio over %d models: %s\n' "${#ratios[@]}" "$(median "${ratios[@]}")"
  fi
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "skipped (${#skipped[@]}):"
  printf '  %s\n' "${skipped[@]}"
fi
