#!/usr/bin/env bash
# Training step on a GPU: the default model (4 layers, hidden 512, 8 heads, vocab 1024, seq
# 512, 4096 tokens) and a larger one (8 layers, hidden 1024, 8 heads, vocab 8192, seq 2048,
# 16K tokens) at np=1 over NCCL for ddp, zero1 and fsdp, fp32 GEMMs and TF32, each validated
# against the single-rank GPU run; then np=2 on the same GPU over staged MPI (ddp, and ring
# context parallelism dp=1 x cp=2), as the launcher's table shows them (tok/s, GF/s/rank,
# comm share, check). Needs a GPU and a CUDA build; not a test.
#   tests/bench/train_step_gpu.sh [BUILD_DIR]      (default: build)
# ITERS (10) and WARMUP (3) set the timed and warm-up steps per case.
set -euo pipefail
root="$(cd -- "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
cmake --build "$build" -j"$(nproc)" --target ringscale
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
run() { # NP COMM ARGS...
    local np="$1" comm="$2"
    shift 2
    mpirun -q --oversubscribe --bind-to none -np "$np" "$build/src/ringscale" --job train_step \
        --device cuda --comm "$comm" -n "${ITERS:-10}" -w "${WARMUP:-3}" --validate on \
        -o "$out" "$@" | grep -v '^\[case'
}
large=(--layers 8 --hidden 1024 --heads 8 --vocab 8192 --train-seq-len 2048 --tokens 16K)

echo "== default model, np=1, NCCL: ddp, zero1, fsdp; --tf32 off, on"
run 1 nccl --dp-variant ddp,zero1,fsdp --tf32 off
run 1 nccl --dp-variant ddp --tf32 on
echo "== larger model, np=1, NCCL: ddp, fsdp+prefetch; --tf32 off, on"
run 1 nccl "${large[@]}" --dp-variant ddp,fsdp --prefetch on --tf32 off
run 1 nccl "${large[@]}" --dp-variant ddp --tf32 on
echo "== default model, np=2 sharing the GPU, staged MPI: ddp; dp=1 x cp=2 ring"
run 2 mpi --dp-variant ddp
run 2 mpi --cp 2 --cp-variant ring
