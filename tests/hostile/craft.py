#!/usr/bin/python3
"""Crafted hostile results files, each made from a real launch's file (SEED.h5, the e2e fixture
small.h5: collectives cases at P=2, 2 warm-up and 4 timed rows) with one kind of damage, in
three groups: "files" (what the reader checks in any file), "identity" (topology, enumerated
values, Markdown) and "accuracy" (accuracy fields and dtypes). hostile_test.py runs every
command on them, findings_test.py checks each finding's outcome and the fuzz replay
(fuzz_replay) reads them in-process.

usage: craft.py SEED.h5 OUT_DIR    (writes OUT_DIR/<name>.h5 for every shape below)
"""
import os
import shutil
import sys

import h5py
import numpy as np

# The text that, unescaped in a gnuplot title, would end the string and run a shell command:
# it creates the file PWNED in the directory gnuplot runs in (the report's).
GNUPLOT_EXPLOIT = 'mpi\nsystem("touch PWNED")\n#'
TERMINAL_EXPLOIT = "cpu\x1b[2J\x1b]0;pwned\x07\r\x9b31m"


def cases(f):
    return [f["cases"][k] for k in sorted(f["cases"].keys())]


def first(f):
    return cases(f)[0]


def replace_dataset(g, name, data, **kw):
    del g[name]
    g.create_dataset(name, data=data, **kw)


def array_attr(group, name, value):
    def edit(f):
        owner = first(f)[group] if group else f
        owner.attrs[name] = value
    return edit


def set_identity_everywhere(name, value):
    def edit(f):
        for g in cases(f):
            g["identity"].attrs[name] = value
    return edit


def external_storage(f):
    g = first(f)
    shape = g["time_s"].shape
    del g["time_s"]
    size = int(np.prod(shape)) * 8
    g.create_dataset("time_s", shape=shape, dtype="f8", external=[("/dev/zero", 0, size)])


def external_link(target):
    def edit(f):
        g = first(f)
        del g["time_s"]
        g["time_s"] = h5py.ExternalLink(target, "/cases/0001/time_s")
        f["cases"]["0100"] = h5py.ExternalLink(target, "/cases/0000")
    return edit


def virtual_dataset(target):
    def edit(f):
        g = first(f)
        shape = g["time_s"].shape
        layout = h5py.VirtualLayout(shape=shape, dtype="f8")
        layout[...] = h5py.VirtualSource(target, "/cases/0001/time_s", shape=shape)
        del g["time_s"]
        g.create_virtual_dataset("time_s", layout)
    return edit


def warmup_values(values, dtype):
    def edit(f):
        g = first(f)
        w = g["is_warmup"][...].astype(dtype)
        for i, v in enumerate(values):
            w[i] = v
        replace_dataset(g, "is_warmup", w)
    return edit


def peak(name, fn):
    def edit(f):
        g = first(f)
        replace_dataset(g, name, fn(g[name][...]))
    return edit


def comm_above_time(f):
    g = first(f)
    g["comm_wait_s"][...] = g["time_s"][...] * 1000


def time_1x1(f):
    replace_dataset(first(f), "time_s", np.full((1, 1), 1e-5))


def nan_comm_wait(f):
    g = first(f)
    w = g["comm_wait_s"][...]
    w[-1, 0] = np.nan
    g["comm_wait_s"][...] = w


def no_warmup_info(f):
    g = first(f)
    del g["is_warmup"]
    del g["run"].attrs["warmup"]


def duplicate_case(f):
    f.copy(first(f), "cases/0009")


def non_utf8(f):
    for g in cases(f):
        g["identity"].attrs["comment"] = np.bytes_(b"cpu\xff\xfe")


# Text that a Markdown viewer would turn into a script tag, a javascript: link and a
# remote image it fetches.
MARKDOWN_EXPLOIT = ("<script>alert(1)</script> [click](javascript:alert(1)) "
                    "![img](http://evil.example/p.png) <http://evil.example/a>")


def set_identity_first(values):
    """Identity attributes of the first case only: the file's other cases stay readable."""
    def edit(f):
        ident = first(f)["identity"]
        for name, value in values.items():
            ident.attrs[name] = value
    return edit


def shapes(target):
    """name -> edit. `target`: another file that external links and virtual data point to."""
    return {
        "attr_world_size_2x2": array_attr("identity", "world_size", np.array([[2, 2], [2, 2]])),
        "attr_job_array": array_attr("identity", "job", ["collectives", "x", "y"]),
        "attr_status_array": array_attr("outcome", "status", ["ok", "ok"]),
        "attr_fixed_string_array": array_attr("identity", "variant", np.array([b"abcd"] * 64)),
        "attr_schema_array": array_attr(None, "schema", ["ringscale/2", "ringscale/2"]),
        "external_storage": external_storage,
        "external_link": external_link(target),
        "virtual_dataset": virtual_dataset(target),
        "warmup_half": warmup_values([0.5], "f8"),
        "warmup_minus_one": warmup_values([-1], "i8"),
        "peak_rss_nan": peak("peak_rss_bytes", lambda v: np.full(v.shape, np.nan)),
        "peak_host_short": peak("peak_host_bytes", lambda v: v[:1]),
        "peak_host_negative": peak("peak_host_bytes", lambda v: -np.ones(v.shape)),
        "comm_above_time": comm_above_time,
        "busbw_negative": array_attr("derived", "busbw_factor", -1.5),
        "time_1x1": time_1x1,
        "nan_comm_wait": nan_comm_wait,
        "no_warmup_info": no_warmup_info,
        "duplicate_case": duplicate_case,
        # in `comment`, a free-text identity attribute (comm and device hold one of their
        # values): in the heatmaps' titles, in no title drawn before them
        "identity_newline": set_identity_everywhere("comment", GNUPLOT_EXPLOIT),
        "identity_escape": set_identity_everywhere("comment", TERMINAL_EXPLOIT),
        "identity_non_utf8": non_utf8,
    }


def shapes_identity():
    """Topology that contradicts itself, values no launch writes, Markdown."""
    return {
        "topology_contradicts": set_identity_first({"nodes": 4, "ranks_per_node": 8}),
        "nodes_negative": set_identity_first({"nodes": -1}),
        "nodes_zero": set_identity_first({"nodes": 0}),
        "nodes_nan": set_identity_first({"nodes": np.float64("nan")}),
        "uneven_impossible": set_identity_first({"nodes": 2, "ranks_per_node": 1,
                                                 "uneven_nodes": 1}),
        "scope_unknown": set_identity_first({"scope": "bogus"}),
        "shift_negative": set_identity_first({"shift": -1}),
        "device_unknown": set_identity_first({"device": "tpu"}),
        "identity_markdown": set_identity_everywhere("comment", MARKDOWN_EXPLOIT),
    }


def accuracy(dtype=None, first_only=False, **errors):
    """Accuracy fields (DESIGN.md "Accuracy against fp64") on the cases: `errors` maps a tensor
    and who ("o", "single_o", "lse", ...) to (max_rel, rms_rel); `dtype` replaces the
    identity's."""
    def edit(f):
        for g in cases(f)[:1] if first_only else cases(f):
            o = g["outcome"].attrs
            for name, (mx, rms) in errors.items():
                o[f"acc_{name}_max_rel"] = np.float64(mx)
                o[f"acc_{name}_rms_rel"] = np.float64(rms)
            o["acc_query_rows"] = np.int64(64)
            o["acc_key_rows"] = np.int64(0)
            o["acc_reference_s"] = np.float64(0.01)
            if dtype is not None:
                g["identity"].attrs["dtype"] = dtype
    return edit


def shapes_accuracy():
    """Errors that overflowed, dtypes no launch writes, limits by dtype, 'added'."""
    inf, nan = np.float64("inf"), np.float64("nan")
    return {
        # an O that overflowed: inf (or NaN) is a result, the worst one, never "-"
        "acc_inf": accuracy(o=(inf, inf), single_o=(1e-3, 1e-4), lse=(1e-6, 1e-7)),
        "acc_nan": accuracy(o=(nan, nan), lse=(1e-6, 1e-7)),
        # a dtype the launcher never writes: the case is dropped with one line
        "dtype_upper": accuracy("FP32", True, o=(5e-4, 1e-4), single_o=(1e-7, 1e-8)),
        "dtype_float64": accuracy("float64", True, o=(5e-4, 1e-4), single_o=(1e-7, 1e-8)),
        # bf16 at P=2, its error its own rounding (x1.00): under the old 1e-3 x P, 'limit'
        "acc_bf16_rounding": accuracy("bfloat16", o=(2.0012e-3, 4e-4),
                                      single_o=(2.0012e-3, 4e-4)),
        # fp32, 50 x fp32's 1e-5 past its single-rank rounding: flagged
        "acc_fp32_over": accuracy("float32", o=(5e-4, 1e-4), single_o=(1e-7, 1e-8)),
        # 'added' is worst / single (1.17e-3 / 1e-3), not the largest ratio (O's 2.09)
        "acc_added": accuracy("float32", o=(2.09e-4, 1e-5), single_o=(1e-4, 1e-5),
                              lse=(1.17e-3, 1e-4), single_lse=(1e-3, 1e-4)),
        # fp8 (the recipe): a known dtype, judged as E4M3
        "acc_fp8": accuracy("fp8", o=(3e-2, 1e-2), single_o=(2e-2, 1e-2)),
    }


def craft_all(seed, out_dir, groups=("files", "identity", "accuracy")):
    """Write every shape of `groups` into out_dir; returns name -> path."""
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, "link_target.data")
    shutil.copy(seed, target)  # not *.h5: a directory input does not read it on its own
    made = {}
    edits = dict(shapes(target)) if "files" in groups else {}
    if "identity" in groups:
        edits.update(shapes_identity())
    if "accuracy" in groups:
        edits.update(shapes_accuracy())
    for name, edit in edits.items():
        path = os.path.join(out_dir, name + ".h5")
        shutil.copy(seed, path)
        with h5py.File(path, "r+") as f:
            edit(f)
        made[name] = path
    return made


if __name__ == "__main__":
    for name, path in craft_all(sys.argv[1], sys.argv[2]).items():
        print(path)
