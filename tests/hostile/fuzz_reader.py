#!/usr/bin/python3
"""A seeded mutation fuzzer for ringscale-stats' reader (AFL-style byte flips and splices of
a real results file). Every mutant must end with exit 0, 1 or 2 within 20 s and 2 GiB,
never a signal.

usage: fuzz_reader.py STATS SEED.h5 WORK_DIR [COUNT=40] [FIRST_SEED=0] [--keep-crashes DIR]

The suite runs a short run (40 mutants); run more by hand, e.g. COUNT=2000, and add any
mutant it keeps to tests/data/hostile/ (that directory is the checked-in corpus).
"""
import os
import random
import shutil
import subprocess
import sys

stats, seed_path, work = sys.argv[1:4]
count = int(sys.argv[4]) if len(sys.argv) > 4 else 40
first = int(sys.argv[5]) if len(sys.argv) > 5 else 0
keep = sys.argv[sys.argv.index("--keep-crashes") + 1] if "--keep-crashes" in sys.argv else None
seed = open(seed_path, "rb").read()
os.makedirs(work, exist_ok=True)


def mutate(rnd):
    b = bytearray(seed)
    kind = rnd.randrange(4)
    if kind == 0:  # a few random bytes
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
    elif kind == 1:  # single bit flips
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
    elif kind == 2:  # an "interesting" little-endian value over 8 bytes (sizes, addresses)
        pos = rnd.randrange(len(b) - 8)
        v = rnd.choice([0, 1, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 2**62, 2**64 - 1])
        b[pos:pos + 8] = v.to_bytes(8, "little")
    else:  # a splice: a block copied from elsewhere in the file
        n = rnd.randint(8, 256)
        src, dst = rnd.randrange(len(b) - n), rnd.randrange(len(b) - n)
        b[dst:dst + n] = b[src:src + n]
    return bytes(b)


# The 2 GiB address-space cap cannot hold under AddressSanitizer, which reserves terabytes of
# shadow memory at start (tests/sanitize.sh sets RINGSCALE_ASAN=1): there only the time cap.
mem_cap = "" if os.environ.get("RINGSCALE_ASAN") else "ulimit -v 2097152; "
# Under ASan, HDF5's own leaks on a damaged file's error paths are not ours to fix.
if os.environ.get("RINGSCALE_ASAN"):
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan_hdf5_damaged.supp")
    os.environ["LSAN_OPTIONS"] = f"suppressions={os.path.normpath(supp)}:print_suppressions=0"
bad = 0
for i in range(first, first + count):
    path = os.path.join(work, f"mutant_{i:05d}.h5")
    open(path, "wb").write(mutate(random.Random(i)))
    for cmd in ("summary", "scaling"):
        p = subprocess.run(["bash", "-c", f"{mem_cap}exec timeout 20 {stats} {cmd} {path}"],
                           capture_output=True, text=True, errors="replace")
        if p.returncode not in (0, 1, 2):
            bad += 1
            print(f"mutant {i}: {cmd} exit {p.returncode}: {p.stderr.strip()[:200]}")
            if keep:
                os.makedirs(keep, exist_ok=True)
                shutil.copy(path, keep)
    os.remove(path)
print(f"fuzz_reader: {count} mutants (seeds {first}..{first + count - 1}), {bad} bad endings")
sys.exit(1 if bad else 0)
