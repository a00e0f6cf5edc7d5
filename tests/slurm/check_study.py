"""A Slurm study's results files, read with Debian's python3-h5py: one complete file per
task count, each recording its Slurm job id, every case ok; with --numhosts, each launch ran on
that many hosts, its ranks filling them in order (block distribution).

usage: check_study.py STUDY_DIR P1,P2,... [--numhosts N1,N2,...] JOBID1 JOBID2 ...
       (job ids and host counts in the order of P)
"""
import glob
import os
import sys

import h5py

study, worlds, ids = sys.argv[1], [int(p) for p in sys.argv[2].split(",")], sys.argv[3:]
numhosts = None
if ids[:1] == ["--numhosts"]:
    numhosts, ids = [int(n) for n in ids[1].split(",")], ids[2:]
files = sorted(glob.glob(os.path.join(glob.escape(study), "*.h5*")))
assert len(files) == len(worlds), f"expected {len(worlds)} results files, found {files}"
by_world = {}
for path in files:
    with h5py.File(path, "r") as f:
        assert f.attrs["schema"] == "ringscale/2"
        assert f.attrs["complete"] == 1, f"{path}: incomplete"
        world = int(f["meta"].attrs["jobsize"])
        by_world[world] = path
        job_id = f["meta"].attrs["slurm_job_id"]
        job_id = job_id.decode() if isinstance(job_id, bytes) else str(job_id)
        want = ids[worlds.index(world)]
        assert job_id == want, f"{path}: slurm_job_id {job_id}, expected {want}"
        assert path.endswith(f"_j{want}.h5"), path
        if numhosts is not None:
            hosts = numhosts[worlds.index(world)]
            assert int(f["meta"].attrs["numhosts"]) == hosts, (path, f["meta"].attrs["numhosts"])
            index = list(f["ranks/host_index"][:])
            assert index == [r * hosts // world for r in range(world)], (path, index)
            assert len(set(f["meta/hosts"][:])) == hosts, (path, f["meta/hosts"][:])
        cases = f["cases"]
        assert len(cases) == 6, f"{path}: {len(cases)} cases"
        for name in cases:
            c = cases[name]
            out = c["outcome"].attrs
            assert out["status"] == "ok", (path, name, out["error"])
            assert c["time_s"].shape == (14, world), (path, name, c["time_s"].shape)
        where = "" if numhosts is None else f" on {int(f['meta'].attrs['numhosts'])} host(s)"
        print(f"study ok: P={world}{where} job {job_id}: {len(cases)} cases in {os.path.basename(path)}")
assert sorted(by_world) == sorted(worlds), by_world
