#!/usr/bin/env bash
# --resume after an interrupted sweep: a launch stopped by SIGTERM after some cases, then the
# same launch with --resume into the same directory runs only the rest; together the two
# files hold every planned case exactly once, and ringscale-stats reads them as one study.
# usage: resume.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
source "$(dirname -- "$0")/lib.sh"
sweep=(-b 64K -e 1M -f 2 -w 1 -n 4000) # 5 short cases (about 2 s in all)
start_launch 2 "$work/out/" --resume
check "two cases completed before the signal" wait_cases 2
kill -TERM "$launch_pid"
wait_end
first=$(/usr/bin/python3 -c 'import h5py, sys; print(len(h5py.File(sys.argv[1], "r")["cases"]))' \
    "$(survivor "$work/out")") # the file, not the table: a case may be in it, not yet printed
echo "first launch: stopped after $first case(s), exit code $rc"
start_launch 2 "$work/out/" --resume
wait_end
echo "second launch: exit code $rc; $(grep '^# --resume' "$work/stdout")"
check "the second launch succeeded" test "$rc" -eq 0
check "it skipped the $first completed case(s)" \
    grep -q "^# --resume: $first of 5 case(s) already completed" "$work/stdout"
check "two files hold the 5 cases once each" /usr/bin/python3 - "$work/out" <<'PY'
import glob, sys, h5py
keys = []
for path in glob.glob(sys.argv[1] + "/*.h5"):
    with h5py.File(path, "r") as f:
        keys += [f["cases"][n]["case_key"][()] for n in f["cases"]]
assert len(keys) == 5 and len(set(keys)) == 5, keys
PY
check "ringscale-stats sees 5 cases, one launch each" bash -c \
    '"$1" summary --format csv "$2" >"$3/summary.csv" && [ "$(grep -c allreduce "$3/summary.csv")" -eq 5 ]' \
    _ "$stats" "$work/out" "$work"
# Its output goes to a file before grep reads it: no pipe for mpiexec to write into after
# grep -q has exited.
check "a third launch has nothing to run" bash -c \
    '"$1" -q -np 2 --oversubscribe "$2" --op allreduce "${@:5}" -o "$3/" --resume >"$4" &&
     grep -q "nothing to run" "$4"' _ "$mpiexec" "$ringscale" "$work/out" "$work/third.log" \
    "${sweep[@]}"
finish
