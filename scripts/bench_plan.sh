#!/usr/bin/env bash
# Planning benchmark (Release build in $BUILD_DIR, default build).
#
#   scripts/bench_plan.sh [REPS]      tools/bench_plan.c: every planner on synthetic CNN-like
#                                     graphs of 100, 1000 and 5000 buffers (arena bytes, ratio
#                                     to the live-set lower bound, median planning time), then
#                                     how often each reaches the bound on batches of random
#                                     graphs (default 21 repetitions).
#   scripts/bench_plan.sh --models [N...]
#                                     memprof plan on models of N operators (default 1000
#                                     10000 100000) written by tools/gen_model.c: a chain of
#                                     RELUs and 16 interleaved branches with skips ("wide").
#                                     Per model: the whole command's wall time and peak
#                                     resident memory, and each planner's arena and time
#                                     (plan's own figure: a median while under 50 ms).
#                                     MEMPROF=path times another memprof binary (e.g. an
#                                     older build) on the same models.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ "${1:-}" != "--models" ]; then
  cmake --build "$build" -j"$(nproc)" --target bench_plan >/dev/null
  exec "./$build/bench_plan" "${1:-21}"
fi
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
[ -x /usr/bin/time ] || { echo "bench_plan: --models needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }
cmake --build "$build" -j"$(nproc)" --target memprof gen_model >/dev/null
memprof=${MEMPROF:-./$build/memprof}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-12s %9s %9s   %s\n' model 'wall s' 'peak MiB' 'planner: arena bytes / time ms'
for n in "${sizes[@]}"; do
  for kind in chain wide; do
    "./$build/gen_model" "$kind" "$n" "$tmp/m.tflite"
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$memprof" plan "$tmp/m.tflite" --format json \
      -o "$tmp/p.json" 2>"$tmp/err" || { echo "$kind-$n: $(head -c 200 "$tmp/err")"; continue; }
    read -r wall kb <"$tmp/time"
    /usr/bin/python3 - "$tmp/p.json" "$kind-$n" "$wall" "$kb" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
cells = " ".join("%s: %d / %.1f" % (r["name"], r["arena_bytes"], r["time_ns"] / 1e6)
                 for r in p["planners"])
print("%-12s %9s %9.0f   %s" % (sys.argv[2], sys.argv[3], int(sys.argv[4]) / 1024, cells))
PY
  done
done
