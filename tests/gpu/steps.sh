# shellcheck shell=bash
# Sourced by the GPU check scripts (train_models.sh, trace_gpu.sh) once their $log and
# $STEP_TIMEOUT are set: step runs one check into the log and keeps its pass/fail line;
# steps_end prints every line (log and stdout) and exits 0 when all passed, else 1.
summary=() failed=0

# step NAME CMD...: run CMD under the step timeout, its output into the log; pass on exit 0.
step() {
    local name=$1 rc
    shift
    printf '\n===== %s\n$ %s\n' "$name" "$*" >>"$log"
    timeout -k 5 "$STEP_TIMEOUT" "$@" </dev/null >>"$log" 2>&1
    rc=$?
    summary+=("$([[ $rc -eq 0 ]] && echo PASS || echo FAIL) (exit $rc) $name")
    [[ $rc -eq 0 ]] || failed=1
}

steps_end() {
    printf '\n===== summary\n' >>"$log"
    printf '%s\n' "${summary[@]}" | tee -a "$log"
    exit "$failed"
}
