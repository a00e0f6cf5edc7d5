#!/usr/bin/env bash
# The CUDA attention forward and backward (bench_attention_gpu) on both kernel paths, sm80
# (mma.sync) and sm90 (wgmma + TMA, where this build has sm_90a and the GPU is 9.0), against
# PyTorch's scaled_dot_product_attention (sdpa_reference.py) on the same shapes in the same
# run: bf16, B=1, H=16, D=128, S = 4K, 8K, 16K, 32K, causal and not. Prints the TFLOP/s of
# ringscale-sm80, ringscale-sm90 and SDPA side by side with each path's ratio to SDPA, per
# pass. FLOPs: forward 4*B*S^2*H*D (causal /2), backward 2.5 x forward.
# Target: the better path >= 0.9 x SDPA forward and >= 0.8 x SDPA backward on every
# shape (exit 1 when missed). The sm90 columns read "-" where that path cannot run (the reason
# is printed as a '#' line). The backward under --attn-kernel sm90 is whatever
# attention_bwd_cuda runs on that path.
# Fails with one line (exit 2) where there is no GPU, no CUDA build or no torch.
# Build first:  cmake --build build --target bench_attention_gpu
# usage: tests/bench/attention_gpu.sh [BUILD_DIR] [ITERS] [SEQ ...]
#        env PYTHON (python3); SDPA_BACKEND for the forward (default: PyTorch picks) and
#        SDPA_BWD_BACKEND for the backward (default: cudnn, falling back to default with a
#        '#' note where cuDNN attention is not available); flash | efficient | cudnn | default;
#        RINGSCALE_SM90_OVERLAP=0 runs the sm90 forward's serial consumer schedule.
set -euo pipefail
build=${1:-build} iters=${2:-20} python=${PYTHON:-python3}
seqs=("${@:3}")
here=$(cd -- "$(dirname "$0")" && pwd)
exe="$build/tests/bench_attention_gpu"
fail() { echo "attention_gpu.sh: $*" >&2; exit 2; }
[[ -x "$exe" ]] || fail "$exe not found; build target bench_attention_gpu (needs CUDA)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each program prints its own one-line reason (no GPU, ...) on stderr when it cannot run.
"$exe" --pass both --attn-kernel sm80 "$iters" "${seqs[@]}" >"$work/sm80" ||
    fail "bench_attention_gpu --attn-kernel sm80 failed (reason above)"
if ! "$exe" --pass both --attn-kernel sm90 "$iters" "${seqs[@]}" >"$work/sm90" 2>"$work/sm90.err"; then
    echo "# sm90 path not run: $(head -1 "$work/sm90.err")" >"$work/sm90"
fi
"$python" -c 'import torch' 2>/dev/null ||
    fail "PyTorch is not importable by $python (the comparison needs torch)"
SDPA_BACKEND=${SDPA_BACKEND:-default} \
    "$python" "$here/sdpa_reference.py" --pass fwd "$iters" "${seqs[@]}" >"$work/torch" ||
    fail "sdpa_reference.py --pass fwd failed (reason above)"
SDPA_BACKEND=${SDPA_BWD_BACKEND:-cudnn} \
    "$python" "$here/sdpa_reference.py" --pass bwd "$iters" "${seqs[@]}" >>"$work/torch" ||
    fail "sdpa_reference.py --pass bwd failed (reason above)"
grep -h '^#' "$work/sm80" "$work/sm90" "$work/torch"
printf "%-5s %6s %6s %4s | %9s %8s | %9s %8s | %9s %8s | %6s %6s\n" dtype seq causal pass \
    sm80_ms sm80_TF/s sm90_ms sm90_TF/s sdpa_ms sdpa_TF/s sm80/x sm90/x
awk -v fwd_target=0.9 -v bwd_target=0.8 '
    /^#/ { next }
    FILENAME ~ /sm80$/ { k = $2 " " $3 " " $4; ms80[k] = $5; tf80[k] = $6; next }
    FILENAME ~ /sm90$/ { k = $2 " " $3 " " $4; ms90[k] = $5; tf90[k] = $6; next }
    {
        k = $2 " " $3 " " $4
        if (!(k in tf80)) { printf "no ringscale result for S=%s causal=%s %s\n", $2, $3, $4; bad = 1; next }
        r80 = tf80[k] / $6
        have90 = k in tf90
        r90 = have90 ? tf90[k] / $6 : 0
        rows++
        printf "%-5s %6s %6s %4s | %9.3f %9.1f | %9s %9s | %9.3f %9.1f | %6.2f %6s\n", $1, $2, $3, $4,
            ms80[k], tf80[k], have90 ? sprintf("%.3f", ms90[k]) : "-", have90 ? sprintf("%.1f", tf90[k]) : "-",
            $5, $6, r80, have90 ? sprintf("%.2f", r90) : "-"
        best = r80 > r90 ? r80 : r90
        if (best < ($4 == "fwd" ? fwd_target : bwd_target)) bad = 1
    }
    END {
        if (rows == 0) { print "no results to compare"; exit 1 }
        if (bad) { print "target NOT met: best path < 0.9 x SDPA forward or < 0.8 x SDPA backward on some shape"; exit 1 }
        print "target met: best path >= 0.9 x SDPA forward and >= 0.8 x SDPA backward on every shape"
    }' "$work/sm80" "$work/sm90" "$work/torch"
