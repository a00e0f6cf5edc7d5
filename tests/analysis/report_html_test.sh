#!/usr/bin/env bash
# report.html in a real browser: headless Chromium loads the page from disk for the
# stored test study (tests/data/ringscale1), synthetic study files compared with a baseline
# (--baseline: compare's verdicts as a section, each row linked to its case's series, which
# must be in the DOM) and a history of 24 launches
# with a planted step (bench_gen_history --mode step), and a train_step --numerics study (fp32
# and bf16, one case diverged by a jump and one by a non-finite loss: bench_gen_numerics, whose
# Training numerics section must hold an SVG per figure); report_html_check.py checks no network
# request, no console message, each section, an SVG per plot, the regressions table with the
# planted change, hover text on history points and on the study plots' points (one case marked
# busy: drawn apart, its mark in the hover), a traced case's timeline (a lane per rank, hover
# text on its events; tests/analysis/add_trace.py), well-formed SVG, tidy's errors and a
# non-blank screenshot. Then the same with hostile identities, labels and machine names in the results
# files: they show as text and none runs.
# --glance checks the first screen (At a glance). Expectations changed with its wording: each
# scheme answer opened with "<scheme> fastest" and the whole identity of its case, the marked
# cases were a list of one line each and the regressed series one line each with their
# environment; now an answer shows only the fields that vary (the common ones once above),
# "fastest" only where the decision rule confirmed it, one line per cause of a regression and
# one line for the marks. The figures and verdicts are unchanged.
# usage: report_html_test.sh RINGSCALE_STATS BENCH_GEN_RESULTS BENCH_GEN_HISTORY DATA_DIR
#                            BENCH_GEN_NUMERICS [PNG]
#   PNG: where to keep the screenshot (the README's is made so).
# Needs chromium and tidy (tests/install-deps.sh --test); without them it skips (exit 77).
set -euo pipefail
stats=$1 gen_results=$2 gen_history=$3 data=$4 gen_numerics=$5 png=${6:-}
here=$(cd -- "$(dirname "$0")" && pwd)
for tool in chromium tidy; do
    command -v "$tool" >/dev/null || { echo "SKIP: no $tool (bash tests/install-deps.sh --test)"; exit 77; }
done
dir=$(mktemp -d /tmp/ringscale_report_html.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$gen_results" --out "$dir/study" --files 12 --ps 1,2,4 >/dev/null
"$gen_results" --out "$dir/branch" --files 12 --ps 1,2,4 --slowdown 1.3 --seed 3 >/dev/null
"$gen_history" --out "$dir/hist" --series 4 --launches 24 --mode step --seed 5 >/dev/null
"$gen_numerics" "$dir/num" bf16,fp32 >/dev/null
# One case of the branch measured on a busy machine: its points are drawn apart (hollow, in the
# group the "show marked" toggle hides) with the mark in their hover text.
/usr/bin/python3 - "$(ls "$dir/branch"/*.h5 | head -1)" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r+") as f:
    k = sorted(f["cases"])[0]
    f["cases"][k]["outcome"].attrs["contended"] = 1
    f["cases"][k]["outcome"].attrs["contention"] = "report_html test: busy loop"
PY
# One case traced (--trace): the page draws its timeline, a lane per rank with hover text.
/usr/bin/python3 "$here/add_trace.py" "$dir/branch"/*.h5 >/dev/null
# One launch of the branch in the history too: its compare row links to that series' chart
# (the rows of the cases not in the history say so).
cp "$dir/branch/run_00001.h5" "$dir/hist/"
"$stats" report "$dir/out" "$dir/branch"/*.h5 "$data"/ringscale1/*.h5 "$dir/num/numerics.h5" \
    --baseline "$dir/study" \
    --history "$dir/hist" \
    >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
# A planted change (truth.csv: series,seq_len,step_at,...) in the regressions table: its row
# names the series and the launch where the step was planted (+-1: the detector's allowance).
# The page must show what history found; how many planted steps it finds is history's own
# test (history_rates), so one found is enough here.
row=""
while IFS=, read -r _ seq at _; do
    for d in 0 1 -1; do
        n=$((at + 1 + d))
        if grep -q "seq_len=$seq[^<]*</a></td><td>[^<]*</td><td data-v=\"$n\">" \
            "$dir/out/report.html"; then
            row="seq_len=$seq&&#$n of 24"
            break 2
        fi
    done
done < <(tail -n +2 "$dir/hist/truth.csv")
[ -n "$row" ] || { echo "FAIL: no planted step of $dir/hist/truth.csv is in the regressions table"; exit 1; }
shot=${png:-$dir/shot.png}
/usr/bin/python3 "$here/report_html_check.py" "$dir/out/report.html" \
    --section at-a-glance --section inputs --section machine --section summary \
    --section scaling --section history --section regressions --section trends \
    --section compared-with-the-baseline --section training-numerics \
    --regression "$row" --hover "labels: commit=c000" --hover "git commit" --at trends \
    --plot-hover "case: " --plot-hover "launches: " --plot-hover "P: " \
    --plot-marked "report_html test: busy loop" \
    --row-links compared-with-the-baseline=1 --glance 2 --section timelines --timeline-lanes 2 \
    --screenshot "$shot"

# Hostile identities, a hostile label and a hostile machine name: every payload, were it to
# run, sets data-pwned on the page.
payloads=("<script>document.documentElement.setAttribute('data-pwned','1')</script>"
          "\"onmouseover=\"document.documentElement.setAttribute('data-pwned','2')\""
          "</svg><img src=x onerror=\"document.documentElement.setAttribute('data-pwned','3')\">"
          "javascript:document.documentElement.setAttribute('data-pwned','4')")
cp "$(ls "$dir/study"/*.h5 | head -1)" "$dir/hostile.h5"
cp "$dir/num/numerics.h5" "$dir/hostile_numerics.h5"
/usr/bin/python3 - "$dir" "${payloads[@]}" <<'PY'
import glob, sys
import h5py
d, h = sys.argv[1], sys.argv[2:]
def identities(path, meta_too):
    with h5py.File(path, "r+") as f:
        for k in f["cases"]:
            g = f["cases"][k]["identity"]
            g.attrs["variant"], g.attrs["inputs"], g.attrs["merge"], g.attrs["note"] = h
        if meta_too:
            f["meta"].attrs["device_name"] = h[2]
identities(f"{d}/hostile.h5", True)
identities(f"{d}/hostile_numerics.h5", False)
for i, path in enumerate(sorted(glob.glob(f"{d}/hist/launch_*.h5"))):
    with h5py.File(path, "r+") as f:
        f["meta"].attrs["label.commit"] = h[i % 4]
        for k in f["cases"]:
            g = f["cases"][k]["identity"]
            if int(g.attrs["seq_len"]) == 1003:
                g.attrs["variant"] = h[0]
                g.attrs["note"] = h[3]
PY
# A trace in the hostile file: its timeline's hover text and caption carry the hostile label.
/usr/bin/python3 "$here/add_trace.py" "$dir/hostile.h5" >/dev/null
# The hostile file in the history and compared with itself as the baseline: its compare row's
# link is built from the hostile identity.
cp "$dir/hostile.h5" "$dir/hist/"
"$stats" report "$dir/hostile_out" "$dir/hostile.h5" "$dir/study"/*.h5 \
    "$dir/hostile_numerics.h5" --history "$dir/hist" \
    --baseline "$dir/hostile.h5" \
    >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
args=()
for p in "${payloads[@]}"; do args+=(--hostile "$p"); done
/usr/bin/python3 "$here/report_html_check.py" "$dir/hostile_out/report.html" \
    --section at-a-glance --section history --section training-numerics "${args[@]}" \
    --section timelines --timeline-lanes 1 \
    --hover "data-pwned" --at trends \
    --row-links compared-with-the-baseline=1 --glance 0
echo "report_html: ok"
