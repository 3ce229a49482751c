# Helpers shared by the command-line tests (sourced, not run): a temporary folder removed at
# exit, failure counting, and checks on a command's exit code and output.
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
