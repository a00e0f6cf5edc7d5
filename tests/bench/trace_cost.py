#!/usr/bin/env python3
"""The cost of --trace: PAIRS interleaved launches of the same ring case, one traced (--trace 1)
and one not, in alternating order; per pair the ratio of the median step (slowest rank) traced
over untraced; prints the median ratio with a 95% percentile-bootstrap CI and the load.

usage: trace_cost.py RINGSCALE MPIEXEC WORKDIR [PAIRS=10] [SEQ=4K]
"""
import os
import random
import statistics
import subprocess
import sys

import h5py

ringscale, mpiexec, work = sys.argv[1:4]
pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
seq = sys.argv[5] if len(sys.argv) > 5 else "4K"
os.makedirs(work, exist_ok=True)


def median_step(traced, i):
    path = os.path.join(work, f"{'t' if traced else 'u'}{i}.h5")
    cmd = [mpiexec, "-q", "-np", "2", "--oversubscribe", "--bind-to", "none", ringscale,
           "--job", "ring_attention", "--seq-len", seq, "--pass", "fwd+bwd", "-w", "2", "-n",
           "10", "--validate", "off", "--accuracy", "off", "-o", path]
    if traced:
        cmd += ["--trace", "1"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    with h5py.File(path, "r") as f:
        g = f["cases"][sorted(f["cases"])[0]]
        warm = g["is_warmup"][()]
        rows = [max(r) for r, w in zip(g["time_s"][()], warm) if not w]
    return statistics.median(rows)


ratios = []
for i in range(pairs):
    order = [True, False] if i % 2 == 0 else [False, True]  # alternate who goes first
    t = {traced: median_step(traced, i) for traced in order}
    ratios.append(t[True] / t[False])
    print(f"pair {i}: traced {t[True] * 1e3:.2f} ms, untraced {t[False] * 1e3:.2f} ms, "
          f"ratio {ratios[-1]:.4f}", flush=True)
rng = random.Random(1)
boot = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
print(f"median ratio traced/untraced {statistics.median(ratios):.4f} "
      f"(95% CI {boot[50]:.4f} .. {boot[1949]:.4f}, {pairs} pairs, np=2, ring S={seq} fwd+bwd); "
      f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
