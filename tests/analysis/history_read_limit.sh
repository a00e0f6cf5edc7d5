#!/usr/bin/env bash
# A launch slowed past its read limit on one run is read on the next: `history` with the read
# limit cut to a thousandth of a second (RINGSCALE_READ_LIMIT_S) cannot read a 5 MB launch in
# time; it says so, counts no launch and keeps no problem for the file; the next run, with the
# default limit, reads it; a third run with the tiny limit again finds it unchanged (read once,
# kept). A bad RINGSCALE_READ_LIMIT_S is one line and exit 2.
# usage: history_read_limit.sh RINGSCALE_STATS BENCH_GEN_RESULTS WORKDIR
set -u
stats=$1 gen=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "  ok: $what"; else echo "  FAIL: $what"; fail=1; fi
}
"$gen" --out "$work/h" --files 1 --samples 200000 >/dev/null || { echo "FAIL: gen"; exit 1; }
file=$(ls "$work"/h/*.h5)
echo "the launch: $(stat -c %s "$file") bytes"
run() { # name, [env...]: history on the directory; output in $work/NAME.out/.err, rc in $rc
    local name=$1
    shift
    env "$@" "$stats" history "$work/h" >"$work/$name.out" 2>"$work/$name.err"
    rc=$?
    echo "$name: exit $rc"
    sed 's/^/    /' "$work/$name.err" | head -n 4
}

run slow RINGSCALE_READ_LIMIT_S=0.001
check "the slow read is named, to be read again" grep -q \
    "^ringscale-stats: skipping $file: reading it took more than .* s of CPU time: read again next run" \
    "$work/slow.err"
check "no launch counted" grep -q "index .*: 0 launch(es); 1 file(s) read" "$work/slow.err"
check "not an error (exit 0)" test "$rc" -eq 0

run defaults
check "read on the next run, with the default limit" \
    grep -q "index .*: 1 launch(es); 1 file(s) read, 0 unchanged" "$work/defaults.err"
check "no skip line" bash -c '! grep -q "skipping" "$1"' _ "$work/defaults.err"

run again RINGSCALE_READ_LIMIT_S=0.001
check "once read, kept: unchanged under the tiny limit" \
    grep -q "index .*: 1 launch(es); 0 file(s) read, 1 unchanged" "$work/again.err"

for bad in 0 -1 abc 1e3 100000 0x10 " 5" nan 10s; do
    RINGSCALE_READ_LIMIT_S=$bad "$stats" history "$work/h" >/dev/null 2>"$work/bad.err"
    rc=$?
    check "RINGSCALE_READ_LIMIT_S='$bad': exit 2 and one line" \
        test "$rc" -eq 2 -a "$(wc -l <"$work/bad.err")" -eq 1
    check "  naming the variable" grep -q "^ringscale-stats: RINGSCALE_READ_LIMIT_S=" "$work/bad.err"
done
[ "$fail" -eq 0 ] && echo "passed"
exit "$fail"
