#!/usr/bin/env bash
# A complex64 output and the subgraphs CALL_ONCE calls. memprof run on tools/gen_model's rfft 4
# (RFFT2D of x [2, 4], fft_length [2, 4]) with x = [[0, 1, 0, 0], [0, 0, 0, 0]]: the DFT of a
# unit impulse at column 1 is exp(-2 pi i k / 4) in every row, so y [2, 3] is 1, -i, -1 twice:
# the summary gives the real parts' min -1 max 1 mean 0 sum 0, the imaginary parts' min -1
# max 0 sum -2, and the first values as re+im pairs (checked to 1e-6); --output-dir's
# outputs.json names the dtype complex64 and validates against its schema, and the raw file
# holds the 6 float pairs. memprof inspect on gen_model's callonce 4 shows "init 1" on the
# CALL_ONCE, as it shows "cond 1 body 2" on a WHILE (gen_model while), and its JSON has
# "calls": [1] there, valid against memprof-model's schema.
# Usage: test_complex_and_calls.sh MEMPROF [SHARED_DIR]
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
gen=$(dirname "$mp")/gen_model
py=/usr/bin/python3
mp_need python3-jsonschema "validating the JSON outputs against docs/schemas" \
  "$py" -c 'import jsonschema; jsonschema.Draft202012Validator'

# ---- complex64 output ----
"$gen" rfft 4 "$tmp/r.tflite" || { echo "FAIL: gen_model rfft"; exit 1; }
"$py" -c "import struct, sys; open(sys.argv[1], 'wb').write(struct.pack('<8f', 0, 1, 0, 0, 0, 0, 0, 0))" \
  "$tmp/x.bin" || fail "cannot write the input"
mkdir "$tmp/od"
expect 0 "$mp" run "$tmp/r.tflite" --input "x=$tmp/x.bin" --output-dir "$tmp/od"
has out "output 0  y  c64 \[2,3\]"
has out "  re    min -1  max 1  mean 0  sum 0"
has out "  im    min -1  max 0  mean -0.333333  sum -2"
"$py" - "$tmp/out" <<'PY' || fail "the first values are not 1, -i, -1 twice: $(grep first "$tmp/out")"
import re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("  first")][0]
num = r"(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?"
pairs = re.findall(r"(-?%s)([-+]%s)i" % (num, num), line[len("  first"):])
want = [(1, 0), (0, -1), (-1, 0)] * 2
got = [(float(a), float(b)) for a, b in pairs]
assert len(got) == 6, got
assert all(abs(g[0] - w[0]) < 1e-6 and abs(g[1] - w[1]) < 1e-6 for g, w in zip(got, want)), got
PY
valid "$tmp/od/outputs.json"
"$py" - "$tmp/od" <<'PY' || fail "outputs.json or output_0.bin"
import json, struct, sys
d = sys.argv[1]
o = json.load(open(d + "/outputs.json"))["outputs"][0]
assert o["dtype"] == "complex64" and o["shape"] == [2, 3] and o["bytes"] == 48, o
y = struct.unpack("<12f", open(d + "/" + o["file"], "rb").read())
want = [1, 0, 0, -1, -1, 0] * 2
assert all(abs(a - b) < 1e-6 for a, b in zip(y, want)), y
PY

# ---- the subgraphs an operator calls ----
"$gen" callonce 4 "$tmp/co.tflite" || { echo "FAIL: gen_model callonce"; exit 1; }
expect 0 "$mp" inspect "$tmp/co.tflite" --no-tensors
has out "#0   CALL_ONCE              () -> ()  init 1$"
"$gen" while 5 "$tmp/loop.tflite" || fail "gen_model while"
expect 0 "$mp" inspect "$tmp/loop.tflite" --no-tensors
has out "WHILE .*  cond 1 body 2$"
expect 0 "$mp" inspect "$tmp/co.tflite" --no-tensors --format json -o "$tmp/co.json"
valid "$tmp/co.json"
"$py" - "$tmp/co.json" <<'PY' || fail "CALL_ONCE's calls in the JSON"
import json, sys
m = json.load(open(sys.argv[1]))
ops = m["subgraphs"][0]["ops"] if "subgraphs" in m else m["ops"]
assert ops[0]["name"] == "CALL_ONCE" and ops[0]["calls"] == [1], ops[0]
assert all("calls" not in op for op in ops[1:]), ops
PY

[ "$fails" -eq 0 ] || exit 1
echo "PASS"
