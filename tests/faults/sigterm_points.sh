#!/usr/bin/env bash
# A launch stopped at many points always leaves a readable file, closed and renamed by rank 0
# (or none, when it stopped before creating one): SIGTERM to mpiexec from its first moments to
# mid-sweep (during start-up, around the file's creation, between and inside cases), SIGTERM
# twice (Open MPI's mpirun then exits at once without passing it on) and mpiexec killed
# outright (as a time limit's SIGKILL does): both leave the ranks without their launcher.
# After each, once the launch's ranks are gone, the file is read by python3-h5py and by
# ringscale-stats: complete=0, every case in it whole, flagged incomplete.
# usage: sigterm_points.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
source "$(dirname -- "$0")/lib.sh"
sweep=(-b 64K -e 64M -f 2 -w 1 -n 40 --repeat 50)

# Wait (at most 30 s) until no rank of the launch writing into `out` is left.
wait_ranks_gone() { # out
    for _ in $(seq 300); do
        pgrep -f -- "-o $1" >/dev/null || return 0
        sleep 0.1
    done
    return 1
}

files=0 with_cases=0
for point in TERM:0.05 TERM:0.4 TERM:0.9 TERM:1.6 TERM:2.5 TERM2:1.5 KILL:1.2 KILL:2.5; do
    signal=${point%%:*} delay=${point#*:}
    out=$work/${signal}_$delay
    mkdir -p "$out"
    start_launch 2 "$out/"
    sleep "$delay"
    signalled=$(date +%s.%N)
    if [ "$signal" = TERM2 ]; then
        kill -TERM "$launch_pid" && kill -TERM "$launch_pid"
    else
        kill -"$signal" "$launch_pid"
    fi
    wait_end "$signalled"
    check "$signal to mpiexec after $delay s: the ranks ended" wait_ranks_gone "$out/"
    file=$(survivor "$out")
    echo "$signal after $delay s: exit $rc in ${took_s} s; file: ${file:-none}"
    [ -n "$file" ] || continue
    files=$((files + 1))
    check "rank 0 closed it (renamed, no .part left)" test "${file%.part}" = "$file"
    cases=$(/usr/bin/python3 -c "import h5py, sys; print(len(h5py.File(sys.argv[1], 'r')['cases']))" \
        "$file" 2>/dev/null) || cases=unreadable
    check "its file is readable (cases: $cases)" test "$cases" != unreadable
    if [ "$cases" = 0 ]; then # stopped before its first case: read, and says so
        check "ringscale-stats reads it: no cases yet" bash -c \
            '"$1" summary "$2" 2>&1 | grep -q "^ringscale-stats: no results cases found in "' \
            _ "$stats" "$file"
        check "h5py reads it: complete=0" /usr/bin/python3 "$here/check_survivor.py" "$file" 0
    elif [ "$cases" != unreadable ]; then
        with_cases=$((with_cases + 1))
        check_survivor "$file" 1
    fi
done
# The stops must have landed both before and after cases were written, or the loop proved
# little: at least three files, two of them with cases.
check "$files file(s) left, $with_cases with cases" test "$files" -ge 3 -a "$with_cases" -ge 2
finish
