#!/usr/bin/env bash
# A scaling study through a real Slurm on this machine: installs Debian's slurm-wlm and
# munge when missing, starts munged, slurmctld and slurmd on localhost with a generated
# configuration (CPUs overcommitted, MpiDefault=pmix), submits slurm/sweep --ntasks 1,2,4 on
# a small job file, waits for the launches and the report job, then checks the results files
# (python3-h5py) and the report. The daemons it started are stopped by process id on exit.
# (tests/cluster/slurm_nodes.sh does the same across emulated nodes; both use lib.sh.)
#
# usage: slurm_sweep.sh RINGSCALE RINGSCALE_STATS SOURCE_DIR   (as root)
set -euo pipefail
ringscale=$1 stats=$2 src=$3
source "$src/tests/slurm/lib.sh"
trap 'rc=$?; slurm_stop "$rc"; exit "$rc"' EXIT
slurm_begin

host=$(hostname -s)
slurm_config "$host" 127.0.0.1 4 "$host:127.0.0.1"
slurm_start_ctld
slurm_start_slurmd "$host"
slurm_wait_idle "$host"

# A path with spaces and shell metacharacters must neither break nor run.
study="$tmp/study one; \$(touch $tmp/PWNED) 'q' %j"
slurm_study "$study" --ntasks 1,2,4 --name "rs test"
slurm_wait_jobs "${ids[@]}"
slurm_check_study "$study" 1,2,4
[ ! -e "$tmp/PWNED" ] || { echo "FAIL: a path was evaluated by a shell"; fail=1; }
[ "$fail" -eq 0 ] && echo "slurm test: passed"
exit "$fail"
