#!/usr/bin/python3
"""Findings against ringscale-stats on untrusted input (accuracy, predict), one check each:
an accuracy field that overflowed flags its case, a dtype no launch writes drops its case, the
accuracy limit measures what distribution adds to the dtype's own rounding, 'added' is worst /
single, the accuracy plot names every series below its panel, predict --validate leaves out
in-sample cases, --confidence beyond what --bootstrap resolves is refused in every subcommand
with both, the coverage interval's level is fixed, --at P=N from one node is one node, and a
report that fails late leaves OUT as it was. (The GPU scripts' findings: gpu_scripts_test.sh.)

usage: findings51_test.py STATS SEED.h5 GEN_STUDY GEN_RESULTS WORK_DIR

SEED.h5 is a real launch's file (the e2e fixture small.h5: collectives at P=2); GEN_STUDY
writes the predict tests' synthetic study (bench_gen_readme_study), GEN_RESULTS synthetic
ring_attention cases at several P (bench_gen_results). Each check prints FAIL with what it saw;
the exit status is 1 when any failed.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft  # noqa: E402

STATS, SEED, GEN_STUDY, GEN_RESULTS, WORK = sys.argv[1:6]
failures = []
if os.environ.get("RINGSCALE_ASAN"):
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


# A hang's cap: 60 s, 600 s under ASan (tests/sanitize.sh), where predict's bootstrap alone took
# over 60 s of refits.
CAP = "600" if os.environ.get("RINGSCALE_ASAN") else "60"


def run(*args):
    p = subprocess.run(["timeout", CAP, STATS] + list(args), capture_output=True, text=True,
                       errors="replace")
    return p.returncode, p.stdout, p.stderr


def rows(out, table):
    try:
        return json.loads(out)[table]
    except (ValueError, KeyError) as e:
        return f"no table '{table}': {e}: {out[:200]}"


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
files = craft.craft_all(SEED, os.path.join(WORK, "crafted"), ("accuracy",))


def accuracy_rows(name):
    rc, out, err = run("accuracy", files[name], "--format", "json")
    got = rows(out, "accuracy by case") if rc == 0 else f"exit {rc}: {err.strip()[:200]}"
    if isinstance(got, str):
        fail(f"{name}: accuracy: {got}")
        return [], err
    return got, err


# 1. An error that overflowed flags its case and shows as inf, never as "-" (null).
for name in ("acc_inf", "acc_nan"):
    got, err = accuracy_rows(name)
    if got and not all("non-finite" in r["flag"] and r["max_rel_o"] == "inf" and
                       r["worst"] == "inf" for r in got):
        fail(f"{name}: expected every case flagged non-finite with O inf: {got[:1]}")
    if got and f"{len(got)} of {len(got)} cases flagged" not in err:
        fail(f"{name}: expected all {len(got)} cases flagged: {err.strip()[-200:]}")

# 2. A dtype the launcher never writes drops the case with one line; the limit is measured
# against the dtype's own rounding (a bf16 case at its rounding is not flagged; fp32 50x past
# it is); fp8 is a dtype.
for name, spelled in (("dtype_upper", "FP32"), ("dtype_float64", "float64")):
    rc, out, err = run("summary", files[name])
    lines = [l for l in err.splitlines() if f"dtype is '{spelled}': not one of" in l]
    if rc != 0 or len(lines) != 1 or "0000" not in lines[0]:
        fail(f"{name}: expected case 0000 dropped in one line naming dtype '{spelled}'; exit "
             f"{rc}: {err.strip()[:300]}")
    # Its accuracy (the file's only one) is not judged: no case recorded one.
    rc, out, err = run("accuracy", files[name])
    if rc != 2 or "no case recorded its accuracy" not in err:
        fail(f"{name}: the dropped case's accuracy was judged: exit {rc}: {out[:200]}")
got, _ = accuracy_rows("acc_bf16_rounding")
if not got or any(r["flag"] for r in got) or abs(got[0]["added"] - 1) > 1e-9:
    fail(f"acc_bf16_rounding: a bf16 case at its own rounding (x1.00) was flagged: {got[:1]}")
got, _ = accuracy_rows("acc_fp32_over")
if not got or not all("limit" in r["flag"] for r in got):
    fail(f"acc_fp32_over: an fp32 error of 5e-4 (single 1e-7) was not flagged 'limit': {got[:1]}")
got, _ = accuracy_rows("acc_fp8")
if not got or any("limit" in r["flag"] for r in got):
    fail(f"acc_fp8: an fp8 case within E4M3's allowance was flagged or dropped: {got[:1]}")

# 3. 'added' is worst / single (1.17e-3 / 1e-3 = 1.17), not the largest per-tensor ratio (2.09).
got, _ = accuracy_rows("acc_added")
if not got or any(abs(r["added"] - 1.17) > 1e-9 for r in got):
    fail(f"acc_added: expected added 1.17 (worst / single): {got[:1]}")

# 4. The accuracy plot: a legend entry for every series, below its panel (not over an axis).
study = os.path.join(WORK, "acc_study")
p = subprocess.run([GEN_RESULTS, "--out", study, "--files", "4", "--samples", "40", "--ps",
                    "1,2,4,8"], capture_output=True, text=True)
for path in sorted(glob.glob(os.path.join(study, "*.h5"))):
    with h5py.File(path, "r+") as f:
        for g in craft.cases(f):
            world = int(g["identity"].attrs["world_size"])
            g["identity"].attrs["dtype"] = "bfloat16"
            a = g["outcome"].attrs
            a["acc_o_max_rel"] = np.float64(1e-3 * world)
            a["acc_o_rms_rel"] = np.float64(1e-4 * world)
            a["acc_single_o_max_rel"] = np.float64(1e-3)
            a["acc_single_o_rms_rel"] = np.float64(1e-4)
            a["acc_query_rows"] = np.int64(64)
            a["acc_key_rows"] = np.int64(0)
out_dir = os.path.join(WORK, "acc_report")
rc, out, err = run("report", out_dir, study, "--bootstrap", "100")
gp = os.path.join(out_dir, "accuracy_p.gp")
if rc != 0 or p.returncode != 0:
    fail(f"accuracy report: exit {rc}: {err.strip()[:300]} {p.stderr[:200]}")
elif shutil.which("gnuplot") and not os.path.exists(gp):
    fail(f"accuracy report: no {gp}: {sorted(os.listdir(out_dir))}")
elif os.path.exists(gp):
    text = open(gp).read()
    plots = [l for l in text.splitlines() if l.startswith("plot ")]
    titles = [t for l in plots for t in l.split(" t ")[1:]]
    if "set key outside below" not in text or not titles or \
            any(t.startswith("''") or t.startswith('""') for t in titles):
        fail(f"accuracy plot: legend not below, or a series without a title: {plots}")

# 5. predict --validate: in-sample cases left out with a note, or refused when all are.
pstudy = os.path.join(WORK, "predict_study")
subprocess.run([GEN_STUDY, pstudy], check=True)
calib, held = os.path.join(pstudy, "calib"), os.path.join(pstudy, "heldout")
rc, out, err = run("predict", calib, "--validate", calib, "--bootstrap", "200")
if rc != 2 or len(err.strip().splitlines()) != 1 or "calibration cases" not in err:
    fail(f"predict CALIB --validate CALIB: expected one line, exit 2; exit {rc}: {err[-300:]}")
rc, out, err = run("predict", calib, "--validate", calib, held, "--bootstrap", "200")
last = out.strip().splitlines()[-1] if out.strip() else ""
if rc != 0 or "also calibration cases" not in err or "95% CI" not in last:
    fail(f"predict --validate CALIB HELDOUT: expected the in-sample note and a 95% CI; exit "
         f"{rc}: {err[-300:]} / {last}")
# The coverage's interval keeps its stated level whatever the bands' --confidence.
rc, out, err = run("predict", calib, "--validate", held, "--bootstrap", "200",
                   "--confidence", "0.5")
last = out.strip().splitlines()[-1] if out.strip() else ""
if rc != 0 or "50% band coverage" not in last or "95% CI" not in last:
    fail(f"--confidence 0.5: expected a 50% band and a 95% CI: exit {rc}: {last} {err[-200:]}")

# --confidence beyond 1 - 2/B is refused, in every subcommand with --bootstrap, in one line.
for cmd in (["predict", calib], ["scaling", SEED], ["model", SEED], ["crossover", SEED],
            ["compare", SEED, SEED], ["report", os.path.join(WORK, "conf_report"), SEED]):
    rc, out, err = run(*cmd, "--confidence", "0.9999", "--bootstrap", "2000")
    lines = err.strip().splitlines()
    if rc != 2 or len(lines) != 1 or "--confidence" not in err or "--bootstrap" not in err:
        fail(f"{cmd[0]} --confidence 0.9999 --bootstrap 2000: expected one line naming both, "
             f"exit 2; exit {rc}: {err[-300:]}")
rc, out, err = run("compare", SEED, SEED, "--confidence", "0.999", "--bootstrap", "2000")
if rc != 0:
    fail(f"--confidence 0.999 --bootstrap 2000 (resolvable) refused: {err[-200:]}")

# 6. --at P=8,16 from a calibration on one node: one node of P ranks, predicted, not dashes.
rc, out, err = run("predict", calib, "--at", "P=8,16,seq_len=64K", "--bootstrap", "200",
                   "--format", "json")
got = rows(out, "predictions") if rc == 0 else f"exit {rc}: {err[-300:]}"
if isinstance(got, str) or not got:
    fail(f"predict --at P=8,16: {got}")
else:
    priced = [r for r in got if isinstance(r.get("predicted_s"), (int, float))]
    if not priced:
        fail(f"predict --at P=8,16: every prediction is a dash: {got[:2]}")
    spread = [r["placement"] for r in got if r["placement"] != f"1 x {r['world_size']}"]
    if spread:
        fail(f"predict --at P=8,16: P spread over nodes: {spread[:4]}")

# 7. A report that fails late leaves OUT as it was (no new plot moved in).
out_dir = os.path.join(WORK, "late_failure")
os.makedirs(os.path.join(out_dir, "report.md"))
with open(os.path.join(out_dir, "old.txt"), "w") as f:
    f.write("kept\n")
before = sorted(os.listdir(out_dir))
rc, out, err = run("report", out_dir, study, "--bootstrap", "100")
after = sorted(os.listdir(out_dir))
if rc != 2 or after != before or len(err.strip().splitlines()) != 1:
    fail(f"report with a directory at report.md: exit {rc} (want 2), OUT {before} -> {after}: "
         f"{err[-200:]}")

print(f"findings on accuracy and predict: {len(failures)} failures")
sys.exit(1 if failures else 0)
