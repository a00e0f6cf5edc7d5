#!/usr/bin/env bash
# The GPU scripts refuse bad input before they run anything or look for a GPU, so
# these checks run on any CI machine: tests/gpu/run.sh, lease.sh and profile.sh with an ONLY
# that is not a regex or matches no step, numeric variables that are not numbers or out of
# range, and a lease with no phase: each exits 2 with one line naming the variable, and
# nothing runs (no step's "[time] name" line, no log of a step).
# usage: gpu_scripts_test.sh WORK_DIR
set -uo pipefail
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")/../gpu" && pwd)
work=$1
rm -rf "$work" && mkdir -p "$work/pack" "$work/build/tests" || exit 1
# A packed directory with no binaries (no GPU test, no runtime bundle): run.sh plans its
# steps from it without running one.
: >"$work/pack/env.sh"
: >"$work/pack/gpu-tests.tsv"
printf '#!/bin/sh\necho "stub ran" >&2\nexit 0\n' >"$work/build/tests/bench_attention_gpu"
chmod +x "$work/build/tests/bench_attention_gpu"
failures=0

# expect SCRIPT WORDS_IN_THE_LINE ENV... -- ARGS...: exit 2, one stderr line holding WORDS.
expect() {
    local script=$1 words=$2 envs=() err rc
    shift 2
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    err=$(env "${envs[@]}" timeout 60 bash "$here/$script" "$@" 2>&1 >/dev/null)
    rc=$?
    if [[ $rc -ne 2 || $(printf '%s\n' "$err" | grep -c .) -ne 1 || $err != *"$words"* ]]; then
        echo "FAIL: ${envs[*]} $script: exit $rc (want 2), stderr:"
        printf '  %s\n' "$err"
        failures=$((failures + 1))
    else
        echo "ok: ${envs[*]} $script: $err"
    fi
}

out="$work/out"
expect run.sh "ONLY='[' is not a valid extended regular expression" ONLY='[' -- "$work/pack" "$out"
expect run.sh "ONLY='no-such-step' matches none of the" ONLY=no-such-step -- "$work/pack" "$out"
expect run.sh "STEP_TIMEOUT must be a whole number" STEP_TIMEOUT=abc -- "$work/pack" "$out"
expect run.sh "STEP_TIMEOUT must be a whole number" STEP_TIMEOUT=-5 -- "$work/pack" "$out"
expect run.sh "ITERS must be a whole number" ITERS=1e3 -- "$work/pack" "$out"
expect run.sh "SEQS must be whole numbers" SEQS='4096 big' -- "$work/pack" "$out"
expect run.sh "DEADLINE must be a whole number" DEADLINE=soon -- "$work/pack" "$out"
expect run.sh "SKIP_BENCH must be 0 or 1" SKIP_BENCH=yes -- "$work/pack" "$out"
if [[ -e $out/run.log ]] && grep -q '^=====' "$out/run.log"; then
    echo "FAIL: a refused run.sh ran a step:"
    cat "$out/run.log"
    failures=$((failures + 1))
fi
lout="$work/lease_out"
expect lease.sh "T_ALL must be a whole number" T_ALL=abc -- "$work/pack" "$lout"
expect lease.sh "T_TESTS must be a whole number" T_TESTS=-1 -- "$work/pack" "$lout"
expect lease.sh "T_CUDNN must be a whole number" T_CUDNN=abc -- "$work/pack" "$lout"
expect lease.sh "T_TRACE must be a whole number" T_TRACE=5 -- "$work/pack" "$lout"
expect lease.sh "STEP_TIMEOUT must be a whole number" STEP_TIMEOUT=99999999999999999999 -- \
    "$work/pack" "$lout"
expect lease.sh "NCU_SEQ must be a whole number" NCU_SEQ=12x -- "$work/pack" "$lout"
expect lease.sh "ITERS must be a whole number" ITERS=0 -- "$work/pack" "$lout"
expect lease.sh "SEQS must be whole numbers" SEQS='8192 -1' -- "$work/pack" "$lout"
expect lease.sh "ONLY='(' is not a valid extended regular expression" ONLY='(' -- "$work/pack" \
    "$lout"
expect lease.sh "PHASES names no phase" PHASES=' ' -- "$work/pack" "$lout"
expect lease.sh "PHASES: unknown phase 'test'" PHASES='test' -- "$work/pack" "$lout"
[[ -e $lout ]] && { echo "FAIL: a refused lease.sh wrote $lout"; failures=$((failures + 1)); }
expect profile.sh "SEQ must be a whole number" -- "$work/build" 99999999999999999999 "$work/p"
expect profile.sh "SEQ must be a whole number" -- "$work/build" 64 "$work/p"
expect profile.sh "CAUSAL must be a whole number from 0 to 1" CAUSAL=2 -- "$work/build" 4096 \
    "$work/p"
[[ -e $work/p ]] && { echo "FAIL: a refused profile.sh wrote $work/p"; failures=$((failures + 1)); }
expect trace_gpu.sh "STEP_TIMEOUT must be 1..99999 seconds" STEP_TIMEOUT=abc -- "$work/build" \
    "$work/t"
expect trace_gpu.sh "usage: tests/gpu/trace_gpu.sh" -- "$work/no such dir" "$work/t"
[[ -e $work/t ]] && { echo "FAIL: a refused trace_gpu.sh wrote $work/t"; failures=$((failures + 1)); }
echo "$failures failed"
[[ $failures -eq 0 ]]
