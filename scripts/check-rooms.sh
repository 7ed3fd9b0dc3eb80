#!/usr/bin/env bash
# check-rooms.sh - the layout rules a build cannot check by itself (run by ctest as layout.rooms):
#   1. a room's private header (*_internal.h) is included only inside its own folder;
#   2. only scheduler/ opens OpenMP parallel regions (STYLE.md);
#   3. kernels/ includes nothing of engine/ or scheduler/ (it knows no files, threads or circuits).
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
[ $bad -eq 0 ] && echo "check-rooms: rooms respected"
exit $bad
