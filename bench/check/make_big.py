#!/usr/bin/python3
"""make_big.py OUT CALLS [RANKS [THREADS]] - a native-shaped schema-3 file
with CALLS calls over RANKS ranks (default 8) and THREADS threads per rank
(default 4), written in chunks with h5py so that the generator's memory
does not grow with CALLS (issue 27's bench: scope-check of 200M calls).

Every thread repeats one unit of four nested calls, ids in the order they
begin (docs/FORMAT.md 4.2), threads running at the same time on their own
lanes:

    outer   [B, B+1000]        id 4u     parent -1
    inner1  [B+100, B+400]     id 4u+1   parent 4u
    leaf    [B+150, B+250]     id 4u+2   parent 4u+1
    inner2  [B+500, B+900]     id 4u+3   parent 4u

with B = 1e9 + 1100 u + 7 t (thread t, unit u), plus the thread's id base.
Exclusive totals (300, 200, 100, 400 ns a unit) and summary statistics are
exact, so scope-check must say "ok"; a file it rejects is a bug.
"""
import sys

import h5py
import numpy as np

out = sys.argv[1]
calls = int(float(sys.argv[2]))
ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 8
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 4
units = calls // (4 * ranks * threads)  # per thread
per_row = units * threads               # calls of one (rank, region) row
REGIONS = [("outer", 0, 1000, -1, 300), ("inner1", 100, 300, 0, 200),
           ("leaf", 150, 100, 1, 100), ("inner2", 500, 400, 0, 400)]
T0 = 1_000_000_000
CHUNK = 1 << 22
rows = ranks * len(REGIONS)
total = rows * per_row

stats_dtype = np.dtype([(n, t) for n, t in [
    ("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
    ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
    ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")]])
vstr = h5py.string_dtype("utf-8")

with h5py.File(out, "w") as f:
    f.attrs["scope_profiler_schema"] = np.int64(3)
    f.attrs["storage_layout"] = "columnar"
    f.create_group("metadata").attrs["mpi_size"] = np.int64(ranks)
    f.create_dataset("region_table/names", data=np.array([r[0] for r in REGIONS], dtype=object),
                     dtype=vstr)
    idx = f.create_group("rank_region_index")
    idx["region_ids"] = np.tile(np.arange(len(REGIONS), dtype=np.uint32), ranks)
    idx["ranks"] = np.repeat(np.arange(ranks, dtype=np.uint32), len(REGIONS))
    idx["event_offsets"] = (np.arange(rows, dtype=np.uint64) * np.uint64(per_row))
    idx["event_counts"] = np.full(rows, per_row, dtype=np.uint64)
    idx["source_lines"] = np.full(rows, -1, dtype=np.int64)
    idx["exclusive_totals"] = np.tile(np.array([r[4] for r in REGIONS], dtype=np.int64) *
                                      per_row, ranks)
    for name, value in [("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                        ("event_metadata", "[]")]:
        idx.create_dataset(name, data=np.array([value] * rows, dtype=object), dtype=vstr)
    stats = np.zeros(rows, dtype=stats_dtype)
    last_start = T0 + 1100 * (units - 1) + 7 * (threads - 1)
    for i in range(rows):
        _, off, dur, _, _ = REGIONS[i % len(REGIONS)]
        stats[i] = (dur * per_row, dur, dur, dur, dur, T0 + off, last_start + off + dur,
                    0, 0, float(dur), 0.0)
    idx["summary_statistics"] = stats
    tt = f.create_group("thread_table")
    n_threads = ranks * threads
    tt["ranks"] = np.repeat(np.arange(ranks, dtype=np.uint32), threads)
    tt["index"] = np.tile(np.arange(threads, dtype=np.int64), ranks)
    tt["ident"] = np.arange(n_threads, dtype=np.int64) + 1000
    tt["native_id"] = np.arange(n_threads, dtype=np.int64) + 5000
    tt["daemon"] = np.zeros(n_threads, dtype=np.int8)
    tt["start_ns"] = np.full(n_threads, T0, dtype=np.int64)
    tt["end_ns"] = np.full(n_threads, last_start + 1000, dtype=np.int64)
    tt["cpu_ns"] = np.zeros(n_threads, dtype=np.int64)
    tt.create_dataset("name", data=np.array([""] * n_threads, dtype=object), dtype=vstr)

    ev = f.create_group("events")
    cols = {name: ev.create_dataset(name, shape=(total,), dtype=np.int64, chunks=(min(1 << 16, max(total, 1)),))
            for name in ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids")}
    for i in range(rows):
        _, off, dur, parent_slot, _ = REGIONS[i % len(REGIONS)]
        slot = i % len(REGIONS)
        base = i * per_row
        for k0 in range(0, per_row, CHUNK):
            k = np.arange(k0, min(per_row, k0 + CHUNK), dtype=np.int64)
            u, t = k // threads, k % threads
            starts = T0 + 1100 * u + 7 * t + off
            prev = np.empty_like(starts)
            prev[1:] = starts[:-1]
            prev[0] = 0 if k0 == 0 else T0 + 1100 * ((k0 - 1) // threads) + \
                7 * ((k0 - 1) % threads) + off
            id_base = t * 4 * units
            s = slice(base + k0, base + k0 + len(k))
            cols["start_deltas"][s] = starts - prev
            cols["durations"][s] = np.full(len(k), dur, dtype=np.int64)
            cols["call_ids"][s] = id_base + 4 * u + slot
            cols["parent_ids"][s] = (id_base + 4 * u + parent_slot if parent_slot >= 0
                                     else np.full(len(k), -1, dtype=np.int64))
            cols["thread_ids"][s] = t
print(f"{out}: {total} calls, {ranks} ranks, {threads} threads a rank")
