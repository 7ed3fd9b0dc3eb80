#!/usr/bin/env bash
# distributed.sh - wall time of one corpus encoded three ways on this machine, in one run:
#   A  1 process x T threads                 (ckbatch -t T)
#   B  T shards x 1 thread, one core each    (taskset -c k ckbatch --shard k/T -t 1, at once) + merge
#      (what `mpirun -np T` with its default core binding gives each rank; no MPI needed)
#   C  T shards x 1 thread, unbound          (the same, without taskset) + merge
#   D  T ranks x 1 thread, in place          (mpirun -np T ckbatch-mpi -t 1, mpirun's default core
#      binding, loopback only; no merge: the ranks write the one file) - when ckbatch-mpi is built
# Each configuration runs ROUNDS times, interleaved (A B C A B C ...), so background load hits all
# of them alike; every output is cmp'd against A's. Prints one line per run and the merge cost
# per GB of output. Writes only under WORK (removed at the end).
#
#   bash bench/distributed.sh [CORPUS] [ROUNDS]
#   env: CKBATCH (binary, default build/engine/ckbatch), CKBATCH_MPI (default
#        build/engine/ckbatch-mpi, skipped when absent), THREADS (default 2), FORMAT (text),
#        WORK (scratch dir, default a mktemp -d under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-../shared/corpus/quotes_en.txt}
rounds=${2:-1}
bin=${CKBATCH:-build/engine/ckbatch}
mpi_bin=${CKBATCH_MPI:-build/engine/ckbatch-mpi}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
threads=${THREADS:-2}
format=${FORMAT:-text}
work=${WORK:-$(mktemp -d /tmp/ck_dist_bench.XXXXXX)}
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

run_a() { "$bin" -q -t "$threads" -f "$format" -i "$corpus" -o "$work/a.st"; }
run_shards() { # $1: bind (1) or not (0); output $work/s.st
    local pids=() k
    rm -f "$work"/s.st*
    for ((k = 0; k < threads; k++)); do
        if [ "$1" = 1 ]; then
            taskset -c "$k" "$bin" -q -t 1 -f "$format" --shard "$k/$threads" -i "$corpus" \
                -o "$work/s.st" &
        else
            "$bin" -q -t 1 -f "$format" --shard "$k/$threads" -i "$corpus" -o "$work/s.st" &
        fi
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
}

echo "corpus $corpus ($(wc -c <"$corpus") bytes), $threads threads or shards, $rounds round(s)," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
    t=$(now); run_a; echo "A 1 x $threads threads:          $(since "$t") s"
    for bind in 1 0; do
        t=$(now); run_shards "$bind"; enc=$(since "$t")
        m=$(now); "$bin" merge -q -o "$work/s.st"; mt=$(since "$m")
        label=$([ "$bind" = 1 ] && echo "B $threads shards x 1, bound:" || echo "C $threads shards x 1, unbound:")
        same=$(cmp -s "$work/a.st" "$work/s.st" && echo identical || echo DIFFERENT)
        bytes=$(stat -c %s "$work/s.st")
        echo "$label   $(awk -v a="$enc" -v b="$mt" 'BEGIN { printf "%.2f", a + b }') s" \
             "(encode $enc s + merge $mt s of $bytes bytes:" \
             "$(awk -v t="$mt" -v b="$bytes" 'BEGIN { printf "%.2f", t / (b / 1e9) }') s/GB), $same"
        rm -f "$work"/s.st*
    done
    if [ -x "$mpi_bin" ]; then
        t=$(now)
        mpirun --mca btl self,vader --mca oob_tcp_if_include lo -np "$threads" "$mpi_bin" -q -t 1 \
            -f "$format" -i "$corpus" -o "$work/d.st"
        same=$(cmp -s "$work/a.st" "$work/d.st" && echo identical || echo DIFFERENT)
        echo "D $threads ranks x 1, in place:   $(since "$t") s, $same"
        rm -f "$work"/d.st*
    fi
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
