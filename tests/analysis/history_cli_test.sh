#!/usr/bin/env bash
# `ringscale-stats history` end to end on a small synthetic history: the index is
# incremental (a second run reads nothing; a removed or added file is noticed), a launch under
# two paths counts once, each file of the hostile corpus is skipped with its reason, a damaged,
# truncated or crafted index is rebuilt with one line, a file
# that is not SQLite is refused (exit 2), --commits naming unknown commits and future-dated
# launches are noted, --fail-on regression exits 1 on a planted slowdown, 0 without one, and
# report --history writes its History section, CSV and trend plots.
# usage: history_cli_test.sh RINGSCALE_STATS BENCH_GEN_HISTORY HOSTILE_DIR
set -euo pipefail
stats=$1 gen=$2 hostile=$3
dir=$(mktemp -d /tmp/ringscale_history_cli.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { "$stats" history "$@" >"$dir/out" 2>"$dir/err"; }
"$gen" --out "$dir/h" --series 3 --launches 14 --mode step --seed 5
"$gen" --out "$dir/flat" --series 3 --launches 14 --mode steady --seed 6
idx="$dir/h/ringscale-history.sqlite"

# --alpha 0.03 over the 3 series: each tested at 0.01, at which 14 launches find the planted
# 3-sigma step (at the default 0.01 over the run, 0.0033 each, the noisier series need more).
set +e
run "$dir/h" --alpha 0.03 --fail-on regression; rc=$?
set -e
[ $rc -eq 1 ] || fail "planted slowdown: exit $rc, want 1"
grep -q "14 launch(es); 14 file(s) read" "$dir/err" || fail "first run: $(cat "$dir/err")"
run "$dir/flat" --alpha 0.03 --fail-on regression || fail "steady history: exit $?, want 0"
grep -q "3 series, 0 change point" "$dir/err" || fail "steady history: $(cat "$dir/err")"

run "$dir/h"
grep -q "0 file(s) read, 14 unchanged" "$dir/err" || fail "second run read again: $(cat "$dir/err")"
mv "$dir/h/launch_00003.h5" "$dir/moved.h5"
run "$dir/h"
grep -q "13 launch(es); 0 file(s) read, 13 unchanged, 1 gone" "$dir/err" || fail "removal: $(cat "$dir/err")"
cp "$dir/moved.h5" "$dir/h/launch_00003.h5"
cp "$dir/moved.h5" "$dir/h/copy_of_3.h5"
run "$dir/h"
grep -q "holds the launch already read from" "$dir/err" || fail "two paths: $(cat "$dir/err")"
grep -q "14 launch(es)" "$dir/err" || fail "two paths counted twice: $(cat "$dir/err")"
rm "$dir/h/copy_of_3.h5"

# Crafted rows (a negative time; SQL in a text), a truncated file, another version.
sqlite3 "$idx" "UPDATE cases SET step_s = -1 WHERE rowid IN (SELECT rowid FROM cases LIMIT 1)" 2>/dev/null ||
    sqlite3 "$idx" "UPDATE cases SET step_s = -1 WHERE case_key = (SELECT case_key FROM cases LIMIT 1)"
run "$dir/h"
grep -q "holds rows no launch writes.*rebuilt" "$dir/err" || fail "crafted row: $(cat "$dir/err")"
sqlite3 "$idx" "UPDATE cases SET label = 'x''); DROP TABLE cases; --'"
run "$dir/h"
grep -q "3 series" "$dir/err" || fail "SQL in a label: $(cat "$dir/err")"
sqlite3 "$idx" "PRAGMA user_version = 99"
run "$dir/h"
grep -q "is from another version.*rebuilt" "$dir/err" || fail "other version: $(cat "$dir/err")"
head -c 3000 "$idx" >"$dir/t" && mv "$dir/t" "$idx"
run "$dir/h"
grep -q "rebuilt from the results files" "$dir/err" || fail "truncated: $(cat "$dir/err")"
grep -q "14 launch(es)" "$dir/err" || fail "truncated index not rebuilt whole: $(cat "$dir/err")"
# A damaged results file: left out with a note (read in a disposable child first, as every
# subcommand reads), and with --strict the one line and exit 2.
head -c 4096 /dev/urandom >"$dir/h/damaged.h5"
run "$dir/h" || fail "a damaged results file: exit $?: $(cat "$dir/err")"
grep -q "damaged.h5" "$dir/err" || fail "a damaged results file not named: $(cat "$dir/err")"
set +e
run "$dir/h" --strict; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "^ringscale-stats: --strict: .*damaged.h5" "$dir/err" ||
    fail "--strict on a damaged file: exit $rc: $(cat "$dir/err")"
rm "$dir/h/damaged.h5"
# The hostile corpus (files that crash HDF5 or exhaust a reader) beside two good launches:
# each bad file is named with its reason (--verbose; by default one line per kind of reason),
# the good ones are indexed, the index survives.
mkdir "$dir/mixed"
cp "$hostile"/*.h5 "$dir/mixed/"
cp "$dir/h/launch_00000.h5" "$dir/h/launch_00001.h5" "$dir/mixed/"
run --verbose "$dir/mixed" || fail "hostile corpus: exit $?: $(cat "$dir/err")"
bad=$(ls "$hostile"/*.h5 | wc -l)
[ "$(grep -c "skipping $dir/mixed/.*\.h5: ." "$dir/err")" -eq "$bad" ] ||
    fail "hostile corpus: $bad files, not each skipped with a reason: $(cat "$dir/err")"
grep -q "crashed the HDF5 library (SIGSEGV)" "$dir/err" || fail "no crash caught: $(cat "$dir/err")"
grep -q "index .*: 2 launch(es); $((bad + 2)) file(s) read" "$dir/err" ||
    fail "hostile corpus: the good launches: $(cat "$dir/err")"
echo "not a database" >"$dir/notdb"
set +e
run "$dir/h" --index "$dir/notdb"; rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] || fail "not SQLite: exit $rc: $(cat "$dir/err")"
grep -q "not an SQLite file: not overwritten" "$dir/err" || fail "not SQLite: $(cat "$dir/err")"
[ "$(cat "$dir/notdb")" = "not a database" ] || fail "a file that is not SQLite was overwritten"

# A launch dated in the future (100,000 hours after 2025) is left out, with one line.
"$gen" --out "$dir/h" --series 3 --launches 1 --first 100000 --seed 5
run "$dir/h"
grep -q "is dated in the future.*left out of every series" "$dir/err" || fail "future: $(cat "$dir/err")"
rm "$dir/h/launch_100000.h5"

# Order by a label, with a --commits file that leaves some out and names unknown ones.
seq -f "c%05g" 0 9 >"$dir/commits"
echo "c99999" >>"$dir/commits"
run "$dir/h" --index "$dir/i2.sqlite" --order label:commit --commits "$dir/commits"
grep -q "4 value(s) of label 'commit' not in --commits" "$dir/err" || fail "commits: $(cat "$dir/err")"
set +e
run "$dir/h" --index "$dir/i2.sqlite" --commits "$dir/commits"; rc=$?
set -e
[ $rc -eq 2 ] || fail "--commits without --order label:KEY: exit $rc"
# A misspelt --order label matches nothing: not decided (exit 6), one line naming it;
# --keep-marked is accepted with a note (the default now); the two contradict.
set +e
run "$dir/h" --index "$dir/i2.sqlite" --order label:comit --fail-on regression; rc=$?
set -e
[ $rc -eq 6 ] && [ "$(grep -c "label:comit" "$dir/err")" -eq 1 ] &&
    grep -q "^ringscale-stats: not decided: --order label:comit matches no launch" "$dir/err" ||
    fail "misspelt --order label: exit $rc: $(cat "$dir/err")"
run "$dir/flat" --keep-marked --fail-on regression ||
    fail "--keep-marked: exit $?: $(cat "$dir/err")"
grep -q "keep-marked: marked launches are kept by default" "$dir/err" ||
    fail "--keep-marked note: $(cat "$dir/err")"
set +e
run "$dir/flat" --keep-marked --skip-marked; rc=$?
set -e
[ $rc -eq 2 ] || fail "--keep-marked --skip-marked: exit $rc"
for f in csv md json; do run "$dir/h" --format $f || fail "--format $f"; done
python3 -c "import json,sys; j=json.load(open('$dir/out')); assert len(j['series'])==3" ||
    fail "json: $(head -c 300 "$dir/out")"
# report --history: a History section, every series launch by launch in CSV, and one trend
# plot per changed series (capped by --history-plots); a first input that is no directory
# without --history-index: one line, exit 2.
"$stats" report "$dir/rep" "$dir/h/launch_00000.h5" --history "$dir/h" --history-plots 1 \
    --history-alpha 0.03 >/dev/null 2>"$dir/err" || fail "report --history: exit $?: $(cat "$dir/err")"
grep -q "^## History" "$dir/rep/report.md" || fail "report: no History section"
grep -q "^3 series, [1-9] change point" "$dir/rep/report.md" ||
    fail "report: $(grep -A2 '^## History' "$dir/rep/report.md")"
[ "$(tail -n +2 "$dir/rep/history_series.csv" | wc -l)" -eq 42 ] ||
    fail "history_series.csv: $(wc -l <"$dir/rep/history_series.csv") lines, want 43"
[ "$(cut -d, -f1 "$dir/rep/history_series.csv" | tail -n +2 | sort -u | wc -l)" -eq 3 ] ||
    fail "history_series.csv does not hold the 3 series"
grep -q ",[+-]*[0-9.]*,0\.[0-9]*,[a-z]" "$dir/rep/history_series.csv" ||
    fail "history_series.csv marks no change point"
if command -v gnuplot >/dev/null; then
    [ -s "$dir/rep/history_01.png" ] && [ ! -e "$dir/rep/history_02.png" ] ||
        fail "trend plots: $(ls "$dir/rep")"
    grep -q "set arrow from" "$dir/rep/history_01.gp" || fail "no change point marked"
    grep -q "filledcurves" "$dir/rep/history_01.gp" || fail "no CI band"
else
    echo "gnuplot not installed: the trend plots are not checked"
fi
"$stats" report "$dir/rep2" "$dir/flat/launch_00000.h5" --history "$dir/flat" >/dev/null \
    2>"$dir/err" || fail "report --history (steady): exit $?: $(cat "$dir/err")"
grep -q "No series changed" "$dir/rep2/report.md" || fail "steady: $(grep -A3 '^## History' "$dir/rep2/report.md")"
[ ! -e "$dir/rep2/history_01.png" ] || fail "steady history: a trend plot drawn"
# report --history takes history's options (prefixed history-): a minimum effect
# above the planted steps leaves no change; a bad value is refused as history refuses it.
"$stats" report "$dir/rep4" "$dir/h/launch_00000.h5" --history "$dir/h"     --history-order label:commit --history-min-effect 900% --history-skip-marked >/dev/null     2>"$dir/err" || fail "report --history-min-effect: exit $?: $(cat "$dir/err")"
grep -q "No series changed" "$dir/rep4/report.md" ||
    fail "report --history-min-effect: $(grep -A3 '^## History' "$dir/rep4/report.md")"
set +e
"$stats" report "$dir/rep5" "$dir/h/launch_00000.h5" --history "$dir/h"     --history-min-segment 1 >/dev/null 2>"$dir/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "history-min-segment is 2 to 1000" "$dir/err" ||
    fail "report --history-min-segment 1: exit $rc: $(cat "$dir/err")"
set +e
"$stats" report "$dir/rep3" "$dir/flat/launch_00000.h5" --history "$dir/flat/launch_00000.h5" \
    >/dev/null 2>"$dir/err"; rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "give --history-index FILE" "$dir/err" ||
    fail "--history FILE: exit $rc: $(cat "$dir/err")"
echo "history cli: ok"
