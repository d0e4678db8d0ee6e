"""h5_calls.py: a schema-2/3 profile's calls read with h5py alone, as an
independent reference for the checks of our tools (never through our
reader). Both event layouts: start_deltas + durations, or start_times +
end_times.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import h5py
import numpy as np


def utf8(b):
    """Our tools' rule: every byte that is not valid UTF-8 becomes U+FFFD."""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


def read_calls(path, no_thread=-1):
    """Every call of a trace file, as dicts: rank, thread (`no_thread` when
    the file has no thread ids), region (name), index (the call's place in
    its row), start, end (ns), id and parent (None when the file has no
    such column). Rows in index order, calls in stored order within a
    row."""
    calls = []
    with h5py.File(path, "r") as f:
        names = [utf8(n) for n in f["region_table/names"][()]]
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
