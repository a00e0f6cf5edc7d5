#!/usr/bin/env bash
# Benchmark (by hand, not a test): ringscale's training step against PyTorch's on the
# same model, data shape and threads, with a protocol fit for a shared machine: ROUNDS rounds,
# each running every configuration once from every build and from PyTorch in turn, the load
# average printed before and after each run; then per configuration the median step time (min-max
# over the rounds) and the speed ringscale/PyTorch (T_torch / T_ringscale, > 1: ringscale faster).
#   configurations: np=1 with 2 threads (ddp), np=2 with 1 thread a rank (ddp, and zero1 against
#   torch.distributed.optim.ZeroRedundancyOptimizer); the model of train_step.sh's comparison
#   (4 layers, hidden 512, 8 heads, vocab 1024, seq 256, 2048 tokens a step, strong scaling, fp32,
#   AdamW); each run is WARMUP (1) + ITERS (5) steps, its figure the median timed step of the
#   slowest rank; --bind-to none.
#   PyTorch runs with the OpenBLAS core ringscale's launch recorded (/meta blas_core): both then
#   use the same sgemm kernels (ringscale restarts itself with a suited OPENBLAS_CORETYPE where
#   OpenBLAS does not know the CPU; PyTorch would run the generic core there).
#   Against the hardware: the machine's all-core fp32 FMA peak (BUILD/tests/bench_fma_peak,
#   measured before the first round and after the last; the higher of the two) beside each
#   configuration's step rate (the launch's flops_per_iter over the median step), and the
#   ceiling it sets: the step at the peak itself, and the fraction of the peak a speed of 1.5x
#   PyTorch needs.
# usage: tests/bench/train_step_vs_torch.sh BUILD [OLD_BUILD] [ROUNDS]
#   OLD_BUILD: a build of an older commit, run in the same rounds with its own defaults.
# Needs /usr/bin/python3 with torch and h5py (Debian: python3-torch python3-h5py).
set -euo pipefail
root="$(cd -- "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
new="${1:?usage: train_step_vs_torch.sh BUILD [OLD_BUILD] [ROUNDS]}"
old="${2:-}"
rounds="${3:-5}"
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || { echo "train_step_vs_torch.sh: ROUNDS must be 1-99" >&2; exit 2; }
[[ -x "$new/tests/bench_fma_peak" ]] ||
    { echo "train_step_vs_torch.sh: $new/tests/bench_fma_peak not built" >&2; exit 2; }
for b in "$new" ${old:+"$old"}; do
    [[ -x "$b/src/ringscale" ]] || { echo "train_step_vs_torch.sh: $b/src/ringscale not built" >&2; exit 2; }
done
/usr/bin/python3 -c "import torch, h5py" 2>/dev/null ||
    { echo "train_step_vs_torch.sh: /usr/bin/python3 needs torch and h5py" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS
iters="${ITERS:-5}" warmup="${WARMUP:-1}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
model=(--job train_step --train-seq-len 256 --tokens 2048 --scaling strong -n "$iters" -w "$warmup"
    --validate off)
configs=("1 2 ddp" "2 1 ddp" "2 1 zero1")
load() { cut -d' ' -f1 /proc/loadavg; }
# GFLOP/s of all cores together, from bench_fma_peak's line.
fma_peak() { "$new/tests/bench_fma_peak" | sed -n 's/.* \([0-9.]*\) on [0-9]* core(s) together.*/\1/p'; }
h5() { # h5 FILE: "<median step s> <blas core> <flops per step>"
    /usr/bin/python3 -c 'import sys, h5py, numpy as np
sys.path.insert(0, sys.argv[2])
from h5_cases import flat  # one reader of both schemas
with h5py.File(sys.argv[1]) as f:
    c = next(iter(f["cases"].values()))
    t = c["time_s"][:][c["is_warmup"][:] == 0].max(axis=1)
    core = f["meta"].attrs.get("blas_core", b"-")
    core = core.decode() if isinstance(core, bytes) else str(core)
    flops = flat(c).get("flops_per_iter", 0)
    print(f"{np.median(t):.4f} {core} {float(flops):.6g}")' "$1" "$root/tests/bench"
}
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), torch" \
    "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), $rounds rounds, $iters steps a run"
printf '%-5s %-22s %-8s %9s %9s %9s  %s\n' round config who step_s load0 load1 blas_core
: >"$out/rows"
: >"$out/flops"
peak0="$(fma_peak)"
echo "# FMA peak before the rounds: $peak0 GFLOP/s on all cores"
for r in $(seq 1 "$rounds"); do
    for c in "${configs[@]}"; do
        read -r np th variant <<<"$c"
        name="np=$np x $th thr $variant"
        core=""
        for who in new ${old:+old} torch; do
            l0="$(load)"
            if [[ $who == torch ]]; then
                zero=0
                [[ $variant == zero1 ]] && zero=1
                s="$(env ${core:+OPENBLAS_CORETYPE=$core} /usr/bin/python3 \
                    "$root/tests/bench/train_step_torch.py" --np "$np" --threads "$th" \
                    --iters "$iters" --warmup "$warmup" --zero "$zero" |
                    sed -n 's/.*step_s=\([0-9.]*\).*/\1/p')"
                c_used="${core:-default}"
            else
                b="$new"
                [[ $who == old ]] && b="$old"
                mpirun -q --oversubscribe --bind-to none -np "$np" "$b/src/ringscale" "${model[@]}" \
                    --dp-variant "$variant" --threads "$th" -o "$out/run.h5" >/dev/null 2>&1
                read -r s c_used flops <<<"$(h5 "$out/run.h5")"
                [[ $who == new ]] && echo "$name|$flops" >>"$out/flops"
                rm -f "$out/run.h5"
                [[ $who == new ]] && core="$c_used"
            fi
            printf '%-5s %-22s %-8s %9s %9s %9s  %s\n' "$r" "$name" "$who" "$s" "$l0" "$(load)" "$c_used"
            echo "$name|$who|$s" >>"$out/rows"
        done
    done
done
peak1="$(fma_peak)"
echo "# FMA peak after the rounds: $peak1 GFLOP/s on all cores"
echo "== medians over $rounds rounds (min-max); speed = T_torch / T_ringscale"
/usr/bin/python3 - "$out/rows" "$out/flops" "$peak0" "$peak1" <<'PY'
import sys, statistics as st
peak = max(float(sys.argv[3] or 0), float(sys.argv[4] or 0))
flops = {}
for line in open(sys.argv[2]):
    name, f = line.strip().split("|")
    flops[name] = float(f or 0)  # a failed launch: no ceiling printed
rows = {}
for line in open(sys.argv[1]):
    name, who, s = line.strip().split("|")
    rows.setdefault(name, {}).setdefault(who, []).append(float(s))
for name, d in rows.items():
    parts = [f"{w} {st.median(v):.3f} s ({min(v):.3f}-{max(v):.3f})" for w, v in d.items()]
    torch = st.median(d["torch"])
    speed = [f"{w}/torch {torch / st.median(v):.2f}x" for w, v in d.items() if w != "torch"]
    per_round = [t / n for t, n in zip(d["torch"], d["new"])]
    print(f"{name:22s} " + ", ".join(parts))
    print(f"{'':22s} " + ", ".join(speed) +
          f"; per round new {min(per_round):.2f}-{max(per_round):.2f}x")
    if peak > 0 and flops.get(name, 0) > 0:
        f = flops[name] * 1e-9  # GFLOP a step, all ranks
        rate = f / st.median(d["new"])
        at_peak = f / peak
        print(f"{'':22s} new {rate:.1f} GFLOP/s, {rate / peak:.2f} of the FMA peak ({peak:.1f});"
              f" at the peak a step takes {at_peak:.3f} s, {torch / at_peak:.2f}x torch;"
              f" 1.5x torch needs {f / (torch / 1.5) / peak:.2f} of the peak")
PY
