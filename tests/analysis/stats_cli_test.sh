#!/usr/bin/env bash
# CLI test of ringscale-stats: exit codes and one-line errors on fixture files.
# usage: stats_cli_test.sh RINGSCALE_STATS BENCH_GEN_RESULTS
set -u
stats="$1"
gen="$2"
dir="$(mktemp -d /tmp/ringscale_stats_cli.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
failures=0

# expect CODE DESCRIPTION -- COMMAND...: run it, check the exit status.
expect() {
    local want="$1" what="$2"
    shift 3
    "$@" >"$dir/out" 2>"$dir/err"
    local got=$?
    if [[ "$got" != "$want" ]]; then
        echo "FAIL: $what: exit $got, expected $want"
        sed 's/^/  stdout: /' "$dir/out" | head -20
        sed 's/^/  stderr: /' "$dir/err" | head -20
        failures=$((failures + 1))
    else
        echo "ok: $what (exit $got)"
    fi
}

# expect_stderr TEXT: the last command's stderr contains TEXT.
expect_stderr() {
    if ! grep -qF -- "$1" "$dir/err"; then
        echo "FAIL: stderr lacks '$1'"
        sed 's/^/  stderr: /' "$dir/err"
        failures=$((failures + 1))
    fi
}

# expect_stdout TEXT: the last command's stdout contains TEXT.
expect_stdout() {
    if ! grep -qF -- "$1" "$dir/out"; then
        echo "FAIL: stdout lacks '$1'"
        sed 's/^/  stdout: /' "$dir/out" | head -5
        failures=$((failures + 1))
    fi
}

# expect_one_line: the last command wrote exactly one line on stderr.
expect_one_line() {
    if [[ $(wc -l <"$dir/err") != 1 ]]; then
        echo "FAIL: stderr is not one line"
        sed 's/^/  stderr: /' "$dir/err"
        failures=$((failures + 1))
    fi
}

"$gen" --out "$dir/a" --files 4 --samples 400 --seed 1 || exit 1
"$gen" --out "$dir/a2" --files 4 --samples 400 --seed 2 || exit 1
"$gen" --out "$dir/slow" --files 4 --samples 400 --seed 3 --slowdown 0.10 || exit 1
"$gen" --out "$dir/other" --files 4 --samples 400 --seed 4 --seq-len 8192 || exit 1
"$gen" --out "$dir/two" --files 2 --samples 100 --ps 1,2 || exit 1
# three launches per P on each side (file i is at P = ps[i % 4])
"$gen" --out "$dir/a3" --files 12 --samples 400 --seed 5 || exit 1
"$gen" --out "$dir/slow3" --files 12 --samples 400 --seed 6 --slowdown 0.10 || exit 1
"$gen" --out "$dir/a3b" --files 12 --samples 400 --seed 7 || exit 1
mkdir -p "$dir/bad"
cp "$dir"/a/*.h5 "$dir/bad/"
echo "garbage" >"$dir/bad/corrupt.h5"

expect 0 "tool --help" -- "$stats" --help
expect 0 "summary --help" -- "$stats" summary --help
expect 0 "compare --help" -- "$stats" compare --help
expect 2 "no command" -- "$stats"
expect 2 "unknown command" -- "$stats" frobnicate "$dir/a"
expect_stderr "ringscale-stats: unknown command 'frobnicate'"
expect 2 "unknown option" -- "$stats" summary --bogus "$dir/a"
expect 0 "summary" -- "$stats" summary "$dir/a"
expect 0 "summary md" -- "$stats" summary --format md "$dir/a"
expect 0 "summary json" -- "$stats" summary --format json "$dir/a/*.h5"
expect 2 "bad format" -- "$stats" summary --format xml "$dir/a"
expect 0 "scaling" -- "$stats" scaling "$dir/a"
expect_stderr "launch-to-launch noise is unknown for 4 row(s)"
expect 0 "model with prediction" -- "$stats" model --predict 16,64 --bootstrap 100 "$dir/a"
expect 2 "model refuses 2 distinct P" -- "$stats" model "$dir/two"
expect_stderr "need at least 3"
expect 0 "A/A compare" -- "$stats" compare "$dir/a" "$dir/a2"
expect 0 "one launch per side: a 10% slowdown is not decided" -- \
    "$stats" compare "$dir/a" "$dir/slow"
expect_stderr "launch-to-launch noise is unknown for 4 case(s)"
expect_stderr "4 case(s) compared, 0 regression(s)"
if [[ "$(grep -c "not decided (one launch)" "$dir/out")" != 4 ]]; then
    echo "FAIL: the 4 one-launch differences are not all 'not decided (one launch)'"
    failures=$((failures + 1))
fi
# A gate that asked to fail exits 6 (not decided) where nothing could be judged.
expect 6 "--fail-on regression: one launch per side is not decided" -- \
    "$stats" compare --fail-on regression "$dir/a" "$dir/slow"
expect_stderr "4 case(s) not decided, none a regression: exit 6"
expect 1 "--fail-on regression: a regression is still 1" -- \
    "$stats" compare --fail-on regression --keep-marked "$dir/a3" "$dir/slow3"
expect_stderr "--keep-marked: marked launches are kept by default"
expect 2 "--fail-on takes regression" -- "$stats" compare --fail-on speed "$dir/a" "$dir/slow"
expect 1 "10% slowdown over 3 launches per side flagged" -- "$stats" compare "$dir/a3" "$dir/slow3"
expect 0 "A/A over 3 launches per side" -- "$stats" compare "$dir/a3" "$dir/a3b"
expect 0 "slowdown under a 20% threshold" -- "$stats" compare --threshold 20 "$dir/a3" "$dir/slow3"
expect 2 "--min-launches 1 refused" -- "$stats" compare --min-launches 1 "$dir/a3" "$dir/slow3"
expect_stderr "--min-launches must be at least 2"
expect 0 "scaling over launches" -- "$stats" scaling "$dir/a3"
if grep -qF "launch-to-launch noise is unknown" "$dir/err"; then
    echo "FAIL: scaling over 3 launches per P still says launch noise is unknown"
    failures=$((failures + 1))
fi
expect 2 "mismatched parameters" -- "$stats" compare "$dir/a" "$dir/other"
expect_stderr "seq_len (4096 vs 8192)"
expect 2 "compare needs two inputs" -- "$stats" compare "$dir/a"
expect 0 "corrupt file skipped" -- "$stats" summary "$dir/bad"
expect_stderr "ringscale-stats: skipping $dir/bad/corrupt.h5: not a readable HDF5 file"
expect 2 "corrupt file with --strict" -- "$stats" summary --strict "$dir/bad"
expect 2 "missing input" -- "$stats" summary "$dir/nothing_here"
expect 0 "export" -- "$stats" export --csv "$dir/long.csv" --json "$dir/sum.json" "$dir/a"
rows=$(($(wc -l <"$dir/long.csv") - 1))
# 4 files: P=1,2,4,8 with 400/P measured + 2 warm-up iterations, times P ranks
want=$(((400 + 2) + (200 + 2) * 2 + (100 + 2) * 4 + (50 + 2) * 8))
if [[ "$rows" != "$want" ]]; then
    echo "FAIL: export wrote $rows CSV rows, expected $want"
    failures=$((failures + 1))
fi
expect 2 "export without a target" -- "$stats" export "$dir/a"
expect 2 "impossible FLOP/s refused" -- "$stats" summary --peak-gflops 0.000001 --strict "$dir/a"
expect 0 "impossible FLOP/s withheld" -- "$stats" summary --peak-gflops 0.000001 "$dir/a"
expect_stderr "above the peak (--peak-gflops 1e-06); FLOP/s withheld"

# MFU: --peak for any case; a GPU case from the peak table; an unknown GPU gets a note.
expect 0 "MFU against --peak" -- "$stats" summary --peak 0.5 --format csv "$dir/a"
expect_stdout ",mfu_pct,"
for bad in 0 -3 nan abc; do
    expect 2 "bad --peak $bad" -- "$stats" summary --peak "$bad" "$dir/a"
    expect_one_line
done
expect_stderr "--peak"
"$gen" --out "$dir/h100" --files 2 --samples 40 --gpu "NVIDIA H100 80GB HBM3" || exit 1
"$gen" --out "$dir/gpu_x" --files 2 --samples 40 --gpu "Example GPU 9000" || exit 1
expect 0 "MFU from the peak table" -- "$stats" summary --format csv "$dir/h100"
# Every row's MFU is its GFLOP/s per rank over the H100 SXM's dense bf16 989.5 TFLOP/s.
if ! awk -F, '
    NR == 1 {
        for (i = 1; i <= NF; i++) {
            if ($i == "mfu_pct") m = i
            if ($i == "gflops_per_rank") g = i
        }
        next
    }
    {
        want = 100 * $g / 989.5e3
        d = $m - want
        if (!(m && g && $g > 0 && d * d <= 1e-20 * want * want)) bad = 1
    }
    END { exit bad || NR < 3 }' "$dir/out"; then
    echo "FAIL: mfu_pct missing or out of range"
    sed 's/^/  stdout: /' "$dir/out"
    failures=$((failures + 1))
fi
expect 0 "MFU of an unknown GPU" -- "$stats" summary "$dir/gpu_x"
expect_stderr "MFU: no dense bf16 peak known for device 'Example GPU 9000'; pass --peak TFLOPS"
expect 0 "report of an unknown GPU" -- "$stats" report "$dir/report_gpu_x" "$dir/gpu_x"
if ! grep -qF -- "- MFU: no dense bf16 peak known for device 'Example GPU 9000'" \
    "$dir/report_gpu_x/report.md"; then
    echo "FAIL: report.md lacks the MFU note"
    failures=$((failures + 1))
fi
expect 0 "--peak for an unknown GPU" -- "$stats" summary --peak 100 --format csv "$dir/gpu_x"
expect_stdout ",mfu_pct,"

# predict: the cost model; bad input is one line and exit 2.
expect 0 "predict in sample" -- "$stats" predict --bootstrap 100 "$dir/a"
expect_stdout "in sample: median |error| "
expect 0 "predict on assumed hardware" -- "$stats" predict --bootstrap 100 --at P=64 \
    --hardware h100 "$dir/a"
expect_stdout "assumed: H100 SXM"
expect 2 "predict --at unknown field" -- "$stats" predict --at bogus=1 "$dir/a"
expect_one_line
expect_stderr "--at: unknown field 'bogus'"
expect 2 "predict --at P not a multiple of ranks per node" -- \
    "$stats" predict --at world_size=12,ranks_per_node=8 "$dir/a"
expect_one_line
expect_stderr "P=12 is not a multiple of ranks_per_node=8"
profile="name = test
peak_tflops = 100
efficiency = 0.5
memory_gbs = 1000
call_overhead_us = 5
device_memory_gib = 40
ranks_per_node = 4
intra_alpha_us = 2
intra_busbw_gbs = 100"
printf '%s\n' "$profile" >"$dir/missing.hw"
expect 2 "predict --hardware with a missing figure" -- \
    "$stats" predict --hardware "$dir/missing.hw" "$dir/a"
expect_one_line
expect_stderr "missing figure 'inter_alpha_us'"
printf '%s\ninter_alpha_us = 0\ninter_busbw_gbs = 10\n' "$profile" >"$dir/zero.hw"
expect 2 "predict --hardware with a non-positive figure" -- \
    "$stats" predict --hardware "$dir/zero.hw" "$dir/a"
expect_one_line
expect_stderr "inter_alpha_us = '0' is not a positive number"
printf '%s\ninter_alpha_us = 8\ninter_busbw_gbs = 10\n' "$profile" >"$dir/ok.hw"
expect 0 "predict --map on a profile file" -- \
    "$stats" predict --map --hardware "$dir/ok.hw" "$dir/a"
expect_stdout "crossover map at scale"

echo "$failures failure(s)"
[[ "$failures" == 0 ]]
