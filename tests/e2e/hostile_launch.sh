#!/usr/bin/env bash
# Results that must not be lost (issue 17): two launches with one SLURM_JOB_ID in one directory
# and second keep two files; an unsafe SLURM_JOB_ID stays inside the output directory;
# --resume re-runs a prior case whose timings are unreadable; a deleted output directory stops
# the launch at the next case, with one line naming the file.
# usage: hostile_launch.sh RINGSCALE MPIEXEC WORK
set -u
ringscale=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
small=(--job collectives --op allreduce -b 1K -e 1K -n 2 -w 1)

# 1. Same SLURM_JOB_ID, same directory, started together: two files, two distinct paths.
for i in 1 2 3; do
    SLURM_JOB_ID=4242 "$mpiexec" -q -np 1 "$ringscale" "${small[@]}" -o "$work/same/" \
        >"$work/same$i.out" 2>&1 &
done
wait
n=$(ls "$work/same"/*.h5 2>/dev/null | wc -l)
paths=$(grep -h '^results: ' "$work"/same?.out | sort -u | wc -l)
[[ $n == 3 && $paths == 3 ]] || fail "3 launches with one SLURM_JOB_ID left $n files, $paths distinct paths"

# 2. An unsafe SLURM_JOB_ID is reduced to a file-name token inside the directory.
SLURM_JOB_ID='../../evil' "$mpiexec" -q -np 1 "$ringscale" "${small[@]}" -o "$work/evil/" \
    >"$work/evil.out" 2>&1 || fail "launch with SLURM_JOB_ID=../../evil failed"
[[ $(ls "$work/evil"/*evil*.h5 2>/dev/null | wc -l) == 1 ]] || fail "the evil-id file is not in its directory"
[[ -z $(find "$work" -maxdepth 1 -name '*evil*.h5') ]] || fail "a file escaped the output directory"

# 3. --resume re-checks a prior case's data: break case 0's time_s, resume runs it again.
"$mpiexec" -q -np 1 "$ringscale" --job collectives --op allreduce,sendrecv -b 1K -e 1K -n 2 -w 1 \
    -o "$work/resume/" >"$work/resume1.out" 2>&1 || fail "first resume launch failed"
/usr/bin/python3 - "$work/resume" <<'PY'
import glob, sys, h5py, numpy as np
f = h5py.File(glob.glob(sys.argv[1] + "/*.h5")[0], "r+")
f["cases/0000/time_s"][...] = np.nan
PY
"$mpiexec" -q -np 1 "$ringscale" --job collectives --op allreduce,sendrecv -b 1K -e 1K -n 2 -w 1 \
    -o "$work/resume/" --resume 1 >"$work/resume2.out" 2>&1 || fail "resumed launch failed"
grep -q '1 of 2 case(s) already completed' "$work/resume2.out" ||
    fail "--resume counted a case with NaN timings as completed: $(grep -h resume "$work/resume2.out")"
grep -q 'unreadable timings; it runs again' "$work/resume2.out" || fail "--resume did not say why it re-runs"

# 4. The output directory deleted mid-sweep: stop at the next case with one line, exit non-zero.
"$mpiexec" -q -np 1 "$ringscale" --job collectives --op allreduce -b 1K -e 64M -f 2 -n 20 -w 1 \
    -o "$work/gone/" >"$work/gone.out" 2>"$work/gone.err" &
pid=$!
for _ in $(seq 100); do compgen -G "$work/gone/*.part" >/dev/null && break; sleep 0.1; done
rm -rf "$work/gone"
start=$SECONDS
wait $pid
rc=$?
[[ $rc != 0 ]] || fail "deleting the output directory went unnoticed (exit 0)"
grep -q 'the file is gone' "$work/gone.err" || fail "no line says the results file is gone: $(tail -n 2 "$work/gone.err")"

echo "hostile launch checks: $failures failure(s)"
[[ $failures == 0 ]]
