#!/usr/bin/env bash
# A/A false-positive rate and detection rate of `ringscale-stats compare` on real launches
# of this machine. For each workload, LAUNCHES identical launches at np=2, each
# rank bound to its own core (BIND, default core) with one thread, workloads interleaved:
#   collectives  --job collectives --op allreduce,sendrecv -b 1M -e 4M -f 4 -w 2 -n 20
#                (shared-memory transfers: the noisiest thing this machine runs)
#   attention    --job ring_attention --seq-len 2K --heads 4 -w 3 -n 30 --validate off
#                (compute-bound)
# then tests/bench/aa_compare.py compares them: A/A with one launch per side (every pair:
# never a regression), A/A with three launches per side (TRIALS random disjoint splits),
# and the same splits with NEW slowed down by 10% (copies of its files, times x 1.10).
# Goals: A/A false positives <= 5%, detection >= 90% of trials. A trial counts as a false
# positive / a detection when compare exits 1 (a regression called). compare's own estimate
# of the smallest change these launches can detect with 90% power is printed beside the
# rates: where launch-to-launch noise is larger than about 2.5%, 3 launches per side cannot
# see 10% (Welch on 3 vs 3 launch medians needs 10% >= 4.3 standard errors).
# Last, the same statistics on synthetic launches (bench_gen_results, 3% launch noise).
# The launches run at niceness NICE (default 0; e.g. NICE=-10 as root on a shared machine);
# the load average is printed before and after. Run it on an otherwise idle machine.
# usage: tests/bench/aa_compare.sh [BUILD_DIR] [LAUNCHES] [TRIALS]   (under a minute on this 2-core machine)
#        WORKLOADS="attention" tests/bench/aa_compare.sh ...        (one workload)
set -euo pipefail
build=${1:-build} launches=${2:-8} trials=${3:-28}
nice=${NICE:-0} bind=${BIND:-core} workloads=${WORKLOADS:-collectives attention}
here=$(cd -- "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A args=(
    [collectives]="--job collectives --op allreduce,sendrecv -b 1M -e 4M -f 4 -w 2 -n 20"
    [attention]="--job ring_attention --seq-len 2K --heads 4 -w 3 -n 30 --validate off")
echo "# $launches launches per workload ($workloads) at np=2, --bind-to $bind, 1 thread per" \
    "rank; $(nproc) cores, nice $nice, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
for i in $(seq -w 1 "$launches"); do
    for w in $workloads; do
        mkdir -p "$work/$w"
        # shellcheck disable=SC2086
        nice -n "$nice" mpirun -q -np 2 --bind-to "$bind" "$build/src/ringscale" ${args[$w]} \
            --threads 1 -o "$work/$w/L$i.h5" >/dev/null 2>&1
    done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) after the launches"
"$build/tests/bench_gen_results" --out "$work/synthetic" --files $((6 * trials)) --ps 2 \
    --samples 40 --noise 0.03 --seed 13
status=0
for w in $workloads; do
    echo "## $w: ${args[$w]}"
    /usr/bin/python3 "$here/aa_compare.py" "$build/analysis/ringscale-stats" "$work/$w" \
        "$work" "$trials" || status=1
done
echo "## synthetic: 3-vs-3 trials of bench_gen_results files with 3% launch noise"
/usr/bin/python3 "$here/aa_compare.py" "$build/analysis/ringscale-stats" "$work/synthetic" \
    "$work" "$trials" synthetic
exit $status
