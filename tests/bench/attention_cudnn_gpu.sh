#!/usr/bin/env bash
# ringscale's cuDNN attention call (bench_cudnn_gpu) against PyTorch SDPA pinned to its cuDNN
# backend (sdpa_reference.py, SDPA_BACKEND=cudnn) on the same shapes in the same run: bf16,
# B=1, H=16, D=128, S = 8K, 16K, 32K, causal and not, forward and backward; the fp8 forward's
# TFLOP/s beside them (Hopper and up); and one rank's P=4 zigzag ring steps through cuDNN
# (its calls and fp32 merges) against one unsharded call of the same work.
# Targets: ringscale/SDPA-cuDNN >= 0.97 forward and backward on every shape (both run the same
# cuDNN kernels: what is measured is ringscale's graph and call overhead); zigzag steps /
# unsharded >= 0.9 (exit 1 when missed). Exit 2 with one line where there is no GPU, no cuDNN
# build, or no torch (or its cuDNN backend cannot run: the comparison would not be like with
# like).
# Build first:  cmake --build build --target bench_cudnn_gpu
# usage: tests/bench/attention_cudnn_gpu.sh [BUILD_DIR] [ITERS] [SEQ ...]   env PYTHON (python3)
set -euo pipefail
build=${1:-build} iters=${2:-20} python=${PYTHON:-python3}
seqs=("${@:3}")
[[ ${#seqs[@]} -gt 0 ]] || seqs=(8192 16384 32768)
here=$(cd -- "$(dirname "$0")" && pwd)
exe="$build/tests/bench_cudnn_gpu"
fail() { echo "attention_cudnn_gpu.sh: $*" >&2; exit 2; }
[[ -x "$exe" ]] || fail "$exe not found; build target bench_cudnn_gpu (needs CUDA and cuDNN)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$exe" "$iters" "${seqs[@]}" >"$work/rs" || fail "bench_cudnn_gpu failed (reason above)"
"$python" -c 'import torch' 2>/dev/null || fail "PyTorch is not importable by $python"
for pass in fwd bwd; do
    SDPA_BACKEND=cudnn "$python" "$here/sdpa_reference.py" --pass "$pass" "$iters" "${seqs[@]}" \
        >>"$work/torch" || fail "sdpa_reference.py --pass $pass failed (reason above)"
done
if grep -q '^# SDPA backend .* unavailable' "$work/torch"; then
    fail "SDPA's cuDNN backend cannot run here: $(grep -m1 '^# SDPA backend' "$work/torch")"
fi
grep -h '^#' "$work/rs" "$work/torch"
printf "%-5s %6s %6s %4s | %9s %9s | %9s %9s | %6s\n" dtype seq causal pass rs_ms rs_TF/s \
    sdpa_ms sdpa_TF/s rs/sdpa
awk -v target=0.97 -v zz_target=0.9 '
    /^#/ { next }
    FILENAME ~ /rs$/ && $1 == "bf16" { k = $2 " " $3 " " $4; ms[k] = $5; tf[k] = $6; next }
    FILENAME ~ /rs$/ && $1 == "fp8" { fp8[$2 " " $3] = $6; next }
    FILENAME ~ /rs$/ && $1 == "zigzag" {
        printf "zigzag P=4 S=%s: steps %.3f ms %.1f TF/s, unsharded %.1f TF/s, ratio %.3f (target %.2f)\n",
            $2, $5, $6, $7, $8, zz_target
        zz++
        if ($8 < zz_target) bad = 1
        next
    }
    FILENAME ~ /rs$/ { next }
    {
        k = $2 " " $3 " " $4
        if (!(k in tf)) { printf "no ringscale result for S=%s causal=%s %s\n", $2, $3, $4; bad = 1; next }
        r = tf[k] / $6
        rows++
        printf "%-5s %6s %6s %4s | %9.3f %9.1f | %9.3f %9.1f | %6.3f\n", $1, $2, $3, $4, ms[k], tf[k], $5, $6, r
        if (r < target) bad = 1
    }
    END {
        for (k in fp8) printf "fp8 forward S=%s causal=%s: %.1f TF/s\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), fp8[k]
        if (rows == 0 || zz == 0) { print "no results to compare"; exit 1 }
        if (bad) { print "target NOT met: cuDNN call < 0.97 x SDPA-cuDNN, or zigzag steps < 0.9 x unsharded"; exit 1 }
        print "target met: cuDNN call >= 0.97 x SDPA-cuDNN forward and backward, zigzag steps >= 0.9 x unsharded"
    }' "$work/rs" "$work/torch"
