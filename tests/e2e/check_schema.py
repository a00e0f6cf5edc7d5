"""The ringscale/1 schema as a contract: a launcher file read with Debian's python3-h5py.

usage: check_schema.py FILE.h5 WORLD
"""
import sys

import h5py
import numpy as np

path, world = sys.argv[1], int(sys.argv[2])
f = h5py.File(path, "r")
assert f.attrs["schema"] == "ringscale/1", f.attrs["schema"]
assert f.attrs["complete"] == 1
for key in ("created_utc", "tool_version", "git_commit"):
    assert key in f.attrs, key
meta_keys = """user launchdate cluster jobsize numhosts mpi_library mpi_library_version compiler
compiler_version cxxflags executable slurm_job_id device device_name cuda_version nccl_version
threads_per_rank timer timer_resolution_s timer_overhead_s sync cuda_visible_devices""".split()
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

case_attrs = """job variant status error world_size device comm dtype scaling flops_per_iter
comm_bytes_per_iter warmup iterations validated max_abs_err tolerance""".split()
names = sorted(f["cases"])
assert names == [f"{i:04d}" for i in range(len(names))] and names, names
for name in names:
    c = f["cases"][name]
    missing = [k for k in case_attrs if k not in c.attrs]
    assert not missing, (name, missing)
    assert c.attrs["status"] == "ok", (name, c.attrs["error"])
    rows = c.attrs["warmup"] + c.attrs["iterations"]
    for ds in ("time_s", "compute_s", "comm_wait_s"):
        assert c[ds].dtype == np.float64 and c[ds].shape == (rows, world), (name, ds)
    assert c["is_warmup"].dtype == np.uint8 and list(c["is_warmup"][:]) == [1] * c.attrs[
        "warmup"] + [0] * c.attrs["iterations"]
    for ds in ("peak_host_bytes", "peak_device_bytes"):
        assert c[ds].dtype == np.uint64 and c[ds].shape == (world,)
    t = c["time_s"][:]
    assert (t > 0).all() and (c["comm_wait_s"][:] <= t * 1.0001 + 1e-6).all(), name
    assert c.attrs["validated"] == 1 and c.attrs["max_abs_err"] == 0.0
print(f"schema ok: {path}: {len(names)} cases, world {world}")
