#!/usr/bin/env bash
# Planning benchmark: builds tools/bench_plan.c (Release) and runs it: every planner on
# synthetic CNN-like graphs of 100, 1000 and 5000 buffers (arena bytes, ratio to the
# live-set lower bound, median planning time), then how often each reaches the bound on
# batches of random graphs. Usage: scripts/bench_plan.sh [REPS]  (default 21 repetitions).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target bench_plan >/dev/null
./build/bench_plan "${1:-21}"
