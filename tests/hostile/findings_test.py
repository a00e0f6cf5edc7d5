#!/usr/bin/python3
"""Findings against ringscale-stats, one check each: untrusted results files never run code,
corrupt memory or silently change a figure.

usage: findings_test.py STATS SEED.h5 WORK_DIR

SEED.h5 is a real launch's file (the e2e fixture small.h5). Crafted files come from craft.py.
Each check prints FAIL with what it saw; the exit status is 1 when any failed.
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft  # noqa: E402

STATS, SEED, WORK = sys.argv[1:4]
failures = []
MEM_CAP = "" if os.environ.get("RINGSCALE_ASAN") else "ulimit -v 2097152; "
if os.environ.get("RINGSCALE_ASAN"):
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args):
    cmd = f"{MEM_CAP}exec timeout 20 " + " ".join(f"'{a}'" for a in (STATS,) + args)
    p = subprocess.run(["bash", "-c", cmd], capture_output=True)
    return p.returncode, p.stdout, p.stderr


def text(b):
    return b.decode("utf-8", "replace")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
files = craft.craft_all(SEED, os.path.join(WORK, "crafted"), ("files",))

# 1. A newline in an identity string must not turn into gnuplot commands (system() runs a
# shell): the report draws its plots and no command from the file runs.
rc, out, err = run("report", os.path.join(WORK, "report"), files["identity_newline"])
if os.path.exists(os.path.join(WORK, "report", "PWNED")):
    fail("report: a command from the file ran through gnuplot (the marker file exists)")
if rc != 0:
    fail(f"report on identity_newline: exit {rc}: {text(err)[:300]}")

# 2. Escape sequences, newlines and non-UTF-8 bytes from a file never reach a terminal raw,
# and JSON output never fails on them.
raw = [b"\x1b", b"\x07", b"\r", b"\xc2\x9b"]
for cmd in (["summary"], ["summary", "--format", "md"], ["summary", "--format", "csv"],
            ["export", "--csv", "-"], ["report", os.path.join(WORK, "report_esc")]):
    rc, out, err = run(*cmd, files["identity_escape"])
    md = b""
    if cmd[0] == "report":
        md = open(os.path.join(WORK, "report_esc", "report.md"), "rb").read()
    bad = [r for r in raw if r in out or r in err or r in md]
    if rc != 0 or bad:
        fail(f"{' '.join(cmd)} on identity_escape: exit {rc}, raw bytes {bad} in the output")
for cmd in (["summary", "--format", "json"], ["export", "--json", "-"]):
    rc, out, err = run(*cmd, files["identity_non_utf8"])
    try:
        json.loads(out.decode("utf-8"))
    except ValueError as e:
        fail(f"{' '.join(cmd)} on a non-UTF-8 identity: exit {rc}, not JSON ({e}): {text(err)}")
rc, out, err = run("export", "--csv", "-", files["identity_non_utf8"])
try:
    out.decode("utf-8")
except UnicodeDecodeError:
    fail("export --csv of a non-UTF-8 identity is not UTF-8")

# 3. Each damaged case is skipped with one line naming the file, the case and the reason;
# the file's other cases are still read (no silently wrong figure, no memory corruption).
expected = {
    "attr_world_size_2x2": "'world_size' is of shape [2, 2], not a single value",
    "attr_job_array": "'job' is of shape [3]",
    "attr_status_array": "'status' is of shape [2]",
    "attr_fixed_string_array": "'variant' is of shape [64]",
    "external_storage": "external files",
    "external_link": "external link",
    "virtual_dataset": "virtual dataset",
    "warmup_half": "is_warmup[0] is 0.5",
    "warmup_minus_one": "is_warmup[0] is -1",
    "peak_rss_nan": "peak_rss_bytes [rank 0] is nan",
    "peak_host_short": "'peak_host_bytes' has shape [1], expected [2]",
    "peak_host_negative": "peak_host_bytes [rank 0] is -1",
    "comm_above_time": "more than that step's time_s",
    "busbw_negative": "busbw_factor is -1.5",
    "time_1x1": "expected [1, 1]",
    "nan_comm_wait": "comm_wait_s [iteration 5, rank 0] is nan",
    "no_warmup_info": "no 'is_warmup' dataset",
    "duplicate_case": "case 0009 unreadable, dropped: the same case as case 0000",
}

with h5py.File(SEED, "r") as f:
    seed_cases = len(f["cases"])
for name, why in expected.items():
    rc, out, err = run("summary", "--format", "json", files[name])
    lines = [l for l in text(err).splitlines() if name in l]
    try:
        rows = len(json.loads(out)["cases"])
    except ValueError:
        rows = -1
    # duplicate_case adds the group it drops; external_link adds a link, dropped too
    want = seed_cases if name == "duplicate_case" else seed_cases - 1
    if rc != 0 or len(lines) != 1 or why not in lines[0] or rows != want:
        fail(f"{name}: expected one line with '{why}' and {want} cases; exit {rc}, "
             f"{rows} cases, stderr: {text(err)[:300]}")
# A non-scalar root attribute: the file is skipped, the rest of the study read.
rc, out, err = run("summary", files["attr_schema_array"], SEED)
if rc != 0 or "'schema' is of shape [2]" not in text(err):
    fail(f"attr_schema_array: expected the file skipped and the seed read; exit {rc}: {text(err)}")
# No figure from NaN memory: no 16 EiB.
rc, out, err = run("summary", files["peak_rss_nan"])
if b"EiB" in out or b"1.8e+19" in out or b"17592186044416" in out:
    fail("peak_rss_nan: a NaN peak shows as a huge memory figure")

# 4. One launch counts once: a symlink, a second path and a byte-identical copy of a file in
# the input are read once with a note; compare then calls the difference unconfirmed.
def launch_like(dst, factor, launch_id):
    """A launch of the seed's cases with 40 timed rows each (enough for a significant change
    within one launch), times scaled by `factor`."""
    shutil.copy(SEED, dst)
    rnd = np.random.default_rng(1)
    with h5py.File(dst, "r+") as f:
        f.attrs["launch_id"] = launch_id
        for g in f["cases"].values():
            t = np.tile(g["time_s"][...][2:], (10, 1)) * factor
            t *= rnd.uniform(0.98, 1.02, t.shape)
            for name, v in (("time_s", t), ("compute_s", 0 * t), ("comm_wait_s", 0.5 * t),
                            ("is_warmup", np.zeros(len(t), "u1"))):
                del g[name]
                g[name] = v
            # The optional per-step CPU times and counts keep time_s's rows, as the launcher
            # writes them (the reader refuses a file where they do not).
            for name in ("cpu_s", "compute_cpu_s", "comm_wait_cpu_s", "instructions", "cycles"):
                if name in g:
                    v = np.tile(g[name][...][2:], (10, 1))
                    del g[name]
                    g[name] = v


base, new = os.path.join(WORK, "base"), os.path.join(WORK, "new")
os.makedirs(base)
os.makedirs(new)
launch_like(os.path.join(base, "a.h5"), 1.0, "a" * 32)
os.symlink(os.path.join(base, "a.h5"), os.path.join(base, "a_link.h5"))
shutil.copy(os.path.join(base, "a.h5"), os.path.join(base, "a_copy.h5"))
launch_like(os.path.join(new, "b.h5"), 1.5, "b" * 32)
shutil.copy(os.path.join(new, "b.h5"), os.path.join(new, "b_copy.h5"))
rc, out, err = run("summary", "--format", "json", base, os.path.join(base, "..", "base", "a.h5"))
launches = [c["launches"] for c in json.loads(out)["cases"]] if rc == 0 else []
notes = [l for l in text(err).splitlines() if "counted once" in l]
if rc != 0 or set(launches) != {1} or len(notes) != 2:
    fail(f"one launch through a link, a copy and two paths: launches {set(launches)}, "
         f"{len(notes)} notes (want 1 and 2); exit {rc}: {text(err)[:300]}")
rc, out, err = run("compare", base, new)
# One launch per side decides nothing (the one decision rule: "not decided (one launch)").
if rc != 0 or "not decided (one launch)" not in text(out) or "regression" in text(out):
    fail(f"compare of one launch per side (seen several times): exit {rc}, "
         f"{text(out)[:300]} {text(err)[:300]}")

# A damaged copy of a launch (a case group lost) whose path sorts first does not hide the
# full copy: the copy with more readable cases counts, and the note says which.
copies = os.path.join(WORK, "copies")
os.makedirs(copies)
launch_like(os.path.join(copies, "c.h5"), 1.0, "c" * 32)
shutil.copy(os.path.join(copies, "c.h5"), os.path.join(copies, "0_partial.h5"))
with h5py.File(os.path.join(copies, "0_partial.h5"), "r+") as f:
    del f["cases"][sorted(f["cases"].keys())[0]]
    want = len(f["cases"]) + 1
rc, out, err = run("summary", "--format", "json", copies)
got = len(json.loads(out)["cases"]) if rc == 0 else -1
notes = [l for l in text(err).splitlines() if "counted once, from" in l and "c.h5" in l]
if rc != 0 or got != want or len(notes) != 1:
    fail(f"a partial copy sorted first: {got} cases (want {want}), {len(notes)} notes naming "
         f"the full copy; exit {rc}: {text(err)[:300]}")

# 5. export never overwrites a results file: not an input (any path to it), not another .h5.
victim = os.path.join(WORK, "victim.h5")
shutil.copy(SEED, victim)
before = open(victim, "rb").read()
input_a = open(os.path.join(base, "a.h5"), "rb").read()
for target, inputs in ((victim, [victim]), (os.path.join(base, "a_link.h5"), [base]),
                       (victim, [SEED])):
    for flag in ("--csv", "--json"):
        rc, out, err = run("export", flag, target, *inputs)
        if rc != 2 or len(text(err).splitlines()) != 1 or open(victim, "rb").read() != before:
            fail(f"export {flag} onto {os.path.basename(target)}: exit {rc}, the file "
                 f"{'kept' if open(victim, 'rb').read() == before else 'overwritten'}: {text(err)}")
        shutil.copy(SEED, victim)
if open(os.path.join(base, "a.h5"), "rb").read() != input_a:
    fail("export through a link overwrote the input a.h5")

print(f"findings on untrusted files: {len(failures)} failures")
sys.exit(1 if failures else 0)
