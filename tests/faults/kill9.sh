#!/usr/bin/env bash
# kill -9 of one rank mid-sweep: the job ends (mpiexec or, failing that, the watchdog), and
# the cases completed before stay in a readable file marked incomplete.
# usage: kill9.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
source "$(dirname -- "$0")/lib.sh"
start_launch 2 "$work/out/" --timeout 8
check "two cases completed before the kill" wait_cases 2
victim=$(rank_pids | sed -n 2p)
killed=$(date +%s.%N)
kill -9 "$victim"
wait_end "$killed"
echo "kill9: rank 1 (pid $victim) killed; the job ended ${took_s} s later, exit code $rc"
check "exit code non-zero" test "$rc" -ne 0
check "ended within the 8 s timeout plus 5 s" python3 -c "import sys; sys.exit(float('$took_s') > 13)"
file=$(survivor "$work/out")
check "a results file survived" test -n "$file"
[ -n "$file" ] && check_survivor "$file" 2
finish
