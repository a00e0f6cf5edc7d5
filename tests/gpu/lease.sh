#!/usr/bin/env bash
# One call of a lent GPU machine. A lease is about 15 minutes of device time in all, at most
# 10 per command, and brings back at most 8 files of $OUT, no more than two folders down. This
# runs the phases named in PHASES, each under its own deadline and all inside T_ALL:
#   cudnn  cuDNN fused attention first: run.sh's cuDNN steps (ONLY=cudnn: the GPU test binaries
#          test_cuda_cudnn_*_gpu and the --attn-kernel cudnn launches, train_step's and the
#          --dtype fp8 forward and backward included, validated), then
#          tests/bench/attention_cudnn_gpu.sh (the call against SDPA's cuDNN backend, fp8
#          forward, P=4 zigzag steps against one call) and tests/bench/job_overhead.sh with
#          ATTN_KERNEL=cudnn (ring_attention np=1 against the bare cuDNN call), under T_CUDNN;
#   train  the training step's GPU checks (tests/gpu/train_models.sh: the GQA + SwiGLU kernels and
#          the cuBLASLt GEMMs, --dtype bf16|fp16|fp8 validated against the single-GPU run at
#          np=1 and np=2, --numerics in bf16 at np=1 and np=2 judged "the same training",
#          then the Llama-3-8B-like preset beside PyTorch eager and
#          torch.compile; its log joins bench.txt), under T_TRAIN;
#   trace  third: the device event recorder behind --profile and --trace on the GPU
#          (tests/gpu/trace_gpu.sh: its GPU test on real events, train_step --profile on at
#          np=1 and np=2, --trace's end-to-end checks on --device cuda; its log joins
#          bench.txt), under T_TRACE;
#   tests  tests/gpu/run.sh with SKIP_BENCH=1 (every GPU test binary, the job launches
#          validated, the memchecks; ONLY= picks steps), under T_TESTS;
#   bench  the attention kernels against SDPA (tests/bench/attention_gpu.sh at SEQS), the job
#          overhead (tests/bench/job_overhead.sh) and train_step against the same model in
#          PyTorch on the GPU (tests/bench/train_step_gpu_torch.sh);
#   ncu    tests/gpu/profile.sh: Nsight Compute (--set full) of one sm90 forward and one sm90
#          backward at NCU_SEQ, and of SDPA's forward and backward on cuDNN at the same shape;
# and after each phase packs what was written into OUT_DIR, so a call cut short keeps what it
# did: lease.log (the timeline, each phase's exit), device.txt (nvidia-smi, driver, CUDA,
# NCCL, torch, cuDNN; the ncu used is in lease.log), run.log (run.sh's log, its summary last), bench.txt, ncu.txt (each
# profile's details page), ncu-source.txt (ringscale's kernels per source line), ncu.tar.xz
# (the .ncu-rep files, for ncu-ui) and results.tar.xz (the .h5 files): 8 files at most.
#
# usage: tests/gpu/lease.sh PACK_DIR OUT_DIR     (PACK_DIR: made by tests/gpu/pack.sh)
# env: PHASES ("cudnn train trace tests bench ncu"), T_ALL (s, 470), T_CUDNN (s, 280), T_TRAIN
#      (s, 150), T_TESTS (s, 300), T_TRACE (s, 150), STEP_TIMEOUT (s per run.sh
#      step, 90), ONLY (run.sh's step regex), SEQS ("8192 16384 32768"), ITERS (5),
#      NCU_SEQ (16384). Exit: 0 every phase passed, 1 one failed or was cut or none ran, 2 bad
#      usage (one line: a variable out of its range, an invalid ONLY, PHASES empty or unknown;
#      checked before anything runs).
set -uo pipefail

[[ $# -eq 2 && -f $1/env.sh ]] || {
    echo "usage: tests/gpu/lease.sh PACK_DIR OUT_DIR (PACK_DIR made by tests/gpu/pack.sh)" >&2
    exit 2
}
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The environment, checked before anything is written, run or a GPU looked for (so CI checks
# these checks): each bad value is one line naming it, exit 2.
# shellcheck source=tests/gpu/checks.sh
source "$here/checks.sh"
PHASES=${PHASES-"cudnn train trace tests bench ncu"} T_ALL=${T_ALL:-470} T_TESTS=${T_TESTS:-300}
T_CUDNN=${T_CUDNN:-280} T_TRAIN=${T_TRAIN:-150} T_TRACE=${T_TRACE:-150}
SEQS=${SEQS:-"8192 16384 32768"} ITERS=${ITERS:-5} NCU_SEQ=${NCU_SEQ:-16384}
STEP_TIMEOUT=${STEP_TIMEOUT:-90}
check_count lease.sh T_ALL "$T_ALL" 30 86400 seconds
check_count lease.sh T_TESTS "$T_TESTS" 10 86400 seconds
check_count lease.sh T_CUDNN "$T_CUDNN" 10 86400 seconds
check_count lease.sh T_TRAIN "$T_TRAIN" 10 86400 seconds
check_count lease.sh T_TRACE "$T_TRACE" 10 86400 seconds
check_count lease.sh STEP_TIMEOUT "$STEP_TIMEOUT" 1 86400 seconds
check_count lease.sh ITERS "$ITERS" 1 100000
check_count lease.sh NCU_SEQ "$NCU_SEQ" 128 131072
check_list lease.sh SEQS "$SEQS" 128 1048576
check_regex lease.sh ONLY "${ONLY:-}"
# A lease that runs no phase runs no test: never a pass.
known="cudnn, train, tests, bench, ncu, trace"
[[ -n ${PHASES// /} ]] || bad lease.sh "PHASES names no phase (give some of: ${known//,/})"
for name in $PHASES; do
    [[ $name =~ ^(cudnn|train|tests|bench|ncu|trace)$ ]] ||
        bad lease.sh "PHASES: unknown phase '$(printable "$name")' ($known)"
done
export STEP_TIMEOUT
pack=$(cd -- "$1" && pwd)
mkdir -p "$2" || { echo "lease.sh: cannot create $2" >&2; exit 2; }
out=$(cd -- "$2" && pwd)
bench="$here/../bench"
start=$SECONDS failed=0 ran=0
work=$(mktemp -d)
mkdir -p "$work/run" "$work/ncu"
log="$out/lease.log"
: >"$log"

say() { echo "[lease $(date -u +%T) +$((SECONDS - start))s] $*" | tee -a "$log" >&2; }
# left CAP: the seconds this phase may take, at most CAP, keeping 20 s to pack at the end.
left() {
    local rest=$((T_ALL - (SECONDS - start) - 20))
    echo $((rest < $1 ? rest : $1))
}
# phase NAME CAP FILE COMMAND...: run one phase under its deadline, its output appended to
# FILE; its start, deadline and exit go to lease.log.
phase() {
    local name=$1 cap rc file=$3
    cap=$(left "$2")
    shift 3
    if [[ $cap -lt 10 ]]; then
        say "$name: not run, ${cap}s left of T_ALL=${T_ALL}s"
        failed=1
        return
    fi
    say "$name: start (deadline ${cap}s)"
    ran=$((ran + 1))
    # DEADLINE lets run.sh end on its own, summary written, before the timeout would cut it.
    DEADLINE=$(($(date +%s) + cap - 15)) timeout -k 10 "$cap" "$@" >>"$file" 2>&1 </dev/null
    rc=$?
    [[ $rc -eq 124 || $rc -eq 137 ]] && say "$name: cut at its deadline (${cap}s)"
    say "$name: exit $rc"
    [[ $rc -eq 0 ]] || failed=1
}
# keep: copy the text the phases wrote into OUT_DIR (cheap: after every phase and bench).
keep() {
    [[ -f $work/run/run.log ]] && cp "$work/run/run.log" "$out/run.log"
    [[ -f $work/bench.txt ]] && cp "$work/bench.txt" "$out/bench.txt"
    [[ -f $work/ncu/details.txt ]] && cp "$work/ncu/details.txt" "$out/ncu.txt"
    [[ -f $work/ncu/source.txt ]] && cp "$work/ncu/source.txt" "$out/ncu-source.txt"
}
# archive DIR NAME PATTERN: DIR/NAME as OUT_DIR/NAME.tar.xz (once, after the phase that wrote
# it), where it holds files matching PATTERN.
archive() {
    compgen -G "$1/$2/$3" >/dev/null && tar -C "$1" -cJf "$out/$2.tar.xz" --exclude='*.txt' "$2"
}

# shellcheck source=/dev/null
source "$pack/env.sh" >>"$log" 2>&1 || { say "env.sh failed (see above)"; exit 2; }
python=${PYTHON:-python3}
{
    echo "ringscale lease, $(date -u +%FT%TZ), host $(hostname), $(nproc) cores"
    cat "$pack/PACKED" 2>/dev/null
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
            --format=csv
    else
        echo "nvidia-smi: not found"
    fi
    "$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
"cuDNN", torch.backends.cudnn.version(), "NCCL", torch.cuda.nccl.version())' 2>&1
} >"$out/device.txt" 2>&1
say "phases: $PHASES; T_ALL=${T_ALL}s"

for name in $PHASES; do
    case $name in
    cudnn)
        cudnn_end=$((SECONDS + T_CUDNN))
        phase "cudnn tests" $((T_CUDNN * 5 / 10)) "$log" env ONLY=cudnn SKIP_BENCH=1 \
            "$here/run.sh" "$pack" "$work/run"
        archive "$work/run" results '*.h5'
        # shellcheck disable=SC2086 # SEQS is a list
        phase "cudnn bench vs SDPA-cuDNN" $((cudnn_end - SECONDS - 60)) "$work/bench.txt" \
            env PYTHON="$python" "$bench/attention_cudnn_gpu.sh" "$pack/build" "$ITERS" $SEQS
        keep
        phase "cudnn job overhead" $((cudnn_end - SECONDS)) "$work/bench.txt" \
            env ATTN_KERNEL=cudnn "$bench/job_overhead.sh" "$pack/build" "$ITERS"
        ;;
    train)
        phase "train checks" "$T_TRAIN" "$work/bench.txt" env PYTHON="$python" \
            STEP_TIMEOUT="$STEP_TIMEOUT" "$here/train_models.sh" "$pack/build" "$work/train"
        [[ -f $work/train/train_models.log ]] && cat "$work/train/train_models.log" >>"$work/bench.txt"
        ;;
    tests)
        phase tests "$T_TESTS" "$log" env SKIP_BENCH=1 "$here/run.sh" "$pack" "$work/run"
        archive "$work/run" results '*.h5'
        ;;
    bench)
        build="$pack/build"
        # shellcheck disable=SC2086 # SEQS is a list
        phase "bench attention vs SDPA" 200 "$work/bench.txt" env PYTHON="$python" \
            "$bench/attention_gpu.sh" "$build" "$ITERS" $SEQS
        keep
        phase "bench job overhead" 90 "$work/bench.txt" "$bench/job_overhead.sh" "$build" "$ITERS"
        keep
        phase "bench train_step vs PyTorch" 150 "$work/bench.txt" env PYTHON="$python" \
            "$bench/train_step_gpu_torch.sh" "$build" "$ITERS"
        ;;
    ncu)
        phase "ncu profiles" 200 "$log" env PYTHON="$python" "$here/profile.sh" "$pack/build" \
            "$NCU_SEQ" "$work/ncu"
        archive "$work" ncu '*.ncu-rep'
        ;;
    trace)
        phase "trace and profile checks" "$T_TRACE" "$work/bench.txt" env PYTHON="$python" \
            STEP_TIMEOUT="$STEP_TIMEOUT" "$here/trace_gpu.sh" "$pack/build" "$work/trace"
        [[ -f $work/trace/trace_gpu.log ]] && cat "$work/trace/trace_gpu.log" >>"$work/bench.txt"
        ;;
    *)
        say "unknown phase '$name' ($known)"
        failed=1
        ;;
    esac
    keep
done
rm -rf "$work"
verdict="a phase failed or was cut"
[[ $ran -eq 0 ]] && failed=1 verdict="no phase ran" # nothing tested is never a pass
[[ $failed -eq 0 ]] && verdict="every phase passed"
say "done: $verdict; in $out: $(cd -- "$out" && printf '%s ' *)"
exit $failed
