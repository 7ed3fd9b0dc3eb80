#!/usr/bin/env bash
# run-demo.sh - README command 1: set up, build Release, encode the bundled example text and speak
# it into out/sample_en.wav, with the embedded default (synthetic demo weights, NOT Kokoro's: the
# audio is then not speech) unless --weights kokoro-v1_0.pth is passed through (real speech).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCK_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ckbatch
mkdir -p out
./build/engine/ckbatch --threads "$(nproc)" --format text --lang en-us \
    --input examples/sample_en.txt --output out/sample_en.features.safetensors "$@"
echo "wrote out/sample_en.features.safetensors"

# speak takes the weights of the arguments (the others belong to the encoder run above)
speak_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --weights) speak_args+=(--weights "${args[i + 1]:-}"); i=$((i + 1)) ;;
        --weights=*) speak_args+=(--weights "${args[i]#--weights=}") ;;
    esac
done
if [ ${#speak_args[@]} -eq 0 ]; then
    echo "run-demo: speaking with the embedded synthetic weights: they are NOT Kokoro's and the" \
         "audio is not speech (pass --weights kokoro-v1_0.pth for real speech)" >&2
fi
./build/engine/ckbatch speak --threads "$(nproc)" -f text --lang en-us \
    -i examples/sample_en.txt -o out/sample_en.wav "${speak_args[@]}"
echo "wrote out/sample_en.wav (24 kHz) and out/sample_en.wav.jsonl (word times)"
