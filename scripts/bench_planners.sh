#!/usr/bin/env bash
# Planner goals of issue 5, measured: for every shared model memprof can plan (and the zoo's),
# the live-set lower bound, our default plan, the best published planner (greedy, firstfit,
# breadth), and XNNPACK's runtime workspace counted on the same tensors (no inputs/outputs).
# Usage: scripts/bench_planners.sh [SHARED_DIR]   (default ../shared)
# Then the planning time of synthetic graphs (scripts/bench_plan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target memprof bench_plan >/dev/null
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

models=(zoo:mnist_mlp zoo:mobilenet_v1 zoo:mobilenet_v2)
if [ -d "$shared/models" ]; then
  for m in "$shared"/models/*.tflite; do models+=("$m"); done
else
  echo "($shared/models not found: zoo models only)"
fi

printf '%-40s %10s %10s %10s %5s %5s %10s %10s\n' model bound default published '=LB' '<=P' xnnpack ours
for m in "${models[@]}"; do
  name=$(basename "$m" .tflite)
  set +e
  "$build/memprof" plan "$m" --format json --peer xnnpack -o "$tmp/p.json" 2>"$tmp/err"
  rc=$?
  set -e
  if [ ! -s "$tmp/p.json" ] || { [ $rc -ne 0 ] && [ $rc -ne 5 ]; }; then
    printf '%-40s %s\n' "${name:0:40}" "not planned: $(head -c 60 "$tmp/err")"
    rm -f "$tmp/p.json"
    continue
  fi
  "$py" - "$tmp/p.json" "${name:0:40}" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
arena = {r["name"]: r["arena_bytes"] for r in p["planners"]}
default = p["plan"]["arena_bytes"]
pub = min(arena[n] for n in ("greedy", "firstfit", "breadth"))
peer = p.get("peer", {})
xw = str(peer["workspace_bytes"]) if "workspace_bytes" in peer else "n/a"
ours = p["ours"]["without_io_bytes"]
print("%-40s %10d %10d %10d %5s %5s %10s %10d" % (
    sys.argv[2], p["lower_bound_bytes"], default, pub,
    "yes" if default == p["lower_bound_bytes"] else "NO",
    "yes" if default <= pub else "NO", xw, ours))
PY
  rm -f "$tmp/p.json"
done
echo
echo "bound: live-set lower bound (64-byte slots); default: our default planner's arena;"
echo "published: the smallest of greedy (TFLite), firstfit (ONE), breadth (Pisarchyk & Lee);"
echo "=LB: default equals the bound; <=P: default is no worse than published;"
echo "xnnpack / ours: XNNPACK's runtime workspace and our arena on the same tensors"
echo "(the model's inputs and outputs left out, as XNNPACK keeps them outside)."
echo
"$build/bench_plan"
