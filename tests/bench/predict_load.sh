#!/usr/bin/env bash
# Predictions that survive the machine's state: the study of tests/bench/predict.sh
# run twice, quiet and with a busy loop pinned beside the ranks during the first round's
# held-out launches (LOAD_HELD=first: each held-out case then has a contaminated launch, to be
# marked, and a clean one in the later rounds). For each it prints the predict --validate summary: median |error|, 90% band
# coverage and median band width over the unmarked held-out cases, then the marked ones, left
# out of those figures. Goals: quiet, median |error| <= 15%, coverage 80-97%, median width
# <= 2x; loaded, the contaminated held-out cases marked and the same goals over the rest.
# The coverage comes with its count and 90% interval (19 of 19 is within a 90% band's reach:
# 0.9^19 = 13.5% of runs) and the median signed error (the offset the run's cases share).
# A third mode, work: another program's real work (LOAD_WORK=compile in predict.sh, a
# loop compiling a ringscale source; MODES="work" WORK=bench for a second benchmark instead)
# beside every launch, calibration and held-out alike. Marked launches are kept by default
# (their effect priced into the bands); each run also gives the figures with
# --skip-marked. The goal: coverage >= 80% with the marks kept, in the work and quiet
# modes, pooled over at least 3 runs of each (run this script 3 times).
#
# usage: tests/bench/predict_load.sh [BUILD_DIR] [OUT_DIR] [ROUNDS]
#   MODES (default "quiet loaded work"): which modes to run.
set -euo pipefail
build="${1:-build}"
out="${2:-$(mktemp -d /tmp/ringscale_predict_load.XXXXXX)}"
rounds="${3:-2}"
mkdir -p "$out"
here="$(cd -- "$(dirname "$0")" && pwd)"

# marked_cases DIR: how many of the cases in DIR's files are marked contended.
marked_cases() {
    /usr/bin/python3 - "$1" <<'PY'
import glob, sys
import h5py
n = marked = 0
for path in sorted(glob.glob(sys.argv[1] + "/*.h5")):
    with h5py.File(path, "r") as f:
        for k in f["cases"]:
            n += 1
            marked += int(f["cases"][k]["outcome"].attrs.get("contended", 0))
print(f"{sys.argv[1]}: {marked} of {n} cases marked contended")
PY
}
modes="${MODES:-quiet loaded work}"
for mode in $modes; do
    echo "== $mode"
    load=0 work=""
    [[ "$mode" == loaded ]] && load=first
    [[ "$mode" == work ]] && work="${WORK:-compile}"
    LOAD_HELD=$load LOAD_WORK=$work "$here/predict.sh" "$build" "$out/$mode" "$rounds" \
        >"$out/$mode.txt"
    grep -E '^(load|other runnable|round)' "$out/$mode.txt" || true
    for dir in calib held; do
        marked_cases "$out/$mode/$dir"
    done
    # The same with the marked launches left out of the calibration (the old default): how
    # much the marks change the figures.
    echo "$mode, --skip-marked: $("$build/analysis/ringscale-stats" predict "$out/$mode/calib" \
        --validate "$out/$mode/held" --skip-marked 2>/dev/null | tail -1)"
done
for mode in $modes; do
    echo "$mode: $(tail -1 "$out/$mode.txt")"
done
