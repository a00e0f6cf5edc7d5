#!/usr/bin/env bash
# The GPU check of the device event recorder behind --profile and --trace on --device cuda
# (the last phase of tests/gpu/lease.sh), one command for a lent GPU:
#   1. test_cuda_event_recorder_gpu: real CUDA events nest and keep their order on each stream,
#      a kernel of known duration is measured within a bound, a full pool drops and counts, and
#      the recording's cost per span is printed;
#   2. train_step --profile on on the GPU at np=1 (NCCL) and np=2 (staged MPI, the GPU shared),
#      validated, its per-operation table read back by ringscale-stats profile;
#   3. tests/e2e/trace_e2e.py with DEVICE=cuda at np=2: --trace's end-to-end checks (a process
#      per rank, a flow per transfer, each rank's waits against comm_wait_s) on the GPU's
#      events. The launcher refuses --trace on cuda until this check has passed: this script
#      alone lets it run (RINGSCALE_GPU_TRACE_CHECK=1); once it passes on a GPU,
#      cuda_trace_checked in src/launcher/launch_options.cpp becomes true.
# Everything goes into OUT_DIR/trace_gpu.log, a pass/fail line per step at its end and on
# stdout.
# usage: tests/gpu/trace_gpu.sh BUILD_DIR OUT_DIR
# env: PYTHON (with h5py, for step 3; else python3 if it has it), STEP_TIMEOUT (s, 300).
# Exit: 0 every step passed; 1 a step failed; 2 bad usage (one line).
set -uo pipefail
[[ $# -eq 2 && -d $1 ]] || {
    echo "usage: tests/gpu/trace_gpu.sh BUILD_DIR OUT_DIR (BUILD_DIR must exist)" >&2
    exit 2
}
STEP_TIMEOUT=${STEP_TIMEOUT:-300} python=${PYTHON:-python3}
[[ $STEP_TIMEOUT =~ ^[1-9][0-9]{0,4}$ ]] || {
    echo "trace_gpu.sh: STEP_TIMEOUT must be 1..99999 seconds" >&2
    exit 2
}
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd -- "$1" && pwd)
mkdir -p "$2" || { echo "trace_gpu.sh: cannot create $2" >&2; exit 2; }
out=$(cd -- "$2" && pwd)
rs="$build/src/ringscale" stats="$build/analysis/ringscale-stats"
log="$out/trace_gpu.log"
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck source=tests/gpu/steps.sh
source "$here/steps.sh" # step, steps_end

# profiled NP COMM: a validated train_step with --profile on, then its table (every operation
# of the step named, the attention's included).
profiled() {
    local np=$1 comm=$2 f="$out/profile_np$1_$2.h5"
    step "train_step --profile on np=$np --comm $comm" mpirun --bind-to none --oversubscribe \
        -np "$np" "$rs" --job train_step --device cuda --comm "$comm" --validate on -w 1 -n 3 \
        --layers 2 --dp 0 --profile on -o "$f"
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's
    step "ringscale-stats profile np=$np --comm $comm" bash -c \
        '"$1" profile "$2" | tee /dev/stderr | grep -q attention_fwd' _ "$stats" "$f"
}

# 1. The recorder on real events.
step "test test_cuda_event_recorder_gpu" "$build/tests/test_cuda_event_recorder_gpu"
# 2. --profile on on the GPU.
profiled 1 nccl
profiled 2 mpi
# 3. --trace on the GPU's events, end to end (a python with h5py: PYTHON's, else the host's; a
#    host with none fails this step, naming it).
for p in "$python" python3 /usr/bin/python3; do
    "$p" -c 'import h5py' 2>/dev/null && { python=$p; break; }
done
step "trace_e2e.py DEVICE=cuda np=2 ($python)" env DEVICE=cuda NPS=2 \
    RINGSCALE_GPU_TRACE_CHECK=1 "$python" "$here/../e2e/trace_e2e.py" "$rs" "$stats" mpirun \
    "$out/trace"

steps_end
