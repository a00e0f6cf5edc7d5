#!/usr/bin/env bash
# An emulated cluster on this machine: N "nodes", each a network namespace with its own
# hostname, joined by veth pairs to one bridge, each node's link shaped with tc tbf.
#
#   cluster.sh check                      can one be made here? exit 0, or 77 with the reason
#   cluster.sh up [--nodes N] [--rate R] [--slots S] [--id ID|auto] [--owner PID]
#                 [--private-tmp [--share-tmp DIR]...]
#                                         create (or keep) cluster ID; prints its state dir
#   cluster.sh down [--id ID]             tear it down (processes in its nodes killed)
#   cluster.sh exec ID NODE CMD...        run CMD on node NODE (0..N-1 or its name)
#   cluster.sh link ID NODE up|down       set a node's link up or down (a cable pull)
#   cluster.sh shape ID NODE RATE         reshape one node's link (RATE 0: unshaped)
#   cluster.sh bw ID NODE_A NODE_B [S]    TCP throughput A -> B over S seconds (Mbit/s)
#   cluster.sh drops ID                   packets the links' queues dropped since `up`
#   cluster.sh sweep                      remove clusters whose owner process has ended
#   cluster.sh list                       the clusters and their owners
#
# Defaults: --nodes 2, --rate 300mbit (tc units: kbit, mbit, gbit; 0 = unshaped), --id 1
# (auto: the first free id from 101, for tests that may run side by side).
# Cluster ID (1..254) uses the private subnet 10.213.ID.0/24 on bridge rscIDbr (10.213.ID.1,
# in this namespace, so mpirun and slurmctld here reach the nodes); node k is namespace and
# hostname rscIDnk at 10.213.ID.(10+k); traffic never leaves the bridge (no route, no NAT).
# Each node's link is shaped in both directions (tbf on the node's eth0 and on its bridge
# port), like a full-duplex NIC of that rate. The queue is deep (200 ms of the rate), so the
# links do not drop: an HPC fabric is lossless (InfiniBand's credit flow control, RoCE's PFC),
# while a 10 ms queue dropped packets when several ranks sent at once (a 4 MiB all-to-all on
# 2 nodes x 2 ranks: 264 drops) and TCP's 200 ms retransmission timeouts then stalled the
# collective (319 ms against 198 ms lossless). `drops` tells whether a run stayed lossless.
# State lives in /run/ringscale-cluster/ID:
#   hostfile   one line per node, `rscIDnk slots=S` (S: --slots, default 2)
#   env        `export` lines: the Open MPI settings to launch across the nodes (the hostfile
#              as default, rsh agent, oob/btl_tcp_if_include = the subnet, no tree spawn)
#              and RSC_* variables
#   run        `run NODE CMD [ARG]...`: CMD on a node (ip netns exec, own UTS namespace and
#              hostname, own /tmp from tmp/NODE, cgroups mounted again); `cluster.sh exec`
#   tmp/NODE   with --private-tmp, the node's own /tmp, as on a real cluster (Slurm's PMIx
#              plugin needs it: its per-step directory in /tmp has no host name in it);
#              results written under /tmp on a node then stay there; each --share-tmp DIR
#              (a directory under /tmp, e.g. a checkout or build there) stays visible on
#              every node at its own path (listed in shared_tmp)
#   agent      the rsh agent Open MPI runs: `agent NODE CMD-LINE...` (through `run`)
#   owner      PID and start time of the owning process (--owner); `sweep` and every `up`
#              remove clusters whose owner has ended, so a killed test leaves nothing behind
# `up` on an existing ID keeps it when nodes and rate match (idempotent) and rebuilds it
# otherwise; `down` of an absent cluster is fine. Needs root, iproute2 (ip, tc) and unshare.
set -euo pipefail
state_root=/run/ringscale-cluster
prefix=rsc

die() {
    echo "cluster: $*" >&2
    exit 2
}
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"; }

valid_id() { [[ $1 =~ ^[1-9][0-9]{0,2}$ ]] && [ "$1" -le 254 ]; }
node_name() { echo "$prefix$1n$2"; } # id k
node_index() { # id NODE(k or name) -> k
    local id=$1 node=$2
    [[ $node =~ ^[0-9]+$ ]] || node=${node#"$prefix${id}n"}
    [[ $node =~ ^[0-9]+$ ]] && [ -e "/run/netns/$(node_name "$id" "$node")" ] ||
        die "cluster $id has no node '$2'"
    echo "$node"
}
start_time() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; } # pid

# ---- check: can namespaces, veth, a bridge, tbf and a UTS namespace be made here? -----------
check() {
    [ "$(id -u)" -eq 0 ] || { echo "cluster: needs root (network namespaces)"; return 77; }
    local tool
    for tool in ip tc unshare; do
        command -v "$tool" >/dev/null || { echo "cluster: '$tool' not found"; return 77; }
    done
    local ns=${prefix}chk$$ why=""
    if ! ip netns add "$ns" 2>/dev/null; then
        why="cannot create a network namespace"
    elif ! ip link add "${prefix}chk$$" type veth peer name eth0 netns "$ns" 2>/dev/null; then
        why="cannot create a veth pair"
    elif ! tc qdisc add dev "${prefix}chk$$" root tbf rate 100mbit burst 64kb latency 10ms \
        2>/dev/null; then
        why="tc tbf is not available"
    elif ! ip netns exec "$ns" unshare --uts sh -c 'hostname rsc-probe' 2>/dev/null; then
        why="cannot create a UTS namespace inside a network namespace"
    elif ! ip link add "${prefix}chkbr$$" type bridge 2>/dev/null; then
        why="cannot create a bridge"
    fi
    ip link del "${prefix}chkbr$$" 2>/dev/null || true
    ip link del "${prefix}chk$$" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    [ -z "$why" ] || { echo "cluster: $why here"; return 77; }
}

# ---- teardown ---------------------------------------------------------------------------------
# Kill the processes of one namespace (the ranks, orted, slurmd we started there), by id.
kill_netns() { # ns
    local pids sig
    for sig in TERM KILL; do
        pids=$(ip netns pids "$1" 2>/dev/null || true)
        [ -n "$pids" ] || return 0
        # shellcheck disable=SC2086
        kill -s "$sig" $pids 2>/dev/null || true
        for _ in $(seq 30); do
            [ -z "$(ip netns pids "$1" 2>/dev/null)" ] && return 0
            sleep 0.1
        done
    done
}
# Remove everything of cluster ID: node processes, namespaces, links, the state dir last (so
# links without a state dir are always stale).
teardown() { # id
    local id=$1 ns link
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix${id}n[0-9]+$" || true); do
        kill_netns "$ns"
        ip netns del "$ns" 2>/dev/null || true
    done
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
        grep -E "^$prefix${id}(br|v[0-9]+)$" || true); do
        ip link del "$link" 2>/dev/null || true
    done
    rm -rf "${state_root:?}/$id"
}

# Stale: a state dir whose owner has ended (or that never got one within 60 s), and links or
# namespaces of our prefix without a state dir (a run killed mid-create or mid-teardown).
sweep() {
    local dir id pid start ids=""
    mkdir -p "$state_root"
    for dir in "$state_root"/*/; do
        [ -d "$dir" ] || continue
        id=$(basename "$dir")
        if [ -f "$dir/owner" ]; then
            read -r pid start <"$dir/owner" || true
            [ "$pid" = 0 ] && continue # no owner: kept until `down`
            [ "$(start_time "$pid")" = "$start" ] && continue
        elif [ $(($(date +%s) - $(stat -c %Y "$dir"))) -lt 60 ]; then
            continue # being created
        fi
        echo "cluster: removing stale cluster $id (owner ${pid:-none} ended)" >&2
        teardown "$id"
    done
    ids=$( (ip netns list 2>/dev/null | awk '{print $1}'
        ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//') |
        sed -nE "s/^$prefix([0-9]+)(n[0-9]+|br|v[0-9]+)$/\1/p" | sort -u)
    for id in $ids; do
        [ -d "$state_root/$id" ] && continue
        echo "cluster: removing stale links of cluster $id (no state)" >&2
        teardown "$id"
    done
}

# ---- shaping ----------------------------------------------------------------------------------
# tbf on egress; burst at least 64 KiB (a TSO segment) or 4 ms of the rate, queue 200 ms.
shape_dev() { # rate dev [netns]
    local rate=$1 dev=$2 ns=${3:-} tcx=(tc)
    [ -z "$ns" ] || tcx=(tc -n "$ns")
    if [ "$rate" = 0 ]; then
        "${tcx[@]}" qdisc del dev "$dev" root 2>/dev/null || true
        return 0
    fi
    local bits burst
    bits=$(rate_bits "$rate")
    burst=$((bits / 8 / 250))
    [ "$burst" -ge 65536 ] || burst=65536
    "${tcx[@]}" qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 200ms
}
rate_bits() { # 300mbit -> 300000000
    local r=${1,,} n unit
    [[ $r =~ ^([0-9]+)(bit|kbit|mbit|gbit)?$ ]] || return 1
    n=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]:-bit}
    case $unit in
    bit) echo "$n" ;; kbit) echo $((n * 1000)) ;; mbit) echo $((n * 1000000)) ;;
    gbit) echo $((n * 1000000000)) ;;
    esac
}
shape_node() { # id k rate
    shape_dev "$3" eth0 "$(node_name "$1" "$2")"
    shape_dev "$3" "$prefix$1v$2"
}

# ---- up ---------------------------------------------------------------------------------------
write_files() { # id nodes slots rate private_tmp [shared tmp dir]...
    local id=$1 n=$2 slots=$3 rate=$4 private_tmp=$5 dir=$state_root/$1 k names=()
    shift 5
    printf '%s\n' "$@" | grep . >"$dir/shared_tmp" || true
    for ((k = 0; k < n; k++)); do names+=("$(node_name "$id" "$k")"); done
    printf '%s slots='"$slots"'\n' "${names[@]}" >"$dir/hostfile"
    if [ "$private_tmp" = 1 ]; then
        for k in "${names[@]}"; do mkdir -p "$dir/tmp/$k" && chmod 1777 "$dir/tmp/$k"; done
    else
        rm -rf "$dir/tmp"
    fi
    # The cgroup mounts here, to mount again in each node (see `run`).
    awk '{ for (i = 7; i <= NF && $i != "-"; i++); if ($5 ~ "^/sys/fs/cgroup") print $(i+1), $(i+2), $(i+3), $5 }' \
        /proc/self/mountinfo >"$dir/cgroup_mounts"
    cat >"$dir/run" <<RUN
#!/bin/sh
# \`run NODE CMD [ARG]...\`: CMD on node NODE of emulated cluster $id: in its network namespace
# (ip netns exec, which mounts that namespace's sysfs on /sys, so /sys/class/net lists the
# node's own links), in a UTS namespace of its own with the node's hostname, with its own /tmp
# where the cluster was made with --private-tmp ($dir/tmp/NODE), and with this machine's
# cgroup hierarchies mounted again (the new /sys hid them; slurmd needs them).
node=\$1
shift
case \$node in
$prefix${id}n[0-9]*) ;;
*) echo "cluster: '\$node' is not a node of cluster $id" >&2; exit 255 ;;
esac
exec ip netns exec "\$node" unshare --uts /bin/sh -c '
    hostname "\$0" || exit 1
    if [ -d "$dir/tmp/\$0" ]; then
        while read -r keep; do
            mkdir -p "$dir/tmp/\$0/\${keep#/tmp/}" &&
                mount --bind "\$keep" "$dir/tmp/\$0/\${keep#/tmp/}" || exit 1
        done <"$dir/shared_tmp"
        mount --rbind "$dir/tmp/\$0" /tmp || exit 1
    fi
    while read -r fs src opt mp; do
        mkdir -p "\$mp" 2>/dev/null
        mount -t "\$fs" -o "\$opt" "\$src" "\$mp" 2>/dev/null
    done <"$dir/cgroup_mounts"
    exec "\$@"' "\$node" "\$@"
RUN
    cat >"$dir/agent" <<AGENT
#!/bin/sh
# Open MPI's rsh agent for emulated cluster $id: \`agent NODE CMD...\` runs the command line
# CMD... (as ssh would) on node NODE.
node=\$1
shift
exec "$dir/run" "\$node" /bin/sh -c "\$*"
AGENT
    chmod 755 "$dir/run" "$dir/agent"
    cat >"$dir/env" <<ENV
# Emulated cluster $id: $n node(s) at $rate, subnet 10.213.$id.0/24. Source this, then
# mpirun -np P ... runs on the nodes (the hostfile is Open MPI's default).
export RSC_ID=$id RSC_NODES="${names[*]}" RSC_RATE=$rate RSC_SUBNET=10.213.$id.0/24
export RSC_HOSTFILE=$dir/hostfile RSC_AGENT=$dir/agent
export OMPI_MCA_orte_default_hostfile=$dir/hostfile
export OMPI_MCA_plm_rsh_agent=$dir/agent OMPI_MCA_plm_rsh_no_tree_spawn=1
export OMPI_MCA_oob_tcp_if_include=10.213.$id.0/24 OMPI_MCA_btl_tcp_if_include=10.213.$id.0/24
ENV
    echo "$n $rate $slots" >"$dir/spec"
}

up() {
    local n=2 rate=300mbit id=1 owner=0 slots=2 private_tmp=0 shares=()
    while [ $# -gt 0 ]; do
        case $1 in
        --nodes) n=${2:-}; shift 2 || die "--nodes needs a value" ;;
        --rate) rate=${2:-}; shift 2 || die "--rate needs a value" ;;
        --id) id=${2:-}; shift 2 || die "--id needs a value" ;;
        --owner) owner=${2:-}; shift 2 || die "--owner needs a value" ;;
        --slots) slots=${2:-}; shift 2 || die "--slots needs a value" ;;
        --private-tmp) private_tmp=1; shift ;;
        --share-tmp)
            [[ ${2:-} == /tmp/?* && -d ${2:-} && ${2:-} != *$'\n'* ]] ||
                die "--share-tmp: '${2:-}' is not a directory under /tmp"
            shares+=("$2"); shift 2 ;;
        *) die "up: unknown option '$1' (see --help)" ;;
        esac
    done
    [[ $n =~ ^[1-9][0-9]?$ ]] && [ "$n" -le 64 ] || die "--nodes: '$n' is not 1..64"
    [[ $slots =~ ^[1-9][0-9]*$ ]] || die "--slots: '$slots' is not a positive whole number"
    [ "$id" = auto ] || valid_id "$id" || die "--id: '$id' is not 1..254 or auto"
    [ "$rate" = 0 ] || rate_bits "$rate" >/dev/null || die "--rate: '$rate' is not like 300mbit"
    [[ $owner =~ ^[0-9]+$ ]] || die "--owner: '$owner' is not a process id"
    local why
    why=$(check) || { echo "$why" >&2; exit 77; }
    sweep

    local dir=$state_root/$id k ns
    if [ -f "$dir/spec" ] && [ "$(cut -d' ' -f1-2 "$dir/spec")" = "$n $rate" ] &&
        [ "$(ip netns list | grep -cE "^$prefix${id}n[0-9]+( |$)")" -eq "$n" ]; then
        write_files "$id" "$n" "$slots" "$rate" "$private_tmp" "${shares[@]}" # same cluster: keep it
        [ "$owner" = 0 ] && echo "0 0" >"$dir/owner" || echo "$owner $(start_time "$owner")" >"$dir/owner"
        echo "$dir"
        return 0
    fi
    mkdir -p "$state_root"
    if [ "$id" = auto ]; then # the first free id from 101 (tests running side by side)
        for id in $(seq 101 254); do
            ip route show | grep -q "^10\.213\.$id\." && continue
            mkdir "$state_root/$id" 2>/dev/null && break
            id=""
        done
        [ -n "$id" ] || die "no free cluster id in 101..254"
        dir=$state_root/$id
    else
        [ ! -d "$dir" ] || teardown "$id"
        ip route show | grep -q "^10\.213\.$id\." &&
            die "subnet 10.213.$id.0/24 is already routed here; choose another --id"
        mkdir "$dir" 2>/dev/null || die "cluster $id is being created by another process"
    fi
    if [ "$owner" = 0 ]; then echo "0 0" >"$dir/owner"; else echo "$owner $(start_time "$owner")" >"$dir/owner"; fi
    trap 'teardown "$id"; exit 1' ERR INT TERM

    ip link add "$prefix${id}br" type bridge
    ip link set "$prefix${id}br" up
    ip addr add "10.213.$id.1/24" dev "$prefix${id}br"
    for ((k = 0; k < n; k++)); do
        ns=$(node_name "$id" "$k")
        ip netns add "$ns"
        ip link add "$prefix${id}v$k" type veth peer name eth0 netns "$ns"
        ip link set "$prefix${id}v$k" master "$prefix${id}br" up
        ip -n "$ns" addr add "10.213.$id.$((10 + k))/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        shape_node "$id" "$k" "$rate"
    done
    write_files "$id" "$n" "$slots" "$rate" "$private_tmp" "${shares[@]}"
    trap - ERR INT TERM
    echo "$dir"
}

# ---- bw: a TCP stream between two nodes, measured at the receiver -----------------------------
bw() { # id a b [seconds]
    local id=$1 a b s=${4:-3} port=5201
    a=$(node_index "$id" "$2") b=$(node_index "$id" "$3")
    local py=/usr/bin/python3 here
    here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
    ip netns exec "$(node_name "$id" "$b")" "$py" "$here/tcp_stream.py" recv "10.213.$id.$((10 + b))" "$port" &
    local rpid=$!
    ip netns exec "$(node_name "$id" "$a")" "$py" "$here/tcp_stream.py" send "10.213.$id.$((10 + b))" "$port" "$s"
    wait "$rpid"
}

cmd=${1:-}
[ $# -eq 0 ] || shift
case $cmd in
check) check ;;
up) up "$@" ;;
down)
    id=1
    [ "${1:-}" != --id ] || { id=${2:-}; shift 2 || true; }
    valid_id "$id" || die "--id: '$id' is not 1..254"
    [ "$(id -u)" -eq 0 ] || die "needs root"
    teardown "$id"
    ;;
exec)
    [ $# -ge 3 ] || die "usage: exec ID NODE CMD..."
    id=$1 k=$(node_index "$1" "$2")
    shift 2
    exec "$state_root/$id/run" "$(node_name "$id" "$k")" "$@"
    ;;
link)
    [ $# -eq 3 ] && [[ $3 =~ ^(up|down)$ ]] || die "usage: link ID NODE up|down"
    k=$(node_index "$1" "$2")
    ip link set "$prefix$1v$k" "$3"
    ;;
shape)
    [ $# -eq 3 ] || die "usage: shape ID NODE RATE"
    k=$(node_index "$1" "$2")
    [ "$3" = 0 ] || rate_bits "$3" >/dev/null || die "rate '$3' is not like 300mbit"
    shape_node "$1" "$k" "$3"
    ;;
bw)
    [ $# -ge 3 ] || die "usage: bw ID NODE_A NODE_B [SECONDS]"
    bw "$@"
    ;;
drops)
    [ $# -eq 1 ] && valid_id "$1" && [ -f "$state_root/$1/spec" ] || die "usage: drops ID (a cluster)"
    read -r n _ <"$state_root/$1/spec"
    total=0
    for ((k = 0; k < n; k++)); do
        for q in "$(tc -n "$(node_name "$1" "$k")" -s qdisc show dev eth0)" \
            "$(tc -s qdisc show dev "$prefix$1v$k")"; do
            [[ $q =~ dropped\ ([0-9]+) ]] && total=$((total + BASH_REMATCH[1]))
        done
    done
    echo "$total"
    ;;
sweep) sweep ;;
list)
    for dir in "$state_root"/*/; do
        [ -f "$dir/spec" ] || continue
        read -r n rate slots <"$dir/spec"
        read -r pid _ <"$dir/owner"
        echo "cluster $(basename "$dir"): $n node(s) at $rate, owner ${pid/#0/none}, $dir"
    done
    ;;
-h | --help | help) usage ;;
*) die "unknown command '${cmd}' (see --help)" ;;
esac
