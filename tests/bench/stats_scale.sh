#!/usr/bin/env bash
# Benchmark (not a timed test): ringscale-stats summary over 1,000 results files holding one
# million samples in all (1,000 time_s values per file: iterations x ranks).
# usage: tests/bench/stats_scale.sh [BUILD_DIR] [FILES] [SAMPLES_PER_FILE]
set -euo pipefail
build="${1:-build}"
files="${2:-1000}"
samples="${3:-1000}"
dir="$(mktemp -d /tmp/ringscale_stats_scale.XXXXXX)"
trap 'rm -rf "$dir"' EXIT

cmake --build "$build" -j2 --target ringscale-stats bench_gen_results >/dev/null
echo "generating $files files x $samples samples in $dir"
"$build/tests/bench_gen_results" --out "$dir" --files "$files" --samples "$samples" --ps 1,2,4,8
du -sh "$dir" | sed 's/^/size: /'
sync
echo "timing: ringscale-stats summary $dir"
for run in 1 2 3; do
    start=$(date +%s.%N)
    "$build/analysis/ringscale-stats" summary "$dir" >"$dir.out"
    end=$(date +%s.%N)
    echo "run $run: $(echo "$end - $start" | bc) s"
done
head -5 "$dir.out"
rm -f "$dir.out"
