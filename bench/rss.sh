#!/usr/bin/env bash
# rss.sh - peak RSS (/usr/bin/time -v "Maximum resident set size") of ckbatch on N lines of a
# phonemes corpus made by repeating SRC. Usage: bench/rss.sh SRC [N...] (default N: 2000 100000).
# Long: encodes every line. Not part of the tests; run outside CI.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: bench/rss.sh PHONEMES_CORPUS [LINES...]}
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(2000 100000)
bin=${CK_BIN:-build/engine/ckbatch}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in "${counts[@]}"; do
    while :; do cat "$src"; done | head -n "$n" > "$dir/in.txt"
    /usr/bin/time -v "$bin" -q --no-progress -t "${CK_THREADS:-2}" -i "$dir/in.txt" -o "$dir/out.st" \
        2> "$dir/time.txt"
    kb=$(grep 'Maximum resident set size' "$dir/time.txt" | grep -o '[0-9]*$')
    secs=$(grep 'Elapsed (wall clock)' "$dir/time.txt" | awk '{print $NF}')
    echo "rss: $n lines: peak RSS ${kb} KiB, wall ${secs}, output $(stat -c %s "$dir/out.st") bytes"
    rm -f "$dir/out.st"
done
