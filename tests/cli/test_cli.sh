#!/usr/bin/env bash
# Command-line behaviour of memprof: help for every command, clear errors with documented
# exit codes for bad flags, bad values and bad models, no partial output files, zoo models
# written and read back, and run --output-dir writing outputs that match the oracle.
# Usage: test_cli.sh MEMPROF SHARED_DIR
set -u
mp=$1
shared=${2:-}
. "$(dirname "$0")/lib.sh"

# help everywhere
expect 0 "$mp" --help; has out "Commands:"; has out "Exit codes"
for c in inspect run report plan bench scenarios check diff tui zoo; do
  expect 0 "$mp" "$c" --help; has out "Usage: memprof $c"; has out "Exit codes"
  hasnt out "\.\./shared"; hasnt out "README \""
  expect 0 "$mp" "$c" -h; has out "Usage: memprof $c"
done
expect 0 "$mp" --help; hasnt out "\.\./shared"
expect 2 "$mp"; expect 2 "$mp" frobnicate; has err "unknown command"

# bad flags and values
expect 2 "$mp" run zoo:mnist_mlp --bogus 1; has err "unknown option '--bogus'"
# the model options each command shares (cli/model_opts.c): only those it accepts, with
# the same messages everywhere
expect 2 "$mp" inspect zoo:mnist_mlp -r 2; has err "unknown option '-r'"
expect 2 "$mp" tui zoo:mnist_mlp --input x=y; has err "unknown option '--input'"
expect 2 "$mp" plan zoo:mnist_mlp --memory static; has err "unknown option '--memory'"
for c in run bench scenarios check tui plan; do
  expect 2 "$mp" "$c" zoo:mnist_mlp --threads 0; has err "memprof $c: --threads takes 1..256, got '0'"
  expect 2 "$mp" "$c" zoo:mnist_mlp --shape input; has err "memprof $c: --shape takes NAME=DIMS, got 'input'"
done
expect 2 "$mp" run zoo:mnist_mlp --threads 0; has err "--threads"
expect 2 "$mp" run zoo:mnist_mlp --threads abc; has err "--threads"
expect 2 "$mp" run zoo:mnist_mlp --runs; has err "needs a value"
expect 2 "$mp" run; has err "missing MODEL"
# one option parser (cli/options.c): --opt=value, -r/-w wherever --runs/--warmup exist,
# options before or after MODEL, -- ends the options, a trailing unknown flag is unknown
expect 2 "$mp" run zoo:mnist_mlp --bogus; has err "unknown option '--bogus'"; hasnt err "needs a value"
expect 2 "$mp" bench zoo:mnist_mlp --bogus=3; has err "unknown option '--bogus'"
expect 2 "$mp" run zoo:mnist_mlp --exact=1; has err "--exact takes no value"
expect 2 "$mp" run zoo:mnist_mlp -r; has err "memprof run: -r needs a value"
expect 0 "$mp" run zoo:mnist_mlp --runs=3 --warmup=1; has out "runs     3 (after 1 warm-up)"
expect 0 "$mp" run --runs 3 -w 1 zoo:mnist_mlp; has out "runs     3 (after 1 warm-up)"
expect 0 "$mp" run zoo:mnist_mlp -r 3 -w 1; has out "runs     3 (after 1 warm-up)"
expect 0 "$mp" run zoo:mnist_mlp --shape=input=1,28,28,1 --threads=2; has out "input 0  input"
expect 0 "$mp" bench zoo:mnist_mlp -r 2 -w 0 --format=json -o "$tmp/b.json"
expect 0 "$mp" bench zoo:mnist_mlp --runs=2 --warmup=0
expect 0 "$mp" scenarios zoo:mnist_mlp --shape=input=1,28,28,1 -r 1 -w 0
expect 0 "$mp" scenarios zoo:mnist_mlp --shape input=1,28,28,1 --runs=1 --warmup=0
expect 0 "$mp" check zoo:mnist_mlp -r 2 --max-peak=12MiB
expect 0 "$mp" check zoo:mnist_mlp --runs=2 --max-peak 12MiB
for c in run bench scenarios check tui; do
  expect 2 "$mp" "$c" zoo:mnist_mlp -r 0; has err "memprof $c: -r takes 1..1000000, got '0'"
  expect 2 "$mp" "$c" zoo:mnist_mlp --runs=x; has err "memprof $c: --runs takes 1..1000000, got 'x'"
  expect 2 "$mp" "$c" zoo:mnist_mlp --bogus; has err "memprof $c: unknown option '--bogus'"
done
for c in run bench scenarios; do
  expect 2 "$mp" "$c" zoo:mnist_mlp --shape input=1,28,28,1 -w x; has err "memprof $c: -w takes 0..1000000"
done
for c in inspect report plan diff zoo; do
  expect 2 "$mp" "$c" x --bogus; has err "memprof $c: unknown option '--bogus'"
done
expect 0 "$mp" plan zoo:mnist_mlp --planner=all --format=json -o "$tmp/p.json"
expect 2 "$mp" plan zoo:mnist_mlp --planner=nosuch; has err "no planner 'nosuch'"
expect 2 "$mp" check zoo:mnist_mlp --max-peak 1GiB --planner nosuch; has err "no planner 'nosuch'"
case $mp in /*) mpa=$mp ;; *) mpa=$PWD/$mp ;; esac  # for the commands run in $tmp
(cd "$tmp" && "$mpa" zoo mnist_mlp --output=./-m.tflite >/dev/null) || fail "zoo --output=./-m.tflite"
(cd "$tmp" && "$mpa" run -- -m.tflite >"$tmp/out" 2>"$tmp/err") || fail "run -- -m.tflite failed: $(cat "$tmp/err")"
has out "model    -m.tflite"
(cd "$tmp" && "$mpa" inspect --no-tensors -- -m.tflite >"$tmp/out" 2>"$tmp/err") || fail "inspect -- -m.tflite"
has out "FULLY_CONNECTED"
(cd "$tmp" && "$mpa" run -m.tflite >"$tmp/out" 2>"$tmp/err"); [ $? -eq 2 ] || fail "run -m.tflite without -- was not a usage error"
expect 0 "$mp" -V; has out "memprof "
expect 0 "$mp" --version; has out "memprof "
expect 2 "$mp" --bogus; has err "unknown option '--bogus'"
expect 2 "$mp" run zoo:mnist_mlp --shape nosuch=1,2; has err "no input 'nosuch'"
expect 2 "$mp" run zoo:mnist_mlp --shape input=1,x; has err "positive dimensions"
expect 2 "$mp" zoo nosuchmodel -o "$tmp/x.tflite"; has err "mobilenet_v2"
[ -e "$tmp/x.tflite" ] && fail "zoo wrote a file for an unknown model"
expect 3 "$mp" run "$tmp/does-not-exist.tflite"; has err "does-not-exist.tflite"

# zoo: list, write, read back, run
expect 0 "$mp" zoo list; has out "mnist_mlp"; has out "mobilenet_v1"; has out "mobilenet_v2"
expect 0 "$mp" zoo mnist_mlp -o "$tmp/mlp.tflite"
head -c 8 "$tmp/mlp.tflite" | tail -c 4 | grep -q TFL3 || fail "zoo file lacks the TFL3 identifier"
expect 0 "$mp" inspect "$tmp/mlp.tflite"; has out "FULLY_CONNECTED"; has out "SOFTMAX"
expect 0 "$mp" run "$tmp/mlp.tflite"; has out "top-5"
expect 0 "$mp" run zoo:mnist_mlp --runs 3 --warmup 1; has out "median"
# times under 0.1 ms keep six decimals (to the nanosecond), so a microsecond run is never
# printed as 0.000 ms; from 0.1 ms up, three
expect 0 "$mp" run zoo:mnist_mlp --runs 20
awk '/^runs/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ms") print $i }' "$tmp/out" >"$tmp/ms"
[ "$(wc -l <"$tmp/ms")" -eq 3 ] || fail "the runs line lacks its three times: $(cat "$tmp/out")"
while read -r v; do
  awk -v v="$v" 'BEGIN { n = split(v, p, "."); d = length(p[2]);
                         exit !(v + 0 > 0 && ((v + 0 < 0.1 && d == 6) || (v + 0 >= 0.1 && d == 3))) }' ||
    fail "time '$v ms' has the wrong precision (or is zero)"
done <"$tmp/ms"
expect 3 "$mp" zoo mnist_mlp -o "$tmp/no/such/dir/m.tflite"

# inputs from files: wrong size refused, right size accepted
head -c 100 /dev/zero > "$tmp/short.bin"
expect 4 "$mp" run zoo:mnist_mlp --input input="$tmp/short.bin"; has err "3136 bytes"
head -c 3136 /dev/zero > "$tmp/zero.bin"
expect 0 "$mp" run zoo:mnist_mlp --input input="$tmp/zero.bin"
expect 2 "$mp" run zoo:mnist_mlp --input wrong="$tmp/zero.bin"

# one value for every element (--fill): the same outputs as a file holding that value 784
# times (0.5 = bytes 00 00 00 3f); bad values, unknown inputs and both sources refused
for i in $(seq 784); do printf '\000\000\000\077'; done >"$tmp/half.bin"
expect 0 "$mp" run zoo:mnist_mlp --input input="$tmp/half.bin" --output-dir "$tmp/fill_file"
expect 0 "$mp" run zoo:mnist_mlp --fill input=0.5 --output-dir "$tmp/fill_value"
cmp -s "$tmp/fill_file/output_0.bin" "$tmp/fill_value/output_0.bin" ||
  fail "--fill input=0.5 gives other outputs than a file of 0.5s"
expect 0 "$mp" bench zoo:mnist_mlp --fill 0=0.5 -r 1 -w 0
expect 2 "$mp" run zoo:mnist_mlp --fill input=abc; has err "'abc' is not a finite number"
expect 2 "$mp" run zoo:mnist_mlp --fill input=1e39; has err "input 'input' (f32)"
expect 2 "$mp" run zoo:mnist_mlp --fill input; has err "--fill takes NAME=VALUE, got 'input'"
expect 2 "$mp" run zoo:mnist_mlp --fill nosuch=1; has err "nosuch"
expect 2 "$mp" run zoo:mnist_mlp --input input="$tmp/half.bin" --fill input=0.5
has err "input 'input' is given both --input and --fill"
expect 2 "$mp" run zoo:mobilenet_v2_int8 --fill 0=128; has err "not an integer within"
expect 2 "$mp" inspect zoo:mnist_mlp --fill input=1; has err "unknown option '--fill'"

# garbage and truncated models: clear message, documented code, never a crash
printf 'not a model at all' > "$tmp/garbage.tflite"
expect 4 "$mp" inspect "$tmp/garbage.tflite"; has err "garbage.tflite"
head -c 2000 "$tmp/mlp.tflite" > "$tmp/trunc.tflite"
expect 4 "$mp" run "$tmp/trunc.tflite"; has err "trunc.tflite"

if [ -n "$shared" ] && [ -d "$shared/models" ]; then
  m=$shared/models
  expect 4 "$mp" run "$m/litert_tfl_testdata_test_model_broken.tflite"; has err "test_model_broken"
  expect 4 "$mp" inspect "$m/litert_tfl_testdata_empty_model.tflite"; has err "empty"
  expect 5 "$mp" run "$m/coral_invalid_model_invoking_error.tflite"; has err "fake-op-double"
  expect 0 "$mp" inspect "$m/tfsupport_dilated_conv.tflite"; has out "sig \[-1,-1,-1,3\]"
  # run --output-dir: raw outputs equal the oracle's within tolerance, JSON index parses
  o=$shared/oracle/tfsupport_mobilenet_v1_0.25_224_float
  expect 0 "$mp" run "$m/tfsupport_mobilenet_v1_0.25_224_float.tflite" --input "input=$o/input_0.bin" \
    --output-dir "$tmp/outdir"
  has out "top-5  905:"   # the oracle's argmax (meta.json) is class 905
  [ -f "$tmp/outdir/output_0.bin" ] || fail "output_0.bin missing"
  [ "$(stat -c %s "$tmp/outdir/output_0.bin")" -eq 4004 ] || fail "output_0.bin is not 4004 bytes"
  grep -q '"shape": \[' "$tmp/outdir/outputs.json" && grep -q '"dtype": "float32"' "$tmp/outdir/outputs.json" \
    || fail "outputs.json lacks shape/dtype: $(cat "$tmp/outdir/outputs.json")"
  paste <(od -An -v -tf4 -w4 "$tmp/outdir/output_0.bin") <(od -An -v -tf4 -w4 "$o/output_0.bin") |
    awk '{d=$1-$2; if (d<0) d=-d; s=($2<0?-$2:$2); if (s<1e-4) s=1e-4; if (d/s>1e-4) bad++}
         END {exit bad>0}' || fail "output_0.bin differs from the oracle beyond 1e-4 relative"
else
  echo "note: ../shared absent, skipping the shared-model CLI checks"
fi

# a built-in model takes a batch (its flatten is [-1, n]): three copies of one image give
# three rows equal to that image's batch-1 output
head -c 3136 /dev/zero | tr '\0' '\077' >"$tmp/one.bin"   # 0x3f3f3f3f = 0.747 in every pixel
cat "$tmp/one.bin" "$tmp/one.bin" "$tmp/one.bin" >"$tmp/three.bin"
expect 0 "$mp" run zoo:mnist_mlp --input "input=$tmp/one.bin" --output-dir "$tmp/b1"
expect 0 "$mp" run zoo:mnist_mlp --shape input=3,28,28,1 --input "input=$tmp/three.bin" --output-dir "$tmp/b3"
has out "\[3,10\]"
[ "$(stat -c %s "$tmp/b3/output_0.bin" 2>/dev/null)" = 120 ] || fail "batch 3 output is not 3 x 10 floats"
cat "$tmp/b1/output_0.bin" "$tmp/b1/output_0.bin" "$tmp/b1/output_0.bin" >"$tmp/b1x3.bin"
paste <(od -An -v -tf4 -w4 "$tmp/b3/output_0.bin") <(od -An -v -tf4 -w4 "$tmp/b1x3.bin") |
  awk '{d=$1-$2; if (d<0) d=-d; s=($2<0?-$2:$2); if (s<1e-6) s=1e-6; if (d/s>1e-5) bad++}
       END {exit bad>0}' || fail "a batch of three copies differs from three batch-1 outputs"

[ "$fails" -eq 0 ] && echo "cli: all checks passed"
exit $((fails > 0))
