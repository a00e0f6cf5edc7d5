#!/usr/bin/env bash
# What the job machinery costs on one GPU (a benchmark, not a test): the median
# step time of ring_attention at np=1 (S=16K, H=16, D=128, bf16, --device cuda --comm nccl)
# against the bare kernels' median time for the same shape (bench_attention_gpu: the
# forward, and forward + backward for --pass fwd+bwd), causal and not. Prints the ratio
# job / kernel per case. Goal: <= 1.10 everywhere (exit 1 when missed).
# ATTN_KERNEL=cudnn: the launch runs --attn-kernel cudnn (forward only) against the bare cuDNN
# call (bench_cudnn_gpu), goal 1.05.
# Fails with one line (exit 2) where there is no GPU or no CUDA build.
# Build first:  cmake --build build --target ringscale ringscale-stats bench_attention_gpu
#               (and bench_cudnn_gpu for ATTN_KERNEL=cudnn)
# usage: tests/bench/job_overhead.sh [BUILD_DIR] [ITERS]
#        env SEQ (16384), ATTN_KERNEL (auto | cudnn), GOAL (1.10; 1.05 with cudnn)
set -euo pipefail
build=${1:-build} iters=${2:-20} seq=${SEQ:-16384} attn=${ATTN_KERNEL:-auto}
[[ $attn == auto || $attn == cudnn ]] || { echo "job_overhead.sh: ATTN_KERNEL must be auto or cudnn" >&2; exit 2; }
goal=${GOAL:-$([[ $attn == cudnn ]] && echo 1.05 || echo 1.10)}
passes=fwd,fwd+bwd
exe="$build/tests/bench_attention_gpu" rs="$build/src/ringscale"
[[ $attn == cudnn ]] && exe="$build/tests/bench_cudnn_gpu" passes=fwd
stats="$build/analysis/ringscale-stats"
fail() { echo "job_overhead.sh: $*" >&2; exit 2; }
for f in "$exe" "$rs" "$stats"; do
    [[ -x $f ]] || fail "$f not found; build ringscale, ringscale-stats and bench_attention_gpu (needs CUDA)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each program prints its own one-line reason (no GPU, ...) on stderr when it cannot run.
if [[ $attn == cudnn ]]; then
    "$exe" "$iters" "$seq" >"$work/kernel" || fail "bench_cudnn_gpu failed (reason above)"
else
    "$exe" --pass both "$iters" "$seq" >"$work/kernel" || fail "bench_attention_gpu failed (reason above)"
fi
mpirun --bind-to none -np 1 "$rs" --job ring_attention --device cuda --comm nccl --dtype bf16 \
    --attn-kernel "$attn" --seq-len "$seq" --heads 16 --head-dim 128 --causal 0,1 \
    --pass "$passes" --validate off \
    -w 3 -n "$iters" -o "$work/job.h5" >"$work/job.out" 2>&1 ||
    { cat "$work/job.out" >&2; fail "the ring_attention launch failed (output above)"; }
"$stats" summary --format csv "$work/job.h5" >"$work/job.csv" || fail "ringscale-stats failed"
echo "# ring_attention np=1 (nccl, bf16, S=$seq, H=16, D=128, --attn-kernel $attn) vs the bare kernels, $iters iters"
printf "%6s %8s | %10s %10s | %6s\n" causal pass kernel_ms job_ms ratio
awk -F, -v goal="$goal" '
    /^#/ { next }
    NR == FNR { split($0, f, " "); if (f[1] == "bf16") ms[f[3] " " f[4]] = f[5]; next }
    FNR == 1 { next }
    {
        if (!match($1, /causal=[01]/)) next
        causal = substr($1, RSTART + 7, 1)
        if (!match($1, /pass=[^ ]+/)) next
        pass = substr($1, RSTART + 5, RLENGTH - 5)
        kernel = ms[causal " fwd"] + (pass == "fwd+bwd" ? ms[causal " bwd"] : 0)
        if (!(kernel > 0)) { printf "no kernel time for causal=%s %s\n", causal, pass; bad = 1; next }
        if ($5 == "") { printf "causal=%s %s: no time (%s)\n", causal, pass, $NF; bad = 1; next }
        job = $5 * 1e3
        ratio = job / kernel
        rows++
        printf "%6s %8s | %10.3f %10.3f | %6.3f\n", causal, pass, kernel, job, ratio
        if (ratio > goal) bad = 1
    }
    END {
        if (rows == 0) { print "no results to compare"; exit 1 }
        if (bad) { printf "goal NOT met: job / kernel > %s on some case\n", goal; exit 1 }
        printf "goal met: job / kernel <= %s on every case\n", goal
    }' "$work/kernel" "$work/job.csv"
