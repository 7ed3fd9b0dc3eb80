#!/bin/sh
# speech_bf16.sh - `ckbatch speak` in fp32 and bf16, interleaved (fp32, bf16, fp32, bf16, ...), on the
# first lines of the quotes corpus with the embedded synthetic weights and --noise-scale 0: CPU
# seconds (user + sys) and wall seconds per run, their medians and the fp32 / bf16 ratio of the
# medians. CPU time is the figure to read on a shared machine (wall time waits for other jobs).
# Each run includes the model load (the same in both precisions), so the ratio understates the
# synthesis' own. Never run by ctest; it does not build ckbatch (build it first).
#
# usage: bench/speech_bf16.sh [--lines N] [--runs N] [--threads N] [--out DIR]
# Needs build/engine/ckbatch (CK_BUILD_DIR overrides build/) and GNU time (/usr/bin/time).
# Writes DIR/speech_bf16.md (default build/speech_bf16).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${CK_BUILD_DIR:-$ROOT/build}
LINES=4 RUNS=3 THREADS=1 OUT=$BUILD/speech_bf16
COMMAND="bench/speech_bf16.sh $*"

while [ $# -gt 0 ]; do
    case $1 in
        --lines) LINES=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --threads) THREADS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) sed -n '9,11p' "$0" >&2; exit 2 ;;
    esac
done

CK=$BUILD/engine/ckbatch
for f in "$CK" /usr/bin/time; do
    [ -x "$f" ] || { echo "speech_bf16.sh: missing $f" >&2; exit 1; }
done
mkdir -p "$OUT"
head -n "$LINES" "$ROOT/bench/compare/quotes_en.phonemes.txt" > "$OUT/lines.txt"
: > "$OUT/times.txt"

# one run: "precision cpu_seconds wall_seconds" appended to times.txt
speak() {
    /usr/bin/time -f "$1 %U %S %e" -a -o "$OUT/times.raw" "$CK" speak -q -f phonemes \
        --noise-scale 0 --threads "$THREADS" --precision "$1" -i "$OUT/lines.txt" \
        -o "$OUT/$1.wav"
}
: > "$OUT/times.raw"
r=0
while [ "$r" -lt "$RUNS" ]; do
    speak fp32
    speak bf16
    r=$((r + 1))
done
awk '{ printf "%s %.2f %.2f\n", $1, $2 + $3, $4 }' "$OUT/times.raw" > "$OUT/times.txt"

median() { # precision column
    awk -v p="$1" -v c="$2" '$1 == p { print $c }' "$OUT/times.txt" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
FC=$(median fp32 2) BC=$(median bf16 2) FW=$(median fp32 3) BW=$(median bf16 3)
NLINES=$(wc -l < "$OUT/lines.txt" | tr -d ' ')
{
    echo "# speak: fp32 vs bf16 ($(date -u +%Y-%m-%d))"
    echo
    echo "Command: \`$COMMAND\`; $NLINES quotes lines, synthetic weights, --noise-scale 0,"
    echo "--threads $THREADS, runs interleaved. CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');"
    echo "bf16.wav's $(tr -c '[:print:]' '\n' < "$OUT/bf16.wav" | grep -o 'dispatch=.*' | head -n 1)."
    echo "Load after the runs (uptime): $(uptime | sed 's/.*load average: //')."
    echo
    echo "| run | precision | CPU s (user+sys) | wall s |"
    echo "|---|---|---|---|"
    awk '{ printf "| %d | %s | %s | %s |\n", NR, $1, $2, $3 }' "$OUT/times.txt"
    echo
    echo "Medians: fp32 $FC CPU s ($FW wall), bf16 $BC CPU s ($BW wall);"
    echo "fp32 / bf16 CPU time $(awk -v a="$FC" -v b="$BC" 'BEGIN { printf "%.2f", a / b }')x,"
    echo "wall $(awk -v a="$FW" -v b="$BW" 'BEGIN { printf "%.2f", a / b }')x."
} > "$OUT/speech_bf16.md"
cat "$OUT/speech_bf16.md"
