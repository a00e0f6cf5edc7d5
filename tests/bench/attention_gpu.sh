#!/usr/bin/env bash
# The CUDA attention forward (bench_attention_gpu) against PyTorch's
# scaled_dot_product_attention (sdpa_reference.py) on the same shapes in the same run: bf16,
# B=1, H=16, D=128, S = 4K, 8K, 16K, 32K, causal and not. Prints both TFLOP/s side by side
# with the ratio. Target: ringscale >= 0.8 x PyTorch on every shape (exit 1 when missed).
# Fails with one line (exit 2) where there is no GPU, no CUDA build or no torch.
# Build first:  cmake --build build --target bench_attention_gpu
# usage: tests/bench/attention_gpu.sh [BUILD_DIR] [ITERS]
#        env PYTHON (python3), SDPA_BACKEND (default; flash, efficient or cudnn pins one)
set -euo pipefail
build=${1:-build} iters=${2:-20} python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
exe="$build/tests/bench_attention_gpu"
fail() { echo "attention_gpu.sh: $*" >&2; exit 2; }
[[ -x "$exe" ]] || fail "$exe not found; build target bench_attention_gpu (needs CUDA)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each program prints its own one-line reason (no GPU, ...) on stderr when it cannot run.
"$exe" "$iters" >"$work/ringscale" || fail "bench_attention_gpu failed (reason above)"
"$python" -c 'import torch' 2>/dev/null || fail "PyTorch is not importable by $python (the comparison needs torch)"
"$python" "$here/sdpa_reference.py" "$iters" >"$work/torch" || fail "sdpa_reference.py failed (reason above)"
grep -h '^#' "$work/ringscale" "$work/torch"
printf "%-6s %6s %6s | %10s %9s | %10s %9s | %6s\n" dtype seq causal rs_ms rs_TF/s torch_ms \
    torch_TF/s ratio
awk -v target=0.8 '
    /^#/ { next }
    NR == FNR { ms[$2 " " $3] = $4; tf[$2 " " $3] = $5; next }
    {
        key = $2 " " $3
        if (!(key in tf)) { printf "no ringscale result for S=%s causal=%s\n", $2, $3; bad = 1; next }
        ratio = tf[key] / $5
        rows++
        printf "%-6s %6s %6s | %10.3f %9.1f | %10.3f %9.1f | %6.2f\n", $1, $2, $3, ms[key], tf[key], $4, $5, ratio
        if (ratio < target) bad = 1
    }
    END {
        if (rows == 0) { print "no results to compare"; exit 1 }
        if (bad) { print "target NOT met: ringscale < 0.8 x PyTorch on some shape"; exit 1 }
        print "target met: ringscale >= 0.8 x PyTorch on every shape"
    }' "$work/ringscale" "$work/torch"
