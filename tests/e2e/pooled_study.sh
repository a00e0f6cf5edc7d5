#!/usr/bin/env bash
# Every job pooled over launches: two launches (a/ and b/) at np = 1, 2 and 4 of collectives,
# ring_attention, context_parallel (allgather, ulysses, hybrid) and train_step (ddp, zero1,
# fsdp), then ringscale-stats must find every family at P = 1, 2, 4 with two launches per
# case, fit a model per family, write every report section, and match every case in compare.
# (Identity, not outcome, keys the cases: losses, degrees and dp differ with P.)
# Then the same with ringscale/1 files of the older launcher (DATA_DIR/ringscale1) added:
# they are read, with exactly one line saying the schemas are mixed.
# usage: pooled_study.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR DATA_DIR
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4 data=$5
rm -rf "$work" && mkdir -p "$work"
source "$(dirname -- "$0")/lib.sh" # check, fails
study=(--job collectives,ring_attention,context_parallel,train_step
    --op allreduce -b 64K -e 64K
    --seq-len 512 --heads 4 --kv-heads 4 --head-dim 64 --variant allgather,ulysses,hybrid
    --layers 1 --hidden 256 --vocab 256 --train-seq-len 128 --tokens 512
    --dp-variant ddp,zero1,fsdp -w 1 -n 6)
for rep in a b; do
    for np in 1 2 4; do
        if ! "$mpiexec" -q -np "$np" --oversubscribe --bind-to none "$ringscale" "${study[@]}" \
            -o "$work/$rep" >"$work/launch_${rep}_np$np.log" 2>&1; then
            echo "FAILED: launch $rep at np=$np"
            tail -n 20 "$work/launch_${rep}_np$np.log"
            exit 1
        fi
    done
done
echo "ok: 6 launches of every job"
families="collectives/allreduce ring_attention/ring/zigzag context_parallel/allgather
context_parallel/ulysses context_parallel/hybrid train_step/ddp train_step/zero1 train_step/fsdp"

"$stats" summary --format csv "$work/a" "$work/b" >"$work/summary.csv" 2>"$work/summary.err"
"$stats" scaling --format csv "$work/a" "$work/b" >"$work/scaling.csv" 2>"$work/scaling.err"
"$stats" model --format csv "$work/a" "$work/b" >"$work/model.csv" 2>"$work/model.err"
for f in $families; do
    if [ "$f" = collectives/allreduce ]; then # a fixed message does not split among ranks
        check "$f: no strong-scaling arithmetic, and why" bash -c \
            '! grep -q "^\"\?$1 " "$2" && grep -q "no speedup, efficiency or Karp-Flatt" "$3"' \
            _ "$f" "$work/scaling.csv" "$work/scaling.err"
    else
        check "$f: one family at P = 1, 2, 4" bash -c \
            '[ "$(grep -c "^\"\?$1 " "$2" | head -1)" -eq 3 ] &&
             [ "$(grep "^\"\?$1 " "$2" | cut -d, -f4 | tr "\n" " ")" = "1 2 4 " ]' \
            _ "$f" "$work/scaling.csv"
    fi
    check "$f: two launches per case" bash -c \
        '[ "$(grep "^\"\?$1 " "$2" | cut -d, -f3 | sort -u | tr "\n" " ")" = "2 " ]' \
        _ "$f" "$work/summary.csv"
    check "$f: a model" grep -q "^\"\?$f " "$work/model.csv"
done
check "summary has the memory columns" grep -q "peak_rss_mib" "$work/summary.csv"
check "scaling has memory against P" grep -q "peak_rss_mib" "$work/scaling.csv"
"$stats" report "$work/report" "$work/a" "$work/b" >"$work/report.log" 2>&1
for section in Summary Scaling Models Memory "Bus bandwidth" "Per-rank heatmaps"; do
    check "report section $section" grep -q "^## $section" "$work/report/report.md"
done
"$stats" compare "$work/a" "$work/b" >"$work/compare.txt" 2>"$work/compare.err"
check "compare matches all 24 cases, none left over" bash -c \
    'grep -q "24 case(s) compared" "$1" && ! grep -q "not compared" "$1"' _ "$work/compare.err"
"$stats" summary "$data/ringscale1" "$work/a" >"$work/mixed.txt" 2>"$work/mixed.err"
check "mixed schemas: read, with one line on stderr (besides the P=1 no-op note)" bash -c \
    '[ "$(grep -vc "at P=1" "$1")" -eq 1 ] && grep -q "inputs mix 6 ringscale/1 file(s) with 3 ringscale/2" "$1" &&
     grep -q "^train_step/ddp" "$2"' _ "$work/mixed.err" "$work/mixed.txt"
echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
