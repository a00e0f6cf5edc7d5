#!/usr/bin/env bash
# slurm/sweep without Slurm: --help documents --nodes and --tasks-per-node; each bad invocation
# is one line on stderr and exit 2, submitting nothing (counts over the caps included);
# --dry-run --nodes 1,2,4 --tasks-per-node 2 prints the study as a script, one sbatch per node
# count with that shape, then the report job after $JOB1:$JOB2:$JOB3: no invented job ids, and
# the output directory is not created.
# usage: sweep_cli.sh SOURCE_DIR RINGSCALE WORKDIR
src=$1 ringscale=$2 work=$3
sweep=$src/slurm/sweep
rm -rf "$work" && mkdir -p "$work"
job=$src/jobs/presets/quick.ini
fail=0
check() { # what, command...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
bad() { # args...: one line on stderr, exit 2, nothing on stdout
    "$sweep" "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && [ ! -s "$work/out" ]; then
        echo "ok: bad input ($*): $(cat "$work/err")"
    else
        echo "FAIL: bad input ($*): exit $rc, stderr:"; cat "$work/err"; fail=1
    fi
}
check "--help names --nodes and --tasks-per-node" \
    bash -c '"$1" --help | grep -q -- "--nodes N1,N2,...: one launch per node count, --tasks-per-node"' _ "$sweep"
bad --nodes 0 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1,,2 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1,2 --tasks-per-node 0 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1,2 --tasks-per-node two -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --ntasks 2 --tasks-per-node 2 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1 --ntasks 2 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1 -o "$work/s" --ringscale "$ringscale" --dry-run
bad --nodes 1 -o "$work/s" --ringscale "$ringscale" --dry-run "$work/missing.ini"
bad --nodes 1 -o "$work/s" --ringscale "$work/missing" --dry-run "$job"
bad --nodes 1 --repeat 100000 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --ntasks 99999999999999999999 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 1,2 --repeat 600 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"
bad --nodes 2 --tasks-per-node 5000 -o "$work/s" --ringscale "$ringscale" --dry-run "$job"

"$sweep" --nodes 1,2,4 --tasks-per-node 2 -o "$work/s" --ringscale "$ringscale" --dry-run \
    "$job" >"$work/plan" 2>"$work/err"
check "dry run exits 0" test $? -eq 0
check "dry run: nothing on stderr" test ! -s "$work/err"
check "dry run creates nothing" test ! -e "$work/s"
check "dry run invents no job id" bash -c '! grep -Eq "^submitted|job [0-9]" "$1"' _ "$work/plan"
for n in 1 2 4; do
    check "dry run plans $n node(s) x 2 tasks" grep -q -- "--nodes=$n --ntasks-per-node=2 " "$work/plan"
done
check "then the report job, after all three" \
    grep -qF -- '"--dependency=afterany:$JOB1:$JOB2:$JOB3"' "$work/plan"
check "four jobs in all" test "$(grep -c '^JOB[0-9]=$(sbatch ' "$work/plan")" -eq 4
[ "$fail" -eq 0 ] && echo passed
exit "$fail"
