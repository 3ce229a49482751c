#!/usr/bin/python3
"""External validation of .tflite files with Arm NN (Debian's python3-pyarmnn, CpuRef backend).

Parses a model with Arm NN's own TfLite parser, optimizes it for the reference backend, runs
it once on the shared oracle input formula and writes every output as raw little-endian data
(output_J.bin, subgraph output order) plus the inputs (input_K.bin), so an independent reader
and engine can confirm that files written by memprof (e.g. the zoo) are valid TensorFlow Lite.

Usage: /usr/bin/python3 tests/tools/armnn_check.py MODEL.tflite [OUT_DIR]
       /usr/bin/python3 tests/tools/armnn_check.py --probe
Exit status: 0 ok, 1 Arm NN rejected or failed the model, 3 Arm NN's CpuRef backend is not
installed (Debian's libarmnn-cpuref-backend22), 77 pyarmnn is not installed. --probe only checks
that Arm NN can start on CpuRef (0 or 3, with one line naming the missing package).

Input formula (as ../shared/oracle/README.md): element i of input k, b = (i*7 + 3 + 13*k) % 256;
float32: float32(b) / 255 - 0.5 (float32 arithmetic), uint8: b, int8: b - 128, int32: i % 7.
"""
import os
import sys
import time

import numpy as np

try:
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        # pyarmnn prints notes about parsers it lacks
        import pyarmnn as ann
except ImportError:
    print("SKIP: pyarmnn not installed (apt-get install python3-pyarmnn)")
    sys.exit(77)


def reference_input(k, shape, dtype):
    n = int(np.prod(shape)) if len(shape) else 1
    i = np.arange(n, dtype=np.int64)
    b = (i * 7 + 3 + 13 * k) % 256
    if dtype == np.float32:
        v = b.astype(np.float32) / np.float32(255.0) - np.float32(0.5)
    elif dtype == np.uint8:
        v = b.astype(np.uint8)
    elif dtype == np.int8:
        v = (b - 128).astype(np.int8)
    elif dtype == np.int32:
        v = (i % 7).astype(np.int32)
    else:
        raise ValueError("no reference input formula for dtype %s" % dtype)
    return v.reshape(shape)


DTYPES = {
    ann.DataType_Float32: np.float32,
    ann.DataType_QAsymmU8: np.uint8,
    ann.DataType_QAsymmS8: np.int8,
    ann.DataType_Signed32: np.int32,
}


CPUREF_PACKAGE = "libarmnn-cpuref-backend22"


def has_cpuref(runtime):
    """Arm NN loads its backends as plugins: without the package, the list is empty."""
    return "CpuRef" in [str(b) for b in runtime.GetDeviceSpec().GetSupportedBackends()]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    runtime = ann.IRuntime(ann.CreationOptions())
    if not has_cpuref(runtime):
        print("FAIL: Arm NN's reference backend (CpuRef) is missing: install the Debian package "
              "%s (scripts/deps.sh --test)" % CPUREF_PACKAGE)
        return 3
    if sys.argv[1] == "--probe":
        return 0
    path = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else None

    t0 = time.perf_counter()
    parser = ann.ITfLiteParser()
    network = parser.CreateNetworkFromBinaryFile(path)
    t_parse = time.perf_counter() - t0

    t0 = time.perf_counter()
    opt_network, messages = ann.Optimize(network, [ann.BackendId("CpuRef")],
                                         runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(opt_network)
    t_opt = time.perf_counter() - t0

    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    in_infos = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    out_infos = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]

    inputs = []
    for k, (name, info) in enumerate(zip(in_names, in_infos)):
        ti = info[1]
        shape = tuple(ti.GetShape()[d] for d in range(ti.GetNumDimensions()))
        dtype = DTYPES[ti.GetDataType()]
        inputs.append(reference_input(k, shape, dtype))
        print("input  %d %-40s %s %s" % (k, name, np.dtype(dtype).name, list(shape)))

    in_tensors = ann.make_input_tensors(in_infos, inputs)
    out_tensors = ann.make_output_tensors(out_infos)
    t0 = time.perf_counter()
    runtime.EnqueueWorkload(net_id, in_tensors, out_tensors)
    t_run = time.perf_counter() - t0
    outputs = ann.workload_tensors_to_ndarray(out_tensors)

    ok = True
    for j, (name, out) in enumerate(zip(out_names, outputs)):
        flat = out.reshape(-1)
        line = "output %d %-40s %s %s" % (j, name, out.dtype.name, list(out.shape))
        if out.dtype == np.float32:
            finite = bool(np.all(np.isfinite(flat)))
            ok = ok and finite
            line += " finite=%s sum=%.6g min=%.6g max=%.6g argmax=%d" % (
                finite, float(flat.sum(dtype=np.float64)), float(flat.min()), float(flat.max()),
                int(flat.argmax()))
        print(line)

    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for k, v in enumerate(inputs):
            v.astype(v.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, "input_%d.bin" % k))
        for j, v in enumerate(outputs):
            v.astype(v.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, "output_%d.bin" % j))

    print("timing parse=%.3fs optimize+load=%.3fs run(CpuRef)=%.3fs" % (t_parse, t_opt, t_run))
    print("OK" if ok else "FAIL: non-finite outputs")
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # Arm NN raises RuntimeError subclasses on rejected models
        print("FAIL: %s: %s" % (type(e).__name__, e))
        sys.exit(1)
