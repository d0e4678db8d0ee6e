#!/usr/bin/python3
"""Merge tests: run scope-merge on real and hand-built profiles and check the
result independently of the C code, with h5py against FORMAT.md.

    merge_test.py --merge BIN --make-native BIN --check BIN --data DIR CASE

One CASE per ctest entry; exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
Every case runs in the current directory (ctest gives each its own).
"""
import hashlib
import json
import struct
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

ARGS = None
check = checks.Checks("merge")


def merge(*args, expect=0):
    return run([ARGS.merge, *args], expect)


def make_native(path, outer=3, inner=2):
    run([ARGS.make_native, path, str(outer), str(inner)], 0)
    return path


def data(rel):
    return os.path.join(ARGS.data, rel)


# ---- an independent reader (FORMAT.md 1, 3, 4, 6) -----------------------------

def read_spt(path):
    raw = open(path, "rb").read()
    order = "<" if struct.unpack_from("<i", raw, 8)[0] in (1, 2) else ">"
    version, rank, nreg = struct.unpack_from(order + "iiq", raw, 8)
    pos, rows = 24, {}
    for _ in range(nreg):
        (ln,) = struct.unpack_from(order + "i", raw, pos); pos += 4
        name = raw[pos:pos + ln].decode(); pos += ln
        src, line = "", -1
        if version == 2:
            (sl,) = struct.unpack_from(order + "i", raw, pos); pos += 4
            src = raw[pos:pos + sl].decode(); pos += sl
            (line,) = struct.unpack_from(order + "i", raw, pos); pos += 4
        (n,) = struct.unpack_from(order + "q", raw, pos); pos += 8
        starts = np.frombuffer(raw, order + "i8", n, pos); pos += 8 * n
        ends = np.frombuffer(raw, order + "i8", n, pos); pos += 8 * n
        rows[(rank, name)] = dict(starts=starts.astype(np.int64), ends=ends.astype(np.int64),
                                  file=src, line=line if line >= 0 else -1, tags=[])
    return dict(names=[n for (_, n) in rows], rows=rows, meta={}, nranks=1)


def read_profile(path):
    """{(rank, name): {starts, ends, file, line, tags, call_ids, parent_ids, ...}}."""
    if path.endswith(".spt"):
        return read_spt(path)
    with h5py.File(path, "r") as f:
        meta = {k: v for k, v in f["metadata"].attrs.items()} if "metadata" in f else {}
        rows = {}
        if "scope_profiler_schema" not in f.attrs:
            names = []
            for g in sorted((k for k in f if k.startswith("rank")), key=lambda k: int(k[4:])):
                for name, reg in f[g]["regions"].items():
                    if name not in names:
                        names.append(name)
                    a = reg.attrs
                    rows[(int(g[4:]), name)] = dict(
                        starts=reg["start_times"][:], ends=reg["end_times"][:],
                        file=text(a.get("source_file", "")), line=int(a.get("source_lineno", -1)),
                        tags=[text(t) for t in a.get("tags", [])])
            return dict(names=names, rows=rows, meta=meta)
        names = [text(n) for n in f["region_table/names"][:]]
        idx, ev = f["rank_region_index"], f["events"]
        deltas = "start_deltas" in ev
        first = ev["start_deltas" if deltas else "start_times"][:]
        second = ev["durations" if deltas else "end_times"][:]
        opt = {k: ev[k][:] for k in ("gpu_durations", "call_ids", "parent_ids", "thread_ids") if k in ev}
        for r in range(len(idx["region_ids"])):
            o, n = int(idx["event_offsets"][r]), int(idx["event_counts"][r])
            s = first[o:o + n]
            starts = np.cumsum(s) if deltas else s
            ends = starts + second[o:o + n] if deltas else second[o:o + n]
            row = dict(starts=starts, ends=ends,
                       file=text(idx["source_files"][r]) if "source_files" in idx else "",
                       line=int(idx["source_lines"][r]) if "source_lines" in idx else -1,
                       tags=json.loads(text(idx["tags"][r]) or "[]") if "tags" in idx else [],
                       excl=int(idx["exclusive_totals"][r]) if "exclusive_totals" in idx else -1)
            for k, v in opt.items():
                row[k] = v[o:o + n]
            rows[(int(idx["ranks"][r]), names[int(idx["region_ids"][r])])] = row
        return dict(names=names, rows=rows, meta=meta)


def check_format(path):
    """FORMAT.md 1 / 8: what every schema-3 file written here must look like."""
    with h5py.File(path, "r") as f:
        check(int(f.attrs["scope_profiler_schema"]) == 3, "schema attribute 3")
        check(f.attrs["scope_profiler_schema"].dtype == np.int64, "schema attribute int64")
        check(text(f.attrs["storage_layout"]) == "columnar", "storage_layout columnar")
        check(set(f.attrs.keys()) == {"scope_profiler_schema", "storage_layout"}, "root attrs")
        idx = f["rank_region_index"]
        cols = ["region_ids", "ranks", "event_offsets", "event_counts", "source_lines",
                "exclusive_totals", "summary_statistics", "source_files", "source_texts",
                "tags", "event_metadata"]
        R = len(idx["region_ids"])
        for c in cols:
            check(c in idx and idx[c].shape == (R,), f"index column {c} has {R} rows")
        for c in ("source_files", "source_texts", "tags", "event_metadata"):
            check(h5py.check_string_dtype(idx[c].dtype) is not None and
                  h5py.check_string_dtype(idx[c].dtype).length is None, f"{c} is vlen str")
        check(len(idx["summary_statistics"].dtype.names) == 11 and
              idx["summary_statistics"].dtype.itemsize == 88, "summary compound 88 bytes")
        offs, counts = idx["event_offsets"][:], idx["event_counts"][:]
        N = len(f["events/start_deltas"])
        check(len(f["events/durations"]) == N, "durations length")
        check(all(offs[i] + counts[i] == offs[i + 1] for i in range(R - 1)), "rows back to back")
        check(R == 0 or offs[-1] + counts[-1] == N, "rows cover the events")
        ranks = idx["ranks"][:]
        check(all(ranks[i] <= ranks[i + 1] for i in range(R - 1)), "rows rank by rank")
        ev = f["events"]
        if "call_ids" in ev:
            check("parent_ids" in ev, "parent_ids with call_ids")
            check(not np.all(ev["call_ids"][:] == -1), "call_ids not all -1")
        for r in range(R):
            json.loads(text(idx["tags"][r]))
            json.loads(text(idx["event_metadata"][r]) or "[]")
            o, n = offs[r], counts[r]
            st = idx["summary_statistics"][r]
            d = ev["durations"][o:o + n]
            if n:
                check(st["total"] == d.sum() and st["minimum"] == d.min() and
                      st["maximum"] == d.max(), f"row {r} summary statistics")


def call_tree_checks(path):
    """Ids unique per rank, parents earlier ids on the same rank."""
    p = read_profile(path)
    by_rank = {}
    for (rank, _), row in p["rows"].items():
        if "call_ids" in row:
            by_rank.setdefault(rank, []).append(row)
    for rank, rows in by_rank.items():
        ids = np.concatenate([r["call_ids"] for r in rows])
        real = ids[ids >= 0]
        check(len(np.unique(real)) == len(real), f"rank {rank}: call ids unique")
        s = set(real.tolist())
        for r in rows:
            for c, par in zip(r["call_ids"], r["parent_ids"]):
                if par >= 0:
                    check(par in s and par < c, f"rank {rank}: parent {par} of {c} valid")


def nesting_exclusive(rows):
    """FORMAT.md 7.6 over every call of one rank: {name: exclusive total}."""
    calls = []
    for name, row in rows.items():
        for s, e in zip(row["starts"], row["ends"]):
            calls.append((int(s), int(e), name))
    calls.sort(key=lambda c: (c[0], -c[1]))
    stack, excl = [], {n: 0 for n in rows}
    for s, e, name in calls:
        s2, e2 = 2 * s, (2 * s + 1 if e == s else 2 * e)
        while stack and stack[-1][0] <= s2:
            end2, dur, child, nm = stack.pop()
            excl[nm] += dur - child
        if stack:
            if e2 > stack[-1][0]:
                return None
            stack[-1][2] += e - s
        stack.append([e2, e - s, 0, name])
    while stack:
        end2, dur, child, nm = stack.pop()
        excl[nm] += dur - child
    return excl


def check_union(out, inputs, label=None):
    check_format(out)
    merged = read_profile(out)
    expected_names = []
    for i in inputs:
        p = read_profile(i)
        for n in p["names"]:
            expected_names.append(n)
        for key, row in p["rows"].items():
            check(key in merged["rows"], f"{key} from {i} in the output")
            if key not in merged["rows"]:
                continue
            m = merged["rows"][key]
            check(np.array_equal(m["starts"], row["starts"]), f"{key} starts exact")
            check(np.array_equal(m["ends"], row["ends"]), f"{key} ends exact")
            check(m["file"] == row["file"] and m["line"] == row["line"], f"{key} source")
            check(list(m["tags"]) == list(row["tags"]), f"{key} tags")
            if "gpu_durations" in row:
                check(np.array_equal(m["gpu_durations"], row["gpu_durations"]), f"{key} gpu")
    check(merged["names"] == expected_names, "region table is the union in input order")
    check(len(merged["rows"]) == sum(len(read_profile(i)["rows"]) for i in inputs), "row count")
    call_tree_checks(out)
    # Exclusive totals, where stored, are those of the merged nesting.
    ranks = {r for (r, _) in merged["rows"]}
    for rank in ranks:
        rows = {n: row for (r, n), row in merged["rows"].items() if r == rank}
        if any("thread_ids" in row for row in rows.values()):
            continue  # lanes: covered by the C reader's call tree instead
        excl = nesting_exclusive(rows)
        for n, row in rows.items():
            if excl is not None and row["excl"] >= 0:
                check(row["excl"] == excl[n], f"rank {rank} {n}: exclusive {row['excl']} == {excl[n]}")
        if excl is not None:
            check(all(row["excl"] >= 0 for row in rows.values()), f"rank {rank}: exclusive computed")
    with h5py.File(out, "r") as f:
        meta = f["metadata"].attrs
        first_label = None
        for i in inputs:
            lab = read_profile(i)["meta"].get("label")
            if lab is not None and first_label is None:
                first_label = text(lab)
        want = label if label is not None else first_label
        if want is not None:
            check(text(meta["label"]) == want, f"label {want!r}")
        sizes = [int(read_profile(i)["meta"].get("mpi_size", 1)) for i in inputs]
        check(int(meta["mpi_size"]) >= max(sizes), "mpi_size is the largest")
    r = run([ARGS.check, out, *inputs])
    check(r.returncode == 0, f"C results API check: {r.stderr.strip()}")
    if ARGS.scope_check:
        # Every merged file must also pass the format's own validator.
        r = run([ARGS.scope_check, "--quiet", out])
        check(r.returncode == 0, f"scope-check on the merged file: {r.stdout.strip()}")


# ---- hand-built inputs (FORMAT.md 1) ---------------------------------------------

def write_schema3(path, regions, meta, threads=None):
    """regions: list of (rank, name, starts, durations, call_ids|None, parent_ids|None)."""
    names = []
    for _, n, *_ in regions:
        if n not in names:
            names.append(n)
    str_t = h5_schema.STR
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        g = f.create_group("metadata")
        for k, v in meta.items():
            g.attrs[k] = v
        f["region_table/names"] = np.array(names, dtype=object).astype(str_t)
        regions = sorted(regions, key=lambda x: x[0])
        offs, counts, sd, du, ci, pi, ti = [], [], [], [], [], [], []
        with_ids = any(r[4] is not None for r in regions)
        for rank, n, starts, durs, cids, pids, *rest in regions:
            offs.append(sum(counts)); counts.append(len(starts))
            sd += [starts[0]] + [starts[i] - starts[i - 1] for i in range(1, len(starts))]
            du += list(durs)
            ci += list(cids) if cids is not None else [-1] * len(starts)
            pi += list(pids) if pids is not None else [-1] * len(starts)
        R = len(regions)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([names.index(r[1]) for r in regions], np.uint32)
        idx["ranks"] = np.array([r[0] for r in regions], np.uint32)
        idx["event_offsets"] = np.array(offs, np.uint64)
        idx["event_counts"] = np.array(counts, np.uint64)
        idx["source_lines"] = np.full(R, -1, np.int64)
        idx["source_files"] = np.array([""] * R, dtype=object).astype(str_t)
        idx["source_texts"] = np.array([""] * R, dtype=object).astype(str_t)
        idx["tags"] = np.array(["[]"] * R, dtype=object).astype(str_t)
        idx["event_metadata"] = np.array(["[]"] * R, dtype=object).astype(str_t)
        idx["exclusive_totals"] = np.full(R, -1, np.int64)
        ev = f.create_group("events")
        ev["start_deltas"] = np.array(sd, np.int64)
        ev["durations"] = np.array(du, np.int64)
        if with_ids:
            ev["call_ids"] = np.array(ci, np.int64)
            ev["parent_ids"] = np.array(pi, np.int64)
    return path


# ---- cases -------------------------------------------------------------------------

FIXTURES = {
    "schema1": "compat/schema1.h5", "schema2": "compat/schema2.h5",
    "schema3": "compat/schema3.h5", "spt_v1": "compat/native-v1.spt",
    "spt_v2": "compat/native-v2.spt",
    "driver_serial": "driver/serial.h5", "driver_gzip": "driver/gzip.h5",
    "driver_mpi4": "driver/mpi4.h5", "driver_mpi4_direct": "driver/mpi4_direct.h5",
    "driver_perf": "driver/perf.h5", "driver_threads": "driver/threads.h5",
}


def case_union(fixture):
    # The fixtures were recorded long before native.h5: --allow-disjoint.
    native = make_native("native.h5")
    src = data(FIXTURES[fixture])
    merge(src, native, "-o", "merged.h5", "--quiet", "--allow-disjoint")
    check_union("merged.h5", [src, native])
    # and with the native input first: same union, native ids then first
    merge(native, src, "-o", "merged2.h5", "--quiet", "--label", "relabelled", "--allow-disjoint")
    check_union("merged2.h5", [native, src], label="relabelled")
    with h5py.File("merged.h5", "r") as f, h5py.File(src, "r") if not src.endswith(".spt") else open(os.devnull) as s:
        if fixture == "driver_perf":
            for reg in s["rank0/perf_events"]:
                check(f"rank0/perf_events/{reg}/values" in f, f"perf group {reg} copied")
                check(np.array_equal(f[f"rank0/perf_events/{reg}/values"][:],
                                     s[f"rank0/perf_events/{reg}/values"][:]), f"perf {reg} values")
                check(dict(f[f"rank0/perf_events/{reg}"].attrs).keys() ==
                      dict(s[f"rank0/perf_events/{reg}"].attrs).keys(), f"perf {reg} attrs")
        if fixture == "driver_threads":
            # Runs recorded apart nest nowhere: every input thread keeps a
            # lane of its own, and the native file's calls without a thread
            # (no thread table) get one more.
            n_in = len(s["thread_table/index"])
            n_native = len(read_threads("native.h5")) or 1
            check(len(f["thread_table/index"]) == n_in + n_native,
                  "thread tables concatenated, one lane per input thread")
            idx = f["thread_table/index"][:]
            check(len(set(idx.tolist())) == len(idx), "thread indices unique on rank 0")


def read_threads(path):
    with h5py.File(path, "r") as f:
        return f["thread_table/index"][:] if "thread_table" in f else []


def case_aggregate():
    """An aggregate input makes an aggregate output: the Python aggregate
    fixture's rows are kept, the native trace is reduced exactly (counts and
    totals per region, its call paths), with one notice naming it."""
    native = make_native("native.h5")
    r = merge(data("driver/aggregate.h5"), native, "-o", "out.h5", expect=0)
    check(r.stderr.count("has per-call events") == 1 and "native.h5" in r.stderr,
          "one notice names the reduced trace")
    with h5py.File("out.h5", "r") as f, h5py.File(native, "r") as n, \
            h5py.File(data("driver/aggregate.h5"), "r") as a:
        check(text(f.attrs["storage_layout"]) == "aggregate", "aggregate output")
        names = [text(x) for x in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        got = {names[r]: (int(c), int(t)) for r, c, t in
               zip(idx["region_ids"][:], idx["aggregate_counts"][:], idx["aggregate_totals"][:])}
        nnames = [text(x) for x in n["region_table/names"][:]]
        nidx = n["rank_region_index"]
        durations = n["events/durations"][:]
        for r, off, cnt in zip(nidx["region_ids"][:], nidx["event_offsets"][:],
                               nidx["event_counts"][:]):
            want = (int(cnt), int(durations[int(off):int(off) + int(cnt)].sum()))
            check(got.get(nnames[r]) == want, f"{nnames[r]}: {got.get(nnames[r])} vs {want}")
        anames = [text(x) for x in a["region_table/names"][:]]
        aidx = a["rank_region_index"]
        for r, c, t in zip(aidx["region_ids"][:], aidx["aggregate_counts"][:],
                           aidx["aggregate_totals"][:]):
            check(got.get(anames[r]) == (int(c), int(t)), f"fixture row {anames[r]} kept")
        paths = f["rank0/call_paths"]
        check(int(paths["counts"][:].sum()) == int(n["rank_region_index/event_counts"][:].sum()),
              "the native calls are all on call paths")


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def case_collision():
    a = write_schema3("a.h5", [(0, "solve", [10, 30], [5, 5], None, None),
                               (0, "timestep", [5], [50], None, None),
                               (0, "only_a", [1], [1], None, None)], {"mpi_size": 1})
    b = write_schema3("b.h5", [(0, "solve", [100], [5], None, None),
                               (0, "timestep", [90], [50], None, None)], {"source": "native"})
    c = write_schema3("c.h5", [(0, "solve", [200], [5], None, None)], {"source": "native"})
    with open("out.h5", "wb") as f:
        f.write(b"precious bytes, not a profile\n" * 100)
    before = sha("out.h5")
    r = merge(a, b, c, "-o", "out.h5", expect=2)
    err = r.stderr
    check("'solve'" in err and "'timestep'" in err, "every colliding name listed")
    check("only_a" not in err, "non-colliding names not listed")
    solve_line = [l for l in err.splitlines() if "'solve'" in l]
    check(solve_line and all(x in solve_line[0] for x in ("a.h5", "b.h5", "c.h5")),
          "solve lists all three inputs")
    check("fortran:" in err, "suggests a prefix")
    check(sha("out.h5") == before, "existing output untouched")
    check(sorted(os.listdir(".")) == ["a.h5", "b.h5", "c.h5", "out.h5"], "no temporary left")
    merge(a, b, "-o", "new.h5", expect=2)
    check(not os.path.exists("new.h5"), "no output created")


def case_refusals():
    native = make_native("native.h5")
    src = data("compat/schema3.h5")
    r = merge(native, "-o", "o.h5", expect=1)
    check("two" in r.stderr and "--help" in r.stderr, "fewer than two inputs: usage")
    r = merge(native, src, expect=1)
    check("-o" in r.stderr, "missing output: usage")
    before = sha(native)
    r = merge(src, native, "-o", native, expect=2)
    check("native.h5" in r.stderr and "output" in r.stderr, "output equal to an input")
    os.symlink(native, "alias.h5")
    r = merge(src, native, "-o", "alias.h5", expect=2)
    check("output" in r.stderr, "output aliasing an input through a symlink")
    check(sha(native) == before, "input untouched")
    r = merge(native, src, "./native.h5", "-o", "o.h5", expect=2)
    check("twice" in r.stderr, "same input twice")
    r = merge(src, "missing.h5", "-o", "o.h5", expect=2)
    check("missing.h5" in r.stderr and "not found" in r.stderr, "missing input named")
    with open("garbage.h5", "wb") as f:
        f.write(b"\x00" * 4096)
    r = merge(src, "garbage.h5", "-o", "o.h5", expect=2)
    check("garbage.h5" in r.stderr, "unreadable input named")
    with open("trunc.spt", "wb") as f:
        f.write(open(data("compat/native-v1.spt"), "rb").read()[:40])
    r = merge(native, "trunc.spt", "-o", "o.h5", expect=2)
    check("trunc.spt" in r.stderr and "truncated" in r.stderr, "truncated trace named")
    check(not os.path.exists("o.h5"), "never an output on refusal")
    r = merge(src, native, "-o", "o.h5", "--bogus", expect=1)
    check("unknown option" in r.stderr, "unknown option")


def case_ranks():
    """Ranks 0-3 of a native file with a 2-rank driver file."""
    driver = []
    native = []
    for rank in range(2):
        # driver: py:step around the native work, ids 0, 1 per rank
        driver.append((rank, "py:main", [1000], [9000], [0], [-1]))
        driver.append((rank, "py:step", [2000, 5000], [2000, 2000], [1, 2], [0, 0]))
    for rank in range(4):
        native.append((rank, "c:kernel", [2100 + rank, 5100 + rank], [500, 500], [0, 2], [-1, -1]))
        native.append((rank, "c:inner", [2200 + rank, 5200 + rank], [100, 100], [1, 3], [0, 2]))
    write_schema3("driver.h5", driver, {"mpi_size": 2, "label": "drv"})
    write_schema3("native4.h5", native, {"source": "native", "mpi_size": 4, "label": "nat"})
    merge("driver.h5", "native4.h5", "-o", "merged.h5", "--quiet")
    check_union("merged.h5", ["driver.h5", "native4.h5"])
    m = read_profile("merged.h5")
    check(sorted({r for (r, _) in m["rows"]}) == [0, 1, 2, 3], "ranks 0-3")
    with h5py.File("merged.h5", "r") as f:
        check(int(f["metadata"].attrs["mpi_size"]) == 4, "mpi_size 4")
        check(text(f["metadata"].attrs["label"]) == "drv", "earlier label wins")
    for rank in range(4):
        k = m["rows"][(rank, "c:kernel")]
        if rank < 2:
            check(list(k["call_ids"]) == [3, 5], f"rank {rank}: native ids offset past driver")
            check(list(k["parent_ids"]) == [1, 2], f"rank {rank}: kernels adopt py:step calls")
            check(list(m["rows"][(rank, "c:inner")]["parent_ids"]) == [3, 5], "inner parents shifted")
        else:
            check(list(k["call_ids"]) == [0, 2], f"rank {rank}: no driver, ids unchanged")
            check(list(k["parent_ids"]) == [-1, -1], f"rank {rank}: roots stay roots")
    check(m["rows"][(0, "py:step")]["excl"] == 4000 - 1000, "driver exclusive loses native time")
    check(m["rows"][(0, "py:main")]["excl"] == 9000 - 4000, "py:main exclusive")
    check(m["rows"][(3, "c:kernel")]["excl"] == 800, "rank 3 kernel exclusive")


def case_nested():
    """A driver without source metadata, a C-core-like native file with its
    own tree; roots inside driver calls get the innermost one as parent."""
    write_schema3("py.h5", [
        (0, "py:main", [0], [1000], [0], [-1]),
        (0, "py:step", [100, 500], [300, 400], [1, 3], [0, 0]),
        (0, "py:sub", [520], [300], [4], [3]),
        (0, "py:io", [950], [40], [2], [0]),
    ], {"label": "py"})
    write_schema3("c.h5", [
        (0, "c:kern", [150, 600], [100, 100], [0, 2], [-1, -1]),
        (0, "c:inner", [160, 610], [40, 40], [1, 3], [0, 2]),
        (0, "c:late", [2000], [100], [4], [-1]),
    ], {"source": "native", "label": "c"})
    # native first on the command line: the driver still gets the low ids
    merge("c.h5", "py.h5", "-o", "m.h5", "--quiet")
    check_union("m.h5", ["c.h5", "py.h5"])
    m = read_profile("m.h5")
    k = m["rows"][(0, "c:kern")]
    check(list(k["call_ids"]) == [5, 7], "native ids after the driver's 0-4")
    check(list(k["parent_ids"]) == [1, 4], "kern adopts the innermost driver call (py:step, py:sub)")
    check(list(m["rows"][(0, "c:inner")]["parent_ids"]) == [5, 7], "native parents keep their tree")
    check(list(m["rows"][(0, "c:late")]["parent_ids"]) == [-1], "a root outside stays a root")
    check(list(m["rows"][(0, "py:sub")]["call_ids"]) == [4], "driver ids unchanged")
    excl = {n: m["rows"][(0, n)]["excl"] for (_, n) in m["rows"]}
    check(excl == {"py:main": 1000 - 300 - 400 - 40, "py:step": (300 - 100) + (400 - 300),
                   "py:sub": 300 - 100, "py:io": 40, "c:kern": 120, "c:inner": 80,
                   "c:late": 100}, f"exclusive totals of the merged tree: {excl}")
    with h5py.File("m.h5", "r") as f:
        check(text(f["metadata"].attrs["label"]) == "c", "first input's label")
        check(text(f["metadata"].attrs["source"]) == "native", "union keeps keys")


def case_stream():
    """A big C-core file (several read blocks, compressed) with a driver."""
    make_native("big.h5", outer=70000, inner=2)
    merge(data("driver/serial.h5"), "big.h5", "-o", "merged.h5", "--quiet", "--allow-disjoint")
    check_union("merged.h5", [data("driver/serial.h5"), "big.h5"])


def case_three():
    """Three inputs: a 4-rank driver, a native trace and a C-core file."""
    make_native("native.h5")
    ins = [data("driver/mpi4.h5"), data("compat/native-v2.spt"), "native.h5"]
    ins_ok = [ins[0], "native.h5"]
    # solve collides between mpi4 and the trace: refused; without it, fine
    r = merge(*ins, "-o", "m.h5", expect=2)
    check("'solve'" in r.stderr, "collision across three inputs")
    merge(*ins_ok, "-o", "m.h5", "--quiet", "--allow-disjoint")
    check_union("m.h5", ins_ok)


def case_prefix():
    """--prefix INPUT=PREFIX renames an input's regions before the collision
    check: by path as given or by 1-based position, repeatable; rows, perf
    groups and the call tree follow the new names."""
    import shutil
    src = data("driver/perf.h5")
    shutil.copy(src, "copy.h5")
    # The copy's calls come later (a second run of the same code), so that
    # no two calls of the two inputs coincide exactly.
    with h5py.File("copy.h5", "r+") as f:
        offsets = f["rank_region_index/event_offsets"][:]
        deltas = f["events/start_deltas"]
        for o in offsets:  # the first start of each row is absolute
            deltas[int(o)] = deltas[int(o)] + 10**9
        stats = f["rank_region_index/summary_statistics"][:]
        stats["start_minimum"] += 10**9
        stats["end_maximum"] += 10**9
        f["rank_region_index/summary_statistics"][:] = stats
    r = merge(src, "copy.h5", "-o", "m.h5", expect=2)
    check("more than one input" in r.stderr and "--prefix" in r.stderr,
          "without a prefix: a collision that points at --prefix")
    merge(src, "copy.h5", "-o", "m.h5", "--quiet", "--prefix", "copy.h5=again:", "--allow-disjoint")
    orig = read_profile(src)
    m = read_profile("m.h5")
    check(m["names"] == orig["names"] + ["again:" + n for n in orig["names"]],
          f"region table: the first input's names, then the prefixed ones: {m['names']}")
    for (rank, name), row in orig["rows"].items():
        for new, shift in ((name, 0), ("again:" + name, 10**9)):
            got = m["rows"].get((rank, new))
            if check(got is not None, f"row {rank} {new}"):
                check(np.array_equal(got["starts"], row["starts"] + shift) and
                      np.array_equal(got["ends"], row["ends"] + shift), f"{rank} {new}: calls exact")
    call_tree_checks("m.h5")
    with h5py.File(src, "r") as s, h5py.File("m.h5", "r") as f:
        for reg in s["rank0/perf_events"]:
            check(f"rank0/perf_events/again:{reg}/values" in f, f"perf group {reg} renamed")
            check(f"rank0/perf_events/{reg}/values" in f, f"perf group {reg} kept")
    if ARGS.scope_check:
        r = run([ARGS.scope_check, "--quiet", "m.h5"])
        check(r.returncode == 0, f"scope-check on the renamed file: {r.stdout.strip()}")
    # By position, both inputs, with the --prefix=... spelling.
    merge(src, "copy.h5", "-o", "m2.h5", "--quiet", "--prefix", "1=py:", "--prefix=2=f:",
          "--allow-disjoint")
    m2 = read_profile("m2.h5")
    check(m2["names"] == ["py:" + n for n in orig["names"]] + ["f:" + n for n in orig["names"]],
          f"both renamed by position: {m2['names']}")
    # Usage errors (exit 1, nothing written).
    for bad in (["--prefix", "3=x:"], ["--prefix", "nope.h5=x:"], ["--prefix", "copy.h5"],
                ["--prefix", "2="], ["--prefix", "2=a/b"], ["--prefix", "2=x:", "--prefix", "copy.h5=y:"],
                ["--prefix"]):
        r = merge(src, "copy.h5", "-o", "bad.h5", *bad, expect=1)
        check("--help" in r.stderr, f"{bad}: a usage error")
    check(not os.path.exists("bad.h5"), "no output after a usage error")


def case_spans():
    """Inputs must belong together: time spans that neither overlap nor nest
    are refused (exit 2, naming both inputs and the gap), --allow-disjoint
    merges them anyway."""
    write_schema3("outer.h5", [(0, "py:main", [1000], [9000], None, None)], {})
    write_schema3("inner.h5", [(0, "c:kern", [2000, 4000], [500, 500], None, None)],
                  {"source": "native"})
    write_schema3("partial.h5", [(0, "c:late", [9500], [2000], None, None)], {"source": "native"})
    write_schema3("later.h5", [(0, "c:other", [3_001_000_000], [10], None, None)],
                  {"source": "native"})
    # nested, and overlapping without nesting: fine
    merge("outer.h5", "inner.h5", "-o", "nested.h5", "--quiet")
    merge("outer.h5", "partial.h5", "-o", "partial_m.h5", "--quiet")
    merge("inner.h5", "partial.h5", "outer.h5", "-o", "chain.h5", "--quiet")
    # outer ends at 10000, later starts at 3001000000: 3.000990 s apart
    r = merge("outer.h5", "later.h5", "-o", "refused.h5", expect=2)
    err = r.stderr
    check("later.h5" in err and "outer.h5" in err, f"both inputs named: {err!r}")
    check("3.001 s after" in err, f"the gap is given: {err!r}")
    check("--allow-disjoint" in err, "the way out is named")
    check(not os.path.exists("refused.h5"), "nothing written")
    # a gap anywhere in the union is refused, whatever the argument order
    r = merge("later.h5", "inner.h5", "outer.h5", "-o", "refused.h5", expect=2)
    check("later.h5" in r.stderr and "3.001 s after" in r.stderr, "three inputs: the gap found")
    merge("outer.h5", "later.h5", "-o", "forced.h5", "--quiet", "--allow-disjoint")
    check_union("forced.h5", ["outer.h5", "later.h5"])


def case_metadata():
    """Which input wins for each metadata key, and each input's own source,
    source_language and label kept per input."""
    write_schema3("drv.h5", [(0, "py:main", [0], [1000], None, None)],
                  {"label": "driver run", "mpi_size": np.int64(2), "timestamp": "t-drv",
                   "only_drv": "d", "shared": "from drv"})
    write_schema3("fort.h5", [(0, "f:solve", [100], [100], None, None)],
                  {"source": "native", "source_language": "fortran", "label": "fortran run",
                   "mpi_size": np.int64(4), "total_cores": np.int64(8), "timestamp": "t-fort",
                   "shared": "from fort", "only_fort": "f"})
    write_schema3("c.h5", [(0, "c:halo", [200], [50], None, None)],
                  {"source": "native", "source_language": "c", "num_nodes": np.int64(2)})
    merge("drv.h5", "fort.h5", "c.h5", "-o", "m.h5", "--quiet")
    merge("drv.h5", "fort.h5", "c.h5", "-o", "m2.h5", "--quiet", "--label", "coupled")
    with h5py.File("m.h5", "r") as f, h5py.File("m2.h5", "r") as g:
        meta, meta2 = f["metadata"].attrs, g["metadata"].attrs
        check(text(meta["label"]) == "driver run", "label: the first input's")
        check(text(meta2["label"]) == "coupled", "label: --label wins")
        check(int(meta["mpi_size"]) == 4, "mpi_size: the largest")
        check(int(meta["total_cores"]) == 8 and int(meta["num_nodes"]) == 2,
              "total_cores, num_nodes: the largest")
        check(text(meta["timestamp"]) == "t-drv" and text(meta["shared"]) == "from drv",
              "other keys: the first input's")
        check(text(meta["only_fort"]) == "f" and text(meta["only_drv"]) == "d",
              "keys only one input has are kept")
        check(text(meta["source"]) == "native" and text(meta["source_language"]) == "fortran",
              "source/source_language: the first input that has them")
        def strings(key, m=meta):
            return [text(x) for x in m[key]]
        check(strings("merged_inputs") == ["drv.h5", "fort.h5", "c.h5"], "merged_inputs")
        check(strings("merged_sources") == ["", "native", "native"], "merged_sources")
        check(strings("merged_source_languages") == ["", "fortran", "c"],
              "merged_source_languages")
        check(strings("merged_labels") == ["driver run", "fortran run", ""], "merged_labels")
        check(strings("merged_labels", meta2) == ["driver run", "fortran run", ""],
              "merged_labels are the inputs' own, whatever --label says")
    # our own reader agrees
    r = run([ARGS.check, "m.h5", "drv.h5", "fort.h5", "c.h5"])
    check(r.returncode == 0, f"C results API check: {r.stderr.strip()}")


def write_likwid(path, rank_tags, attrs):
    write_schema3(path, [(0, os.path.basename(path) + ":r", [1], [1], None, None)], {})
    with h5py.File(path, "a") as f:
        g = f.create_group("rank0/likwid")
        for k, v in attrs.items():
            g.attrs[k] = v
        g.attrs["num_regions"] = len(rank_tags)
        for tag, value in rank_tags.items():
            r = g.create_group("regions/" + tag.replace("/", "|"))
            # The complete layout of FORMAT.md 1.7, for one hardware thread.
            r.attrs["tag"] = tag
            r.attrs["group_id"] = np.int64(0)
            r.attrs["group_name"] = "FLOPS_DP"
            r.attrs["source"] = "marker_api"
            vstr = h5_schema.STR
            r.attrs.create("event_names", ["INSTR_RETIRED_ANY"], dtype=vstr)
            r.attrs.create("counter_names", ["FIXC0"], dtype=vstr)
            r.attrs.create("metric_names", ["Runtime (RDTSC) [s]"], dtype=vstr)
            r["cpus"] = np.array([0], np.int64)
            r["times"] = np.array([value], np.float64)
            r["call_counts"] = np.array([1], np.int64)
            r["events"] = np.array([[value * 10]], np.float64)
            r["metrics"] = np.array([[value]], np.float64)
        lp = f.create_group("rank0/line_profile/0")
        lp.attrs["region"] = os.path.basename(path)
        lp["hits"] = np.array([1, 2], np.int64)


def case_likwid():
    write_likwid("a.h5", {"solve": 1.0, "io/write": 2.0}, {"LIKWID_MODE": "a"})
    write_likwid("b.h5", {"solve": 5.0, "other": 3.0}, {"LIKWID_MODE": "b", "LIKWID_X": "x"})
    merge("a.h5", "b.h5", "-o", "m.h5", "--quiet")
    with h5py.File("m.h5", "r") as f:
        g = f["rank0/likwid"]
        check(sorted(g["regions"]) == ["io|write", "other", "solve"], "likwid tag union")
        check(g["regions/solve/times"][0] == 5.0, "later input wins on the same tag")
        check(g["regions/io|write/times"][0] == 2.0, "earlier-only tag kept")
        check(text(g.attrs["LIKWID_MODE"]) == "b" and text(g.attrs["LIKWID_X"]) == "x",
              "later attributes win")
        check(int(g.attrs["num_regions"]) == 3, "num_regions recounted")
        lp = f["rank0/line_profile"]
        check(sorted(lp) == ["0", "1"], "line profiles renumbered")
        check(text(lp["1"].attrs["region"]) == "b.h5", "line profile order")
    # The merged groups are complete: our reader (through scope-check) opens
    # the file and finds no problem.
    if ARGS.scope_check:
        r = run([ARGS.scope_check, "--quiet", "m.h5"])
        check(r.returncode == 0, f"scope-check on the merged LIKWID file: {r.stdout.strip()}")


CASES = {f"union_{k}": (lambda k=k: case_union(k)) for k in FIXTURES}
CASES.update(aggregate=case_aggregate, collision=case_collision, refusals=case_refusals,
             ranks=case_ranks, nested=case_nested, stream=case_stream, three=case_three,
             likwid=case_likwid, prefix=case_prefix, spans=case_spans,
             metadata=case_metadata)


def main():
    global ARGS
    ARGS = tool_case.parse(CASES, required=("--merge", "--make-native", "--check", "--data"),
                           optional=("--scope-check",))
    # ctest gives each case its own directory under tests/merge/work/; start
    # it empty so that "nothing left behind" checks mean something.
    if os.path.basename(os.path.dirname(os.getcwd())) == "work":
        tool_case.empty_case_dir(ARGS.case)
    tool_case.run_case(check, CASES, ARGS.case)


if __name__ == "__main__":
    main()
