#!/usr/bin/env bash
# Runs the single-rank CPU attention kernel benchmark; builds nothing.
# Build first:  cmake --build build --target bench_attention_kernel
# usage: tests/bench/attention_kernel.sh [build_dir] [seq heads head_dim threads iters q_tile k_tile gemm_n]
set -euo pipefail
build=${1:-build}
shift || true
exe="$build/tests/bench_attention_kernel"
if [[ ! -x "$exe" ]]; then
    echo "attention_kernel.sh: $exe not found; build target bench_attention_kernel first" >&2
    exit 2
fi
# Default: every core this process may use, for both the kernel and the sgemm baseline.
exec "$exe" "$@"
