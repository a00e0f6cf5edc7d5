#!/usr/bin/env bash
# The launch-time warning when the MPI launcher binds a rank to fewer cores than its share:
# np=1 bound to one core warns once (naming the fix), --bind-to none does not; the file
# records each rank's threads and allowed cores. Skips (77) on a one-core machine.
# usage: binding_warning.sh RINGSCALE MPIEXEC WORKDIR
set -u
ringscale=$1 mpiexec=$2 work=$3
if [ "$(nproc --all)" -lt 2 ] || [ "$(nproc)" -lt 2 ]; then
    echo "skipped: needs 2 or more cores to bind a rank to fewer than its share"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
run=(--op allreduce -b 1K -e 1K -w 1 -n 2)
"$mpiexec" -q -np 1 --bind-to core "$ringscale" "${run[@]}" -o "$work/bound.h5" \
    >/dev/null 2>"$work/bound.err" || { cat "$work/bound.err"; exit 1; }
"$mpiexec" -q -np 1 --bind-to none "$ringscale" "${run[@]}" -o "$work/free.h5" \
    >/dev/null 2>"$work/free.err" || { cat "$work/free.err"; exit 1; }
fails=0
[ "$(grep -c 'warning: a rank may run on only 1 core' "$work/bound.err")" -eq 1 ] ||
    { echo "FAILED: no single binding warning when bound to one core"; fails=1; }
grep -q -- '--bind-to none' "$work/bound.err" && grep -q 'srun --cpus-per-task' "$work/bound.err" ||
    { echo "FAILED: the warning does not name the fix"; fails=1; }
! grep -q 'warning: a rank may run' "$work/free.err" ||
    { echo "FAILED: warned with --bind-to none"; fails=1; }
h5dump -d /cases/0000/affinity_cores "$work/bound.h5" | grep -q '(0): 1$' ||
    { echo "FAILED: bound file does not record 1 allowed core"; fails=1; }
[ "$fails" -eq 0 ] && echo "binding warning ok: $(cat "$work/bound.err" | grep warning)"
exit "$fails"
