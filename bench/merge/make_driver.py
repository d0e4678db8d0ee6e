#!/usr/bin/python3
"""The driver half of the merge benchmark: a schema-3 file shaped like the
Python package's repacked output (gzip 4 + shuffle, 64K chunks) whose calls
enclose every native outer call, so that the merge has real work to do:
py:a > py:b > py:c > py:d on the interval of each native "bench:outer" call
(4 events per outer call, as many events as the native file), each native
outer call being adopted by a py:d call.

    make_driver.py NATIVE.h5 OUT.h5
"""
import sys

import h5py
import numpy as np

native, out = sys.argv[1], sys.argv[2]
with h5py.File(native, "r") as f:
    names = [n.decode() for n in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    row = [r for r in range(len(idx["region_ids"]))
           if names[idx["region_ids"][r]] == "bench:outer"][0]
    o, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
    starts = np.cumsum(f["events/start_deltas"][o:o + n])
    durs = f["events/durations"][o:o + n]

regions = ["py:a", "py:b", "py:c", "py:d"]
R, N = len(regions), len(regions) * n
str_t = h5py.string_dtype("utf-8")
ids = np.arange(n, dtype=np.int64) * R
opts = dict(compression="gzip", compression_opts=4, shuffle=True, chunks=(65536,))


def stats(d, s):
    rec = np.zeros(1, dtype=[("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"),
                             ("first", "<i8"), ("last", "<i8"), ("start_minimum", "<i8"),
                             ("end_maximum", "<i8"), ("gpu_count", "<u8"), ("gpu_total", "<i8"),
                             ("mean", "<f8"), ("m2", "<f8")])
    rec[0] = (d.sum(), d.min(), d.max(), d[0], d[-1], s.min(), (s + d).max(), 0, 0,
              d.mean(), d.var() * len(d))
    return rec


with h5py.File(out, "w") as f:
    f.attrs["scope_profiler_schema"] = np.int64(3)
    f.attrs["storage_layout"] = "columnar"
    m = f.create_group("metadata")
    m.attrs["mpi_size"] = np.int64(1)
    m.attrs["label"] = "bench-driver"
    f["region_table/names"] = np.array(regions, dtype=object).astype(str_t)
    deltas = np.empty(n, np.int64)
    deltas[0] = starts[0]
    deltas[1:] = np.diff(starts)
    ev = f.create_group("events")
    for name, fill in (("start_deltas", lambda k: deltas), ("durations", lambda k: durs),
                       ("call_ids", lambda k: ids + k),
                       ("parent_ids", lambda k: ids + k - 1 if k else np.full(n, -1, np.int64))):
        d = ev.create_dataset(name, (N,), np.int64, **opts)
        for k in range(R):
            d[k * n:(k + 1) * n] = fill(k)
    idx = f.create_group("rank_region_index")
    idx["region_ids"] = np.arange(R, dtype=np.uint32)
    idx["ranks"] = np.zeros(R, np.uint32)
    idx["event_offsets"] = np.arange(R, dtype=np.uint64) * n
    idx["event_counts"] = np.full(R, n, np.uint64)
    idx["source_lines"] = np.full(R, -1, np.int64)
    idx["exclusive_totals"] = np.full(R, -1, np.int64)
    for c, v in (("source_files", ""), ("source_texts", ""), ("tags", "[]"), ("event_metadata", "[]")):
        idx[c] = np.array([v] * R, dtype=object).astype(str_t)
    idx["summary_statistics"] = np.concatenate([stats(durs, starts)] * R)
