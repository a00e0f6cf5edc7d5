#!/usr/bin/env bash
# Every bad invocation must exit non-zero within seconds on every rank, print exactly one
# line on stderr that names the problem, and leave no results file behind.
# usage: bad_input.sh RINGSCALE MPIEXEC WORKDIR
set -u
ringscale=$1 mpiexec=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
out="$work/out"
touch "$work/a_file"
printf 'job = collectives\nthis line has no equals sign\n' >"$work/bad.ini"
printf 'job = collectives\nfrobnicate = 3\n' >"$work/unknown_key.ini"
pass=0 fail=0
check() { # expected-substring, args...
    local want=$1; shift
    local start=$SECONDS
    timeout 30 "$mpiexec" -q -np 2 --oversubscribe "$ringscale" "$@" >"$work/stdout" 2>"$work/stderr"
    local rc=$? lines took=$((SECONDS - start))
    lines=$(grep -c . "$work/stderr")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$lines" -eq 1 ] && grep -q -- "$want" "$work/stderr" \
        && [ "$took" -le 10 ] && [ -z "$(find "$work" -name '*.h5*')" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: ringscale $* -> rc=$rc, ${took}s, stderr:"; cat "$work/stderr"
        find "$work" -name '*.h5*'
    fi
}
check "unknown job" --job nosuchjob -o "$out"
check "unrecognised option" --nosuchoption -o "$out"
check "not a whole number" --iters abc -o "$out"
check "not a size" --min-bytes 12Q -o "$out"
check "not a size" --min-bytes -5 -o "$out"
check "above --max-bytes" -b 2K -e 1K -o "$out"
check "below 2" -f 1 -o "$out"
check "unknown operation" --op gossip -o "$out"
check "cannot open" /no/such/job.ini -o "$out"
check "bad.ini" "$work/bad.ini" -o "$out"
check "frobnicate" "$work/unknown_key.ini" -o "$out"
check "not a directory" -o "$work/a_file"
check "cannot" -o /proc/ringscale_cannot_write_here
check "of memory per rank" -e 1T -o "$out"
check "not a rank" --op broadcast --root 7 -o "$out"
check "not cpu or cuda" --device tpu -o "$out"
check "mpi or nccl" --comm gloo -o "$out"
echo "bad-input checks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
