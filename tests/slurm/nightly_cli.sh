#!/usr/bin/env bash
# slurm/nightly.sbatch without Slurm. First as a Slurm job: srun replaced by a stand-in that
# runs the command after `--` under mpiexec -np 1; two "nights" land in their own directories
# with the labels of RINGSCALE_LABELS and the Slurm job id, and the history's verdict ends the
# job (exit 6: not decided, two launches are too few to judge); with RINGSCALE_REPORT_DIR the
# second night also writes report.html there. Then as the cron recipe of analysis/README.md,
# with plain mpirun and no srun on PATH: two nights on one day get a directory each, the job's
# exit status is the history's `--fail-on regression` verdict (0 no regression, 1 a
# regression, 6 not decided), each named by its own line; a failed launch leaves no empty
# directory. A missing argument is one line and exit 2.
# usage: nightly_cli.sh SOURCE_DIR RINGSCALE RINGSCALE_STATS WORKDIR
set -euo pipefail
src=$1 ringscale=$2 stats=$3 work=$4
rm -rf "$work" && mkdir -p "$work/bin"
cat >"$work/bin/srun" <<'SRUN'
#!/usr/bin/env bash
while [ "$1" != "--" ]; do shift; done
shift
exec mpiexec --oversubscribe --bind-to none -np 1 "$@"
SRUN
chmod +x "$work/bin/srun"
export PATH="$work/bin:$PATH" RINGSCALE=$ringscale RINGSCALE_STATS=$stats
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
printf 'job = collectives\nop = allreduce\nmin-bytes = 1K\nmax-bytes = 1K\niters = 3\nwarmup = 1\n' \
    >"$work/job.ini"
for id in 101 102; do
    report_dir=""
    [ $id = 101 ] || report_dir="$work/site"
    set +e
    SLURM_JOB_ID=$id RINGSCALE_LABELS="commit=abc$id nccl=2.21" RINGSCALE_REPORT_DIR=$report_dir \
        bash "$src/slurm/nightly.sbatch" "$work/h" "$work/job.ini" >"$work/out$id" 2>&1
    rc=$?
    set -e
    [ $rc -eq 6 ] || { cat "$work/out$id"; echo "FAIL: night $id: exit $rc, want 6"; exit 1; }
    ls "$work"/h/*_j$id/*.h5 >/dev/null || { echo "FAIL: night $id not filed"; exit 1; }
done
grep -q "2 launch(es)" "$work/out102" || { cat "$work/out102"; echo "FAIL: history"; exit 1; }
grep -q 'id="history"' "$work/site/report.html" ||
    { cat "$work/out102"; echo "FAIL: no report.html with its History"; exit 1; }
"$stats" history "$work/h" --order label:commit --format csv >"$work/csv" 2>/dev/null
grep -q "commit=abc102 nccl=2.21 slurm_job=102" <(sqlite3 "$work/h/ringscale-history.sqlite" \
    "SELECT meta FROM launches" | python3 -c "
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    print(' '.join(f'{k[6:]}={v}' for k, v in sorted(m.items()) if k.startswith('label.')))") ||
    { echo "FAIL: labels not in /meta"; exit 1; }
# The cron recipe without Slurm, twice on one day (as analysis/README.md writes it, with
# mpirun's options for a root container on few cores).
mkdir -p "$work/nobin" && ln -sf "$(command -v mpirun || command -v mpiexec)" "$work/nobin/mpirun"
nosl=(env -u SLURM_JOB_ID -u SLURM_JOB_PARTITION PATH="$work/nobin:/usr/bin:/bin"
      RINGSCALE_MPIRUN_ARGS="--oversubscribe --bind-to none")
for night in 1 2; do
    set +e
    (cd -- "$src" && "${nosl[@]}" RINGSCALE_NP=2 slurm/nightly.sbatch "$work/local" "$work/job.ini") \
        >"$work/local$night.out" 2>&1
    rc=$?
    set -e
    [ "$(ls -d "$work"/local/*_local.* | wc -l)" -eq "$night" ] ||
        { cat "$work/local$night.out"; echo "FAIL: local night $night: not in a directory of its own"; exit 1; }
    set +e
    "$stats" history "$work/local" --fail-on regression >/dev/null 2>&1
    want=$?
    set -e
    [ $rc -eq $want ] || { cat "$work/local$night.out"; echo "FAIL: local night $night: exit $rc, history says $want"; exit 1; }
    case $rc in
    0) grep -q "^nightly.sbatch: verdict: no regression (exit 0)" "$work/local$night.out" ;;
    6) grep -q "^nightly.sbatch: verdict: not decided (exit 6" "$work/local$night.out" ;;
    *) false ;;
    esac || { cat "$work/local$night.out"; echo "FAIL: local night $night: exit $rc, verdict line"; exit 1; }
done
ls "$work"/local/*_local.*/*.h5 | wc -l | grep -qx 2 || { echo "FAIL: two local launches"; exit 1; }
# The verdict's codes, each with its own line (the history stood in by a script).
for code in 1 6 2; do
    printf '#!/bin/sh\nexit %s\n' "$code" >"$work/stats$code" && chmod +x "$work/stats$code"
    set +e
    (cd -- "$src" && "${nosl[@]}" RINGSCALE_STATS="$work/stats$code" slurm/nightly.sbatch \
        "$work/local" "$work/job.ini") >"$work/code.out" 2>&1
    rc=$?
    set -e
    [ $rc -eq $code ] || { cat "$work/code.out"; echo "FAIL: verdict $code: exit $rc"; exit 1; }
    line=$(tail -1 "$work/code.out")
    case $code in
    1) [[ $line == "nightly.sbatch: verdict: REGRESSION (exit 1)" ]] ;;
    6) [[ $line == "nightly.sbatch: verdict: not decided (exit 6"* ]] ;;
    2) [[ $line == "nightly.sbatch: the history failed (exit 2)" ]] ;;
    esac || { echo "FAIL: verdict $code: '$line'"; exit 1; }
done
# A launch that fails leaves no empty directory.
before=$(ls "$work/local" | wc -l)
set +e
(cd -- "$src" && "${nosl[@]}" RINGSCALE=/bin/false slurm/nightly.sbatch "$work/local" "$work/job.ini") \
    >"$work/fail.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] && [ "$(ls "$work/local" | wc -l)" -eq "$before" ] ||
    { cat "$work/fail.out"; ls "$work/local"; echo "FAIL: a failed launch: exit $rc, directory left"; exit 1; }

# A night that hangs (its cases repeated far longer than its limit allows, the first done) is
# ended at the limit with
# SIGTERM: its file kept (complete=0), named partial and not counted by the history, and the
# job exits 6, "not decided: night cut at N s".
printf 'job = collectives\nop = allreduce\nmin-bytes = 1K\nmax-bytes = 1K\niters = 20000\nwarmup = 1\n' \
    >"$work/hang.ini"
series_launches() { # launches counted in the history's series, all series together
    "$stats" history "$1" --format json 2>/dev/null |
        python3 -c "import json, sys; print(sum(int(r['launches']) for r in json.load(sys.stdin)['series']))"
}
launches_before=$(series_launches "$work/local")
set +e
(cd -- "$src" && "${nosl[@]}" RINGSCALE_NP=2 RINGSCALE_TIME_LIMIT=5 slurm/nightly.sbatch \
    "$work/local" "$work/hang.ini" --repeat 1000) >"$work/hang.out" 2>&1
rc=$?
set -e
[ $rc -eq 6 ] && grep -q "^nightly.sbatch: verdict: not decided: night cut at 5 s (exit 6)" "$work/hang.out" ||
    { cat "$work/hang.out"; echo "FAIL: a night past its limit: exit $rc, want 6 and its line"; exit 1; }
# The partial launch is named and left out: its file readable, closed with complete=0.
grep -q "1 partial launch(es) (stopped before their end, complete=0) left out of every series" \
    "$work/hang.out" || { cat "$work/hang.out"; echo "FAIL: the partial launch is not named"; exit 1; }
! grep -q "not a readable HDF5 file" "$work/hang.out" ||
    { cat "$work/hang.out"; echo "FAIL: a file the history could not read"; exit 1; }
hung=$(ls -t "$work"/local/*_local.*/*.h5 | head -1)
h5dump -a /complete "$hung" | grep -q "(0): 0" ||
    { echo "FAIL: the cut launch's file $hung is not kept with complete=0"; exit 1; }
launches_after=$(series_launches "$work/local")
[ "$launches_before" = "$launches_after" ] ||
    { echo "FAIL: the partial launch counted ($launches_before -> $launches_after)"; exit 1; }

set +e
bash "$src/slurm/nightly.sbatch" "$work/h" 2>"$work/err"
rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] || { echo "FAIL: usage: exit $rc"; exit 1; }
echo "passed"
