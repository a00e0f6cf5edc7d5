# Shared by the fault tests: start a launch in the background, find its ranks, time its end,
# and check the file that survived with python3-h5py and ringscale-stats.
# Each test sets: ringscale stats mpiexec work (from its arguments) before sourcing this.
set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
fail=0
check() { # description, command...: run a check, count a failure
    local what=$1
    shift
    if "$@"; then echo "  ok: $what"; else echo "  FAIL: $what"; fail=1; fi
}

# A sweep of growing allreduce cases on 2 ranks, in the background; the large last cases
# take long enough that a test can act mid-sweep. A test may set `sweep` before calling.
# Sets: launch_pid (mpiexec), launch_start. Output: $work/stdout, $work/stderr.
sweep=(-b 256K -e 64M -f 2 -w 1 -n 150)
start_launch() { # np, output, extra options...
    local np=$1 out=$2
    shift 2
    "$mpiexec" -q -np "$np" --oversubscribe --bind-to none "$ringscale" --op allreduce \
        "${sweep[@]}" -o "$out" "$@" >"$work/stdout" 2>"$work/stderr" &
    launch_pid=$!
    launch_start=$(date +%s.%N)
}

# Wait until rank 0 has printed `n` case rows (each one is in the file, flushed).
wait_cases() { # n
    for _ in $(seq 600); do
        [ "$(grep -c '^ *allreduce ' "$work/stdout")" -ge "$1" ] && return 0
        kill -0 "$launch_pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# Process ids of the ranks, in rank order (children of mpiexec, started in rank order).
rank_pids() { pgrep -P "$launch_pid" -f "$ringscale" | sort -n; }

# Wait for the launch to end; sets rc and took_s (from `since`, default the launch start).
# Open MPI 4.1's mpiexec can deadlock in its own shutdown once its ranks have exited (caught
# here after a SIGTERM in about 1 run of 20: PMIx_server_finalize joining PMIx's progress thread,
# which waits on a lock): when no ringscale process is left on this machine, mpiexec gets 30 s,
# then is killed (rc 137), saying so; a test that wants a given exit code then fails, not hangs.
wait_end() { # [since]
    local since=${1:-$launch_start} idle=0
    while kill -0 "$launch_pid" 2>/dev/null; do
        if pgrep -x "$(basename "$ringscale")" >/dev/null; then # any rank, on any node
            idle=0
        elif [ $((idle += 1)) -ge 300 ]; then # 30 s without a rank
            echo "  note: mpiexec still running 30 s after its ranks exited" \
                "(Open MPI's shutdown); killed"
            kill -KILL "$launch_pid" 2>/dev/null
            break
        fi
        sleep 0.1
    done
    wait "$launch_pid"
    rc=$?
    took_s=$(python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.1f}')" \
        "$(date +%s.%N)" "$since")
}

# The one results file the launch left in `dir` (final name or .part).
survivor() { find "$1" -maxdepth 1 -name '*.h5*' | head -n 1; }

# h5py and ringscale-stats both read the surviving file: >= min ok cases, complete=0.
check_survivor() { # file, min_cases
    check "h5py reads $(basename "$1"): complete=0, >= $2 ok cases" \
        /usr/bin/python3 "$here/check_survivor.py" "$1" "$2"
    check "ringscale-stats summary reads it and flags it incomplete" \
        bash -c '"$1" summary "$2" >"$3/summary.txt" && grep -q "incomplete" "$3/summary.txt"' \
        _ "$stats" "$1" "$work"
}

finish() {
    [ "$fail" -eq 0 ] && echo "passed" || { echo "stderr of the launch:"; cat "$work/stderr"; }
    exit "$fail"
}
