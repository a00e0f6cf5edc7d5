#!/usr/bin/python3
"""Hostile results files against every ringscale-stats command: no crash, no silent loss, no
silently wrong figure.

usage: hostile_test.py STATS SEED.h5 CORPUS_DIR WORK_DIR

SEED.h5 is a real launch's file (the test makes it). Each crafted file below damages it in
one way the reader must catch; CORPUS_DIR holds byte-flipped files our fuzzer found crashing
HDF5 1.10. For every hostile file and every command: exit 0, 1 or 2, never a signal, within
20 s and 2 GiB, at most one stderr line per dropped file, and a good file given beside it is
still analysed. Then each finding is checked for its specific outcome.
"""
import glob
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft as crafted_shapes  # noqa: E402  (the identity group is findings35_test.py's)

STATS, SEED, CORPUS, WORK = sys.argv[1:5]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def case_groups(f):
    return [f["cases"][k] for k in sorted(f["cases"].keys())]


def find_attr_owner(group, name):
    """The group (the case or one of its subgroups) that holds attribute `name`."""
    if name in group.attrs:
        return group
    for sub in group.values():
        if isinstance(sub, h5py.Group) and name in sub.attrs:
            return sub
    return None


def craft(name, edit):
    path = os.path.join(WORK, name + ".h5")
    shutil.copy(SEED, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


def set_times(value_fn):
    def edit(f):
        for g in case_groups(f):
            t = g["time_s"][...]
            g["time_s"][...] = value_fn(t)
    return edit


def huge_time_s(shape):
    def edit(f):
        g = case_groups(f)[0]
        del g["time_s"]
        # Declared but never written: HDF5 allocates no storage, the file stays small.
        g.create_dataset("time_s", shape=shape, dtype="f8")
    return edit


def drop_is_warmup(f):
    for g in case_groups(f):
        del g["is_warmup"]


def bad_warmup_flag(f):
    g = case_groups(f)[0]
    w = g["is_warmup"][...]
    w[0] = 2
    g["is_warmup"][...] = w


def one_nan(f):
    g = case_groups(f)[0]
    t = g["time_s"][...]
    t[-1, t.shape[1] - 1] = np.nan
    g["time_s"][...] = t


def huge_world(f):
    g = case_groups(f)[0]
    owner = find_attr_owner(g, "world_size")
    owner.attrs["world_size"] = np.int64(1_000_000_000)


def many_links(f):
    cases = f["cases"]
    first = sorted(cases.keys())[0]
    for k in sorted(cases.keys())[1:]:
        del cases[k]
    for i in range(3000):
        cases[f"link{i:05d}"] = cases[first]


# The 2 GiB address-space cap cannot hold under AddressSanitizer, which reserves terabytes of
# shadow memory at start (tests/sanitize.sh sets RINGSCALE_ASAN=1): there only the time cap.
MEM_CAP = "" if os.environ.get("RINGSCALE_ASAN") else "ulimit -v 2097152; "
# Under ASan, HDF5's own leaks on a damaged file's error paths are not ours to fix.
if os.environ.get("RINGSCALE_ASAN"):
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"


def run(args):
    cmd = f"{MEM_CAP}exec timeout 20 {STATS} " + " ".join(args)
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


os.makedirs(WORK, exist_ok=True)
crafted = {
    "negative_times": craft("negative_times", set_times(lambda t: -np.abs(t) - 1e-4)),
    "nan_times": craft("nan_times", set_times(lambda t: t * np.nan)),
    "one_nan": craft("one_nan", one_nan),
    "huge_declared": craft("huge_declared", huge_time_s((6, 100_000_000))),
    "huge_rows": craft("huge_rows", huge_time_s((2_000_000_000, 2))),
    "no_is_warmup": craft("no_is_warmup", drop_is_warmup),
    "bad_warmup_flag": craft("bad_warmup_flag", bad_warmup_flag),
    "huge_world": craft("huge_world", huge_world),
    "many_links": craft("many_links", many_links),
}
crafted.update({"files_" + k: v for k, v in crafted_shapes.craft_all(
    SEED, os.path.join(WORK, "crafted_files"), ("files",)).items()})
# The accuracy fields and dtypes (each finding's outcome: findings51_test.py).
crafted.update({"accuracy_" + k: v for k, v in crafted_shapes.craft_all(
    SEED, os.path.join(WORK, "crafted_accuracy"), ("accuracy",)).items()})
fuzzed = sorted(glob.glob(os.path.join(CORPUS, "*.h5")))
if not fuzzed:
    fail(f"no fuzzed corpus files in {CORPUS}")

# 1. Every command, every hostile file, alone and beside the good seed.
commands = [["summary"], ["scaling"], ["model"], ["export", "--csv", os.path.join(WORK, "x.csv")],
            ["report", os.path.join(WORK, "r")], ["crossover"], ["profile"],
            ["export", "--json", os.path.join(WORK, "x.json")], ["accuracy"]]
for path in list(crafted.values()) + fuzzed:
    for cmd in commands:
        for inputs in ([path], [path, SEED]):
            rc, out, err = run(cmd + inputs)
            name = os.path.basename(path)
            lines = [l for l in err.splitlines() if name in l]
            tag = f"{cmd[0]} {' '.join(os.path.basename(i) for i in inputs)}"
            if rc not in (0, 1, 2):
                fail(f"{tag}: exit {rc} (signal or timeout)")
            elif len(lines) > 1:
                fail(f"{tag}: {len(lines)} stderr lines name the file: {lines[:3]}")
            # The seed alone has one P, so scaling and model have nothing to fit: only the
            # per-case commands must still analyse the good file.
            if len(inputs) == 2 and cmd[0] in ("summary", "export", "report") and rc != 0:
                fail(f"{tag}: the good file beside it got no analysis (exit {rc}): {err[:200]}")
    rc, out, err = run(["compare", SEED, path])
    if rc not in (0, 1, 2):
        fail(f"compare seed {os.path.basename(path)}: exit {rc}")


# 2. Each finding's specific outcome.
def summary(path):
    return run(["summary", path])


def expect_dropped(key, word):
    rc, out, err = summary(crafted[key])
    # Case 0000 is damaged; the seed's other cases (if any) are still reported.
    if rc not in (0, 2) or sum(word in l for l in err.splitlines()) != 1 or "0000" not in err:
        fail(f"{key}: expected case 0000 dropped with '{word}' in one line; got exit {rc}:"
             f" {err.strip()[:200]}")


expect_dropped("negative_times", "finite and >= 0")
expect_dropped("nan_times", "finite and >= 0")
expect_dropped("bad_warmup_flag", "0 or 1")
expect_dropped("huge_world", "rank columns")
expect_dropped("huge_declared", "declares shape")
expect_dropped("huge_rows", "declares shape")

# One NaN in one rank drops that case (it would vanish into the slowest-rank maximum), the
# other cases of the file are still reported.
rc, out, err = summary(crafted["one_nan"])
if rc != 0 or "finite" not in err or out.count(" ok") < 2:
    fail(f"one_nan: expected one case dropped and the others reported; exit {rc}, {err[:200]}")

# Without is_warmup the warm-up rows come from the 'warmup' attribute, not counted as timed.
def timed_rows(path):
    rc, out, err = run(["export", "--csv", "-", path])
    rows = [l.split(",") for l in out.splitlines()[1:]]
    return rc, err, sum(1 for r in rows if len(r) > 9 and r[9] == "0")


rc, err, got = timed_rows(crafted["no_is_warmup"])
rc2, err2, want = timed_rows(SEED)
if rc != 0 or rc2 != 0 or got != want or want == 0:
    fail(f"no_is_warmup: {got} timed rows exported, the seed has {want} (warm-up rows counted"
         f" as timed?) exit {rc}: {err[:200]}")

# 3,000 links to one case are one case, one launch.
rc, out, err = summary(crafted["many_links"])
if rc != 0 or "links" not in err or "2999" in out:
    fail(f"many_links: expected one case and one line about links; exit {rc}: {err[:200]}")

print(f"hostile files: {len(crafted)} crafted, {len(fuzzed)} fuzzed; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
