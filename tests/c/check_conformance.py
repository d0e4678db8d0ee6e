#!/usr/bin/python3
"""Independent conformance check of a file written by the C core.

Runs the writer program in a fresh directory, then reads profile.h5 with
h5py and checks every dataset, dtype, attribute and value against
FORMAT.md (schema 3, sections 1, 2 and 3), including decoding start_deltas
back to the recorded starts. Usage: check_conformance.py WRITER WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as exc:  # the suite's skip code
    print(f"skipped: {exc}")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


writer, workdir = sys.argv[1], sys.argv[2]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
env = dict(os.environ, SECRET_TOKEN="do-not-store", SLURM_JOB_ID="4242",
           LOADEDMODULES="gcc/12:hdf5/1.10")
subprocess.run([writer], cwd=workdir, env=env, check=True)
path = os.path.join(workdir, "profile.h5")
vstr = h5py.check_string_dtype

with h5py.File(path, "r") as f:
    # 1.1 root attributes: exactly these two
    check(set(f.attrs.keys()) == {"scope_profiler_schema", "storage_layout"},
          f"root attributes {sorted(f.attrs.keys())}")
    schema = f.attrs["scope_profiler_schema"]
    check(isinstance(schema, np.int64) and schema == 3, f"schema {schema!r}")
    check(f.attrs["storage_layout"] == "columnar", "storage_layout")
    sid = f.id
    check(set(f.keys()) == {"metadata", "region_table", "rank_region_index", "events",
                            "thread_table"}, f"top-level groups {sorted(f.keys())}")

    # 1.2 metadata: attributes only, typed as h5py writes them
    meta = f["metadata"]
    check(len(meta.keys()) == 0, "metadata holds no datasets")
    attrs = dict(meta.attrs)
    for key in ["timestamp", "platform", "chip_information", "scope_profiler_version",
                "label", "source", "hostname", "user", "uname", "working_directory"]:
        check(key in attrs and isinstance(attrs[key], str), f"metadata {key} is a string")
    for key in ["omp_num_threads", "mpi_size", "total_cores", "num_nodes",
                "start_time_ns", "finalize_time_ns"]:
        check(key in attrs and isinstance(attrs[key], np.int64), f"metadata {key} is int64")
    check(attrs.get("source") == "native", "source=native")
    check(attrs.get("label") == "conformance", "label")
    check(attrs.get("mpi_size") == 1, "mpi_size")
    # The machine's cores (os.cpu_count: online processors), not the run's
    # threads (mpi_size * omp_num_threads, 1 here).
    check(attrs.get("total_cores") == os.cpu_count() * attrs.get("num_nodes"),
          f"total_cores {attrs.get('total_cores')} = the machine's {os.cpu_count()} cores")
    check(attrs.get("SLURM_JOB_ID") == "4242", "SLURM_* variables are kept")
    check("SECRET_TOKEN" not in attrs, "unlisted environment variables are never stored")
    check(list(attrs.get("modules", [])) == ["gcc/12", "hdf5/1.10"], "modules split on ':'")
    check(attrs["start_time_ns"] <= attrs["finalize_time_ns"], "start <= finalize")
    for key in attrs:
        a = meta.attrs.get_id(key)
        if isinstance(attrs[key], str):
            check(a.get_type().is_variable_str() and a.get_type().get_cset() == h5py.h5t.CSET_UTF8,
                  f"metadata {key} is a vlen UTF-8 string")

    # 1.3 region table
    names_ds = f["region_table/names"]
    check(vstr(names_ds.dtype) is not None and vstr(names_ds.dtype).length is None,
          "region names are vlen strings")
    names = [n.decode() for n in names_ds[:]]
    check(len(set(names)) == len(names), "region names unique")
    check(set(names) == {"main", "marker", "nested", "fib", "worker.task", "worker.inner"},
          f"region names {names}")

    # 1.4 index columns and dtypes
    idx = f["rank_region_index"]
    expected = {"region_ids": "<u4", "ranks": "<u4", "event_offsets": "<u8",
                "event_counts": "<u8", "source_lines": "<i8", "exclusive_totals": "<i8"}
    for name, dt in expected.items():
        check(name in idx and idx[name].dtype == np.dtype(dt), f"index {name} dtype {dt}")
    for name in ["source_files", "source_texts", "tags", "event_metadata"]:
        check(name in idx and vstr(idx[name].dtype) is not None, f"index {name} vlen str")
    stats = idx["summary_statistics"]
    check(stats.dtype.itemsize == 88, "summary_statistics is 88 bytes")
    fields = [("total", "<i8", 0), ("minimum", "<i8", 8), ("maximum", "<i8", 16),
              ("first", "<i8", 24), ("last", "<i8", 32), ("start_minimum", "<i8", 40),
              ("end_maximum", "<i8", 48), ("gpu_count", "<u8", 56), ("gpu_total", "<i8", 64),
              ("mean", "<f8", 72), ("m2", "<f8", 80)]
    for name, dt, off in fields:
        got = stats.dtype.fields.get(name)
        check(got is not None and got[0] == np.dtype(dt) and got[1] == off,
              f"summary field {name} {dt} @{off}")
    R = len(idx["region_ids"])
    check(R == len(names), "one row per region on one rank")
    for name in idx:
        check(len(idx[name]) == R, f"index {name} has {R} rows")
    check(all(t == b"[]" for t in idx["tags"][:]), "tags '[]'")
    check(all(t == b"[]" for t in idx["event_metadata"][:]), "event_metadata '[]'")
    check(all(l == -1 for l in idx["source_lines"][:]), "source_lines -1")
    check(all(r == 0 for r in idx["ranks"][:]), "rank 0")

    # 1.5 event columns
    ev = f["events"]
    check(set(ev.keys()) == {"start_deltas", "durations", "call_ids", "parent_ids",
                             "thread_ids"}, f"event columns {sorted(ev.keys())}")
    N = len(ev["start_deltas"])
    for name in ev:
        check(ev[name].dtype == np.dtype("<i8") and len(ev[name]) == N, f"events {name} i8[{N}]")
    deltas, durations = ev["start_deltas"][:], ev["durations"][:]
    call_ids, parent_ids, thread_ids = ev["call_ids"][:], ev["parent_ids"][:], ev["thread_ids"][:]
    offsets, counts = idx["event_offsets"][:], idx["event_counts"][:]
    check(int(counts.sum()) == N, "event counts add up to the column length")
    check(all(offsets[i] + counts[i] == offsets[i + 1] for i in range(R - 1)) and offsets[0] == 0,
          "rows are contiguous slices")
    starts = np.empty(N, dtype=np.int64)
    for r in range(R):
        sl = slice(int(offsets[r]), int(offsets[r] + counts[r]))
        starts[sl] = np.cumsum(deltas[sl])  # per row, never across rows
    ends = starts + durations
    check((durations >= 0).all(), "durations >= 0")

    # ids: unique per rank, parent < child, parent encloses child on the same thread
    check(len(np.unique(call_ids)) == N, "call ids unique")
    by_id = {int(c): i for i, c in enumerate(call_ids)}
    for i in range(N):
        p = int(parent_ids[i])
        if p < 0:
            continue
        check(p < call_ids[i], "parent id < child id")
        j = by_id.get(p)
        check(j is not None, f"parent {p} exists")
        if j is not None:
            check(starts[j] <= starts[i] and ends[i] <= ends[j], "parent encloses child")
            check(thread_ids[j] == thread_ids[i], "parent on the same thread")

    # counts per region
    calls = {names[idx["region_ids"][r]]: int(counts[r]) for r in range(R)}
    check(calls == {"main": 1, "marker": 5, "nested": 5, "fib": 25, "worker.task": 100,
                    "worker.inner": 100}, f"calls per region {calls}")

    # decoded starts match the clock readings the program took around them
    marker_row = names.index("marker")
    r = list(idx["region_ids"][:]).index(marker_row)
    sl = slice(int(offsets[r]), int(offsets[r] + counts[r]))
    with open(os.path.join(workdir, "markers.txt")) as fh:
        bounds = [tuple(map(int, line.split())) for line in fh]
    check(len(bounds) == 5, "5 marker readings")
    for (before, after), s, e in zip(bounds, starts[sl], ends[sl]):
        check(before <= s <= e <= after, f"marker call [{s},{e}] inside [{before},{after}]")

    # 2.1 summary statistics and 2.2 exclusive totals, recomputed here
    child = np.zeros(N, dtype=np.int64)
    for i in range(N):
        p = int(parent_ids[i])
        if p >= 0:
            child[by_id[p]] += durations[i]
    exclusive = durations - child
    srows = stats[:]
    for r in range(R):
        sl = slice(int(offsets[r]), int(offsets[r] + counts[r]))
        d, s = durations[sl], starts[sl]
        rec = srows[r]
        name = names[idx["region_ids"][r]]
        check(rec["total"] == d.sum() and rec["minimum"] == d.min() and rec["maximum"] == d.max(),
              f"{name}: total/min/max")
        check(rec["first"] == d[0] and rec["last"] == d[-1], f"{name}: first/last")
        check(rec["start_minimum"] == s.min() and rec["end_maximum"] == (s + d).max(),
              f"{name}: start_minimum/end_maximum")
        check(rec["gpu_count"] == 0 and rec["gpu_total"] == 0, f"{name}: no gpu")
        check(abs(rec["mean"] - d.mean()) <= 1e-9 * max(1.0, abs(d.mean())), f"{name}: mean")
        check(abs(rec["m2"] - d.var() * len(d)) <= 1e-6 * max(1.0, d.var() * len(d)), f"{name}: m2")
        check(idx["exclusive_totals"][r] == exclusive[sl].sum(), f"{name}: exclusive total")
        check((np.diff(s) >= 0).all(), f"{name}: calls in start order")

    # 1.6 thread table
    tt = f["thread_table"]
    tdt = {"ranks": "<u4", "index": "<i8", "ident": "<i8", "native_id": "<i8", "daemon": "|i1",
           "start_ns": "<i8", "end_ns": "<i8", "cpu_ns": "<i8"}
    for name, dt in tdt.items():
        check(name in tt and tt[name].dtype == np.dtype(dt), f"thread_table {name} {dt}")
    check("name" in tt and vstr(tt["name"].dtype) is not None, "thread_table name vlen str")
    check(len(tt["index"]) == 2, "two threads")
    check(set(np.unique(thread_ids)) <= set(tt["index"][:]), "thread ids index the thread table")
    main_row = list(tt["name"][:]).index(b"MainThread")
    check(tt["end_ns"][main_row] == -1, "main thread alive at finalize (end -1)")
    other = 1 - main_row
    check(tt["end_ns"][other] >= tt["start_ns"][other] > 0, "worker thread start/end")
    check((tt["cpu_ns"][:] >= 0).all(), "cpu_ns >= 0")

print(f"{len(failures)} failed" if failures else "conformance: all checks passed")
sys.exit(1 if failures else 0)
