#!/usr/bin/env bash
# By hand (not in CI): what train_step's --cp-placement costs across emulated nodes. One
# launch on 2 nodes x 2 ranks with links shaped to RATE: dp 2 x cp 2 with each replica's cp
# ranks inside a node (the default) and forced across nodes; prints each case's median step.
# The cp exchanges (K/V ring steps every layer, forward and backward) then cross the shaped
# link in one placement, and the data-parallel gradient allreduce in the other.
#
# usage: cp_placement.sh RINGSCALE MPIEXEC WORKDIR [RATE]   (as root; RATE default 300mbit)
set -euo pipefail
ringscale=$1 mpiexec=$2 work=$3 rate=${4:-300mbit}
source "$(dirname -- "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
cluster_up 2 "$rate"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_mpi_yield_when_idle=1
"$mpiexec" -q --hostfile "$RSC_HOSTFILE" -np 4 --map-by slot --bind-to none "$ringscale" \
    --job train_step --dp 2 --cp 2 --cp-placement node,across --train-seq-len 1K --layers 2 \
    --hidden 256 --heads 4 --threads 1 -w 1 -n 5 --timeout 300 -o "$work/cp.h5"
/usr/bin/python3 - "$work/cp.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    for name, g in f["cases"].items():
        t = g["time_s"][...]
        timed = t[g["is_warmup"][...] == 0]
        slowest = timed.max(axis=1) if timed.ndim == 2 else timed
        print(f"{g['identity'].attrs['cp_placement']}: median step {np.median(slowest):.3f} s"
              f" over {len(slowest)} steps, status {g['outcome'].attrs['status']}")
PY
