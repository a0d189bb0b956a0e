#!/usr/bin/env bash
# CI: run the demo through workflow/profiles/slurm on a one-node SLURM cluster on localhost,
# brought up from Debian's packages (slurm-wlm, munge), and check that its outputs equal a
# local run's. Needs root (it installs the packages and starts munged, slurmctld and slurmd,
# which it stops at the end). Usage: .ci/slurm_cluster.sh [PYTHON_ENV_BIN_DIR]
#
# The cluster: one node (localhost) in two partitions, cpu and gpu, with a GPU GRES entry on
# File=/dev/null so that the GPU rules' requests (--gpus=1) are accepted; no accounting
# daemon, so the plugin polls squeue (MinJobAge is long enough for that).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
BIN=$(cd "${1:-.venv/bin}" && pwd)
export PATH="$BIN:$PATH"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
started=$(date +%s)

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

WORK=$(mktemp -d /tmp/ulr-slurm-ci.XXXXXX)
chmod 755 "$WORK"
# The config goes where SLURM looks by default: the jobstep plugin runs each job's command
# through a nested srun with every SLURM_* variable removed, SLURM_CONF included. A config
# already there is moved aside and put back at the end.
CONF_DIR=/etc/slurm
export SLURM_CONF="$CONF_DIR/slurm.conf"
mkdir -p "$CONF_DIR" "$WORK/saved"
for name in slurm.conf gres.conf; do
    if [[ -e $CONF_DIR/$name ]]; then mv "$CONF_DIR/$name" "$WORK/saved/$name"; fi
done
PIDS=()
LOCAL_PID=
stop_cluster() {
    # the local demo, where the script stops while it runs in the background: SIGTERM, which Snakemake
    # answers by stopping its jobs and releasing its lock, before its log and the daemons go
    if [[ -n $LOCAL_PID ]] && kill -0 "$LOCAL_PID" 2>/dev/null; then
        kill "$LOCAL_PID" 2>/dev/null || true
        wait "$LOCAL_PID" 2>/dev/null || true
    fi
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done; done
    for name in slurm.conf gres.conf; do
        rm -f "$CONF_DIR/$name"
        if [[ -e $WORK/saved/$name ]]; then mv "$WORK/saved/$name" "$CONF_DIR/$name"; fi
    done
    rm -rf "$WORK"
}
trap stop_cluster EXIT

# munge: a key of our own and a socket of our own, so that a munged already running is untouched
mkdir -p "$WORK/munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$WORK/munge" && chmod 711 "$WORK/munge" && chmod 400 "$WORK/munge/munge.key"
runuser -u munge -- munged --key-file "$WORK/munge/munge.key" --socket "$WORK/munge/munge.socket" \
    --pid-file "$WORK/munge/munged.pid" --log-file "$WORK/munge/munged.log" --seed-file "$WORK/munge/seed"
PIDS+=("$(cat "$WORK/munge/munged.pid")")

mkdir -p "$WORK/state" "$WORK/spool"
cat > "$SLURM_CONF" <<EOF
ClusterName=ulr-ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=600
GresTypes=gpu
NodeName=localhost CPUs=16 RealMemory=64000 Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
EOF
echo "NodeName=localhost Name=gpu File=/dev/null" > "$CONF_DIR/gres.conf"
cat > "$WORK/partitions.yaml" <<EOF
partitions:
  cpu: {max_gpu: 0}
  gpu: {max_gpu: 1, max_cpus_per_gpu: 16}
EOF

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 50); do
    [[ -s $WORK/slurmctld.pid && -s $WORK/slurmd.pid ]] && break
    sleep 0.2
done
PIDS+=("$(cat "$WORK/slurmd.pid")" "$(cat "$WORK/slurmctld.pid")")
for _ in $(seq 60); do
    sinfo -h -N -o %t | grep -qE '^(idle|mix|alloc)' && break
    sleep 1
done
sinfo
echo "cluster up after $(( $(date +%s) - started )) s"

LOCAL=slurm-ci-local
CLUSTER=slurm-ci-cluster
rm -rf "results/$CLUSTER"
# The local run to compare with; SLURM_CI_KEEP_LOCAL=1 keeps one made before (while debugging, or in .ci/run,
# the tests' end-to-end demo under this run name): Snakemake then finds it up to date, and runs what is not.
[[ ${SLURM_CI_KEEP_LOCAL:-0} == 1 ]] || rm -rf "results/$LOCAL"
# The local run goes on in the background while the cluster run waits on sbatch and squeue (most of
# its time): the two runs write disjoint outputs (results/<run>), so Snakemake's locks let them run
# side by side in one working directory. Its log goes to a file of its own, shown when it ends.
local_started=$(date +%s)
local_status=0
if [[ ${SLURM_CI_KEEP_LOCAL:-0} == 1 && -d results/$LOCAL ]]; then
    # A kept local run is brought up to date first, in the foreground (usually nothing to do): a Snakemake
    # that ends while the cluster run takes its locks removes .snakemake/locks under it.
    snakemake --workflow-profile workflow/profiles/default --cores 2 --config run=$LOCAL --quiet rules \
        > "$WORK/local.log" 2>&1 || local_status=$?
else
    snakemake --workflow-profile workflow/profiles/default --cores 2 --config run=$LOCAL --quiet rules \
        > "$WORK/local.log" 2>&1 &
    LOCAL_PID=$!
fi

cluster_started=$(date +%s)
snakemake --profile workflow/profiles/slurm --config run=$CLUSTER --quiet rules --verbose \
    --slurm-partition-config "$WORK/partitions.yaml" --slurm-status-command squeue \
    --slurm-init-seconds-before-status-checks 2 --latency-wait 5 --jobs 8 > "$WORK/snakemake.log" 2>&1 \
    || { tail -n 80 "$WORK/snakemake.log"; tail -n 30 "$WORK/slurmctld.log"; exit 1; }
cluster_seconds=$(( $(date +%s) - cluster_started ))

# `wait PID` gives the local run's exit status (a failed `wait` would end the script under set -e
# before the log is shown, hence the `||`); the EXIT trap no longer has a job to stop after it.
if [[ -n $LOCAL_PID ]]; then
    wait "$LOCAL_PID" || local_status=$?
    LOCAL_PID=
fi
# its own time: until its log was last written (it may well have ended before the cluster run)
local_seconds=$(( $(stat -c %Y "$WORK/local.log") - local_started ))
echo "local demo (run $LOCAL):"
cat "$WORK/local.log"
if (( local_status != 0 )); then
    echo "the local demo failed (exit $local_status)" >&2
    exit 1
fi

python .ci/compare_runs.py "results/$LOCAL" "results/$CLUSTER" "$WORK/snakemake.log"
rm -rf "results/$CLUSTER"
[[ ${SLURM_CI_KEEP_LOCAL:-0} == 1 ]] || rm -rf "results/$LOCAL"
echo "SLURM CI: local demo ${local_seconds} s, cluster demo ${cluster_seconds} s (side by side)," \
    "total $(( $(date +%s) - started )) s"
