#!/usr/bin/env bash
# Benchmark (run by hand, as root; not a test): the training step's data-parallel
# communication over real links. Two builds' train_step, alternated launch by launch, on an
# emulated cluster of 2 nodes x 1 rank (tests/cluster/cluster.sh: network namespaces, each
# node's link shaped to RATE), one thread a rank, the model of train_step_vs_torch.sh (4
# layers, hidden 512, seq 256, 2048 tokens a step, 13.65 M parameters: a 54.6 MB gradient).
# Every launch's line: round, variant, bucket size, build, the load before it, the step (the
# median over 5 timed steps of the slowest rank) and the exposed communication's share.
# The nodes share this machine's cores; run it with nothing else running.
# usage: tests/bench/train_step_links.sh OLD_BUILD NEW_BUILD [ROUNDS] [RATE] [VARIANTS] [BUCKETS_MB]
#   defaults: 4 rounds, 1gbit, "ddp zero1", "25 4"
set -euo pipefail
old=$1 new=$2 rounds=${3:-4} rate=${4:-1gbit} variants=${5:-ddp zero1} buckets=${6:-25 4}
for b in "$old" "$new"; do
    [ -x "$b/src/ringscale" ] || { echo "train_step_links.sh: no $b/src/ringscale" >&2; exit 2; }
done
here=$(cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=../cluster/lib.sh
source "$here/../cluster/lib.sh"
work=$(mktemp -d)
cluster_before_down() { rm -rf "$work"; }
cluster_up 2 "$rate" 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
for r in $(seq 1 "$rounds"); do
    for variant in $variants; do
        for mb in $buckets; do
            for name in old new; do
                b=$old
                [ "$name" = old ] || b=$new
                load=$(cut -d' ' -f1 /proc/loadavg)
                mpirun -q --hostfile "$RSC_HOSTFILE" -np 2 \
                    --map-by node --bind-to none "$b/src/ringscale" --job train_step \
                    --dp-variant "$variant" --train-seq-len 256 --tokens 2048 -n 5 -w 1 \
                    --validate off --threads 1 --bucket-mb "$mb" -o "$work/" >"$work/log" 2>&1 ||
                    { cat "$work/log"; exit 1; }
                # The table's row: ... time (value and unit), comm%, check.
                row=$(grep -E "^ +$variant " "$work/log" | head -1)
                echo "round $r $variant bucket ${mb} MiB $name load $load: step" \
                    "$(awk '{print $(NF-3), $(NF-2)}' <<<"$row"), exposed communication" \
                    "$(awk '{print $(NF-1)}' <<<"$row")%"
            done
        done
    done
done
