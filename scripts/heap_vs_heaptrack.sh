#!/usr/bin/env bash
# memprof's process heap peak against heaptrack's, for the same command (issue 19, item 2).
# heaptrack records a build WITHOUT memprof's malloc interposer (cmake -DMP_HEAP_PROBE=OFF:
# the interposer in the executable would take every malloc call before heaptrack's preloaded
# hooks, which would then see nothing and never start), and the normal build measures its
# process heap peak since process start (trace meta process_heap_base_bytes +
# process_heap_peak_bytes). For each command it prints heaptrack's exact peak (computed from
# its data file: requested bytes live, as memprof counts; heaptrack_print's rounded figure
# beside it), memprof's, their difference and percent, the part of the difference that is
# explained (bytes live at heaptrack's peak that were allocated by libraries which only
# heaptrack's preload library brings into the process, e.g. libstdc++'s emergency exception
# pool) and the unexplained rest. Exit 1 if any unexplained difference exceeds 1 % of
# memprof's figure, 2 on a usage or set-up error. Prints figures, no timing.
# Usage: scripts/heap_vs_heaptrack.sh [RUN_ARGS...]
#   RUN_ARGS: the arguments of one `memprof run` (e.g. zoo:mobilenet_v2 --memory dynamic);
#   without them: zoo:mobilenet_v2, then two real models of SHARED_DIR/models (default
#   ../shared) when present.
# MEMPROF (a normal build) and MEMPROF_NOPROBE (a -DMP_HEAP_PROBE=OFF build) take binaries,
# which must be built from the same source (a struct a few bytes larger shows as a
# difference); otherwise both are built here, Release, in BUILD_DIR (default build/) and
# NOPROBE_DIR (default build-noprobe/). Needs heaptrack, python3, and zstd or gzip (whichever
# heaptrack compressed its data with).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED_DIR:-$root/../shared}
die() { echo "heap_vs_heaptrack: $*" >&2; exit 2; }
command -v heaptrack >/dev/null || die "needs heaptrack (Debian package heaptrack; scripts/deps.sh --test)"
command -v python3 >/dev/null || die "needs python3"

build() { # build DIR CMAKE_ARGS...: configure and build memprof in DIR, print its path
  local dir=$1
  shift
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target memprof >/dev/null
  echo "$dir/memprof"
}
mp=${MEMPROF:-}
np=${MEMPROF_NOPROBE:-}
if [ -z "$mp" ]; then
  b=${BUILD_DIR:-$root/build}
  ! grep -q '^MP_HEAP_PROBE:BOOL=OFF' "$b/CMakeCache.txt" 2>/dev/null ||
    die "$b is configured with -DMP_HEAP_PROBE=OFF: choose another BUILD_DIR"
  mp=$(build "$b")
fi
[ -n "$np" ] || np=$(build "${NOPROBE_DIR:-$root/build-noprobe}" -DMP_WERROR=ON -DMP_TESTS=OFF -DMP_HEAP_PROBE=OFF)
mp=$(realpath "$mp")
np=$(realpath "$np")
# the no-probe binary must have no interposer: heaptrack would wait for its hooks forever
"$np" run zoo:mnist_mlp 2>/dev/null | grep -q '^Unaccounted heap *not measured' ||
  die "$np measures the process heap: not a build with -DMP_HEAP_PROBE=OFF"
"$mp" run zoo:mnist_mlp 2>/dev/null | grep -q '^Unaccounted heap *not measured' &&
  die "$mp has no heap probe (a sanitizer or -DMP_HEAP_PROBE=OFF build)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the libraries heaptrack's preload brings that memprof does not link: their allocations are
# heaptrack's process's, not memprof's (basenames, one per line)
preload=$(ls /usr/lib/heaptrack/libheaptrack_preload.so /usr/lib/*/heaptrack/libheaptrack_preload.so \
  2>/dev/null | head -n 1 || true)
[ -n "$preload" ] || die "cannot find heaptrack's libheaptrack_preload.so"
libs() { ldd "$1" | awk '$2 == "=>" { print $1 } $2 != "=>" && $1 ~ /^\// { n = split($1, p, "/"); print p[n] }' | sort -u; }
{ basename "$preload"; comm -23 <(libs "$preload") <(libs "$np"); } >"$tmp/own_libs"

# heaptrack's data on stdin; arguments LABEL TRACE OWN_LIBS PRINTED: the lines of one command,
# exit 1 if the unexplained difference exceeds 1 % of memprof's figure
analyse=$(cat <<'PY'
import json, os, sys
label, trace, own_file, printed = sys.argv[1:5]
own = set(l.strip() for l in open(own_file) if l.strip())
# heaptrack's interpreted data: 's' strings (1-based), 'i' instruction pointers (ip, module
# string, ...), 't' trace nodes (ip index, parent), 'a' allocation infos (size, trace), '+'
# and '-' an allocation or a free of an allocation info; all numbers hexadecimal
strs, ips, traces, infos = [None], [None], [None], []
live = peak = 0
by_lib_live, by_lib_at_peak = {}, {}
lib_of_info = []
for line in sys.stdin:
    c = line[:1]
    if c == '+' or c == '-':
        i = int(line[2:], 16)
        n, lib = infos[i], lib_of_info[i]
        if c == '+':
            live += n
            if lib:
                by_lib_live[lib] = by_lib_live.get(lib, 0) + n
            if live > peak:
                peak = live
                by_lib_at_peak = dict(by_lib_live)
        else:
            live -= n
            if lib:
                by_lib_live[lib] -= n
    elif c == 'a':
        f = line.split()
        n, t = int(f[1], 16), int(f[2], 16)
        infos.append(n)
        # the module of the innermost frame: the code that called malloc
        lib = None
        if t and traces[t]:
            ip = ips[traces[t]]
            mod = os.path.basename(strs[ip]) if ip is not None else ''
            lib = mod if mod in own else None
        lib_of_info.append(lib)
    elif c == 's':
        parts = line.rstrip('\n').split(' ', 2)
        strs.append(parts[2] if len(parts) > 2 else '')
    elif c == 'i':
        f = line.split()
        ips.append(int(f[2], 16) if len(f) > 2 else None)
    elif c == 't':
        f = line.split()
        traces.append(int(f[1], 16))
meta = json.load(open(trace))['meta']
base = meta.get('process_heap_base_bytes', -1)
window = meta.get('process_heap_peak_bytes', -1)
if base < 0 or window < 0:
    print('heap_vs_heaptrack: the trace has no process heap measurement', file=sys.stderr)
    sys.exit(2)
ours = base + window
diff = peak - ours
explained = sum(v for v in by_lib_at_peak.values() if v > 0)
rest = diff - explained
pct = lambda b: 100.0 * b / ours
print(label)
print(f"  heaptrack peak            {peak:>12} B   (heaptrack_print: {printed or '?'})")
print(f"  memprof process heap peak {ours:>12} B   (trace meta: process_heap_base_bytes {base} + process_heap_peak_bytes {window})")
print(f"  difference                {diff:>12} B   {pct(diff):.3f} %")
why = ', '.join(f"{k} {v} B" for k, v in sorted(by_lib_at_peak.items()) if v > 0)
print(f"  explained                 {explained:>12} B   "
      + (f"allocated by libraries only heaptrack loads: {why}" if why else "nothing"))
print(f"  unexplained               {rest:>12} B   {pct(rest):.3f} %")
sys.exit(1 if abs(rest) * 100 > ours else 0)
PY
)

# compare LABEL RUN_ARGS...: one command; prints its lines, returns 1 if unexplained > 1 %
compare() {
  local label=$1 data
  shift
  rm -f "$tmp"/ht.*
  # the same command line for both (the trace file too: its name is in the recorder's heap)
  (cd "$tmp" && heaptrack -o "$tmp/ht" "$np" run "$@" --trace trace.json >"$tmp/ht.out" 2>&1) ||
    { cat "$tmp/ht.out" >&2; die "heaptrack memprof run $* failed"; }
  (cd "$tmp" && "$mp" run "$@" --trace trace.json >"$tmp/plain.out" 2>&1) ||
    { cat "$tmp/plain.out" >&2; die "memprof run $* failed"; }
  data=$(ls "$tmp"/ht.zst "$tmp"/ht.gz 2>/dev/null | head -n 1 || true)
  [ -n "$data" ] || { cat "$tmp/ht.out" >&2; die "heaptrack wrote no data file"; }
  local printed
  printed=$(heaptrack_print -f "$data" -p 0 -a 0 -T 0 2>/dev/null |
    sed -n 's/^peak heap memory consumption: *//p')
  local rc=0
  case "$data" in *.zst) zstd -dc "$data" ;; *) gzip -dc "$data" ;; esac |
    python3 -c "$analyse" "$label" "$tmp/trace.json" "$tmp/own_libs" "$printed" || rc=$?
  [ "$rc" -le 1 ] || exit 2
  return "$rc"
}

status=0
if [ $# -gt 0 ]; then
  compare "memprof run $*" "$@" || status=1
else
  compare "memprof run zoo:mobilenet_v2" zoo:mobilenet_v2 || status=1
  n=0
  for m in tfsupport_mobilenet_v1_0.25_224_float tiny_ic_resnet8_float; do
    f=$shared/models/$m.tflite
    [ -f "$f" ] || continue
    n=$((n + 1))
    compare "memprof run ../shared/models/$m.tflite" "$(realpath "$f")" || status=1
  done
  [ "$n" -gt 0 ] || echo "note: no models in $shared/models: only zoo:mobilenet_v2 was compared"
fi
[ "$status" -eq 0 ] || echo "FAIL: an unexplained difference exceeds 1 %"
exit "$status"
