"""Summaries of tests/bench/masks.sh's results files (one reader: h5_cases.flat).

usage: masks.py sparse|window|docs FILE.h5 [FILE.h5 ...]
The machine is shared and other work only adds time, so the least disturbed measurement is
taken: a case's time is its fastest timed iteration (of the slowest rank) over all rounds, and
its exposed communication likewise.
"""
import sys

import h5py
import numpy as np

from h5_cases import flat

TARGETS = {0.5: (2.0, 0.8), 0.75: (4.0, 0.7), 0.9: (10.0, 0.5)}  # sparsity: ideal, fraction


def cases(paths):
    for path in paths:
        with h5py.File(path, "r") as f:
            for c in f["cases"].values():
                a = flat(c)
                keep = c["is_warmup"][:] == 0
                t = c["time_s"][:][keep].max(axis=1)
                w = c["comm_wait_s"][:][keep].max(axis=1)
                yield a, float(np.min(t)), float(np.min(w))


def sparse(paths):
    times, reduction = {}, {}
    for a, t, _ in cases(paths):
        key = (a.get("sparse_pattern", "dense"), float(a.get("sparsity", 0.0)))
        times.setdefault(key, []).append(t)
        reduction[key] = float(a.get("compute_reduction", 1.0))
    dense = min(times[("dense", 0.0)])
    print(f"dense: {dense * 1e3:.1f} ms")
    print("| pattern | sparsity | compute reduction | time (ms) | speedup | of ideal | target |")
    print("|---|---|---|---|---|---|---|")
    for (pattern, f), ts in sorted(times.items()):
        if pattern == "dense":
            continue
        t = min(ts)
        s, ideal = dense / t, reduction[(pattern, f)]
        target = ""
        if pattern == "random" and f in TARGETS:
            want = TARGETS[f][0] * TARGETS[f][1]
            target = f">= {want:.1f}x: {'met' if s >= want else 'MISSED'}"
        print(f"| {pattern} | {f:.0%} | {ideal:.2f}x | {t * 1e3:.1f} | {s:.2f}x | "
              f"{s / ideal:.0%} | {target} |")


def window(paths):
    rows = {}
    for a, t, w in cases(paths):
        name = a["job"] + ("/window" if "window" in a else "/dense")
        rows.setdefault(name, []).append((t, w, float(a["comm_bytes_per_iter"])))
    for name, vals in sorted(rows.items()):
        t = min(v[0] for v in vals)
        w = min(v[1] for v in vals)
        print(f"{name:28s} step {t * 1e3:8.1f} ms  exposed comm {w * 1e3:7.1f} ms  "
              f"sent/rank {vals[0][2] / 2**20:7.1f} MiB")
    ring, dense = rows.get("ring_attention/window"), rows.get("ring_attention/dense")
    gather = rows.get("context_parallel/window")
    if ring and dense:
        print(f"window ring sends {ring[0][2] / dense[0][2]:.2f} of the dense causal ring's bytes "
              f"(one K/V block a pass instead of P-1)")
        t_r, t_d = (min(v[0] for v in x) for x in (ring, dense))
        print(f"against the dense causal ring: step {(t_d - t_r) * 1e3:.1f} ms "
              f"({(1 - t_r / t_d) * 100:.1f}%) saved (compute and exchanges)")
    if ring and gather:  # the same mask and compute, every block exchanged
        t_r, t_g = (min(v[0] for v in x) for x in (ring, gather))
        w_r, w_g = (min(v[1] for v in x) for x in (ring, gather))
        print(f"against the all-gather with the same window: step {(t_g - t_r) * 1e3:.1f} ms "
              f"({(1 - t_r / t_g) * 100:.1f}%) and exposed communication {(w_g - w_r) * 1e3:.1f} "
              f"ms saved per step")


def docs(paths):
    for a, t, w in cases(paths):
        imb = float(a["work_imbalance"])
        verdict = " (target <= 1.1: " + ("met)" if imb <= 1.1 else "MISSED)")
        print(f"layout {a['layout']:10s} work imbalance {imb:.3f}"
              f"{verdict if a['layout'] == 'zigzag' else ''}  step {t * 1e3:.1f} ms  "
              f"exposed comm {w * 1e3:.1f} ms  "
              f"sent/rank {float(a['comm_bytes_per_iter']) / 2**20:.1f} MiB  "
              f"reduction vs dense causal {float(a['compute_reduction']):.2f}x")


if __name__ == "__main__":
    {"sparse": sparse, "window": window, "docs": docs}[sys.argv[1]](sys.argv[2:])
