#!/bin/bash
# Benchmark of issue 18: a model split into parts and run as a chain against the whole model.
# Side by side in one run, in turns (whole, chain under bind, chain under copy), each the
# median of its timed runs, the median of ROUNDS such rounds reported with the ratios:
#   bind / whole   goal <= 1.02 (zero copy: the chain costs what the model costs)
#   copy / whole   the cost of the copies at every boundary (and their bytes per run)
# Usage: scripts/bench_pipeline.sh [MEMPROF] [MODEL] [CUTS] [ROUNDS] [RUNS]
#   defaults: build/memprof zoo:mobilenet_v2 "22 44" 15 50
set -euo pipefail
mp=${1:-build/memprof}
model=${2:-zoo:mobilenet_v2}
cuts=${3:-"22 44"}
rounds=${4:-15}
runs=${5:-50}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
at=()
for c in $cuts; do at+=(--at "$c"); done
"$mp" split "$model" "${at[@]}" -o "$tmp/part" > /dev/null
parts=("$tmp"/part-*.tflite)
med() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
jget() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
: > "$tmp/whole"; : > "$tmp/bind"; : > "$tmp/copy"
for r in $(seq "$rounds"); do
  "$mp" run "$model" --io bind --runs "$runs" --warmup 3 --record off |
    sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' >> "$tmp/whole"
  for io in bind copy; do
    "$mp" pipeline "${parts[@]}" --io $io --runs "$runs" --warmup 3 --record off --json "$tmp/$io.json" > /dev/null
    jget "$tmp/$io.json" 'j["time"]["median_ns"] / 1e6' >> "$tmp/$io"
  done
done
w=$(med < "$tmp/whole"); b=$(med < "$tmp/bind"); c=$(med < "$tmp/copy")
cb=$(jget "$tmp/copy.json" 'j["copy_bytes_per_run"]')
cn=$(jget "$tmp/copy.json" 'j["copies_per_run"]')
bn=$(jget "$tmp/bind.json" 'j["copies_per_run"]')
printf '%s in %d parts (cuts before %s), %d rounds x %d runs, medians\n' "$model" "${#parts[@]}" "$cuts" "$rounds" "$runs"
printf '  whole model (--io bind)   %8.3f ms\n' "$w"
printf '  chain --io bind           %8.3f ms  ratio %.3f (goal <= 1.02)  copies/run %s\n' "$b" "$(echo "$b / $w" | bc -l)" "$bn"
printf '  chain --io copy           %8.3f ms  ratio %.3f  copies/run %s, %s bytes/run\n' "$c" "$(echo "$c / $w" | bc -l)" "$cn" "$cb"
