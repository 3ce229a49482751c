# Sourced by the shell tests (POSIX sh): mp_need, the one way a test asks for an outside tool.
#
# mp_need PACKAGE WHAT PROBE...: runs PROBE (quietly); when it fails, says in one line that WHAT
# needs the Debian package PACKAGE and ends the test: exit 1 when this machine's apt knows the
# package (scripts/deps.sh --test installs it, so its absence is a broken set-up, not a skip),
# exit 77 (skipped) only when apt cannot install it here at all.
mp_need() {
  _pkg=$1; _what=$2; shift 2
  "$@" >/dev/null 2>&1 && return 0
  if apt-cache show "$_pkg" >/dev/null 2>&1; then
    echo "FAIL: $_what needs the Debian package $_pkg, which is not installed (scripts/deps.sh --test installs it)"
    exit 1
  fi
  echo "SKIP: $_what needs the Debian package $_pkg, which apt cannot install on this machine"
  exit 77
}
