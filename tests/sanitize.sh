#!/usr/bin/env bash
# The test suite under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer:
# a CPU build (-DRINGSCALE_ENABLE_CUDA=OFF; the CUDA runtime does not run under ASan)
# into BUILD_DIR, then ctest with the sanitizers set to stop at the first error. Run by hand;
# too slow for CI's budget.
#
# usage: tests/sanitize.sh [LABEL ...] [-- CTEST_ARGS ...]
#   LABEL: ctest labels to run (unit, mpi, np1, np2, np4, e2e, faults, lint); none: the full
#   suite but slurm (needs root and a daemon). Environment: BUILD_DIR (default build-asan in
#   the repository), JOBS (default 2), BUILD_TARGETS (default: every target; the programs and
#   the tools the hostile tests use are `ringscale ringscale-stats fuzz_replay resume_agrees
#   bench_gen_results bench_gen_readme_study`).
#   Full suite:          bash tests/sanitize.sh
#   MPI, e2e and faults: bash tests/sanitize.sh mpi e2e faults
#   Hostile input:       BUILD_TARGETS="ringscale ringscale-stats fuzz_replay resume_agrees \
#                          bench_gen_results bench_gen_readme_study" \
#                        bash tests/sanitize.sh e2e -- -R hostile -E '^cluster_'
#
# Leaks are checked. tests/lsan_openmpi.supp suppresses only allocations made inside Open MPI
# and its libraries (libmpi, libopen-pal, libopen-rte, libhwloc, libpmix), which keep memory
# from MPI_Init to exit by design; a leak in our code is still an error. The environment
# reaches every rank through mpiexec and every child (the launcher's --resume probe,
# ringscale-stats' file probe).
set -euo pipefail
repo=$(cd -- "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build-asan}
jobs=${JOBS:-2}
labels=()
while (($#)) && [[ $1 != -- ]]; do
    labels+=("$1")
    shift
done
[[ ${1:-} == -- ]] && shift
# A build that overlaps a change of the source tree (a merge, a checkout) can link objects
# compiled from two versions of one header: the ODR violation gives wrong values with no
# sanitizer report (cli_options read at the wrong offset made the report test draw no heatmap).
tree_state() {
    git -C "$repo" rev-parse HEAD 2>/dev/null
    git -C "$repo" status --porcelain 2>/dev/null
    git -C "$repo" diff HEAD 2>/dev/null | cksum # edits to an already modified file
}
before=$(tree_state)
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$repo" -B "$build" -DRINGSCALE_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$jobs" "${targets[@]}"
if [[ $(tree_state) != "$before" ]]; then
    echo "sanitize.sh: the source tree changed during the build; run again on a still tree" >&2
    exit 2
fi
# handle_segv=0: a SIGSEGV still ends the process as a signal (the file probes and their tests
# rely on seeing the signal; ASan would otherwise turn it into exit 1).
# fast_unwind_on_malloc=0: Open MPI's libraries have no frame pointers, so the fast unwinder
# stops at the first frame and the suppressions, which match a library anywhere in the
# allocation's stack, would never see them.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:handle_segv=0:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$repo/tests/lsan_openmpi.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Tells the hostile-file scripts to drop their `ulimit -v` cap (ASan reserves terabytes).
export RINGSCALE_ASAN=1
select=(-LE '^slurm$')
if ((${#labels[@]})); then
    select=(-L "^($(
        IFS='|'
        echo "${labels[*]}"
    ))\$" -LE '^slurm$')
fi
ctest --test-dir "$build" -j"$jobs" "${select[@]}" --output-on-failure --timeout 900 "$@"
