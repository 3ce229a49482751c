#!/usr/bin/env bash
# Module-private helpers are `static` or carry their module's prefix: every global symbol a
# static library defines (functions, data) must start with mp_ (or MP_ for constants), so
# that nothing un-prefixed leaks into a program that links memprof's libraries.
#
# Usage: exported_names.sh LIBRARY.a...   (tests/CMakeLists.txt passes every mp_* library)
#        exported_names.sh --self-test [CC]   (a planted un-prefixed function must be found)
# Prints each offending symbol as LIBRARY: OBJECT: TYPE NAME and exits 1 when any.
#
# Allowed without the prefix (none today): add a name to ALLOWED with the reason beside it.
set -u
ALLOWED=" "
if [ "${1:-}" = "--self-test" ]; then
  cc=${2:-cc}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf '%s\n' 'static int hidden(void) { return 1; }' 'int mp_fine(void) { return hidden(); }' \
    'int leaked_helper(void) { return 2; }' 'int leaked_table[4] = {1};' >"$tmp/t.c"
  "$cc" -c "$tmp/t.c" -o "$tmp/t.o" && ar rcs "$tmp/libt.a" "$tmp/t.o" || exit 2
  out=$(bash "$0" "$tmp/libt.a")
  rc=$?
  if [ "$rc" -ne 1 ] || ! grep -q ' leaked_helper$' <<<"$out" || ! grep -q ' leaked_table$' <<<"$out" ||
     grep -q 'mp_fine\|hidden' <<<"$out"; then
    echo "FAIL: the planted leaked_helper and leaked_table were not (only) found:"
    echo "$out"
    exit 1
  fi
  echo "exported_names: the planted un-prefixed symbols were found"
  exit 0
fi
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
    # names beginning with __ are the compiler's own (AddressSanitizer's __odr_asan.*,
    # coverage counters of a fuzz build), never written in the source
    case "$name" in __*) continue ;; esac
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
