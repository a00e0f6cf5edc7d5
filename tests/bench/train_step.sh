#!/usr/bin/env bash
# Training-step evidence: the machine's fp32 FMA peak (bench_fma_peak), dense-layer GFLOP/s
# against bare OpenBLAS sgemm (bench_dense, same machine, same run), then the default model (4
# layers, hidden 512, 8 heads, vocab 1024, seq 512, 4096 tokens per step) at np=1 and np=2 for ddp, zero1 and fsdp, strong scaling:
# step time (median over timed steps of the slowest rank), efficiency T1/(2*T2), the
# exposed-communication share (comm_wait / step time) and each variant's memory per rank;
# then the same model on a 1 x 2 grid (dp=1, cp=2) with ring, all-gather and Ulysses
# attention inside the step, as the launcher's table shows it (time, comm share); then the
# summary tables.
# First, against PyTorch: the model of jobs/presets/train.ini at seq 256, 2048 tokens, ddp,
# fp32, np=1 and np=2 with cores/np threads per rank, ringscale and a PyTorch DDP step of the
# same model (tests/bench/train_step_torch.py, gloo, torch.set_num_threads) when
# `/usr/bin/python3 -c "import torch"` works (Debian: apt-get install python3-torch; a
# benchmark dependency only, not in tests/install-deps.sh), the ratio ringscale/PyTorch as
# speed (T_torch / T_ringscale, > 1: ringscale faster), one rank at 1 and 2 threads, and the
# per-operation breakdown of one rank's step (--profile on, ringscale-stats profile).
#   tests/bench/train_step.sh [BUILD_DIR]      (default: build; configured with CUDA off)
# VS_TORCH_ONLY=1 stops after that comparison.
# ITERS (3) and WARMUP (1) set the timed and warm-up steps per case. On a 2-core machine a
# step takes seconds: the figures are noisy, the whole script a few minutes.
set -euo pipefail
root="$(cd -- "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" -DRINGSCALE_ENABLE_CUDA=OFF
fi
cmake --build "$build" -j2 --target ringscale ringscale-stats bench_dense bench_fma_peak
# The hardware's limit the rates below are read against (per CPU second, so load
# does not lower it): dense GFLOP/s and MFU are fractions of this all-core figure.
echo "load average: $(cut -d" " -f1-3 /proc/loadavg)"
"$build/tests/bench_fma_peak"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS

cores="$(nproc)"
cmp_args=(--job train_step --dp-variant ddp --train-seq-len 256 --tokens 2048 --scaling strong
    -n "${ITERS:-3}" -w "${WARMUP:-1}" --validate off)
# Median step time (slowest rank) of the one case in an HDF5 file.
step_s() {
    /usr/bin/python3 -c 'import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    c = next(iter(f["cases"].values()))
    t = c["time_s"][:][c["is_warmup"][:] == 0].max(axis=1)
    print(f"{np.median(t):.4f}")' "$1"
}
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
have_torch=0
/usr/bin/python3 -c "import torch" 2>/dev/null && have_torch=1
[[ $have_torch == 1 ]] || echo "(PyTorch not importable: apt-get install python3-torch to compare)"
echo "== ringscale vs PyTorch DDP: 4 layers, hidden 512, 8 heads, vocab 1024, seq 256,"
echo "   2048 tokens, fp32, ddp, --bind-to none, threads per rank = $cores cores / np"
printf '%-4s %-8s %14s %12s %22s\n' np threads "ringscale (s)" "torch (s)" "speed ringscale/torch"
for np in 1 2; do
    th=$(( cores / np > 0 ? cores / np : 1 ))
    mpirun -q --oversubscribe --bind-to none -np "$np" "$build/src/ringscale" "${cmp_args[@]}" \
        --threads "$th" -o "$out/cmp$np.h5" >/dev/null
    ours="$(step_s "$out/cmp$np.h5")"
    theirs="-" ratio="-"
    if [[ $have_torch == 1 ]]; then
        theirs="$(/usr/bin/python3 "$root/tests/bench/train_step_torch.py" --np "$np" \
            --threads "$th" --iters "${ITERS:-3}" --warmup "${WARMUP:-1}" |
            sed -n 's/.*step_s=\([0-9.]*\).*/\1/p')"
        ratio="$(/usr/bin/python3 -c "print(f'{$theirs / $ours:.2f}x')")"
    fi
    printf '%-4s %-8s %14s %12s %22s\n' "$np" "$th" "$ours" "$theirs" "$ratio"
done
echo "== one rank, 1 and 2 threads (thread scaling inside a rank)"
for th in 1 2; do
    mpirun -q --oversubscribe --bind-to none -np 1 "$build/src/ringscale" "${cmp_args[@]}" \
        --threads "$th" -o "$out/th$th.h5" >/dev/null
done
t1="$(step_s "$out/th1.h5")" t2="$(step_s "$out/th2.h5")"
/usr/bin/python3 -c "print(f'1 thread {$t1:.3f} s, 2 threads {$t2:.3f} s: {$t1 / $t2:.2f}x')"
echo "== where the time goes: np=1, $cores threads, --profile on"
mpirun -q --oversubscribe --bind-to none -np 1 "$build/src/ringscale" "${cmp_args[@]}" \
    --threads "$cores" --profile on -o "$out/profile.h5" >/dev/null
"$build/analysis/ringscale-stats" profile "$out/profile.h5"
[[ "${VS_TORCH_ONLY:-0}" == 1 ]] && exit 0

echo "== dense layers: linear fwd/bwd vs cblas_sgemm (4096 tokens, hidden 512, 2 threads)"
"$build/tests/bench_dense" --tokens 4096 --hidden 512 --threads 2 --reps 5

for np in 1 2; do
    echo "== train_step default model, np=$np (ddp, zero1, fsdp; strong scaling)"
    mpirun -q --oversubscribe --bind-to none -np "$np" "$build/src/ringscale" --job train_step \
        --dp-variant ddp,zero1,fsdp --scaling strong -n "${ITERS:-3}" -w "${WARMUP:-1}" \
        --validate off -o "$out/np$np.h5" | grep -v '^\[case'
done

echo "== train_step default model, np=2 as dp=1 x cp=2 (ddp): --cp-variant ring, allgather, ulysses"
mpirun -q --oversubscribe --bind-to none -np 2 "$build/src/ringscale" --job train_step --cp 2 \
    --cp-variant ring,allgather,ulysses -n "${ITERS:-3}" -w "${WARMUP:-1}" --validate off \
    -o "$out/cp.h5" | grep -v '^\[case'

RINGSCALE_BENCH_DIR="$(cd -- "$(dirname "$0")" && pwd)" /usr/bin/python3 - "$out" <<'PY'
import sys, h5py, numpy as np

import os  # noqa: E402
sys.path.insert(0, os.environ["RINGSCALE_BENCH_DIR"])
from h5_cases import flat  # noqa: E402  (one reader of both schemas)

def cases(path):
    out = {}
    with h5py.File(path) as f:
        for c in f["cases"].values():
            timed = c["is_warmup"][:] == 0
            t = c["time_s"][:][timed].max(axis=1)          # slowest rank per step
            w = c["comm_wait_s"][:][timed].max(axis=1)
            mem = {k: c[k][0] / 2**20 for k in
                   ("param_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes",
                    "comm_buffer_bytes")}
            mem["peak"] = c["peak_host_bytes"][0] / 2**20
            a = flat(c)
            out[a["variant"]] = dict(t=np.median(t), w=np.median(w / t),
                                     tok=a["tokens_per_iter"], flops=a["flops_per_iter"], mem=mem)
    return out

one, two = cases(sys.argv[1] + "/np1.h5"), cases(sys.argv[1] + "/np2.h5")
print("\n== step time, strong scaling (median of the slowest rank; flops: 6*N*tokens + attention)")
print(f"{'variant':8} {'T1 (s)':>8} {'T2 (s)':>8} {'eff T1/(2T2)':>13} {'exposed comm np2':>17}"
      f" {'tok/s np1':>10} {'tok/s np2':>10} {'GF/s np1':>9}")
for v in ("ddp", "zero1", "fsdp"):
    a, b = one[v], two[v]
    print(f"{v:8} {a['t']:8.2f} {b['t']:8.2f} {a['t'] / (2 * b['t']):13.2f} {100 * b['w']:16.1f}%"
          f" {a['tok'] / a['t']:10.0f} {b['tok'] / b['t']:10.0f} {a['flops'] / a['t'] / 1e9:9.1f}")
print("\n== memory per rank, np=2 (MiB; peak = tracked host allocations)")
print(f"{'variant':8} {'params':>8} {'grads':>8} {'optim':>8} {'activ':>8} {'commbuf':>8} {'peak':>8}")
for v in ("ddp", "zero1", "fsdp"):
    m = two[v]["mem"]
    print(f"{v:8} {m['param_bytes']:8.1f} {m['grad_bytes']:8.1f} {m['optimizer_bytes']:8.1f}"
          f" {m['activation_bytes']:8.1f} {m['comm_buffer_bytes']:8.1f} {m['peak']:8.1f}")
PY
