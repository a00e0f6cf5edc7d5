#!/usr/bin/env bash
# SIGTERM to mpiexec mid-sweep (what a Slurm time limit amounts to): the launch ends within
# 10 s, non-zero, and the completed cases are in a readable file marked incomplete.
# usage: sigterm.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
source "$(dirname -- "$0")/lib.sh"
start_launch 2 "$work/out/"
check "two cases completed before the signal" wait_cases 2
signalled=$(date +%s.%N)
kill -TERM "$launch_pid"
wait_end "$signalled"
echo "sigterm: ended ${took_s} s after SIGTERM, exit code $rc"
check "exit code non-zero" test "$rc" -ne 0
check "ended within 10 s" python3 -c "import sys; sys.exit(float('$took_s') > 10)"
check "rank 0 said why it stopped" grep -q "SIGTERM received" "$work/stderr"
file=$(survivor "$work/out")
check "the file was closed and renamed (no .part)" test "${file%.part}" = "$file" -a -n "$file"
[ -n "$file" ] && check_survivor "$file" 2
finish
