#!/usr/bin/env bash
# The space check covers the file's metadata: a 120 KB command line (and the
# config that repeats it) onto a 200 KiB tmpfs is refused before any work with one line, exit
# 2 and no file. Before, the launch started, failed in H5Fflush with exit 3 and left an
# unreadable 253 KB .part filling the disk. (A disk that fills while the file is created
# anyway: tests/test_results_writer_full.cpp.) Exit 77 (skipped) where tmpfs cannot be mounted.
# usage: disk_full_meta.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
ringscale=$1 stats=$2 mpiexec=$3 work=$4
mnt=$work/tmpfs
if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt"; fi
rm -rf "$work" && mkdir -p "$mnt"
source "$(dirname -- "$0")/lib.sh"
if ! mount -t tmpfs -o size=200k ringscale-test "$mnt" 2>/dev/null; then
    echo "skipped: mounting a tmpfs is not permitted here (needs root)"
    exit 77
fi
trap 'umount "$mnt" 2>/dev/null' EXIT
# 120 KB of leading zeros: a valid --seed (1) that makes the command line and config long.
seed=$(printf '0%.0s' $(seq 120000))1
start=$(date +%s.%N)
timeout 30 "$mpiexec" -q -np 2 --oversubscribe "$ringscale" --op allreduce -b 1K -e 1K -n 2 \
    --seed "$seed" -o "$mnt/" >"$work/stdout" 2>"$work/stderr"
rc=$?
echo "exit code $rc; stderr: $(head -c 400 "$work/stderr")"
check "exit code 2 (refused before any work)" test "$rc" -eq 2
check "one line on stderr saying there is no space" \
    bash -c '[ "$(grep -c . "$1")" -eq 1 ] && grep -q "no space left" "$1"' _ "$work/stderr"
check "no results file, no .part" test -z "$(find "$mnt" -name '*.h5*')"
finish
