#!/usr/bin/env bash
# memprof check and memprof diff: exit codes (0 within limits, 1 exceeded, 2 any error), a
# baseline written and checked again passes and is the same file on every run and thread
# count, a model with a wider layer fails the narrow one's baseline naming the tensor that
# grew (its bytes worked out here from the shapes), JUnit files are valid XML, output files
# are never partial, diffs of traces and baselines, and the CMake helper
# (cmake/MemprofCheck.cmake) in a throwaway project whose ctest passes and fails.
# Usage: test_check.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")
src_root=$(realpath "$(dirname "$0")/../..")
# the unit test program writes the MLP of two widths (test_gate --write-mlp HIDDEN FILE)
test_gate=$(dirname "$mp")/tests/test_gate
py=/usr/bin/python3
mp_need python3 "$(basename "$0")" test -x "$py"
mp_need libxml2-utils "$(basename "$0")" command -v xmllint
xml_ok() { xmllint --noout "$1" 2>/dev/null || fail "$1: not well-formed XML"; }
text_ok() {
  [ -n "$py" ] || return 0
  local wide
  wide=$("$py" -c 'import sys
for n, l in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n"), 1):
    if len(l) > 80: print("line %d: %d columns" % (n, len(l)))' "$1")
  [ -z "$wide" ] || fail "$1 has lines over 80 columns: $(echo "$wide" | head -3)"
}
cd "$tmp" || exit 1

# ---- limits: pass, exceeded, errors ------------------------------------------------------
# zoo:mnist_mlp plans one arena of 6288 bytes (static = peak): 6288 B = 6.1 KiB
expect 0 "$mp" check zoo:mnist_mlp --max-tensors 12MiB --max static=800KB
has out "PASS: 2 checks"; text_ok "$tmp/out"
expect 0 "$mp" check zoo:mnist_mlp --max-tensors 6288 --exact
has out "tensors <= limit  *6288  *6288  *-  ok"
expect 1 "$mp" check zoo:mnist_mlp --max-tensors 6287 --exact
has out "FAIL: 1 of 1 checks exceeded"; has out "+1"; has out "Largest tensors now"
has out "sequential/dense/Relu"
expect 1 "$mp" check zoo:mnist_mlp --max-tensors 1KiB --max kernel=1KB
has out "kernel <= limit"; has out "FAIL: 2 of 2"; text_ok "$tmp/out"
expect 0 "$mp" check zoo:mnist_mlp --max-tensors 0.01MiB   # 10485.76 -> 10486 B
expect 2 "$mp" check zoo:mnist_mlp --max-tensors 12XB; has err "not a size"
expect 2 "$mp" check zoo:mnist_mlp --max bogus=1MiB; has err "no figure 'bogus'"
expect 2 "$mp" check zoo:mnist_mlp --max static; has err "FIGURE=SIZE"
expect 2 "$mp" check zoo:mnist_mlp --tolerance 5pc
expect 2 "$mp" check zoo:mnist_mlp; has err "nothing to check"
expect 2 "$mp" check --max-tensors 1MiB; has err "missing MODEL"
expect 2 "$mp" check zoo:mnist_mlp --max-tensors 1MiB --frobnicate
expect 2 "$mp" check zoo:no_such_model --max-tensors 1MiB
expect 2 "$mp" check absent.tflite --max-tensors 1MiB; has err "absent.tflite"
echo "garbage" > garbage.tflite
expect 2 "$mp" check garbage.tflite --max-tensors 1MiB
expect 2 "$mp" check zoo:mnist_mlp --max-tensors 1MiB --shape nope=1,2
expect 2 "$mp" check zoo:mnist_mlp --max-tensors 1MiB --threads 0
expect 0 "$mp" check --help; has out "Exit codes"; has out "Examples"; text_ok "$tmp/out"
expect 0 "$mp" diff --help; has out "Exit codes"; text_ok "$tmp/out"

# ---- a baseline written and checked again; deterministic bytes --------------------------
expect 0 "$mp" check zoo:mnist_mlp --save-baseline mlp.json; has out "baseline mlp.json written"
[ -s mlp.json ] || fail "no baseline written"
expect 0 "$mp" check zoo:mnist_mlp --baseline mlp.json; has out "PASS: 5 checks"
expect 0 "$mp" check zoo:mnist_mlp --threads 2 --runs 3 --save-baseline mlp2.json
cmp -s mlp.json mlp2.json || fail "baselines differ between 1 and 2 threads, 1 and 3 runs"
expect 0 "$mp" check zoo:mnist_mlp --save-baseline mlp3.json
cmp -s mlp.json mlp3.json || fail "baselines differ between two runs"
# sorted keys, one figure per line, no time, no address, no machine-dependent figure
grep -q '^    "tensors": [0-9]*$' mlp.json || fail "mlp.json: no tensors line"
grep -q '"sequential/dense/Relu": 512' mlp.json || fail "mlp.json: hidden layer (128 floats) not 512 B"
grep -Eq 'kernel|engine|heap|time|_ns|0x' mlp.json && fail "mlp.json holds machine-dependent figures"
if [ -n "$py" ]; then
  "$py" - mlp.json <<'PY' || fail "mlp.json keys are not sorted or figures share lines"
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text)
assert j["format"] == "memprof-baseline" and j["version"] == 3
assert json.dumps(j, indent=2, sort_keys=True, separators=(",", ": ")) + "\n" == text
PY
fi
# dynamic mode gates its own figures
expect 0 "$mp" check zoo:mnist_mlp --memory dynamic --save-baseline mlp_dyn.json
expect 1 "$mp" check zoo:mnist_mlp --memory dynamic --baseline mlp.json
has out "note: memory mode auto in the baseline, dynamic in this run"; has out "dynamic vs baseline"

# ---- a trace gives the same figures as the model ----------------------------------------
expect 0 "$mp" run zoo:mnist_mlp --runs 2 --trace mlp_trace.json
expect 0 "$mp" check mlp_trace.json --baseline mlp.json --junit pass.xml; has out "PASS: 5 checks"
xml_ok pass.xml; grep -q 'failures="0"' pass.xml || fail "pass.xml: failures not 0"
expect 0 "$mp" check mlp_trace.json --save-baseline from_trace.json
if [ -n "$py" ]; then
  "$py" -c 'import json,sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(a["figure_bytes"] != b["figure_bytes"] or a["tensor_bytes"] != b["tensor_bytes"])' mlp.json from_trace.json \
    || fail "a trace and its model give different figures"
fi
expect 2 "$mp" check mlp_trace.json --max-tensors 1MiB --threads 2; has err "apply to a MODEL"
# a baseline file may be the subject too
expect 0 "$mp" check mlp.json --baseline mlp.json

# ---- input errors are exit 2, and leave no file ------------------------------------------
echo '{"format":"memprof-baseline","version":9}' > bad_base.json
expect 2 "$mp" check zoo:mnist_mlp --baseline bad_base.json; has err "version"
expect 2 "$mp" check zoo:mnist_mlp --baseline absent.json
head -c 300 mlp_trace.json > cut.json
expect 2 "$mp" check cut.json --max-tensors 1MiB
echo 'hello' > text.txt
expect 2 "$mp" check text.txt --max-tensors 1MiB; has err "not a .tflite model, a trace or a baseline"
expect 2 "$mp" check zoo:mnist_mlp --max-tensors 1MiB --junit nodir/j.xml
expect 2 "$mp" check zoo:mnist_mlp --save-baseline nodir/b.json
[ -e nodir ] && fail "a file was written under a missing folder"
expect 2 "$mp" check cut.json --save-baseline cut_base.json --junit cut.xml
[ -e cut_base.json ] || [ -e cut.xml ] && fail "a failed check left an output file"
ls ./*.tmp.* >/dev/null 2>&1 && fail "check left temporary files: $(ls ./*.tmp.*)"

# ---- a wider layer fails the gate, naming the tensor that grew ---------------------------
if [ -x "$test_gate" ]; then
  "$test_gate" --write-mlp 32 narrow.tflite || fail "cannot write narrow.tflite"
  "$test_gate" --write-mlp 64 wide.tflite || fail "cannot write wide.tflite"
  expect 0 "$mp" check narrow.tflite --save-baseline narrow.json
  expect 0 "$mp" check narrow.tflite --baseline narrow.json
  # dense/Relu is [1,hidden] float32: 32 * 4 = 128 bytes, then 64 * 4 = 256
  expect 1 "$mp" check wide.tflite --baseline narrow.json --allow-other-model --junit fail.xml --exact
  has out "FAIL:"; has out "tensors vs baseline .*FAIL"
  has out "dense/Relu  *128  *256  *+128"
  has out "note: the baseline is of model narrow.tflite, this run of wide.tflite"
  hasnt out "  x  "; hasnt out "probs"
  text_ok "$tmp/out"
  xml_ok fail.xml
  grep -q '<failure type="baseline"' fail.xml || fail "fail.xml: no baseline failure"
  grep -q 'dense/Relu: 128 B -&gt; 256 B' fail.xml || fail "fail.xml does not name dense/Relu"
  # a tolerance large enough lets it through
  expect 0 "$mp" check wide.tflite --baseline narrow.json --allow-other-model --tolerance 1MiB
  expect 4 "$mp" diff narrow.json fail.xml
  # the same file name with other contents: the sha256 tells
  mkdir -p v2 && cp wide.tflite v2/narrow.tflite
  expect 1 "$mp" check v2/narrow.tflite --baseline narrow.json
  has out "note: model changed (sha256 [0-9a-f]\{8\} in the baseline, [0-9a-f]\{8\} in this run)"
  expect 0 "$mp" check wide.tflite --save-baseline wide.json
  expect 0 "$mp" diff narrow.json wide.json; has out "dense/Relu"; has out "tensors"
  text_ok "$tmp/out"
else
  echo "note: $test_gate absent: the wider-layer model is not built; using a bigger input"
fi
# the same model at a bigger input shape: every activation grows (96x96 -> 128x128)
expect 0 "$mp" check zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --save-baseline s96.json
expect 1 "$mp" check zoo:mobilenet_v2_dynamic --shape input=1,128,128,3 --baseline s96.json \
  --tolerance 5% --exact
# the first convolution's output: 48x48x32 floats = 294912 B, then 64x64x32 = 524288 B
has out "MobilenetV2/Conv/Relu6  *294912  *524288  *+229376"
has out "note: input input is 1,96,96,3 in the baseline, 1,128,128,3 in this run"

# ---- diff ----------------------------------------------------------------------------------
expect 0 "$mp" run zoo:mnist_mlp --memory dynamic --trace mlp_dyn_trace.json
expect 0 "$mp" diff mlp_trace.json mlp_dyn_trace.json; has out "memprof diff (a = before"
has out "Heap peak"; text_ok "$tmp/out"
expect 0 "$mp" diff mlp.json mlp_dyn_trace.json; has out "static"; has out "dynamic"
has out "note: memory mode auto in a, dynamic in b"; text_ok "$tmp/out"
expect 0 "$mp" diff mlp.json mlp3.json; has out "Tensors: no tensor changed bytes"
expect 2 "$mp" diff mlp.json
expect 2 "$mp" diff mlp.json mlp.json mlp.json
expect 2 "$mp" diff zoo:mnist_mlp mlp.json
expect 3 "$mp" diff mlp.json absent.json
expect 4 "$mp" diff mlp.json bad_base.json
expect 4 "$mp" diff mlp.json cut.json

# ---- the CMake helper in a throwaway project ---------------------------------------------
if command -v cmake >/dev/null && command -v ctest >/dev/null; then
  mkdir -p proj
  cp mlp.json proj/
  cat > proj/CMakeLists.txt <<CM
cmake_minimum_required(VERSION 3.16)
project(uses_memprof NONE)
list(APPEND CMAKE_MODULE_PATH "$src_root/cmake")
include(MemprofCheck)
enable_testing()
memprof_add_memory_check(NAME mlp_baseline MODEL zoo:mnist_mlp BASELINE mlp.json TOLERANCE 2%
                         JUNIT mlp.xml)
memprof_add_memory_check(NAME mlp_limits MODEL zoo:mnist_mlp MAX_TENSORS 12MiB MAX_HEAP 64MiB
                         MAX_RSS 4GiB MAX static=1MiB ARGS --memory auto)
memprof_add_memory_check(NAME mlp_deprecated MODEL zoo:mnist_mlp MAX_PEAK 12MiB)
memprof_add_memory_check(NAME mlp_over MODEL zoo:mnist_mlp MAX_HEAP 1KiB)
memprof_add_memory_check(NAME mlp_regressed MODEL zoo:mnist_mlp BASELINE mlp.json
                         ARGS --memory dynamic)
CM
  if cmake -S proj -B proj/build -DMEMPROF_EXECUTABLE="$mp" >proj.log 2>&1; then
    (cd proj/build && ctest -R '^mlp_(baseline|limits|deprecated)$' >"$tmp/ctest_pass.log" 2>&1) \
      || fail "ctest of passing checks failed: $(tail -5 "$tmp/ctest_pass.log")"
    # the helper's limits reach memprof as the named options
    (cd proj/build && ctest -R '^mlp_(limits|deprecated)$' -V >"$tmp/ctest_args.log" 2>&1)
    grep -q -- '"--max-tensors" "12MiB" "--max-heap" "64MiB" "--max-rss" "4GiB" "--max" "static=1MiB"' \
      ctest_args.log || fail "MAX_TENSORS, MAX_HEAP, MAX_RSS: $(grep -m1 'check' ctest_args.log)"
    grep -q -- '"--max-peak" "12MiB"' ctest_args.log || fail "MAX_PEAK no longer passed"
    grep -q "heap <= limit" ctest_args.log || fail "MAX_HEAP: no heap check"
    [ -s proj/build/mlp.xml ] && xml_ok proj/build/mlp.xml || fail "the helper wrote no JUnit file"
    (cd proj/build && ctest -R '^mlp_(over|regressed)$' --output-on-failure >"$tmp/ctest_fail.log" 2>&1) \
      && fail "ctest of failing checks passed"
    grep -q "0% tests passed, 2 tests failed" ctest_fail.log || fail "ctest: $(tail -5 ctest_fail.log)"
    grep -q "dynamic vs baseline" ctest_fail.log || fail "ctest output lacks the check table"
    # the baseline target writes the baseline afresh
    rm proj/mlp.json
    cmake --build proj/build --target mlp_baseline_baseline >proj_build.log 2>&1 \
      || fail "the _baseline target failed: $(tail -3 proj_build.log)"
    cmp -s mlp.json proj/mlp.json || fail "the _baseline target wrote another baseline"
    # a helper call without a check is refused at configure time
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(bad NONE)\ninclude(%s/cmake/MemprofCheck.cmake)\nenable_testing()\nmemprof_add_memory_check(NAME x MODEL m.tflite)\n' \
      "$src_root" > bad_proj.cmake
    mkdir -p bad_proj && cp bad_proj.cmake bad_proj/CMakeLists.txt
    cmake -S bad_proj -B bad_proj/build -DMEMPROF_EXECUTABLE="$mp" >bad_proj.log 2>&1 \
      && fail "the helper accepted a check without BASELINE or a limit"
    tr -s ' \n' ' ' < bad_proj.log | grep -q "give BASELINE, MAX_TENSORS, MAX_HEAP, MAX_RSS or MAX" \
      || fail "bad_proj: $(tail -3 bad_proj.log)"
  else
    fail "the throwaway project does not configure: $(tail -5 proj.log)"
  fi
else
  echo "note: cmake absent, the CMake helper is not tested"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all check/diff tests passed"
