#!/usr/bin/env bash
# memprof installed as users get it, all inside this test's temporary folder:
#   ci/install-memprof.sh PREFIX builds this tree and installs it; the installed program runs;
#   the man pages (one per command of --help) render and name every option of --help;
#   find_package(memprof) in a throwaway project finds memprof::memprof, MEMPROF_EXECUTABLE
#   and memprof_add_memory_check with CMAKE_PREFIX_PATH=PREFIX, and with no hint at all when
#   installed in the default /usr/local (a private mount namespace's /usr/local when this runs
#   as root with unshare; else the search re-rooted at a DESTDIR install);
#   scripts/package.sh builds the .deb, whose Depends name the Debian runtime packages of the
#   libraries the binary links, apt would install it (apt-get -s: simulated), it is unpacked
#   (dpkg-deb -x, never installed) and zoo:mobilenet_v2 runs from it.
# Usage: test_install.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$(realpath "$1")
src_root=$(realpath "$(dirname "$0")/../..")
me=$(basename "$0")
mp_need cmake "$me" command -v cmake
mp_need help2man "$me" command -v help2man
mp_need dpkg-dev "$me" command -v dpkg-shlibdeps
mp_need man-db "$me" command -v man      # renders the pages; brings groff-base and col
mp_need groff-base "$me" command -v groff
mp_need bsdextrautils "$me" command -v col
cd "$tmp" || exit 1
unset CMAKE_PREFIX_PATH MEMPROF_EXECUTABLE DESTDIR
export MEMPROF_NO_DEPS=1 MEMPROF_BUILD_DIR=$tmp/build   # nothing installed on the system
prefix=$tmp/prefix

# ---- ci/install-memprof.sh PREFIX ----------------------------------------------------------
if ! "$src_root/ci/install-memprof.sh" "$prefix" >install.log 2>&1; then
  echo "FAIL: ci/install-memprof.sh: $(tail -20 install.log)"
  exit 1
fi
grep -q "^memprof [0-9]" install.log || fail "install-memprof.sh did not show the version: $(cat install.log)"
im=$prefix/bin/memprof
expect 0 "$im" --version
has out "^memprof [0-9][0-9.]*$"
has out "^XNNPACK .*, loaded from /.*libXNNPACK"
expect 0 "$im" -V
has out "^XNNPACK "
"$im" --help >help_installed.txt 2>&1
"$mp" --help >help_tested.txt 2>&1
cmp -s help_installed.txt help_tested.txt || fail "the installed memprof is not this tree's: --help differs"
expect 0 "$im" run zoo:mnist_mlp
has out "Heap peak"

# ---- the files -------------------------------------------------------------------------
cmds=$("$im" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9_-]*\)  .*/\1/p')
man1=$prefix/share/man/man1
for f in bin/memprof share/bash-completion/completions/memprof share/cmake/memprof/memprofConfig.cmake \
         share/cmake/memprof/memprofConfigVersion.cmake share/cmake/memprof/MemprofCheck.cmake \
         share/man/man1/memprof.1; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
cmp -s "$prefix/share/bash-completion/completions/memprof" "$src_root/completion/memprof.bash" ||
  fail "the installed completion is not completion/memprof.bash"
cmp -s "$prefix/share/cmake/memprof/MemprofCheck.cmake" "$src_root/cmake/MemprofCheck.cmake" ||
  fail "the installed MemprofCheck.cmake is not cmake/MemprofCheck.cmake"

# ---- man pages: one per command, rendered, every option of --help in them ---------------
render() {   # render PAGE: the page as text
  MANWIDTH=200 man -l "$1" 2>/dev/null | col -bx
}
pages=memprof.1
for c in $cmds; do pages="$pages memprof-$c.1"; done
[ "$(ls "$man1" | wc -l)" -eq "$(echo $pages | wc -w)" ] || fail "man1 holds $(ls "$man1" | tr '\n' ' '), expected $pages"
for p in $pages; do
  page=$man1/$p
  [ -f "$page" ] || { fail "no man page $p"; continue; }
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warn" ] || fail "$p: groff warns: $(echo "$warn" | head -3)"
  render "$page" >"$p.txt"
  c=${p#memprof-}; c=${c%.1}
  if [ "$p" = memprof.1 ]; then
    "$im" --help >"$p.help"
    grep -q "^NAME" "$p.txt" && grep -q "memprof - " "$p.txt" || fail "$p: no NAME section"
    for x in $cmds; do grep -q "memprof-$x(1)" "$p.txt" || fail "$p: SEE ALSO lacks memprof-$x(1)"; done
  else
    "$im" "$c" --help >"$p.help"
    summary=$("$im" --help | sed -n "s/^  $c  *//p")
    grep -qF "memprof-$c - $summary" "$p.txt" || fail "$p: NAME is not 'memprof-$c - $summary'"
    grep -q "memprof(1)" "$p.txt" || fail "$p: SEE ALSO lacks memprof(1)"
  fi
  for o in $(grep -oE '^  (-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*' "$p.help" | sed -E 's/^  //; s/,//'); do
    grep -qe "$o\b" "$p.txt" || fail "$p lacks the option $o of --help"
  done
  # the first line of the description and of the examples, as --help has them
  line=$(grep -m1 -E '^  memprof ' "$p.help" | sed 's/^  //')
  [ -z "$line" ] || grep -qF -- "$line" "$p.txt" || fail "$p lacks the example '$line'"
done

# ---- find_package(memprof) with CMAKE_PREFIX_PATH -----------------------------------------
mkdir -p app
cat > app/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.16)
project(app NONE)
find_package(memprof 0.1 REQUIRED)
include(MemprofCheck)                       # found without a path
get_target_property(loc memprof::memprof IMPORTED_LOCATION)
message(STATUS "found memprof ${memprof_VERSION}: ${MEMPROF_EXECUTABLE} (memprof::memprof ${loc})")
enable_testing()
memprof_add_memory_check(NAME mlp_fits MODEL zoo:mnist_mlp MAX_TENSORS 1MiB MAX_HEAP 64MiB
                         MAX_RSS 4GiB MAX backprop=1KiB)
memprof_add_check(NAME mlp_over MODEL zoo:mnist_mlp MAX_HEAP 1KiB)
add_test(NAME version COMMAND memprof::memprof --version)
CM
# consumer DIR BUILD CMAKE-ARGS...: configure the app, check which memprof it found, ctest
consumer() {
  local want=$1 build=$2; shift 2
  if ! cmake -S app -B "$build" "$@" >"$build.log" 2>&1; then
    fail "find_package(memprof) ($*): $(tail -5 "$build.log")"; return
  fi
  grep -qF "found memprof 0.1.0: $want (memprof::memprof $want)" "$build.log" ||
    fail "find_package(memprof) ($*) found: $(grep 'found memprof' "$build.log"), expected $want"
  (cd "$build" && ctest -R '^(mlp_fits|version)$' >ctest.log 2>&1) || fail "ctest: $(tail -5 "$build/ctest.log")"
  (cd "$build" && ctest -R '^mlp_over$' --output-on-failure >ctest_fail.log 2>&1) &&
    fail "the exceeded check passed"
  grep -q "FAIL: 1 of 1 checks exceeded" "$build/ctest_fail.log" &&
    grep -q "heap <= limit .*FAIL" "$build/ctest_fail.log" ||
    fail "the exceeded check did not fail by its limit: $(tail -5 "$build/ctest_fail.log")"
}
consumer "$prefix/bin/memprof" b_prefix -DCMAKE_PREFIX_PATH="$prefix"
# without a hint, a temporary prefix is not found
cmake -S app -B b_nohint >b_nohint.log 2>&1 && ! grep -q "found memprof 0.1.0: /usr" b_nohint.log &&
  fail "find_package(memprof) found something with no hint: $(grep 'found memprof' b_nohint.log)"

# ---- the default prefix /usr/local, with no hint -----------------------------------------
usrlocal=$tmp/usrlocal
mkdir -p "$usrlocal"
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
   ! command -v cmake bash | grep -q '^/usr/local/' &&
   unshare -m --propagation private true 2>/dev/null; then
  # /usr/local of this process only: a private mount namespace with our folder over it
  unshare -m --propagation private bash -c '
    mount --bind "$1" /usr/local || exit 3
    "$2/ci/install-memprof.sh" >install_default.log 2>&1 || exit 4
    cmake -S app -B b_default >b_default.log 2>&1 || exit 5
    grep -q "found memprof 0.1.0: /usr/local/bin/memprof (memprof::memprof /usr/local/bin/memprof)" b_default.log || exit 6
    cd b_default && ctest -R "^(mlp_fits|version)$" >ctest.log 2>&1 || exit 7
  ' _ "$usrlocal" "$src_root"
  rc=$?
  [ "$rc" -eq 0 ] || fail "default prefix /usr/local (private namespace): step $rc failed: $(tail -3 install_default.log b_default.log 2>/dev/null)"
  [ -x "$usrlocal/bin/memprof" ] || fail "install-memprof.sh with no PREFIX did not install in /usr/local"
else
  echo "note: not root or no unshare: /usr/local checked as a DESTDIR install, the search re-rooted there"
  cmake -S "$src_root" -B "$tmp/build" -DCMAKE_INSTALL_PREFIX=/usr/local >/dev/null &&
    DESTDIR=$tmp/root cmake --install "$tmp/build" >/dev/null || fail "DESTDIR install failed"
  consumer "$tmp/root/usr/local/bin/memprof" b_default -DCMAKE_FIND_ROOT_PATH="$tmp/root" \
    -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY
fi

# ---- the Debian package, unpacked, never installed ---------------------------------------
if "$src_root/scripts/package.sh" "$tmp/build" "$tmp/pkg" >package.log 2>&1; then
  deb=$(ls "$tmp"/pkg/memprof_*.deb)
  dpkg-deb -I "$deb" >deb_info.txt
  depends=$(sed -n 's/^ Depends: //p' deb_info.txt)
  # the runtime package of each library memprof links (the .so files of ldd, by dpkg -S)
  for lib in libXNNPACK libpthreadpool libjansson libncurses; do
    so=$(ldd "$im" | awk -v l="$lib.so" 'index($1, l) == 1 {print $3}')
    [ -n "$so" ] || { fail "memprof does not link $lib"; continue; }
    pkg=$(dpkg -S "$(realpath "$so")" 2>/dev/null | head -1 | sed 's/[:,].*//')
    [ -n "$pkg" ] || pkg=$(dpkg -S "$so" 2>/dev/null | head -1 | sed 's/[:,].*//')
    [ -n "$pkg" ] || { fail "dpkg -S knows no package of $so"; continue; }
    case ", $depends" in *", $pkg "* | *", $pkg,"*) ;; *) fail "Depends lacks $pkg ($so): $depends" ;; esac
  done
  # apt would install it as it is (a simulation: nothing is installed)
  if command -v apt-get >/dev/null; then
    apt-get -s install "$deb" >apt_sim.log 2>&1 && grep -q "^Inst memprof " apt_sim.log ||
      fail "apt-get -s install of the .deb: $(tail -5 apt_sim.log)"
  fi
  root=$tmp/pkg/root
  for f in usr/bin/memprof usr/share/man/man1/memprof.1 usr/share/man/man1/memprof-run.1 \
           usr/share/bash-completion/completions/memprof usr/share/cmake/memprof/memprofConfig.cmake; do
    [ -f "$root/$f" ] || fail "the .deb lacks /$f"
  done
  grep -q "top-5" package.log && grep -q "Heap peak" package.log ||
    fail "memprof run zoo:mobilenet_v2 from the unpacked .deb: $(tail -5 package.log)"
  expect 0 "$root/usr/bin/memprof" -V
  has out "^memprof 0.1.0"
  consumer "$root/usr/bin/memprof" b_deb -DCMAKE_PREFIX_PATH="$root/usr"
else
  fail "scripts/package.sh: $(tail -20 package.log)"
fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all install tests passed"
