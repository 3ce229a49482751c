#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium-headless-shell, driven through
# chromedriver by tests/tools/html_browser.py (Selenium), loads reports from their files
# (MobileNet v2 in auto mode; 100 runs of it in dynamic mode, the big case; two traces
# compared), finds no console error and no network request, zooms, pans and hovers the
# timeline, clicks a tensor, follows a link to an operator, searches, toggles a kind and
# resets the zoom, checking the page each time. Screenshots are kept in the build folder
# (tests/test_html_browser/ beside the memprof binary) as artifacts.
# Usage: test_html_browser.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")
driver=$(realpath "$(dirname "$0")/../tools/html_browser.py")
py=/usr/bin/python3
me=$(basename "$0")
mp_need python3 "$me" test -x "$py"
mp_need chromium-headless-shell "$me" test -x /usr/bin/chromium-headless-shell
mp_need chromium-driver "$me" test -x /usr/bin/chromedriver
mp_need python3-selenium "$me" "$py" -c 'import selenium.webdriver'

art=$(dirname "$mp")/tests/test_html_browser
rm -rf "$art" && mkdir -p "$art" || { echo "FAIL: cannot make $art"; exit 1; }
export TMPDIR=$tmp           # chromedriver's browser profile lives and dies in $tmp
cd "$tmp" || exit 1

expect 0 "$mp" run zoo:mobilenet_v2 --runs 3 --trace mn.json
expect 0 "$mp" report mn.json --format html -o mn.html
expect 0 "$mp" run zoo:mobilenet_v2 --memory dynamic --runs 100 --trace big.json
expect 0 "$mp" report big.json --format html -o big.html
expect 0 "$mp" run zoo:mobilenet_v2_dynamic --shape input=1,96,96,3 --trace a.json
expect 0 "$mp" run zoo:mobilenet_v2_dynamic --shape input=1,160,160,3 --trace b.json
expect 0 "$mp" report a.json b.json --format html -o diff.html
# run --format html writes the same kind of page in one go
expect 0 "$mp" run zoo:mnist_mlp --runs 2 --format html -o mlp.html
for f in mn big diff mlp; do [ -s "$f.html" ] || fail "$f.html was not written"; done
# still one self-contained, well-formed file
for f in mn big diff mlp; do
  grep -Eq '<(link|img|iframe)[ >]|src=' "$f.html" && fail "$f.html loads something outside itself"
  grep -Eo 'https?://[^"'"'"' )]*' "$f.html" | grep -qv '^http://www\.w3\.org/' &&
    fail "$f.html names a web address: $(grep -Eo 'https?://[^"'"'"' )]*' "$f.html" | grep -v w3.org | head -1)"
  if command -v xmllint >/dev/null; then xmllint --noout "$f.html" 2>/dev/null || fail "$f.html is not well-formed XML"; fi
done
size=$(wc -c < big.html)
[ "$size" -lt 4000000 ] || fail "the 100-run report is $size bytes, over 4 MB"

run_browser() { # PAGE FILE NAME [ARGS...]
  local page=$1 file=$2 name=$3; shift 3
  timeout 120 "$py" "$driver" "$page" "$file" "$art" "$name" "$@" > "$name.log" 2>&1
  local rc=$?
  sed 's/^/  /' "$name.log"
  [ "$rc" -eq 0 ] || fail "$name: the browser checks failed (exit $rc)"
}
run_browser report mn.html mobilenet_v2 --search expanded_conv_1
run_browser report big.html mobilenet_v2_dynamic_100 --search Relu6
run_browser diff diff.html diff --search project
run_browser report mlp.html mnist_mlp --search dense
# the big trace's draw time is printed, not asserted (a timed test fails on a loaded machine:
# the sanitizer suite runs beside it); the page must report it
load=$(sed -n 's/^timing load: \([0-9]*\) ms.*/\1/p' mobilenet_v2_dynamic_100.log)
[ -n "$load" ] || fail "the 100-run report did not report its draw time"
echo "note: the 100-run report drew in ${load:-?} ms"
ls "$art"/*.png >/dev/null 2>&1 || fail "no screenshot saved in $art"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok: the HTML report works in chromium (screenshots in $art)"
