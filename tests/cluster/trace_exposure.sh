#!/usr/bin/env bash
# --trace across emulated nodes: ring attention (overlap on) on 2 nodes x 1 rank, its link
# shaped first to 200 Mbit/s, then to 50 Mbit/s (4x slower); `ringscale-stats overlap` of each
# launch: the ring's transfer takes longer and its exposed part (the transfer the rank did not
# compute under) grows as the link slows. Skips (77) without namespaces.
#
# usage: trace_exposure.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR   (as root)
set -euo pipefail
ringscale=$1 stats=$2 mpiexec=$3 work=$4
source "$(dirname -- "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
cluster_up 2 200mbit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_mpi_yield_when_idle=1

# K and V of one rank: 2 x 4 heads x 1K rows x 64 x 4 bytes = 2 MiB a ring step: about 84 ms at
# 200 Mbit/s and 336 ms at 50 Mbit/s, beside a block's attention of some tens of ms.
launch() { # out
    "$mpiexec" -q --hostfile "$RSC_HOSTFILE" -np 2 --map-by slot --bind-to none "$ringscale" \
        --job ring_attention --seq-len 2K --heads 4 --head-dim 64 --pass fwd --overlap on \
        --threads 1 -w 1 -n 3 --trace 1 --validate off --accuracy off --timeout 120 -o "$1" \
        >"$1.log" 2>&1 || { cat "$1.log"; echo "FAIL: launch $1"; exit 1; }
}
exposed() { # file -> "transfer_ms exposed_ms" summed over ranks and steps
    "$stats" overlap --format csv "$1" >"$1.csv" || { echo "FAIL: overlap $1"; exit 1; }
    /usr/bin/python3 - "$1.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(sum(float(r["transfer_ms"]) for r in rows), sum(float(r["exposed_ms"]) for r in rows))
PY
}
launch "$work/fast.h5"
for node in 0 1; do "$cluster" shape "$cluster_id" "$node" 50mbit; done
launch "$work/slow.h5"
read -r fast_transfer fast_exposed < <(exposed "$work/fast.h5")
read -r slow_transfer slow_exposed < <(exposed "$work/slow.h5")
echo "200 Mbit/s: transfer $fast_transfer ms, exposed $fast_exposed ms"
echo "50 Mbit/s: transfer $slow_transfer ms, exposed $slow_exposed ms"
/usr/bin/python3 - "$fast_transfer" "$fast_exposed" "$slow_transfer" "$slow_exposed" <<'PY'
import sys
ft, fe, st, se = map(float, sys.argv[1:])
# The slow link's transfer takes longer (at least twice: its rate is a quarter), and the part
# of it no compute hid grows by at least half the transfer's growth.
assert st >= 2 * ft, f"the 4x slower link's transfer took {st:.1f} ms against {ft:.1f} ms"
assert se - fe >= 0.5 * (st - ft), f"exposed {fe:.1f} -> {se:.1f} ms as the transfer grew"
print("ok: the exposed part grew as the link slowed")
PY
