#!/usr/bin/env bash
# Scale of `ringscale-stats history`, run by hand: a synthetic history of LAUNCHES
# launches x CASES cases (bench_gen_history, ringscale/2 files), then
#   first index:  history on the directory with no index (time, peak RSS);
#   update:       one more launch added, history again (reads that file only);
#   query:        history again with nothing new (the index read, every series analysed).
# Targets: 10,000 x 20 first index <= 5 min and <= 1 GB; update <= 2 s; query <= 5 s.
# usage: tests/bench/history.sh BUILD_DIR [LAUNCHES] [CASES] [WORKDIR]
set -euo pipefail
echo "load average before: $(cut -d" " -f1-3 /proc/loadavg) on $(nproc) cores (the CPU times are the ones to compare on a busy machine)"
build=$1 launches=${2:-10000} cases=${3:-20} work=${4:-/tmp/ringscale_history_bench}
stats=$build/analysis/ringscale-stats gen=$build/tests/bench_gen_history
mkdir -p "$work"
rm -f "$work/$(printf "launch_%05d.h5" "$launches")"
if [ "$(ls "$work"/launch_*.h5 2>/dev/null | wc -l)" -ne "$launches" ]; then
    rm -rf "$work" && mkdir -p "$work"
    start=$SECONDS
    "$gen" --out "$work" --series "$cases" --launches "$launches" --mode steady --seed 3
    echo "generated $launches launches x $cases cases in $((SECONDS - start)) s (not timed below)"
fi
extra=$work/$(printf "launch_%05d.h5" "$launches") # the one new launch of the update
rm -f "$work"/ringscale-history.sqlite "$extra"
measure() { # label
    /usr/bin/time -f "%e s wall, %U s user + %S s sys CPU, %M KiB peak RSS" -o "$work/time" "$stats" history "$work" \
        --format csv >/dev/null 2>"$work/err"
    echo "$1: $(cat "$work/time") ($(grep 'index ' "$work/err" | sed 's/^ringscale-stats: //'))"
}
measure "first index"
"$gen" --out "$work" --series "$cases" --launches 1 --first "$launches" --seed 3
measure "update after one new launch"
measure "query (nothing new)"
echo "index size: $(du -h "$work/ringscale-history.sqlite" | cut -f1)"
