#!/usr/bin/env bash
# Issue 49: a series whose later launches ran two ranks under `taskset -c 0` (one core between
# them) shows a change at the first such launch, a regression (--fail-on regression exits 1),
# with the ranks' cores named as what moved with it. 12 launches of a 1 MiB sendrecv on one
# node, labelled build=N; builds 7-12 under taskset -c 0. Marked launches are kept (a busy
# machine marks the unbound ones too: the decision rule weighs those marks). Skips (77) where
# taskset cannot pin, and, saying so, where other load made the unbound launches as slow as the
# pinned ones (their marks then say it, and history rightly finds no change).
# usage: history_taskset.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
set -euo pipefail
ringscale=$1 stats=$2 mpiexec=$3 work=$4
if ! command -v taskset >/dev/null || ! taskset -c 0 true 2>/dev/null; then
    echo "SKIP: taskset cannot restrict this process to core 0"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work/h"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
run=(--job collectives --op sendrecv -b 1M -e 1M -w 1 -n 4)
start=$SECONDS
for i in $(seq 1 12); do
    pin=()
    [ "$i" -le 6 ] || pin=(taskset -c 0)
    "${pin[@]}" "$mpiexec" -q -np 2 --bind-to none --oversubscribe "$ringscale" "${run[@]}" \
        --label "build=$i" -o "$work/h/" >"$work/launch.log" 2>&1 ||
        { cat "$work/launch.log"; echo "FAIL: launch $i"; exit 1; }
done
echo "12 launches took $((SECONDS - start)) s"
set +e
"$stats" history "$work/h" --order label:build --fail-on regression --format json \
    >"$work/h.json" 2>"$work/h.err"
rc=$?
set -e
cat "$work/h.err"
loaded=$(python3 - "$work/h/ringscale-history.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("SELECT count(*) FROM cases WHERE machine LIKE 'contended: other processes%'")
      .fetchone()[0])
PY
)
if [ "$rc" -ne 1 ] && [ "$loaded" -ge 3 ]; then
    # Other load held the cores during most unbound launches too (their marks say how much: on
    # a machine loaded 15 deep, 1.7 of the 2 cores), so they were as slow as the pinned ones
    # and there is no step to find. The oversubscription's own reading is tested on fixture
    # files (test_history_marks).
    echo "SKIP: $loaded of the 6 unbound launches were contended like the pinned ones" \
        "(other processes on the cores: see their marks); history exited $rc"
    exit 77
fi
[ "$rc" -eq 1 ] || { cat "$work/h.json"; echo "FAIL: exit $rc, want 1 (a regression)"; exit 1; }
grep -q "^ringscale-stats: REGRESSION .*at #7: .*ranks' cores" "$work/h.err" ||
    { echo "FAIL: the regression line does not name the cores"; exit 1; }
python3 - "$work/h.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["changes"]
assert len(rows) == 1, f"want one change: {rows}"
r = rows[0]
assert r["launch"].startswith("#7 of 12"), f"changed at {r['launch']}, want #7"
assert "ranks' cores" in r["moved_with"] and "2 threads on 1 core" in r["moved_with"], \
    f"what moved: {r['moved_with']}"
assert r["verdict"] == "slower", r["verdict"]
print(f"{float(r['change_pct']):+.0f}% at {r['launch']}: {r['moved_with']}")
PY
echo "passed"
