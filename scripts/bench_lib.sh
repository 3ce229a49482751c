# Shared by the benchmark scripts (sourced, not run): medians, and one option's two values
# timed in interleaved rounds.

# mp_median V...: the median of the numbers given (the mean of the middle two when even)
mp_median() {
  printf '%s\n' "$@" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# mp_onoff ROUNDS OPTION CMD...: runs `CMD... OPTION on` and `CMD... OPTION off` in turn,
# ROUNDS times, and keeps the median latency each printed ("median X ms") in the arrays
# MP_ON and MP_OFF; MP_ON_MEDIAN and MP_OFF_MEDIAN get their medians.
mp_onoff() {
  local rounds=$1 opt=$2 r v ms
  shift 2
  MP_ON=() MP_OFF=()
  for ((r = 0; r < rounds; r++)); do
    for v in on off; do
      ms=$("$@" "$opt" "$v" 2>/dev/null | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -1)
      if [ "$v" = on ]; then MP_ON+=("$ms"); else MP_OFF+=("$ms"); fi
    done
  done
  MP_ON_MEDIAN=$(mp_median "${MP_ON[@]}")
  MP_OFF_MEDIAN=$(mp_median "${MP_OFF[@]}")
}
