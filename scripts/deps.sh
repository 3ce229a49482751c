#!/usr/bin/env bash
# Install the Debian packages memprof needs, when missing (as root, or through sudo).
# Usage: scripts/deps.sh [--test] [--check]
#   --test   adds every package the test suite uses (the one list of them: tests/deps_test.sh
#            checks it against what the suite calls)
#   --check  installs nothing: lists the missing packages, one per line, exit 1 if any
# Packages are installed with --no-install-recommends, so a package the suite needs only as a
# Recommends of another (Arm NN's CpuRef backend of python3-pyarmnn) is named here itself.
set -euo pipefail
pkgs=(cmake make gcc libxnnpack-dev libpthreadpool-dev libjansson-dev libncurses-dev
      help2man)                # man pages, generated at build time from --help
test_pkgs=(
  libcmocka-dev              # unit tests (cmocka)
  clang libclang-rt-14-dev   # libFuzzer (scripts/fuzz.sh)
  libxml2-utils              # xmllint: SVG, HTML and JUnit files well formed
  tmux                       # tests/cli/test_tui.sh drives the TUI in tmux
  python3                    # /usr/bin/python3: JSON checks in the shell tests
  python3-numpy              # output comparisons against Arm NN
  python3-pyarmnn            # Arm NN's TfLite parser and runtime (an independent engine)
  libarmnn-cpuref-backend22  # its reference backend: only a Recommends of python3-pyarmnn
  man-db                     # test_install renders every man page (with groff-base, col)
  groff-base                 # ... and checks them with groff -ww
  bsdextrautils              # ... col
  python3-jsonschema         # every command's JSON output validated against docs/schemas/
  chromium-headless-shell    # the HTML report tested in a real browser
  chromium-driver            # ... driven through WebDriver
  python3-selenium           # ... from Python
  dpkg-dev                   # dpkg-shlibdeps: the .deb's Depends (scripts/package.sh, test_install)
  heaptrack                  # test_heaptrack: the process heap peak against heaptrack's
)
check=0 with_tests=0
for a in "$@"; do
  case "$a" in
    --test) with_tests=1 ;;
    --check) check=1 ;;
    *) echo "usage: $0 [--test] [--check]" >&2; exit 2 ;;
  esac
done
[ "$with_tests" -eq 1 ] && pkgs+=("${test_pkgs[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$check" -eq 1 ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  printf '%s\n' "${missing[@]}"
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "memprof: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
