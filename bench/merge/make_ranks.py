#!/usr/bin/python3
"""A job-shaped input for the parallel merge benchmark (scope-merge --mpi):
a one-rank schema-3 file (merge_bench_record's, or make_driver.py's) copied
onto RANKS ranks, each rank the same calls (ids are per rank), so that
2 x 5M-event one-rank inputs become 2 x 20M-event four-rank inputs.

    make_ranks.py IN.h5 OUT.h5 RANKS

Event columns in 64K chunks, gzip 4 + shuffle (as make_driver.py).
"""
import sys

import h5py
import numpy as np

src, out, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(src, "r") as f, h5py.File(out, "w") as g:
    for k, v in f.attrs.items():
        g.attrs[k] = v
    meta = g.create_group("metadata")
    for k, v in f["metadata"].attrs.items():
        meta.attrs[k] = v
    meta.attrs["mpi_size"] = np.int64(ranks)
    g.create_dataset("region_table/names", data=f["region_table/names"][:],
                     dtype=f["region_table/names"].dtype)
    n = f["events/start_deltas"].shape[0]
    ev = g.create_group("events")
    for name in f["events"]:
        col = f["events"][name]
        d = ev.create_dataset(name, shape=(n * ranks,), dtype=col.dtype, chunks=(65536,),
                              shuffle=True, compression="gzip", compression_opts=4)
        data = col[:]
        for r in range(ranks):
            d[r * n:(r + 1) * n] = data
    idx, out_idx = f["rank_region_index"], g.create_group("rank_region_index")
    for name in idx:
        v = idx[name][:]
        if name == "ranks":
            v = np.concatenate([np.full(len(v), r, v.dtype) for r in range(ranks)])
        elif name == "event_offsets":
            v = np.concatenate([v + np.uint64(r * n) for r in range(ranks)])
        else:
            v = np.concatenate([v] * ranks)
        out_idx.create_dataset(name, data=v, dtype=idx[name].dtype)
