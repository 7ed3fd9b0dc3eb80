#!/usr/bin/env bash
# run-demo.sh - README command 1: set up, build Release, and encode the bundled example text with the
# embedded default (synthetic demo weights unless --weights is passed through).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCK_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ckbatch
mkdir -p out
./build/engine/ckbatch --threads "$(nproc)" --format text --lang en-us \
    --input examples/sample_en.txt --output out/sample_en.features.safetensors "$@"
echo "wrote out/sample_en.features.safetensors"
