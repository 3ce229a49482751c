#!/usr/bin/env bash
# Module-private helpers are `static` or carry their module's prefix: every global symbol a
# static library defines (functions, data) must start with mp_ (or MP_ for constants), so
# that nothing un-prefixed leaks into a program that links memprof's libraries.
#
# Usage: exported_names.sh LIBRARY.a...   (tests/CMakeLists.txt passes every mp_* library)
# Prints each offending symbol as LIBRARY: OBJECT: TYPE NAME and exits 1 when any.
#
# Allowed without the prefix (none today): add a name to ALLOWED with the reason beside it.
set -u
ALLOWED=" "
[ "$#" -gt 0 ] || { echo "usage: exported_names.sh LIBRARY.a..." >&2; exit 2; }
bad=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "exported_names: no library $lib" >&2; exit 2; }
  # nm -A writes LIBRARY:OBJECT:ADDRESS TYPE NAME; keep defined global text, data and bss
  out=$(nm -A --defined-only -g "$lib") || { echo "exported_names: nm failed on $lib" >&2; exit 2; }
  while read -r where type name; do
    [ -n "${name:-}" ] || continue
    case "$type" in T | D | R | B | G | S | C | V | W) ;; *) continue ;; esac
    case "$name" in mp_* | MP_*) continue ;; esac
    [[ $ALLOWED == *" $name "* ]] && continue
    obj=${where%:*}
    echo "$(basename "$lib"): ${obj##*:}: $type $name"
    bad=1
  done <<<"$out"
done
if [ "$bad" -ne 0 ]; then
  echo "exported_names: the symbols above are exported without the mp_ prefix:" \
       "make them static or prefix them"
  exit 1
fi
echo "exported_names: every exported symbol of $# libraries starts with mp_"
