#!/usr/bin/env bash
# speak_batch.sh - `ckbatch speak` batches (docs/speak.md "Batches"), on the embedded synthetic
# weights, voice synthetic, the first LINES lines of at most MAXLEN (40) bytes of a text corpus:
#   batch    batched (default --max-batch-frames) vs one line at a time (--max-batch-frames 1),
#            same --threads, interleaved, median of REPS of the summary's seconds (read, G2P,
#            speak, write: not the model load), ratio one-at-a-time / batched; the WAVs compared
#   threads  batched at --threads 1 vs 2, interleaved, median, ratio 1 / 2
#   rss      peak RSS (/usr/bin/time -v) of a 4-line vs a 20-line batched run
# Usage: bench/speak_batch.sh [batch|threads|rss|all] (env: CK_BIN, CORPUS, LINES (default 8),
# REPS (default 3), THREADS (default 2), MAXLEN). Each run's seconds go to stderr as it ends (on
# a loaded machine, run REPS=1 several times, each under 3 minutes, and take the medians of the
# pairs). Prints the CPU and load. Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
bin=${CK_BIN:-build/engine/ckbatch}
corpus=${CORPUS:-../shared/corpus/quotes_en.txt}
lines=${LINES:-8}
reps=${REPS:-3}
threads=${THREADS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
maxlen=${MAXLEN:-40}
short() { # no `| head`: under pipefail its early close would kill the script (SIGPIPE)
    awk -v m="$maxlen" -v n="$1" 'length($0) <= m && length($0) > 0 && k < n {print; k++}' "$corpus"
}
short "$lines" > "$dir/in.txt"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cpus"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); $lines lines of $corpus (<= $maxlen bytes)"

# seconds of one run (the summary's "in X s"); $1 output, rest: extra flags
one() {
    local out=$1
    shift
    "$bin" speak --voice synthetic "$@" -i "$dir/in.txt" -o "$dir/$out" 2> "$dir/err.txt"
    grep -o 'audio in [0-9.]* s' "$dir/err.txt" | awk '{print $3}' | tee -a "$dir/log.txt"
    echo "  run $out $*: $(tail -n 1 "$dir/log.txt") s, load $(cut -d' ' -f1 /proc/loadavg)" >&2
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

if [ "$what" = batch ] || [ "$what" = all ]; then
    : > "$dir/b.txt"
    : > "$dir/o.txt"
    for r in $(seq "$reps"); do
        one b.wav --threads "$threads" >> "$dir/b.txt"
        one o.wav --threads "$threads" --max-batch-frames 1 >> "$dir/o.txt"
    done
    cmp -s "$dir/b.wav" "$dir/o.wav" && same=yes || same=NO
    b=$(median < "$dir/b.txt")
    o=$(median < "$dir/o.txt")
    echo "batch: --threads $threads batched $(tr '\n' ' ' < "$dir/b.txt")-> median $b s;" \
         "one at a time $(tr '\n' ' ' < "$dir/o.txt")-> median $o s;" \
         "ratio $(awk -v o="$o" -v b="$b" 'BEGIN {printf "%.2f", o / b}')x; same bytes: $same"
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ "$what" = threads ] || [ "$what" = all ]; then
    : > "$dir/t1.txt"
    : > "$dir/t2.txt"
    for r in $(seq "$reps"); do
        one t1.wav --threads 1 >> "$dir/t1.txt"
        one t2.wav --threads 2 >> "$dir/t2.txt"
    done
    cmp -s "$dir/t1.wav" "$dir/t2.wav" && same=yes || same=NO
    a=$(median < "$dir/t1.txt")
    b=$(median < "$dir/t2.txt")
    echo "threads: 1: $(tr '\n' ' ' < "$dir/t1.txt")-> median $a s;" \
         "2: $(tr '\n' ' ' < "$dir/t2.txt")-> median $b s;" \
         "ratio $(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", a / b}')x;" \
         "same bytes: $same"
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ "$what" = rss ] || [ "$what" = all ]; then
    for n in 4 20; do
        short "$n" > "$dir/in.txt"
        /usr/bin/time -v "$bin" speak -q --voice synthetic --threads "$threads" -i "$dir/in.txt" \
            -o "$dir/r.wav" 2> "$dir/time.txt"
        kb=$(grep 'Maximum resident set size' "$dir/time.txt" | grep -o '[0-9]*$')
        wall=$(grep 'Elapsed (wall clock)' "$dir/time.txt" | awk '{print $NF}')
        echo "rss: $n lines: peak RSS $kb KiB, wall $wall, $(stat -c %s "$dir/r.wav") WAV bytes"
    done
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
