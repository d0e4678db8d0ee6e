#!/usr/bin/python3
"""Lane tests of scope-merge (issue 28) and the inputs it must refuse or
repair (issue 29 items 7 and 11).

    lanes_test.py --merge BIN --check BIN --make-native BIN [--make-omp BIN]
                  --driver DRIVER_PY --data DIR CASE

Every merged file is checked three ways: package_lanes.py (the Python
package's containment per lane: stored exclusive totals and same-lane
parents must be what it rebuilds), scope-check (exit 0), and check_results
(our reader against the inputs). Hostile inputs are crafted here with
h5py; each must be refused (exit 2, the file named, nothing written) or
merged into a file scope-check accepts.

One CASE per ctest entry; exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import shutil
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import tool_case  # noqa: E402
from tool_case import run, text  # noqa: E402,F401  (the scripts' own names)

h5py = needs.h5py()
import h5_schema  # noqa: E402
import numpy as np  # noqa: E402

import package_lanes  # noqa: E402  (the oracle, beside this file: on the path as the script's)

ARGS = None
check = checks.Checks("merge lanes")


def merge(*args, expect=0):
    return run([ARGS.merge, "--quiet", *args], expect)


def data(rel):
    return os.path.join(ARGS.data, rel)


def verify(out, inputs, renamed=False):
    """The three independent checks of a merged file (check_results finds
    rows by name: not after --prefix renamed them)."""
    problems = package_lanes.check_file(out)
    check(not problems, f"{out}: the package's lanes rebuild the stored tree: {problems[:3]}")
    r = run([ARGS.scope_check, "--quiet", out])
    check(r.returncode == 0, f"{out}: scope-check accepts it: {r.stdout.strip()} {r.stderr.strip()}")
    r = run([ARGS.check, out, *inputs]) if not renamed else None
    check(renamed or r.returncode == 0, f"{out}: our reader agrees with the inputs: {r and r.stderr.strip()}")


def rows_of(path):
    """{(rank, name): dict(starts, ends, call_ids, parent_ids, thread_ids, excl)}"""
    out = {}
    with h5py.File(path, "r") as f:
        names = [text(n) for n in f["region_table/names"][:]]
        idx, ev = f["rank_region_index"], f["events"]
        sd, du = ev["start_deltas"][:], ev["durations"][:]
        opt = {k: ev[k][:] for k in ("call_ids", "parent_ids", "thread_ids") if k in ev}
        for r in range(len(idx["region_ids"])):
            o, n = int(idx["event_offsets"][r]), int(idx["event_counts"][r])
            starts = np.cumsum(sd[o:o + n])
            row = dict(starts=starts, ends=starts + du[o:o + n],
                       excl=int(idx["exclusive_totals"][r]))
            for k, v in opt.items():
                row[k] = v[o:o + n]
            out[(int(idx["ranks"][r]), names[int(idx["region_ids"][r])])] = row
    return out


def thread_names(path, rank=0):
    with h5py.File(path, "r") as f:
        t = f["thread_table"]
        return {int(i): text(n) for r, i, n in zip(t["ranks"][:], t["index"][:], t["name"][:])
                if int(r) == rank}


def write_schema3(path, regions, meta=None, threads=None, ids=True, parents=True):
    """regions: (rank, name, starts, durations, call_ids, parent_ids, thread_ids|None).
    Rows in the given order; threads: list of (rank, index, name) for a thread table."""
    names = []
    for reg in regions:
        if reg[1] not in names:
            names.append(reg[1])
    vstr = h5_schema.STR
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        g = f.create_group("metadata")
        for k, v in (meta or {}).items():
            g.attrs[k] = v
        f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=vstr)
        offs, counts, sd, du, ci, pi, ti = [], [], [], [], [], [], []
        for rank, name, starts, durs, cids, pids, tids in regions:
            offs.append(sum(counts))
            counts.append(len(starts))
            sd += [starts[0]] + [starts[i] - starts[i - 1] for i in range(1, len(starts))]
            du += list(durs)
            ci += list(cids)
            pi += list(pids)
            ti += list(tids) if tids is not None else [-1] * len(starts)
        R = len(regions)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([names.index(r[1]) for r in regions], np.uint32)
        idx["ranks"] = np.array([r[0] for r in regions], np.uint32)
        idx["event_offsets"] = np.array(offs, np.uint64)
        idx["event_counts"] = np.array(counts, np.uint64)
        idx["source_lines"] = np.full(R, -1, np.int64)
        for col, value in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                           ("event_metadata", "[]")):
            idx.create_dataset(col, data=np.array([value] * R, dtype=object), dtype=vstr)
        idx["exclusive_totals"] = np.full(R, -1, np.int64)
        ev = f.create_group("events")
        ev["start_deltas"] = np.array(sd, np.int64)
        ev["durations"] = np.array(du, np.int64)
        if ids:
            ev["call_ids"] = np.array(ci, np.int64)
        if ids and parents:
            ev["parent_ids"] = np.array(pi, np.int64)
        if threads is not None:
            ev["thread_ids"] = np.array(ti, np.int64)
            t = f.create_group("thread_table")
            t["ranks"] = np.array([x[0] for x in threads], np.uint32)
            t["index"] = np.array([x[1] for x in threads], np.int64)
            for col in ("ident", "native_id", "start_ns", "end_ns", "cpu_ns"):
                t[col] = np.full(len(threads), -1, np.int64)
            t["daemon"] = np.zeros(len(threads), np.int8)
            t.create_dataset("name", data=np.array([x[2] for x in threads], dtype=object),
                             dtype=vstr)
    return path


def refused(args, culprit, what):
    """scope-merge must exit 2 naming the culprit and write nothing."""
    out = "refused.h5"
    if os.path.exists(out):
        os.unlink(out)
    r = merge(*args, "-o", out, expect=None)
    check(r.returncode == 2, f"{what}: exit {r.returncode} (want 2): {r.stderr.strip()}")
    check(culprit in r.stderr, f"{what}: the message names {culprit}: {r.stderr.strip()}")
    check(not os.path.exists(out), f"{what}: nothing written")
    return r.stderr


# ---- cases ---------------------------------------------------------------------------

def native_with_threads(path):
    """A native file with several lanes (OpenMP) when the build has OpenMP."""
    if ARGS.make_omp:
        run([ARGS.make_omp, path, "3", "3"], 0)
    else:
        run([ARGS.make_native, path, "3", "2"], 0)
    return path


def case_run_example():
    """scripts/run-example's merge: the Python driver stand-in runs the
    native kernels inside py:run_kernels (both share CLOCK_MONOTONIC), and
    scope-merge py.h5 f.h5. The package must see the native calls under
    py:run_kernels, and its exclusive time must equal the stored one."""
    native = os.path.abspath("f.h5")
    cmd = [ARGS.make_omp, native, "3", "3"] if ARGS.make_omp else \
        [ARGS.make_native, native, "3", "2"]
    run(["/usr/bin/python3", ARGS.driver, "py.h5", "--", *cmd], 0)
    merge("py.h5", "f.h5", "-o", "combined.h5", "--label", "example-run")
    verify("combined.h5", ["py.h5", "f.h5"])
    rows = rows_of("combined.h5")
    kernels, root = rows[(0, "py:run_kernels")], "native:solve" if ARGS.make_omp else "native:outer"
    lane = int(kernels["thread_ids"][0])
    check(all(int(t) == lane for k, r in rows.items() if k[1].startswith("py:")
              for t in r["thread_ids"]), "every driver call on one lane")
    check(all(int(t) == lane for t in rows[(0, root)]["thread_ids"]),
          f"{root} on the driver's lane (the native main thread)")
    check(set(rows[(0, root)]["parent_ids"].tolist()) == {int(kernels["call_ids"][0])},
          f"{root} under py:run_kernels")
    own = int(kernels["ends"][0] - kernels["starts"][0]) - \
        int((rows[(0, root)]["ends"] - rows[(0, root)]["starts"]).sum())
    check(kernels["excl"] == own, f"py:run_kernels exclusive {kernels['excl']} == {own}")
    names = thread_names("combined.h5")
    check("driver: main thread" in names[lane] and "native-" in names[lane],
          f"the joint lane's name says what it is: {names[lane]!r}")
    if ARGS.make_omp:
        work = rows[(0, "native:omp_work")]["thread_ids"]
        others = sorted(set(work.tolist()) - {lane})
        check(len(others) >= 1, "OpenMP workers keep lanes of their own")
        check(all("thread" in names[t] for t in others), f"worker lanes named: {names}")
    # The oracle can fail: the layout scope-merge used to write (driver
    # calls on "thread unknown", the native ones on their own thread) is
    # what issue 28 reports, and package_lanes.py must see it.
    shutil.copy("combined.h5", "old_layout.h5")
    with h5py.File("old_layout.h5", "a") as f:
        idx, tid = f["rank_region_index"], f["events/thread_ids"]
        names_t = [text(n) for n in f["region_table/names"][:]]
        t = tid[:]
        for r in range(len(idx["region_ids"])):
            if names_t[int(idx["region_ids"][r])].startswith("py:"):
                o, n = int(idx["event_offsets"][r]), int(idx["event_counts"][r])
                t[o:o + n] = -1
        tid[...] = t
    check(package_lanes.check_file("old_layout.h5"),
          "the oracle rejects the old layout (driver on lane -1, natives on lane -2)")


def case_recorded_example():
    """The same merge on the inputs scripts/run-example recorded (2 MPI
    ranks, OpenMP workers, Fortran + C; tests/merge/data/README.md): on
    rank 0 the native `solve` nests under py:run_kernels for the package
    too, rank 1 (native only) keeps its own tree."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    py, f = os.path.join(here, "run_example_py.h5"), os.path.join(here, "run_example_f.h5")
    check(not package_lanes.check_file(f), "the native input agrees with its own lanes")
    merge(py, f, "-o", "combined.h5", "--label", "example-run")
    verify("combined.h5", [py, f])
    rows = rows_of("combined.h5")
    kernels, solve = rows[(0, "py:run_kernels")], rows[(0, "solve")]
    check(list(solve["parent_ids"]) == [int(kernels["call_ids"][0])], "solve under py:run_kernels")
    check(int(solve["thread_ids"][0]) == int(kernels["thread_ids"][0]), "one lane for both")
    own = int(kernels["ends"][0] - kernels["starts"][0]) - int(solve["ends"][0] - solve["starts"][0])
    check(kernels["excl"] == own, f"py:run_kernels exclusive {kernels['excl']} == {own}")
    check(list(rows[(1, "solve")]["parent_ids"]) == [-1], "rank 1's solve stays a root")
    for rank in (0, 1):
        names = thread_names("combined.h5", rank)
        check(len(names) == 2, f"rank {rank}: the main lane and the OpenMP worker: {names}")
    check("driver: main thread + " in thread_names("combined.h5", 0)[int(kernels["thread_ids"][0])],
          "rank 0's joint lane is named after both")


def case_fixtures():
    """Merges of the fixtures in tests/data, with and without a native file."""
    native = os.path.abspath(native_with_threads("native.h5"))
    pairs = [
        (["driver/serial.h5", "driver/threads.h5"], ["--prefix", "2=t:"]),
        (["driver/mpi4.h5", "driver/mpi4_direct.h5"], ["--prefix", "2=d:"]),
        (["driver/threads.h5", native], []),
        (["driver/mpi4.h5", native], []),
        (["driver/gzip.h5", native], []),
        (["compat/schema2.h5", "driver/perf.h5"], ["--prefix", "1=c:"]),
    ]
    for k, (ins, extra) in enumerate(pairs):
        paths = [p if os.path.isabs(p) else data(p) for p in ins]
        out = f"m{k}.h5"
        merge(*paths, "-o", out, "--allow-disjoint", *extra)
        verify(out, paths, renamed=bool(extra))
        with h5py.File(out, "r") as f:
            check("thread_ids" in f["events"], f"{out}: every call has a lane")


def case_unrelated():
    """Two unrelated runs whose times overlap (merged with --allow-disjoint):
    every call kept, the two runs on different lanes, so the package never
    nests one in the other (it would raise NestingError on one lane)."""
    # Neither run knows its thread (a Python file without thread_ids).
    write_schema3("a.h5", [(0, "a:main", [1000], [9000], [0], [-1], None),
                           (0, "a:step", [2000, 6000], [3000, 3000], [1, 2], [0, 0], None)],
                  {"label": "run a"})
    write_schema3("b.h5", [(0, "b:main", [4000], [10000], [0], [-1], None),
                           (0, "b:step", [4500], [8000], [1], [0], None)],
                  {"label": "run b"})
    merge("a.h5", "b.h5", "-o", "ab.h5", "--allow-disjoint")
    verify("ab.h5", ["a.h5", "b.h5"])
    rows = rows_of("ab.h5")
    check(sum(len(r["starts"]) for r in rows.values()) == 5, "every call kept")
    la = {int(t) for k, r in rows.items() if k[1].startswith("a:") for t in r["thread_ids"]}
    lb = {int(t) for k, r in rows.items() if k[1].startswith("b:") for t in r["thread_ids"]}
    check(len(la) == 1 and len(lb) == 1 and la != lb, f"two lanes: {la} {lb}")
    check(list(rows[(0, "b:main")]["parent_ids"]) == [-1], "b stays a root")
    names = thread_names("ab.h5")
    check(sorted(names.values()) == ["run a: main thread", "run b: main thread"],
          f"lanes named after their runs: {names}")
    # Both native, both with a thread 0: still two lanes.
    write_schema3("na.h5", [(0, "na:main", [1000], [9000], [0], [-1], [0])],
                  {"source": "native", "label": "na"}, threads=[(0, 0, "MainThread")])
    write_schema3("nb.h5", [(0, "nb:main", [4000], [10000], [0], [-1], [0])],
                  {"source": "native", "label": "nb"}, threads=[(0, 0, "MainThread")])
    merge("na.h5", "nb.h5", "-o", "nab.h5", "--allow-disjoint")
    verify("nab.h5", ["na.h5", "nb.h5"])
    rows = rows_of("nab.h5")
    check(int(rows[(0, "na:main")]["thread_ids"][0]) != int(rows[(0, "nb:main")]["thread_ids"][0]),
          "two native main threads, two lanes")


def case_metadata_span():
    """Merged metadata: start = earliest input start, end = latest input
    end, every input's version and label kept per input."""
    write_schema3("early.h5", [(0, "e:main", [1000], [5000], [0], [-1], None)],
                  {"label": "early", "start_time_ns": np.int64(900),
                   "finalize_time_ns": np.int64(6100), "scope_profiler_version": "1.2.0"})
    write_schema3("late.h5", [(0, "l:main", [2000], [9000], [0], [-1], None)],
                  {"source": "native", "label": "late", "start_time_ns": np.int64(800),
                   "finalize_time_ns": np.int64(12000), "scope_profiler_version": "0.3.1"})
    merge("early.h5", "late.h5", "-o", "m.h5")
    with h5py.File("m.h5", "r") as f:
        meta = f["metadata"].attrs
        check(int(meta["start_time_ns"]) == 800, "start: the earliest input's")
        check(int(meta["finalize_time_ns"]) == 12000, "end: the latest input's")
        check([text(x) for x in meta["merged_versions"]] == ["1.2.0", "0.3.1"],
              "every input's version")
        check([text(x) for x in meta["merged_labels"]] == ["early", "late"], "every input's label")
    verify("m.h5", ["early.h5", "late.h5"])


def case_hostile():
    """Issue 29 item 7 and item 11: inputs scope-check rejects are refused;
    inputs it accepts are merged into what scope-check accepts."""
    native = native_with_threads("native.h5")
    # 1. A valid input without parent_ids: its calls' parents come from
    #    containment, so the stored tree and exclusive totals agree.
    write_schema3("noparents.h5", [(0, "np:main", [1000], [9000], [0], [-1], None),
                                   (0, "np:step", [2000, 5000], [1000, 1000], [1, 2], [0, 0],
                                    None)], {"label": "np"}, parents=False)
    merge("noparents.h5", native, "-o", "np.h5", "--allow-disjoint")
    verify("np.h5", ["noparents.h5", native])
    rows = rows_of("np.h5")
    check(list(rows[(0, "np:step")]["parent_ids"]) == [int(rows[(0, "np:main")]["call_ids"][0])] * 2,
          "parents filled from containment")
    check(rows[(0, "np:main")]["excl"] == 7000, "exclusive of the filled tree")

    # 1b. An input without call ids whose calls nest, merged with one that
    #     has them: the output stores parents, so its calls are numbered
    #     (in start order) and get their containment parents.
    write_schema3("noids.h5", [(0, "ni:main", [1000], [9000], [0], [-1], None),
                               (0, "ni:step", [2000, 5000], [1000, 1000], [1, 2], [0, 0], None)],
                  {"label": "ni"}, ids=False)
    merge("noids.h5", native, "-o", "ni.h5", "--allow-disjoint")
    verify("ni.h5", ["noids.h5", native])
    rows = rows_of("ni.h5")
    main_id = int(rows[(0, "ni:main")]["call_ids"][0])
    check(main_id >= 0 and list(rows[(0, "ni:step")]["parent_ids"]) == [main_id] * 2,
          "calls without ids numbered, parents from containment")

    # 2. Rows without calls but with statistics: nothing stored for them.
    write_schema3("zero.h5", [(0, "z:main", [1000], [9000], [0], [-1], None),
                              (0, "z:none", [1000], [10], [1], [0], None)], {"label": "z"})
    with h5py.File("zero.h5", "a") as f:
        idx = f["rank_region_index"]
        counts = idx["event_counts"][:]
        counts[1] = 0
        idx["event_counts"][...] = counts
        st = idx["summary_statistics"][:] if "summary_statistics" in idx else None
        stats_t = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"),
                            ("first", "<i8"), ("last", "<i8"), ("start_minimum", "<i8"),
                            ("end_maximum", "<i8"), ("gpu_count", "<u8"), ("gpu_total", "<i8"),
                            ("mean", "<f8"), ("m2", "<f8")])
        st = np.zeros(2, stats_t)
        st[0] = (9000, 9000, 9000, 9000, 9000, 1000, 10000, 0, 0, 9000.0, 0.0)
        st[1] = (77, 5, 9, 5, 9, 1, 2, 0, 0, 7.0, 1.0)
        idx["summary_statistics"] = st
        ev = f["events"]
        for k in ("start_deltas", "durations", "call_ids", "parent_ids"):
            v = ev[k][:1]
            del ev[k]
            ev[k] = v
    merge("zero.h5", native, "-o", "zero_m.h5", "--allow-disjoint")
    verify("zero_m.h5", ["zero.h5", native])

    # 3. Two index rows for one (rank, region).
    write_schema3("tworows.h5", [(0, "t:main", [1000], [9000], [0], [-1], None),
                                 (0, "t:main", [20000], [10], [1], [-1], None)], {"label": "t"})
    with h5py.File("tworows.h5", "a") as f:  # write_schema3 names it once: point both at it
        f["rank_region_index/region_ids"][...] = np.array([0, 0], np.uint32)
    refused(["tworows.h5", native, "--allow-disjoint"], "tworows.h5", "two rows for one region")

    # 4. Aggregate inputs with impossible rows.
    for what, column, value in (("count 2^64-1", "aggregate_counts", np.uint64(2**64 - 1)),
                                ("negative total", "aggregate_totals", np.int64(-5))):
        bad = f"agg_{column}.h5"
        shutil.copy(data("driver/aggregate.h5"), bad)
        with h5py.File(bad, "a") as f:
            col = f["rank_region_index/" + column]
            v = col[:]
            v[1] = value
            col[...] = v
        refused([bad, native, "--allow-disjoint"], bad, f"aggregate row with {what}")

    # 5. Stored totals that disagree with the events: recomputed.
    write_schema3("liar.h5", [(0, "l:main", [1000], [9000], [0], [-1], None),
                              (0, "l:step", [2000], [1000], [1], [0], None)], {"label": "l"})
    with h5py.File("liar.h5", "a") as f:
        f["rank_region_index/exclusive_totals"][...] = np.array([123, 456], np.int64)
    merge("liar.h5", native, "-o", "liar_m.h5", "--allow-disjoint")
    verify("liar_m.h5", ["liar.h5", native])
    check(rows_of("liar_m.h5")[(0, "l:main")]["excl"] == 8000, "exclusive recomputed")

    # 6. Stored parents that disagree with the input's own lane (a call
    #    stored as the child of a call that does not enclose it innermost).
    write_schema3("wrongparent.h5", [(0, "w:main", [1000], [9000], [0], [-1], None),
                                     (0, "w:step", [2000], [5000], [1], [0], None),
                                     (0, "w:leaf", [3000], [100], [2], [0], None)],
                  {"label": "w"})
    refused(["wrongparent.h5", native, "--allow-disjoint"], "wrongparent.h5",
            "a parent that is not the innermost enclosing call of its lane")

    # 6b. A thread index twice in one rank's thread table.
    write_schema3("twothreads.h5", [(0, "tt:main", [1000], [10], [0], [-1], [0])],
                  {"label": "tt", "source": "native"},
                  threads=[(0, 0, "MainThread"), (0, 0, "again")])
    refused(["twothreads.h5", native, "--allow-disjoint"], "twothreads.h5",
            "a thread index twice in a thread table")

    # 7. Item 11: two names that differ only in invalid UTF-8 are one name
    #    once stored (U+FFFD): refused, not renamed.
    write_schema3("utf_a.h5", [(0, "x", [1000], [10], [0], [-1], None)], {"label": "ua"})
    write_schema3("utf_b.h5", [(0, "y", [1000], [10], [0], [-1], None)],
                  {"label": "ub", "source": "native"})
    for path, raw in (("utf_a.h5", b"k\xff"), ("utf_b.h5", b"k\xfe")):
        with h5py.File(path, "a") as f:
            del f["region_table/names"]
            f.create_dataset("region_table/names", data=np.array([raw], dtype=object),
                             dtype=h5py.string_dtype("ascii"))
    err = refused(["utf_a.h5", "utf_b.h5"], "utf_a.h5", "names equal once repaired")
    check("utf_b.h5" in err, "both inputs named")

    # 8. Item 11: a thread id with no thread table (an empty thread set).
    write_schema3("nothreads.h5", [(0, "n:main", [1000], [10], [0], [-1], [0])],
                  {"label": "n"}, threads=[])
    with h5py.File("nothreads.h5", "a") as f:
        del f["thread_table"]
    refused(["nothreads.h5", native, "--allow-disjoint"], "nothreads.h5",
            "thread id without a thread table")

    # 9. Item 11: a 200,000-entry metadata array: refused cleanly (exit 2).
    src = data("driver/serial.h5")
    with h5py.File(src, "r") as s, h5py.File("bigmeta.h5", "w", libver="latest") as f:
        for k, v in s.attrs.items():
            f.attrs[k] = v
        for name in ("region_table", "rank_region_index", "events"):
            s.copy(name, f)
        g = f.create_group("metadata")
        for k, v in s["metadata"].attrs.items():
            g.attrs[k] = v
        g.attrs.create("hosts", np.array([f"node{i:06d}" for i in range(200000)], dtype=object),
                       dtype=h5py.string_dtype())
    err = refused(["bigmeta.h5", native, "--allow-disjoint"], "bigmeta.h5",
                  "a 200,000-entry metadata array")
    check("hosts" in err, "the key is named")


CASES = dict(run_example=case_run_example, recorded_example=case_recorded_example,
             fixtures=case_fixtures, unrelated=case_unrelated,
             metadata_span=case_metadata_span, hostile=case_hostile)


def main():
    global ARGS
    ARGS = tool_case.parse(CASES, required=("--merge", "--check", "--make-native", "--driver",
                                            "--data", "--scope-check"),
                           optional=("--make-omp",))
    tool_case.run_case(check, CASES, ARGS.case)


if __name__ == "__main__":
    main()
