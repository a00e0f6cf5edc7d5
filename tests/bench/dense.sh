#!/usr/bin/env bash
# Build and run the dense-layer benchmark: linear forward/backward GFLOP/s vs bare cblas_sgemm
# on the training step's default MLP shapes, same run, same BLAS threads.
#   tests/bench/dense.sh [bench_dense options, e.g. --threads 2 --reps 15]
# BUILD_DIR (default: build) is configured with CUDA off if it does not exist yet.
set -euo pipefail
root="$(cd -- "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" -DRINGSCALE_ENABLE_CUDA=OFF
fi
cmake --build "$build" -j2 --target bench_dense
# The thread count is set inside the benchmark (openblas_set_num_threads); keep OpenBLAS from
# reading a conflicting value first.
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS
exec "$build/tests/bench_dense" --tokens 4096 --hidden 512 --threads 2 "$@"
