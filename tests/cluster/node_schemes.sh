#!/usr/bin/env bash
# The node-aware schemes across emulated nodes: one cluster of 4 nodes whose links are shaped
# to 300 Mbit/s, one launch on 2 nodes x 2 ranks and one on 4 nodes x 2, each running the
# collectives at --scope intra and inter and the context-parallel hybrid with its Ulysses
# groups inside the nodes (the default) and forced across them. check_node_schemes.py reads
# both files (python3-h5py): every case ok and validated, nodes and ranks_per_node in every
# identity, inter-node busbw near the shaped rate and far below the intra-node one, /meta's
# interfaces and transport, and the hybrid's time by placement. Skips (77) without namespaces.
#
# usage: node_schemes.sh RINGSCALE MPIEXEC WORKDIR   (as root)
set -euo pipefail
ringscale=$1 mpiexec=$2 work=$3
source "$(dirname -- "$0")/lib.sh"
rate=300mbit rate_bits=300000000
rm -rf "$work" && mkdir -p "$work"
cluster_up 4 "$rate"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
# Up to 8 ranks on this machine's cores: waiting ranks (the idle ones of --scope inter, those
# in a barrier) yield the core instead of spinning, so the ranks that talk get the CPU TCP
# needs.
export OMPI_MCA_mpi_yield_when_idle=1

# Collectives of 8 MiB (TCP's slow start and the rendezvous round trips fade by then), and a
# small attention problem whose exchanges weigh against its compute: 8 sequences of 512
# tokens, 8 query heads and 2 key/value heads of 64, forward only; the hybrid's degree
# resolves to the 2 ranks per node. With grouped K/V the Ulysses all-to-all (Q, K, V in, O
# out) moves 2.5x the bytes of a ring step (K, V): the placement decides which crosses nodes.
cases=(--job collectives,context_parallel --op sendrecv,allreduce -b 8M -e 8M --scope intra,inter
    --variant hybrid --ulysses-placement node,across --seq-len 512 --batch 8 --heads 8
    --kv-heads 2 --head-dim 64 --pass fwd --threads 1 -w 1 -n 4 --timeout 90)
launch() { # nodes out
    head -n "$1" "$RSC_HOSTFILE" >"$work/hosts$1"
    "$mpiexec" -q --hostfile "$work/hosts$1" -np $(($1 * 2)) --map-by slot --bind-to none \
        "$ringscale" "${cases[@]}" -o "$2" 2>"$2.err" | tee "$2.log"
    cat "$2.err"
    tail -n 1 "$2.log" | grep -qx "results: $2"
}
start=$SECONDS
launch 2 "$work/nodes2.h5"
launch 4 "$work/nodes4.h5"
echo "launches took $((SECONDS - start)) s"
/usr/bin/python3 "$(dirname -- "$0")/check_node_schemes.py" "$rate_bits" 2 \
    "$work/nodes2.h5" "$work/nodes4.h5"
echo "passed"
