#!/usr/bin/env bash
# A whole node lost mid-sweep: 2 emulated nodes x 2 ranks, both ranks of node 1 killed with -9
# after two cases; the job ends within the watchdog time (--timeout 6) plus a margin, with a
# non-zero exit code, and the cases completed before stay in a readable file marked
# incomplete (the checks of tests/faults/lib.sh). Skips (77) without namespaces.
# usage: node_kill.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR   (as root)
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
here=$(cd -- "$(dirname -- "$0")" && pwd)
source "$here/lib.sh"
cluster_up 2 1gbit
source "$here/../faults/lib.sh"
sweep=(-b 64K -e 64M -f 2 -w 1 -n 20)
start_launch 4 "$work/out/" --timeout 6
check "two cases completed before the node was lost" wait_cases 2
mapfile -t victims < <(cluster_rank_pids 1 "$ringscale")
check "node 1 runs two ranks" test "${#victims[@]}" -eq 2
killed=$(date +%s.%N)
kill -9 "${victims[@]}"
wait_end "$killed"
echo "node_kill: ranks of node 1 (pids ${victims[*]}) killed; the job ended ${took_s} s later, exit code $rc"
check "exit code non-zero" test "$rc" -ne 0
check "ended within the 6 s timeout plus 5 s" python3 -c "import sys; sys.exit(float('$took_s') > 11)"
file=$(survivor "$work/out")
check "a results file survived" test -n "$file"
[ -n "$file" ] && check_survivor "$file" 2
finish
