#!/usr/bin/env bash
# The main job: install what is missing, build memprof (warnings as errors) and run it on the
# built-in MobileNet v2. Extra arguments go to 'memprof run' (e.g. --threads 2 --runs 20).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMP_WERROR=ON -DMP_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target memprof >/dev/null
./build/memprof run zoo:mobilenet_v2 "$@"
