#!/usr/bin/env bash
# Weak scaling of the attention jobs: launches at np = 1, 2 and 4 of ring_attention and
# context_parallel (allgather, ulysses, hybrid) with --seq-len-per-rank under both rules
# (memory: S = P*N; work: S = N*sqrt(P) rounded to the layout's chunks). Every scheme and rule
# must form one weak family at P = 1, 2, 4 with a weak efficiency, the identity must hold the
# user's per-rank length and rule (not S), derived the S each P ran, and the live table and
# summary must show tokens per second.
# usage: weak_study.sh RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
set -u
ringscale=$1 stats=$2 mpiexec=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
source "$(dirname -- "$0")/lib.sh" # check, fails
study=(--job ring_attention,context_parallel --seq-len-per-rank 64 --seq-rule memory,work
    --heads 4 --kv-heads 4 --head-dim 64 --variant allgather,ulysses,hybrid -w 1 -n 4)
for np in 1 2 4; do
    if ! "$mpiexec" -q -np "$np" --oversubscribe --bind-to none "$ringscale" "${study[@]}" \
        -o "$work/out" >"$work/launch_np$np.log" 2>&1; then
        echo "FAILED: launch at np=$np"
        tail -n 20 "$work/launch_np$np.log"
        exit 1
    fi
done
echo "ok: 3 launches"
check "live table shows tok/s and GF/s/rank" bash -c \
    'grep -q "tok/s" "$1" && grep -q "GF/s/rank" "$1"' _ "$work/launch_np4.log"
"$stats" scaling --format csv "$work/out" >"$work/scaling.csv" 2>"$work/scaling.err"
"$stats" summary --format csv "$work/out" >"$work/summary.csv" 2>"$work/summary.err"
for f in ring_attention/ring/zigzag context_parallel/allgather context_parallel/ulysses \
    context_parallel/hybrid; do
    for rule in memory work; do
        check "$f seq_rule=$rule: one weak family at P = 1, 2, 4" bash -c \
            'rows=$(grep "^\"\?$1 .*seq_rule=$2" "$3")
             [ "$(echo "$rows" | cut -d, -f4 | tr "\n" " ")" = "1 2 4 " ] &&
             [ "$(echo "$rows" | cut -d, -f2 | sort -u)" = "weak" ]' _ "$f" "$rule" \
            "$work/scaling.csv"
    done
done
# Its size depends on the machine's load (a loaded 2-core machine gave 10-32 at P = 2: the P = 1
# base's two threads waited out scheduler ticks, 4 and 8 ms a step), so only a finite
# positive number is checked here; rates belong in benchmarks.
check "weak efficiency: 1 at the base, a number at P = 4" /usr/bin/python3 -c '
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 24, len(rows)
for r in rows:
    assert r["scaling"] == "weak" and r["base_p"] == "1", r
    e = float(r["efficiency"])
    assert (e == 1.0) if r["world_size"] == "1" else 0 < e and math.isfinite(e), r
' "$work/scaling.csv"
check "summary has tokens per second" bash -c \
    'head -1 "$1" | grep -q tokens_per_s' _ "$work/summary.csv"
check "identity holds the rule, derived holds S" /usr/bin/python3 - "$work/out" <<'PY'
import glob, math, sys
import h5py
want = {"memory": lambda p: 64 * p,
        "work": lambda p: max(1, round(64 * math.sqrt(p) / (2 * p))) * 2 * p}
seen = 0
for path in glob.glob(sys.argv[1] + "/*.h5"):
    f = h5py.File(path, "r")
    for c in f["cases"].values():
        ident, der = c["identity"].attrs, c["derived"].attrs
        assert "seq_len" not in ident, dict(ident)
        assert ident["scaling"] == "weak" and ident["seq_len_per_rank"] == 64, dict(ident)
        p = int(ident["world_size"])
        rule = ident["seq_rule"]
        rule = rule.decode() if isinstance(rule, bytes) else rule
        assert der["seq_len"] == want[rule](p), (rule, p, der["seq_len"])
        assert der["tokens_per_iter"] == der["seq_len"], dict(der)
        assert c["outcome"].attrs["status"] in (b"ok", "ok"), dict(c["outcome"].attrs)
        seen += 1
assert seen == 3 * 8, seen
PY
echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
