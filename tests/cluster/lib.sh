# Shared by the tests that run on an emulated cluster (tests/cluster/cluster.sh): make one owned
# by this test (removed on exit, and by the next test's sweep should this one be killed), or
# exit 77 (skip) with the reason where namespaces cannot be made here.
#
#   source tests/cluster/lib.sh; cluster_up NODES RATE [SLOTS [cluster.sh up options...]]
# Sets: cluster (the cluster script), cluster_id, cluster_dir, and exports its env (hostfile
# in RSC_HOSTFILE, node names in RSC_NODES, the Open MPI settings).
cluster=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)/cluster.sh

cluster_up() { # nodes rate [slots [options...]]
    local why nodes=$1 rate=$2 slots=${3:-2}
    shift 2
    [ $# -eq 0 ] || shift
    if ! why=$("$cluster" check); then
        echo "SKIP: $why"
        exit 77
    fi
    cluster_dir=$("$cluster" up --nodes "$nodes" --rate "$rate" --slots "$slots" --id auto \
        --owner $$ "$@") ||
        { echo "FAIL: cluster.sh up"; exit 1; }
    cluster_id=$(basename "$cluster_dir")
    trap cluster_down EXIT
    trap 'exit 143' TERM INT # ctest's timeout: still tear down
    # shellcheck disable=SC1091
    source "$cluster_dir/env"
    echo "cluster $cluster_id: $nodes node(s) ($RSC_NODES) at $rate, subnet $RSC_SUBNET"
}
# On exit: the test's own cleanup first (a function `cluster_before_down`, if it defines one:
# stop daemons, print logs), then the cluster goes.
cluster_down() {
    local rc=$?
    if declare -F cluster_before_down >/dev/null; then cluster_before_down "$rc" || true; fi
    "$cluster" down --id "$cluster_id" || true
    exit "$rc"
}

# Node k's name, and the process ids of ringscale ranks running on it.
cluster_node() { echo "rsc${cluster_id}n$1"; }
cluster_rank_pids() { # k ringscale-path
    local pid
    for pid in $(ip netns pids "$(cluster_node "$1")"); do
        [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$2")" ] && echo "$pid"
    done
}
