"""Launches of the node-aware schemes across emulated nodes (node_schemes.sh), read with
Debian's python3-h5py.

usage: check_node_schemes.py RATE_BITS RANKS_PER_NODE FILE.h5...
Each file is one launch over `nodes` x RANKS_PER_NODE ranks (nodes from /meta/numhosts).
Fails unless every case is ok and validated and its identity holds nodes and ranks_per_node
as launched; inter-node busbw (8 MiB) is within 0.3..1.0 of the shaped rate (0.3: on 2 nodes
one pair of ranks shares one TCP connection both ways, which Open MPI drives at about half the
rate) and intra-node busbw at least 3x the inter-node one, per operation; /meta names each
host's interfaces and the MPI transport; the hybrid resolves its degree to the ranks per node,
and on the last (largest) launch its Ulysses groups inside the nodes are faster than across
them (there the all-to-all and the ring both cross nodes when spread; on 2 nodes the
difference is printed, not asserted: it is smaller and this shared CPU is noisy).
"""
import sys

import h5py
import numpy as np

rate_Bps = float(sys.argv[1]) / 8
per_node = int(sys.argv[2])
ok = True


def fail(msg):
    global ok
    print("FAIL:", msg)
    ok = False


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


for path in sys.argv[3:]:
    with h5py.File(path, "r") as f:
        meta = f["meta"]
        nodes = int(meta.attrs["numhosts"])
        ifaces = [text(s) for s in meta["net_interfaces"][:]]
        print(f"{path}: {nodes} nodes x {per_node}; mpi_transport: "
              f"{text(meta.attrs['mpi_transport'])}; interfaces of host 0: {ifaces[0]}")
        if len(ifaces) != nodes or not all("eth0" in s for s in ifaces):
            fail(f"{path}: net_interfaces {ifaces}")
        if "btl_tcp_if_include=" not in text(meta.attrs["mpi_transport"]):
            fail(f"{path}: mpi_transport {text(meta.attrs['mpi_transport'])}")
        busbw, hybrid = {}, {}
        for name in f["cases"]:
            c = f["cases"][name]
            i, d, o = c["identity"].attrs, c["derived"].attrs, c["outcome"].attrs
            if o["status"] != "ok" or o["validated"] != 1:
                fail(f"{path}:{name}: {text(o['status'])} {text(o['error'])}")
                continue
            if int(i["nodes"]) != nodes or int(i["ranks_per_node"]) != per_node:
                fail(f"{path}:{name}: identity says {i['nodes']} x {i['ranks_per_node']}")
            t = float(np.median(c["time_s"][:][c["is_warmup"][:] == 0].max(axis=1)))
            if text(i["job"]) == "collectives":
                busbw[(text(i["op"]), text(i["scope"]))] = d["bytes"] * d["busbw_factor"] / t
            else:
                hybrid[text(i["ulysses_placement"])] = (t, int(d["ulysses_degree"]))
        for op in sorted({op for op, _ in busbw}):
            inter, intra = busbw[(op, "inter")], busbw[(op, "intra")]
            print(f"  {op:>9}: inter {inter / 1e6:6.1f} MB/s = {inter / rate_Bps:.2f} of the "
                  f"{rate_Bps * 8 / 1e6:.0f} Mbit/s link; intra {intra / 1e6:7.1f} MB/s "
                  f"({intra / inter:.1f}x inter)")
            if not 0.3 <= inter / rate_Bps <= 1.0:
                fail(f"{path}: {op} inter busbw {inter / rate_Bps:.2f} of the rate")
            if intra < 3 * inter:
                fail(f"{path}: {op} intra busbw only {intra / inter:.1f}x inter")
        (t_node, u), (t_across, _) = hybrid["node"], hybrid["across"]
        if u != per_node:
            fail(f"{path}: hybrid resolved u={u}, not the {per_node} ranks per node")
        print(f"  hybrid/u{u}: groups inside nodes {t_node * 1e3:.1f} ms, across nodes "
              f"{t_across * 1e3:.1f} ms per step (across / inside = {t_across / t_node:.2f})")
        if path == sys.argv[-1] and not t_across > t_node:
            fail(f"{path}: the hybrid across nodes is not slower than inside them")
sys.exit(0 if ok else 1)
