#!/usr/bin/env bash
# slurm/nightly.sbatch without Slurm: srun replaced by a stand-in that runs the command after
# `--` under mpiexec -np 1. Two "nights" must land in their own directories with the labels of
# RINGSCALE_LABELS and the Slurm job id, and the history's verdict must end the job (exit 6:
# not decided, two launches are too few to judge; issue 49); a missing argument is one line
# and exit 2.
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
    set +e
    SLURM_JOB_ID=$id RINGSCALE_LABELS="commit=abc$id nccl=2.21" \
        bash "$src/slurm/nightly.sbatch" "$work/h" "$work/job.ini" >"$work/out$id" 2>&1
    rc=$?
    set -e
    [ $rc -eq 6 ] || { cat "$work/out$id"; echo "FAIL: night $id: exit $rc, want 6"; exit 1; }
    ls "$work"/h/*_j$id/*.h5 >/dev/null || { echo "FAIL: night $id not filed"; exit 1; }
done
grep -q "2 launch(es)" "$work/out102" || { cat "$work/out102"; echo "FAIL: history"; exit 1; }
"$stats" history "$work/h" --order label:commit --format csv >"$work/csv" 2>/dev/null
grep -q "commit=abc102 nccl=2.21 slurm_job=102" <(sqlite3 "$work/h/ringscale-history.sqlite" \
    "SELECT meta FROM launches" | python3 -c "
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    print(' '.join(f'{k[6:]}={v}' for k, v in sorted(m.items()) if k.startswith('label.')))") ||
    { echo "FAIL: labels not in /meta"; exit 1; }
set +e
bash "$src/slurm/nightly.sbatch" "$work/h" 2>"$work/err"
rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] || { echo "FAIL: usage: exit $rc"; exit 1; }
echo "passed"
