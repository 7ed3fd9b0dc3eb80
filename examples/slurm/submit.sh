#!/bin/bash
# submit.sh - encodes INPUT into OUTPUT on a Slurm cluster: a job array of SHARDS tasks (at most
# PARALLEL at once), then a merge job that runs only if every task succeeded.
#   SHARDS=64 PARALLEL=16 [CPUS=8] bash submit.sh corpus.txt corpus.safetensors [ckbatch options...]
# e.g. ... corpus.txt out.safetensors --format text --lang en-us --weights kokoro-v1_0.pth
# After a failure: sacct -j <array job> --format=JobID,State,ExitCode lists the failed indices;
# fix the cause, resubmit only those (RETRY=7,19 with the same SHARDS and options: --resume
# continues them) and a new merge job is queued behind them.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: SHARDS=N [PARALLEL=K] [RETRY=i,j,...] bash submit.sh INPUT OUTPUT [ckbatch options]" >&2
    exit 2
fi
input=$1 output=$2
shift 2
: "${SHARDS:?set SHARDS, the number of shards (keep each at 10+ minutes of work)}"
parallel=${PARALLEL:-$SHARDS}
array=${RETRY:-0-$((SHARDS - 1))}
here=$(cd "$(dirname "$0")" && pwd)
export SHARDS INPUT="$input" OUTPUT="$output" CKBATCH_ARGS="$*"
# CPUS: cores per task (default: encode.sbatch's --cpus-per-task); ckbatch runs that many threads
job=$(sbatch --parsable --array="$array%$parallel" ${CPUS:+--cpus-per-task="$CPUS"} --export=ALL \
             "$here/encode.sbatch")
# afterok alone would leave the merge PENDING (Reason=Dependency) forever after a failed task;
# --kill-on-invalid-dep=yes cancels it instead (DependencyNeverSatisfied)
merge=$(sbatch --parsable --dependency="afterok:${job%%;*}" --kill-on-invalid-dep=yes \
               --export=ALL "$here/merge.sbatch")
echo "array job $job (shards $array of $SHARDS), merge job $merge"
