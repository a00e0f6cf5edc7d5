#!/usr/bin/env bash
# How well does `ringscale-stats predict` carry a calibration on one node to several? On an
# emulated cluster (tests/cluster/cluster.sh: 4 network-namespace nodes, links shaped to RATE),
# calibrate on one node: attention (ring, all-gather, Ulysses, hybrid) and train_step
# (ddp, zero1, fsdp) at P = 1 and 2 and the collectives at P = 2 all on node 1, plus the one
# figure a single node cannot measure, the link between nodes: the collectives on 2 nodes x 1
# rank and 2 nodes x LINK_RANKS ranks (two-host link tests, as nccl-tests would be run before a
# large job; the two tell how a node's ranks share its link), there also a sendrecv with every
# rank crossing at once (--shift node: the load of a hybrid's ring hops). Then predict the
# same attention and train_step cases measured on 2 nodes x 2 ranks and 4 nodes x 2 ranks, and
# the collectives there too (what each scheme's exchanges cost across nodes, to tell a link
# model that is off from a scheme's composition that is).
# Goal: within 25%. Run by hand, as root (it skips, 77, without namespaces).
#
# Limit of the emulation: the nodes share this machine's cores. A node records all of them
# as its own, so on 4 nodes x 2 ranks the model gives each rank a core while 8 ranks share
# the machine's; the script prints the cores and the load so the figures can be read with it.
#
# usage: tests/bench/predict_nodes.sh [BUILD_DIR] [OUT_DIR] [RATE] [LINK_RANKS]
#   RATE default 300mbit; LINK_RANKS (1 or 2, default 2): ranks per node in the second link
#   test (with 2, the link is also measured as loaded as the jobs load it: every rank of a node
#   on it; with 1, only one link test, and the calibration knows nothing of link sharing)
set -euo pipefail
build="${1:-build}"
work="${2:-$(mktemp -d /tmp/ringscale_predict_nodes.XXXXXX)}"
rate="${3:-300mbit}"
link_ranks="${4:-2}" # ranks per node in the link test
ringscale=$(readlink -f "$build/src/ringscale")
stats=$(readlink -f "$build/analysis/ringscale-stats")
for b in "$ringscale" "$stats"; do
    [[ -x "$b" ]] || { echo "predict_nodes.sh: $b not built" >&2; exit 2; }
done
source "$(dirname -- "$0")/../cluster/lib.sh"
rm -rf "$work" && mkdir -p "$work/calib" "$work/nodes2" "$work/nodes4" "$work/coll2" "$work/coll4"
cluster_up 4 "$rate"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
# Waiting ranks yield their core, so the ranks that talk get the CPU TCP needs.
export OMPI_MCA_mpi_yield_when_idle=1

# The cases: attention whose exchanges weigh against its compute at this link rate, a small
# transformer whose gradients (about 8 MB) cross the link every step, one thread per rank.
attention=(--job ring_attention,context_parallel --variant allgather,ulysses,hybrid
    --ulysses-placement node,across --seq-len 1K --batch 4 --heads 8 --kv-heads 8 --head-dim 64
    --causal 1 --layout zigzag
    --pass fwd --threads 1 -w 1 -n 5 --timeout 120)
train=(--job train_step --layers 2 --hidden 256 --heads 4 --vocab 1024 --train-seq-len 256
    --tokens 2048 --dp-variant ddp,zero1,fsdp --prefetch on --threads 1 -w 1 -n 5 --timeout 120)
# The link tests reach 16 MiB, the sizes the cases exchange (the gathered K/V, the gradients):
# beyond the largest size measured the shared-link congestion is only held, not known. They
# time the nonblocking all-gather and reduce-scatter too, as the all-gather scheme and FSDP
# call them (Open MPI runs them with other algorithms than the blocking calls).
collectives=(--job collectives
    --op allreduce,allgather,reduce_scatter,alltoall,sendrecv,iallgather,ireduce_scatter -b 64K -e 16M -f 4 -w 2 -n 8 --timeout 120)
# The sendrecv whose every rank sends to the next node at once, as a hybrid's ring hops do.
shifted=(--job collectives --op sendrecv --shift node -b 64K -e 16M -f 4 -w 2 -n 8 --timeout 120)

# launch NODES NP OUT ARGS...: one mpirun on the first NODES nodes, filled in order.
launch() {
    local nodes=$1 np=$2 out=$3
    shift 3
    head -n "$nodes" "$RSC_HOSTFILE" >"$work/hosts$nodes"
    local map=slot
    [[ "$np" == "$nodes" ]] && map=node
    "$mpiexec" -q --hostfile "$work/hosts$nodes" -np "$np" --map-by "$map" --bind-to none \
        "$ringscale" "$@" --validate off -o "$out" >"$out.log" 2>&1 || {
        echo "predict_nodes.sh: launch failed ($nodes nodes, np=$np):" >&2
        tail -5 "$out.log" >&2
        exit 1
    }
}
mpiexec=$(command -v mpirun)

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; results in $work"
start=$SECONDS
launch 1 2 "$work/calib/collectives_1node.h5" "${collectives[@]}"
launch 2 2 "$work/calib/link_2x1.h5" "${collectives[@]}"
if [[ "$link_ranks" != 1 ]]; then
    launch 2 $((2 * link_ranks)) "$work/calib/link_2x$link_ranks.h5" "${collectives[@]}"
    launch 2 $((2 * link_ranks)) "$work/calib/link_2x${link_ranks}_shift.h5" "${shifted[@]}"
fi
for np in 1 2; do # on one node, placement across is refused (it would mean nothing there)
    launch 1 "$np" "$work/calib/attention_np$np.h5" "${attention[@]/#node,across/node}"
    launch 1 "$np" "$work/calib/train_np$np.h5" "${train[@]}"
done
echo "calibration launches took $((SECONDS - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
for nodes in 2 4; do
    launch "$nodes" $((2 * nodes)) "$work/nodes$nodes/attention.h5" "${attention[@]}"
    launch "$nodes" $((2 * nodes)) "$work/nodes$nodes/train.h5" "${train[@]}"
    launch "$nodes" $((2 * nodes)) "$work/coll$nodes/collectives.h5" "${collectives[@]}"
    launch "$nodes" $((2 * nodes)) "$work/coll$nodes/shifted.h5" "${shifted[@]}"
done
echo "all launches took $((SECONDS - start)) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "packets the links dropped: $("$cluster" drops "$cluster_id") (0: the emulated fabric stayed lossless)"

"$stats" predict "$work/calib" 2>"$work/figures.err" | sed -n '/^figures:/,/^$/p'
for nodes in 2 4; do
    echo "\$ ringscale-stats predict $work/calib --validate $work/nodes$nodes"
    "$stats" predict "$work/calib" --validate "$work/nodes$nodes" 2>"$work/predict$nodes.err" |
        sed -n '/^validation:/,/^$/p;$p'
    echo "\$ ringscale-stats predict $work/calib --validate $work/coll$nodes"
    "$stats" predict "$work/calib" --validate "$work/coll$nodes" \
        2>"$work/collectives$nodes.err" | sed -n '/^validation:/,/^$/p;$p'
done
