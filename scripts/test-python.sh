#!/usr/bin/env bash
# test-python.sh - the Python binding's stage of scripts/test.sh: the pytest suite python/tests on
# the build tree (fails when pytest ran no test, or skipped one: everything it needs is in
# scripts/packages.txt), the buffer-ownership script under valgrind, then the package installed
# into a temporary prefix runs the README's Python example (examples/encode_text.py) from another
# directory, with only that prefix's site-packages on PYTHONPATH, and loads the prefix's
# libckbatch.so. Needs a build configured with -DCK_PYTHON=ON and built.
#   CK_BUILD_DIR=build bash scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CK_BUILD_DIR:-build}
py=/usr/bin/python3   # Debian's numpy, pytest and torch are for this interpreter

fail() { echo "test-python: FAIL: $*" >&2; exit 1; }
[ -f "$build/python/ckbatch/__init__.py" ] || fail "no $build/python/ckbatch (configure with -DCK_PYTHON=ON and build)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
CK_SOURCE_DIR=$PWD CK_BINARY_DIR=$PWD/$build PYTHONPATH=$PWD/$build/python OMP_NUM_THREADS=2 \
    "$py" -m pytest -q -rs -p no:cacheprovider python/tests | tee "$work/pytest.log" || rc=${PIPESTATUS[0]}
summary=$(tail -n 1 "$work/pytest.log")
[ "$rc" -ne 5 ] || fail "pytest collected no test"
[ "$rc" -eq 0 ] || fail "pytest exit $rc: $summary"
[[ $summary =~ ([0-9]+)\ passed ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "no test passed: $summary"
[[ $summary != *skipped* ]] || fail "tests were skipped (a package missing from packages.txt?): $summary"
echo "test-python: ok: pytest $summary"

# C26.1 under valgrind (PYTHONMALLOC=malloc: every Python allocation is seen): rows outlive the
# next call, the model and a collection. Tiny circuit and portable kernels: valgrind runs neither
# AVX-512 nor fast.
ONEDNN_MAX_CPU_ISA=AVX2 CK_MAX_CPU_ISA=portable PYTHONMALLOC=malloc PYTHONPATH=$PWD/$build/python \
    OMP_NUM_THREADS=2 valgrind --error-exitcode=3 -q --suppressions=tests/valgrind.supp \
    "$py" python/tests/ownership_check.py tests/fixtures/circuits/tiny.json >"$work/vg.log" 2>&1 \
    || { cat "$work/vg.log" >&2; fail "valgrind: the arrays' ownership (python/tests/ownership_check.py)"; }
echo "test-python: ok: valgrind finds no error in the arrays' ownership"

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" \
    || { cat "$work/install.log" >&2; fail "cmake --install"; }
site=$(sed -n 's/^CK_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
[[ $site == /* ]] || site=$work/prefix/$site
(cd "$work" && PYTHONPATH=$site OMP_NUM_THREADS=2 "$py" "$OLDPWD/examples/encode_text.py" >"$work/example.out") \
    || fail "examples/encode_text.py on the installed package"
grep -q "^features (" "$work/example.out" || fail "examples/encode_text.py printed: $(cat "$work/example.out")"
"$py" - "$site" <<'PY' || fail "the installed module is not the one in the prefix"
import subprocess, sys
out = subprocess.run([sys.executable, "-c", "import ckbatch; print(ckbatch._ckbatch.__file__)"],
                     env={"PYTHONPATH": sys.argv[1]}, capture_output=True, text=True, check=True)
assert out.stdout.startswith(sys.argv[1]), out.stdout
PY
so=$(find "$site/ckbatch" -name '_ckbatch*.so' | head -n 1)
libs=$(ldd "$so")   # not piped into grep -q: its early exit would fail ldd under pipefail
[[ $libs == *"libckbatch.so.0 => $work/prefix/"* ]] \
    || fail "$so does not load the prefix's libckbatch: $(grep ckbatch <<<"$libs")"
echo "test-python: ok: the installed package runs examples/encode_text.py"
