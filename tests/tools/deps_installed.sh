#!/bin/sh
# Every Debian package the test suite uses is installed (scripts/deps.sh --test --check): a
# fresh machine set up by the README's test command must not skip or fail for want of one.
# Skipped (77) only on a machine without dpkg, where deps.sh cannot install anything.
set -u
root=$(dirname "$0")/../..
command -v dpkg-query >/dev/null || { echo "SKIP: no dpkg here; scripts/deps.sh installs Debian packages"; exit 77; }
missing=$(bash "$root/scripts/deps.sh" --test --check) && { echo "every package of scripts/deps.sh --test is installed"; exit 0; }
echo "FAIL: not installed: $(echo $missing) (scripts/deps.sh --test installs them)"
exit 1
