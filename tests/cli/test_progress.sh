#!/usr/bin/env bash
# The progress line of long work (issue 20): run --runs, bench, scenarios, train and pipeline
# draw 'LABEL  N% done' on standard error when it is a terminal (a pseudo-terminal of
# script(1) here), never on standard output, and nothing at all when standard error is not a
# terminal. MP_PROGRESS_AFTER_MS=0 draws from the first step instead of after a second, so
# that nothing here depends on how long the work takes.
# Usage: test_progress.sh MEMPROF
set -u
mp=$1
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp_need bsdutils "the progress tests (script(1), a pseudo-terminal)" command -v script
cd "$tmp" || exit 1
export MP_PROGRESS_AFTER_MS=0

expect 0 "$mp" split zoo:mnist_mlp --at 2 -o mlp
# name | label the line starts with | the command
cases=(
  "run|run 1 of 3|run zoo:mnist_mlp --runs 3"
  "bench|bench: round|bench zoo:mnist_mlp -r 2 -w 0"
  "scenarios|scenarios: case|scenarios zoo:mobilenet_v2_dynamic --shape input=1,32,32,3 -r 1 -w 0"
  "train|train: epoch 1 of 2, step 1|train zoo:mnist_mlp --batch 8 --steps 5"
  "pipeline|pipeline: run 1 of 3|pipeline mlp-1.tflite mlp-2.tflite -r 2 -w 1"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name label args <<<"$c"
  # on a terminal: the line on stderr (what script(1) saw), none on stdout (a file)
  script -qec "$mp $args > $name.out" /dev/null </dev/null > "$name.pty" 2>&1 ||
    fail "$name: '$args' failed under a terminal: $(head -c 300 "$name.pty")"
  grep -q $'\r'"$label" "$name.pty" || fail "$name: no progress line '$label' on the terminal: $(tr '\r' '\n' < "$name.pty" | head -c 300)"
  grep -q '% done' "$name.pty" || fail "$name: the progress line says no '% done'"
  grep -q $'\r' "$name.out" && fail "$name: a progress line reached standard output"
  # not a terminal: nothing extra on stderr (what the same command prints with stderr closed
  # to progress is empty, or the same lines without a carriage return)
  expect 0 "$mp" $args
  grep -q $'\r' "$tmp/err" && fail "$name: a progress line on a redirected stderr"
  grep -q '% done' "$tmp/err" && fail "$name: '% done' on a redirected stderr"
done
# train and pipeline print nothing on stderr of their own: it stays empty
expect 0 "$mp" train zoo:mnist_mlp --batch 8 --steps 5
[ -s "$tmp/err" ] && fail "train: stderr not empty when not a terminal: $(head -c 200 "$tmp/err")"
expect 0 "$mp" pipeline mlp-1.tflite mlp-2.tflite -r 2
[ -s "$tmp/err" ] && fail "pipeline: stderr not empty when not a terminal: $(head -c 200 "$tmp/err")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "progress: on a terminal only"
