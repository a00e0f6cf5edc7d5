#!/usr/bin/env bash
# Collectives across emulated nodes: an emulated cluster of 2 nodes whose links are shaped to
# 300 Mbit/s, one mpirun of 2 nodes x 2 ranks (filled in order, so the sendrecv ring crosses
# each link once per direction) and the same cases on one node; both files read with
# python3-h5py: hosts and host_index per rank, every case validated, inter-node sendrecv busbw
# near the shaped rate and far below the intra-node one. Skips (77) without namespaces.
#
# usage: launch.sh RINGSCALE MPIEXEC WORKDIR   (as root)
set -euo pipefail
ringscale=$1 mpiexec=$2 work=$3
source "$(dirname -- "$0")/lib.sh"
rate=300mbit rate_bits=300000000
rm -rf "$work" && mkdir -p "$work"
cluster_up 2 "$rate"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
# 4 ranks on this machine's cores: a waiting rank yields its core instead of spinning, so the
# ranks that talk get the CPU TCP needs (spinning ranks held sendrecv to 0.58-0.64 of the rate
# on a loaded machine).
export OMPI_MCA_mpi_yield_when_idle=1

cases=(--job collectives --op sendrecv,allreduce -b 1M -e 8M -f 8 -w 1 -n 4 --timeout 60)
launch() { # np out
    "$mpiexec" -q --hostfile "$RSC_HOSTFILE" -np "$1" --map-by slot --bind-to none \
        "$ringscale" "${cases[@]}" -o "$2" | tee "$2.log"
    tail -n 1 "$2.log" | grep -qx "results: $2"
}
start=$SECONDS
launch 4 "$work/inter.h5"
launch 2 "$work/intra.h5"
echo "launches took $((SECONDS - start)) s"
/usr/bin/python3 "$(dirname -- "$0")/check_cluster_launch.py" "$work/inter.h5" "$work/intra.h5" \
    "${RSC_NODES// /,}" 2 "$rate_bits"
echo "passed"
