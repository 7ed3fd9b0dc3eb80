#!/bin/sh
# compare.sh - ckbatch (fp32, bf16 and int8) vs PyTorch (OpenBLAS, padded) vs ONNX Runtime (FP32 and dynamic
# INT8, padded and equal-length), same synthetic weights, same inputs, one run, and the accuracy of
# the reduced-precision engines against FP32; it must not build ckbatch (build it first) nor run in
# ctest.
#
# usage: bench/compare.sh [--smoke] [--threads 1,2] [--lengths 36,128,512] [--tokens N]
#                         [--corpus-lines N] [--runs N] [--out DIR]
# Needs: build/bench/ckbench and build/engine/ckbatch (CK_BUILD_DIR overrides build/), Debian
# python3-torch + python3-onnx + libopenblas0-openmp, node + `npm install --ignore-scripts` in
# bench/compare/, gnuplot (PNG; skipped with a note when missing). Writes DIR/compare.{json,md,png}.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE="$ROOT/bench/compare"
BUILD=${CK_BUILD_DIR:-$ROOT/build}
THREADS=1,2 LENGTHS=36,128,512 TOKENS=2048 LINES=128 RUNS=3 OUT=$BUILD/compare
BUDGET=2048  # ckbench's default --max-batch-tokens; the baselines' padded positions per batch
CHECK=8      # agreement batch: the corpus's first sequences, one padded batch for the baselines
COMMAND="bench/compare.sh $*"

while [ $# -gt 0 ]; do
    case $1 in
        --smoke) THREADS=1 LENGTHS=36 TOKENS=72 LINES=3 RUNS=1; shift ;;
        --threads) THREADS=$2; shift 2 ;;
        --lengths) LENGTHS=$2; shift 2 ;;
        --tokens) TOKENS=$2; shift 2 ;;
        --corpus-lines) LINES=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) sed -n '6,11p' "$0" >&2; exit 2 ;;
    esac
done

for f in "$BUILD/bench/ckbench" "$BUILD/engine/ckbatch" "$HERE/node_modules/onnxruntime-node"; do
    [ -e "$f" ] || { echo "compare.sh: missing $f (build ckbatch; npm install --ignore-scripts in $HERE)" >&2; exit 1; }
done
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-openmp
[ -e "$OPENBLAS/libblas.so.3" ] || { echo "compare.sh: apt-get install libopenblas0-openmp" >&2; exit 1; }
mkdir -p "$OUT"
PY="/usr/bin/python3 $HERE/baselines.py"

head -n "$LINES" "$HERE/quotes_en.phonemes.txt" > "$OUT/corpus.phonemes.txt"
head -n "$CHECK" "$OUT/corpus.phonemes.txt" > "$OUT/check.phonemes.txt"
$PY prepare --lengths "$LENGTHS" --tokens "$TOKENS" --corpus "$OUT/corpus.phonemes.txt" \
    --budget "$BUDGET" --out "$OUT/workloads.json"
$PY export --out "$OUT/encoder.onnx" 2> "$OUT/export.log" || { cat "$OUT/export.log" >&2; exit 1; }
$PY quantize --model "$OUT/encoder.onnx" --out "$OUT/encoder.int8.onnx"

echo "compare.sh: ckbatch" >&2
for p in fp32 bf16 int8; do
    "$BUILD/engine/ckbatch" -i "$OUT/check.phonemes.txt" -o "$OUT/check.ckbatch.$p.safetensors" \
        -t 1 -q --precision $p
done
"$BUILD/bench/ckbench" --threads "$THREADS" --lengths "$LENGTHS" --tokens "$TOKENS" \
    --corpus "$OUT/corpus.phonemes.txt" --corpus-format phonemes --runs "$RUNS" --precision fp32,bf16,int8 \
    --max-batch-tokens "$BUDGET" --json "$OUT/ckbatch.json" --markdown "$OUT/ckbench.md" > /dev/null

echo "compare.sh: PyTorch" >&2
LD_LIBRARY_PATH=$OPENBLAS OPENBLAS_CORETYPE=Cooperlake \
    $PY torch --workloads "$OUT/workloads.json" --threads "$THREADS" --runs "$RUNS" --json "$OUT/pytorch.json"

echo "compare.sh: ONNX Runtime" >&2
node "$HERE/ort_bench.js" --models "fp32=$OUT/encoder.onnx,int8=$OUT/encoder.int8.onnx" \
    --workloads "$OUT/workloads.json" --threads "$THREADS" --runs "$RUNS" --json "$OUT/onnxruntime.json" \
    --check-prefix "$OUT/check.ort" --check-sequences "$CHECK"

$PY agree --workloads "$OUT/workloads.json" --ckbatch "$OUT/check.ckbatch.fp32.safetensors" \
    --ckbatch-bf16 "$OUT/check.ckbatch.bf16.safetensors" --ckbatch-int8 "$OUT/check.ckbatch.int8.safetensors" \
    --ort "$OUT/check.ort.fp32.f32" \
    --ort-int8 "$OUT/check.ort.int8.f32" --sequences "$CHECK" --json "$OUT/agree.json"
/usr/bin/python3 "$HERE/report.py" --dir "$OUT" --command "$COMMAND"
if command -v gnuplot > /dev/null; then
    (cd "$OUT" && gnuplot compare.gp)
    echo "compare.sh: wrote $OUT/compare.json, compare.md, compare.png" >&2
else
    echo "compare.sh: gnuplot missing (apt-get install gnuplot-nox): no compare.png" >&2
fi
