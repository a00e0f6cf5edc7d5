#!/usr/bin/env python3
"""--trace end to end on the CPU at np=2 and np=4: ring attention (zigzag, causal, fwd+bwd),
the all-gather and Ulysses schemes and a train_step, each with --trace 1; the ring again with
--overlap off. For each case: `ringscale-stats trace` writes JSON that parses, with one process
per rank and a flow per send; each rank's waits in it agree with the case's comm_wait_s for the
kept iteration (timed apart: the phase timer, not the events) within 5% or 50 us; the overlap
table and the report state the worst step, fully exposed with --overlap off.

usage: trace_e2e.py RINGSCALE RINGSCALE_STATS MPIEXEC WORKDIR
env: DEVICE (cpu; cuda runs every launch with --device cuda, tests/gpu/trace_gpu.sh), NPS (the
     rank counts, "2 4")
"""
import json
import os
import shutil
import subprocess
import sys

import h5py

ringscale, stats, mpiexec, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fails = []
DEVICE = os.environ.get("DEVICE", "cpu")
if DEVICE not in ("cpu", "cuda"):
    sys.exit(f"trace_e2e.py: DEVICE must be cpu or cuda, not {DEVICE!r}")
NPS = [int(n) for n in os.environ.get("NPS", "2 4").split() if n.isdigit() and 0 < int(n) <= 64]
if not NPS:
    sys.exit("trace_e2e.py: NPS must list rank counts from 1 to 64")

SMALL_ATTN = ["--seq-len", "256", "--heads", "4", "--head-dim", "64", "--causal", "1"]
LAUNCHES = {
    "ring": ["--job", "ring_attention", "--layout", "zigzag", "--pass", "fwd+bwd"] + SMALL_ATTN,
    "ring_off": ["--job", "ring_attention", "--layout", "zigzag", "--pass", "fwd+bwd",
                 "--overlap", "off"] + SMALL_ATTN,
    "cp": ["--job", "context_parallel", "--variant", "allgather,ulysses", "--pass", "fwd+bwd"]
    + SMALL_ATTN,
    "train": ["--job", "train_step", "--layers", "2", "--hidden", "128", "--heads", "2",
              "--vocab", "128", "--train-seq-len", "64", "--tokens", "512"],
}


def run(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        fails.append(f"{what}: exit {p.returncode}\n{p.stdout[-3000:]}")
        return None
    return p.stdout


def check(cond, what):
    if cond:
        print("ok:", what)
    else:
        print("FAILED:", what)
        fails.append(what)


def case_attrs(g):
    out = {}
    for sub in g.values():
        if isinstance(sub, h5py.Group):
            out.update(sub.attrs)
    return out


def check_file(path, np_, name):
    with h5py.File(path, "r") as f:
        groups = sorted(f["cases"])
        traced = [k for k in groups if "trace" in f["cases"][k]]
        statuses = [str(case_attrs(f["cases"][k]).get("status")) for k in groups]
    check(len(traced) == len(groups) and len(groups) > 0,
          f"{name} np={np_}: every case has a trace ({len(traced)}/{len(groups)}; {statuses})")
    out = os.path.join(work, f"{name}_{np_}.json")
    if run([stats, "trace", path, "-o", out], f"trace {name} np={np_}") is None:
        return
    with open(out) as fh:
        doc = json.load(fh)
    ev = doc["traceEvents"]
    for i, group in enumerate(traced):
        with h5py.File(path, "r") as f:
            g = f["cases"][group]
            a = case_attrs(g)
            tr = g["trace"]
            row = int(tr["kept_iteration"][0])
            wait_s = g["comm_wait_s"][row]
            sends = int(sum(1 for k in tr["kind"][()] if k == 6))  # trace::kind::send
        what = f"{name} np={np_} case {group} ({a.get('variant')})"
        lo, hi = i * 65536, (i + 1) * 65536
        mine = [e for e in ev if lo <= e["pid"] < hi]
        names = sorted(e["args"]["name"] for e in mine
                       if e["ph"] == "M" and e["name"] == "process_name")
        check(names == sorted(f"rank {r} (host 0)" for r in range(np_)),
              f"{what}: one process per rank named rank r (host h): {names}")
        flows = sum(1 for e in mine if e["ph"] == "s")
        check(flows == sends and sum(1 for e in mine if e["ph"] == "f") == sends,
              f"{what}: a flow per transfer ({flows} flows, {sends} sends)")
        for r in range(np_):
            waits = sum(e["dur"] for e in mine if e["ph"] == "X" and e["pid"] == lo + r
                        and e["cat"] == "wait") * 1e-6
            want = float(wait_s[r])
            check(abs(waits - want) <= max(0.05 * want, 50e-6),
                  f"{what} rank {r}: waits {waits * 1e6:.1f} us vs comm_wait_s "
                  f"{want * 1e6:.1f} us")


for np_ in NPS:
    for name, args in LAUNCHES.items():
        path = os.path.join(work, f"{name}_{np_}.h5")
        cmd = [mpiexec, "-q", "-np", str(np_), "--oversubscribe", "--bind-to", "none", ringscale,
               "-w", "1", "-n", "3", "--trace", "1", "--threads", "1", "--device", DEVICE,
               "-o", path] + args
        if run(cmd, f"launch {name} np={np_}") is None:
            continue
        check_file(path, np_, name)

# --overlap off: every transfer waited for at once, so the worst step is wholly exposed, in the
# overlap table and in the report.
off = os.path.join(work, f"ring_off_{NPS[-1]}.h5")
if os.path.exists(off):
    table = run([stats, "overlap", off], "overlap --overlap off") or ""
    worst = [l for l in table.splitlines() if l.startswith("worst step:")]
    check(worst and worst[0].endswith("(100%)"), f"overlap off: worst step fully exposed: {worst}")
    report_dir = os.path.join(work, "report")
    if run([stats, "report", report_dir, off], "report"):
        md = open(os.path.join(report_dir, "report.md")).read()
        html = open(os.path.join(report_dir, "report.html")).read()
        section = md.split("## Timelines", 1)[-1].split("\n## ", 1)[0]
        items = section.replace("\n  ", " ").splitlines()  # list items wrap at 100 columns
        lines = [l for l in items if "overlap=off" in l and "worst step" in l]
        check(lines and "(100%)" in lines[0], f"report: worst step fully exposed: {lines}")
        check(html.count('<g class="lane"') == NPS[-1],
              "report.html: a lane per rank of the timeline")

if fails:
    print(f"{len(fails)} check(s) failed:")
    for f in fails:
        print(" -", f)
    sys.exit(1)
print("all trace checks passed")
