"""Print one line per case of ringscale results files: the figures benchmark scripts compare.

usage: h5_cases.py FILE.h5 [FILE.h5 ...]
Columns: job, variant, the given parameters, P, median step time (slowest rank per timed
iteration), median exposed communication of the slowest rank as a share of the step,
GFLOP/s per rank, peak job-allocated host bytes per rank (max over ranks), status.
"""
import sys

import h5py
import numpy as np

PARAMS = ("seq_len", "pass", "causal", "layout", "overlap", "bytes", "dp_variant", "dp", "cp")


def flat(c):  # ringscale/2 keeps identity, run, derived, outcome apart; ringscale/1 was flat
    a = dict(c.attrs)
    for g in ("identity", "run", "derived", "outcome"):
        if g in c:
            a.update(c[g].attrs)
    a["variant"] = a.get("variant_label", a.get("variant"))  # hybrid/u2, as run
    return a


def rows(path):
    with h5py.File(path, "r") as f:
        for name in sorted(f["cases"]):
            c = f["cases"][name]
            a = flat(c)
            timed = c["is_warmup"][:] == 0
            t = c["time_s"][:][timed]
            out = {"job": a["job"], "variant": a["variant"], "P": int(a["world_size"]),
                   "status": a["status"]}
            out["params"] = " ".join(f"{k}={a[k]}" for k in PARAMS if k in a)
            if t.size:
                slow = t.max(axis=1)
                comm = c["comm_wait_s"][:][timed].max(axis=1)
                out["time_s"] = float(np.median(slow))
                out["comm_share"] = float(np.median(comm / slow))
                flops = float(a.get("flops_per_iter", 0.0))
                out["gflops_rank"] = flops / out["time_s"] / out["P"] / 1e9
                out["peak_mib"] = float(c["peak_host_bytes"][:].max()) / 2**20
                out["validated"] = int(a.get("validated", 0))
                out["max_abs_err"] = float(a.get("max_abs_err", 0.0))
            yield out


def main():
    print(f"{'job':<16} {'variant':<18} {'P':>2} {'time':>10} {'comm%':>6} {'GF/s/rank':>9} "
          f"{'peakMiB':>8} {'valid':>5}  params")
    for path in sys.argv[1:]:
        for r in rows(path):
            if "time_s" not in r:
                print(f"{r['job']:<16} {r['variant']:<18} {r['P']:>2} {r['status']}  {r['params']}")
                continue
            v = f"{r['max_abs_err']:.0e}" if r["validated"] else "-"
            print(f"{r['job']:<16} {r['variant']:<18} {r['P']:>2} {r['time_s']*1e3:>8.2f}ms "
                  f"{100*r['comm_share']:>5.1f} {r['gflops_rank']:>9.2f} {r['peak_mib']:>8.1f} "
                  f"{v:>5}  {r['params']}")


if __name__ == "__main__":
    main()
