#!/usr/bin/env bash
# A rank that hangs (SIGSTOP: alive, silent): the watchdog (--timeout 3) aborts the job with
# a message naming the rank, the blocking operation and the case; earlier cases survive.
# usage: hang.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
source "$(dirname -- "$0")/lib.sh"
start_launch 2 "$work/out/" --timeout 3
check "two cases completed before the hang" wait_cases 2
victim=$(rank_pids | sed -n 2p)
stopped=$(date +%s.%N)
kill -STOP "$victim"
wait_end "$stopped"
echo "hang: rank 1 (pid $victim) stopped; the job ended ${took_s} s later, exit code $rc"
grep "timeout after" "$work/stderr" | sed 's/^/  stderr: /'
check "exit code 5 (watchdog)" test "$rc" -eq 5
check "ended within the 3 s timeout plus 7 s" python3 -c "import sys; sys.exit(float('$took_s') > 10)"
check "rank 0 named the operation and the case" \
    grep -Eq "^ringscale: rank 0: timeout after 3 s in [a-z_()]+ \(case [0-9]+\)$" "$work/stderr"
kill -9 "$victim" 2>/dev/null # should it have outlived the job
file=$(survivor "$work/out")
check "a results file survived" test -n "$file"
[ -n "$file" ] && check_survivor "$file" 2
finish
