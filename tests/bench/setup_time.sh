#!/usr/bin/env bash
# Benchmark (run by hand, not a test): how long the README's set-up commands take on a clean
# clone, for one or more commits (issue 40: command 1 should build only what the study needs).
# For each commit: a fresh clone, ccache off, then the build part of README command 1 as that
# commit's README writes it (configure and `cmake --build ...`, without install-deps and the
# study), timed; then how many objects it compiled, and with ALL=1 the rest of the tree (the
# build of README command 2) timed on top of it.
# usage: tests/bench/setup_time.sh COMMIT...        (e.g. f635a76 HEAD)
#        ALL=1 tests/bench/setup_time.sh COMMIT...  (also the full build, command 2's)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 COMMIT..." >&2; exit 2; }
repo="$(git rev-parse --show-toplevel)"
export CCACHE_DISABLE=1
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for commit in "$@"; do
    sha="$(git -C "$repo" rev-parse --short "$commit^{commit}")"
    dir="$(mktemp -d /tmp/ringscale_setup.XXXXXX)"
    git clone -q --no-hardlinks "$repo" "$dir/src"
    git -C "$dir/src" checkout -q "$sha"
    # README command 1's build: the first fenced line's cmake steps, with its own targets.
    line="$(awk '/^```bash/{getline; print; exit}' "$dir/src/README.md")"
    build_cmd="$(echo "$line" | grep -oE 'cmake --build build[^&]*' | head -1)"
    [ -n "$build_cmd" ] || { echo "$sha: no cmake --build in README command 1" >&2; exit 1; }
    cd "$dir/src"
    start=$(date +%s.%N)
    cmake -S . -B build >/dev/null
    eval "$build_cmd" >"$dir/build1.log" 2>&1
    end=$(date +%s.%N)
    objects=$(find build -name '*.o' | wc -l)
    printf '%s command 1: %.0f s, %d objects (%s)\n' "$sha" "$(echo "$end - $start" | bc)" \
        "$objects" "$build_cmd"
    if [ "${ALL:-0}" = 1 ]; then
        start=$(date +%s.%N)
        cmake --build build -j"$(nproc)" >"$dir/build2.log" 2>&1
        end=$(date +%s.%N)
        printf '%s rest of command 2: %.0f s more, %d objects in all\n' "$sha" \
            "$(echo "$end - $start" | bc)" "$(find build -name '*.o' | wc -l)"
    fi
    cd "$repo"
    rm -rf "$dir"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
