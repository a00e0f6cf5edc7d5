#!/usr/bin/env bash
# --repeat: a launch with --repeat 2 runs its 4 planned cases twice, interleaved (1..4, then
# 1..4 again), each repetition recorded as its own case group with a `repeat` attribute that
# ringscale-stats pools as a replicate (2 launches per case); --resume skips repetitions
# already done; --repeat 0 is bad input.
# usage: repeat.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$mpiexec" -q -np 2 --oversubscribe "$ringscale" --op allreduce,sendrecv -b 1K -e 2K -f 2 \
    -w 1 -n 3 --repeat 2 -o "$work/r.h5" </dev/null >"$work/log" 2>&1 ||
    { cat "$work/log"; fail "the --repeat 2 launch failed"; }
/usr/bin/python3 - "$work/r.h5" <<'PY' || fail "the file does not hold 2 interleaved repetitions"
import sys, h5py
def attrs(g):  # ringscale/1: flat on the case group; later: also in attribute-only subgroups
    out = dict(g.attrs)
    for sub in g.values():
        if isinstance(sub, h5py.Group):
            out.update(sub.attrs)
    return out
with h5py.File(sys.argv[1], "r") as f:
    groups = [attrs(f["cases"][k]) for k in sorted(f["cases"])]
    keys = [f["cases"][k]["case_key"][()] for k in sorted(f["cases"])]
    def ident(a):
        return tuple(str(a.get(k)) for k in ("job", "variant", "op", "bytes", "requested_bytes"))
    reps = [int(a["repeat"]) for a in groups]
    assert reps == [0, 0, 0, 0, 1, 1, 1, 1], reps
    assert [ident(a) for a in groups[:4]] == [ident(a) for a in groups[4:]], "not interleaved"
    assert len(set(ident(a) for a in groups[:4])) == 4, "the 4 planned cases are not distinct"
    assert len(set(keys)) == 8, "repetitions share a --resume key"
    assert all(str(a["status"]) == "ok" for a in groups)
PY
"$stats" summary --format csv "$work/r.h5" >"$work/summary.csv" 2>"$work/err" ||
    { cat "$work/err"; fail "summary of the repeated launch"; }
cases=$(($(wc -l <"$work/summary.csv") - 1))
[ "$cases" = 4 ] || { cat "$work/summary.csv"; fail "summary shows $cases cases, expected 4"; }
col=$(head -1 "$work/summary.csv" | tr ',' '\n' | grep -nx launches | cut -d: -f1)
launches=$(tail -n +2 "$work/summary.csv" | cut -d, -f"$col" | sort -u | tr '\n' ' ')
[ "$launches" = "2 " ] || fail "each case should pool 2 replicates, got '$launches'"

# --resume tells repetitions apart: after --repeat 2, --repeat 3 runs only the third.
run_dir() {
    "$mpiexec" -q -np 2 --oversubscribe "$ringscale" --op allreduce -b 1K -e 2K -f 2 -w 1 -n 3 \
        -o "$work/dir/" "$@" </dev/null 2>/dev/null
}
run_dir --repeat 2 >/dev/null || fail "--repeat 2 into a directory"
run_dir --repeat 3 --resume >"$work/resume.log" || fail "--repeat 3 --resume"
grep -qF -- "--resume: 4 of 6 case(s) already completed" "$work/resume.log" ||
    { cat "$work/resume.log"; fail "--resume does not tell repetitions apart"; }

# Bad input: one line on stderr, exit 2, no results file.
"$mpiexec" -q -np 2 --oversubscribe "$ringscale" --repeat 0 -o "$work/bad" </dev/null \
    >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" = 2 ] || fail "--repeat 0: exit $rc, expected 2"
[ "$(grep -c . "$work/err")" = 1 ] || { cat "$work/err"; fail "--repeat 0: not one line"; }
grep -qF -- "--repeat: 0 is out of range" "$work/err" || fail "--repeat 0: $(cat "$work/err")"
[ -z "$(find "$work/bad" -type f 2>/dev/null)" ] || fail "--repeat 0 left a results file"
echo "repeat: ok"
