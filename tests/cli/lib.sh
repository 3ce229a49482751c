# Helpers shared by the command-line tests (sourced, not run): a temporary folder removed at
# exit, failure counting, checks on a command's exit code and output, and a JSON document
# checked against its schema.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE CMD... : run, check the exit code; stdout and stderr stay in $tmp/out, $tmp/err
expect() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want; stderr: $(head -c 300 "$tmp/err")"
}
# has out|err TEXT / hasnt out|err TEXT : the last command's output contains TEXT or not
has() { grep -q -- "$2" "$tmp/$1" || fail "$1 of last command lacks '$2': $(head -c 400 "$tmp/$1")"; }
hasnt() { if grep -q -- "$2" "$tmp/$1"; then fail "$1 of last command has '$2'"; fi; }
# valid FILE : FILE is one JSON document, valid against docs/schemas/FORMAT.schema.json for
# its "format" (the test asks for python3-jsonschema first, through tests/util/need.sh)
mp_schemas=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../docs/schemas" && pwd)
valid() {
  local why
  why=$(/usr/bin/python3 - "$1" "$mp_schemas" 2>&1 <<'PY'
import json, sys, jsonschema
doc = json.load(open(sys.argv[1]))
schema = json.load(open("%s/%s.schema.json" % (sys.argv[2], doc["format"])))
errs = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
for e in errs[:3]:
    print("%s at %s;" % (e.message[:200], "/".join(map(str, e.path))))
sys.exit(1 if errs else 0)
PY
) || fail "$1 is not valid against its schema: $(printf '%s' "$why" | head -c 400)"
}
