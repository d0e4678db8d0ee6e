"""h5_calls.py: a schema-2/3 profile's calls read with h5py alone, as an
independent reference for the checks of our tools (never through our
reader): call by call (read_calls), row by row as numpy arrays
(read_rows), and the exclusive times the stored parent ids give
(exclusive_ns). Both event layouts: start_deltas + durations, or
start_times + end_times.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import h5py
import numpy as np


def utf8(b):
    """Our tools' rule: every byte that is not valid UTF-8 becomes U+FFFD."""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


def region_names(f):
    """The region table's names of an open file, in id order, as text."""
    return [utf8(n) for n in f["region_table/names"][()]]


def read_calls(path, no_thread=-1):
    """Every call of a trace file, as dicts: rank, thread (`no_thread` when
    the file has no thread ids), region (name), index (the call's place in
    its row), start, end (ns), id and parent (None when the file has no
    such column). Rows in index order, calls in stored order within a
    row."""
    calls = []
    with h5py.File(path, "r") as f:
        names = region_names(f)
        idx, ev = f["rank_region_index"], f["events"]
        ranks = idx["ranks"][()].astype(np.int64)
        region_ids = idx["region_ids"][()].astype(np.int64)
        offsets = idx["event_offsets"][()].astype(np.int64)
        counts = idx["event_counts"][()].astype(np.int64)
        deltas_layout = "start_deltas" in ev
        if deltas_layout:
            deltas, durs = ev["start_deltas"][()], ev["durations"][()]
        else:
            st, en = ev["start_times"][()], ev["end_times"][()]
        col = {k: ev[k][()] for k in ("call_ids", "parent_ids", "thread_ids") if k in ev}
        for row in range(len(offsets)):
            o, n = int(offsets[row]), int(counts[row])
            if deltas_layout:
                starts = np.cumsum(deltas[o:o + n])
                ends = starts + durs[o:o + n]
            else:
                starts, ends = st[o:o + n], en[o:o + n]
            for k in range(n):
                def get(c, default):
                    return int(col[c][o + k]) if c in col else default
                calls.append({"rank": int(ranks[row]), "thread": get("thread_ids", no_thread),
                              "region": names[int(region_ids[row])], "index": k,
                              "start": int(starts[k]), "end": int(ends[k]),
                              "id": get("call_ids", None), "parent": get("parent_ids", None)})
    return calls


def read_rows(path):
    """Every row of a trace file's index, in index order, as tuples (region
    name, rank, starts, durations, call ids, parent ids): numpy int64
    arrays of the row's calls in stored order (ns); the ids are None when
    the file has no such column."""
    rows = []
    with h5py.File(path, "r") as f:
        names = region_names(f)
        idx, ev = f["rank_region_index"], f["events"]
        if "start_deltas" in ev:
            deltas, durs = ev["start_deltas"][()], ev["durations"][()].astype(np.int64)
        else:
            st, en = ev["start_times"][()], ev["end_times"][()]
        cids = ev["call_ids"][()] if "call_ids" in ev else None
        pids = ev["parent_ids"][()] if "parent_ids" in ev else None
        for region, rank, off, cnt in zip(idx["region_ids"][()], idx["ranks"][()],
                                          idx["event_offsets"][()], idx["event_counts"][()]):
            sl = slice(int(off), int(off + cnt))
            if "start_deltas" in ev:
                starts, durations = np.cumsum(deltas[sl]), durs[sl]
            else:
                starts = st[sl].astype(np.int64)
                durations = en[sl].astype(np.int64) - starts
            rows.append((names[region], int(rank), starts, durations,
                         None if cids is None else cids[sl], None if pids is None else pids[sl]))
    return rows


def region_calls(path, region, rank=0):
    """The (starts, durations) of one region's row on `rank` (read_rows'
    arrays); KeyError when the file has no such row."""
    for name, row_rank, starts, durations, _, _ in read_rows(path):
        if name == region and row_rank == rank:
            return starts, durations
    raise KeyError(f"{path}: no row of {region} on rank {rank}")


def exclusive_ns(rows):
    """{(region name, rank): exclusive time, ns} from the stored parent ids:
    every call's duration minus its direct children's, a child found by its
    parent's id among the calls of its own rank. `rows` as read_rows gives
    them, from a file with call and parent ids."""
    excl = {}
    for rank in {row[1] for row in rows}:
        dur_of, parent_of, name_of = {}, {}, {}
        for name, row_rank, _, durations, call_ids, parent_ids in rows:
            if row_rank != rank:
                continue
            for cid, pid, d in zip(call_ids, parent_ids, durations):
                dur_of[int(cid)], parent_of[int(cid)], name_of[int(cid)] = int(d), int(pid), name
        own = dict(dur_of)
        for cid, pid in parent_of.items():
            if pid >= 0 and pid in own:
                own[pid] -= dur_of[cid]
        for cid, value in own.items():
            excl[(name_of[cid], rank)] = excl.get((name_of[cid], rank), 0) + value
    return excl
