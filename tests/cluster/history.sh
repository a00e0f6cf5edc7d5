#!/usr/bin/env bash
# A real regression found by the DEFAULT `ringscale-stats history` on a busy machine (issues 37,
# 49): an emulated cluster of 2 nodes (1 rank each, so every step crosses the links), 14
# launches of a 4 MiB sendrecv and allreduce, each labelled build=N, with a background load of
# about 0.4 core (busy 40 ms of every 100) beside every launch, as on a shared CI machine. From
# launch 9 both links go from 300 to 150 Mbit/s: history with its defaults (marked launches
# kept, their marks weighed by the decision rule) must find the change at #9 (#8 to #10:
# a launch's level under load, below), communication, +90% to +110% in one series at least (load
# only adds, below), and --fail-on regression must exit 1. The first 8 launches alone must give
# no change point in the series the links changed, and exit 0 where they give none at all
# (a level the machine moved inside them is printed: below). At alpha 0.01 no permutation test
# can find a change
# in 8 launches (the best p of a two-level series of 4 + 4 is 2/70), so this
# history is judged at --alpha 0.05, where steps from about 2x are detectable. (Before issue
# 49 the load's marks left 11 of 14 sendrecv launches out and the default history exited 0.)
# The host's own load can move a level by a launch or two: a failed attempt is printed and the
# experiment (14 launches from clean links) runs once more; both must fail for the test to fail.
# Skips (77) without namespaces.
# usage: history.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR   (as root)
set -euo pipefail
ringscale=$1 stats=$2 mpiexec=$3 work=$4
source "$(dirname -- "$0")/lib.sh"
rm -rf "$work" && mkdir -p "$work"
cluster_up 2 300mbit 1
python3 -c '
import time
while True:  # about 0.4 core: busy 40 ms of every 100
    end = time.monotonic() + 0.04
    while time.monotonic() < end:
        pass
    time.sleep(0.06)' &
load_pid=$!
cluster_before_down() { kill "$load_pid" 2>/dev/null || true; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_mpi_yield_when_idle=1
cases=(--job collectives --op sendrecv,allreduce -b 4M -e 4M -w 1 -n 5 --timeout 60)
launch() { # build
    "$mpiexec" -q --hostfile "$RSC_HOSTFILE" -np 2 --map-by node --bind-to none \
        "$ringscale" "${cases[@]}" --label "build=$1" -o "$work/all/" >"$work/launch.log" 2>&1 ||
        { cat "$work/launch.log"; echo "FAIL: launch $1"; exit 1; }
    sleep 1 # distinct launch times (seconds)
}
attempt() { # one experiment: 14 launches, the links halved from the 9th, and every check
rm -rf "$work/all" "$work/first8" && mkdir -p "$work/all" "$work/first8"
"$cluster" shape "$cluster_id" 0 300mbit
"$cluster" shape "$cluster_id" 1 300mbit
start=$SECONDS
for i in $(seq 1 14); do
    if [ "$i" -eq 9 ]; then
        "$cluster" shape "$cluster_id" 0 150mbit
        "$cluster" shape "$cluster_id" 1 150mbit
    fi
    launch "$i"
    [ "$i" -gt 8 ] || cp "$(ls -t "$work"/all/*.h5 | head -1)" "$work/first8/"
done
echo "14 launches took $((SECONDS - start)) s"

set +e
"$stats" history "$work/all" --order label:build --fail-on regression --format json \
    >"$work/all.json" 2>"$work/all.err"
rc=$?
set -e
cat "$work/all.err"
[ "$rc" -eq 1 ] || { cat "$work/all.json"; echo "FAIL: the halved links: exit $rc, want 1"; exit 1; }
python3 - "$work/all.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
marked = sum(s["marked"] for s in j["series"])
print(f"{marked} case launch(es) of 28 marked, kept and weighed by the decision rule")
rows = j["changes"]
assert len(j["series"]) == 2, f"{len(j['series'])} series, want 2"
# The 4 MiB allreduce's time over shaped links comes in discrete levels (issue 37's runs: its
# slow level can start a launch late, or not show at all in 14 launches on a busy machine;
# one CI-like run here found it at #10 and no sendrecv change), so the change must be found
# in at least one series, each change found within one launch of #9 (#10: the level's late
# start still leaves a segment of 3; #8: in a CI run (the test runs alone, RUN_SERIAL) launch
# 8's sendrecv measured at the slow level under the machine's own load, before the links
# changed, and the best split then puts the change one launch early: no method can tell that
# launch from the new level), and no series changed twice.
names = [r["series"] for r in rows]
assert rows and len(set(names)) == len(names), f"want a change, once a series: {rows}"
# The halved link doubles a transfer's time: +90% to +110% in at least one series. Load can only
# add to it: beside a second busy loop (the README's test command run beside 0.5 core) the
# sendrecv changed by +287% at #9 while the allreduce changed by +98%, so every other change
# must be at least +90%.
exact = []
for r in rows:
    assert r["launch"].startswith(("#8 of 14", "#9 of 14", "#10 of 14")), \
        f"{r['series']}: changed at {r['launch']}, want #9 (#8 to #10)"
    pct = float(r["change_pct"])
    assert pct >= 90, f"{r['series']}: change {pct:+.1f}%, want +90% or more (+100%: the link)"
    exact.append(pct <= 110)
    assert r["moved"] == "communication", f"{r['series']}: {r['moved']} moved"
    assert r["verdict"] == "slower", f"{r['series']}: verdict {r['verdict']}"
    print(f"{r['series'].split()[0]}: {pct:+.1f}% at {r['launch']}, communication, "
          f"with it: {r['moved_with']}")
assert any(exact), f"no series changed by +90% to +110% (the halved link): {rows}"
PY
set +e
"$stats" history "$work/first8" --order label:build --alpha 0.05 --fail-on regression \
    --format json >"$work/first8.json" 2>"$work/first8.err"
rc=$?
set -e
cat "$work/first8.err"
# The series whose change the 14 launches showed at #8-#10 have none in the first 8: the change
# is the links'. Where the first 8 have no change at all, history exits 0. A series whose level
# moved inside the first 8 (a clean-clone run beside a niced build: the sendrecv +93% at #4,
# which the 14 launches then showed as one slower level, no change at #9) is the machine's,
# and its regression exit is allowed only then, printed.
python3 - "$work/all.json" "$work/first8.json" "$rc" <<'PY'
import json, sys
full, first8, rc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
changed = {r["series"] for r in full["changes"]}
early = {r["series"]: r for r in first8["changes"]}
for name in changed:
    assert name not in early, f"the first 8 launches change where the 14 do: {early[name]}"
if early:
    assert rc == 1, f"the first 8 launches: exit {rc} with changes, want 1"
    for name, r in early.items():
        print(f"{name.split()[0]}: the machine moved it inside the first 8 "
              f"({float(r['change_pct']):+.1f}% at {r['launch']}); not a series the links changed")
else:
    assert rc == 0, f"the first 8 launches: exit {rc}, want 0"
for s in first8["series"]:
    print(f"{s['series'].split()[0]}: {s['launches']} launches, detectable {s['detectable_pct']}")
PY
}
# The experiment measures a shaped link on a shared machine: the host's own load can move a
# level by a launch or two (a clean-clone CI run: the sendrecv's change at #7, the allreduce's
# +138.6% at #9). One failed attempt is printed and the whole experiment runs once more; the
# test fails when both fail (a method that misplaces the links' change does so every time).
set +e
(set -e; attempt)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "attempt 1 failed (above): the experiment once more, from launch 1"
    (set -e; attempt)
    rc=$?
fi
set -e
[ "$rc" -eq 0 ] || { echo "FAIL: both attempts"; exit 1; }
echo "passed"
