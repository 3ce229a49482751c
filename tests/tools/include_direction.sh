#!/usr/bin/env bash
# The include direction of ../shared/DESIGN.md, checked from the source itself: every
# `#include "..."` of a folder's .c and .h files (relative paths resolved against the file's
# own folder) may name only the folders below it:
#
#   trace/      trace/                                   (the ground floor: nothing above it)
#   engine/     engine/ trace/
#   peers/      peers/ engine/ trace/
#   analyzers/  analyzers/ trace/                        (never the engine: a saved trace
#   reports/    reports/ analyzers/ trace/                is analysed without it)
#   tui/        tui/ reports/ analyzers/ trace/
#   cli/, tools/, tests/: anything
#
# Usage: include_direction.sh [ROOT]   (ROOT: the source tree, default this repository)
#        include_direction.sh --self-test   (plants a wrong-way include in a copy: must fail)
# Prints each wrong-way include as FILE:LINE: FOLDER includes TARGET; exit 1 when any.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "--self-test" ]; then
  root=$(cd "$here/../.." && pwd)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for d in trace engine peers analyzers reports tui; do cp -r "$root/$d" "$tmp/"; done
  bash "$0" "$tmp" >/dev/null || { echo "FAIL: the tree itself has wrong-way includes"; exit 1; }
  status=0
  # each planted include must be found, naming the file and the folder it reaches
  for plant in "engine/session.c:analyzers/summary.h" "trace/trace.c:engine/session.h" \
               "analyzers/replay.c:engine/model/model.h" "reports/units.c:tui/index.h" \
               "engine/memory/mem.c:../../cli/cli.h" "trace/status.c:../reports/units.h"; do
    file=${plant%%:*}
    target=${plant#*:}
    cp "$root/$file" "$tmp/$file.orig"
    printf '#include "%s"\n' "$target" >>"$tmp/$file"
    out=$(bash "$0" "$tmp")
    rc=$?
    mv "$tmp/$file.orig" "$tmp/$file"
    if [ "$rc" -eq 0 ] || ! grep -q "^$file:" <<<"$out"; then
      echo "FAIL: a planted '#include \"$target\"' in $file was not found"
      status=1
    fi
  done
  [ "$status" -eq 0 ] && echo "include_direction: every planted wrong-way include was found"
  exit $status
fi

root=$(cd "${1:-$here/../..}" && pwd)
allowed() {
  case "$1" in
    trace) echo "trace" ;;
    engine) echo "engine trace" ;;
    peers) echo "peers engine trace" ;;
    analyzers) echo "analyzers trace" ;;
    reports) echo "reports analyzers trace" ;;
    tui) echo "tui reports analyzers trace" ;;
  esac
}
top_folders="trace engine peers analyzers reports tui cli tools tests"
bad=0
for folder in trace engine peers analyzers reports tui; do
  [ -d "$root/$folder" ] || continue
  ok=" $(allowed "$folder") "
  while IFS= read -r -d '' f; do
    rel=${f#"$root"/}
    dir=$(dirname "$rel")
    n=0
    while IFS= read -r line; do
      n=$((n + 1))
      [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]] || continue
      inc=${BASH_REMATCH[1]}
      first=${inc%%/*}
      if [ "$first" != "$inc" ] && [[ " $top_folders " == *" $first "* ]]; then
        target=$inc                                   # from the root: "engine/x.h"
      else
        target=$(realpath -m --relative-to="$root" "$root/$dir/$inc")  # "x.h", "../x.h"
      fi
      tfolder=${target%%/*}
      [ "$tfolder" = "$target" ] && continue          # a file at the root: not a folder
      if [[ " $top_folders " == *" $tfolder "* ]] && [[ $ok != *" $tfolder "* ]]; then
        echo "$rel:$n: $folder/ includes $target"
        bad=1
      fi
    done <"$f"
  done < <(find "$root/$folder" \( -name '*.c' -o -name '*.h' \) -print0)
done
[ "$bad" -eq 0 ] && echo "include_direction: every include points down"
exit $bad
