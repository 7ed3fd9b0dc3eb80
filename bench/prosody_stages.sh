#!/usr/bin/env bash
# prosody_stages.sh - ms per token-side stage of the prosody circuit (PL-BERT, text encoder,
# duration encoder, duration head, alignment, F0Ntrain) for the speech capture's cases at 1 and 2
# threads (bench/prosody_stages.c says how each is timed). Writes OUT (default
# build/prosody_stages.md): the CPU, the load before and after, and the table. Never run by ctest.
#   bash bench/prosody_stages.sh [reps (default 5)] [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CK_BUILD_DIR:-build}
reps=${1:-5}
out=${2:-$build/prosody_stages.md}
cmake --build "$build" --target prosody_stages -j2 >/dev/null
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
    echo "# prosody stages ($(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD))"
    echo
    echo "CPU: $cpu, $(nproc) CPUs. Load before: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    "$build/bench/prosody_stages" "$reps"
    echo
    echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
