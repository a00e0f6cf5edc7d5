"""The ringscale/2 schema (DESIGN.md) as a contract: a launcher file read with Debian's python3-h5py.

usage: check_schema.py FILE.h5 WORLD
"""
import sys

import h5py
import numpy as np

path, world = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "r")
assert f.attrs["schema"] == "ringscale/2", f.attrs["schema"]
assert f.attrs["complete"] == 1
for key in ("created_utc", "tool_version", "git_commit", "launch_id"):
    assert key in f.attrs, key
assert len(f.attrs["launch_id"]) == 32 and int(f.attrs["launch_id"], 16) >= 0, f.attrs["launch_id"]
meta_keys = """user launchdate cluster jobsize numhosts mpi_library mpi_library_version compiler
compiler_version cxxflags executable slurm_job_id device device_name cuda_version nccl_version
threads_per_rank timer timer_resolution_s timer_overhead_s sync cuda_visible_devices
attn_kernel""".split()
missing = [k for k in meta_keys if k not in f["meta"].attrs]
assert not missing, missing
assert f["meta"].attrs["jobsize"] == world
assert len(f["meta/hosts"]) == f["meta"].attrs["numhosts"]
assert f["meta/cmdline"].shape[0] >= 1
assert b"job = collectives" in f["meta/config"][()]
assert f["ranks/host_index"].shape == (world,) and f["ranks/local_rank"].shape == (world,)
assert list(f["ranks/gpu_index"][:]) == [-1] * world  # a CPU launch binds no GPU
assert f["ranks/gpu_uuid"].shape == (world,)
assert 0 < f["meta"].attrs["timer_resolution_s"] < 1e-3

groups = {
    "identity": "job variant world_size device comm dtype scaling threads op root requested_bytes",
    "run": "warmup iterations seed",
    "derived": "flops_per_iter comm_bytes_per_iter busbw_factor bytes count threads_per_rank",
    "outcome": "status error validated max_abs_err tolerance wrong_elements",
}
names = sorted(f["cases"])
assert names == [f"{i:04d}" for i in range(len(names))] and names, names
for name in names:
    c = f["cases"][name]
    assert not c.attrs.keys(), (name, "ringscale/2 keeps no attributes on the case group")
    for group, keys in groups.items():
        missing = [k for k in keys.split() if k not in c[group].attrs]
        assert not missing, (name, group, missing)
    seen = [set(c[g].attrs) for g in groups]  # no name in two groups here
    assert sum(len(s) for s in seen) == len(set().union(*seen)), (name, seen)
    ident, run, out = c["identity"].attrs, c["run"].attrs, c["outcome"].attrs
    assert ident["world_size"] == world and ident["threads"] == 0
    assert out["status"] == "ok", (name, out["error"])
    rows = run["warmup"] + run["iterations"]
    for ds in ("time_s", "compute_s", "comm_wait_s"):
        assert c[ds].dtype == np.float64 and c[ds].shape == (rows, world), (name, ds)
    assert c["is_warmup"].dtype == np.uint8 and list(c["is_warmup"][:]) == [1] * run[
        "warmup"] + [0] * run["iterations"]
    for ds in ("peak_host_bytes", "peak_device_bytes", "peak_rss_bytes"):
        assert c[ds].dtype == np.uint64 and c[ds].shape == (world,)
    for ds in ("threads", "affinity_cores"):
        assert c[ds].dtype == np.int32 and c[ds].shape == (world,) and (c[ds][:] >= 1).all()
    assert c["affinity_list"].shape == (world,)
    t = c["time_s"][:]
    assert (t > 0).all() and (c["comm_wait_s"][:] <= t * 1.0001 + 1e-6).all(), name
    assert out["validated"] == 1 and out["max_abs_err"] == 0.0
    # What the machine did, one value per rank, and the mark with its reason.
    assert out["contended"] in (0, 1) and (out["contended"] == 1) == (out["contention"] != ""), name
    for ds in ("foreign_load", "load_resolution", "load_cores", "own_threads", "steal", "iowait",
               "run_wait", "nivcsw", "cpu_mhz"):
        m = c["machine"][ds]
        assert m.dtype == np.float64 and m.shape == (world,), (name, ds)
    assert (c["machine/load_cores"][:] >= 1).all() and (c["machine/own_threads"][:] == world).all()
    assert "gpu_sm_clock_mhz" not in c["machine"], "no GPU fields on the CPU"
# The drift sentinel: its probes only within its 1% budget (the first once the
# launch has run 1 s, the end's when affordable), so a short launch such as this one may have
# none; where it has some, they are in order, with their verdict.
if "sentinel" in f and len(f["sentinel"]) > 0:
    s = f["sentinel"]
    probes = sorted(s)
    before = [s[p].attrs["before_case"] for p in probes]
    assert before == sorted(before) and before[-1] <= len(names), before
    assert all(s[p].attrs["compute_s"] > 0 for p in probes)
    assert all(s[p].attrs["allreduce_s"] > 0 for p in probes) == (world > 1)
    assert s.attrs["drifted"] in (0, 1) and s.attrs["tolerance_compute"] > 1
assert "warnings" in f["meta"].attrs
print(f"schema ok: {path}: {len(names)} cases, world {world}")
