#!/usr/bin/python3
"""readahead_test.py - scope-merge decodes its inputs' compressed event
columns ahead on helper threads (merge/src/merge_chunks.c over
format/h5_chunk_stream.h: one ring of chunks per input column, shared by
the rows pass 1 reads in turn). The merged file must be exactly what the
merge writes with the merging thread decoding alone
(SCOPE_PROFILER_READ_THREADS=0) and with HDF5's own filters
(SCOPE_PROFILER_MERGE_VALUE_PATH=1), and every row must hold its input's
calls in their order.

    readahead_test.py --merge BIN --make-native BIN [--scope-check BIN] CASE

Inputs, written here with h5py in the writers' layout (shuffle + deflate,
64K-event chunks): two files of two ranks with three nested rows a rank
(70,000 calls a row), so every column spans several chunks, rows start
inside chunks, and pass 1 takes turns between the rows of a column.

Cases:
  ranks  the three merges above, each compared with the others dataset by
         dataset and with the inputs' calls row by row.

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import tool_case  # noqa: E402

h5py = needs.h5py()
import h5_compare  # noqa: E402
import h5_schema  # noqa: E402
import numpy as np  # noqa: E402

ARGS = None
check = checks.Checks("merge readahead")
CALLS = 70000  # per row: several 64K chunks a column, rows starting inside them
RANKS = 2
LEVELS = 3


def rows_of(prefix, seed, offset_ns):
    """{(rank, region name): (starts, durations, call ids, parent ids)}:
    per rank, LEVELS nested calls every step (outer, middle, inner), ids in
    start order."""
    rng = np.random.default_rng(seed)
    rows = {}
    for rank in range(RANKS):
        step = 1000 * np.arange(CALLS, dtype=np.int64) + offset_ns
        outer = rng.integers(300, 900, CALLS, dtype=np.int64)
        durs = [outer, outer - rng.integers(3, 100, CALLS), outer - rng.integers(103, 200, CALLS)]
        for level in range(LEVELS):
            ids = np.arange(CALLS, dtype=np.int64) * LEVELS + level
            parents = ids - 1 if level else np.full(CALLS, -1, np.int64)
            rows[(rank, f"{prefix}:{level}")] = (step + level, durs[level], ids, parents)
    return rows


def write(path, rows, label):
    names = sorted({name for _, name in rows})
    keys = sorted(rows)  # rank by rank, rows in name order
    opts = dict(chunks=(65536,), shuffle=True, compression="gzip", compression_opts=1)
    cols = {"start_deltas": [], "durations": [], "call_ids": [], "parent_ids": []}
    stats = np.zeros(len(keys), dtype=h5_schema.STATS)
    for r, key in enumerate(keys):
        starts, durs, ids, parents = rows[key]
        deltas = np.empty_like(starts)
        deltas[0] = starts[0]
        deltas[1:] = np.diff(starts)
        for name, values in zip(cols, (deltas, durs, ids, parents)):
            cols[name].append(values)
        stats[r] = (durs.sum(), durs.min(), durs.max(), durs[0], durs[-1], starts.min(),
                    (starts + durs).max(), 0, 0, durs.mean(), durs.var() * len(durs))
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["label"] = label
        f["region_table/names"] = np.array(names, dtype=object).astype(h5_schema.STR)
        ev = f.create_group("events")
        for name, parts in cols.items():
            ev.create_dataset(name, data=np.concatenate(parts), **opts)
        idx = f.create_group("rank_region_index")
        n = len(keys)
        idx["region_ids"] = np.array([names.index(name) for _, name in keys], np.uint32)
        idx["ranks"] = np.array([rank for rank, _ in keys], np.uint32)
        idx["event_offsets"] = np.arange(n, dtype=np.uint64) * CALLS
        idx["event_counts"] = np.full(n, CALLS, np.uint64)
        idx["source_lines"] = np.full(n, -1, np.int64)
        for col, fill in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                          ("event_metadata", "[]")):
            idx[col] = np.array([fill] * n, dtype=object).astype(h5_schema.STR)
        idx["exclusive_totals"] = np.full(n, -1, np.int64)
        idx["summary_statistics"] = stats


def merged_rows(path):
    """{(rank, region name): (starts, durations)} of a merged file."""
    out = {}
    with h5py.File(path, "r") as f:
        names = [n.decode() for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        for r in range(len(idx["region_ids"])):
            o, n = int(idx["event_offsets"][r]), int(idx["event_counts"][r])
            starts = np.cumsum(f["events/start_deltas"][o:o + n])
            key = (int(idx["ranks"][r]), names[idx["region_ids"][r]])
            out[key] = (starts, f["events/durations"][o:o + n])
    return out


def merge(out, env):
    return tool_case.run([ARGS.merge, "a.h5", "b.h5", "-o", out, "--quiet"],
                         env=tool_case.environment(
                             drop=("SCOPE_PROFILER_MERGE_VALUE_PATH",
                                   "SCOPE_PROFILER_READ_THREADS",
                                   "SCOPE_PROFILER_READ_VALUE_PATH"), **env))


def case_ranks():
    a, b = rows_of("a", 1, 0), rows_of("b", 2, 950)  # b's calls after a's, same steps
    write("a.h5", a, "readahead-a")
    write("b.h5", b, "readahead-b")
    runs = {"ahead.h5": {"SCOPE_PROFILER_READ_THREADS": "3"},
            "alone.h5": {"SCOPE_PROFILER_READ_THREADS": "0"},
            "value.h5": {"SCOPE_PROFILER_MERGE_VALUE_PATH": "1"}}
    for out, env in runs.items():
        r = merge(out, env)
        if not check(r.returncode == 0, f"merge {env} exits 0: {r.stderr}"):
            return
    for other in ("alone.h5", "value.h5"):
        problems = h5_compare.differences("ahead.h5", other)
        check(not problems, f"read-ahead and {other} write the same file: {problems[:10]}")
    got = merged_rows("ahead.h5")
    check(sorted(got) == sorted(list(a) + list(b)), f"every row merged: {sorted(got)}")
    for key, (starts, durs, _, _) in {**a, **b}.items():
        if key in got:
            check(np.array_equal(got[key][0], starts) and np.array_equal(got[key][1], durs),
                  f"rank {key[0]} {key[1]}: the input's calls in their order")
    if ARGS.scope_check:
        r = tool_case.run([ARGS.scope_check, "ahead.h5"])
        check(r.returncode == 0, f"scope-check accepts the merged file: {r.stdout} {r.stderr}")


CASES = {"ranks": case_ranks}


def main():
    global ARGS
    ARGS = tool_case.parse(CASES, required=("--merge", "--make-native"),
                           optional=("--scope-check",))
    tool_case.empty_case_dir(f"readahead_{ARGS.case}")
    tool_case.run_case(check, CASES, ARGS.case)


if __name__ == "__main__":
    main()
