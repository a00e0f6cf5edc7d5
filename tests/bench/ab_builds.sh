#!/usr/bin/env bash
# Benchmark (run by hand, not a test): the same launch from two builds, alternated round by
# round so that a shared machine's drift falls on both alike, then ringscale-stats compare
# (B against A, every case, launches as replicates). For "CPU speed unchanged" across a
# restructuring: build the old commit into one directory and the new one into another.
# usage: tests/bench/ab_builds.sh BUILD_A BUILD_B ROUNDS NP -- RINGSCALE_ARGS...
#   e.g. tests/bench/ab_builds.sh /tmp/old/build build 4 2 -- --job ring_attention \
#        --seq-len 8K --heads 8 --head-dim 64 --causal 1 --pass fwd+bwd --layout zigzag
# Prints each launch's wall time and compare's table; the results stay in $OUT (default: a
# temporary directory, removed unless KEEP=1).
set -euo pipefail
[ $# -ge 5 ] && [ "$5" = "--" ] || {
    echo "usage: $0 BUILD_A BUILD_B ROUNDS NP -- RINGSCALE_ARGS..." >&2
    exit 2
}
a=$1 b=$2 rounds=$3 np=$4
shift 5
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${OUT:-$(mktemp -d /tmp/ringscale_ab.XXXXXX)}
mkdir -p "$out/a" "$out/b"
[ "${KEEP:-0}" = 1 ] || [ -n "${OUT:-}" ] || trap 'rm -rf "$out"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
    for side in a b; do
        build=$a
        [ $side = b ] && build=$b
        start=$(date +%s.%N) load0=$(cut -d' ' -f1 /proc/loadavg)
        mpirun -q --oversubscribe --bind-to none -np "$np" "$build/src/ringscale" "$@" \
            -o "$out/$side/r$r.h5" >/dev/null
        printf 'round %d %s: %.1f s wall, load %s -> %s\n' "$r" "$side" \
            "$(echo "$(date +%s.%N) - $start" | bc)" "$load0" "$(cut -d' ' -f1 /proc/loadavg)"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$b/analysis/ringscale-stats" compare "$out/a" "$out/b" || true # exit 1 (a regression) is shown
