#!/usr/bin/env bash
# train_step at np=1 on one GPU against the same model in PyTorch on that GPU:
# the default model (4 layers, hidden 512, 8 heads, vocab 1024, seq 512, 4096 tokens) and a
# larger one (8 layers, hidden 1024, 8 heads, vocab 8192, seq 2048, 16K tokens), ddp, with
# fp32 GEMMs and with TF32. ringscale runs over NCCL with --validate off (run.sh validates the
# same launches); PyTorch runs tests/bench/train_step_torch.py --device cuda (DDP over NCCL,
# explicit attention as in the model). Prints each median step time and the speed
# T_torch / T_ringscale (> 1: ringscale faster). Not a test: needs a GPU, a CUDA build and a
# python with CUDA torch; fails with one line (exit 2) where it cannot run.
# usage: tests/bench/train_step_gpu_torch.sh [BUILD_DIR=build] [ITERS=10]
# env: PYTHON (python3), WARMUP (3), DEVICE (cuda; cpu rehearses the script on a CPU machine:
#      ringscale over MPI, PyTorch over gloo, the default model only).
set -euo pipefail
build=${1:-build} iters=${2:-10} warmup=${WARMUP:-3} python=${PYTHON:-python3}
device=${DEVICE:-cuda}
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rs="$build/src/ringscale" stats="$build/analysis/ringscale-stats"
fail() { echo "train_step_gpu_torch.sh: $*" >&2; exit 2; }
for f in "$rs" "$stats"; do [[ -x $f ]] || fail "$f not found; build ringscale and ringscale-stats"; done
[[ $iters =~ ^[1-9][0-9]{0,3}$ ]] || fail "ITERS must be 1..9999"
[[ $device == cuda || $device == cpu ]] || fail "DEVICE must be cuda or cpu"
comm=nccl
[[ $device == cpu ]] && comm=mpi
"$python" -c 'import torch' 2>/dev/null || fail "PyTorch is not importable by $python"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ours TF32 ARGS...: ringscale's median step time (s) of one train_step case.
ours() {
    local tf32=$1
    shift
    mpirun --bind-to none -np 1 "$rs" --job train_step --device "$device" --comm "$comm" \
        --dp-variant ddp --tf32 "$tf32" --validate off -w "$warmup" -n "$iters" \
        -o "$work/rs.h5" "$@" >"$work/rs.out" 2>&1 ||
        { cat "$work/rs.out" >&2; fail "the ringscale launch failed (output above)"; }
    "$stats" summary --format csv "$work/rs.h5" >"$work/rs.csv" || fail "ringscale-stats failed"
    awk -F, '/^#/ { next }
        !col { for (i = 1; i <= NF; i++) if ($i == "median_s") col = i; next }
        $col != "" { print $col; exit }' "$work/rs.csv"
}
# theirs TF32 ARGS...: PyTorch's median step time (s) of the same model.
theirs() {
    local tf32=$1
    shift
    "$python" "$here/train_step_torch.py" --device "$device" --tf32 "$tf32" --iters "$iters" \
        --warmup "$warmup" "$@" 2>"$work/torch.err" | sed -n 's/.*step_s=\([0-9.]*\).*/\1/p' ||
        true
}

echo "# train_step np=1 ($device): ringscale ($comm) vs PyTorch DDP, median of $iters steps after $warmup"
printf '%-8s %-5s | %12s %12s | %8s\n' model tf32 ringscale_s torch_s speed
models=("default" "larger")
[[ $device == cpu ]] && models=("default")
for model in "${models[@]}"; do
    if [[ $model == default ]]; then
        rsargs=(--layers 4 --hidden 512 --heads 8 --vocab 1024 --train-seq-len 512 --tokens 4096)
        ptargs=(--layers 4 --hidden 512 --heads 8 --vocab 1024 --seq 512 --tokens 4096)
    else
        rsargs=(--layers 8 --hidden 1024 --heads 8 --vocab 8192 --train-seq-len 2048 --tokens 16K)
        ptargs=(--layers 8 --hidden 1024 --heads 8 --vocab 8192 --seq 2048 --tokens 16384)
    fi
    for tf32 in off on; do
        [[ $device == cpu && $tf32 == on ]] && continue
        a=$(ours "$tf32" "${rsargs[@]}")
        b=$(theirs "$([[ $tf32 == on ]] && echo 1 || echo 0)" "${ptargs[@]}")
        [[ -n $a ]] || fail "no ringscale step time for the $model model"
        [[ -n $b ]] || { cat "$work/torch.err" >&2; fail "no PyTorch step time for the $model model"; }
        printf '%-8s %-5s | %12.4f %12.4f | %7.2fx\n' "$model" "$tf32" "$a" "$b" \
            "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
    done
done
