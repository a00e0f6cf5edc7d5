#!/usr/bin/env bash
# ringscale's collectives job against a plain MPI program doing the same operation, side by
# side in one run at np=2 for 1 MiB and 16 MiB (allreduce out of place and in place, sendrecv).
# Rounds alternate the two programs so machine noise hits both alike; the median busbw over
# rounds is compared. allreduce_inplace is ringscale's --inplace 1 against
# MPI_Allreduce(MPI_IN_PLACE).
# Target: ringscale busbw >= 0.95 x plain MPI.
# usage: tests/bench/collectives_vs_mpi.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build} rounds=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpi=(mpirun -q -np 2 --oversubscribe --bind-to core)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "# np=2, warmup 5, iters 50, rounds $rounds; busbw in GB/s (median over rounds)"
printf "%-10s %9s %12s %12s %7s\n" op bytes ringscale plain_mpi ratio
status=0
for op in allreduce allreduce_inplace sendrecv; do
    job_op=${op%_inplace} inplace=0
    [ "$op" = "$job_op" ] || inplace=1
    for bytes in 1048576 16777216; do
        : >"$work/rs" && : >"$work/mpi"
        for r in $(seq "$rounds"); do
            # Columns: op size(B) count placement algbw busbw ...
            "${mpi[@]}" "$build/src/ringscale" --op "$job_op" --inplace "$inplace" -b "$bytes" \
                -e "$bytes" -w 5 -n 50 -o "$work/r$r-$op-$bytes.h5" |
                awk -v op="$job_op" '$1 == op {print $6}' >>"$work/rs"
            "${mpi[@]}" "$build/tests/bench_plain_mpi" "$op" "$bytes" 5 50 | awk '{print $3}' >>"$work/mpi"
        done
        rs=$(median <"$work/rs") pm=$(median <"$work/mpi")
        ratio=$(awk -v a="$rs" -v b="$pm" 'BEGIN {printf "%.3f", a / b}')
        printf "%-10s %9s %12s %12s %7s\n" "$op" "$bytes" "$rs" "$pm" "$ratio"
        awk -v r="$ratio" 'BEGIN {exit !(r >= 0.95)}' || status=1
    done
done
[ $status -eq 0 ] && echo "target met: ringscale >= 0.95 x plain MPI" || echo "target NOT met"
exit $status
