#!/usr/bin/env bash
# The history's rates on synthetic series, with default settings: 200 series with no
# change (launch CV 2-10%, outlier launches, a bimodal family every 10th series) must flag at
# most 5% of series; a planted step of 3x the series' launch noise must be found in at least
# 90% of series within +-1 launch, and the phase named must be the planted one (at least 90%
# of those found). Prints the rates; fails when one falls short.
# usage: history_synthetic.sh RINGSCALE_STATS BENCH_GEN_HISTORY
#   e.g. tests/analysis/history_synthetic.sh build/analysis/ringscale-stats build/tests/bench_gen_history
# Run by hand, not in ctest: it writes and reads 12,000 cases (about 6 minutes on 2 cores).
set -euo pipefail
stats=$1 gen=$2
dir=$(mktemp -d /tmp/ringscale_history_synth.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$gen" --out "$dir/steady" --series 200 --launches 30 --mode steady --seed 11
"$gen" --out "$dir/step" --series 200 --launches 30 --mode step --seed 12
"$stats" history "$dir/steady" --format json > "$dir/steady.json"
"$stats" history "$dir/step" --format json > "$dir/step.json"
python3 - "$dir" <<'PY'
import csv, json, re, sys
d = sys.argv[1]
def changes(name):
    rows = json.load(open(f"{d}/{name}.json"))
    by = {}
    for r in rows["changes"]:
        s = int(re.search(r"seq_len=(\d+)", r["series"]).group(1)) - 1000
        at = int(re.match(r"#(\d+) of", r["launch"]).group(1)) - 1
        by.setdefault(s, []).append((at, r["moved"]))
    assert len(rows["series"]) == 200, f"{name}: {len(rows['series'])} series, not 200"
    return by
steady = changes("steady")
flagged = len(steady) / 200
truth = list(csv.DictReader(open(f"{d}/step/truth.csv")))
step = changes("step")
found = named = 0
for t in truth:
    hits = [m for at, m in step.get(int(t["series"]), []) if abs(at - int(t["step_at"])) <= 1]
    found += bool(hits)
    named += bool(hits) and hits[0] == t["phase"]
print(f"history synthetic: steady series flagged {100*flagged:.1f}% (at most 5%); "
      f"planted 3x-noise steps found within +-1 launch {100*found/200:.1f}% (at least 90%); "
      f"planted phase named {100*named/max(found,1):.1f}% of those found (at least 90%)")
ok = flagged <= 0.05 and found / 200 >= 0.90 and named / max(found, 1) >= 0.90
sys.exit(0 if ok else 1)
PY
