#!/usr/bin/env bash
# fuzz.sh - builds the libFuzzer harnesses (clang, CK_FUZZ=ON, ASan+UBSan) and runs each one for a
# fixed time, one after the other, from its committed seed corpus (tests/fuzz/corpus/<harness>).
# Usage: bench/fuzz.sh [SECONDS_PER_HARNESS=300] [HARNESS...]   (default: every fuzz_*.c)
# Env: CK_FUZZ_BUILD (default build-fuzz), CK_FUZZ_OUT (default $CK_FUZZ_BUILD/fuzz-out).
# New inputs go to the work corpus under CK_FUZZ_OUT, never into the committed seeds; a crash
# leaves its reproducer there and the script exits 1. Prints runs and exec/s per harness.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
build=${CK_FUZZ_BUILD:-build-fuzz}
out=${CK_FUZZ_OUT:-$build/fuzz-out}
jobs=$(nproc)

CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCK_FUZZ=ON -DCK_TESTS=OFF >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done
fi

status=0
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for h in "${harnesses[@]}"; do
    work="$out/$h"
    mkdir -p "$work/corpus" "$work/crashes"
    log="$out/$h.log"
    set +e
    "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$work/crashes/" \
        "$work/corpus" "tests/fuzz/corpus/$h" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz $h: ${secs}s, ${runs:-0} runs, ${rate:-0} exec/s, $cov, exit $rc"
    if [ $rc -ne 0 ]; then
        echo "fuzz $h: FAILED, see $log and $work/crashes/"; status=1
        grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" || true
    fi
done
exit $status
