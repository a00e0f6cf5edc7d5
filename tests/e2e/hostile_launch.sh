#!/usr/bin/env bash
# Results that must not be lost: two launches with one SLURM_JOB_ID in one directory
# and second keep two files; an unsafe SLURM_JOB_ID stays inside the output directory;
# --resume re-runs a prior case whose timings are unreadable; a deleted output directory stops
# the launch at the next case, with one line naming the file; --resume over a prior file that
# hangs HDF5 names it in one line and runs on; paths and specs printed as one line of text.
# usage: hostile_launch.sh RINGSCALE MPIEXEC WORK DATA_DIR(tests/data)
set -u
ringscale=$1 mpiexec=$2 work=$3 data=$4
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
grep -q "cases/0000 cannot be used (time_s \[iteration 0, rank 0\] is nan.*); it runs again" \
    "$work/resume2.out" || fail "--resume did not say why it re-runs: $(grep -h runs "$work/resume2.out")"

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

# 5. --resume over damaged prior files beside a good one. hostile_resume/heap_hang.h5 is a real
# launch's file
# (1 case) with one global-heap object zeroed: reading its `schema` attribute loops forever inside HDF5
# (H5HG_read), so an in-process --resume hung before any work. (The flip_*.h5 files crash
# HDF5's attribute walk, which --resume never does; flip_005.h5 is an old-schema file here.)
# The launch must finish, name the hanging file in one line, and skip the good file's case.
mkdir -p "$work/prior"
"$mpiexec" -q -np 1 "$ringscale" "${small[@]}" -o "$work/prior/" >"$work/prior1.out" 2>&1 ||
    fail "the good prior launch failed"
cp "$data/hostile_resume/heap_hang.h5" "$data/hostile/flip_005.h5" "$work/prior/"
timeout 60 "$mpiexec" -q -np 1 "$ringscale" --job collectives --op allreduce,sendrecv -b 1K -e 1K \
    -n 2 -w 1 -o "$work/prior/" --resume 1 >"$work/prior2.out" 2>"$work/prior2.err"
rc=$?
[[ $rc == 0 ]] || fail "--resume over a damaged prior file ended with exit $rc (124: it hung)"
[[ $(grep -c 'heap_hang.h5' "$work/prior2.err") == 1 ]] ||
    fail "not one line names heap_hang.h5: $(head -c 600 "$work/prior2.err")"
grep -q "prior file unreadable: '.*heap_hang.h5': reading it took longer than .*; its cases will run again" \
    "$work/prior2.err" || fail "the line on heap_hang.h5 does not say why"
[[ $(grep -c 'flip_005.h5' "$work/prior2.err") == 1 ]] || fail "not one line names flip_005.h5"
grep -q '1 of 2 case(s) already completed' "$work/prior2.out" ||
    fail "the good prior file's case was not skipped: $(grep -h resume "$work/prior2.out")"
grep -q '^results: ' "$work/prior2.out" || fail "the resumed launch wrote no results file"

# 6. --resume counts exactly the cases ringscale-stats would use, through the same
# check: a prior case with time_s of shape [1,1], NaN in comm_wait_s, no usable warm-up flags
# or warm-up flags of 0.5 runs again, with one line each; the sound case is skipped.
four=(--job collectives --op allreduce,sendrecv,alltoall,broadcast,reduce_scatter -b 1K -e 1K -n 2 -w 1)
"$mpiexec" -q -np 1 "$ringscale" "${four[@]}" -o "$work/damaged/" >"$work/damaged1.out" 2>&1 ||
    fail "the launch to damage failed"
/usr/bin/python3 - "$work/damaged" <<'PY'
import glob, sys, h5py, numpy as np
f = h5py.File(glob.glob(sys.argv[1] + "/*.h5")[0], "r+")
c = [f["cases"][k] for k in sorted(f["cases"])]
del c[0]["time_s"]; c[0]["time_s"] = np.full((1, 1), 1e-5)
w = c[1]["comm_wait_s"][...]; w[-1, 0] = np.nan; c[1]["comm_wait_s"][...] = w
del c[2]["is_warmup"]; del c[2]["run"].attrs["warmup"]
del c[3]["is_warmup"]; c[3]["is_warmup"] = np.array([0.5, 0, 0])
PY
"$mpiexec" -q -np 1 "$ringscale" "${four[@]}" -o "$work/damaged/" --resume 1 \
    >"$work/damaged2.out" 2>&1 || fail "the resumed launch over damaged cases failed"
grep -q '1 of 5 case(s) already completed' "$work/damaged2.out" ||
    fail "--resume took damaged cases as completed: $(grep -h 'resume' "$work/damaged2.out")"
[[ $(grep -c 'cannot be used (.*); it runs again' "$work/damaged2.out") == 4 ]] ||
    fail "not one line per damaged case: $(grep -h 'runs again' "$work/damaged2.out")"

# 7. A .part replaced during the sweep (another process's file moved over it) is detected
# before the next case and never published as the results.
"$mpiexec" -q -np 1 "$ringscale" --job collectives --op allreduce -b 1K -e 64M -f 2 -n 20 -w 1 \
    -o "$work/swap/" >"$work/swap.out" 2>"$work/swap.err" &
pid=$!
for _ in $(seq 100); do compgen -G "$work/swap/*.part" >/dev/null && break; sleep 0.1; done
part=$(compgen -G "$work/swap/*.part" | head -n 1)
cp "$part" "$work/swap/impostor" && mv -f "$work/swap/impostor" "$part"
wait $pid
rc=$?
[[ $rc != 0 ]] || fail "a replaced .part went unnoticed (exit 0)"
grep -q 'was replaced by another one' "$work/swap.err" ||
    fail "no line says the file was replaced: $(tail -n 2 "$work/swap.err")"
[[ -z $(compgen -G "$work/swap/*.h5") ]] || fail "the replaced file was published: $(ls "$work/swap")"

# 8. The launcher's own lines are one line of text each, whatever a path or a spec holds:
# a newline and an ESC in -o leave "results: <path>" the last line, escaped; a
# vertical tab inside a --docs spec (whitespace its lengths allow) reaches no terminal raw.
odd=$'a\nb\e[2J.h5'
mkdir -p "$work/odd"
# stdout alone: mpirun forwards a rank's stdout and stderr on separate channels, so in one
# file the progress line on stderr can land after "results:" (a clean-clone run, load 2.8).
"$mpiexec" -q -np 1 "$ringscale" "${small[@]}" -o "$work/odd/$odd" >"$work/odd.out" \
    2>"$work/odd.err" || fail "launch with a newline in -o failed: $(tail -n 2 "$work/odd.err")"
[[ -f "$work/odd/$odd" ]] || fail "no results file at the path with a newline: $(ls "$work/odd")"
[[ $(tail -n 1 "$work/odd.out") == "results: $work/odd/a\\nb\\x1b[2J.h5" ]] ||
    fail "the last line is not 'results: <path>' escaped: $(tail -n 2 "$work/odd.out" | od -c | head -3)"
cat "$work/odd.out" "$work/odd.err" | grep -q $'\e' &&
    fail "a raw ESC from -o reached the launcher's output"
"$mpiexec" -q -np 1 "$ringscale" --job ring_attention --seq-len 4K --docs $'2K\v+2K' --dry-run \
    >"$work/vt.out" 2>&1 || fail "a --docs spec with a vertical tab was refused: $(cat "$work/vt.out")"
grep -q $'\v' "$work/vt.out" && fail "a raw vertical tab from --docs reached the launcher's output"
grep -qF 'docs=2K\x0b+2K' "$work/vt.out" || fail "the --docs spec is not shown escaped: $(cat "$work/vt.out")"

echo "hostile launch checks: $failures failure(s)"
[[ $failures == 0 ]]
