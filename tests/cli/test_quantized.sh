#!/usr/bin/env bash
# Quantized (int8 / uint8) models through the whole tool (issue 15): every quantized model in
# ../shared/models runs in each memory mode with the same output bytes (the memory manager
# never changes a number) and a balanced trace; a quantized output is summarised as raw
# integers and as real values (checked here with awk from the printed scale and zero point);
# TensorFlow Lite Micro's int8 sine model computes sine within its training error at a batch
# the file does not have; the call orders A-E on a quantized model with a free batch; the CI
# gate on an int8 model.
# Usage: test_quantized.sh MEMPROF SHARED_DIR
set -u
mp=$1
shared=${2:-}
. "$(dirname "$0")/lib.sh"
models=$shared/models
if [ ! -d "$models" ]; then
  echo "SKIP: $models is absent (the shared real models); nothing to check"
  exit 77
fi

# Every int8 / uint8 model (an input of that dtype) runs in every mode with identical outputs.
n=0
for m in "$models"/*.tflite; do
  "$mp" inspect "$m" 2>/dev/null | sed -n '/^inputs/,/^outputs/p' | grep -qE ' (i8|u8) ' || continue
  name=$(basename "$m" .tflite)
  for mode in static dynamic auto; do
    expect 0 "$mp" run "$m" --memory "$mode" --runs 2 --output-dir "$tmp/$name.$mode"
    has out "every byte allocated has been freed"
    has out "Duplicated bytes      0 B"
  done
  for mode in dynamic auto; do
    cmp -s "$tmp/$name.static/output_0.bin" "$tmp/$name.$mode/output_0.bin" ||
      fail "$name: output 0 differs between static and $mode memory"
  done
  n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "expected at least 8 quantized models in $models, ran $n"
echo "ran $n quantized models in static, dynamic and auto memory"

# The summary of a quantized output: raw integers, then real values scale * (q - zero_point).
sine=$models/tfmicro_hello_world_int8.tflite
expect 0 "$mp" run "$sine"
line=$(grep '^output 0' "$tmp/out")
scale=$(sed -n 's/.*(scale \([^,]*\), zero point \([-0-9]*\)).*/\1/p' <<<"$line")
zp=$(sed -n 's/.*(scale \([^,]*\), zero point \([-0-9]*\)).*/\2/p' <<<"$line")
[ -n "$scale" ] && [ -n "$zp" ] || fail "output 0 line lacks scale and zero point: $line"
raw=$(awk '/^  raw   min/ {print $3; exit}' "$tmp/out")
real=$(awk '/^  real  min/ {print $3; exit}' "$tmp/out")
awk -v s="$scale" -v z="$zp" -v q="$raw" -v r="$real" \
  'BEGIN { d = s * (q - z) - r; exit !(d < 1e-5 * (1 + (r < 0 ? -r : r)) && d > -1e-5 * (1 + (r < 0 ? -r : r))) }' ||
  fail "real min $real is not scale $scale * (raw $raw - zero point $zp)"

# The int8 sine model at batch 8 (its file has batch 1, signature [-1,1]): x = k * 0.78 for
# k = 0..7 (input q = -128 + 32k at the input's scale); the outputs approximate sin(x).
in_scale=$("$mp" inspect "$sine" | sed -n '/^inputs/,/^outputs/p' | sed -n 's/.*q scale=\([^ ]*\) zp=.*/\1/p' | head -1)
printf "$(printf '\\%03o' 128 160 192 224 0 32 64 96)" >"$tmp/sine_in.bin"
expect 0 "$mp" run "$sine" --shape 0=8,1 --input 0="$tmp/sine_in.bin" --output-dir "$tmp/sine"
od -An -v -t d1 "$tmp/sine/output_0.bin" | tr -s ' ' '\n' | grep -v '^$' >"$tmp/sine_q.txt"
[ "$(wc -l <"$tmp/sine_q.txt")" -eq 8 ] || fail "sine at batch 8 gave $(wc -l <"$tmp/sine_q.txt") outputs"
awk -v is="$in_scale" -v os="$scale" -v oz="$zp" '
  { x = is * 32 * (NR - 1); y = os * ($1 - oz); d = y - sin(x); if (d < 0) d = -d
    if (d > 0.15) { printf "x %.3f: %.3f, sin %.3f\n", x, y, sin(x); bad = 1 } }
  END { exit bad }' "$tmp/sine_q.txt" || fail "the int8 sine model is not near sine at batch 8"

# The call orders A-E with the free batch: every case runs, none holds a tensor twice or
# allocates in a run it should not (--strict exits 1 on either).
expect 0 "$mp" scenarios "$sine" --shape 0=4,1 --shape 0=9,1 --runs 3 --strict
for c in A B C D E; do grep -q "^$c  " "$tmp/out" || fail "scenarios lacks case $c"; done

# The CI gate on an int8 model: a generous limit passes, a tiny one fails with exit 1.
resnet=$models/tiny_ic_resnet8_quant.tflite
expect 0 "$mp" check "$resnet" --max-peak 64MiB
expect 1 "$mp" check "$resnet" --max-peak 1KiB
has out "FAIL"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
