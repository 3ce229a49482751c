#!/usr/bin/env bash
# Time per operator type of one model in static mode: REPEATS times `memprof run MODEL
# --memory static -r RUNS --trace T`, then `memprof report T --format json`; per operator type
# the sum over its operators of their mean time per run (us), and the median of that over the
# repeats; the model's total last. With BEFORE=BINARY (an older memprof) every repeat runs it
# too, alternating with this build, and each line shows both and their ratio (after / before),
# so that a change to one kernel is measured on a real model, both builds on the same machine
# state.
# Usage: [BEFORE=OLD_MEMPROF] [MEMPROF=BINARY] scripts/bench_op_time.sh MODEL [RUNS] [REPEATS]
# (default 30 runs, 5 repeats; BUILD_DIR, default build, when MEMPROF is not given)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 MODEL [RUNS] [REPEATS]" >&2; exit 2; }
model=$1
runs=${2:-30}
reps=${3:-5}
build=${BUILD_DIR:-build}
if [ -z "${MEMPROF:-}" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target memprof >/dev/null
fi
memprof=${MEMPROF:-./$build/memprof}
before=${BEFORE:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# times BINARY OUT: one repeat's "OPNAME us" lines (and "total us") into OUT
times() {
  "$1" run "$model" --memory static -r "$runs" --trace "$tmp/t.json" >/dev/null
  "$1" report "$tmp/t.json" --format json -o "$tmp/r.json"
  /usr/bin/python3 - "$tmp/r.json" >"$2" <<'EOF'
import collections, json, sys
ops = json.load(open(sys.argv[1]))["ops"]
per = collections.defaultdict(float)
for o in ops:
    per[o["name"]] += o["time_ns"] / max(1, o["n_exec"]) / 1e3
for name, us in per.items():
    print(name, "%.3f" % us)
print("total", "%.3f" % sum(per.values()))
EOF
}

for ((r = 0; r < reps; r++)); do
  [ -z "$before" ] || times "$before" "$tmp/before.$r"
  times "$memprof" "$tmp/after.$r"
done

/usr/bin/python3 - "$tmp" "$reps" "${before:+yes}" "$model" "$runs" <<'EOF'
import collections, statistics, sys
tmp, reps, two, model, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes", sys.argv[4], sys.argv[5]
def load(tag):
    per = collections.defaultdict(list)
    for r in range(reps):
        for line in open(f"{tmp}/{tag}.{r}"):
            name, us = line.split()
            per[name].append(float(us))
    return {k: statistics.median(v) for k, v in per.items()}
after = load("after")
before = load("before") if two else {}
print(f"{model}: time per operator type, us per run (static mode, {runs} runs, median of {reps})")
names = sorted((k for k in after if k != "total"), key=lambda k: -after[k]) + ["total"]
if two:
    print(f"{'operator':24s} {'before':>10s} {'after':>10s} {'ratio':>7s}")
    for k in names:
        b, a = before.get(k, 0.0), after[k]
        print(f"{k:24s} {b:10.1f} {a:10.1f} {a / b if b else float('nan'):7.3f}")
else:
    print(f"{'operator':24s} {'us':>10s}")
    for k in names:
        print(f"{k:24s} {after[k]:10.1f}")
EOF
