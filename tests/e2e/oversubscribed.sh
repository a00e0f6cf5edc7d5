#!/usr/bin/env bash
# Two ranks whose affinities together hold one core (taskset -c 0) are warned about at launch
# and their case is marked "oversubscribed: 2 threads on 1 core" in the file (outcome
# contended, /meta warnings) and in ringscale-stats' views. The mark is the launch's own doing,
# so it holds whatever else loads the machine. Also the plain `taskset -c 0 mpirun -np 2`
# (Open MPI binds each rank to a core of its own choosing unless --bind-to none): its file is
# marked exactly when its ranks' recorded cores are one core.
# usage: oversubscribed.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4
if ! command -v taskset >/dev/null || ! taskset -c 0 true 2>/dev/null; then
    echo "skipped: taskset cannot restrict this process to core 0"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
run=(--job collectives --op sendrecv -b 1M -e 1M -w 1 -n 4)
fails=0
fail() { echo "FAILED: $*"; fails=1; }
attr() { h5dump -a "$2" "$1" 2>/dev/null | sed -n 's/^ *(0): //p' | head -1; }

taskset -c 0 "$mpiexec" -q -np 2 --bind-to none "$ringscale" "${run[@]}" -o "$work/one.h5" \
    >"$work/one.out" 2>"$work/one.err" || { cat "$work/one.err"; exit 1; }
grep -q 'warning: oversubscribed: 2 rank(s) x 1 thread(s) = 2 threads on 1 core(s)' \
    "$work/one.err" || fail "no oversubscription warning at launch: $(cat "$work/one.err")"
[ "$(attr "$work/one.h5" /cases/0000/outcome/contended)" = 1 ] || fail "case not contended"
[ "$(attr "$work/one.h5" /cases/0000/outcome/contention)" = '"oversubscribed: 2 threads on 1 core"' ] ||
    fail "contention is $(attr "$work/one.h5" /cases/0000/outcome/contention)"
attr "$work/one.h5" /meta/warnings | grep -q 'oversubscribed: 2 rank(s)' ||
    fail "/meta warnings lacks the warning"
"$stats" summary "$work/one.h5" >"$work/summary.txt" 2>&1
grep -q 'contended 1/1 (contended: oversubscribed: 2 threads on 1 core)' "$work/summary.txt" ||
    fail "summary does not show the mark: $(cat "$work/summary.txt")"

# `taskset -c 0 mpirun -np 2` as written: marked exactly when the ranks' cores together are one.
taskset -c 0 "$mpiexec" -q -np 2 "$ringscale" "${run[@]}" -o "$work/as_written.h5" \
    >/dev/null 2>"$work/as_written.err" || { cat "$work/as_written.err"; exit 1; }
cores=$(h5dump -d /cases/0000/affinity_list "$work/as_written.h5" | sed -n 's/^ *(0): //p')
contention=$(attr "$work/as_written.h5" /cases/0000/outcome/contention)
if [ "$cores" = '"0", "0"' ]; then
    [ "$contention" = '"oversubscribed: 2 threads on 1 core"' ] ||
        fail "ranks on core 0 alone, contention $contention"
else
    case "$contention" in *oversubscribed*) fail "ranks on cores $cores marked $contention" ;; esac
fi
[ "$fails" -eq 0 ] && echo "oversubscription ok: $(grep warning "$work/one.err" | cut -c1-100); as written: cores $cores"
exit "$fails"
