"""The file a stopped launch left behind, read with Debian's python3-h5py: schema ringscale/2,
marked incomplete, at least MIN cases, every one whole (status ok, full-size datasets).

usage: check_survivor.py FILE MIN
"""
import sys

import h5py

path, least = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    assert f.attrs["schema"] == "ringscale/2", f.attrs["schema"]
    assert f.attrs["complete"] == 0, "not marked incomplete"
    world = int(f["meta"].attrs["jobsize"])
    names = sorted(f["cases"])
    assert names == [f"{i:04d}" for i in range(len(names))], names
    assert len(names) >= least, f"{len(names)} cases, expected at least {least}"
    for name in names:
        c = f["cases"][name]
        out, run = c["outcome"].attrs, c["run"].attrs
        assert out["status"] == "ok", (name, out["status"], out["error"])
        rows = int(run["warmup"] + run["iterations"])
        for ds in ("time_s", "compute_s", "comm_wait_s"):
            assert c[ds].shape == (rows, world), (name, ds, c[ds].shape)
        assert (c["time_s"][:] > 0).all(), name
print(f"survivor ok: {path}: {len(names)} whole cases, complete=0")
