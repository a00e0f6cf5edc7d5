#!/usr/bin/env bash
# The reader's fuzz target (fuzz_reader_target.cpp) as a libFuzzer binary, with AddressSanitizer
# and UBSan, seeded with the checked-in corpus: by hand (needs clang: apt-get install clang).
# usage: tests/hostile/libfuzzer.sh [SECONDS=60] [SEED.h5 ...]
#   Environment: BUILD_DIR (default build-fuzz in the repository), JOBS (default 2).
# A crash is written by libFuzzer as crash-<hash> in the current directory; add the file to
# tests/data/hostile/ once the reader handles it (fuzz_replay then replays it in CI).
set -euo pipefail
repo=$(cd -- "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$repo/build-fuzz}
seconds=${1:-60}
shift || true
command -v clang++ >/dev/null || { echo "libfuzzer.sh: clang++ not found (apt-get install clang)" >&2; exit 2; }
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -DRINGSCALE_ENABLE_CUDA=OFF \
    -DRINGSCALE_LIBFUZZER=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_reader_libfuzzer
corpus=$build/fuzz_corpus
mkdir -p "$corpus"
cp "$repo"/tests/data/hostile/*.h5 "$@" "$corpus"/ 2>/dev/null || true
# The probe child's own reports (a file that crashes HDF5) are not findings: only the parent's.
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0
"$build"/tests/fuzz_reader_libfuzzer -max_total_time="$seconds" -rss_limit_mb=4096 "$corpus"
