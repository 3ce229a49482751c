#!/usr/bin/env bash
# The whole test suite: install what is missing, then
#   1. a Release build with warnings as errors, and its CTest suite;
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. a bounded libFuzzer run (MP_FUZZ_SECONDS, 60, shared by scripts/fuzz.sh's three
#      harnesses: models, traces, baselines).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
jobs=$(nproc)

echo "== release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMP_WERROR=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest --output-on-failure -j"$jobs")

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMP_WERROR=ON -DMP_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs")

echo "== fuzzing models, traces and baselines"
scripts/fuzz.sh "${MP_FUZZ_SECONDS:-60}"
echo "== all tests passed"
