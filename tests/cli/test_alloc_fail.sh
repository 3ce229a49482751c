#!/usr/bin/env bash
# Out of memory everywhere: with the engine's allocation-failure injection (MP_FAIL_ALLOC,
# engine/memory/mem.h), every allocation of a whole command is made to fail in turn - the
# engine's, XNNPACK's through its hook, the XNNPACK peer's - for `memprof run` in each memory
# mode with a trace, a report and an output folder, a larger model sampled, `memprof plan
# --peer xnnpack` and `memprof bench --peer xnnpack`. Each failure must exit 7 with one
# "memprof...: ... out of memory ..." line and leave no file but complete ones (none of
# *.tmp*); a failure the command can do without must leave it exiting 0 with every output.
# Under the ASan build a leak or a memory error changes the exit code, so it fails too.
# Usage: test_alloc_fail.sh MEMPROF SHARED_DIR
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# count CMD... : the allocations a whole run of CMD counts (MP_FAIL_ALLOC=count)
count() {
  MP_FAIL_ALLOC=count "$@" 2>&1 >/dev/null | sed -n 's/^mp_fail_alloc: count \([0-9]*\) .*/\1/p'
}

# files DIR : the files under DIR with their sizes for .bin files (sizes vary elsewhere)
files() {
  (cd "$1" && find . -type f | sort | while read -r f; do
    case $f in *.bin) echo "$f $(wc -c <"$f")" ;; *) echo "$f" ;; esac
  done)
}

# check LABEL WANTFILES : the last injected run ($tmp/o, $tmp/out, $tmp/err, $rc) behaved
checks=0
check() {
  local label=$1 want=$2
  checks=$((checks + 1))
  if find "$tmp/o" -name '*.tmp*' | grep -q .; then
    fail "$label: left a temporary file: $(find "$tmp/o" -name '*.tmp*' | head -3)"
  fi
  if [ "$rc" -eq 0 ]; then
    # an allocation the command could do without: then everything is there
    [ "$(files "$tmp/o")" = "$want" ] || fail "$label: exit 0 but outputs differ: $(files "$tmp/o" | tr '\n' ' ')"
    [ -s "$tmp/err" ] && fail "$label: exit 0 with stderr: $(head -c 300 "$tmp/err")"
    return
  fi
  [ "$rc" -eq 7 ] || { fail "$label: exited $rc, expected 7: $(head -c 600 "$tmp/err")"; return; }
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^memprof[a-z ]*: .*out of memory' "$tmp/err" ||
    fail "$label: stderr is not one 'memprof: ... out of memory' line: $(head -c 600 "$tmp/err")"
  # whatever was written before the failure is complete: a file of the full run's
  local f
  for f in $(files "$tmp/o" | tr ' ' '_'); do
    echo "$want" | tr ' ' '_' | grep -qx -- "$f" || fail "$label: left a partial or stray file $f"
  done
  for f in $(find "$tmp/o" -name '*.json'); do
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null ||
      fail "$label: $f is not whole JSON"
  done
}

# sweep SETTING_SUFFIX STRIDE LABEL CMD... : CMD with its outputs under $tmp/o (the word @O
# in CMD), once to count and to list the complete outputs, then with MP_FAIL_ALLOC=N<suffix>
# for N = 1, 1+STRIDE, ... and the last allocation
sweep() {
  local suffix=$1 stride=$2 label=$3; shift 3
  local args=() a
  for a in "$@"; do args+=("${a//@O/$tmp/o}"); done
  rm -rf "$tmp/o"; mkdir -p "$tmp/o"
  local total
  total=$(count "${args[@]}")
  [ -n "$total" ] && [ "$total" -gt 0 ] || { fail "$label: no allocation counted"; return; }
  rm -rf "$tmp/o"; mkdir -p "$tmp/o"
  "${args[@]}" >"$tmp/out" 2>"$tmp/err" || { fail "$label: the full run failed: $(head -c 300 "$tmp/err")"; return; }
  local want
  want=$(files "$tmp/o")
  local n=1
  while [ "$n" -le "$total" ]; do
    rm -rf "$tmp/o"; mkdir -p "$tmp/o"
    MP_FAIL_ALLOC="$n$suffix" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "$label, allocation $n$suffix of $total" "$want"
    if [ "$n" -lt "$total" ] && [ $((n + stride)) -gt "$total" ]; then n=$total; else n=$((n + stride)); fi
  done
}

mn=zoo:mnist_mlp
for mode in static dynamic auto; do
  sweep "" 1 "run $mn --memory $mode" "$mp" run $mn --memory $mode --runs 2 \
    --trace @O/t.json -o @O/report.txt --output-dir @O/out
done
# memory that stays out: the Nth and every later allocation fail
sweep "+" 1 "run $mn (and later)" "$mp" run $mn --runs 2 --trace @O/t.json --output-dir @O/out
# shape changes, sampled: call order D (a new shape before every run: plans and kernels made
# again) and E in dynamic memory (shapes known only when running)
dyn=zoo:mobilenet_v2_dynamic
sweep "" 4 "run $dyn each-run" "$mp" run $dyn --shape input=1,32,32,3 --shape input=1,64,48,3 \
  --shape-at each-run --runs 3 --trace @O/t.json
sweep "" 9 "run $dyn --shape-at run --memory dynamic" "$mp" run $dyn --shape input=1,32,32,3 \
  --shape input=1,64,48,3 --shape-at run --memory dynamic --runs 2 --output-dir @O/out
# a larger model, sampled
sweep "" 7 "run zoo:mobilenet_v2" "$mp" run zoo:mobilenet_v2 --trace @O/t.json --output-dir @O/out
# XNNPACK's own runtime as the peer
sweep "" 13 "plan $mn --peer xnnpack" "$mp" plan $mn --peer xnnpack -o @O/plan.txt
sweep "" 1 "bench $mn --peer xnnpack" "$mp" bench $mn --peer xnnpack --runs 2 --warmup 0 \
  --format json -o @O/bench.json
sweep "+" 3 "bench $mn --peer xnnpack (and later)" "$mp" bench $mn --peer xnnpack --runs 2 \
  --warmup 0 -o @O/bench.txt

# the system's own limit (not under a sanitizer, which reserves terabytes of address space):
# XNNPACK's runtime used to crash in xnn_setup_runtime around 70 MB, and reported out of
# memory as "unsupported" (exit 5) elsewhere
if ! ldd "$mp" 2>/dev/null | grep -q 'lib[a-z]*san'; then
  for kb in 30000 45000 55000 60000 65000 70000 72000 75000 78000 90000; do
    rm -rf "$tmp/o"; mkdir -p "$tmp/o"
    (ulimit -v $kb; exec "$mp" plan zoo:mobilenet_v2 --peer xnnpack -o "$tmp/o/plan.txt") \
      >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "plan zoo:mobilenet_v2 --peer xnnpack under ulimit -v $kb" "./plan.txt"
  done
fi

# a byte budget instead of a count: the run stops where it is spent
rm -rf "$tmp/o"; mkdir -p "$tmp/o"
for b in 1000 100000 420000; do
  MP_FAIL_ALLOC_BYTES=$b "$mp" run $mn --trace "$tmp/o/t.json" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  check "run $mn with MP_FAIL_ALLOC_BYTES=$b" "./t.json"
done
# a malformed setting is said and ignored
expect 0 "$mp" run $mn
MP_FAIL_ALLOC=soon "$mp" run $mn >"$tmp/out" 2>"$tmp/err" || fail "MP_FAIL_ALLOC=soon stopped the run"
has err "MP_FAIL_ALLOC='soon' ignored"

echo "$checks injected failures checked"
[ "$fails" -eq 0 ] && echo "test_alloc_fail: all passed"
exit $((fails > 0))
