#!/usr/bin/python3
"""driver.py - a stand-in for the Python driver of a mixed-language run.

    driver.py PY_H5 -- COMMAND [ARGS...]

In a real run the driver is the user's Python program, recording its regions
with the scope-profiler package into py.h5. That package is not installable
here, so this script plays its part: it records its own regions with
time.perf_counter_ns() (CLOCK_MONOTONIC, the clock the native library uses),
runs the native kernels as COMMAND inside its "py:run_kernels" region, and
writes PY_H5 in the package's schema-3 layout (FORMAT.md section 1) with
h5py. Because both sides share the clock, scope-merge can hang the kernels'
root calls under "py:run_kernels": one call tree from Python down to C.
"""
import json
import os
import platform
import subprocess
import sys
import time

import h5py
import numpy as np

if len(sys.argv) < 4 or sys.argv[2] != "--":
    sys.exit("usage: driver.py PY_H5 -- COMMAND [ARGS...]")
out_path, command = sys.argv[1], sys.argv[3:]

calls = []  # (region, start, end, call_id, parent_id), in begin order
stack = []


class region:
    """A recorded call of a driver region, as a context manager."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.call_id = len(calls)
        self.parent = stack[-1].call_id if stack else -1
        calls.append(None)
        stack.append(self)
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        end = time.perf_counter_ns()
        stack.pop()
        calls[self.call_id] = (self.name, self.start, end, self.call_id, self.parent)
        return False


start_time_ns = time.perf_counter_ns()
with region("py:driver"):
    with region("py:setup"):
        config = {"steps": 40, "grid": 192}
        json.dumps(config)
    with region("py:run_kernels"):
        result = subprocess.run(command)
    with region("py:postprocess"):
        time.sleep(0.001)
finalize_time_ns = time.perf_counter_ns()
if result.returncode != 0:
    sys.exit(f"driver.py: the kernels failed with exit status {result.returncode}")

# ---- write the schema-3 file (FORMAT.md 1.1-1.5, 2.1) -------------------
names = []
for name, *_ in calls:
    if name not in names:
        names.append(name)
vstr = h5py.string_dtype("utf-8")
stats_dtype = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"),
                        ("first", "<i8"), ("last", "<i8"), ("start_minimum", "<i8"),
                        ("end_maximum", "<i8"), ("gpu_count", "<u8"), ("gpu_total", "<i8"),
                        ("mean", "<f8"), ("m2", "<f8")])
by_id = {c[3]: c for c in calls}
child_time = {}
for _, s, e, cid, parent in calls:
    if parent >= 0:
        child_time[parent] = child_time.get(parent, 0) + (e - s)

rows = []  # per region: its calls in start order
for name in names:
    mine = sorted((c for c in calls if c[0] == name), key=lambda c: c[1])
    rows.append(mine)

tmp = os.path.join(os.path.dirname(os.path.abspath(out_path)),
                   f".{os.path.basename(out_path)}.{os.getpid()}.tmp")
with h5py.File(tmp, "w") as f:
    f.attrs["scope_profiler_schema"] = np.int64(3)
    f.attrs.create("storage_layout", "columnar", dtype=vstr)
    meta = f.create_group("metadata")
    for key, value in [("timestamp", time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())),
                       ("platform", platform.platform()),
                       ("python_version", platform.python_version()),
                       ("label", "driver")]:
        meta.attrs.create(key, value, dtype=vstr)
    for key, value in [("mpi_size", 1), ("omp_num_threads", 1), ("total_cores", 1),
                       ("start_time_ns", start_time_ns), ("finalize_time_ns", finalize_time_ns)]:
        meta.attrs[key] = np.int64(value)
    f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=vstr)
    idx = f.create_group("rank_region_index")
    counts = [len(r) for r in rows]
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype("<u8")
    idx["region_ids"] = np.arange(len(names), dtype="<u4")
    idx["ranks"] = np.zeros(len(names), dtype="<u4")
    idx["event_offsets"] = offsets
    idx["event_counts"] = np.array(counts, dtype="<u8")
    idx["source_lines"] = np.full(len(names), -1, dtype="<i8")
    for col, value in [("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                       ("event_metadata", "[]")]:
        idx.create_dataset(col, data=np.array([value] * len(names), dtype=object), dtype=vstr)
    idx["exclusive_totals"] = np.array(
        [sum((e - s) - child_time.get(cid, 0) for _, s, e, cid, _ in r) for r in rows], dtype="<i8")
    stats = np.zeros(len(names), dtype=stats_dtype)
    for i, r in enumerate(rows):
        d = np.array([e - s for _, s, e, _, _ in r], dtype=np.int64)
        st = np.array([s for _, s, _, _, _ in r], dtype=np.int64)
        stats[i] = (d.sum(), d.min(), d.max(), d[0], d[-1], st.min(), (st + d).max(), 0, 0,
                    d.mean(), d.var() * len(d))
    idx["summary_statistics"] = stats
    ordered = [c for r in rows for c in r]
    starts = np.array([c[1] for c in ordered], dtype=np.int64)
    deltas = starts.copy()
    for i, r in enumerate(rows):  # per row: first absolute, then differences
        o, n = int(offsets[i]), counts[i]
        deltas[o + 1:o + n] = np.diff(starts[o:o + n])
    ev = f.create_group("events")
    ev["start_deltas"] = deltas.astype("<i8")
    ev["durations"] = np.array([c[2] - c[1] for c in ordered], dtype="<i8")
    ev["call_ids"] = np.array([c[3] for c in ordered], dtype="<i8")
    ev["parent_ids"] = np.array([c[4] for c in ordered], dtype="<i8")
os.replace(tmp, out_path)
print(f"driver.py: wrote {out_path} ({len(calls)} calls)")
