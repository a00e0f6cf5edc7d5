#!/usr/bin/python3
"""Findings against ringscale-stats and the Slurm scripts on untrusted input, one check each,
every one reproduced as first seen: numerics verdicts for overflow, no steps
and a floor that diverges as much; one rule for a long value in history and the report; paths
that start with '-' (nightly, report, sweep, history, the lint that keeps them so); every
Unicode format character (category Cf) escaped; the messages (an index lock that is a
directory, predict --validate with only marked cases, index rows keyed by the real path and an
old index migrated once, skipped files counted by kind).

usage: findings6_test.py STATS SEED.h5 GEN_STUDY SOURCE_DIR WORK_DIR

SEED.h5 is a real launch's file (the e2e fixture small.h5: collectives at P=2); GEN_STUDY writes
the predict tests' synthetic study (bench_gen_readme_study); SOURCE_DIR is the repository (its
slurm/ scripts and tests/lint). Each check prints FAIL with what it saw; the exit status is 1
when any failed.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import unicodedata

import h5py
import numpy as np

STATS, SEED, GEN_STUDY, SRC, WORK = sys.argv[1:6]
STATS, SEED, GEN_STUDY, SRC, WORK = (os.path.abspath(p) for p in (STATS, SEED, GEN_STUDY, SRC,
                                                                      WORK))
failures = []
if os.environ.get("RINGSCALE_ASAN"):
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"
CAP = "600" if os.environ.get("RINGSCALE_ASAN") else "120"


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args, cwd=None, env=None):
    p = subprocess.run(["timeout", CAP, STATS] + list(args), capture_output=True, text=True,
                       errors="replace", cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr


def copy_seed(path, edit=None, launch_id=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copy(SEED, path)
    with h5py.File(path, "r+") as f:
        if launch_id is not None:
            f.attrs["launch_id"] = launch_id
        if edit:
            edit(f)
    return path


def cases(f):
    return [f["cases"][k] for k in sorted(f["cases"].keys())]


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

# 1. numerics: overflow, nothing and a floor that diverges as much are never "the same
# training"; one order for every verdict, the pooled table and the report agreeing.
NAMES = ["loss", "grad_norm", "update_norm", "param_abs_err", "param_rel_err", "ref_loss",
         "ref_grad_norm", "ref_update_norm", "floor_loss", "floor_grad_norm", "floor_param_abs"]


def series(steps=4):
    s = {n: np.zeros(steps) for n in NAMES}
    s["loss"] = s["ref_loss"] = np.linspace(3, 1, steps)
    s["grad_norm"] = s["ref_grad_norm"] = s["update_norm"] = s["ref_update_norm"] = np.ones(steps)
    s["floor_loss"] = s["floor_grad_norm"] = np.full(steps, 1e-3)
    s["floor_param_abs"] = np.full(steps, 1e-4)
    return {k: np.array(v, dtype=np.float64) for k, v in s.items()}


def with_numerics(change):
    def edit(f):
        s = series()
        change(s)
        g = cases(f)[0].create_group("numerics")
        for name, v in s.items():
            g.create_dataset(name, data=v)
    return edit


def set_at(name, i, v):
    def change(s):
        s[name][i] = v
    return change


def both(*changes):
    def change(s):
        for c in changes:
            c(s)
    return change


def no_steps(s):
    for k in list(s):
        s[k] = np.zeros(0)


def floor_as_much(s):  # --lr 0.9 in fp16: the run 101% off, its floor as much
    s["param_abs_err"] = s["param_rel_err"] = np.array([0.5, 0.8, 1.0, 1.01])
    s["floor_param_abs"] = np.array([0.5, 0.8, 1.0, 1.0])


numerics_cases = {
    "both_inf": (both(set_at("loss", 1, np.inf), set_at("ref_loss", 1, np.inf)),
                 "diverged at step 2: loss +inf"),
    "ref_inf": (set_at("ref_loss", 1, np.inf), "reference diverged at step 2: no verdict"),
    "param_inf": (lambda s: s.__setitem__("param_abs_err", np.full(4, np.inf)),
                  "diverged at step 1: params +inf"),
    "no_steps": (no_steps, "no verdict (no steps)"),
    "missing": (lambda s: s.pop("floor_loss"), "no verdict (series missing)"),
    "floor_as_much": (floor_as_much, "not decided (the floor diverges as much)"),
}
for name, (change, want) in numerics_cases.items():
    path = copy_seed(os.path.join(WORK, "numerics", name + ".h5"), with_numerics(change))
    rc, out, err = run("numerics", path, "--format", "json")
    try:
        j = json.loads(out)
        got = (j["numerics by case"][0]["verdict"], j["numerics by configuration"][0]["first"])
    except (ValueError, KeyError, IndexError) as e:
        fail(f"numerics {name}: exit {rc}, no tables ({e}): {err[-300:]}")
        continue
    if got != (want, want):
        fail(f"numerics {name}: expected '{want}' for the case and its configuration, got {got}")
# The report's Training numerics section counts them as the pooled table does.
rc, out, err = run("report", "--bootstrap", "100", os.path.join(WORK, "num_report"),
                   os.path.join(WORK, "numerics", "missing.h5"))
md = open(os.path.join(WORK, "num_report", "report.md"), errors="replace").read() if rc == 0 else ""
section = md[md.find("## Training numerics"):]
if rc != 0 or "no verdict (series missing)" not in section or "1 without a verdict" not in section:
    fail(f"report's Training numerics: expected the case without a verdict counted as one; exit "
         f"{rc}: {err[-200:]} {section[-400:]}")

# 2. One label cannot fill a page: a value over 4,096 bytes is cut with its size and a hash, in
# the report and in history's index alike. Two launches, each with a 1 MiB identity value and
# a 1 MiB /meta value.
BIG = 1 << 20


def long_values(value_id, meta_value):
    def edit(f):
        for g in cases(f):
            g["identity"].attrs["note"] = value_id
        f["meta"].attrs["site"] = meta_value
    return edit


for kind, vid, vmeta in (("short", "x", "y"), ("long", "x" * BIG, "y" * BIG)):
    for i in (1, 2):
        copy_seed(os.path.join(WORK, kind, f"launch{i}.h5"), long_values(vid, vmeta),
                  launch_id=f"{kind}-launch-{i}")
pages = {}
for kind in ("short", "long"):
    rc, out, err = run("report", "--bootstrap", "100", os.path.join(WORK, kind + "_report"),
                       os.path.join(WORK, kind))
    if rc != 0:
        fail(f"report over the {kind} values: exit {rc}: {err[-300:]}")
        continue
    pages[kind] = {ext: open(os.path.join(WORK, kind + "_report", "report." + ext), "rb").read()
                   for ext in ("html", "md")}
if len(pages) == 2:
    for ext in ("html", "md"):
        page, base = pages["long"][ext], pages["short"][ext]
        # N places show the value (N series, tables and titles); each holds at most 4,096 bytes
        # of it, mark included (some 100 bytes of escaping and wrapping around it at most), so
        # the page is at most N x 4,200 bytes longer than with a one-letter value.
        shown = re.findall(rb"x{20,}|y{20,}", page)
        marks = re.findall(rb"cut:\s+1048576\s+bytes,\s+hash\s+[0-9a-f]{12}", page)
        longest = max((len(v) for v in shown), default=0)
        if not marks or longest > 4096 or len(page) > len(base) + len(shown) * 4200:
            fail(f"report.{ext}: {len(page)} bytes, {len(shown)} places show the value (the "
                 f"longest {longest} bytes), {len(marks)} marks; with one-letter values "
                 f"{len(base)} bytes (at most {len(base) + len(shown) * 4200} allowed)")
rc, out, err = run("history", "--", os.path.join(WORK, "long"))
if rc not in (0, 6) or "2 launch(es)" not in err or "over the" in err:
    fail(f"history with a 1 MiB /meta value: expected both launches indexed, cut; exit {rc}: "
         f"{err[-400:]}")
else:
    db = sqlite3.connect(os.path.join(WORK, "long", "ringscale-history.sqlite"))
    meta = [json.loads(m)["site"] for (m,) in db.execute("SELECT meta FROM launches")]
    db.close()
    if len(meta) != 2 or not all(len(m.encode()) <= 4096 and "[cut: 1048576 bytes" in m
                                 for m in meta):
        fail(f"history's index: /meta site not cut to 4,096 bytes with its mark: "
             f"{[m[-60:] for m in meta]}")

# 3. Names that start with '-': every call of the tools and of cd passes paths after `--`.
dash = os.path.join(WORK, "dash")
copy_seed(os.path.join(dash, "-x", "small.h5"))
rc, out, err = run("history", "--", "-x", cwd=dash)
if rc not in (0, 6) or "unrecognised" in err or "1 launch(es)" not in err:
    fail(f"history -- -x: exit {rc}: {err[-300:]}")
rc, out, err = run("report", "--bootstrap", "100", "--", "-rep", SEED, cwd=dash)
if rc != 0 or "Illegal option" in err or not os.path.exists(os.path.join(dash, "-rep",
                                                                         "report.md")):
    fail(f"report -- -rep FILE: exit {rc}: {err[-300:]}")
elif shutil.which("gnuplot") and not [p for p in os.listdir(os.path.join(dash, "-rep"))
                                      if p.endswith(".png")]:
    fail("report -- -rep FILE: gnuplot is installed, yet no plot was drawn in -rep")
# nightly.sbatch -x -job.ini, outside Slurm, with a launcher and mpirun that stand in for the
# real ones (they check that the job file comes after `--` and copy the seed as the launch).
night = os.path.join(WORK, "night")
os.makedirs(os.path.join(night, "bin"))
with open(os.path.join(night, "bin", "mpirun"), "w") as f:
    f.write('#!/bin/sh\nshift 2\nexec "$@"\n')
with open(os.path.join(night, "bin", "ringscale"), "w") as f:
    f.write('#!/bin/bash\nout=""\nwhile [ $# -gt 0 ]; do\n'
            '  case $1 in --output) out=$2; shift 2 ;; --) shift; break ;; *) shift ;; esac\n'
            'done\n[ $# -eq 1 ] && [ -f "$1" ] || { echo "no job file after --: $*" >&2; exit 2; }\n'
            f'cp -- "{SEED}" "$out/launch.h5"\n')
for tool in ("mpirun", "ringscale"):
    os.chmod(os.path.join(night, "bin", tool), 0o755)
open(os.path.join(night, "-job.ini"), "w").write("[job]\n")
env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
env.update(RINGSCALE=os.path.join(night, "bin", "ringscale"), RINGSCALE_STATS=STATS,
           RINGSCALE_MPIRUN=os.path.join(night, "bin", "mpirun"), RINGSCALE_NP="1")
p = subprocess.run(["timeout", CAP, os.path.join(SRC, "slurm", "nightly.sbatch"), "-x",
                    "-job.ini"], cwd=night, env=env, capture_output=True, text=True,
                   errors="replace")
if p.returncode not in (0, 6) or "unrecognised" in p.stderr or "verdict" not in p.stdout:
    fail(f"nightly.sbatch -x -job.ini: exit {p.returncode}: {p.stdout[-200:]} {p.stderr[-300:]}")
# sweep --output -x ./-job.ini (a dry run prints the study: the paths it would submit, made
# absolute; a job file that starts with '-' is given as ./NAME, as to any command).
p = subprocess.run(["timeout", CAP, os.path.join(SRC, "slurm", "sweep"), "--dry-run",
                    "--nodes", "1", "--output", "-x", "--ringscale",
                    os.path.join(night, "bin", "ringscale"), "--stats", STATS, "./-job.ini"],
                   cwd=night, env=env, capture_output=True, text=True, errors="replace")
if p.returncode != 0 or os.path.join(night, "-x") not in p.stdout:
    fail(f"sweep --output -x ./-job.ini: exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-300:]}")
# The lint fails on a call without `--`, and passes on the scripts as they are.
bad = os.path.join(WORK, "bad.sh")
open(bad, "w").write('cd "$dir"\n"$stats" history "$h"\nexec "$ringscale" --output "$o/" \\\n'
                     '    "$job_file"\n')
lint = os.path.join(SRC, "tests", "lint", "dash_paths.sh")
p = subprocess.run(["bash", lint, bad], capture_output=True, text=True, cwd=SRC)
if p.returncode != 1 or p.stdout.count(bad) != 3:
    fail(f"dash_paths.sh on three calls without --: exit {p.returncode}: {p.stdout[-400:]}")
if shutil.which("git") and os.path.isdir(os.path.join(SRC, ".git")) or \
        os.path.isfile(os.path.join(SRC, ".git")):
    p = subprocess.run(["bash", lint], capture_output=True, text=True, cwd=SRC)
    if p.returncode != 0:
        fail(f"dash_paths.sh on the repository: exit {p.returncode}: {p.stdout[-400:]}")

# 4. Every code point of category Cf (enumerated from Python's Unicode tables) escaped in text,
# CSV, Markdown and HTML, as the bidirectional controls are.
cf = [cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"]
label = "".join(f"a{chr(cp)}" for cp in cf)
cf_file = copy_seed(os.path.join(WORK, "cf", "cf.h5"),
                    lambda f: [g["identity"].attrs.__setitem__("note", label) for g in cases(f)])
outputs = {}
for fmt in ("text", "csv", "md"):
    rc, out, err = run("summary", cf_file, "--format", fmt, "--wide")
    outputs[f"summary {fmt}"] = (rc, out + err)
rc, out, err = run("report", "--bootstrap", "100", os.path.join(WORK, "cf_report"), cf_file)
for ext in ("html", "md"):
    path = os.path.join(WORK, "cf_report", "report." + ext)
    outputs[f"report.{ext}"] = (rc, open(path, errors="replace").read() if rc == 0 else err)
for where, (rc, text) in outputs.items():
    raw = sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cf"})
    if rc != 0 or raw:
        fail(f"{where}: exit {rc}; {len(raw)} format characters shown raw: {raw[:8]}")
    elif where != "summary text" and "\\u200b" not in text:
        fail(f"{where}: the zero-width space is not shown as \\u200b")

# 6. Messages.
# An index lock that is a directory is named as one.
lockdir = os.path.join(WORK, "lockdir")
copy_seed(os.path.join(lockdir, "small.h5"))
os.makedirs(os.path.join(lockdir, "ringscale-history.sqlite.lock"))
rc, out, err = run("history", "--", lockdir)
if rc != 2 or len(err.strip().splitlines()) != 1 or "is a directory" not in err:
    fail(f"index lock that is a directory: expected one line naming it, exit 2; exit {rc}: "
         f"{err[-300:]}")
# predict --validate with only marked held-out cases: no "nan" (the repro: the seed's collectives,
# which have no calibrated band, all measured on a contended machine).
pstudy = os.path.join(WORK, "predict_study")
subprocess.run([GEN_STUDY, pstudy], check=True, capture_output=True)


def contended(f):
    for g in cases(f):
        # Where the launch recorded the mark (it may say 0), else in "derived".
        owners = [g[k] for k in g if isinstance(g[k], h5py.Group) and "contended" in g[k].attrs]
        for owner in owners or [g["derived"] if "derived" in g else g]:
            owner.attrs["contended"] = np.int64(1)
            owner.attrs["contention"] = "other processes on the ranks' cores"


marked = os.path.dirname(copy_seed(os.path.join(pstudy, "marked", "small.h5"), contended))
rc, out, err = run("predict", os.path.join(pstudy, "calib"), "--validate", marked,
                   "--bootstrap", "200")
if re.search(r"\bnan(x|%|\b)", out + err, re.IGNORECASE):
    fail(f"predict --validate with marked cases shows nan: {(out + err)[-400:]}")
elif "marked case(s) left out" not in out + err:
    fail(f"predict --validate with marked cases: no line about them: exit {rc}: "
         f"{(out + err)[-400:]}")
# A machine field of NaN where the launcher always measures one is refused with a line, as inf
# and 0 are.
for value in (np.nan, np.inf):
    def nan_threads(f, value=value):
        d = cases(f)[0]["machine"]["own_threads"]
        v = d[:]
        v[0] = value
        d[...] = v
    path = copy_seed(os.path.join(WORK, "machine", f"own_threads_{value}.h5"), nan_threads)
    rc, out, err = run("summary", path)
    if rc != 0 or "machine/own_threads [rank 0] is" not in err:
        fail(f"machine/own_threads = {value}: expected one line refusing it; exit {rc}: "
             f"{err[-300:]}")
# Index rows keyed by the real path: `history s/h` then `history ../h` read nothing again.
rp = os.path.join(WORK, "realpath")
for i in (1, 2):
    copy_seed(os.path.join(rp, "s", "h", f"n{i}.h5"), launch_id=f"real-path-{i}")
os.makedirs(os.path.join(rp, "s", "sub"))
index = os.path.join(rp, "index.sqlite")
rc1, _, err1 = run("history", "--index", index, "--", "s/h", cwd=rp)
rc2, _, err2 = run("history", "--index", index, "--", "../h", cwd=os.path.join(rp, "s", "sub"))
if "2 file(s) read" not in err1 or "0 file(s) read, 2 unchanged" not in err2:
    fail(f"history s/h then ../h: expected the second to read nothing: {err1[-200:]} / "
         f"{err2[-200:]}")


def file_rows():
    db = sqlite3.connect(index)
    rows = [r for (r,) in db.execute("SELECT path FROM files")]
    db.close()
    return rows


# An index written before (rows under the path as given) is migrated once, no row twice.
db = sqlite3.connect(index)
for table in ("files", "launches"):
    db.execute(f"UPDATE {table} SET path = 's/h/' || substr(path, length(path) - 5)")
db.commit()
db.close()
rc3, _, err3 = run("history", "--index", index, "--", "s/h", cwd=rp)
rc4, _, err4 = run("history", "--index", index, "--", "s/h", cwd=rp)
rows = file_rows()
if ("0 file(s) read, 2 unchanged" not in err3 or "2 file(s) now keyed by their real path" not in
        err3 or "real path" in err4 or len(rows) != 2 or not all(os.path.isabs(r) for r in rows)):
    fail(f"migration: expected 2 rows moved once, nothing read, 2 absolute rows: {err3[-300:]} "
         f"/ {err4[-200:]} / {rows}")
# 30 junk files: one line for their kind, --verbose for each.
junk = os.path.join(WORK, "junk")
copy_seed(os.path.join(junk, "good.h5"))
for i in range(30):
    open(os.path.join(junk, f"junk{i:02d}.h5"), "wb").write(os.urandom(64))
rc, _, err = run("history", "--", junk)
rc_v, _, err_v = run("history", "--verbose", "--", junk)
lines = [ln for ln in err.splitlines() if "skipping" in ln]
lines_v = [ln for ln in err_v.splitlines() if "skipping" in ln]
if len(lines) != 1 or "skipping 30 files" not in lines[0] or len(lines_v) != 30:
    fail(f"30 junk files: expected one counted line, 30 with --verbose; got {len(lines)} and "
         f"{len(lines_v)}: {lines[:2]}")

print(f"{len(failures)} finding(s) failed" if failures else "every finding holds")
sys.exit(1 if failures else 0)
