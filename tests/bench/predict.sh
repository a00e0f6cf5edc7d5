#!/usr/bin/env bash
# How good is `ringscale-stats predict` on this machine? Calibrate the cost model on launches
# at P <= 2 (collectives at P=2; ring, all-gather, Ulysses and hybrid attention and train_step
# ddp/zero1/fsdp at P=1 and 2), then predict every case of the same jobs measured at P=4
# (ranks sharing the cores, --bind-to none) from the calibration alone.
# Goal: median |error| <= 20% and 90% band coverage >= 80%.
#
# usage: tests/bench/predict.sh [BUILD_DIR] [OUT_DIR] [ROUNDS]
#   ROUNDS (default 2): launches of every job and P, interleaved (P = 1, 2, 4 in each round)
#   so load that drifts during the run hits calibration and held-out launches alike.
#   In the environment: SMALL=1, a smaller study (below); LOAD_HELD=1, a busy loop pinned to
#   the first core the script may use during every held-out launch, and only then (the
#   cases it contaminates must be marked, and the figures over the rest must hold;
#   tests/bench/predict_load.sh); LOAD_HELD=first, the same during the first round's
#   held-out launches only (the later rounds' launches of each case are then the clean ones);
#   LOAD_WORK=compile, another program's real work beside every launch, calibration and
#   held-out alike: a loop compiling one of ringscale's sources with c++ -O2 for the
#   whole run; LOAD_WORK=bench, a second benchmark instead (a one-rank ringscale attention
#   launch in a loop).
# Prints the load before and after, the validation table and, last, the summary line.
set -euo pipefail
build="${1:-build}"
out="${2:-$(mktemp -d /tmp/ringscale_predict.XXXXXX)}"
rounds="${3:-2}"
ringscale="$build/src/ringscale"
stats="$build/analysis/ringscale-stats"
for b in "$ringscale" "$stats"; do
    [[ -x "$b" ]] || { echo "predict.sh: $b not built" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out/calib" "$out/held"

# SMALL=1: sequences 512 and 1K only and half the training tokens (about a tenth of the time,
# for a machine other work keeps busy).
seqs=512,1K,2K,4K tokens=2048
if [[ "${SMALL:-0}" == 1 ]]; then
    seqs=512,1K tokens=1024
fi
attention=(--job ring_attention,context_parallel --variant allgather,ulysses,hybrid
    --seq-len "$seqs" --heads 8 --kv-heads 4 --head-dim 64 --causal 1 --layout zigzag
    --pass fwd+bwd --warmup 2 --iters 8)
train=(--job train_step --layers 2 --hidden 256 --heads 4 --vocab 1024 --train-seq-len 256
    --tokens "$tokens" --dp-variant ddp,zero1,fsdp --prefetch on --warmup 2 --iters 8)
collectives=(--job collectives --op allreduce,allgather,reduce_scatter,alltoall,sendrecv
    -b 4K -e 16M -f 4 --warmup 3 --iters 20)

# run NP DIR ARGS...: one launch, results into $out/DIR, validation off (timings and peaks only);
# held-out launches under LOAD_HELD=1 beside a busy loop on one core.
busy=""
run() {
    local np="$1" dir="$2"
    shift 2
    if [[ "$dir" == held && ("${LOAD_HELD:-0}" == 1 || ("${LOAD_HELD:-0}" == first && "$round" == 1)) ]]; then
        taskset -c "$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')" \
            /bin/sh -c 'while :; do :; done' &
        busy=$!
    fi
    mpirun --oversubscribe --bind-to none -np "$np" "$ringscale" "$@" --validate off \
        -o "$out/$dir/" >"$out/launch.log" 2>&1 || {
        echo "predict.sh: launch failed (np=$np $*):" >&2
        tail -5 "$out/launch.log" >&2
        exit 1
    }
    if [[ -n "$busy" ]]; then
        kill "$busy"
        wait "$busy" 2>/dev/null || true
        busy=""
    fi
}

# Every 2 s: runnable processes that are not this benchmark's (its ranks' command lines name
# $out; the load average would count them too), so the output says what else ran.
sample_others() {
    while :; do
        ps -eo stat=,args= | awk -v out="$out" \
            '$1 ~ /^R/ && index($0, out) == 0 && $2 != "ps" && $2 != "awk" { n++ } END { print n + 0 }'
        sleep 2
    done >>"$out/others_running.txt"
}
: >"$out/others_running.txt"
sample_others &
sampler=$!
# LOAD_WORK: another program's real work for the whole run (calibration and held-out alike).
work=""
src="$(cd -- "$(dirname "$0")/../.." && pwd)"
case "${LOAD_WORK:-}" in
"") ;;
compile)
    command -v c++ >/dev/null || { echo "predict.sh: LOAD_WORK=compile needs c++" >&2; exit 2; }
    (while :; do
        c++ -std=c++17 -O2 -I"$src" -I/usr/include/hdf5/serial -c "$src/src/base/machine_marks.cpp" \
            -o /dev/null 2>/dev/null || sleep 1
    done) &
    work=$!
    ;;
bench)
    mkdir -p "$out/other_bench"
    (while :; do
        "$ringscale" --job ring_attention --seq-len 2K --heads 8 --head-dim 64 --iters 20 \
            --validate off -o "$out/other_bench/" >/dev/null 2>&1 || sleep 1
    done) &
    work=$!
    ;;
*) echo "predict.sh: LOAD_WORK must be compile or bench" >&2; exit 2 ;;
esac
trap 'kill "$sampler" $busy 2>/dev/null || true; [[ -n "$work" ]] && pkill -P "$work" 2>/dev/null; kill $work 2>/dev/null || true' EXIT

held_note=""
[[ "${LOAD_HELD:-0}" != 0 ]] && held_note="(LOAD_HELD=$LOAD_HELD: a busy loop beside the held-out launches)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; results in $out" \
    "$held_note" \
    "${LOAD_WORK:+(LOAD_WORK=$LOAD_WORK: the real work of another program beside every launch)}"
start=$(date +%s)
for round in $(seq 1 "$rounds"); do
    run 2 calib "${collectives[@]}"
    for np in 1 2 4; do
        dir=calib
        [[ "$np" == 4 ]] && dir=held
        run "$np" "$dir" "${attention[@]}"
        run "$np" "$dir" "${train[@]}"
    done
    echo "round $round of $rounds done after $(($(date +%s) - start)) s," \
        "load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
kill "$sampler" 2>/dev/null
if [[ -n "$work" ]]; then
    pkill -P "$work" 2>/dev/null || true
    kill "$work" 2>/dev/null || true
    work=""
fi
awk '{ s += $1; if ($1 > m) m = $1 }
     END { printf "other runnable processes during the launches (2 s samples): " \
                  "mean %.2f, max %d, %d samples\n", s / NR, m, NR }' "$out/others_running.txt"
echo "\$ ringscale-stats predict $out/calib --validate $out/held"
# A calibration left empty (every launch marked, on a machine never quiet) is predict's exit 2:
# its reason printed, and the script goes on (predict_load.sh then tries --keep-marked).
if ! "$stats" predict "$out/calib" --validate "$out/held" 2>"$out/predict.err" >"$out/predict.out"; then
    cat "$out/predict.err"
fi
sed -n '/^validation:/,$p' "$out/predict.out"
