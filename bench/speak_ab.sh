#!/usr/bin/env bash
# speak_ab.sh - `ckbatch speak` wall time, a baseline binary against a candidate, interleaved (A B A B ...),
# median of RUNS each, and the ratio. Times are the speak summary's own "in X s" (model load excluded).
#
#   bench/speak_ab.sh BASE_CKBATCH NEW_CKBATCH LINES.txt [RUNS=3] [THREADS=1] [extra speak args...]
#
# Prints one line per run and a summary; says the CPU and the load before and after (a shared machine's
# numbers only compare within one run). The WAVs of the last pair are kept in $TMPDIR/speak_ab.*.
set -euo pipefail
base=$1; new=$2; lines=$3; runs=${4:-3}; threads=${5:-1}
shift $(($# < 5 ? $# : 5))
extra=("$@")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/speak_ab.XXXXXX")
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "cpu: $cpu ($(nproc) cores visible); threads $threads; $(wc -l < "$lines") lines; runs $runs"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
one() { # BIN TAG -> seconds
    "$1" speak --threads "$threads" -f text --lang en-us -i "$lines" -o "$tmp/$2.wav" "${extra[@]}" 2>&1 |
        sed -n 's/.* of audio in \([0-9.]*\) s .*/\1/p' | tail -1
}
a=(); b=()
for ((i = 1; i <= runs; i++)); do
    ta=$(one "$base" base); tb=$(one "$new" new)
    [ -n "$ta" ] && [ -n "$tb" ] || { echo "speak_ab: a run printed no time" >&2; exit 1; }
    echo "run $i: base $ta s, new $tb s"
    a+=("$ta"); b+=("$tb")
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ma=$(med "${a[@]}"); mb=$(med "${b[@]}")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median: base $ma s, new $mb s, base/new $(awk -v x="$ma" -v y="$mb" 'BEGIN {printf "%.2f", x / y}')x"
cmp -s "$tmp/base.wav" "$tmp/new.wav" && echo "wav: identical bytes" || echo "wav: bytes differ"
echo "wavs: $tmp"
