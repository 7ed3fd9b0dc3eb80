#!/usr/bin/env bash
# test-install.sh - proves the installed package works for a program outside this tree: installs
# the build into a fresh temporary prefix, builds examples/encode_phonemes.c against it with
# pkg-config (shared, and static against libckbatch.a) and with CMake (find_package), runs all
# three and checks they print the same numbers as the installed bin/ckbatch gives for the same
# lines. Also: the .so exports exactly the CK_API functions of include/ckbatch.h, its SONAME is
# libckbatch.so.MAJOR, bin/ckbatch runs from a moved prefix, and `bin/ckbatch compile` builds a
# generated library from the installed kit (also when moved) whose features are the interpreter's.
# No network.
#   bash scripts/test-install.sh            build dir: $CK_BUILD_DIR, else build/ (configured
#                                           Release when it is not configured yet)
# Exits 1 with "test-install: FAIL: ..." on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CK_BUILD_DIR:-build}

fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
ok() { echo "test-install: ok: $*"; }

# ---- build and install into a fresh prefix ----

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || fail "configure $build"
fi
cmake --build "$build" -j"$(nproc)" --target ckbatch_shared ckbatch_static ckbatch >/dev/null \
    || fail "build of ckbatch_shared, ckbatch_static, ckbatch in $build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" \
    || { cat "$work/install.log" >&2; fail "cmake --install $build --prefix $prefix"; }
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
[ -n "$libdir" ] || fail "no CMAKE_INSTALL_LIBDIR in $build/CMakeCache.txt"
version=$(for p in MAJOR MINOR PATCH; do
              sed -n "s/^#define CKBATCH_VERSION_$p \([0-9]*\)$/\1/p" include/ckbatch.h
          done | paste -sd.)
major=${version%%.*}

for f in include/ckbatch.h bin/ckbatch "$libdir/libckbatch.so.$version" "$libdir/libckbatch.a" \
         "$libdir/pkgconfig/ckbatch.pc" "$libdir/cmake/ckbatch/ckbatchConfig.cmake" \
         "$libdir/cmake/ckbatch/ckbatchConfigVersion.cmake" \
         "$libdir/cmake/ckbatch/ckbatchTargets.cmake"; do
    [ -f "$prefix/$f" ] || fail "not installed: <prefix>/$f"
done
[ "$(readlink "$prefix/$libdir/libckbatch.so.$major")" = "libckbatch.so.$version" ] \
    || fail "<prefix>/$libdir/libckbatch.so.$major is not a link to libckbatch.so.$version"
[ "$(readlink "$prefix/$libdir/libckbatch.so")" = "libckbatch.so.$major" ] \
    || fail "<prefix>/$libdir/libckbatch.so is not a link to libckbatch.so.$major"
ok "installed $version into a fresh prefix (libdir $libdir):"
(cd "$prefix" && find . -mindepth 1 \( -type f -o -type l \) | sort | sed 's|^\./|    |')

# ---- the shared library: SONAME, exports, the CLI's RUNPATH ----

so=$prefix/$libdir/libckbatch.so
readelf -d "$so" | grep -q "(SONAME).*\[libckbatch\.so\.$major\]" \
    || fail "$libdir/libckbatch.so: SONAME is not libckbatch.so.$major"
sed -nE 's/^CK_API [^(]*[ *]([a-z_0-9]+)\(.*/\1/p' include/ckbatch.h | sort >"$work/api.txt"
nm -D --defined-only "$so" | awk '{print $NF}' | sort >"$work/exported.txt"
[ -s "$work/api.txt" ] || fail "no CK_API functions found in include/ckbatch.h"
if ! diff "$work/api.txt" "$work/exported.txt" >"$work/exports.diff"; then
    sed 's/^</    declared, not exported:/; s/^>/    exported, not declared:/' "$work/exports.diff" \
        | grep '^ ' >&2
    fail "$libdir/libckbatch.so exports differ from the CK_API functions of include/ckbatch.h"
fi
ok "SONAME libckbatch.so.$major; exports exactly the $(wc -l <"$work/api.txt") CK_API functions"
runpath=$(readelf -d "$prefix/bin/ckbatch" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = "\$ORIGIN/../$libdir" ] \
    || fail "bin/ckbatch RUNPATH is '$runpath', expected '\$ORIGIN/../$libdir'"
ok "bin/ckbatch RUNPATH \$ORIGIN/../$libdir"

# ---- the example, three ways ----

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[ "$(pkg-config --modversion ckbatch)" = "$version" ] || fail "pkg-config --modversion ckbatch"
pc_libdir=$(pkg-config --variable=libdir ckbatch)
[ "$pc_libdir" = "$prefix/$libdir" ] || fail "ckbatch.pc libdir is $pc_libdir, not $prefix/$libdir"
example=examples/encode_phonemes.c
cflags=(-std=c11 -Wall -Wextra -pedantic -Werror)

# (a) pkg-config, shared; RPATH from the .pc's libdir, so no LD_LIBRARY_PATH
# shellcheck disable=SC2046  # pkg-config's words are meant to split
cc "${cflags[@]}" "$example" $(pkg-config --cflags --libs ckbatch) -Wl,-rpath,"$pc_libdir" \
    -o "$work/example_pc" || fail "cc $example with pkg-config --cflags --libs ckbatch"
readelf -d "$work/example_pc" | grep -q "(NEEDED).*\[libckbatch\.so\.$major\]" \
    || fail "the pkg-config build does not link libckbatch.so.$major"
ok "pkg-config build (shared): cc $example \$(pkg-config --cflags --libs ckbatch)"

# (b) pkg-config, static: libckbatch.a itself, then the system libraries of --static
# shellcheck disable=SC2046
cc "${cflags[@]}" "$example" $(pkg-config --cflags ckbatch) "$prefix/$libdir/libckbatch.a" \
    $(pkg-config --static --libs ckbatch | sed 's/-lckbatch\b//') -o "$work/example_static" \
    || fail "static link against libckbatch.a with pkg-config --static --libs ckbatch"
if readelf -d "$work/example_static" | grep -q "(NEEDED).*libckbatch"; then
    fail "the static build still needs libckbatch.so"
fi
ok "pkg-config build (static): libckbatch.a \$(pkg-config --static --libs ckbatch):" \
   "$(pkg-config --static --libs ckbatch | sed 's/-L[^ ]* //')"

# (c) CMake: find_package(ckbatch CONFIG REQUIRED), ckbatch::ckbatch
cmake -S examples -B "$work/example_cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log" >&2; fail "cmake -S examples -DCMAKE_PREFIX_PATH=<prefix>"; }
found=$(sed -n 's/^ckbatch_DIR:PATH=//p' "$work/example_cmake/CMakeCache.txt")
[ "$found" = "$prefix/$libdir/cmake/ckbatch" ] \
    || fail "find_package(ckbatch) found $found, not the fresh prefix"
cmake --build "$work/example_cmake" >"$work/cmake.log" 2>&1 \
    || { cat "$work/cmake.log" >&2; fail "cmake --build of examples/"; }
ok "CMake build: find_package(ckbatch CONFIG REQUIRED) -> ckbatch::ckbatch"

# ---- same output everywhere, and the CLI's numbers ----

for x in example_pc example_static example_cmake/encode_phonemes; do
    env -u LD_LIBRARY_PATH "$work/$x" >"$work/$(basename "$x").out" 2>"$work/$(basename "$x").err" \
        || { cat "$work/$(basename "$x").err" >&2; fail "$x exited non-zero"; }
done
grep -q '^sequence 0: ' "$work/example_pc.out" || fail "the example printed no sequence"
for x in example_static encode_phonemes; do
    diff "$work/example_pc.out" "$work/$x.out" >&2 || fail "$x prints other output than example_pc"
done
ok "the three builds print the same $(grep -c '^sequence ' "$work/example_pc.out") sequences"

# The example's lines (one sequence each: they are short) through the installed CLI; its features
# file printed the way the example prints.
sed -n 's/^sequence [0-9]*: line [0-9]* "\(.*\)" tokens .*/\1/p' "$work/example_pc.out" \
    >"$work/lines.txt"
env -u LD_LIBRARY_PATH "$prefix/bin/ckbatch" -f phonemes --strict-symbols -i "$work/lines.txt" \
    -o "$work/cli.safetensors" -q --no-progress || fail "bin/ckbatch on the example's lines"
# shellcheck disable=SC2046
cc "${cflags[@]}" tests/install/features_rows.c $(pkg-config --cflags --libs ckbatch libcjson) \
    -Wl,-rpath,"$pc_libdir" -o "$work/features_rows" || fail "cc tests/install/features_rows.c"
"$work/features_rows" "$work/cli.safetensors" >"$work/cli.out" || fail "reading the CLI's output"
grep '^sequence ' "$work/example_pc.out" | diff - "$work/cli.out" >&2 \
    || fail "the example's features differ from bin/ckbatch's (above: < example, > CLI)"
ok "bin/ckbatch gives the example's tokens and features[0..3] for the same lines"

# ---- generated C from the installed package: ckbatch compile builds from the installed kit ----

# The tensors of a safetensors file (everything after its 8-byte length and JSON header): the
# header's metadata names the backend, so only the tensor bytes can equal the interpreter's.
tensors() { tail -c +$((9 + $(od -An -tu8 -N8 "$1" | tr -d ' '))) "$1"; }
# $1: the prefix; compiles into $work/gen-$2, runs the lines through it, compares with cli.safetensors
compiled_run() {
    local bin=$1/bin/ckbatch kit=$1/$libdir/ckbatch/codegen out=$work/gen-$2
    env -u LD_LIBRARY_PATH "$bin" compile -o "$out" 2>"$out.log" \
        || { cat "$out.log" >&2; fail "$2: bin/ckbatch compile"; }
    grep -qxF "ckbatch compile: kit installed $kit" "$out.log" \
        || { cat "$out.log" >&2; fail "$2: bin/ckbatch compile did not build from $kit"; }
    env -u LD_LIBRARY_PATH "$bin" --compiled "$out/kokoro_phoneme_encoder.so" -f phonemes \
        -i "$work/lines.txt" -o "$out.safetensors" -q --no-progress \
        || fail "$2: bin/ckbatch --compiled"
    cmp -s <(tensors "$work/cli.safetensors") <(tensors "$out.safetensors") \
        || fail "$2: the generated library's features differ from the interpreter's"
}
for f in libck_kernels.a libck_scheduler.a include/compiled_abi.h include/steps.h include/ckbatch.h; do
    [ -f "$prefix/$libdir/ckbatch/codegen/$f" ] || fail "not installed: <prefix>/$libdir/ckbatch/codegen/$f"
done
compiled_run "$prefix" installed
ok "bin/ckbatch compile builds from <prefix>/$libdir/ckbatch/codegen; --compiled gives the interpreter's features, bit for bit"

# ---- the prefix moved: bin/ckbatch finds its library through $ORIGIN alone ----

mv "$prefix" "$work/moved"
env -u LD_LIBRARY_PATH "$work/moved/bin/ckbatch" -f phonemes -i "$work/lines.txt" \
    -o "$work/moved.safetensors" -q --no-progress || fail "bin/ckbatch from a moved prefix"
cmp -s "$work/cli.safetensors" "$work/moved.safetensors" \
    || fail "bin/ckbatch from a moved prefix wrote another file"
ok "bin/ckbatch runs from a moved prefix (same bytes)"
compiled_run "$work/moved" moved
ok "bin/ckbatch compile from a moved prefix builds from the moved kit (same features)"
echo "test-install: installed package passed"
