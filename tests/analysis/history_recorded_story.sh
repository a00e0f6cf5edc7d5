#!/usr/bin/env bash
# The new user's nightly story from a real run kept as test data (tests/data/history/
# nightly_busy_tcp.tsv: tests/slurm/nightly_busy.sh's 13 nights beside a busy loop of one
# core, Open MPI on TCP from night 10), its launches written back with the recorded medians,
# marks and /meta (bench_gen_history --from), then judged night by night as
# slurm/nightly.sbatch does (history --order label:night --fail-on regression over nights
# 1..N). The same every run, on any machine: it never skips.
# Checked:
# - below the smallest launches for alpha 0.01 (M, read from analysis/README.md's table) each
#   night exits 6 with both series "too few launches: N; needs M";
# - nights 1-9 alone: where M <= 9, exit 0 (judged, no regression: every launch ran beside the
#   loop, equally busy on both sides of any split); else 6 with "needs M". The test says which;
# - all 13: exit 1, the regression line names #10 and the transport (mpi_transport ... -> ...
#   btl=self,tcp), and history's JSON has both series slower at #10 naming mpi_transport;
# - every night's output (tables and verdict) at most 10 KB.
# usage: history_recorded_story.sh RINGSCALE_STATS BENCH_GEN_HISTORY SOURCE_DIR
set -euo pipefail
stats=$1 gen=$2 src=$3
dir=$(mktemp -d /tmp/ringscale_history_story.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$gen" --out "$dir/all" --from "$src/tests/data/history/nightly_busy_tcp.tsv"
[ "$(ls "$dir/all" | wc -l)" -eq 13 ] || fail "the recording gave $(ls "$dir/all" | wc -l) launches, not 13"
needs=$(sed -n 's/^ *| 0\.01 | \([0-9]*\) |.*/\1/p' "$src/analysis/README.md" | head -1)
[[ $needs =~ ^[0-9]+$ ]] || fail "analysis/README.md has no smallest launches for alpha 0.01"
mkdir "$dir/h"
for n in $(seq 1 13); do
    cp "$dir/all/$(printf 'launch_%05d.h5' "$n")" "$dir/h/"
    set +e
    "$stats" history "$dir/h" --order label:night --fail-on regression >"$dir/night$n.log" 2>&1
    rc=$?
    set -e
    bytes=$(wc -c <"$dir/night$n.log")
    echo "night $n: exit $rc, output $bytes bytes"
    [ "$bytes" -le 10240 ] || { cat "$dir/night$n.log"; fail "night $n's output is $bytes bytes (> 10 KB)"; }
    if [ "$n" -lt "$needs" ]; then
        [ $rc -eq 6 ] && [ "$(grep -c "too few launches: $n; needs $needs " "$dir/night$n.log")" -eq 2 ] ||
            { cat "$dir/night$n.log"; fail "night $n: exit $rc, want 6 and 'needs $needs' for the 2 series"; }
    fi
    if [ "$n" -eq 9 ] && [ "$needs" -le 9 ]; then
        echo "analysis/README.md: the smallest launches for alpha 0.01 is $needs (<= 9): nights 1-9 must exit 0"
        [ $rc -eq 0 ] && grep -q "0 not decided: judged, no regression (exit 0)" "$dir/night9.log" ||
            { cat "$dir/night9.log"; fail "nights 1-9: exit $rc, want 0"; }
    elif [ "$n" -eq 9 ]; then
        echo "analysis/README.md: the smallest launches for alpha 0.01 is $needs (> 9): nights 1-9 must exit 6"
        [ $rc -eq 6 ] && grep -q "needs $needs" "$dir/night9.log" ||
            { cat "$dir/night9.log"; fail "nights 1-9: exit $rc, want 6 with 'needs $needs'"; }
    fi
done
log=$dir/night13.log
[ $rc -eq 1 ] && grep -q "a regression (exit 1)" "$log" || { cat "$log"; fail "night 13: exit $rc, want 1"; }
grep -q "^ringscale-stats: REGRESSION at #10 (.*): 2 series slower .*with it: mpi_transport .*-> .*btl=self,tcp" "$log" ||
    { cat "$log"; fail "the regression line does not name #10 and the transport"; }
"$stats" history "$dir/h" --order label:night --format json >"$dir/h.json" 2>/dev/null
python3 - "$dir/h.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["changes"]
slower = [r for r in rows if r["verdict"] == "slower"]
assert len(slower) == 2, f"want both series slower: {rows}"
for r in slower:
    assert r["launch"].startswith("#10 of 13"), f"changed at {r['launch']}, want #10"
    assert "mpi_transport" in r["moved_with"] and "btl=self,tcp" in r["moved_with"], \
        f"what moved: {r['moved_with']}"
print(f"both series slower at #10: {slower[0]['moved_with']}")
PY
echo "passed"
