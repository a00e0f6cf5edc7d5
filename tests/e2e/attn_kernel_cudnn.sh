#!/usr/bin/env bash
# --attn-kernel cudnn's refusals, before any GPU is bound (so they run on any host): with
# --device cpu (an attention job and train_step), on a build without cuDNN and with a mask
# cuDNN cannot take (block-sparse, dilated); and --dtype fp8 for an attention job with
# --device cpu or a kernel other than cudnn (auto, sm80, sm90). Each must exit 2 with one
# line on stderr naming the problem, and leave no results file. train_step runs its attention
# through cuDNN: with no GPU visible (CUDA_VISIBLE_DEVICES empty, on any host) it passes every
# --attn-kernel check and stops only where the GPU is bound.
# usage: attn_kernel_cudnn.sh RINGSCALE MPIEXEC WORKDIR HAVE_CUDNN(ON|OFF)
set -u
ringscale=$1 mpiexec=$2 work=$3 have=$4
rm -rf "$work" && mkdir -p "$work/out"
pass=0 fail=0
check() { # EXPECTED ARGS...
    local want=$1 rc lines left
    shift
    timeout 60 "$mpiexec" -q -np 2 --oversubscribe "${env[@]}" "$ringscale" "$@" -o "$work/out" \
        </dev/null \
        >"$work/stdout" 2>"$work/stderr"
    rc=$?
    lines=$(grep -c . "$work/stderr")
    left=$(find "$work/out" -type f)
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$work/stderr" &&
        [ -z "$left" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: ringscale $*: exit $rc (want 2), $lines line(s) (want one with '$want'):"
        sed 's/^/    /' "$work/stderr"
    fi
}
job=(--job ring_attention --seq-len 1K)
env=()
check "--attn-kernel cudnn picks CUDA attention kernels: it needs --device cuda" \
    --attn-kernel cudnn "${job[@]}"
check "--attn-kernel cudnn picks CUDA attention kernels: it needs --device cuda" \
    --attn-kernel cudnn --job train_step --cp 2 --dp 0
# --dtype fp8 (cuDNN's fp8 attention) on the CPU and on a kernel other than cudnn, in any build.
check "--dtype fp8 runs cuDNN's fp8 attention: it needs --device cuda and --attn-kernel cudnn" \
    "${job[@]}" --dtype fp8
fp8="--dtype fp8 runs cuDNN's fp8 attention: it needs --attn-kernel cudnn"
for kernel in auto sm80 sm90; do
    check "$fp8 (--attn-kernel $kernel" --device cuda --attn-kernel "$kernel" \
        --job context_parallel --seq-len 1K --dtype bf16,fp8
done
if [ "$have" = ON ]; then
    check "--attn-kernel cudnn with --sparsity 0.5: block-sparse masks are not cuDNN's" \
        --attn-kernel cudnn --device cuda "${job[@]}" --sparsity 0.5
    check "--attn-kernel cudnn with --dilation 256:2: dilated masks are not cuDNN's" \
        --attn-kernel cudnn --device cuda "${job[@]}" --dilation 256:2
    env=(-x CUDA_VISIBLE_DEVICES=)
    check "--device cuda: no CUDA device is visible to this process" \
        --attn-kernel cudnn --device cuda --job train_step --cp 2 --dp 0
    env=()
else
    for extra in "" "--sparsity 0.5"; do
        # shellcheck disable=SC2086 # the extra options split into words on purpose
        check "--attn-kernel cudnn: cuDNN attention is not compiled into this ringscale" \
            --attn-kernel cudnn --device cuda "${job[@]}" $extra
    done
fi
echo "--attn-kernel cudnn refusals: $((pass + fail)) cases ($pass passed, $fail failed)"
[ "$fail" -eq 0 ] && [ "$pass" -ge 8 ]
