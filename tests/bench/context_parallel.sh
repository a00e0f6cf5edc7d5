#!/usr/bin/env bash
# The four ways to shard long-context attention side by side on the same inputs: ring
# attention (ring_attention job) and context_parallel's all-gather, Ulysses and hybrid
# (np=4 only, u=2: Ulysses in pairs, a ring of 2 pairs). One launch per rank count, S=8192,
# H=8, D=64, causal, zigzag sharding, fwd and fwd+bwd. Prints each launch's closing
# comparison, then one table over both rank counts read from the HDF5 files with h5py.
# Correctness is the tests' job (test_jobs_context_parallel_mpi): validation is off here.
# usage: tests/bench/context_parallel.sh [BUILD_DIR] [OUT_DIR]
#        env WARMUP (1), ITERS (5), SEQ (8K), NPS ("2 4")
set -euo pipefail
build=${1:-build} out=${2:-results/bench_context_parallel}
warmup=${WARMUP:-1} iters=${ITERS:-5} seq=${SEQ:-8K} nps=${NPS:-2 4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exe="$build/src/ringscale"
[[ -x "$exe" ]] || { echo "context_parallel.sh: $exe not found; build target ringscale" >&2; exit 2; }
mkdir -p "$out"
files=()
for np in $nps; do
    variants=allgather,ulysses hybrid=()
    # --ulysses-degree shapes only the hybrid: refused in a launch without one
    [[ $np -eq 4 ]] && variants=allgather,ulysses,hybrid hybrid=(--ulysses-degree 2)
    file="$out/np$np.h5"
    rm -f "$file"
    echo "### np=$np: ring_attention + context_parallel --variant $variants"
    mpirun -q --oversubscribe -np "$np" "$exe" --job ring_attention,context_parallel \
        --variant "$variants" "${hybrid[@]}" --seq-len "$seq" --heads 8 --kv-heads 8 \
        --head-dim 64 --batch 1 --causal 1 --layout zigzag --pass fwd,fwd+bwd \
        --validate off -w "$warmup" -n "$iters" -o "$file" |
        sed -n '/^# comparison/,$p'
    files+=("$file")
done
echo
echo "### side by side (time: median over timed iterations of the slowest rank; comm%: its"
echo "### blocked-on-communication share; peak: largest rank's tracked host bytes and RSS)"
RINGSCALE_BENCH_DIR="$(cd -- "$(dirname "$0")" && pwd)" /usr/bin/python3 - "${files[@]}" <<'EOF'
import sys
import h5py
import numpy as np

import os  # noqa: E402
sys.path.insert(0, os.environ["RINGSCALE_BENCH_DIR"])
from h5_cases import flat  # noqa: E402  (one reader of both schemas)

rows = []
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        for order, name in enumerate(f["cases"]):
            c = f["cases"][name]
            a = flat(c)
            if a["status"] != "ok":
                print(f"# {path} case {name}: {a['status']} {a['error']}")
                continue
            timed = c["is_warmup"][:] == 0
            # The launcher's definitions: medians over timed iterations of the slowest rank.
            t = float(np.median(c["time_s"][:][timed].max(axis=1)))
            wait = float(np.median(c["comm_wait_s"][:][timed].max(axis=1)))
            world = int(a["world_size"])
            rows.append((world, a["pass"] != "fwd", order, a["pass"], a["variant"], t,
                         100 * wait / t, a["flops_per_iter"] / t / world / 1e9,
                         a["comm_bytes_per_iter"] / 2**20, c["peak_host_bytes"][:].max() / 2**20,
                         c["peak_rss_bytes"][:].max() / 2**20))
print(f"{'np':>3} {'pass':>8} {'scheme':>12} {'time_s':>9} {'comm%':>6} {'GF/s/rank':>10} "
      f"{'sent_MiB':>9} {'peak_MiB':>9} {'rss_MiB':>8}")
for world, _, _, p, v, t, share, gf, sent, peak, rss in sorted(rows, key=lambda r: r[:3]):
    print(f"{world:>3} {p:>8} {v:>12} {t:>9.3f} {share:>6.0f} {gf:>10.2f} {sent:>9.1f} "
          f"{peak:>9.1f} {rss:>8.1f}")
EOF
