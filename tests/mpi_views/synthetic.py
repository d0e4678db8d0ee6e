"""synthetic.py - schema-3 columnar profiles of known times, written with
h5py (docs/FORMAT.md: region_table, rank_region_index with the
summary_statistics compound, events), for the scope-diff and scope-inspect
tests of this folder. Only the parts every reader requires are written.
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from h5_schema import STATS, STR  # noqa: E402,F401


def _stats(starts, durations):
    d = np.asarray(durations, dtype=np.int64)
    s = np.asarray(starts, dtype=np.int64)
    mean = float(d.astype(np.float64).mean())
    ends = [int(a) + int(b) for a, b in zip(starts, durations)]
    return (int(sum(int(x) for x in d)), int(d.min()), int(d.max()), int(d[0]), int(d[-1]),
            int(s.min()), max(ends), 0, 0, mean,
            float(((d.astype(np.float64) - mean) ** 2).sum()))


def write(path, names, rows, mpi_size=None):
    """rows: dicts with region (index into names), rank, starts, durations
    and optionally call_ids, parent_ids (all rows or none)."""
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        meta = f.create_group("metadata")
        meta.attrs["source"] = "native"
        meta.attrs["mpi_size"] = np.int64(mpi_size or 1 + max(r["rank"] for r in rows))
        f.create_dataset("region_table/names", data=names, dtype=STR)
        starts, ends, ids, parents, offsets, counts = [], [], [], [], [], []
        for r in rows:
            offsets.append(len(starts))
            counts.append(len(r["starts"]))
            starts.extend(r["starts"])
            ends.extend(int(s) + int(d) for s, d in zip(r["starts"], r["durations"]))
            ids.extend(r.get("call_ids", []))
            parents.extend(r.get("parent_ids", []))
        n = len(rows)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([r["region"] for r in rows], dtype=np.uint32)
        idx["ranks"] = np.array([r["rank"] for r in rows], dtype=np.uint32)
        idx["event_offsets"] = np.array(offsets, dtype=np.uint64)
        idx["event_counts"] = np.array(counts, dtype=np.uint64)
        idx["source_lines"] = np.full(n, -1, dtype=np.int64)
        for k in ("source_files", "source_texts", "tags", "event_metadata"):
            idx.create_dataset(k, data=[""] * n, dtype=STR)
        idx["exclusive_totals"] = np.full(n, -1, dtype=np.int64)
        idx["summary_statistics"] = np.array(
            [_stats(r["starts"], r["durations"]) for r in rows], dtype=STATS)
        ev = f.create_group("events")
        ev["start_times"] = np.array(starts, dtype=np.int64)
        ev["end_times"] = np.array(ends, dtype=np.int64)
        if ids:
            ev["call_ids"] = np.array(ids, dtype=np.int64)
            ev["parent_ids"] = np.array(parents, dtype=np.int64)
