#!/usr/bin/env bash
# test.sh - README command 2: set up, build (Release and ASan+UBSan) and run every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh
jobs=$(nproc)

echo "== Release build + tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCK_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --no-tests=error -j"$jobs")

echo "== ASan+UBSan build + tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCK_SANITIZE=ON -DCK_TESTS=ON >/dev/null
cmake --build build-asan -j"$jobs"
# oneDNN's JIT and OpenMP runtime keep process-lifetime allocations: detect_leaks stays on, and
# tests/lsan.supp lists exactly those library frames.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
(cd build-asan && ctest --output-on-failure --no-tests=error -j"$jobs")
