#!/usr/bin/env bash
# One command for a GPU host: every GPU test binary, a launch of each job at np=1 on NCCL and
# at np=2 sharing one GPU over staged MPI (validated), the attention benchmark forward and
# backward (both kernel paths) against PyTorch SDPA, the job-overhead check and a ringscale-stats summary
# (GFLOP/s/rank and MFU). Everything goes into ONE log, OUT_DIR/run.log, with the results
# files in OUT_DIR/results; a pass/fail line per step ends the log and stdout.
#
# usage: tests/gpu/run.sh DIR [OUT_DIR]
#   DIR      a CMake build directory (CUDA on; MPI, HDF5, Boost installed on this host), or
#            a directory made by tests/gpu/pack.sh (it has env.sh: the runtime bundle, the
#            binaries under DIR/build, the scripts); the packed layout is for a GPU host
#            without those packages (see tests/gpu/README.md).
#   OUT_DIR  default gpu-run-<UTC time>; created.
# env: ITERS (benchmark iterations, 10), SEQS (benchmark S list, "4096 8192 16384 32768"),
#      STEP_TIMEOUT (seconds per step, 300), PYTHON (with torch; default: the pack's or
#      /opt/torch/.venv's python3, else python3), SKIP_BENCH=1 (tests and jobs only),
#      ONLY (an extended regex: run only the steps whose names match it, e.g. to rerun the
#      failed steps of an earlier run inside a short GPU lease), DEADLINE (epoch seconds by
#      which the run must end: each step's limit shrinks to the time left, and a step with
#      under 10 s left is not started but listed CUT, so the summary is still written).
# Exit: 0 every step passed; 1 a step failed or was CUT, or none ran; 3 none failed but some
#       found no GPU; 2 bad usage: a numeric variable out of its range, an ONLY that is not an
#       extended regex or matches no step (checked before any step runs or a GPU is looked for).
set -uo pipefail

[[ $# -ge 1 && $# -le 2 && -d $1 ]] || {
    echo "usage: tests/gpu/run.sh BUILD_OR_PACK_DIR [OUT_DIR] (DIR must exist)" >&2
    exit 2
}
# The environment checked before anything runs or looks for a GPU (so CI checks these checks
# on a machine without one): each bad value is one line naming it, exit 2.
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/gpu/checks.sh
source "$here/checks.sh"
ITERS=${ITERS:-10} SEQS=${SEQS:-"4096 8192 16384 32768"} STEP_TIMEOUT=${STEP_TIMEOUT:-300}
check_count run.sh DEADLINE "${DEADLINE:-}" 1 99999999999 "epoch seconds (date +%s)" optional
check_count run.sh ITERS "$ITERS" 1 100000
check_count run.sh STEP_TIMEOUT "$STEP_TIMEOUT" 1 86400 "seconds"
check_list run.sh SEQS "$SEQS" 128 1048576
[[ ${SKIP_BENCH:-0} == 0 || ${SKIP_BENCH:-0} == 1 ]] ||
    bad run.sh "SKIP_BENCH must be 0 or 1, got '$(printable "${SKIP_BENCH:-}")'"
check_regex run.sh ONLY "${ONLY:-}"
dir=$(cd -- "$1" && pwd)
out=${2:-gpu-run-$(date -u +%Y%m%dT%H%M%SZ)}
bench="$here/../bench"
mkdir -p "$out/results" || { echo "run.sh: cannot create $out" >&2; exit 2; }
out=$(cd -- "$out" && pwd)
log="$out/run.log"
: >"$log"

if [[ -f $dir/env.sh ]]; then # packed layout; env.sh unpacks the binaries (build.tar.xz)
    # shellcheck source=/dev/null
    source "$dir/env.sh" >>"$log" 2>&1 || { echo "run.sh: $dir/env.sh failed (see $log)" >&2; exit 2; }
    build="$dir/build"
    manifest="$dir/gpu-tests.tsv"
else
    build=$dir
    manifest="$out/gpu-tests.tsv"
    "$here/list_tests.sh" "$build" >"$manifest" 2>>"$log" ||
        { echo "run.sh: cannot list the GPU tests of $build (see $log)" >&2; exit 2; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GTEST_COLOR=no
rs="$build/src/ringscale" stats="$build/analysis/ringscale-stats"
python=${PYTHON:-python3}
[[ -z ${PYTHON:-} && -x /opt/torch/.venv/bin/python3 ]] && python=/opt/torch/.venv/bin/python3

names=() statuses=() notes=()
# A step's output that says there is no GPU (the binaries' and PyTorch's one-line reasons).
no_gpu_re='no CUDA device|no CUDA-capable device|CUDA driver version is insufficient|cudaErrorNoDevice'

# classify RC FILE: "STATUS<TAB>NOTE" for one step's exit code and output.
classify() {
    local rc=$1 f=$2 limit=$3 skipped passed reason
    skipped=$(grep -Ec '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$f")
    passed=$(grep -Eo '^\[  PASSED  \] [0-9]+' "$f" | awk '{s += $4} END {print s + 0}')
    reason=$(grep -Eo "(${no_gpu_re})[^\"]*" "$f" | head -1)
    if [[ $rc -eq 124 || $rc -eq 137 ]]; then
        printf 'FAIL\ttimed out after %ss' "$limit"
    elif [[ $rc -ne 0 && -n $reason ]]; then
        printf 'NOGPU\t%s' "$reason"
    elif [[ $rc -ne 0 ]]; then
        printf 'FAIL\texit %s: %s' "$rc" "$(grep -Eim1 'error|fail|refus|not met' "$f" | cut -c1-160)"
    elif [[ $skipped -gt 0 ]]; then
        # The first skip's reason; a test skipped for want of a GPU makes the step NOGPU.
        reason=$(grep -A1 -m1 'Skipped$' "$f" | tail -1 | cut -c1-160)
        if [[ $reason =~ $no_gpu_re ]]; then
            printf 'NOGPU\t%s passed, %s skipped: %s' "$passed" "$skipped" "$reason"
        elif [[ $passed -eq 0 ]]; then
            printf 'SKIP\t%s' "$reason"
        else
            printf 'PASS\t%s passed, %s skipped: %s' "$passed" "$skipped" "$reason"
        fi
    else
        printf 'PASS\t'
    fi
}

# step NAME COMMAND...: run one step under the timeout, its output into the log (while
# planning, only its name into `planned`).
planned=() planning=
step() {
    local name=$1 rc f result limit=$STEP_TIMEOUT left
    shift
    [[ -n $planning ]] && { planned+=("$name"); return 0; }
    [[ -n ${ONLY:-} && ! $name =~ $ONLY ]] && return 0
    if [[ -n ${DEADLINE:-} ]]; then
        left=$((DEADLINE - $(date +%s)))
        if [[ $left -lt 10 ]]; then
            names+=("$name") statuses+=(CUT) notes+=("not started: ${left}s left before DEADLINE")
            printf '\n===== %s\n----- %s: CUT (not started, %ss left)\n' "$name" "$name" "$left" >>"$log"
            return 0
        fi
        [[ $left -lt $limit ]] && limit=$left
    fi
    f=$(mktemp)
    printf '\n===== %s\n$ %s\n' "$name" "$*" >>"$log"
    echo "[$(date -u +%T)] $name" >&2
    timeout -k 5 "$limit" "$@" </dev/null >"$f" 2>&1
    rc=$?
    cat "$f" >>"$log"
    result=$(classify "$rc" "$f" "$limit")
    rm -f "$f"
    names+=("$name") statuses+=("${result%%$'\t'*}") notes+=("${result#*$'\t'}")
    printf -- '----- %s: %s (exit %s)\n' "$name" "${result%%$'\t'*}" "$rc" >>"$log"
}

# launch JOB NP COMM ARGS...: one validated launch of a job on the GPU into results/.
launch() {
    local job=$1 np=$2 comm=$3
    shift 3
    step "$job np=$np --comm $comm" mpirun --bind-to none --oversubscribe -np "$np" "$rs" \
        --job "$job" --device cuda --comm "$comm" --validate on -w 2 -n 10 \
        -o "$out/results/${job}_np${np}_${comm}.h5" "$@"
}

# every_step: steps 0 to 3 in order (the summary of 4 comes after them).
every_step() {
    # 0. The runtime without a GPU: MPI start-up, a CPU launch and its HDF5 file (for a packed
    #    directory, the bundle's Open MPI and HDF5), so a broken runtime is not taken for a GPU fault.
    step "runtime check: cpu collectives np=2" mpirun --bind-to none --oversubscribe -np 2 "$rs" \
        --job collectives --op allreduce -b 1K -e 64K -w 1 -n 3 -o "$out/results/runtime_check_cpu.h5"

    # 1. Every GPU test binary, whole (gtest runs all its tests; each skips without a device).
    while IFS=$'\t' read -r np rel; do
        [[ -z $rel || $rel == \#* ]] && continue
        if [[ $np -eq 0 ]]; then
            step "test $(basename "$rel")" "$build/$rel"
        else
            step "test $(basename "$rel") np=$np" mpirun --bind-to none --oversubscribe -np "$np" \
                "$build/$rel"
        fi
    done <"$manifest"

    # 2. Each job at np=1 on NCCL and at np=2 sharing one GPU over staged MPI, validated.
    # shellcheck disable=SC2054 # commas are sweep lists
    attn=(--seq-len 4K --heads 16 --head-dim 128 --dtype bf16 --causal 0,1 --pass fwd,fwd+bwd)
    for np_comm_cp in "1 nccl 1" "2 mpi 1,2"; do
        read -r np comm cp <<<"$np_comm_cp"
        launch collectives "$np" "$comm" --op all -b 1K -e 16M -f 16
        launch ring_attention "$np" "$comm" "${attn[@]}"
        launch context_parallel "$np" "$comm" "${attn[@]}" --variant allgather,ulysses
        launch train_step "$np" "$comm" --layers 2 --dp 0 --cp "$cp"
        # Masks (the masked sm80 kernels) in the ring, all-gather and Ulysses, and packed documents
        # in training.
        step "masked attention np=$np --comm $comm" mpirun --bind-to none --oversubscribe -np "$np" \
            "$rs" --job ring_attention,context_parallel --device cuda --comm "$comm" --validate on \
            -w 2 -n 10 -o "$out/results/masked_np${np}_${comm}.h5" --seq-len 4K --heads 16 \
            --head-dim 128 --dtype bf16 --causal 1 --pass fwd+bwd --window 1K --docs fixed:1K \
            --variant allgather,ulysses
        step "train_step --docs np=$np --comm $comm" mpirun --bind-to none --oversubscribe -np "$np" \
            "$rs" --job train_step --device cuda --comm "$comm" --validate on -w 2 -n 10 \
            -o "$out/results/train_docs_np${np}_${comm}.h5" --layers 2 --dp 0 --cp "$cp" --docs fixed:128
    done

    # 2b. The attention jobs forced onto the sm80 kernels (auto above takes sm90 on an H100/H200
    #     built with 90a; /meta attn_kernel records which), and the sm90 forward and backward
    #     tests and the masked sm80 kernels (their reads of the mask's device arrays and of
    #     position arrays with gaps: zigzag, striped) under compute-sanitizer (memcheck: TMA/wgmma
    #     addressing, out-of-bounds accesses) where present.
    step "ring_attention np=1 --comm nccl --attn-kernel sm80" mpirun --bind-to none --oversubscribe \
        -np 1 "$rs" --job ring_attention --device cuda --comm nccl --attn-kernel sm80 --validate on \
        -w 2 -n 10 -o "$out/results/ring_attention_np1_nccl_sm80.h5" "${attn[@]}"
    # 2c. cuDNN fused attention (--attn-kernel cudnn, forward and backward), validated against
    #     the single-rank reference at np=1 on NCCL and np=2 over staged MPI, GQA: the ring in
    #     every layout, causal and not; all-gather and Ulysses; a window with packed documents;
    #     the training step's attention (cp=1 at np=1, the cp=2 zigzag ring at np=2).
    # shellcheck disable=SC2054 # commas are sweep lists
    cud=(--device cuda --attn-kernel cudnn --validate on -w 1 -n 3 --seq-len 2K --heads 16
        --kv-heads 4 --head-dim 128 --dtype bf16 --pass fwd,fwd+bwd)
    # shellcheck disable=SC2054 # commas are sweep lists
    cud8=(--device cuda --attn-kernel cudnn --validate on -w 1 -n 3 --seq-len 2K --heads 16
        --kv-heads 4 --head-dim 128 --dtype fp8 --pass fwd,fwd+bwd)
    for np_comm in "1 nccl" "2 mpi"; do
        read -r np comm <<<"$np_comm"
        step "cudnn ring layouts np=$np --comm $comm" mpirun --bind-to none --oversubscribe \
            -np "$np" "$rs" --job ring_attention --comm "$comm" "${cud[@]}" --causal 0,1 \
            --layout contiguous,zigzag,striped,balanced -o "$out/results/cudnn_ring_np${np}.h5"
        step "cudnn all-gather, ulysses np=$np --comm $comm" mpirun --bind-to none --oversubscribe \
            -np "$np" "$rs" --job context_parallel --comm "$comm" "${cud[@]}" --causal 0,1 \
            --variant allgather,ulysses -o "$out/results/cudnn_cp_np${np}.h5"
        step "cudnn masked np=$np --comm $comm" mpirun --bind-to none --oversubscribe -np "$np" \
            "$rs" --job ring_attention,context_parallel --comm "$comm" "${cud[@]}" --causal 1 \
            --window 512 --docs fixed:1K --variant allgather,ulysses \
            -o "$out/results/cudnn_masked_np${np}.h5"
        # fp8 (E4M3, current per-tensor scaling) forward and backward: ring layouts, all-gather
        # and Ulysses, O within 4u*max|V| and dQ, dK, dV within 6u*max|dX| of the fp64
        # reference (u = 2^-4); cuDNN's fp8 needs compute capability 9.0 (an older GPU is named
        # in the log, the step not run).
        if [[ $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
            head -1 | cut -d. -f1) -ge 9 ]] 2>/dev/null; then
            step "cudnn fp8 forward and backward np=$np --comm $comm" mpirun --bind-to none \
                --oversubscribe -np "$np" "$rs" --job ring_attention,context_parallel \
                --comm "$comm" \
                "${cud8[@]}" --causal 0,1 --layout contiguous,zigzag --variant allgather,ulysses \
                -o "$out/results/cudnn_fp8_np${np}.h5"
        elif [[ -z $planning ]]; then
            printf '\n===== cudnn fp8 forward and backward np=%s: not run, %s\n' "$np" \
                "no GPU of compute capability 9.0 or newer" >>"$log"
        fi
        step "cudnn train_step np=$np --comm $comm" mpirun --bind-to none --oversubscribe \
            -np "$np" "$rs" --job train_step --comm "$comm" --device cuda --attn-kernel cudnn \
            --validate on -w 1 -n 3 --layers 2 --dp 0 --cp "$np" --kv-heads 4 \
            -o "$out/results/cudnn_train_np${np}.h5"
    done
    sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    if [[ -x $sanitizer && -x $build/tests/test_cuda_attention_gpu ]]; then
        step "compute-sanitizer memcheck: sm90 forward and backward tests" "$sanitizer" \
            --tool memcheck --error-exitcode 1 "$build/tests/test_cuda_attention_gpu" \
            --gtest_filter='*forward*sm90*:*backward*sm90*'
    fi
    if [[ -x $sanitizer && -x $build/tests/test_cuda_attention_bwd_sm90_pieces_gpu ]]; then
        step "compute-sanitizer memcheck: sm90 backward pieces" "$sanitizer" --tool memcheck \
            --error-exitcode 1 "$build/tests/test_cuda_attention_bwd_sm90_pieces_gpu"
    fi
    if [[ -x $sanitizer && -x $build/tests/test_cuda_attention_mask_gpu ]]; then
        step "compute-sanitizer memcheck: masked sm80 kernels" "$sanitizer" --tool memcheck \
            --error-exitcode 1 "$build/tests/test_cuda_attention_mask_gpu" \
            --gtest_filter='*bf16_d64_zigzag:*fp16_d128_striped:gpu_attention_mask_tiny.*'
    fi
    if [[ -x $sanitizer && -x $build/tests/test_cuda_dev_mask_gpu ]]; then
        step "compute-sanitizer memcheck: the mask's device arrays" "$sanitizer" --tool memcheck \
            --error-exitcode 1 "$build/tests/test_cuda_dev_mask_gpu"
    fi
    if [[ -x $sanitizer && -x $build/tests/test_cuda_sm90_primitives_gpu ]]; then
        step "compute-sanitizer memcheck: sm90 primitives" "$sanitizer" --tool memcheck \
            --error-exitcode 1 "$build/tests/test_cuda_sm90_primitives_gpu"
    fi

    # 3. The attention kernels forward and backward (sm80, sm90) against PyTorch SDPA; the job
    #    overhead.
    if [[ ${SKIP_BENCH:-0} != 1 ]]; then
        # shellcheck disable=SC2086 # SEQS is a list
        step "bench attention fwd+bwd vs SDPA" env PYTHON="$python" "$bench/attention_gpu.sh" \
            "$build" "$ITERS" $SEQS
        step "bench job overhead (ring_attention np=1 vs kernel)" "$bench/job_overhead.sh" "$build" \
            "$ITERS"
    fi
}

# ONLY must pick at least one step: planned first (no step runs, no GPU is looked for).
planning=1
every_step
planned+=("ringscale-stats summary")
planning=
if [[ -n ${ONLY:-} ]]; then
    matched=0
    for n in "${planned[@]}"; do [[ $n =~ $ONLY ]] && matched=$((matched + 1)); done
    [[ $matched -gt 0 ]] || bad run.sh "ONLY='$(printable "$ONLY")' matches none of the ${#planned[@]} steps (e.g. '${planned[0]}', '${planned[-1]}')"
fi

{
    echo "ringscale GPU run, $(date -u +%FT%TZ), host $(hostname), from $dir"
    command -v nvidia-smi >/dev/null && nvidia-smi || echo "nvidia-smi: not found"
    [[ -f $dir/PACKED ]] && cat "$dir/PACKED"
    "$rs" --version
    echo "mpirun: $(command -v mpirun) ($(mpirun --version 2>&1 | head -1))"
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    echo "GPU test binaries (np, path; np 0 = no mpirun):"
    cat "$manifest"
} >>"$log" 2>&1

every_step

# 4. The statistics of everything measured (GFLOP/s/rank and MFU).
shopt -s nullglob
h5=("$out"/results/*.h5)
if [[ ${#h5[@]} -gt 0 ]]; then
    step "ringscale-stats summary" "$stats" summary "${h5[@]}"
else
    names+=("ringscale-stats summary") statuses+=(SKIP) notes+=("no results files")
fi

fails=0 nogpu=0 cut=0
for st in "${statuses[@]}"; do
    [[ $st == FAIL ]] && fails=$((fails + 1))
    [[ $st == NOGPU ]] && nogpu=$((nogpu + 1))
    [[ $st == CUT ]] && cut=$((cut + 1))
done
{
    printf '\n===== summary (%s)\n' "$out"
    for i in "${!names[@]}"; do
        printf '%-6s %-52s %s\n' "${statuses[$i]}" "${names[$i]}" "${notes[$i]}"
    done
    printf '%s steps: %s failed, %s without a GPU, %s not started (DEADLINE). Log: %s\n' \
        "${#names[@]}" "$fails" "$nogpu" "$cut" "$log"
} | tee -a "$log"
ran=$((${#names[@]} - cut))
for st in "${statuses[@]}"; do [[ $st == SKIP ]] && ran=$((ran - 1)); done
if [[ $ran -le 0 ]]; then # nothing ran: never a pass
    echo "run.sh: no step ran (${#names[@]} listed, none run)" | tee -a "$log" >&2
    exit 1
fi
[[ $fails -gt 0 || $cut -gt 0 ]] && exit 1
[[ $nogpu -gt 0 ]] && exit 3
exit 0
