#!/usr/bin/env bash
# Attention masks evidence (run by hand, not a test; tests/bench/masks.py summarises):
#  1. block-sparse 50/75/90% (random, block 128) and local+global against dense on the CPU
#     kernels: np=1 on one thread, S=$SPARSE_S, H=4, D=64, non-causal, fwd, ROUNDS
#     interleaved launches (masks.py takes each case's fastest iteration: the machine is shared);
#     targets: speedups >= 0.8x, 0.7x, 0.5x of the ideal 2x, 4x, 10x (the ideal is the
#     exact compute reduction of the pattern drawn, printed beside it).
#  2. sliding window S/8 at P=4 (contiguous, causal, fwd+bwd, S=$WINDOW_S): the ring exchanges
#     only the previous rank's block; bytes sent and exposed communication against the
#     dense causal ring and the all-gather with the same window.
#  3. documents uniform:1K-16K at S=$DOCS_S, P=4: the work imbalance (max/mean visible pairs
#     per rank) with zigzag per document (target <= 1.1) and with contiguous, and the time.
# usage: tests/bench/masks.sh [BUILD_DIR] [ROUNDS] [SECTIONS (default "1 2 3")]
# env: SPARSE_S (default 4K), WINDOW_S (16K), DOCS_S (64K)
set -euo pipefail
build=${1:-build} rounds=${2:-3} sections=${3:-1 2 3}
here=$(cd -- "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sparse_s=${SPARSE_S:-4K} window_s=${WINDOW_S:-16K} docs_s=${DOCS_S:-64K}
rs=("$build/src/ringscale" --head-dim 64 --validate off)

if [[ " $sections " == *" 1 "* ]]; then
echo "== 1. block-sparse against dense: np=1, 1 thread, S=$sparse_s, H=4, non-causal fwd, $rounds rounds"
sparse=(--job ring_attention --seq-len "$sparse_s" --heads 4 --causal 0 --pass fwd
        --layout contiguous --threads 1 -w 1 -n 5)
for r in $(seq "$rounds"); do
    mpirun -q -np 1 --bind-to none "${rs[@]}" "${sparse[@]}" -o "$work/sparse_dense$r.h5" >/dev/null
    mpirun -q -np 1 --bind-to none "${rs[@]}" "${sparse[@]}" --sparsity 0.5,0.75,0.9 \
        -o "$work/sparse_random$r.h5" >/dev/null
    mpirun -q -np 1 --bind-to none "${rs[@]}" "${sparse[@]}" --sparsity 0.5,0.75,0.9 \
        --sparse-pattern local_global -o "$work/sparse_lg$r.h5" >/dev/null
done
/usr/bin/python3 "$here/masks.py" sparse "$work"/sparse_*.h5
fi

if [[ " $sections " == *" 2 "* ]]; then
echo "== 2. sliding window S/8 at P=4: S=$window_s, causal fwd+bwd, contiguous"
win=$((${window_s%K} * 1024 / 8))
wopts=(--seq-len "$window_s" --heads 4 --causal 1 --pass fwd+bwd --layout contiguous -w 1 -n 3)
for r in $(seq "$rounds"); do
    mpirun -q -np 4 --oversubscribe "${rs[@]}" --job ring_attention "${wopts[@]}" \
        --window "$win" -o "$work/window_ring$r.h5" >/dev/null
    mpirun -q -np 4 --oversubscribe "${rs[@]}" --job ring_attention "${wopts[@]}" \
        -o "$work/window_dense$r.h5" >/dev/null
    mpirun -q -np 4 --oversubscribe "${rs[@]}" --job context_parallel --variant allgather \
        "${wopts[@]}" --window "$win" -o "$work/window_allgather$r.h5" >/dev/null
done
/usr/bin/python3 "$here/masks.py" window "$work"/window_*.h5
fi

if [[ " $sections " == *" 3 "* ]]; then
echo "== 3. documents uniform:1K-16K at S=$docs_s, P=4, causal fwd, H=1"
for lay in zigzag contiguous; do
    mpirun -q -np 4 --oversubscribe "${rs[@]}" --job ring_attention --seq-len "$docs_s" \
        --heads 1 --causal 1 --pass fwd --docs uniform:1K-16K --layout "$lay" -w 1 -n 3 \
        -o "$work/docs_$lay.h5" >/dev/null
done
/usr/bin/python3 "$here/masks.py" docs "$work"/docs_*.h5
fi
