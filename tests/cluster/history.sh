#!/usr/bin/env bash
# A real regression found by the DEFAULT `ringscale-stats history` on a busy machine: an
# emulated cluster of 2 nodes (1 rank each, so every step crosses the links), 14 launches
# of a 4 MiB broadcast and sendrecv, each labelled build=N, with a background load of
# about 0.4 core (busy 40 ms of every 100) beside every launch, as on a shared CI machine. From
# launch 9 both links go from 300 to 150 Mbit/s: history with its defaults (marked launches
# kept, their marks weighed by the decision rule) must find the broadcast's change at #9 (#8 to
# #10: a launch that straddles a slow spell of the host), communication, +90% to +125%, and
# --fail-on regression must exit 1. The first 8 launches alone must give no change point in the
# broadcast, and exit 0 where they give none at all. At alpha 0.01 no permutation test can find
# a change in 8 launches (the best p of a two-level series of 4 + 4 is 2/70), so the first 8
# are judged at --alpha 0.05, where steps from about 2x are detectable. (Were marked launches
# left out, the load's marks would leave 11 of 14 sendrecv launches out and history exit 0.)
#
# Why the broadcast is the series placed: it sends one way, so its time is the link's (0.117 s
# at 300 Mbit/s, 0.234 s at 150, every iteration of 6 launches beside 1.4 cores of load). A
# transfer both ways at once (sendrecv, allreduce) comes in discrete levels here: the two
# directions run together, or one after the other for a few iterations (sendrecv 1.5x or 2x,
# allreduce 2x; the same with a 10 ms queue or with the ACKs given priority, so not the emulated
# links), more often under load. Its launch median then moves by the very 2x of the links (a
# clean-clone CI run: the sendrecv's level changed at #6; the retry, under heavier load, saw
# noise of 69% and no change), and no method can say which 2x is the links'. The sendrecv stays
# as the hard series: its 14 launches kept, marked and judged; its changes, in the 14 or the
# first 8, are printed.
# One failed attempt is printed and the experiment (14 launches from clean links) runs once
# more; both must fail for the test to fail. Skips (77) without namespaces.
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
cases=(--job collectives --op broadcast,sendrecv -b 4M -e 4M -w 1 -n 5 --timeout 60)
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
assert all(s["launches"] == 14 for s in j["series"]), "every launch kept in both series"
bcast = [r for r in rows if r["series"].startswith("collectives/broadcast")]
assert len(bcast) == 1, f"want the broadcast's change, once: {rows}"
for r in rows:
    name = r["series"].split()[0]
    if r is bcast[0]:
        pct = float(r["change_pct"])
        assert r["launch"].startswith(("#8 of 14", "#9 of 14", "#10 of 14")), \
            f"{name}: changed at {r['launch']}, want #9 (#8 to #10)"
        # The halved link doubles a one-way transfer: +100%; load can only add to a median.
        assert 90 <= pct <= 125, f"{name}: change {pct:+.1f}%, want +90% to +125% (the link)"
        assert r["moved"] == "communication", f"{name}: {r['moved']} moved"
        assert r["verdict"] == "slower", f"{name}: verdict {r['verdict']}"
    # The sendrecv's changes (its levels, the links, or both) are printed, not placed.
    print(f"{name}: {float(r['change_pct']):+.1f}% at {r['launch']}, {r['moved']}, "
          f"{r['verdict']}, with it: {r['moved_with']}")
PY
set +e
"$stats" history "$work/first8" --order label:build --alpha 0.05 --fail-on regression \
    --format json >"$work/first8.json" 2>"$work/first8.err"
rc=$?
set -e
cat "$work/first8.err"
# The broadcast has no change in the first 8, and is judged: its change is the links'. The exit
# follows the sendrecv alone: 1 where a level the machine moved inside the 8 launches is slower
# at the end (printed), 6 where its levels left it undecided, else 0 (a clean-clone CI run: the
# sendrecv faster at its last change, exit 0).
python3 - "$work/first8.err" "$work/first8.json" "$rc" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
first8, rc = json.load(open(sys.argv[2])), int(sys.argv[3])
verdicts = [l for l in lines
            if l.startswith(("ringscale-stats: REGRESSION", "ringscale-stats: not decided"))]
assert not any("collectives/broadcast" in l for l in verdicts), f"the broadcast: {verdicts}"
early = {r["series"]: r for r in first8["changes"]}
for name, r in early.items():
    assert not name.startswith("collectives/broadcast"), \
        f"the first 8 launches change the broadcast: {r}"
    print(f"{name.split()[0]}: the machine moved its level inside the first 8 "
          f"({float(r['change_pct']):+.1f}% at {r['launch']}, {r['verdict']})")
want = 1 if any("REGRESSION" in l for l in verdicts) else 6 if verdicts else 0
assert want != 1 or early, f"a regression with no change point: {verdicts}"
assert rc == want, f"the first 8 launches: exit {rc}, want {want} ({verdicts})"
for s in first8["series"]:
    print(f"{s['series'].split()[0]}: {s['launches']} launches, detectable {s['detectable_pct']}")
PY
}
# The experiment measures a shaped link on a shared machine: the host's own load can stall a
# launch. One failed attempt is printed and the whole experiment runs once more; the test fails
# when both fail (a method that misplaces the links' change does so every time).
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
