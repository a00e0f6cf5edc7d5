#!/usr/bin/env bash
# Nsight Compute profiles of the attention kernels side by side, to see what holds the sm90
# path back against cuDNN: one launch each of ringscale's sm90 forward and sm90
# backward (tests/bench_attention_gpu: bf16, B=1, H=16, D=128, contiguous positions) and
# SDPA's forward and backward on cuDNN at the same shape (tests/gpu/sdpa_once.py between
# cudaProfilerStart and Stop), each with --set full and --clock-control none (the clocks as a
# benchmark sees them), into OUT_DIR/*.ncu-rep, with ringscale's CUDA source imported (the
# kernels are built with -lineinfo). Text for a reader without ncu-ui: OUT_DIR/details.txt
# (every report's details page: SM and memory throughput, occupancy, warp stall reasons,
# tensor-pipe use) and OUT_DIR/source.txt (ringscale's kernels per CUDA source line, CSV).
# Each profile that fails is named on stderr; the others still run.
# usage: tests/gpu/profile.sh BUILD_DIR [SEQ=16384] [OUT_DIR=ncu-<UTC time>]
# env: CAUSAL (0), NCU (default: ncu on PATH, /usr/local/cuda/bin/ncu, /opt/nvidia/nsight-compute/*/ncu),
#      PYTHON (python3, with torch).
# Exit: 0 every profile written; 1 one failed; 2 bad usage or no ncu.
set -uo pipefail
[[ $# -ge 1 && $# -le 3 && -x $1/tests/bench_attention_gpu ]] || {
    echo "usage: tests/gpu/profile.sh BUILD_DIR [SEQ] [OUT_DIR] (BUILD_DIR/tests/bench_attention_gpu must exist)" >&2
    exit 2
}
exe="$1/tests/bench_attention_gpu" seq=${2:-16384} out=${3:-ncu-$(date -u +%Y%m%dT%H%M%SZ)}
causal=${CAUSAL:-0} python=${PYTHON:-python3}
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Checked before ncu is looked for or anything runs (CI checks these checks): one line, exit 2.
# shellcheck source=tests/gpu/checks.sh
source "$here/checks.sh"
check_count profile.sh SEQ "$seq" 128 131072 tokens
check_count profile.sh CAUSAL "$causal" 0 1
find_ncu() {
    local c
    command -v ncu && return 0
    for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
        [[ -x $c ]] && echo "$c"
    done | tail -1
}
ncu=${NCU:-$(find_ncu)}
[[ -n $ncu && -x $ncu ]] || { echo "profile.sh: ncu not found (set NCU)" >&2; exit 2; }
mkdir -p "$out" || { echo "profile.sh: cannot create $out" >&2; exit 2; }
echo "profile.sh: $ncu, $("$ncu" --version 2>&1 | tail -1)"
failed=0
# profile NAME NCU_ARGS... COMMAND...: one report, OUT_DIR/NAME.ncu-rep, and its pages as text.
profile() {
    local name=$1 rep="$out/$1.ncu-rep"
    shift
    echo "== $name"
    if ! "$ncu" --set full --clock-control none --import-source yes --target-processes all -f \
        -o "$out/$name" "$@"; then
        echo "profile.sh: $name failed" >&2
        failed=1
    elif [[ ! -f $rep ]]; then
        echo "profile.sh: $name wrote no report (no kernel matched)" >&2
        failed=1
    else
        printf '\n===== %s\n' "$name" >>"$out/details.txt"
        "$ncu" --import "$rep" --page details >>"$out/details.txt" 2>&1
        if [[ $name == ringscale_* ]]; then
            printf '\n===== %s\n' "$name" >>"$out/source.txt"
            "$ncu" --import "$rep" --page source --csv --print-source cuda >>"$out/source.txt" 2>&1 ||
                echo "(this ncu prints no source page)" >>"$out/source.txt"
        fi
    fi
}
tag="s${seq}_causal${causal}"
profile "ringscale_sm90_fwd_$tag" -k regex:attention_fwd_sm90 -c 1 \
    "$exe" --pass fwd --causal "$causal" --attn-kernel sm90 1 "$seq"
profile "ringscale_sm90_bwd_$tag" -k regex:attention_bwd_sm90 -c 1 \
    "$exe" --pass bwd --causal "$causal" --attn-kernel sm90 1 "$seq"
profile "sdpa_cudnn_fwd_$tag" --profile-from-start off "$python" "$here/sdpa_once.py" fwd "$seq" "$causal"
profile "sdpa_cudnn_bwd_$tag" --profile-from-start off "$python" "$here/sdpa_once.py" bwd "$seq" "$causal"
exit $failed
