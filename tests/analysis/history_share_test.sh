#!/usr/bin/env bash
# `ringscale-stats history` on a results directory a team shares: 4 runs started at
# once on a directory with no index, 10 times over, never exit 2, all give the same verdict and
# the index holds every launch; 2 runs started while another process holds the index's lock for
# 10 s wait (one line naming the holder) and succeed; a disk that fills during an update says so
# with the index's path and leaves the index whole; a read-only results directory says where the
# index lives and names --index; another program's SQLite file is refused byte-identical.
# usage: history_share_test.sh RINGSCALE_STATS BENCH_GEN_HISTORY
set -euo pipefail
stats=$1 gen=$2
dir=$(mktemp -d /tmp/ringscale_history_share.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$gen" --out "$dir/src" --series 3 --launches 14 --mode step --seed 5 >/dev/null
rm -f "$dir/src/truth.csv"

# 4 first runs at once, 10 times: each exits 1 (the planted slowdown), with one verdict
# (--alpha 0.03 over the 3 series: each at 0.01, where 14 launches find the planted step).
for try in $(seq 1 10); do
    d="$dir/c$try"
    cp -r "$dir/src" "$d"
    pids=()
    for k in 1 2 3 4; do
        "$stats" history "$d" --alpha 0.03 --fail-on regression >"$d.out$k" 2>"$d.err$k" &
        pids+=($!)
    done
    for k in 1 2 3 4; do
        set +e
        wait "${pids[$((k - 1))]}"; rc=$?
        set -e
        [ $rc -eq 1 ] || fail "try $try run $k: exit $rc, want 1: $(cat "$d.err$k")"
        cmp -s "$d.out1" "$d.out$k" || fail "try $try: runs 1 and $k differ"
        grep -q "index .*: 14 launch(es)" "$d.err$k" || fail "try $try run $k: $(cat "$d.err$k")"
    done
    [ "$(sqlite3 "$d/ringscale-history.sqlite" "SELECT COUNT(*) FROM launches")" -eq 14 ] ||
        fail "try $try: the index does not hold the 14 launches"
done

# Another process holds the lock for 10 s: 2 runs wait, say who holds it, and succeed.
d="$dir/c1"
flock "$d/ringscale-history.sqlite.lock" \
    sh -c 'echo "pid 4242 on testhost since then" >"$1"; sleep 10' sh \
    "$d/ringscale-history.sqlite.lock" &
holder=$!
sleep 1
pids=()
for k in 1 2; do
    "$stats" history "$d" --alpha 0.03 --fail-on regression >"$d.wait$k" 2>"$d.werr$k" &
    pids+=($!)
done
for k in 1 2; do
    set +e
    wait "${pids[$((k - 1))]}"; rc=$?
    set -e
    [ $rc -eq 1 ] || fail "waiting run $k: exit $rc: $(cat "$d.werr$k")"
    grep -q "is in use by pid 4242 on testhost since then: waiting up to 600 s" "$d.werr$k" ||
        fail "waiting run $k: no line naming the holder: $(cat "$d.werr$k")"
done
wait $holder
set +e
flock "$d/ringscale-history.sqlite.lock" sleep 3 &
holder=$!
sleep 0.5
"$stats" history "$d" --index-wait 0.5 >/dev/null 2>"$d.werr"; rc=$?
set -e
wait $holder
[ $rc -eq 2 ] && [ "$(wc -l <"$d.werr")" -le 2 ] && grep -q "still in use by .* after 0.5 s" "$d.werr" ||
    fail "--index-wait 0.5: exit $rc: $(cat "$d.werr")"

# A disk that fills during an update (a file size limit: the same failed write): one line with
# the index's path; the index stays whole and the next run completes it.
d="$dir/full"
cp -r "$dir/src" "$d"
"$stats" history "$d" >/dev/null 2>&1 || true
"$gen" --out "$d" --series 3 --launches 60 --first 14 --seed 5 >/dev/null
size_kb=$(( $(stat -c %s "$d/ringscale-history.sqlite") / 1024 + 1 ))
set +e
( trap '' XFSZ; ulimit -f "$size_kb"; exec "$stats" history "$d" ) >/dev/null 2>"$d.err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "disk full: exit $rc: $(cat "$d.err")"
grep -q "index '$d/ringscale-history.sqlite' cannot be written: .*; it is left as it was" "$d.err" ||
    fail "disk full: $(cat "$d.err")"
grep -q "no transaction is active" "$d.err" && fail "disk full: $(cat "$d.err")"
[ "$(sqlite3 "$d/ringscale-history.sqlite" "PRAGMA quick_check")" = ok ] || fail "disk full: damaged"
"$stats" history "$d" >/dev/null 2>"$d.err" || true
grep -q "74 launch(es)" "$d.err" || fail "after the disk full: $(cat "$d.err")"

# A read-only results directory (as another user when run as root): where the index lives, and
# --index.
d="$dir/ro"
cp -r "$dir/src" "$d"
chmod -R a+rX "$dir"
chmod a-w "$d"
as_other=()
[ "$(id -u)" -ne 0 ] || as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -eq 0 ] && ! command -v setpriv >/dev/null; then
    echo "skipping the read-only check: root without setpriv cannot meet a read-only directory"
else
    set +e
    "${as_other[@]}" "$stats" history "$d" >/dev/null 2>"$dir/ro.err"; rc=$?
    set -e
    [ $rc -eq 2 ] && [ "$(wc -l <"$dir/ro.err")" -eq 1 ] || fail "read-only: exit $rc: $(cat "$dir/ro.err")"
    grep -q "index '$d/ringscale-history.sqlite': cannot write in its directory (Permission denied).*--index FILE" \
        "$dir/ro.err" || fail "read-only: $(cat "$dir/ro.err")"
fi
chmod u+w "$d"

# Another program's SQLite database named by --index (a typo): refused, left byte-identical.
sqlite3 "$dir/other.sqlite" "CREATE TABLE t(x); INSERT INTO t VALUES ('mine')"
cp "$dir/other.sqlite" "$dir/other.copy"
set +e
"$stats" history "$dir/src" --index "$dir/other.sqlite" >/dev/null 2>"$dir/o.err"; rc=$?
set -e
[ $rc -eq 2 ] && [ "$(wc -l <"$dir/o.err")" -eq 1 ] || fail "foreign: exit $rc: $(cat "$dir/o.err")"
grep -q "an SQLite file of another program: not overwritten" "$dir/o.err" || fail "foreign: $(cat "$dir/o.err")"
cmp -s "$dir/other.sqlite" "$dir/other.copy" || fail "another program's database was changed"
echo "history share: ok"
