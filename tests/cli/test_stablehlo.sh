#!/usr/bin/env bash
# StableHLO operators (the codes above 161, options in builtin_options_2): a model written by
# tools/gen_model stablehlo (a STABLEHLO_COMPOSITE whose decomposition subgraph multiplies by 2
# and adds 1 with STABLEHLO_MULTIPLY and STABLEHLO_ADD, then a STABLEHLO_PAD of -7, two before
# and one after) runs with the same outputs in the static and dynamic memory modes, nothing
# left allocated; inspect names the operators and the decomposition; the same model with its
# PAD's code changed to STABLEHLO_LOGISTIC (no runtime kernel in TensorFlow Lite either) is
# listed by inspect and refused by run with exit 5, naming it in one line; with its
# COMPOSITE's decomposition index out of range, refused by inspect and run with exit 4.
# gen_model case: a STABLEHLO_CASE of three branches (x * 2, x + 10, max(x, 0)) listed with its
# branches (text, and JSON valid against its schema) and run on each index, one outside
# 0..2 taking the last, with the same outputs in the static and dynamic modes.
# Usage: test_stablehlo.sh MEMPROF [SHARED_DIR]
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
gen=$(dirname "$mp")/gen_model
"$gen" stablehlo 5 "$tmp/shlo.tflite" || { echo "FAIL: gen_model stablehlo"; exit 1; }

expect 0 "$mp" inspect "$tmp/shlo.tflite" --no-tensors
has out "#0   STABLEHLO_COMPOSITE    (0) -> (1)  decomposition 1"
has out "#1   STABLEHLO_PAD"
has out "#0   STABLEHLO_MULTIPLY"
has out "#1   STABLEHLO_ADD"
hasnt out "not supported"

# x all 3: 3 * 2 + 1 = 7 in the five middle elements, -7 in the two before and one after
for mode in static dynamic; do
  expect 0 "$mp" run "$tmp/shlo.tflite" --memory $mode --fill x=3 --runs 2
  has out "output 0  z  f32 \[8\]"
  has out "min -7  max 7  mean 1.75  sum 14"
  has out "first -7 -7 7 7 7 7 7 -7"
  has out "every byte allocated has been freed"
  grep "^  first -" "$tmp/out" >"$tmp/first.$mode"
done
cmp -s "$tmp/first.static" "$tmp/first.dynamic" || fail "static and dynamic outputs differ"

# STABLEHLO_PAD's operator code (195, an int32 in the operator code table) made 162
/usr/bin/python3 - "$tmp/shlo.tflite" "$tmp/logistic.tflite" <<'PY' || fail "cannot patch the operator code"
import struct, sys
b = open(sys.argv[1], "rb").read()
old = struct.pack("<i", 195)
assert b.count(old) == 1, b.count(old)
open(sys.argv[2], "wb").write(b.replace(old, struct.pack("<i", 162)))
PY
expect 0 "$mp" inspect "$tmp/logistic.tflite" --no-tensors
has out "STABLEHLO_LOGISTIC .*\[not supported by memprof\]"
expect 5 "$mp" run "$tmp/logistic.tflite"
has err "STABLEHLO_LOGISTIC"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "the refusal is not one line: $(cat "$tmp/err")"
# the COMPOSITE's decomposition_subgraph_index (StableHLOCompositeOptions field 1, in the
# operator's builtin_options_2, Operator field 12) made 7: refused at load, exit 4, one line
/usr/bin/python3 - "$tmp/shlo.tflite" "$tmp/bad.tflite" <<'PY' || fail "cannot patch the decomposition index"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
u32 = lambda at: struct.unpack_from("<I", b, at)[0]
def field(table, k):  # position of field k of the table at `table`, or None
    vt = table - struct.unpack_from("<i", b, table)[0]
    if 4 + 2 * k >= struct.unpack_from("<H", b, vt)[0]:
        return None
    off = struct.unpack_from("<H", b, vt + 4 + 2 * k)[0]
    return table + off if off else None
deref = lambda at: at + u32(at)
model = deref(0)
subgraphs = deref(field(model, 2))
sg0 = deref(subgraphs + 4)
ops = deref(field(sg0, 3))
op0 = deref(ops + 4)
opts2 = deref(field(op0, 12))
at = field(opts2, 1)
assert at is not None and u32(at) == 1, "decomposition index not found"
struct.pack_into("<i", b, at, 7)
open(sys.argv[2], "wb").write(b)
PY
for cmd in inspect run; do
  expect 4 "$mp" $cmd "$tmp/bad.tflite"
  has err "operator 0 (STABLEHLO_COMPOSITE): decomposition subgraph 7 is out of range (2 subgraphs)"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$cmd: the refusal is not one line: $(cat "$tmp/err")"
done
"$gen" case 4 "$tmp/case.tflite" || fail "gen_model case"
expect 0 "$mp" inspect "$tmp/case.tflite" --no-tensors
has out "#0   STABLEHLO_CASE         (0 1) -> (2)  branches 1 2 3"
has out "relu .* 1 operators"
expect 0 "$mp" inspect "$tmp/case.tflite" --no-tensors --format json -o "$tmp/case.json"
/usr/bin/python3 - "$tmp/case.json" <<'PY' || fail "the CASE's calls are not its branches"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ops"][0]["calls"] == [1, 2, 3], d["ops"][0]
PY
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then valid "$tmp/case.json"; fi
# x all 3 (all -3 for the last): index 0 -> 6, 1 -> 13, 2 -> 3, 7 and -1 -> max(x, 0)
for mode in static dynamic; do
  for pick in "0 3 6" "1 3 13" "2 3 3" "7 -3 0" "-1 3 3"; do
    set -- $pick
    expect 0 "$mp" run "$tmp/case.tflite" --memory $mode --fill i=$1 --fill x=$2
    has out "min $3  max $3"
    has out "every byte allocated has been freed"
  done
done
exit $((fails > 0))
