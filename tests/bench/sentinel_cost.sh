#!/usr/bin/env bash
# What the drift sentinel costs (jobs/MEASUREMENTS.md: about 1% of a launch; none on a launch under 1 s). Runs one study
# launch (the attention cases of tests/bench/predict.sh at np=2, about a minute on 2 cores)
# ROUNDS times with the sentinel on (--sentinel 0, auto) and off (--sentinel -1), interleaved,
# and prints, per launch with it on, the launcher's own account (its probes' seconds over the
# launch's) and, per pair, the wall times on and off.
#
# usage: tests/bench/sentinel_cost.sh [BUILD_DIR] [OUT_DIR] [ROUNDS]
set -euo pipefail
build="${1:-build}"
out="${2:-$(mktemp -d /tmp/ringscale_sentinel.XXXXXX)}"
rounds="${3:-2}"
ringscale="$build/src/ringscale"
[[ -x "$ringscale" ]] || { echo "sentinel_cost.sh: $ringscale not built" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
seqs=512,1K,2K,4K # SMALL=1 in the environment: 512,1K (for a busy machine)
[[ "${SMALL:-0}" == 1 ]] && seqs=512,1K
study=(--job ring_attention,context_parallel --variant allgather,ulysses,hybrid
    --seq-len "$seqs" --heads 8 --kv-heads 4 --head-dim 64 --causal 1 --layout zigzag
    --pass fwd+bwd --warmup 2 --iters 8 --validate off)

# launch SENTINEL LOG: one launch; prints its wall seconds.
launch() {
    local t0 t1
    t0=$(date +%s.%N)
    mpirun --oversubscribe --bind-to none -np 2 "$ringscale" "${study[@]}" --sentinel "$1" \
        -o "$out/" >"$2" 2>&1 || { echo "sentinel_cost.sh: launch failed:" >&2; tail -5 "$2" >&2; exit 1; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; results in $out"
for r in $(seq 1 "$rounds"); do
    on=$(launch 0 "$out/on_$r.log")
    off=$(launch -1 "$out/off_$r.log")
    echo "round $r: wall with the sentinel ${on} s, without ${off} s"
    grep '^# sentinel:' "$out/on_$r.log"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
