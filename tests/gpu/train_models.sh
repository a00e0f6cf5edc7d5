#!/usr/bin/env bash
# The training step's GPU checks for the shapes people train, one command for a lent GPU:
#   1. the GPU tests of the new kernels: SwiGLU and the GQA + SwiGLU model against the CPU
#      backend (test_cuda_backend_train_gpu), the cuBLASLt bf16/fp16/fp8 GEMMs and the fp8
#      quantiser against the host reference (test_cuda_cublaslt_gemm_gpu);
#   2. validation: a GQA + SwiGLU model (2 layers, hidden 1024, 8 heads on 2 K/V heads, SwiGLU
#      2816) at np=1 on NCCL and at np=2 sharing the GPU over staged MPI, DDP, ZeRO-1 and FSDP,
#      cp = 1 and (np=2) the cp = 2 ring, each against the single-GPU run (--validate on);
#   3. --dtype bf16|fp16|fp8 on the GPU (cuBLASLt GEMMs): the same model validated against the
#      single-GPU run of the same dtype at np=1 (NCCL) and np=2 (staged MPI, DDP, ZeRO-1,
#      FSDP, cp = 1 and the cp = 2 ring); fp8 with both recipes, on Hopper only (elsewhere:
#      refused, one line, exit 2);
#   4. --numerics on the GPU: a small bf16 model, 20 steps against the fp64 CPU reference, the
#      single-GPU run of the same dtype and a floor of 8 reordered runs on the GPU, at np=1
#      (NCCL) and np=2 (staged MPI: DDP and the cp = 2 ring); `ringscale-stats numerics` must
#      judge the 3 cases and read "the same training" for each; then
#      test_jobs_train_numerics_gpu_mpi at np=1 and 2: the correct configurations within the
#      budget against fp64, the planted defects (jobs/train_faults.hpp) flagged at step 1;
#   5. speed: jobs/presets/llama3_8b.ini at 2 layers (S = 8K, TF32 GEMMs, bf16 attention), then
#      with --dtype bf16 and (Hopper) --dtype fp8, beside the same model in PyTorch
#      (tests/bench/torch_llama.py: bf16 autocast, SDPA on cuDNN, fused AdamW, eager and
#      torch.compile), 5 warm-up and 20 timed steps, MFU of each.
# Everything goes into OUT_DIR/train_models.log (results files in OUT_DIR), a pass/fail line
# per step at its end and on stdout.
# usage: tests/gpu/train_models.sh BUILD_DIR OUT_DIR
# env: PYTHON (with CUDA torch; python3), SKIP_BENCH=1 (steps 1-4 only), STEP_TIMEOUT (s, 300).
# Exit: 0 every step passed; 1 a step failed; 2 bad usage (one line).
set -uo pipefail
[[ $# -eq 2 && -d $1 ]] || {
    echo "usage: tests/gpu/train_models.sh BUILD_DIR OUT_DIR (BUILD_DIR must exist)" >&2
    exit 2
}
STEP_TIMEOUT=${STEP_TIMEOUT:-300} python=${PYTHON:-python3}
[[ $STEP_TIMEOUT =~ ^[1-9][0-9]{0,4}$ ]] || {
    echo "train_models.sh: STEP_TIMEOUT must be 1..99999 seconds" >&2
    exit 2
}
[[ ${SKIP_BENCH:-0} == 0 || ${SKIP_BENCH:-0} == 1 ]] || {
    echo "train_models.sh: SKIP_BENCH must be 0 or 1" >&2
    exit 2
}
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd -- "$1" && pwd)
mkdir -p "$2" || { echo "train_models.sh: cannot create $2" >&2; exit 2; }
out=$(cd -- "$2" && pwd)
rs="$build/src/ringscale" stats="$build/analysis/ringscale-stats"
log="$out/train_models.log"
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck source=tests/gpu/steps.sh
source "$here/steps.sh" # step, steps_end

# refused DTYPE: on a GPU without fp8 GEMMs the launch must exit 2 with one line.
refused() {
    local f rc name="train_step --dtype $1 on this GPU is refused (exit 2, one line)"
    f=$(mktemp)
    printf '\n===== %s\n' "$name" >>"$log"
    timeout -k 5 "$STEP_TIMEOUT" mpirun --bind-to none -np 1 "$rs" --job train_step \
        --device cuda --comm nccl --dtype "$1" --layers 1 -n 1 -w 0 \
        -o "$out/refused_$1.h5" </dev/null >"$f" 2>&1
    rc=$?
    cat "$f" >>"$log"
    if [[ $rc -eq 2 ]] && grep -q "needs Hopper" "$f"; then
        summary+=("PASS (exit $rc) $name")
    else
        summary+=("FAIL (exit $rc) $name")
        failed=1
    fi
    rm -f "$f"
}

# numerics_verdicts N FILES...: `ringscale-stats numerics` over FILES; passes when its table of
# cases (CSV, verdict last) has N rows and each reads "the same training".
numerics_verdicts() {
    local f rc rows same n=$1 name="ringscale-stats numerics: $1 cases, each \"the same training\""
    shift
    f=$(mktemp)
    printf '\n===== %s\n' "$name" >>"$log"
    timeout -k 5 "$STEP_TIMEOUT" "$stats" numerics --format csv "$@" </dev/null >"$f" 2>>"$log"
    rc=$?
    cat "$f" >>"$log"
    rows=$(awk 'NR > 1 && /^$/ { exit } NR > 1' "$f" | grep -c .)
    same=$(awk 'NR > 1 && /^$/ { exit } NR > 1' "$f" | grep -c ',the same training$')
    if [[ $rc -eq 0 && $rows -eq $n && $same -eq $n ]]; then
        summary+=("PASS (exit $rc) $name")
    else
        summary+=("FAIL (exit $rc; $same of $rows cases) $name")
        failed=1
    fi
    rm -f "$f"
}

# 1. GPU tests.
for t in test_cuda_backend_train_gpu test_cuda_cublaslt_gemm_gpu test_cuda_floor_reorder_gpu; do
    step "test $t" "$build/tests/$t"
done

# 2. Validation of GQA + SwiGLU against the single-GPU run.
# shellcheck disable=SC2054 # commas are sweep lists
model=(--layers 2 --hidden 1024 --heads 8 --kv-heads 2 --ffn 2816 --mlp swiglu --vocab 4096
    --train-seq-len 1024 --tokens 4096 --dp-variant ddp,zero1,fsdp --dp 0)
for np_comm_cp in "1 nccl 1" "2 mpi 1,2"; do
    read -r np comm cp <<<"$np_comm_cp"
    step "train_step gqa+swiglu np=$np --comm $comm cp=$cp" mpirun --bind-to none \
        --oversubscribe -np "$np" "$rs" --job train_step --device cuda --comm "$comm" \
        --validate on -w 1 -n 3 --cp "$cp" "${model[@]}" -o "$out/gqa_swiglu_np${np}_${comm}.h5"
done

# 3. The dtypes, each against the single-GPU run of the same dtype.
hopper=0
[[ $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1) == 9.* ]] &&
    hopper=1
for dtype in bf16 fp16 "fp8 --fp8-recipe delayed,current"; do
    read -r -a dt <<<"$dtype"
    if [[ ${dt[0]} == fp8 && $hopper == 0 ]]; then
        refused fp8
        continue
    fi
    for np_comm_cp in "1 nccl 1" "2 mpi 1,2"; do
        read -r np comm cp <<<"$np_comm_cp"
        step "train_step --dtype $dtype np=$np --comm $comm cp=$cp" mpirun --bind-to none \
            --oversubscribe -np "$np" "$rs" --job train_step --device cuda --comm "$comm" \
            --validate on -w 1 -n 3 --cp "$cp" "${model[@]}" --dtype "${dt[@]}" \
            -o "$out/dtype_${dt[0]}_np${np}_${comm}.h5"
    done
done

# 4. --numerics on the GPU (bf16): the run, its same-dtype reference and floor on the GPU, the
# fp64 reference on the CPU.
# shellcheck disable=SC2054 # commas are sweep lists
small=(--layers 2 --hidden 128 --heads 2 --vocab 256 --train-seq-len 128 --tokens 512
    --dp-variant ddp --dp 0 --dtype bf16 --numerics 20 --numerics-floor-runs 8)
for np_comm_cp in "1 nccl 1" "2 mpi 1,2"; do
    read -r np comm cp <<<"$np_comm_cp"
    step "train_step --numerics 20 bf16 np=$np --comm $comm cp=$cp" mpirun --bind-to none \
        --oversubscribe -np "$np" "$rs" --job train_step --device cuda --comm "$comm" \
        -w 0 -n 1 --cp "$cp" "${small[@]}" -o "$out/numerics_np${np}_${comm}.h5"
done
numerics_verdicts 3 "$out/numerics_np1_nccl.h5" "$out/numerics_np2_mpi.h5"
# The correct configurations within the budget against fp64 and the planted defects flagged
# (test_jobs_train_numerics_gpu_mpi, NCCL and staged MPI).
for np in 1 2; do
    step "test test_jobs_train_numerics_gpu_mpi np=$np" mpirun --bind-to none --oversubscribe \
        -np "$np" "$build/tests/test_jobs_train_numerics_gpu_mpi"
done

# 5. Speed against PyTorch on this GPU.
if [[ ${SKIP_BENCH:-0} == 0 ]]; then
    step "ringscale llama3_8b 2 layers S=8K" mpirun --bind-to none -np 1 "$rs" \
        "$here/../../jobs/presets/llama3_8b.ini" --layers 2 -o "$out/llama3_8b.h5"
    step "ringscale-stats summary (median step, MFU)" "$stats" summary "$out/llama3_8b.h5"
    for dtype in bf16 fp8; do
        [[ $dtype == fp8 && $hopper == 0 ]] && continue
        step "ringscale llama3_8b 2 layers S=8K --dtype $dtype" mpirun --bind-to none -np 1 \
            "$rs" "$here/../../jobs/presets/llama3_8b.ini" --layers 2 --dtype "$dtype" \
            -o "$out/llama3_8b_$dtype.h5"
        step "ringscale-stats summary --dtype $dtype" "$stats" summary "$out/llama3_8b_$dtype.h5"
    done
    step "torch_llama.py eager and torch.compile" "$python" "$here/../bench/torch_llama.py" \
        --layers 2 --seq 8192 --warmup 5 --iters 20
fi

steps_end
