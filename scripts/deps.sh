#!/usr/bin/env bash
# Install the Debian packages memprof needs, when missing (as root, or through sudo).
# Usage: scripts/deps.sh [--test]   (--test adds what the test suite needs)
set -euo pipefail
pkgs=(cmake make gcc libxnnpack-dev libpthreadpool-dev libjansson-dev libncurses-dev)
if [ "${1:-}" = "--test" ]; then
  pkgs+=(libcmocka-dev clang libclang-rt-14-dev libxml2-utils tmux python3-pyarmnn python3-numpy)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "memprof: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
