#!/usr/bin/env bash
# Tables a person reads in a terminal: on synthetic studies (8 launches at P = 1..8,
# a 14-launch history with planted steps, 2 launches of two attention schemes that trade places
# between S = 4K and 8K at P = 4: bench_gen_results --study crossover), no line of the text
# output of summary, scaling, predict, compare, crossover and history is wider than 160
# columns, and none is empty; nor any line of `ringscale-stats --help` or a command's --help
# wider than 100; --wide restores every field (the columns, the shape and the environment a
# fitted table states once or leaves out); report.md's prose wraps at 100 columns.
# usage: table_width_test.sh RINGSCALE_STATS BENCH_GEN_RESULTS BENCH_GEN_HISTORY
set -euo pipefail
stats=$1 gen=$2 gen_history=$3
dir=$(mktemp -d /tmp/ringscale_table_width.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$gen" --out "$dir/a" --files 8 --ps 1,2,4,8 --seed 1 >/dev/null
"$gen" --out "$dir/b" --files 8 --ps 1,2,4,8 --seed 2 --slowdown 1.2 >/dev/null
"$gen_history" --out "$dir/h" --series 3 --launches 14 --mode step --seed 5 >/dev/null
"$gen" --out "$dir/x" --files 2 --study crossover --seed 1 >/dev/null
widest() { awk '{ if (length > w) w = length } END { print w + 0 }' "$1"; }
check() { # max what command...
    local max=$1 what=$2
    shift 2
    "$@" >"$dir/out" 2>/dev/null || true
    [ -s "$dir/out" ] || fail "$what: no output"
    local w
    w=$(widest "$dir/out")
    [ "$w" -le "$max" ] || fail "$what: a line of $w columns (at most $max): $(awk -v m="$max" 'length > m' "$dir/out" | head -2)"
    echo "ok: $what: widest line $w"
}
for c in summary scaling predict; do check 160 "$c" "$stats" "$c" "$dir/a"; done
check 160 crossover "$stats" crossover "$dir/x"
# Both of crossover's tables, their shape stated once, and the crossing confirmed.
cross='^-? +4 +allgather +4K +8K +ring/zigzag .* yes$'
grep -Eq "$cross" "$dir/out" || fail "crossover: no confirmed crossing row: $(cat "$dir/out")"
[ "$(grep -c "^shape (every row): comm=mpi device=cpu dtype=float32 heads=8" "$dir/out")" = 2 ] ||
    fail "crossover: the shape not stated once above each table: $(head -3 "$dir/out")"
check 160 compare "$stats" compare "$dir/a" "$dir/b"
check 160 history "$stats" history "$dir/h" --index "$dir/h.sqlite"
check 100 "--help" "$stats" --help
for c in summary scaling model crossover compare predict accuracy profile report export history; do
    check 100 "$c --help" "$stats" "$c" --help
done
# --wide: every field in full (wider than 160 here), nothing stated above or left out.
"$stats" summary "$dir/a" --wide >"$dir/wide" 2>/dev/null
"$stats" summary "$dir/a" >"$dir/fit" 2>/dev/null
[ "$(widest "$dir/wide")" -gt 160 ] || fail "summary --wide: not wider than the fitted table"
# summary leaves out the spread's detail (p10..mean) before its rates and memory.
grep -q "^columns left out: .*p99" "$dir/fit" || fail "summary: no line naming the columns left out"
grep -q "^columns left out: .*RSS MiB" "$dir/fit" && fail "summary: memory left out before p99"
head -n 3 "$dir/wide" | grep -q "p99" || fail "summary --wide: the p99 column is not back"
grep -q "columns left out" "$dir/wide" && fail "summary --wide: columns left out"
"$stats" history "$dir/h" --index "$dir/h.sqlite" --wide >"$dir/hwide" 2>/dev/null || true
grep -q "^series (every row)" "$dir/hwide" && fail "history --wide: the common fields stated apart"
grep -q "^ring_attention/zigzag .*seq_len=1000 .*fixture CPU" "$dir/hwide" ||
    fail "history --wide: not the full label and environment: $(head -5 "$dir/hwide")"
"$stats" crossover "$dir/x" --wide >"$dir/xwide" 2>/dev/null
[ "$(widest "$dir/xwide")" -gt 160 ] || fail "crossover --wide: not wider than the fitted table"
grep -q "(every row)" "$dir/xwide" && fail "crossover --wide: the shape stated apart"
shape='comm=mpi device=cpu dtype=float32 heads=8 inputs=uniform merge=fp32 threads=0'
[ "$(grep -Ec "^$shape +[0-9]" "$dir/xwide")" = 6 ] ||
    fail "crossover --wide: not the full shape on its 5 cells and 1 crossing: $(head -5 "$dir/xwide")"
# report.md: prose wraps at 100 columns; tables and code blocks stay as they are.
"$stats" report "$dir/rep" "$dir/a" >/dev/null 2>&1 || fail "report: exit $?"
long=$(awk '/^```/ { fence = !fence; next } !fence && !/^\|/ && length > 100' "$dir/rep/report.md")
[ -z "$long" ] || fail "report.md: prose wider than 100: $(printf '%s\n' "$long" | head -2 | cut -c1-200)"
grep -q "^|" "$dir/rep/report.md" || fail "report.md: no table"
echo "table widths: ok"
