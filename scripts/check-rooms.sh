#!/usr/bin/env bash
# check-rooms.sh - the layout rules a build cannot check by itself (run by ctest as layout.rooms):
#   1. a room's private header (*_internal.h) is included only inside its own folder;
#   2. only scheduler/ opens OpenMP parallel regions (STYLE.md);
#   3. kernels/ includes nothing of engine/ or scheduler/ (it knows no files, threads or circuits);
#   4. the CLI (engine/cli), the benchmark (bench/ckbench*.c) and the API tests (tests/api) include
#      only the public include/ckbatch.h of the library (plus their own cli.h, bench_report.h,
#      bench_dnnl.h, ckbench_speech.h,
#      ck_test.h);
#   5. the library never prints or exits: no stdout/stderr, exit() or abort() outside engine/cli;
#   6. the Python extension (python/ckbatch/*.c, *.h) includes ckbatch.h and nothing else of
#      ckbatch (its own ckpy.h, Python's, numpy's and the C library's headers besides);
#   7. no include circle between the files of one room (a.c includes b.h and b.c includes a.h):
#      a room's files read in one order, as its CMake room graph reads the rooms.
# Prints each violation as file:line and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r hit; do
    file=${hit%%:*}
    header=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${hit#*:*:}")
    owner=$(find engine kernels scheduler -name "$header" -printf '%h\n' | head -n 1)
    if [ -n "$owner" ] && [ "$(dirname "$file")" != "$owner" ]; then
        echo "check-rooms: ${hit%%:#*}: includes $owner/$header, private to $owner/"
        bad=1
    fi
done < <(grep -rnE '#include "[^"]*_internal\.h"' engine kernels scheduler bench tests --include='*.c' --include='*.h' || true)
if grep -rn "pragma omp" engine kernels --include='*.c' --include='*.h'; then
    echo "check-rooms: only scheduler/ may open OpenMP parallel regions"
    bad=1
fi
for h in $(find engine scheduler -name '*.h' -printf '%f\n'); do
    if grep -rn "#include \"$h\"" kernels; then
        echo "check-rooms: kernels/ includes $h from above it"
        bad=1
    fi
done
while IFS= read -r hit; do
    echo "check-rooms: ${hit}: a user of the library includes only ckbatch.h"
    bad=1
done < <(grep -nE '#include "' engine/cli/*.c engine/cli/*.h bench/ckbench.c bench/ckbench_speech.c tests/api/*.c |
         grep -vE '#include "(ckbatch|cli|bench_dnnl|bench_report|ckbench_speech|ck_test)\.h"' || true)
while IFS= read -r hit; do
    echo "check-rooms: ${hit}: the Python extension includes only ckbatch.h of ckbatch"
    bad=1
done < <(grep -nE '#include' python/ckbatch/*.c python/ckbatch/*.h |
         grep -vE '#include (<(ckbatch|Python|pythread|numpy/arrayobject|std[a-z]+|string)|"ckpy)\.h[>"]' || true)
if grep -rnE '\b(stdout|stderr)\b|[^_a-z]exit *\(|\babort *\(' engine kernels scheduler \
        --include='*.c' --include='*.h' | grep -v '^engine/cli/' | grep -vE ':[0-9]+: *(/\*|\*)'; then
    echo "check-rooms: the library prints or exits (only engine/cli may)"
    bad=1
fi
# 7: a module is NAME.c with NAME.h (and its private NAME_internal.h); module a depends on b when
# a.c or a.h includes "b.h" of the same folder; tsort names any loop.
for dir in $(find engine kernels scheduler -type d); do
    edges=$(for f in "$dir"/*.c "$dir"/*.h; do
                [ -e "$f" ] || continue
                from=$(basename "${f%.*}"); from=${from%_internal}
                { grep -hoE '^#include "[^"/]+\.h"' "$f" || true; } | sed -E 's/#include "(.*)\.h"/\1/' |
                    while read -r to; do
                        if [ -e "$dir/$to.h" ] && [ "${to%_internal}" != "$from" ]; then
                            echo "$from ${to%_internal}"
                        fi
                    done
            done | sort -u)
    [ -n "$edges" ] || continue
    if ! loop=$(tsort <<<"$edges" 2>&1 >/dev/null) || [ -n "$loop" ]; then
        echo "check-rooms: $dir: include circle between its files:" \
             $(grep -v 'input contains a loop' <<<"$loop" | sed 's/^tsort: //')
        bad=1
    fi
done
[ $bad -eq 0 ] && echo "check-rooms: rooms respected"
exit $bad
