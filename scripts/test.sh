#!/usr/bin/env bash
# test.sh - README command 2: set up, build (Release with ckbatch-mpi, and ASan+UBSan) and run every
# test with ctest, then the installed package (scripts/test-install.sh), the Python binding
# (scripts/test-python.sh), TSan (threaded tests at 2 and 4 threads), a short libFuzzer stage and
# valgrind memcheck.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh test python   # the base packages and the test-only ones
jobs=$(nproc)

echo "== Release build + tests"
# -DCK_MPI=ON: ckbatch-mpi and its suite (ctest label mpi: mpirun on this host, loopback only)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCK_TESTS=ON -DCK_PYTHON=ON -DCK_MPI=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --no-tests=error -j"$jobs")
# the MPI suite again where nothing but loopback exists (a network namespace holding only lo), when
# this machine allows one (CAP_SYS_ADMIN) and has ip(8): Open MPI must touch no other address
if command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    echo "== MPI suite in a loopback-only network namespace"
    (cd build && unshare -n sh -c 'ip link set lo up && ctest -L mpi --output-on-failure')
fi
# MPI lives only in the ckbatch-mpi front end: the library (and so the Python binding) never links it
if ldd build/engine/libckbatch.so | grep -q libmpi; then
    echo "test.sh: libckbatch.so links libmpi" >&2
    exit 1
fi

echo "== installed package: pkg-config and CMake consumers"
CK_BUILD_DIR=build bash scripts/test-install.sh

echo "== Python binding (pytest)"
# fails when pytest ran no test or skipped one; then the installed package runs the README example
CK_BUILD_DIR=build bash scripts/test-python.sh

echo "== ASan+UBSan build + tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCK_SANITIZE=ON -DCK_TESTS=ON -DCK_MPI=ON \
    >/dev/null
cmake --build build-asan -j"$jobs"
# oneDNN's JIT and OpenMP runtime keep process-lifetime allocations: detect_leaks stays on, and
# tests/lsan.supp lists exactly those library frames.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
(cd build-asan && ctest --output-on-failure --no-tests=error -j"$jobs")

echo "== TSan build (clang): threaded executor and scheduler tests at 2 and 4 threads"
CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCK_TSAN=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target test_executor test_parallel test_batcher
# oneDNN and libgomp are not instrumented: only races in ckbatch's own frames are reported.
export TSAN_OPTIONS="halt_on_error=1:ignore_noninstrumented_modules=1:report_signal_unsafe=0"
for t in 2 4; do
    for x in engine/test_executor scheduler/test_parallel scheduler/test_batcher; do
        CK_SOURCE_DIR=$PWD OMP_NUM_THREADS=$t "build-tsan/tests/$(basename "$x")" >/dev/null
    done
done
unset TSAN_OPTIONS

echo "== libFuzzer: every harness for ${CK_CI_FUZZ_SECONDS:=30} s from its seeds"
bash bench/fuzz.sh "$CK_CI_FUZZ_SECONDS"

echo "== valgrind memcheck: a small ids run on the tiny circuit (Debug build, portable kernels)"
cmake -S . -B build-vg -DCMAKE_BUILD_TYPE=Debug -DCK_TESTS=OFF >/dev/null
cmake --build build-vg -j"$jobs" --target ckbatch
export ONEDNN_MAX_CPU_ISA=AVX2 CK_MAX_CPU_ISA=portable   # valgrind cannot run AVX-512 code
vdir=$(mktemp -d)
printf '[1, 2, 3]\n[4, 5, 6, 9]\n[178]\n' > "$vdir/in.txt"
valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --suppressions=tests/valgrind.supp -q build-vg/engine/ckbatch -q --no-progress -t 2 -f ids \
    --on-error skip --circuit tests/fixtures/circuits/tiny.json -i "$vdir/in.txt" -o "$vdir/out.st"
# shard mode and merge (the range reader, the shard entry, the segment writer) under memcheck too
for i in 0 1; do
    valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --suppressions=tests/valgrind.supp -q build-vg/engine/ckbatch -q --no-progress -t 2 -f ids \
        --on-error skip --circuit tests/fixtures/circuits/tiny.json --shard "$i/2" \
        -i "$vdir/in.txt" -o "$vdir/sh.st"
done
valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --suppressions=tests/valgrind.supp -q build-vg/engine/ckbatch merge -q -o "$vdir/sh.st"
cmp "$vdir/out.st" "$vdir/sh.st"
rm -rf "$vdir"
