#!/usr/bin/env bash
# A scaling study through a real Slurm on this machine: installs Debian's slurm-wlm and
# munge when missing, starts munged, slurmctld and slurmd on localhost with a generated
# configuration (CPUs overcommitted, MpiDefault=pmix), submits slurm/sweep --ntasks 1,2,4 on
# a small job file, waits for the launches and the report job, then checks the results files
# (python3-h5py) and the report. The daemons it started are stopped by process id on exit.
#
# usage: slurm_sweep.sh RINGSCALE RINGSCALE_STATS SOURCE_DIR   (as root)
set -euo pipefail
ringscale=$1 stats=$2 src=$3
[ "$(id -u)" -eq 0 ] || { echo "slurm test: must run as root (it starts slurmd)"; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "slurm test: installing slurm-wlm and munge"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm munge >/dev/null
fi

tmp=$(mktemp -d /tmp/ringscale-slurm.XXXXXX)
pids=()
cleanup() {
    local rc=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "$rc" -ne 0 ]; then
        for log in "$tmp"/*.log; do echo "---- $log"; tail -n 30 "$log"; done
    fi
    rm -rf "$tmp"
    exit "$rc"
}
trap cleanup EXIT

# ---- munge ---------------------------------------------------------------------------
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
    --pid-file="$tmp/munged.pid" --seed-file="$tmp/munge.seed" --log-file="$tmp/munged.log" \
    2>>"$tmp/munged.log" &
pids+=($!)

# ---- slurm.conf: one node, 4 CPUs whatever the machine has --------------------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=ringscale-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)

for i in $(seq 120); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    [ "$i" -lt 120 ] || { echo "slurm test: node not idle after 60 s (state '$state')"; exit 1; }
    sleep 0.5
done
echo "slurm test: $(sinfo -V), node $host idle"

# ---- the study: a path with spaces and shell metacharacters must neither break nor run -----
study="$tmp/study one; \$(touch $tmp/PWNED) 'q' %j"
cat >"$tmp/small job.ini" <<'INI'
job = collectives
op = allreduce,alltoall
min-bytes = 4K
max-bytes = 64K
step-factor = 4
warmup = 2
iters = 12
INI
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export RINGSCALE_CPU_BIND=none
"$src/slurm/sweep" --ntasks 1,2,4 --output "$study" --name "rs test" \
    --ringscale "$ringscale" --stats "$stats" "$tmp/small job.ini" -- --timeout 120 \
    | tee "$tmp/sweep.out"
mapfile -t ids < <(sed -n 's/^submitted .*: job \([0-9]*\).*/\1/p' "$tmp/sweep.out")
[ "${#ids[@]}" -eq 4 ] || { echo "slurm test: expected 4 job ids"; exit 1; }

# ---- wait: no accounting database, so ask slurmctld (MinJobAge keeps finished jobs) -------
job_state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
start=$SECONDS
for id in "${ids[@]}"; do
    while :; do
        s=$(job_state "$id")
        case $s in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;;
        esac
        [ $((SECONDS - start)) -lt 240 ] || { echo "slurm test: job $id still $s after 240 s"; exit 1; }
        sleep 1
    done
    echo "slurm test: job $id $s ($(scontrol show job "$id" | grep -o 'ExitCode=[0-9:]*'))"
done
echo "slurm test: study finished in $((SECONDS - start)) s"
for log in "$study"/slurm-*.out; do echo "---- ${log##*/}"; tail -n 4 "$log"; done

# ---- checks ----------------------------------------------------------------------------------
fail=0
for id in "${ids[@]}"; do
    [ "$(job_state "$id")" = COMPLETED ] || { echo "FAIL: job $id ended $(job_state "$id")"; fail=1; }
done
[ ! -e "$tmp/PWNED" ] ||
    { echo "FAIL: a path was evaluated by a shell"; fail=1; }
/usr/bin/python3 "$src/tests/slurm/check_study.py" "$study" 1,2,4 "${ids[@]:0:3}" || fail=1
"$stats" summary "$study" >"$tmp/summary.txt" || { echo "FAIL: ringscale-stats summary"; fail=1; }
head -n 4 "$tmp/summary.txt" | cut -c1-150
report="$study/report/report.md"
if [ -s "$report" ]; then
    echo "slurm test: report $(wc -l <"$report") lines, $(ls "$study/report" | grep -c '\.png$') plot(s)"
    for p in 1 2 4; do grep -q "P=$p\|| *$p *|" "$report" || { echo "FAIL: report lacks P=$p"; fail=1; }; done
else
    echo "FAIL: no report at $report"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "slurm test: passed"
exit "$fail"
