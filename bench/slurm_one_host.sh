#!/usr/bin/env bash
# slurm_one_host.sh - T12 of ../shared/DISTRIBUTED.md: a real Slurm (munged, slurmctld, slurmd) on
# this one host, inside a private network namespace where only loopback exists, runs
# examples/slurm/submit.sh: a job array of shards and the afterok merge. Checks that the merged
# file is cmp-identical to a single run, and that one failing task cancels the merge
# (--kill-on-invalid-dep) instead of leaving it pending. Every daemon is stopped by its PID.
# Not run by CI (it needs root, unshare and `bash scripts/bootstrap.sh slurm`).
#
#   bash bench/slurm_one_host.sh        (env CKBATCH: the binary, default build/engine/ckbatch)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "${CK_SLURM_INSIDE:-0}" != 1 ]; then
    for tool in unshare slurmctld slurmd munged sbatch; do
        command -v "$tool" >/dev/null || { echo "slurm_one_host: $tool missing (bash scripts/bootstrap.sh slurm)" >&2; exit 2; }
    done
    exec unshare -n env CK_SLURM_INSIDE=1 bash "$0" "$@"
fi

ip link set lo up
bin=$(readlink -f "${CKBATCH:-build/engine/ckbatch}")
work=$(mktemp -d /tmp/ck_slurm.XXXXXX)
host=$(hostname -s)
pids=()
stop() { # the daemons, newest first, each by its own PID
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
        wait "${pids[i]}" 2>/dev/null || true
    done
    echo "slurm_one_host: daemons stopped; logs in $work"
}
trap stop EXIT
t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f s", b - a }'; }

mkdir -p "$work/state" "$work/spool" /run/munge
chown munge:munge /run/munge
cat >"$work/slurm.conf" <<EOF
ClusterName=ck
SlurmctldHost=$host(127.0.0.1)
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=one Nodes=ALL Default=YES MaxTime=INFINITE State=UP
# loopback-only namespace: without IPv6 enabled slurmctld cannot resolve 127.0.0.1 (DISTRIBUTED.md 2.2)
CommunicationParameters=EnableIPv6
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmUser=root
AuthType=auth/munge
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
EOF
export SLURM_CONF=$work/slurm.conf
setpriv --reuid=munge --regid=munge --init-groups munged -F >"$work/munged.log" 2>&1 &
pids+=($!)
sleep 0.2
slurmctld -D -i >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D >"$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    sinfo -h -o %T 2>/dev/null | grep -q idle && break
    sleep 0.1
done
sinfo -h -o %T | grep -q idle || { echo "slurm_one_host: node never idle" >&2; exit 1; }
echo "slurm_one_host: node idle after $(elapsed)"

# a corpus for the tiny circuit (phoneme symbols it knows), one bad line to skip
awk 'BEGIN { srand(25); split(";:,.!?", sym, "");
             for (i = 1; i <= 4000; i++) { if (i == 1234) { print "##"; continue }
                 n = 1 + int(rand() * 30); line = ""
                 for (k = 0; k < n; k++) line = line sym[1 + int(rand() * 6)]
                 print line } }' >"$work/c.txt"
args="-f phonemes --circuit $root/tests/fixtures/circuits/tiny.json --on-error skip"

# wait_jobs ID...: until none of them is pending or running; prints their final states
wait_jobs() {
    for _ in $(seq 600); do
        squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null | grep -q . || break
        sleep 0.2
    done
    for j in "$@"; do scontrol -o show job "$j" | grep -oE "JobId=[0-9_]+ |JobState=[A-Z]+|ExitCode=[0-9:]+|Reason=[A-Za-z]+" | tr '\n' ' '; echo; done
}

cd "$work"
"$bin" -q -t 2 $args -i c.txt -o whole.st   # the same --input string as the tasks: it is recorded
out=$(CKBATCH=$bin SHARDS=4 PARALLEL=2 CPUS=1 bash "$root/examples/slurm/submit.sh" c.txt out.st $args)
echo "slurm_one_host: $out"
array=$(sed -E 's/array job ([0-9]+).*/\1/' <<<"$out")
merge=$(sed -E 's/.*merge job ([0-9]+).*/\1/' <<<"$out")
wait_jobs "$array" "$merge"
cmp whole.st out.st && echo "slurm_one_host: array + afterok merge: cmp-identical to the single run ($(elapsed))"
ls out.st.shard-* 2>/dev/null && { echo "slurm_one_host: shards left after the merge" >&2; exit 1; }

# one failing task (--on-error stop with a bad line in shard 1's range): the merge is cancelled
out=$(CKBATCH=$bin SHARDS=4 CPUS=1 bash "$root/examples/slurm/submit.sh" c.txt bad.st \
      -f phonemes --circuit "$root/tests/fixtures/circuits/tiny.json")
echo "slurm_one_host: $out"
array=$(sed -E 's/array job ([0-9]+).*/\1/' <<<"$out")
merge=$(sed -E 's/.*merge job ([0-9]+).*/\1/' <<<"$out")
wait_jobs "$array" "$merge"
scontrol -o show job "$merge" | grep -q "JobState=CANCELLED" &&
    echo "slurm_one_host: failed task cancelled the merge (DependencyNeverSatisfied), no bad.st: $([ -e bad.st ] && echo PRESENT || echo absent)"
grep -h "error" ckbatch-encode-*_1.log | tail -1
echo "slurm_one_host: done in $(elapsed)"
