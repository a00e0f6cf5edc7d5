#!/usr/bin/env bash
# The linear layers' GEMM: the training step validates against the single-rank
# reference with either GEMM (RINGSCALE_LINEAR_GEMM=own where the CPU has AVX-512F, =openblas
# everywhere), and /meta linear_gemm records the one that ran: by default "own" on an AMD CPU
# with AVX-512F, "openblas" elsewhere. Any other value is refused in one line, before a file.
# usage: linear_gemm.sh RINGSCALE MPIEXEC WORKDIR
set -u
ringscale=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
run=(--job train_step --train-seq-len 64 --tokens 256 --scaling strong -n 2 -w 1 --validate on
    --dp-variant ddp --threads 1)
gemm_in() { h5dump -a /meta/linear_gemm "$1" | sed -n 's/.*(0): "\(.*\)".*/\1/p'; }
avx512=0
grep -qw avx512f /proc/cpuinfo && avx512=1
default=openblas
[ "$avx512" -eq 1 ] && grep -m1 vendor_id /proc/cpuinfo | grep -q AuthenticAMD && default=own
fails=0
for choice in default openblas own; do
    want=$choice
    [ "$choice" = default ] && want=$default
    [ "$choice" = own ] && [ "$avx512" -eq 0 ] && want=openblas # no AVX-512F: OpenBLAS still
    env=(env -u RINGSCALE_LINEAR_GEMM)
    [ "$choice" != default ] && env=(env RINGSCALE_LINEAR_GEMM="$choice")
    "${env[@]}" "$mpiexec" -q -np 2 --oversubscribe --bind-to none "$ringscale" "${run[@]}" \
        -o "$work/$choice.h5" >"$work/$choice.out" 2>&1 ||
        { echo "FAILED: the $choice launch failed"; cat "$work/$choice.out"; fails=1; continue; }
    got="$(gemm_in "$work/$choice.h5")"
    [ "$got" = "$want" ] ||
        { echo "FAILED: $choice: /meta linear_gemm is '$got', expected '$want'"; fails=1; }
    grep -Eq '^ +ddp .* ok$' "$work/$choice.out" ||
        { echo "FAILED: $choice: the step did not validate"; cat "$work/$choice.out"; fails=1; }
done
RINGSCALE_LINEAR_GEMM=$'blas\e[31m' "$mpiexec" -q -np 2 --oversubscribe --bind-to none \
    "$ringscale" "${run[@]}" -o "$work/bad.h5" >"$work/bad.out" 2>&1 &&
    { echo "FAILED: RINGSCALE_LINEAR_GEMM=blas<ESC> was accepted"; fails=1; }
[ "$(grep -cF "error: RINGSCALE_LINEAR_GEMM must be 'own' or 'openblas' (got 'blas\\x1b[31m')" \
    "$work/bad.out")" -eq 1 ] ||
    { echo "FAILED: not one escaped error line for a bad value"; cat "$work/bad.out"; fails=1; }
ls "$work"/bad.h5* >/dev/null 2>&1 &&
    { echo "FAILED: a file was written for a bad value"; fails=1; }
[ "$fails" -eq 0 ] &&
    echo "linear gemm ok: default '$default', own and openblas both validate, a bad value refused"
exit "$fails"
