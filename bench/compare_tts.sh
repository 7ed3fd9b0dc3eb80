#!/bin/sh
# compare_tts.sh - the whole text-to-speech path of ckbatch (`ckbatch speak`, fp32; bf16 when the engine
# accepts it) vs ONNX Runtime (the whole-model export of tools/kokoro_onnx_export.py) vs the project's
# PyTorch reference (tools/kokoro_reference.py on OpenBLAS), same synthetic weights, same lines, noise
# zeroed, at each thread count, interleaved: real-time factor, peak RSS and agreement with fp32 PyTorch.
# It must not build ckbatch (build it first) nor run in ctest or CI.
#
# usage: bench/compare_tts.sh [--smoke] [--threads 1,2] [--lines 5] [--runs 2] [--out DIR]
# Needs: build/engine/ckbatch (CK_BUILD_DIR overrides build/), Debian python3-torch +
# libopenblas0-openmp, node + `npm install --ignore-scripts` in bench/compare/, /usr/bin/time.
# Writes DIR/compare_tts.{json,md}; the lines are the corpus's first LINES of 30 to 50 bytes (95 in
# bench/compare/quotes_en.phonemes.txt: a larger --lines times those 95, and the report says 95).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE="$ROOT/bench/compare"
BUILD=${CK_BUILD_DIR:-$ROOT/build}
THREADS=1,2 LINES=5 RUNS=2 OUT=$BUILD/compare_tts
COMMAND="bench/compare_tts.sh $*"

while [ $# -gt 0 ]; do
    case $1 in
        --smoke) THREADS=1 LINES=1 RUNS=1; shift ;;
        --threads) THREADS=$2; shift 2 ;;
        --lines) LINES=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) sed -n '7,10p' "$0" >&2; exit 2 ;;
    esac
done

CKBATCH="$BUILD/engine/ckbatch"
for f in "$CKBATCH" "$HERE/node_modules/onnxruntime-node" /usr/bin/time; do
    [ -e "$f" ] || { echo "compare_tts.sh: missing $f (build ckbatch; npm install --ignore-scripts in $HERE)" >&2; exit 1; }
done
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-openmp
[ -e "$OPENBLAS/libblas.so.3" ] || { echo "compare_tts.sh: apt-get install libopenblas0-openmp" >&2; exit 1; }
mkdir -p "$OUT"
PY=/usr/bin/python3
TORCH_ENV="LD_LIBRARY_PATH=$OPENBLAS OPENBLAS_CORETYPE=Cooperlake"
load() { uptime | sed 's/.*load average: //'; }
LOAD_BEFORE=$(load)

LC_ALL=C awk 'length($0) >= 30 && length($0) <= 50' "$HERE/quotes_en.phonemes.txt" | head -n "$LINES" \
    > "$OUT/lines.phonemes.txt"
GOT=$(wc -l < "$OUT/lines.phonemes.txt")
if [ "$GOT" -lt "$LINES" ]; then
    echo "compare_tts.sh: the corpus has $GOT lines of 30 to 50 bytes; timing those, not $LINES" >&2
    LINES=$GOT
fi
$PY "$HERE/tts.py" prepare --lines "$OUT/lines.phonemes.txt" --out "$OUT/inputs.json"
if [ ! -e "$OUT/kokoro.onnx" ] || [ "$ROOT/tools/kokoro_onnx_export.py" -nt "$OUT/kokoro.onnx" ]; then
    echo "compare_tts.sh: exporting the ONNX model" >&2
    env $TORCH_ENV $PY "$ROOT/tools/kokoro_onnx_export.py" --out "$OUT/kokoro.onnx" > "$OUT/export.log" 2>&1 \
        || { cat "$OUT/export.log" >&2; exit 1; }
fi

# bf16 joins the timed engines only when ckbatch accepts it; its refusal goes into the report.
: > "$OUT/notes.txt"
ENGINES="ckbatch-fp32 onnxruntime pytorch"
if "$CKBATCH" speak -q -f phonemes --noise-scale 0 --threads 1 --precision bf16 --sample-format f32 \
        -i "$OUT/lines.phonemes.txt" -o "$OUT/probe.bf16.wav" 2> "$OUT/bf16.log"; then
    ENGINES="ckbatch-fp32 ckbatch-bf16 onnxruntime pytorch"
else
    printf 'ckbatch bf16 not timed: `ckbatch speak --precision bf16` refused: %s\n' \
        "$(grep -v 'NOT Kokoro' "$OUT/bf16.log" | sed 's/^ckbatch: speak: //' | tr '\n' ' ')" >> "$OUT/notes.txt"
fi

# One timed process: engine, threads, run. Appends a JSON line to runs.jsonl.
timed() {
    e=$1 t=$2 r=$3 tag="$OUT/$1.t$2"
    case $e in
        ckbatch-*)
            /usr/bin/time -f %M -o "$tag.rss" "$CKBATCH" speak -f phonemes --noise-scale 0 --threads "$t" \
                --precision "${e#ckbatch-}" --sample-format f32 -i "$OUT/lines.phonemes.txt" -o "$tag.wav" \
                2> "$tag.log"
            audio=$(sed -n 's/.* \([0-9.]*\) s of audio in \([0-9.]*\) s .*/\1/p' "$tag.log")
            wall=$(sed -n 's/.* \([0-9.]*\) s of audio in \([0-9.]*\) s .*/\2/p' "$tag.log") ;;
        onnxruntime)
            OMP_NUM_THREADS=$t /usr/bin/time -f %M -o "$tag.rss" node "$HERE/ort_tts.js" --model "$OUT/kokoro.onnx" \
                --inputs "$OUT/inputs.json" --threads "$t" --json "$tag.json" --audio "$tag.f32" ;;
        pytorch)
            env $TORCH_ENV OMP_NUM_THREADS=$t /usr/bin/time -f %M -o "$tag.rss" $PY "$HERE/tts.py" torch \
                --inputs "$OUT/inputs.json" --threads "$t" --json "$tag.json" --audio "$tag.f32" ;;
    esac
    case $e in
        ckbatch-*) ;;
        *) wall=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['wall_s'])" "$tag.json")
           audio=$($PY -c "import json,sys; print(sum(json.load(open(sys.argv[1]))['samples']) / 24000)" "$tag.json") ;;
    esac
    printf '{"engine":"%s","threads":%s,"run":%s,"wall_s":%s,"audio_s":%s,"peak_rss_kib":%s}\n' \
        "$(echo "$e" | tr - ' ')" "$t" "$r" "$wall" "$audio" "$(tail -n 1 "$tag.rss")" >> "$OUT/runs.jsonl"
}

: > "$OUT/runs.jsonl"
r=1
while [ "$r" -le "$RUNS" ]; do
    for t in $(echo "$THREADS" | tr , ' '); do
        for e in $ENGINES; do
            echo "compare_tts.sh: run $r, $t thread(s), $e" >&2
            timed "$e" "$t" "$r"
            # keep run 1's audio of every engine at every thread count for the agreement
            [ "$r" -gt 1 ] || for x in wav f32; do [ ! -e "$OUT/$e.t$t.$x" ] || cp "$OUT/$e.t$t.$x" "$OUT/$e.t$t.run1.$x"; done
        done
    done
    r=$((r + 1))
done

T1=$(echo "$THREADS" | cut -d, -f1)
AGREE="ckbatch fp32=$OUT/ckbatch-fp32.t$T1.run1.wav,onnxruntime=$OUT/onnxruntime.t$T1.run1.f32"
case $ENGINES in *bf16*) AGREE="$AGREE,ckbatch bf16=$OUT/ckbatch-bf16.t$T1.run1.wav" ;; esac
$PY "$HERE/tts.py" agree --reference "$OUT/pytorch.t$T1.run1.f32" --lengths "$OUT/pytorch.t$T1.json" \
    --engine "$AGREE" --json "$OUT/agree.json"
printf '{"lines":%s,"runs":%s,"threads":"%s","cpu":"%s x %s","load_before":"%s","load_after":"%s"}\n' \
    "$LINES" "$RUNS" "$THREADS" "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)" "$(nproc)" \
    "$LOAD_BEFORE" "$(load)" > "$OUT/meta.json"
$PY "$HERE/tts.py" report --dir "$OUT" --command "$COMMAND"
echo "compare_tts.sh: wrote $OUT/compare_tts.json, compare_tts.md" >&2
