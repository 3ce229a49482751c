#!/usr/bin/env bash
# Files named on memprof's command line, as a careless or hostile user names them (issue 21,
# classes 1, 5, 6, 7 and 9): outputs to private device nodes (a null and a full device made
# with mknod in the test's folder, never the real /dev), symlinks and FIFOs are written
# through, never replaced; an output that names an input is refused (exit 2) and the input
# kept; an interrupted export (SIGINT, SIGTERM) leaves no temporary; standard output on a
# full device exits 3; a FIFO input with no writer does not hang; an output folder that
# cannot be written is found before the model runs.
# Usage: test_files.sh MEMPROF SHARED_DIR
set -u
export LC_ALL=C # stat's file-type words and strerror's texts, as the checks below spell them
. "$(dirname "$0")/lib.sh"
mp=$(realpath "$1")
cd "$tmp" || exit 1
mn=zoo:mnist_mlp

# kind FILE: the file's type as stat names it, without following a symlink
kind() { stat -c %F "$1" 2>/dev/null; }
no_temporaries() {
  local left
  left=$(find "$tmp" -name '*.tmp.*' | head -3)
  [ -z "$left" ] || fail "$1: temporaries left: $left"
}

"$mp" run $mn --trace t.json >/dev/null || fail "cannot record a trace"
cp t.json t.orig

# ---- 1. outputs never replace a device node, FIFO or symlink ----------------------------
if [ "$(id -u)" -eq 0 ] && mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null; then
  for args in "report t.json -o null" "run $mn --trace null" "run $mn -o null" \
              "zoo mnist_mlp -o null" "plan $mn -o null" "check $mn --max-peak 1GiB --junit null"; do
    expect 0 "$mp" $args
    [ "$(kind null)" = "character special file" ] || fail "'memprof $args' replaced the device node: $(kind null)"
  done
  # a full device: the write fails with exit 3, and the node stays
  expect 3 "$mp" report t.json -o full; has err "No space left on device"
  [ "$(kind full)" = "character special file" ] || fail "report -o full replaced the device node"
  expect 3 "$mp" run $mn --trace full; has err "No space left on device"
  # 7. standard output on a full device: every command that prints says so, exit 3 (when
  # the failed write was in the middle of the output, the reason may read "Input/output
  # error": the C library does not keep it)
  for args in "inspect $mn" "run $mn" "zoo list" "check $mn --max-peak 1GiB" "report t.json" "--help"; do
    "$mp" $args >full 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 3 ] || fail "'memprof $args >full' exited $rc, expected 3"
    has err "cannot write st"
  done
  "$mp" inspect $mn >full 2>"$tmp/err"; has err "cannot write standard output: No space left on device"
  [ "$(kind full)" = "character special file" ] || fail "stdout tests replaced the full device"
else
  echo "SKIP (partly): not root, or mknod refused: device nodes not checked"
fi

# symlinks are followed: the link stays, its target gets the output
echo old >target.txt
ln -s target.txt link.txt
expect 0 "$mp" report t.json -o link.txt
[ "$(kind link.txt)" = "symbolic link" ] || fail "report -o link replaced the symlink: $(kind link.txt)"
grep -q "memprof report" target.txt || fail "the symlink's target did not get the report"
ln -s t2.json trace-link
expect 0 "$mp" run $mn --trace trace-link
[ "$(kind trace-link)" = "symbolic link" ] || fail "run --trace link replaced the symlink"
grep -q '"format"' t2.json || fail "the trace did not reach the symlink's target"

# a FIFO with a reader gets the output in place; without a reader, a clear error, no hang
# (the test holds the FIFO open for reading and writing on fd 4, so that it has a reader
# before memprof opens it: no race with a background reader; the report fits its buffer)
mkfifo pipe
exec 4<>pipe
expect 0 "$mp" report t.json -o pipe
head -c 14 <&4 >from-pipe.txt
exec 4<&-
[ "$(kind pipe)" = "fifo" ] || fail "report -o FIFO replaced the FIFO: $(kind pipe)"
[ "$(cat from-pipe.txt)" = "memprof report" ] || fail "the FIFO's reader did not get the report"
expect 3 timeout 20 "$mp" report t.json -o pipe; has err "no reader"
[ "$(kind pipe)" = "fifo" ] || fail "report -o FIFO without reader replaced the FIFO"
# a folder is not replaced either
mkdir adir
expect 3 "$mp" report t.json -o adir; has err "is a directory"
[ -d adir ] || fail "report -o DIR removed the folder"
no_temporaries "outputs"

# ---- 5. an output that names an input is refused, the input kept ------------------------
expect 2 "$mp" report t.json -o t.json; has err "refusing to overwrite"
expect 2 "$mp" report t.json -o ./t.json
ln -s t.json link-to-t
expect 2 "$mp" report t.json -o link-to-t; has err "is the input t.json"
ln t.json hard-to-t
expect 2 "$mp" report hard-to-t -o t.json
expect 2 "$mp" run t.json --trace t.json
expect 2 "$mp" run $mn --trace x.json -o x.json; has err "name the same output file"
[ -e x.json ] && fail "run --trace X -o X wrote X"
expect 2 "$mp" check t.json --max-peak 1GiB --junit t.json
expect 2 "$mp" check t.json --max-peak 1GiB --save-baseline b.json --junit ./b.json
"$mp" zoo mnist_mlp -o m.tflite >/dev/null
cp m.tflite m.orig
expect 2 "$mp" run m.tflite --trace m.tflite
expect 2 "$mp" bench m.tflite -o m.tflite
expect 2 "$mp" plan m.tflite -o m.tflite
expect 2 "$mp" scenarios m.tflite --shape input=2,784 -o m.tflite
"$mp" run m.tflite --output-dir od >/dev/null || fail "run --output-dir od"
expect 2 "$mp" run m.tflite --input 0=od/output_0.bin --output-dir od; has err "would overwrite the input"
cmp -s t.json t.orig || fail "a refused command changed its input trace"
cmp -s m.tflite m.orig || fail "a refused command changed its input model"

# ---- 9. a FIFO input with no writer does not hang ---------------------------------------
mkfifo in-pipe
expect 3 timeout 20 "$mp" run in-pipe; has err "in-pipe: not a regular file"
expect 4 timeout 20 "$mp" run $mn --input 0=in-pipe; has err "in-pipe: input 'input'"
code() { timeout 20 "$@" >/dev/null 2>&1; echo $?; }
[ "$(code "$mp" report in-pipe)" -ne 124 ] || fail "report on a FIFO without writer hangs"
[ "$(code "$mp" tui in-pipe)" -ne 124 ] || fail "tui on a FIFO without writer hangs"
[ "$(code "$mp" check in-pipe --max-peak 1GiB)" -ne 124 ] || fail "check on a FIFO without writer hangs"
[ "$(code "$mp" check $mn --baseline in-pipe)" -ne 124 ] || fail "check --baseline FIFO hangs"
[ "$(code "$mp" diff in-pipe t.json)" -ne 124 ] || fail "diff on a FIFO without writer hangs"
# a FIFO with a writer is read
# (the writer's open waits for the test's own reader on fd 3, so the 3136 bytes are in the
# FIFO, and the writer gone, before memprof opens it)
head -c 3136 /dev/zero >in-pipe &
exec 3<in-pipe
wait $!
expect 0 timeout 20 "$mp" run $mn --input 0=in-pipe
exec 3<&-

# ---- 9. an output that cannot be written is found before the model runs -----------------
echo file >plainfile
for args in "--output-dir plainfile" "--output-dir nodir/sub" "--trace nodir/t.json" "-o nodir/r.txt" \
            "--output-dir plainfile/x"; do
  expect 3 "$mp" run $mn $args
  [ -s "$tmp/out" ] && fail "'run $args' ran the model before finding its output unwritable: $(head -c 200 "$tmp/out")"
done
# (check's errors are all exit 2, so that CI tells "grew" from "broken")
expect 2 "$mp" check $mn --max-peak 1GiB --junit nodir/j.xml; has err "cannot write nodir/j.xml"
[ -s "$tmp/out" ] && fail "check --junit nodir/ ran first"

# ---- 6. an interrupted export leaves no temporary ---------------------------------------
# A trace of a million events (tools/trace_gen, built beside memprof), whose Chrome-trace
# export takes a while; the command is stopped as soon as its temporary appears, signalled,
# and continued.
"$(dirname "$mp")/trace_gen" big.json 1000000 >/dev/null || fail "cannot make big.json"
for sig in INT TERM; do
  want=$([ $sig = INT ] && echo 130 || echo 143)
  caught=0
  for attempt in 1 2 3 4 5; do
    rm -f big.chrome.json
    "$mp" report big.json --format chrome -o big.chrome.json >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 2000); do
      if compgen -G "big.chrome.json.tmp.*" >/dev/null; then
        kill -STOP "$pid" 2>/dev/null && caught=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.005
    done
    if [ "$caught" -eq 1 ]; then
      kill -"$sig" "$pid"
      kill -CONT "$pid"
    fi
    wait "$pid"
    rc=$?
    [ "$caught" -eq 1 ] && break
  done
  if [ "$caught" -eq 1 ]; then
    [ "$rc" -eq "$want" ] || fail "report interrupted by SIG$sig exited $rc, expected $want"
    [ -e big.chrome.json ] && fail "report interrupted by SIG$sig left its output"
    no_temporaries "SIG$sig"
  else
    echo "SKIP (partly): the export finished before SIG$sig could be sent"
  fi
done

# ---- 3. shapes whose sizes overflow are refused (exit 6), never run as something else -----
for dims in 65536,65536,65536,65536 2147483647,2147483647,2147483647,2147483647 \
            65536,65536,65536,16384; do
  for c in run bench scenarios plan tui; do
    expect 6 "$mp" $c $mn --shape input=$dims
    has err "too large"
  done
  expect 6 "$mp" run $mn --shape input=1,28,28,1 --shape input=$dims --shape-at each-run --runs 2
done

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "test_files: all checks passed"
