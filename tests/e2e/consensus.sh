#!/usr/bin/env bash
# Ranks launched with different arguments (MPMD) must refuse to run: exit 2, one line, no file.
# usage: consensus.sh RINGSCALE MPIEXEC WORKDIR
set -u
rs=$1 mpiexec=$2 work=$3
rm -rf "$work"
common=(--op allreduce -b 1K -e 1K -o "$work")
"$mpiexec" -q --oversubscribe -np 1 "$rs" "${common[@]}" --iters 3 : -np 1 "$rs" "${common[@]}" \
    --iters 4 >"$work.out" 2>"$work.err"
rc=$?
lines=$(grep -c . "$work.err")
files=$(find "$work" -name '*.h5*' 2>/dev/null | wc -l)
echo "rc=$rc stderr_lines=$lines files=$files: $(cat "$work.err")"
[ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q "different configurations" "$work.err" && [ "$files" -eq 0 ]
