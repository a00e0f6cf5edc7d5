#!/usr/bin/env bash
# The emulated cluster itself (cluster.sh): `up` twice keeps one cluster, each node has its
# own hostname and address, a TCP stream between two nodes runs at the shaped rate (tbf's
# accuracy here: goodput over the rate, TCP/IP headers are about 4.4% of a 1500-byte frame),
# a link set down carries nothing and comes back, a cluster whose owner was killed is removed
# by the next sweep, and `down` twice is fine. Skips (77) without namespaces.
# usage: lifecycle.sh   (as root)
set -uo pipefail
here=$(cd -- "$(dirname -- "$0")" && pwd)
cluster=$here/cluster.sh
fail=0
check() { # what, command...
    local what=$1
    shift
    if "$@"; then echo "  ok: $what"; else echo "  FAIL: $what"; fail=1; fi
}
why=$("$cluster" check) || { echo "SKIP: $why"; exit 77; }

# The owner: a sleeping child, killed with -9 below to play a test that died without cleanup.
sleep 300 &
owner=$!
trap '"$cluster" down --id "$id" >/dev/null 2>&1; kill "$owner" 2>/dev/null' EXIT
dir=$("$cluster" up --nodes 2 --rate 200mbit --id auto --owner "$owner") || exit 1
id=$(basename "$dir")
nodes() { ip netns list | grep -cE "^rsc${id}n[0-9]+( |$)"; }
links() { ip -o link show | grep -cE ": rsc${id}(br|v[0-9]+)[:@]"; }
echo "cluster $id at $dir"

check "up twice keeps the same cluster" \
    test "$("$cluster" up --nodes 2 --rate 200mbit --id "$id" --owner "$owner")" = "$dir"
check "two nodes, a bridge and two ports" test "$(nodes) $(links)" = "2 3"
check "hostfile lists both nodes" \
    test "$(cat "$dir/hostfile")" = "$(printf 'rsc%sn0 slots=2\nrsc%sn1 slots=2' "$id" "$id")"
check "node 1 has its own hostname" test "$("$cluster" exec "$id" 1 hostname)" = "rsc${id}n1"
check "the agent runs a command line on a node" \
    test "$("$dir/agent" "rsc${id}n0" 'echo $(hostname)' on)" = "rsc${id}n0 on"
check "this namespace keeps its hostname" test "$(hostname)" != "rsc${id}n1"
check "node 0's address" bash -c "'$cluster' exec $id 0 ip -4 -o addr show dev eth0 | grep -q ' 10.213.$id.10/24'"

out=$("$cluster" bw "$id" 0 1 2)
mbit=${out%% *}
echo "  stream node 0 -> node 1 at 200mbit: $out"
check "the stream runs at 0.90..1.0 of the shaped rate" \
    python3 -c "import sys; sys.exit(not 180 <= float('$mbit') <= 200)"

"$cluster" link "$id" 1 down
check "a link set down carries nothing" bash -c "! timeout 3 '$cluster' bw $id 0 1 1 >/dev/null 2>&1"
"$cluster" link "$id" 1 up
sleep 0.5
check "and carries again once up" bash -c "'$cluster' bw $id 0 1 1 >/dev/null"

kill -9 "$owner"
wait "$owner" 2>/dev/null
"$cluster" sweep 2>&1 | sed 's/^/  /'
check "the sweep removed the cluster of a killed owner" test "$(nodes) $(links)" = "0 0"
check "its state is gone" test ! -e "$dir"
check "down of an absent cluster is fine" "$cluster" down --id "$id"
check "down twice is fine" "$cluster" down --id "$id"
check "bad input: one line, exit 2" \
    bash -c "'$cluster' up --nodes 0 2>&1 >/dev/null | wc -l | grep -qx 1; test \${PIPESTATUS[0]} -eq 2"
[ "$fail" -eq 0 ] && echo passed
exit "$fail"
