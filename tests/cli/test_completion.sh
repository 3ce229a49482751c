#!/usr/bin/env bash
# Bash completion (completion/memprof.bash), called as bash calls it (COMP_WORDS, COMP_CWORD
# set, the function run): every command of --help, every option of each command's --help,
# the values of each option with a fixed set, compared with the set memprof itself names
# when refusing a value ("--memory takes auto, static or dynamic"), every planner accepted by
# memprof plan, zoo: models from `memprof zoo list`, files, and words bash splits at ':' and
# '=' (COMP_WORDBREAKS) given back as readline wants them.
# Usage: test_completion.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
mp=$(realpath "$1")
src_root=$(realpath "$(dirname "$0")/../..")
. "$src_root/completion/memprof.bash"
cd "$tmp" || exit 1

# comp WORD...: complete the last WORD of `memprof WORD...`; the candidates, one per line
comp() {
  COMP_WORDS=("$mp" "$@")
  COMP_CWORD=$#
  COMP_LINE="${COMP_WORDS[*]}"
  COMP_POINT=${#COMP_LINE}
  _memprof
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
# offers "EXPECTED WORDS" WORD...: the candidates are exactly these (any order)
offers() {
  local want=$1; shift
  local got
  got=$(comp "$@" | tr '\n' ' ' | sed 's/ $//')
  want=$(printf '%s\n' $want | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$want" ] || fail "memprof $*<TAB>: offered '$got', expected '$want'"
}
# includes WORD-EXPECTED WORD...: the candidates include WORD-EXPECTED
includes() {
  local want=$1; shift
  comp "$@" | grep -qxF -- "$want" || fail "memprof $*<TAB>: '$want' not offered ($(comp "$@" | tr '\n' ' '))"
}

complete -p memprof 2>/dev/null | grep -q -- '-F _memprof memprof' || fail "no 'complete -F _memprof memprof'"
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'   # bash's default

# ---- commands: those `memprof --help` lists ---------------------------------------------
cmds=$("$mp" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9_-]*\)  .*/\1/p')
[ "$(echo "$cmds" | wc -l)" -ge 10 ] || fail "memprof --help lists too few commands: $cmds"
offers "$cmds help --help -h --version -V" ''
offers "run report" r

# ---- options: every option of every command's --help -----------------------------------
for c in $cmds; do
  opts=$("$mp" "$c" --help | grep -oE '^  (-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*' |
         sed -E 's/^  //; s/, / /' | tr ' ' '\n' | sort -u)
  [ -n "$opts" ] || fail "memprof $c --help lists no options"
  got=$(comp "$c" - | tr '\n' ' ')
  for o in $opts; do
    case " $got " in *" $o "*) ;; *) fail "memprof $c -<TAB> lacks $o";; esac
  done
done
offers "--runs" run --ru
offers "--no-tensors --format --output --help" inspect --

# ---- values: the same set as memprof's own refusal names -----------------------------
# memprof CMD zoo:mnist_mlp OPT __bogus__ says "OPT takes a, b or c, got '__bogus__'"
checked=0
for c in $cmds; do
  for o in $("$mp" "$c" --help | grep -oE '^  (-[a-zA-Z], )?--[a-z0-9][a-z0-9-]* [^ ]' |
             sed -E 's/^  (-[a-zA-Z], )?//; s/ .$//' | sort -u); do
    "$mp" "$c" zoo:mnist_mlp "$o" __bogus__ >/dev/null 2>"$tmp/refused"
    said=$(sed -nE "s/.*$o takes (.*), got '__bogus__'.*/\\1/p" "$tmp/refused" | head -1)
    [ -n "$said" ] || continue
    want=$(echo "$said" | sed -E 's/,? or /, /g; s/, / /g')
    # a set of words ("1..256", "NAME=DIMS" and "a percentage (5%) ..." are not)
    [[ $want =~ ^([a-z][a-z0-9_-]*\ )+[a-z][a-z0-9_-]*$ ]] || continue
    offers "$want" "$c" "$o" ''
    checked=$((checked + 1))
  done
done
[ "$checked" -ge 8 ] || fail "only $checked options with a fixed set of values were compared"
offers "static" run --memory s
offers "each-run" tui --shape-at e

# ---- planners: each one offered is accepted; plan also takes 'all' -----------------------
planners=$(comp run --planner '')
[ "$(echo "$planners" | wc -l)" -ge 5 ] || fail "run --planner<TAB>: too few planners: $planners"
for p in $planners; do
  "$mp" plan zoo:mnist_mlp --planner "$p" >/dev/null 2>&1 || fail "completed planner '$p' is refused"
done
includes all plan --planner ''
includes best check --planner ''
"$mp" plan zoo:mnist_mlp --planner not-a-planner >/dev/null 2>&1 && fail "plan accepts any planner"

# ---- models: zoo: names, split at ':' as bash does, or whole --------------------------
zoo=$("$mp" zoo list | awk '{print $1}')
[ -n "$zoo" ] || fail "memprof zoo list lists nothing"
offers "list $zoo" zoo ''
offers "$zoo" run zoo :
offers "$(echo "$zoo" | grep '^mobilenet_v2')" check zoo : mobilenet_v2
touch small.tflite trace_a.json
includes small.tflite inspect sm
includes trace_a.json report tr
includes zoo:mnist_mlp run zo
COMP_WORDBREAKS=$' \t\n"\'><;|&('   # ':' and '=' not breaking words: the whole word back
offers "$(echo "$zoo" | grep '^mobilenet_v2' | sed 's/^/zoo:/')" run zoo:mobilenet_v2
offers "--memory=static" run --memory=st
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
offers "static" run --memory = st
offers "dynamic" run --memory = dy

# ---- files after options that take one; nothing after one that takes a number -------------
includes trace_a.json run --trace tr
includes small.tflite zoo mobilenet_v2 -o sm
offers "" run -r ''
offers "" check --max-peak ''
offers "" check --max-tensors ''
# check --max FIGURE=SIZE: every figure, followed by '='
offers "tensors= static= dynamic= scratch= io= const= kernel= engine= heap= variable= activation=
        trainable= backprop= gradient= optimizer= disposable= extra= rss=" check --max ''
offers "backprop=" check --max back

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all completion tests passed ($checked value sets compared with memprof's own)"
