#!/bin/sh
# External validation of the built-in zoo: export every zoo model with zoo_export, then have
# Arm NN (Debian python3-pyarmnn, CpuRef backend) parse, optimize and run each one through
# armnn_check.py. Exits 77 (skipped) when pyarmnn is not installed.
# Usage: armnn_zoo.sh ZOO_EXPORT_BINARY WORK_DIR
set -u
export_bin=$1
work=$2
here=$(dirname "$0")
py=/usr/bin/python3
if ! "$py" -c 'import pyarmnn' >/dev/null 2>&1; then
    echo "SKIP: pyarmnn not installed (apt-get install python3-pyarmnn)"
    exit 77
fi
mkdir -p "$work" || exit 1
"$export_bin" "$work" || exit 1
status=0
for model in "$work"/*.tflite; do
    name=$(basename "$model" .tflite)
    echo "== $name"
    "$py" "$here/armnn_check.py" "$model" "$work/$name" || status=1
done
exit $status
