#!/usr/bin/env bash
# OpenBLAS's kernels: a launch on a CPU with AVX2 or AVX-512 never runs one of
# OpenBLAS's pre-AVX fallback cores. Where OpenBLAS does not know the CPU (Debian's 0.3.21 on
# a family 6 model 207 Xeon picks "Prescott") the launcher restarts itself with
# OPENBLAS_CORETYPE set, and says so once; where it knows the CPU nothing restarts. A user's
# OPENBLAS_CORETYPE is kept, and a generic core chosen that way is warned about.
# Skips (77) on a CPU without AVX2, where no better core exists.
# usage: blas_core.sh RINGSCALE MPIEXEC WORKDIR
set -u
ringscale=$1 mpiexec=$2 work=$3
if ! grep -qw avx2 /proc/cpuinfo && ! grep -qw avx512f /proc/cpuinfo; then
    echo "skipped: this CPU has neither AVX2 nor AVX-512, so OpenBLAS has no better core"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
run=(--op allreduce -b 1K -e 1K -w 1 -n 2)
core_in() { h5dump -a /meta/blas_core "$1" | sed -n 's/.*(0): "\(.*\)".*/\1/p'; }
generic='^(katmai|coppermine|northwood|prescott|banias|core2|penryn|dunnington|nehalem|atom|opteron)$'
fails=0
env -u OPENBLAS_CORETYPE -u RINGSCALE_BLAS_RESTARTED "$mpiexec" -q -np 1 --bind-to none \
    "$ringscale" "${run[@]}" -o "$work/auto.h5" >/dev/null 2>"$work/auto.err" ||
    { cat "$work/auto.err"; exit 1; }
auto="$(core_in "$work/auto.h5")"
[ -n "$auto" ] || { echo "FAILED: /meta blas_core is empty or missing"; fails=1; }
if echo "$auto" | tr 'A-Z' 'a-z' | grep -Eq "$generic"; then
    echo "FAILED: the launch ran OpenBLAS's generic '$auto' kernels on a vector CPU"
    fails=1
fi
notes="$(grep -c 'launcher restarted with OPENBLAS_CORETYPE' "$work/auto.err")"
if [ "$notes" -gt 1 ]; then
    echo "FAILED: the restart was noted $notes times"
    fails=1
elif [ "$notes" -eq 1 ] && ! grep -q "runs its '$auto' kernels" "$work/auto.err"; then
    echo "FAILED: the note does not name the core the file records ('$auto')"
    fails=1
fi
h5dump -a /meta/warnings "$work/auto.h5" | grep -q "OpenBLAS runs its" &&
    { echo "FAILED: a generic-core warning after the restart"; fails=1; }
OPENBLAS_CORETYPE=Prescott "$mpiexec" -q -np 1 --bind-to none -x OPENBLAS_CORETYPE \
    "$ringscale" "${run[@]}" -o "$work/user.h5" >/dev/null 2>"$work/user.err" ||
    { cat "$work/user.err"; exit 1; }
user="$(core_in "$work/user.h5")"
[ "$user" = Prescott ] ||
    { echo "FAILED: OPENBLAS_CORETYPE=Prescott was not kept (the file says '$user')"; fails=1; }
grep -q 'launcher restarted' "$work/user.err" &&
    { echo "FAILED: restarted although OPENBLAS_CORETYPE was set"; fails=1; }
[ "$(grep -c "OpenBLAS runs its 'Prescott' kernels" "$work/user.err")" -eq 1 ] ||
    { echo "FAILED: no single warning about the user's generic core"; fails=1; }
[ "$fails" -eq 0 ] && echo "blas core ok: launched with '$auto'" \
    "($( [ "$notes" -eq 1 ] && echo "after a restart" || echo "OpenBLAS's own choice")); user's Prescott kept and warned"
exit "$fails"
