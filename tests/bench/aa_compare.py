"""A/A false positives and detection of `ringscale-stats compare` on repeated launches.

usage: aa_compare.py STATS LAUNCH_DIR WORK_DIR TRIALS [synthetic]
Called by aa_compare.sh (read its header). LAUNCH_DIR holds identical launches of one
workload; prints the launch-to-launch spread, then
  1. A/A, one launch per side, every pair (must never be a regression: noise unknown);
  2. A/A, three launches per side, TRIALS random disjoint splits;
  3. the same splits with NEW slowed down by 10% (time_s, compute_s, comm_wait_s x 1.10);
Exits 0 when A/A <= 5% (1 and 2) and detection >= 90% (3), else 1. With `synthetic`,
LAUNCH_DIR holds bench_gen_results files: each gets a log-normal launch factor (SD 3%) and
TRIALS independent 3-vs-3 trials give the A/A and detection rates (printed, no exit code).
"""
import glob
import itertools
import math
import os
import random
import shutil
import statistics
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h5_cases import flat  # noqa: E402


def side(work, name, members, slowdown=0.0):
    d = f"{work}/{name}"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f in members:
        dst = f"{d}/{os.path.basename(f)}"
        shutil.copy(f, dst)
        if slowdown:
            with h5py.File(dst, "r+") as h:
                for c in h["cases"].values():
                    for ds in ("time_s", "compute_s", "comm_wait_s"):
                        if ds in c:
                            c[ds][...] = c[ds][...] * (1 + slowdown)
    return d


def compare(stats, base, new):
    """Exit code, the verdict of each case, and compare's detectability note."""
    r = subprocess.run([stats, "compare", "--format", "csv", base, new],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"compare failed ({r.returncode}): {r.stderr.strip()}")
    lines = [l for l in r.stdout.splitlines() if l and not l.startswith("#")]
    col = lines[0].split(",").index("verdict")
    note = [l for l in r.stderr.splitlines() + r.stdout.splitlines() if "power above" in l]
    return r.returncode, [l.split(",")[col] for l in lines[1:]], (note or [""])[0]


def rate(k, n):
    return f"{k}/{n} = {100.0 * k / n:.1f}%"


def print_spread(files):
    """Per case: each launch's median step time (slowest rank, timed rows)."""
    out = {}
    for f in files:
        with h5py.File(f, "r") as h:
            for name, c in sorted(h["cases"].items()):
                t = c["time_s"][...].max(axis=1)[c["is_warmup"][...] == 0]
                a = flat(c)
                label = f"{a['job']} {a['variant']} " + " ".join(
                    f"{k}={a[k]}" for k in ("bytes", "seq_len") if k in a)
                out.setdefault(label, []).append(float(sorted(t)[len(t) // 2]))
    print("launch-to-launch spread of the launch medians:")
    for label, m in out.items():
        sd = statistics.stdev(math.log(x) for x in m)
        print(f"  {label:>44}: {min(m) * 1e3:9.3f} .. {max(m) * 1e3:9.3f} ms, max/min "
              f"{max(m) / min(m):.3f}, SD of log medians {100 * sd:.2f}%")


def splits_of(files, trials, seed):
    rng = random.Random(seed)
    splits = set()
    while len(splits) < trials:
        pick = rng.sample(files, 6)
        splits.add((tuple(sorted(pick[:3])), tuple(sorted(pick[3:]))))
    return sorted(splits)


def real_launches(stats, files, work, trials):
    print_spread(files)
    pairs = list(itertools.combinations(files, 2))
    fp1 = unconfirmed = 0
    for a, b in pairs:
        code, verdicts, _ = compare(stats, side(work, "base", [a]), side(work, "new", [b]))
        fp1 += code == 1
        unconfirmed += any(v.startswith("unconfirmed") for v in verdicts)
    print(f"A/A, 1 launch per side, all {len(pairs)} pairs: false positives "
          f"{rate(fp1, len(pairs))} (pairs an iteration-level test alone would flag, now "
          f"'unconfirmed': {rate(unconfirmed, len(pairs))})")
    splits = splits_of(files, trials, 13)
    fp3 = hits = case_hits = cases = 0
    notes = []
    for a, b in splits:
        code, _, note = compare(stats, side(work, "base", a), side(work, "new", b))
        fp3 += code == 1
        notes.append(note)
        code, verdicts, _ = compare(stats, side(work, "base", a), side(work, "new", b, 0.10))
        hits += code == 1
        case_hits += sum(v == "regression" for v in verdicts)
        cases += len(verdicts)
    print(f"A/A, 3 launches per side, {len(splits)} random disjoint splits: false positives "
          f"{rate(fp3, len(splits))}")
    print(f"injected 10% slowdown, 3 launches per side, {len(splits)} trials: detected "
          f"{rate(hits, len(splits))} (cases called regressions: {rate(case_hits, cases)})")
    print(f"compare's own estimate, first A/A split: {notes[0].lstrip('# ').strip()}")
    return (fp1 <= 0.05 * len(pairs) and fp3 <= 0.05 * len(splits)
            and hits >= 0.9 * len(splits))


def synthetic_launches(stats, files, work, trials):
    rng = random.Random(14)
    for f in files:  # launch-level noise: every iteration of a launch scaled alike
        with h5py.File(f, "r+") as h:
            factor = rng.lognormvariate(0, 0.03)
            for c in h["cases"].values():
                for ds in ("time_s", "compute_s", "comm_wait_s"):
                    if ds in c:
                        c[ds][...] = c[ds][...] * factor
    sfp = shits = 0
    for t in range(trials):
        a, b = files[6 * t:6 * t + 3], files[6 * t + 3:6 * t + 6]
        sfp += compare(stats, side(work, "base", a), side(work, "new", b))[0] == 1
        shits += compare(stats, side(work, "base", a), side(work, "new", b, 0.10))[0] == 1
    print(f"synthetic launches (launch noise 3%), {trials} independent 3-vs-3 trials: A/A "
          f"false positives {rate(sfp, trials)}, 10% slowdown detected {rate(shits, trials)}")


def main():
    stats, launch_dir, work, trials = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    files = sorted(glob.glob(f"{launch_dir}/*.h5"))
    if sys.argv[5:] == ["synthetic"]:
        synthetic_launches(stats, files, work, trials)
        return
    ok = real_launches(stats, files, work, trials)
    print("goals on these launches (A/A <= 5%, detection >= 90%):", "met" if ok else "NOT met")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
