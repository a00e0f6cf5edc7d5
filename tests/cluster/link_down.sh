#!/usr/bin/env bash
# A node's link pulled mid-sweep: 2 emulated nodes x 2 ranks, node 1's link set down after two
# cases. The watchdog (--timeout 4) of the ranks on node 0 prints its timeout message and they
# end; the link then comes back (a flap: mpirun, which waits for every node's daemon to confirm
# the abort, would otherwise wait until TCP gives up on node 1, about 15 minutes) and mpirun
# exits 5. The cases completed before stay in a readable file marked incomplete (the checks of
# tests/faults/lib.sh). Skips (77) without namespaces.
# usage: link_down.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR   (as root)
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work/out"
here=$(cd -- "$(dirname -- "$0")" && pwd)
source "$here/lib.sh"
cluster_up 2 1gbit
source "$here/../faults/lib.sh"
sweep=(-b 64K -e 64M -f 2 -w 1 -n 20)
since() { python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.1f}')" "$(date +%s.%N)" "$1"; }
node0_ranks_gone() { # wait up to 12 s after the cut for the watchdog message and node 0's ranks to end
    for _ in $(seq 120); do
        grep -q "timeout after" "$work/stderr" && [ -z "$(cluster_rank_pids 0 "$ringscale")" ] &&
            return 0
        sleep 0.1
    done
    return 1
}

start_launch 4 "$work/out/" --timeout 4
check "two cases completed before the link went down" wait_cases 2
cut=$(date +%s.%N)
"$cluster" link "$cluster_id" 1 down
check "the watchdog fired and node 0's ranks ended within 4 s plus 8 s" node0_ranks_gone
echo "link_down: node 1's link down; node 0's ranks ended $(since "$cut") s later"
grep "timeout after" "$work/stderr" | sed 's/^/  stderr: /'
check "a rank on node 0 named the operation and the case" \
    grep -Eq "^ringscale: rank [01]: timeout after 4 s in [a-z_()]+ \(case [0-9]+\)$" "$work/stderr"
restored=$(date +%s.%N)
"$cluster" link "$cluster_id" 1 up
for _ in $(seq 300); do kill -0 "$launch_pid" 2>/dev/null || break; sleep 0.1; done
kill -9 "$launch_pid" 2>/dev/null # should mpirun not have ended within 30 s
wait_end "$restored"
echo "link_down: link up again; mpirun ended ${took_s} s later, exit code $rc"
check "exit code 5 (watchdog)" test "$rc" -eq 5
check "mpirun ended within 20 s of the link coming back" \
    python3 -c "import sys; sys.exit(float('$took_s') > 20)"
file=$(survivor "$work/out")
check "a results file survived" test -n "$file"
[ -n "$file" ] && check_survivor "$file" 2
finish
