"""A collectives launch across emulated nodes, read with Debian's python3-h5py: the file says
which node each rank ran on, every case is ok and validated, and sendrecv's busbw matches the
node links' shaped rate (the ring's only inter-node flows when ranks fill nodes in order).

usage: check_cluster_launch.py INTER.h5 INTRA.h5 NODE_NAMES(comma) RANKS_PER_NODE RATE_BITS
  INTER.h5: the launch over every node; INTRA.h5: the same cases on the first node alone.
Prints busbw per op and size for both launches; fails when inter-node sendrecv busbw at the
largest size is not within 0.70..1.0 of the shaped rate (smaller messages pay the rendezvous
round trips and TCP's slow start after idle), or inside one node is not 10x faster.
"""
import sys

import h5py
import numpy as np

inter_path, intra_path = sys.argv[1], sys.argv[2]
nodes, per_node, rate_bits = sys.argv[3].split(","), int(sys.argv[4]), float(sys.argv[5])
rate_Bps = rate_bits / 8


def busbw(path, hosts_expected, host_index_expected):
    """{(op, bytes): busbw B/s} over the median of the slowest rank's iteration times."""
    out = {}
    with h5py.File(path, "r") as f:
        assert f.attrs["complete"] == 1, f"{path}: incomplete"
        meta = f["meta"]
        hosts = [h.decode() if isinstance(h, bytes) else h for h in f["meta/hosts"][:]]
        assert hosts == hosts_expected, f"{path}: hosts {hosts}, expected {hosts_expected}"
        assert int(meta.attrs["numhosts"]) == len(hosts_expected)
        index = list(f["ranks/host_index"][:])
        assert index == host_index_expected, f"{path}: host_index {index}"
        local = list(f["ranks/local_rank"][:])
        assert local == [r % per_node for r in range(len(index))], f"{path}: local_rank {local}"
        for name in f["cases"]:
            c = f["cases"][name]
            o, d = c["outcome"].attrs, c["derived"].attrs
            assert o["status"] == "ok" and o["validated"] == 1, (path, name, o["status"], o["error"])
            assert o["wrong_elements"] == 0, (path, name)
            t = c["time_s"][:][c["is_warmup"][:] == 0].max(axis=1)
            key = (c["identity"].attrs["op"], int(d["bytes"]))
            out[key] = d["bytes"] * d["busbw_factor"] / float(np.median(t))
    return out


world = len(nodes) * per_node
inter = busbw(inter_path, nodes, [r // per_node for r in range(world)])
intra = busbw(intra_path, nodes[:1], [0] * per_node)
ok = True
largest = max(size for op, size in inter if op == "sendrecv")
for key in sorted(inter):
    op, size = key
    ratio = inter[key] / rate_Bps
    line = (f"{op:>10} {size:>9} B: busbw {inter[key] / 1e6:8.1f} MB/s across {len(nodes)} nodes "
            f"({ratio:.2f} of the {rate_bits / 1e6:.0f} Mbit/s link), "
            f"{intra.get(key, float('nan')) / 1e6:8.1f} MB/s on one node")
    print(line)
    if op == "sendrecv" and size == largest:
        if not 0.70 <= ratio <= 1.0:
            print(f"FAIL: sendrecv {size} B busbw is {ratio:.2f} of the shaped rate, not 0.70..1.0")
            ok = False
        if key in intra and intra[key] < 10 * inter[key]:
            print(f"FAIL: sendrecv {size} B inside one node is not 10x faster than across nodes")
            ok = False
sys.exit(0 if ok else 1)
