#!/bin/sh
# External validation of the built-in zoo: write every zoo model with 'memprof zoo', have
# Arm NN (Debian python3-pyarmnn, CpuRef backend) parse, optimize and run each one through
# armnn_check.py, then run the same file with 'memprof run' and require the outputs to agree:
# float32 outputs within relative 1e-4 (floored at 1e-3 of the largest output); quantized
# (int8, uint8) outputs within 2 steps of their scale, each engine requantizing with its own
# rounding (Arm NN's reference backend in float, memprof as TensorFlow Lite's kernels do).
# A missing package (pyarmnn, numpy,
# the CpuRef backend) fails in one line that names it (mp_need, tests/util/need.sh).
# Usage: armnn_zoo.sh MEMPROF WORK_DIR
set -u
mp=$1
work=$2
here=$(dirname "$0")
. "$here/../util/need.sh"
py=/usr/bin/python3
mp_need python3 "armnn_zoo" test -x "$py"
mp_need python3-numpy "armnn_zoo" "$py" -c 'import numpy'
mp_need python3-pyarmnn "armnn_zoo" "$py" -c 'import pyarmnn'
mp_need libarmnn-cpuref-backend22 "armnn_zoo (Arm NN's reference backend, CpuRef)" \
    "$py" "$here/armnn_check.py" --probe
rm -rf "$work" && mkdir -p "$work" || exit 1
status=0
for name in $("$mp" zoo list | awk '{print $1}'); do
    model=$work/$name.tflite
    echo "== $name"
    "$mp" zoo "$name" -o "$model" >/dev/null || { status=1; continue; }
    "$py" "$here/armnn_check.py" "$model" "$work/$name.armnn" >"$work/$name.armnn.txt"
    rc=$?
    cat "$work/$name.armnn.txt"
    [ "$rc" -eq 0 ] || { status=1; continue; }
    dtype=$(awk '$1 == "output" && $2 == "0" {print $4}' "$work/$name.armnn.txt")
    "$mp" run "$model" --output-dir "$work/$name.memprof" >/dev/null 2>"$work/$name.err"
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$work/$name.err"; status=1; continue; }
    "$py" - "$work/$name.armnn/output_0.bin" "$work/$name.memprof/output_0.bin" "$dtype" <<'PY' || status=1
import sys
import numpy as np
dtype = sys.argv[3]
ref = np.fromfile(sys.argv[1], dtype=dtype)
got = np.fromfile(sys.argv[2], dtype=dtype)
assert ref.shape == got.shape, (ref.shape, got.shape)
if dtype == "float32":
    floor = max(float(np.abs(ref).max()) * 1e-3, 1e-30)
    err = float((np.abs(got - ref) / np.maximum(np.abs(ref), floor)).max())
    print(f"   memprof vs Arm NN: {ref.size} values, max relative error {err:.2e}")
    sys.exit(0 if err <= 1e-4 else 1)
steps = int(np.abs(got.astype(np.int64) - ref.astype(np.int64)).max())
same_top = int(got.argmax()) == int(ref.argmax())
print(f"   memprof vs Arm NN: {ref.size} {dtype} values, largest difference {steps} steps, "
      f"top-1 {int(got.argmax())} (Arm NN {int(ref.argmax())})")
sys.exit(0 if steps <= 2 and same_top else 1)
PY
done
exit $status
