#!/usr/bin/env bash
# SIGTERM or SIGINT in the first moments of a launch (MPI start-up, parsing, planning),
# before its guard is in place: the rank says why it stops and exits 4, as later
# in a launch, instead of dying silently by the signal (exit 143); no results file is left.
# A singleton launch (no mpiexec: the signal reaches the rank itself) is signalled as soon as
# it catches the signal (its first instructions; before, it would have died by it), then 0.1
# and 0.2 s after that. (Killing ranks inside MPI_Init under mpiexec can hang Open MPI's
# mpiexec itself, so the test does not.)
# usage: sigterm_early.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
source "$(dirname -- "$0")/lib.sh"
# Wait until process `pid` catches signal number `n` (its SigCgt mask in /proc).
wait_caught() { # pid n
    for _ in $(seq 500); do
        local mask
        mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
        [ -n "$mask" ] && (((16#$mask >> ($2 - 1)) & 1)) && return 0
        sleep 0.002
    done
    return 1
}
early=0
for signal in TERM INT; do
    number=$(kill -l "$signal")
    for delay in 0 0.1 0.2; do
        out=$work/${signal}_$delay
        mkdir -p "$out"
        "$ringscale" --op allreduce -b 1K -e 1K -o "$out/" >"$out.stdout" 2>"$out.stderr" &
        pid=$!
        wait_caught "$pid" "$number" || echo "  (SIG$signal never caught before the launch ended)"
        sleep "$delay"
        kill -"$signal" "$pid"
        wait "$pid"
        rc=$?
        echo "SIG$signal after $delay s: exit $rc; stderr: $(head -c 200 "$out.stderr")"
        check "exit code 4, not a death by the signal" test "$rc" -eq 4
        check "a line says SIG$signal stopped it" grep -q "SIG$signal received" "$out.stderr"
        if grep -q "before any case ran" "$out.stderr"; then
            early=$((early + 1))
            check "no results file left" test -z "$(find "$out" -name '*.h5*')"
        fi
    done
done
# At least one signal must have landed in the early window, or the test proved nothing.
check "$early signal(s) arrived before the guard" test "$early" -ge 1
finish
