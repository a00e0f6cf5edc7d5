#!/usr/bin/python3
"""Findings against ringscale-stats on untrusted input (identities, outputs), one check each:
topology that contradicts itself and values no launch writes are dropped with one line,
report.md carries no link, image or HTML from a file, every output file is whole or absent
and never written through a symlink, and predict's --at refuses a target count before work.
(The launcher's findings and the one-line refusals are lines of tests/e2e/bad_input.cases.)

usage: findings35_test.py STATS SEED.h5 WORK_DIR

SEED.h5 is a real launch's file (the e2e fixture small.h5). Each check prints FAIL with what
it saw; the exit status is 1 when any failed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft  # noqa: E402

STATS, SEED, WORK = sys.argv[1:4]
failures = []
ASAN = bool(os.environ.get("RINGSCALE_ASAN"))
MEM_CAP = "" if ASAN else "ulimit -v 2097152; "
if ASAN:
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(*args, limit=""):
    """ringscale-stats ARGS under the memory cap (and `limit`, more ulimit commands)."""
    cmd = f"{MEM_CAP}{limit}exec timeout 20 " + " ".join(f"'{a}'" for a in (STATS,) + args)
    start = time.monotonic()
    p = subprocess.run(["bash", "-c", cmd], capture_output=True)
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def text(b):
    return b.decode("utf-8", "replace")


def lines(b):
    return [l for l in text(b).splitlines() if l.strip()]


def listing(d):
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
files = craft.craft_all(SEED, os.path.join(WORK, "crafted"), ("identity",))
with h5py.File(SEED, "r") as f:
    seed_cases = len(f["cases"])

# 1. Topology that contradicts itself, and values no launch writes: the case is dropped with
# one line naming the file, the case and the reason; the file's other cases are still read.
expected = {
    "topology_contradicts": "nodes 4 x ranks_per_node 8 = 32, but world_size is 2",
    "nodes_negative": "nodes is -1: it must be a whole number from 1 to 2^24",
    "nodes_zero": "nodes is 0: it must be a whole number",
    "nodes_nan": "nodes is nan: it must be a whole number",
    "uneven_impossible": "uneven_nodes with nodes 2 and at most 1 ranks per node cannot hold "
                         "world_size 2",
    "scope_unknown": "scope is 'bogus': not one of world, intra, inter",
    "shift_negative": "shift is -1: a peer distance is a whole number",
    "device_unknown": "device is 'tpu': not one of cpu, cuda",
}
for name, why in expected.items():
    for cmd in (["summary", "--format", "json"], ["crossover"], ["export", "--csv", "-"]):
        rc, out, err, _ = run(*cmd, files[name])
        named = [l for l in lines(err) if name in l]
        ok = len(named) == 1 and why in named[0] and "case 0000" in named[0]
        if cmd[0] == "summary":
            try:
                rows = len(json.loads(out)["cases"])
            except ValueError:
                rows = -1
            ok = ok and rc == 0 and rows == seed_cases - 1
        if not ok:
            fail(f"{' '.join(cmd)} {name}: expected case 0000 dropped in one line with '{why}'; "
                 f"exit {rc}, stderr: {text(err)[:300]}")

# 2. report.md: text from a file never becomes a script tag, a link or an image a Markdown
# viewer fetches; it is still shown, escaped.
report = os.path.join(WORK, "report_md")
rc, out, err, _ = run("report", report, files["identity_markdown"])
md = open(os.path.join(report, "report.md"), "rb").read() if rc == 0 else b""
# Each opening character not preceded by a backslash: a tag, a link, an image, an autolink.
raw = [rb"(?<!\\)<script", rb"(?<!\\)\]\(javascript:", rb"(?<!\\)\[img", rb"(?<!\\)<http://evil"]
found = [r for r in raw if re.search(r, md)]
if rc != 0 or found or b"\\<script\\>alert(1)\\</script\\>" not in md:
    fail(f"report on identity_markdown: exit {rc}, unescaped {found} in report.md, escaped "
         f"text {'present' if b'<script' in md else 'absent'}: {text(err)[:200]}")

# 3. Outputs whole or absent: a file-size limit (as a full disk) mid-write leaves the old file
# and nothing partial; stats exits 2 with one line. `ulimit -f 1`: 1 KiB per file.
small = "ulimit -f 1; "
for flag, name in (("--csv", "out.csv"), ("--json", "out.json")):
    d = os.path.join(WORK, "full_" + name)
    os.makedirs(d)
    with open(os.path.join(d, name), "w") as f:
        f.write("old\n")
    rc, out, err, _ = run("export", flag, os.path.join(d, name), SEED, limit=small)
    left = listing(d)
    kept = open(os.path.join(d, name)).read() if name in left else None
    if rc != 2 or len(lines(err)) != 1 or "File too large" not in text(err) or left != [name] \
            or kept != "old\n":
        fail(f"export {flag} over a file-size limit: exit {rc}, left {left}, old file "
             f"{'kept' if kept == 'old' + chr(10) else 'changed'}: {text(err)[:300]}")
d = os.path.join(WORK, "full_report")
rc, out, err, _ = run("report", d, SEED, limit=small)
if rc != 2 or len(lines(err)) != 1 or listing(d):
    fail(f"report over a file-size limit: exit {rc}, left {listing(d)[:8]}: {text(err)[:300]}")

# A symlink where an output goes is replaced, never followed: its target keeps its bytes.
d = os.path.join(WORK, "links")
os.makedirs(d)
victims = {}
for link in ("report.md", "busbw.gp", "busbw.dat", "out.csv"):
    victim = os.path.join(WORK, "victim_" + link)
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, os.path.join(d, link))
    victims[link] = victim
rc1, _, err1, _ = run("report", d, SEED)
rc2, _, err2, _ = run("export", "--csv", os.path.join(d, "out.csv"), SEED)
changed = [k for k, v in victims.items() if open(v).read() != "precious\n"]
still_links = [k for k in ("report.md", "out.csv") if os.path.islink(os.path.join(d, k))]
if rc1 != 0 or rc2 != 0 or changed or still_links:
    fail(f"outputs at symlinks: report exit {rc1}, export exit {rc2}, targets overwritten "
         f"{changed}, links left {still_links}: {text(err1)[:200]} {text(err2)[:200]}")
if [n for n in listing(d) if n.startswith(".")]:
    fail(f"a temporary or staging file left in {d}: {listing(d)}")

# 4. predict --at: a target count beyond the limit is refused at once, not after a spin (30,000
# values per field spun 37 s; values of one digit keep the argument under Linux's 128 KiB).
many = ",".join(["1"] * 30000)
rc, out, err, took = run("predict", "--at", f"world_size={many},ranks_per_node={many}", SEED)
if rc != 2 or len(lines(err)) != 1 or "more than 100000 targets" not in text(err) or took > 10:
    fail(f"--at with 30,000 values per field: exit {rc} after {took:.1f} s: {text(err)[:200]}")

print(f"findings on identities and outputs: {len(failures)} failures")
sys.exit(1 if failures else 0)
