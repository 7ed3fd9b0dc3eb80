#!/usr/bin/env bash
# speak_mpi.sh - `mpirun -np 2 ckbatch-mpi speak -t 1 -o OUT.wav`: in place (this build) against the
# earlier shards + join on rank 0 (OLD_MPI: a ckbatch-mpi built from the mpi_main.c before the
# in-place write), interleaved A B A B ..., each output cmp-checked against one `ckbatch speak`.
# usage: OLD_MPI=path bash bench/speak_mpi.sh INPUT [ROUNDS] [BUILD]   (text lines, misaki)
set -euo pipefail
in=${1:?input}; rounds=${2:-3}; build=${3:-build}; old=${OLD_MPI:?OLD_MPI=path of the old ckbatch-mpi}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
args=(speak -q --voice synthetic -t 1 -f text -i "$in")
mpi=(mpirun --allow-run-as-root --mca btl self,vader --mca oob_tcp_if_include lo -np 2)
"$build/engine/ckbatch" "${args[@]}" -o "$work/one.wav"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; lines $(wc -l < "$in")"
for r in $(seq 1 "$rounds"); do
    for mode in inplace join; do
        bin="$build/engine/ckbatch-mpi"; [ "$mode" = join ] && bin=$old
        t0=$(date +%s.%N)
        "${mpi[@]}" "$bin" "${args[@]}" -o "$work/$mode.wav"
        t1=$(date +%s.%N)
        cmp "$work/one.wav" "$work/$mode.wav" && cmp "$work/one.wav.jsonl" "$work/$mode.wav.jsonl"
        printf 'round %d %-8s %7.2f s  load %s\n' "$r" "$mode" "$(echo "$t1 - $t0" | bc)" \
            "$(cut -d' ' -f1 /proc/loadavg)"
        rm -f "$work/$mode.wav" "$work/$mode.wav.jsonl"
    done
done
