#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer (issue 17): a CPU
# build (-DRINGSCALE_ENABLE_CUDA=OFF; the CUDA runtime does not run under ASan) into
# BUILD_DIR, then ctest with the sanitizers set to stop at the first error. Run by hand (about
# 20 minutes on 2 cores); too slow for CI's budget.
# usage: tests/sanitize.sh [BUILD_DIR=build-asan] [extra ctest args, e.g. -L unit]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build-asan}
shift || true
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$repo" -B "$build" -DRINGSCALE_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"$(nproc)"
# Open MPI's own allocations are reported as leaks at exit: leak checking is off, every
# other error ends the test that hit it. The slurm label needs root and a daemon: left out.
# handle_segv=0: a SIGSEGV still ends the process as a signal (the reader's file probe and its
# test rely on seeing the signal; ASan would otherwise turn it into exit 1).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0:handle_segv=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" -j"$(nproc)" -LE slurm --output-on-failure --timeout 900 "$@"
