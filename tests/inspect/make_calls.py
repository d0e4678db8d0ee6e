#!/usr/bin/python3
"""A large schema-3 profile written with h5py + numpy, for the bounded-memory
tests and bench/inspect: RANKS ranks of THREADS threads each, ITERATIONS
iterations per thread, every iteration the same nested pattern with random
durations (seeded):

    main (one per thread; a worker thread's main is a child of thread 0's,
          on another lane: not subtracted from its exclusive time)
    `- step
       |- compute
       |  |- kernel            starts with compute (a tie in start)
       |  |- mark              zero-length
       |  `- recurse           three deep (recursion collapsed)
       `- exchange

10 calls per iteration. Ids are unique per rank and numbered in begin order
per thread (a thread's ids above the threads before it), parents stored, and
the exclusive totals stored, as a native file has them, so readers can keep
the calls in the file (SP_RESULTS_CALLS_ON_DEMAND).

Usage: make_calls.py OUT RANKS THREADS ITERATIONS [SEED]
Prints a JSON object with what the file holds per call path, pooled over
ranks (count, total_ns, exclusive_ns, p50/p95/p99 over the durations), so
a test can check a tool's table against it without trusting the tool.
"""
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from h5_schema import STATS, STR  # noqa: E402,F401
NAMES = ["main", "step", "compute", "kernel", "mark", "recurse", "exchange"]
# Per iteration, in begin order: (region, index of the parent within the
# iteration, -1 = the thread's main). Paths name the collapsed tree path.
PATTERN = [(1, -1), (2, 0), (3, 1), (4, 1), (5, 1), (5, 4), (5, 5), (6, 0)]
PATHS = ["main/step", "main/step/compute", "main/step/compute/kernel",
         "main/step/compute/mark", "main/step/compute/recurse",
         "main/step/compute/recurse", "main/step/compute/recurse", "main/step/exchange"]


def thread_calls(rng, iterations, t0):
    """Starts, durations, pattern slot per call of one thread's iterations
    (main excluded), in begin order."""
    k = iterations
    step_d = rng.integers(2000, 4000, k)
    gaps = rng.integers(10, 50, k)
    step_s = t0 + 10 + np.concatenate(([0], np.cumsum(step_d + gaps)[:-1]))
    comp_s = step_s + 1
    comp_d = (step_d * rng.uniform(0.5, 0.7, k)).astype(np.int64)
    kern_s = comp_s                      # same start as its parent
    kern_d = (comp_d * rng.uniform(0.1, 0.3, k)).astype(np.int64)
    mark_s = kern_s + kern_d + 1
    mark_d = np.zeros(k, dtype=np.int64)
    r1_s = mark_s + 1
    r1_d = comp_s + comp_d - r1_s - 1
    r2_s = r1_s + 1
    r2_d = r1_d - 2
    r3_s = r2_s + 1
    r3_d = (r2_d * rng.uniform(0.2, 0.9, k)).astype(np.int64)
    exch_s = comp_s + comp_d + 1
    exch_d = step_s + step_d - exch_s - 1
    starts = np.stack([step_s, comp_s, kern_s, mark_s, r1_s, r2_s, r3_s, exch_s], axis=1)
    durs = np.stack([step_d, comp_d, kern_d, mark_d, r1_d, r2_d, r3_d, exch_d], axis=1)
    return starts.reshape(-1), durs.reshape(-1), int(step_s[-1] + step_d[-1] + 10 - t0)


def rank_columns(rng, threads, iterations):
    per = len(PATTERN)
    cols = {k: [] for k in ("start", "dur", "id", "parent", "thread", "region", "path")}
    base, last_end = 0, 0
    for t in range(threads):
        t0 = 1_000_000 + int(rng.integers(0, 5))
        s, d, span = thread_calls(rng, iterations, t0)
        n = len(s)
        ids = base + 1 + np.arange(n)
        slot = np.tile(np.arange(per), iterations)
        it = np.repeat(np.arange(iterations), per)
        parent_slot = np.array([p for _, p in PATTERN])[slot]
        parents = np.where(parent_slot < 0, base, base + 1 + it * per + parent_slot)
        # thread 0's main starts first and ends last (fixed below): the
        # workers' mains are its children, on other lanes
        main_start = 1_000_000 - 5 if t == 0 else t0 + 1
        last_end = max(last_end, t0 + span)
        cols["start"] += [np.array([main_start]), s]
        cols["dur"] += [np.array([t0 + span - main_start]), d]
        cols["id"] += [np.array([base]), ids]
        cols["parent"] += [np.array([-1 if t == 0 else 0]), parents]
        cols["thread"] += [np.full(n + 1, t)]
        cols["region"] += [np.array([0]), np.array([r for r, _ in PATTERN])[slot]]
        cols["path"] += [np.array([-1]), slot]
        base += n + 1
    out = {k: np.concatenate(v).astype(np.int64) for k, v in cols.items()}
    out["dur"][0] = last_end + 10 - out["start"][0]
    return out


def exclusive_of(c):
    """Per call: duration minus direct children on the same lane."""
    order = np.argsort(c["id"])
    pos = np.empty_like(order)
    pos[c["id"][order]] = np.arange(len(order))  # ids are dense per rank
    excl = c["dur"].copy()
    has = c["parent"] >= 0
    par = pos[c["parent"][has]]
    same = c["thread"][has] == c["thread"][par]
    np.subtract.at(excl, par[same], c["dur"][has][same])
    return excl


def main():
    out, ranks, threads, iterations = sys.argv[1], *map(int, sys.argv[2:5])
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    rng = np.random.default_rng(seed)
    truth = {}
    with h5py.File(out, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        meta = f.create_group("metadata")
        meta.attrs["source"] = "native"
        meta.attrs["mpi_size"] = np.int64(ranks)
        f.create_dataset("region_table/names", data=NAMES, dtype=STR)
        total = ranks * threads * (1 + iterations * len(PATTERN))
        ev = f.create_group("events")
        kw = dict(chunks=(min(total, 1 << 16),), compression="gzip", compression_opts=1,
                  shuffle=True)
        dsets = {k: ev.create_dataset(k, (total,), dtype=np.int64, **kw)
                 for k in ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids")}
        index = {k: [] for k in ("region", "rank", "offset", "count", "excl", "stats")}
        at = 0
        for rank in range(ranks):
            c = rank_columns(rng, threads, iterations)
            excl = exclusive_of(c)
            for region in range(len(NAMES)):
                sel = np.nonzero(c["region"] == region)[0]
                sel = sel[np.lexsort((c["id"][sel], c["start"][sel]))]  # start order
                s, d = c["start"][sel], c["dur"][sel]
                n = len(sel)
                dsets["start_deltas"][at:at + n] = np.diff(s, prepend=0)
                dsets["durations"][at:at + n] = d
                dsets["call_ids"][at:at + n] = c["id"][sel]
                dsets["parent_ids"][at:at + n] = c["parent"][sel]
                dsets["thread_ids"][at:at + n] = c["thread"][sel]
                index["region"].append(region)
                index["rank"].append(rank)
                index["offset"].append(at)
                index["count"].append(n)
                index["excl"].append(int(excl[sel].sum()))
                index["stats"].append((int(d.sum()), int(d.min()), int(d.max()), int(d[0]),
                                       int(d[-1]), int(s.min()), int((s + d).max()), 0, 0,
                                       float(d.mean()), float(((d - d.mean()) ** 2).sum())))
                at += n
            for p in sorted(set(PATHS)):
                slots = [i for i, q in enumerate(PATHS) if q == p]
                sel = np.isin(c["path"], slots) & (c["region"] > 0)
                t = truth.setdefault(p, {"count": 0, "total_ns": 0, "exclusive_ns": 0, "d": []})
                t["count"] += int(sel.sum())
                t["total_ns"] += int(c["dur"][sel].sum())
                t["exclusive_ns"] += int(excl[sel].sum())
                t["d"].append(c["dur"][sel])
            sel = c["region"] == 0
            t = truth.setdefault("main", {"count": 0, "total_ns": 0, "exclusive_ns": 0, "d": []})
            t["count"] += int(sel.sum())
            t["total_ns"] += int(c["dur"][sel].sum())
            t["exclusive_ns"] += int(excl[sel].sum())
            t["d"].append(c["dur"][sel])
        idx = f.create_group("rank_region_index")
        r = len(index["region"])
        idx["region_ids"] = np.array(index["region"], dtype=np.uint32)
        idx["ranks"] = np.array(index["rank"], dtype=np.uint32)
        idx["event_offsets"] = np.array(index["offset"], dtype=np.uint64)
        idx["event_counts"] = np.array(index["count"], dtype=np.uint64)
        idx["source_lines"] = np.full(r, -1, dtype=np.int64)
        for k in ("source_files", "source_texts", "tags", "event_metadata"):
            idx.create_dataset(k, data=[""] * r, dtype=STR)
        idx["exclusive_totals"] = np.array(index["excl"], dtype=np.int64)
        idx["summary_statistics"] = np.array(index["stats"], dtype=STATS)
    for t in truth.values():
        d = np.concatenate(t.pop("d"))
        for q in (50, 95, 99):
            t[f"p{q}_ns"] = float(np.percentile(d, q))
    print(json.dumps({"calls": total, "paths": truth}))


if __name__ == "__main__":
    main()
