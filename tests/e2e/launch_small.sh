#!/usr/bin/env bash
# A small real launch whose file the schema tests read. usage: launch_small.sh RINGSCALE MPIEXEC OUT.h5
set -eu
mkdir -p "$(dirname "$3")"
rm -f "$3" "$3.part"
"$2" -q -np 2 --oversubscribe "$1" --op allreduce,alltoall,broadcast -b 1K -e 64K -f 8 -n 4 -w 2 \
    -o "$3" | tee "$3.log"
tail -n 1 "$3.log" | grep -qx "results: $3"
