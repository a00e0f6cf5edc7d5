#!/usr/bin/env bash
# A scaling study through a real Slurm across 4 emulated nodes (links shaped to 1 Gbit/s):
# slurmctld here (on the cluster's bridge address), one slurmd in each node's namespace under
# the node's hostname (own spool, pid and log files), then slurm/sweep --nodes 1,2,4
# --tasks-per-node 2 (srun --mpi=pmix) and the report job; the results files must say how many
# hosts each launch ran on and which ranks ran where. Daemons and cluster are removed on exit.
# Skips (77) without namespaces; installs slurm-wlm and munge when missing (tests/slurm/lib.sh).
#
# usage: slurm_nodes.sh RINGSCALE RINGSCALE_STATS SOURCE_DIR   (as root)
set -euo pipefail
ringscale=$1 stats=$2 src=$3
source "$src/tests/cluster/lib.sh"
source "$src/tests/slurm/lib.sh"
cluster_before_down() { slurm_stop "$1"; }
# A checkout or build under /tmp (a clone in /tmp, say) stays visible on the nodes.
shares=()
for p in "$src" "$(dirname -- "$ringscale")" "$(dirname -- "$stats")"; do
    p=$(realpath -- "$p")
    [[ $p == /tmp/?* ]] || continue
    p=${p#/tmp/} && p=/tmp/${p%%/*} # the top directory under /tmp
    [[ " ${shares[*]} " == *" $p "* ]] || shares+=(--share-tmp "$p")
done
cluster_up 4 1gbit 2 --private-tmp "${shares[@]}" # PMIx's per-step directory is /tmp/spmix_appdir_UID_STEP
slurm_tmp_base=/var/tmp # the daemons' files, seen by every node (each node has its own /tmp)
slurm_begin

specs=() k=0
for node in $RSC_NODES; do
    specs+=("$node:10.213.$cluster_id.$((10 + k))")
    k=$((k + 1))
done
slurm_config "$(hostname -s)" "10.213.$cluster_id.1" 2 "${specs[@]}"
slurm_start_ctld
k=0
for node in $RSC_NODES; do
    slurm_start_slurmd "$node" "$cluster" exec "$cluster_id" "$k"
    k=$((k + 1))
done
# shellcheck disable=SC2086
slurm_wait_idle $RSC_NODES

slurm_study "$tmp/study" --nodes 1,2,4 --tasks-per-node 2 --name "nodes test"
slurm_wait_jobs "${ids[@]}"
slurm_check_study "$tmp/study" 2,4,8 1,2,4
[ "$fail" -eq 0 ] && echo "slurm test: passed"
exit "$fail"
