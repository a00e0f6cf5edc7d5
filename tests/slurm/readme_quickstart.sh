#!/usr/bin/env bash
# The README's Slurm GPU quick start, run as written on a real Slurm started on this machine
# (tests/slurm/lib.sh) and checked against the output the README shows
# (tests/e2e/quickstart_lib.sh): slurm/sweep --ntasks 1,2,4 --gpus-per-task=1 on a node that
# offers 4 stand-in GPUs, so Slurm grants them and sets CUDA_VISIBLE_DEVICES as on a GPU
# cluster. The stand-ins run nothing: the ranks run with --device cpu --comm mpi in place of
# --device cuda --comm nccl. Then, once the launches and the report job have ended, the quick
# start that reads the study. The daemons it started are stopped by process id on exit.
#
# usage: readme_quickstart.sh BUILD_DIR SOURCE_DIR OUT_DIR   (as root)
set -euo pipefail
build=$1 src=$2 out=$3
source "$src/tests/slurm/lib.sh"
source "$src/tests/e2e/quickstart_lib.sh"
trap 'rc=$?; slurm_stop "$rc"; exit "$rc"' EXIT
slurm_begin
host=$(hostname -s)
slurm_config "$host" 127.0.0.1 4 "$host:127.0.0.1"
slurm_gpu_standins 4
slurm_start_ctld
slurm_start_slurmd "$host"
slurm_wait_idle "$host"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export RINGSCALE_CPU_BIND=none # the node's 4 CPUs are this machine's cores, overcommitted
export HOME=$out/home          # where the quick start writes its study
quickstart_setup "$src" "$build" "$out"
mkdir -p "$HOME"
quickstart_run slurm "--device cuda --comm nccl" "--device cpu --comm mpi"

mapfile -t ids < <(sed -n 's/^submitted .*: job \([0-9]*\).*/\1/p' slurm.out)
[ "${#ids[@]}" -eq 4 ] || { echo "FAIL: expected 4 job ids (3 launches, the report)"; exit 1; }
slurm_wait_limit=480 slurm_wait_jobs "${ids[@]}"
for id in "${ids[@]}"; do
    [ "$(slurm_job_state "$id")" = COMPLETED ] ||
        { echo "FAIL: job $id ended $(slurm_job_state "$id")"; exit 1; }
done
# --gpus-per-task=1 reached the launches: each recorded one visible GPU per rank.
/usr/bin/python3 - "$HOME/studies/gpu" <<'PY' || exit 1
import glob, os, sys
import h5py
files = sorted(glob.glob(os.path.join(glob.escape(sys.argv[1]), "*.h5")))
assert len(files) == 3, files
for path in files:
    with h5py.File(path, "r") as f:
        meta = f["meta"].attrs
        visible = meta["cuda_visible_devices"]
        visible = visible.decode() if isinstance(visible, bytes) else str(visible)
        assert len(visible.split(",")) == int(meta["jobsize"]), (path, visible)
        print(f"{os.path.basename(path)}: {meta['jobsize']} rank(s), CUDA_VISIBLE_DEVICES={visible}")
PY
quickstart_run slurm-read
echo "slurm readme quickstart: passed"
