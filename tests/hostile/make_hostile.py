#!/usr/bin/python3
"""The hostile corpus (issue 19), generated at test time, never stored:

    make_hostile.py DATA_DIR OUT_DIR crafted   files with a valid HDF5
        container and hostile content (one per damage, named after it)
    make_hostile.py DATA_DIR OUT_DIR mutants [PER_FILE] [SEED]
        truncations and byte flips of every fixture in DATA_DIR, sampled
        deterministically from SEED

Prints one line per file: "NAME EXPECT", EXPECT being "refuse" (every
reader must refuse it: exit 2), "accept" (a valid file) or "any" (0 or 2).
Needs h5py and numpy (/usr/bin/python3).
"""
import os
import random
import shutil
import sys

import h5py
import numpy as np

I64_MAX = 2**63 - 1
I64_MIN = -(2**63)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from h5_schema import STATS, STR  # noqa: E402,F401


def stats_of(starts, durations):
    d = np.asarray(durations, dtype=np.int64)
    s = np.asarray(starts, dtype=np.int64)
    if len(d) == 0:
        return (0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0)
    return (int(d.sum()), int(d.min()), int(d.max()), int(d[0]), int(d[-1]), int(s.min()),
            int((s + d).max()), 0, 0, float(d.mean()), float(((d - d.mean()) ** 2).sum()))


def write(path, names, rows, source="native", threads=None, layout="columnar",
          name_dtype=STR, stats=True):
    """A schema-3 columnar profile. rows: list of dicts with region, rank and
    per-call lists starts, durations and optionally call_ids, parent_ids,
    thread_ids. Returns nothing; h5py objects are edited afterwards by the
    caller through patch()."""
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = layout
        meta = f.create_group("metadata")
        meta.attrs["source"] = source
        meta.attrs["mpi_size"] = np.int64(1 + max([r["rank"] for r in rows] + [0]))
        f.create_dataset("region_table/names", data=names, dtype=name_dtype)
        offsets, counts, cols = [], [], {k: [] for k in
                                         ("starts", "durations", "call_ids", "parent_ids",
                                          "thread_ids")}
        have = {k for r in rows for k in r if k in cols}
        for r in rows:
            offsets.append(len(cols["starts"]))
            counts.append(len(r["starts"]))
            for k in cols:
                if k in have:
                    cols[k].extend(r.get(k, [-1] * len(r["starts"])))
        idx = f.create_group("rank_region_index")
        n = len(rows)
        idx["region_ids"] = np.array([r["region"] for r in rows], dtype=np.uint32)
        idx["ranks"] = np.array([r["rank"] for r in rows], dtype=np.uint32)
        idx["event_offsets"] = np.array(offsets, dtype=np.uint64)
        idx["event_counts"] = np.array(counts, dtype=np.uint64)
        idx["source_lines"] = np.full(n, -1, dtype=np.int64)
        for k in ("source_files", "source_texts", "tags", "event_metadata"):
            idx.create_dataset(k, data=[""] * n, dtype=STR)
        idx["exclusive_totals"] = np.full(n, -1, dtype=np.int64)
        if stats:
            idx["summary_statistics"] = np.array(
                [stats_of(r["starts"], r["durations"]) for r in rows], dtype=STATS)
        ev = f.create_group("events")
        starts = np.array(cols["starts"], dtype=np.int64)
        ev["start_times"] = starts
        ev["end_times"] = np.array(
            [(s + d) & (2**64 - 1) for s, d in zip(cols["starts"], cols["durations"])],
            dtype=np.uint64).view(np.int64)
        for k in ("call_ids", "parent_ids", "thread_ids"):
            if k in have:
                ev[k] = np.array(cols[k], dtype=np.int64)
        if threads is not None:
            tt = f.create_group("thread_table")
            tt["ranks"] = np.array([t[0] for t in threads], dtype=np.int64)
            tt["index"] = np.array([t[1] for t in threads], dtype=np.int64)
            tt.create_dataset("name", data=[t[2] for t in threads], dtype=STR)


def replace(f, path, data, dtype=None):
    del f[path]
    if dtype is None:
        f[path] = data
    else:
        f.create_dataset(path, data=data, dtype=dtype)


def nested(call_base=0, start=1000, rank=0):
    """Two regions, a parent call enclosing two children: a valid tree."""
    b = call_base
    return [
        {"region": 0, "rank": rank, "starts": [start], "durations": [1000],
         "call_ids": [b], "parent_ids": [-1]},
        {"region": 1, "rank": rank, "starts": [start + 100, start + 500],
         "durations": [200, 300], "call_ids": [b + 1, b + 2], "parent_ids": [b, b]},
    ]


def crafted(data, out):
    made = []

    def base(name, expect, **kw):
        path = os.path.join(out, name + ".h5")
        write(path, kw.pop("names", ["outer", "inner"]), kw.pop("rows", None) or nested(), **kw)
        made.append((name + ".h5", expect))
        return path

    def patch(name, expect, fn, **kw):
        path = base(name, expect, **kw)
        with h5py.File(path, "a") as f:
            fn(f)

    base("valid", "accept")
    # Stored counts and ids out of range.
    patch("counts_negative", "refuse",
          lambda f: replace(f, "rank_region_index/event_counts", np.array([1, -1], np.int64)))
    patch("offsets_negative", "refuse",
          lambda f: replace(f, "rank_region_index/event_offsets", np.array([-1, 1], np.int64)))
    patch("region_ids_negative", "refuse",
          lambda f: replace(f, "rank_region_index/region_ids", np.array([0, -1], np.int64)))
    patch("region_ids_huge", "refuse",
          lambda f: replace(f, "rank_region_index/region_ids",
                            np.array([0, 2**32 - 1], np.uint32)))
    patch("ranks_huge", "refuse",
          lambda f: replace(f, "rank_region_index/ranks", np.array([0, 2**40], np.uint64)))
    patch("counts_past_end", "refuse",
          lambda f: replace(f, "rank_region_index/event_counts", np.array([1, 2**62], np.uint64)))
    patch("counts_huge_u64", "refuse",
          lambda f: replace(f, "rank_region_index/event_counts",
                            np.array([1, 2**64 - 1], np.uint64)))
    # Wrong dtypes and shapes.
    patch("durations_float", "refuse",
          lambda f: replace(f, "events/end_times", np.array([2000.0, 1300.0, 1800.0])))
    patch("counts_2d", "refuse",
          lambda f: replace(f, "rank_region_index/event_counts", np.array([[1, 2]], np.uint64)))
    patch("names_int", "refuse",
          lambda f: replace(f, "region_table/names", np.array([1, 2], np.int64)))
    patch("stats_string_field", "any",
          lambda f: replace(f, "rank_region_index/summary_statistics",
                            np.zeros(2, dtype=[("total", "S8"), ("minimum", "<i8")])))
    # Stored statistics no set of durations can give (issue 29 item 11): a
    # summary-only reader refuses them, nothing prints them as JSON.
    for field, value in (("m2", np.inf), ("m2", -1.0), ("mean", np.nan)):
        def bad_stat(f, field=field, value=value):
            stats = f["rank_region_index/summary_statistics"][...]
            stats[field][1] = value
            replace(f, "rank_region_index/summary_statistics", stats)
        patch(f"stats_{field}_{'neg' if value == -1.0 else str(value)}", "stats", bad_stat)
    patch("layout_unknown", "refuse", lambda f: f.attrs.__setitem__("storage_layout", "rowwise"))
    patch("schema_huge", "refuse",
          lambda f: f.attrs.__setitem__("scope_profiler_schema", np.uint64(2**64 - 1)))
    patch("schema_negative", "refuse",
          lambda f: f.attrs.__setitem__("scope_profiler_schema", np.int64(-3)))
    patch("schema_string", "refuse",
          lambda f: f.attrs.__setitem__("scope_profiler_schema", "3"))
    patch("names_duplicate", "refuse",
          lambda f: replace(f, "region_table/names", ["same", "same"], STR))
    patch("thread_table_ragged", "refuse",
          lambda f: replace(f, "thread_table/name", ["a", "b", "c"], STR),
          threads=[(0, 0, "main")])
    # A forged length over storage that was never written (fill values).
    def huge_fill(f):
        for col in ("start_times", "end_times"):
            del f["events/" + col]
            f["events"].create_dataset(col, shape=(2**33,), dtype=np.int64, chunks=(2**16,))
        replace(f, "rank_region_index/event_counts", np.array([2**32, 2**32], np.uint64))
        replace(f, "rank_region_index/event_offsets", np.array([0, 2**32], np.uint64))
    patch("fill_2p33", "refuse", huge_fill)
    # Aggregate without its columns.
    agg = os.path.join(out, "aggregate_no_columns.h5")
    shutil.copy(os.path.join(data, "driver", "aggregate.h5"), agg)
    os.chmod(agg, 0o644)
    with h5py.File(agg, "a") as f:
        del f["rank_region_index/aggregate_counts"]
        del f["rank_region_index/aggregate_totals"]
    made.append(("aggregate_no_columns.h5", "refuse"))
    # Extreme timestamps and durations: readable or refused, never a crash;
    # scope-check must reject the negative ones.
    base("start_int64_max", "any", rows=[{"region": 0, "rank": 0, "starts": [I64_MAX],
                                          "durations": [0], "call_ids": [0], "parent_ids": [-1]}],
         names=["a"])
    base("start_int64_min", "any", rows=[{"region": 0, "rank": 0, "starts": [I64_MIN],
                                          "durations": [5], "call_ids": [0], "parent_ids": [-1]}],
         names=["a"])
    base("end_overflow", "refuse", rows=[{"region": 0, "rank": 0, "starts": [I64_MAX - 10],
                                          "durations": [100], "call_ids": [0],
                                          "parent_ids": [-1]}], names=["a"])
    base("duration_negative", "any", rows=[{"region": 0, "rank": 0, "starts": [1000, 5000],
                                            "durations": [-50, 10], "call_ids": [0, 1],
                                            "parent_ids": [-1, -1]}], names=["a"])
    base("durations_sum_overflow", "refuse",
         rows=[{"region": 0, "rank": 0, "starts": [0, 1], "durations": [I64_MAX - 5, I64_MAX - 5],
                "call_ids": [0, 1], "parent_ids": [-1, -1]}], names=["a"])
    # Parents: cycles, self, forward, missing; ids near 2^63 and >= 2^48.
    def rows_with(parents, ids=(0, 1, 2)):
        r = nested()
        r[0]["call_ids"], r[1]["call_ids"] = [ids[0]], [ids[1], ids[2]]
        r[0]["parent_ids"], r[1]["parent_ids"] = [parents[0]], [parents[1], parents[2]]
        return r
    base("parent_self", "any", rows=rows_with([0, 1, 0]))
    base("parent_cycle", "any", rows=rows_with([1, 0, 0]))
    base("parent_forward", "any", rows=rows_with([-1, 2, 0]))
    base("parent_missing", "any", rows=rows_with([-1, 77, 0]))
    base("parent_negative", "any", rows=rows_with([-1, -9, 0]))
    base("call_ids_duplicate", "any", rows=rows_with([-1, 0, 0], ids=(0, 1, 1)))
    base("call_ids_negative", "any", rows=rows_with([-1, 0, 0], ids=(0, -7, 2)))
    big = 2**63 - 10
    base("call_ids_near_2p63", "accept", rows=rows_with([-1, big, big], ids=(big, big + 1, big + 2)))
    base("call_ids_2p48", "accept", source="python",
         rows=rows_with([-1, 2**48, 2**48], ids=(2**48, 2**48 + 1, 2**48 + 2)))
    base("thread_ids_huge", "any", rows=[dict(r, thread_ids=[10**9] * len(r["starts"]))
                                         for r in nested()], threads=[(0, 0, "main")])
    base("thread_ids_negative", "any", rows=[dict(r, thread_ids=[-5] * len(r["starts"]))
                                             for r in nested()], threads=[(0, 0, "main")])
    # 10^5 ranks, one call each.
    path = os.path.join(out, "ranks_1e5.h5")
    n = 100_000
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.create_group("metadata").attrs["mpi_size"] = np.int64(n)
        f.create_dataset("region_table/names", data=["r"], dtype=STR)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.zeros(n, np.uint32)
        idx["ranks"] = np.arange(n, dtype=np.uint32)
        idx["event_offsets"] = np.arange(n, dtype=np.uint64)
        idx["event_counts"] = np.ones(n, np.uint64)
        ev = f.create_group("events")
        ev["start_times"] = np.arange(n, dtype=np.int64) * 10
        ev["end_times"] = np.arange(n, dtype=np.int64) * 10 + 5
    made.append(("ranks_1e5.h5", "accept"))
    # Names that must not break a terminal, a table, JSON, HTML or XML.
    nasty = ["new\nline", 'quote"s and \'single\'', "\x1b[31mred\x1b[0m", "tab\there",
             "<script>alert(1)</script>", "back\\slash", "\x07bell\x08", "\u202eright-to-left",
             "emoji \U0001F600"]
    base("names_nasty", "accept", names=nasty,
         rows=[{"region": i, "rank": 0, "starts": [100 * i], "durations": [10],
                "call_ids": [i], "parent_ids": [-1]} for i in range(len(nasty))])
    # Invalid UTF-8 (stored as bytes) and an embedded NUL (fixed length).
    path = base("names_bad_utf8", "any", names=[b"ok", b"bad\xff\xfe"],
                name_dtype=h5py.string_dtype("ascii"))
    path = base("names_embedded_nul", "any", names=np.array([b"a\x00b", b"c"], dtype="S4"),
                name_dtype=None)
    # Metadata of odd kinds and sizes.
    def odd_meta(f):
        m = f["metadata"]
        m.attrs["big_text"] = "x" * 60000
        m.attrs["int_array"] = np.arange(10)
        m.attrs["float_nan"] = np.nan
        m.attrs["nested_bytes"] = np.void(b"\x00\x01\x02")
        m.attrs["mpi_size"] = np.int64(-5)
    patch("metadata_odd", "any", odd_meta)
    return made


def mutants(data, out, per_file, seed):
    rng = random.Random(seed)
    made = []
    fixtures = []
    for sub in ("compat", "driver"):
        d = os.path.join(data, sub)
        fixtures += [os.path.join(d, n) for n in sorted(os.listdir(d))]
    for src in fixtures:
        blob = open(src, "rb").read()
        stem = os.path.basename(os.path.dirname(src)) + "-" + os.path.basename(src)
        ext = ".spt" if src.endswith(".spt") else ".h5"
        stem = stem.rsplit(".", 1)[0]
        for k in range(per_file):
            if k % 3 == 0:
                cut = rng.randrange(1, len(blob))
                body = blob[:cut]
                name = f"{stem}.trunc{cut}{ext}"
            else:
                b = bytearray(blob)
                flips = rng.choice((1, 1, 2, 8))
                for _ in range(flips):
                    pos = rng.randrange(len(b))
                    b[pos] ^= 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randrange(1, 256)
                body = bytes(b)
                name = f"{stem}.flip{k}-{flips}{ext}"
            with open(os.path.join(out, name), "wb") as f:
                f.write(body)
            made.append((name, "any"))
    return made


def main():
    data, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    if kind == "crafted":
        made = crafted(data, out)
    else:
        per_file = int(sys.argv[4]) if len(sys.argv) > 4 else 8
        seed = int(sys.argv[5]) if len(sys.argv) > 5 else 19
        made = mutants(data, out, per_file, seed)
    for name, expect in made:
        print(name, expect)


if __name__ == "__main__":
    main()
