"""Write a schema-3 profile with N events (default 10 million) over a few
(rank, region) rows, with summary_statistics, the way the reference writer
lays it out. Usage: make_file.py OUT [N]"""
import sys

import h5py
import numpy as np

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
regions = [f"region{i}" for i in range(8)]
rows = len(regions)
counts = np.full(rows, n // rows, dtype=np.uint64)
counts[-1] += n - counts.sum()
offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint64)
rng = np.random.default_rng(1)
durations = rng.integers(100, 10_000, size=n, dtype=np.int64)
deltas = np.empty(n, dtype=np.int64)
stats_dtype = np.dtype([(name, t) for name, t in [
    ("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
    ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
    ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")]])
stats = np.zeros(rows, dtype=stats_dtype)
for r in range(rows):
    a, b = int(offsets[r]), int(offsets[r] + counts[r])
    d = durations[a:b]
    starts = 1_000_000 + np.cumsum(d + 50) - d - 50
    deltas[a:b] = np.diff(starts, prepend=0)
    stats[r] = (d.sum(), d.min(), d.max(), d[0], d[-1], starts[0], (starts + d).max(),
                0, 0, d.mean(), ((d - d.mean()) ** 2).sum())
vstr = h5py.string_dtype("utf-8")
with h5py.File(out, "w") as f:
    f.attrs["scope_profiler_schema"] = np.int64(3)
    f.attrs["storage_layout"] = "columnar"
    f.create_group("metadata").attrs["mpi_size"] = np.int64(1)
    f.create_dataset("region_table/names", data=np.array(regions, dtype=object), dtype=vstr)
    idx = f.create_group("rank_region_index")
    idx["region_ids"] = np.arange(rows, dtype=np.uint32)
    idx["ranks"] = np.zeros(rows, dtype=np.uint32)
    idx["event_offsets"] = offsets
    idx["event_counts"] = counts
    idx["source_lines"] = np.full(rows, -1, dtype=np.int64)
    idx["exclusive_totals"] = np.full(rows, -1, dtype=np.int64)
    for name, value in [("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                        ("event_metadata", "[]")]:
        idx.create_dataset(name, data=np.array([value] * rows, dtype=object), dtype=vstr)
    idx["summary_statistics"] = stats
    ev = f.create_group("events")
    ev.create_dataset("start_deltas", data=deltas, chunks=(1 << 16,))
    ev.create_dataset("durations", data=durations, chunks=(1 << 16,))
