# Bash completion for memprof (installed as share/bash-completion/completions/memprof; or
# `source completion/memprof.bash`): commands, each command's options, zoo: models, and the
# values of --planner, --memory and the other options with a fixed set of values.
# What it offers is read from the program being completed, so it follows that program:
# commands from `memprof --help`, options from `memprof COMMAND --help` (an option line
# "  --name ARG  text" takes a value), models from `memprof zoo list`, planners from the
# "Planners:" list of --help, values written A|B in --help as such. The few value sets that
# --help gives in prose are below (tests/cli/test_completion.sh checks them against the
# program's own messages). Only bash builtins (compgen, complete): no bash-completion needed.

declare -gA _memprof_cache=()

# _memprof_out PROG ARGS...: the standard output of PROG ARGS, kept for the shell's life
_memprof_out() {
  local key="$*"
  if [[ -z ${_memprof_cache[$key]+set} ]]; then
    _memprof_cache[$key]=$("$@" 2>/dev/null)
  fi
  printf '%s\n' "${_memprof_cache[$key]}"
}

# _memprof_options PROG CMD: "NAME ARG" per option of CMD's --help (ARG '-' for a flag)
_memprof_options() {
  _memprof_out "$1" "$2" --help | sed -nE '
    s/^  (-[a-zA-Z], )?(--[a-z0-9][a-z0-9-]*)( ([A-Z][^ ]*|[^ ]+)( {2,}|$).*| ([A-Z][^ ]*) .*)$/\2 \4\6/p
    s/^  (-[a-zA-Z], )?(--[a-z0-9][a-z0-9-]*)( {2,}.*)?$/\2 -/p'
}

# _memprof_short PROG CMD: the short options of CMD's --help (-r, -w, -o, -h)
_memprof_short() {
  _memprof_out "$1" "$2" --help | sed -nE 's/^  (-[a-zA-Z]), --.*/\1/p'
}

# _memprof_values PROG CMD OPTION ARG: the values OPTION takes
_memprof_values() {
  local prog=$1 cmd=$2 opt=$3 arg=$4
  case $opt in
    --memory)
      # train's policies differ from the inference modes (memprof train --help)
      if [[ $cmd == train ]]; then printf "%s\n" planned held dynamic; return; fi
      printf "%s\n" auto static dynamic
      [[ $cmd == scenarios ]] && echo all
      return ;;
    --plan-at)
      printf "%s\n" prepare first-run
      [[ $cmd == scenarios ]] && echo both
      return ;;
    --shape-at) printf "%s\n" prepare run each-run; return ;;
    --scratch) printf "%s\n" together separate; return ;;
    --planner)
      _memprof_out "$prog" run --help | sed -n '/^Planners:/,/^$/s/^  \([a-z][a-z0-9_-]*\)  .*/\1/p'
      ;;
    --max)
      # check's figures as FIGURE=, from its refusal of an unknown one: "no figure 'X' (a, b)"
      if [[ $cmd == check ]]; then
        "$prog" check zoo:_ --max _=1 2>&1 >/dev/null |
          sed -nE "s/.*no figure '_' \((.*)\)$/\1/p" | tr -d ' ' | tr ',' '\n' | sed 's/$/=/'
      fi
      return ;;
  esac
  if [[ $arg == *'|'* ]]; then
    local IFS='|' v
    for v in $arg; do v=${v#[A-Z]=}; [[ $v == [a-z]* ]] && echo "$v"; done
  elif [[ $opt == --format ]]; then
    # "--format F   text (default), json, svg, html or chrome": the formats named there
    _memprof_out "$prog" "$cmd" --help | sed -nE '/^  --format /,/^  -/p' |
      grep -oE '\b(text|json|svg|html|chrome|junit|csv)\b' | sort -u
  fi
}

# _memprof_commands PROG: the commands of `memprof --help`
_memprof_commands() {
  _memprof_out "$1" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9_-]*\)  .*/\1/p'
}

# _memprof_zoo PROG: the built-in models
_memprof_zoo() {
  _memprof_out "$1" zoo list | sed -nE 's/^([a-z0-9_]+)( .*)?$/\1/p'
}

_memprof() {
  COMPREPLY=()
  # Bash splits a word at the characters of COMP_WORDBREAKS (zoo:NAME, --opt=value): join the
  # pieces again, so that words[cword] is the whole word being completed.
  local -a words=()
  local i j=-1 cword=0 glue=0 w
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    if ((j >= 0)) && { [[ $w =~ ^[:=]+$ ]] || ((glue)); }; then
      words[j]+=$w
      glue=0
      [[ $w =~ ^[:=]+$ ]] && glue=1
    else
      words[++j]=$w
      glue=0
    fi
    ((i == COMP_CWORD)) && cword=$j
  done
  ((COMP_CWORD >= ${#COMP_WORDS[@]})) && { words[++j]=''; cword=$j; }
  local cur=${words[cword]} prev=
  ((cword > 0)) && prev=${words[cword - 1]}

  local prog=${words[0]/#\~/$HOME}
  command -v -- "$prog" >/dev/null 2>&1 || prog=memprof

  local -a cand=()
  local files= dirs= k
  if ((cword == 1)); then
    mapfile -t cand < <(_memprof_commands "$prog")
    cand+=(help --help -h --version -V)
  else
    local cmd=${words[1]}
    local -A takes=()
    local -a opts=()
    local name arg
    while read -r name arg; do
      # an option on two lines (--io copy|bind, --io E=copy|bind): its first one counts
      [[ -n $name && -z ${takes[$name]+set} ]] && { takes[$name]=$arg; opts+=("$name"); }
    done < <(_memprof_options "$prog" "$cmd")
    # the short forms take what their long forms take
    local s
    while read -r s; do
      [[ -n $s ]] || continue
      name=$(_memprof_out "$prog" "$cmd" --help | sed -nE "s/^  $s, (--[a-z0-9-]+).*/\\1/p")
      [[ -n $name ]] && { takes[$s]=${takes[$name]}; opts+=("$s"); }
    done < <(_memprof_short "$prog" "$cmd")

    local opt= val= prefix=
    if [[ $cur == --*=* ]]; then
      opt=${cur%%=*} val=${cur#*=} prefix=$opt=
    elif [[ -n $prev && -n ${takes[$prev]+set} && ${takes[$prev]} != - ]]; then
      opt=$prev val=$cur
    fi
    if [[ -n $opt ]]; then
      arg=${takes[$opt]:--}
      case $arg in
        -) ;;
        DIR) dirs=1 ;;
        FILE* | PATH | *.json) files=1 ;;
        *) mapfile -t cand < <(_memprof_values "$prog" "$cmd" "$opt" "$arg") ;;
      esac
      for k in "${!cand[@]}"; do cand[k]=$prefix${cand[k]}; done
      cur=$val
    elif [[ $cur == -* ]]; then
      cand=("${opts[@]}")
    else
      case $cmd in
        zoo) [[ $cword -eq 2 ]] && mapfile -t cand < <(echo list; _memprof_zoo "$prog") ;;
        report | diff) files=1 ;;
        help) ;;
        *)
          files=1
          while read -r name; do [[ -n $name ]] && cand+=("zoo:$name"); done \
            < <(_memprof_zoo "$prog")
          ;;
      esac
    fi
    if [[ -n $prefix ]]; then cur=$prefix$cur; fi
  fi

  mapfile -t COMPREPLY < <(compgen -W "${cand[*]}" -- "$cur")
  # FIGURE= (check --max): the size follows without a space
  [[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
  if [[ -n $files ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
  elif [[ -n $dirs ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
  fi
  # Readline replaces only what follows the last word break (':' or '=') of the word.
  local head=${cur%"${cur##*[:=]}"}
  if [[ -n $head && $COMP_WORDBREAKS == *"${head: -1}"* ]]; then
    for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]=${COMPREPLY[k]#"$head"}; done
  fi
  return 0
}

complete -F _memprof memprof
