#!/usr/bin/env bash
# A disk that fills mid-sweep, and limits known before any work.
#  1. mid-sweep: the output directory is a 16 MiB tmpfs, filled by another writer after two
#     cases (where mounting is not permitted, rank 0's file-size limit is lowered instead,
#     with prlimit); the launch stops at the failing case with an error naming the file and
#     the case, within 10 s, and the earlier cases stay whole in a file marked incomplete.
#  2. before work: a file-size limit (ulimit -f) too small for the sweep: exit 2 at once,
#     one line on stderr, no results file.
# usage: disk_full.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
mnt=$work/tmpfs
if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt"; fi
rm -rf "$work" && mkdir -p "$mnt"
source "$(dirname -- "$0")/lib.sh"
mounted=0
if mount -t tmpfs -o size=16m ringscale-test "$mnt" 2>/dev/null; then
    mounted=1
    trap 'umount "$mnt" 2>/dev/null' EXIT
fi

echo "1. disk full mid-sweep ($([ $mounted = 1 ] && echo "16 MiB tmpfs, filled" || echo "prlimit --fsize on rank 0: mount not permitted"))"
start_launch 2 "$mnt/"
check "two cases completed before the disk filled" wait_cases 2
if [ "$mounted" = 1 ]; then
    dd if=/dev/zero of="$mnt/filler" bs=64k status=none 2>/dev/null # until ENOSPC
else
    part=$(find "$mnt" -name '*.h5.part')
    prlimit --pid "$(rank_pids | head -n 1)" --fsize="$(stat -c %s "$part")"
fi
filled=$(date +%s.%N)
wait_end "$filled"
echo "  ended ${took_s} s after the disk filled, exit code $rc"
sed 's/^/  stderr: /' "$work/stderr" | grep -v '^  stderr: \[case'
check "exit code non-zero" test "$rc" -ne 0
check "ended within 10 s" python3 -c "import sys; sys.exit(float('$took_s') > 10)"
check "the error names the case and the file" \
    grep -Eq "cannot write case [0-9]+ to '.*\.h5\.part': (no space left|file too large)" \
    "$work/stderr"
rm -f "$mnt/filler"
file=$(survivor "$mnt")
check "a results file survived" test -n "$file"
[ -n "$file" ] && check_survivor "$file" 2

echo "2. file-size limit too small for the sweep, known before work"
rm -rf "$work/small" && mkdir -p "$work/small"
# The limit is set in each rank only, and the ranks talk over TCP: Open MPI's and PMIx's
# shared-memory files would not fit. 256 KiB: the metadata fits, the sweep's cases do not.
timeout 30 "$mpiexec" -q -np 2 --oversubscribe --mca btl self,tcp bash -c 'ulimit -f 256 && exec "$0" "$@"' \
    "$ringscale" --op allreduce -b 1K -e 1M -f 2 -n 2000 -o "$work/small/" \
    >"$work/stdout" 2>"$work/stderr"
rc=$?
echo "  exit code $rc; stderr: $(cat "$work/stderr")"
check "exit code 2" test "$rc" -eq 2
check "one line on stderr naming the limit" \
    bash -c '[ "$(grep -c . "$1")" -eq 1 ] && grep -q "file too large" "$1"' _ "$work/stderr"
check "no results file" test -z "$(find "$work/small" -name '*.h5*')"
finish
