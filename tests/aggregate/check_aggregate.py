#!/usr/bin/python3
"""check_aggregate.py CASE --program P --inspect I --check C --diff D --fixture F --workdir W
[--mpiexec M --mpi-program Q]

Aggregate mode (SCOPE_PROFILER_MODE / sp_options.mode) against a trace of
the same deterministic program (aggregate_record.c):

  compare      same call tree (scope-inspect, region and calls columns),
               same per-region call counts as the trace and as the plan;
               every path column present; scope-check accepts the file;
               scope-diff compares it with the trace, noise test included
  layout       the file has exactly the aggregate layout the Python package
               writes (the fixture tests/data/driver/aggregate.h5): same
               datasets and element types, events of length 0, the index
               columns the Python reader does not read of length 0, the
               aggregate columns one per row; plus rank0/call_paths
  finalize     the table sp_finalize prints in aggregate mode is the tree
  damaged      call_paths with a parent out of range, a parent after the
               path (a cycle), counts that disagree with the rows, a region
               id out of range, a missing column: scope-inspect exits 2
               naming the file and the group, never crashes
  no_extension the same file without call_paths (as Python writes it) reads
               as flat rows with the same counts
  open         a region left open at finalize: its completed inner call is
               a root path, as in a trace
  mpi          2 ranks in aggregate mode: one file, call paths per rank
               with the job's region ids, counts per rank as planned
  merge_driver a driver trace (examples/driver/driver.py, the Python
               driver's stand-in) around a native aggregate run: scope-merge
               writes an aggregate file (one notice about the driver's
               timeline), the native roots hang under py:run_kernels, the
               driver's exclusive time loses exactly the native totals
  merge_aggregates two native aggregate files (one renamed with h5py) and
               the Python aggregate fixture: one aggregate file, paths of
               both, the fixture's rows kept flat, counts all exact
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

PLAN = {"setup": 1, "timestep": 6, "assemble": 10, "solve": 6, "fib": 90, "io.write": 2,
        "worker.task": 4, "rank.work": 1}
PATH_COLUMNS = ["parents", "region_ids", "thread_ids", "counts", "recursions", "totals",
                "minimums", "maximums", "exclusives", "m2", "start_minimums", "end_maximums"]

ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--program", required=True)
ap.add_argument("--inspect", required=True)
ap.add_argument("--check", required=True)
ap.add_argument("--diff", required=True)
ap.add_argument("--export", required=True)
ap.add_argument("--merge", required=True)
ap.add_argument("--driver", required=True)
ap.add_argument("--fixture", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--mpiexec", default="")
ap.add_argument("--mpi-program", default="")
args = ap.parse_args()
outputs.fresh_workdir(args.workdir)
check = checks.Checks("aggregate")


def run(cmd, env_extra=None):
    env = dict(os.environ)
    env.pop("SCOPE_PROFILER_MODE", None)
    env.pop("SCOPE_PROFILER_QUIET", None)
    env["SCOPE_PROFILER_SUMMARY"] = "0"
    env.update(env_extra or {})
    p = subprocess.run(cmd, cwd=args.workdir, env=env, capture_output=True, text=True, timeout=120)
    return p


def record(mode, *extra, env_extra=None):
    out = os.path.join(args.workdir, f"{mode}.h5")
    p = run([args.program, out, mode, *extra], env_extra)
    check(p.returncode == 0, f"{mode} run exit {p.returncode}: {p.stderr}")
    return out, p


def table(path, *options):
    """The summary table of scope-inspect (the box only)."""
    p = run([args.inspect, "--ascii", "--columns", "region,calls", *options, path])
    check(p.returncode == 0, f"scope-inspect {path}: exit {p.returncode} {p.stderr}")
    return [l.strip() for l in p.stdout.splitlines() if l.lstrip().startswith(("+", "|"))]


def calls_by_region(path):
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        counts = {}
        if f.attrs.get("storage_layout") == "aggregate":
            column = idx["aggregate_counts"][:]
        else:
            column = idx["event_counts"][:]
        for region, n in zip(idx["region_ids"][:], column):
            counts[names[region]] = counts.get(names[region], 0) + int(n)
        return counts


def case_compare():
    trace, _ = record("trace")
    agg, _ = record("aggregate")
    t_table, a_table = table(trace), table(agg)
    print("\n".join(t_table))
    print("\n".join(a_table))
    check(t_table == a_table and len(t_table) > 8, "the aggregate tree differs from the trace's")
    check(calls_by_region(agg) == calls_by_region(trace) == PLAN,
          f"counts: aggregate {calls_by_region(agg)}, trace {calls_by_region(trace)}, plan {PLAN}")
    with h5py.File(agg, "r") as f:
        group = f["rank0/call_paths"]
        check(sorted(group) == sorted(PATH_COLUMNS), f"call_paths columns {sorted(group)}")
        threads = set(int(t) for t in group["thread_ids"][:])
        check(threads == {0, 1}, f"paths of the main and the worker thread, got {threads}")
        fib = [i for i, r in enumerate(group["region_ids"][:])
               if f["region_table/names"][r] in (b"fib", "fib")]
        check(len(fib) == 1 and int(group["recursions"][fib[0]]) == 84,
              "fib: one path whose 90 calls include 84 made inside fib")
        parents = group["parents"][:]
        check(all(-1 <= p < i for i, p in enumerate(parents)), f"parents before children: {parents}")
        # the exclusive times of the paths add up to the rows'
        names = list(f["region_table/names"][:])
        idx = f["rank_region_index"]
        for row, region in enumerate(idx["region_ids"][:]):
            mine = group["region_ids"][:] == region
            check(int(group["totals"][:][mine].sum()) == int(idx["aggregate_totals"][row]) and
                  int(group["exclusives"][:][mine].sum()) == int(idx["aggregate_exclusives"][row]),
                  f"paths of {names[region]} add up to its row")
    p = run([args.check, agg])
    check(p.returncode == 0, f"scope-check on the aggregate file: {p.returncode} {p.stdout}")
    # the flame graph's stacks come from the call paths: the same stacks as
    # the trace's, with runs of one region (recursion) as one frame
    stacks = {}
    for mode, path in (("trace", trace), ("aggregate", agg)):
        out = os.path.join(args.workdir, f"{mode}.folded")
        p = run([args.export, path, "-o", out, "--format", "folded"])
        check(p.returncode == 0, f"scope-export folded of the {mode} file: {p.stderr}")
        keys = set()
        for line in open(out) if p.returncode == 0 else []:
            frames = line.rsplit(" ", 1)[0].split(";")
            keys.add(";".join(f for i, f in enumerate(frames) if i == 0 or frames[i - 1] != f))
        stacks[mode] = keys
    check(stacks["trace"] == stacks["aggregate"] and len(stacks["trace"]) >= 8,
          f"folded stacks: trace {sorted(stacks['trace'])}, aggregate {sorted(stacks['aggregate'])}")
    # scope-diff compares the two modes region by region, with the noise
    # test (the paths carry every region's count, mean and m2)
    p = run([args.diff, trace, agg])
    print(p.stdout)
    check(p.returncode == 0 and "0 added, 0 removed" in p.stdout and "not tested" not in p.stdout,
          f"scope-diff trace vs aggregate: exit {p.returncode}")


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and not re.match(r"rank\d+/|thread_table/", name):
                out[name] = (obj.dtype.str if obj.dtype.kind != "O" else "vlen-str",
                             obj.shape[0] if obj.shape else None)
        f.visititems(visit)
        return out, dict(f.attrs)


def case_layout():
    agg, _ = record("aggregate")
    ours, our_attrs = datasets(agg)
    theirs, their_attrs = datasets(args.fixture)
    check(sorted(ours) == sorted(theirs),
          f"datasets differ from the Python writer's: {sorted(set(ours) ^ set(theirs))}")
    rows = ours["rank_region_index/region_ids"][1]
    for name, (dtype, length) in theirs.items():
        if name not in ours:
            continue
        check(ours[name][0] == dtype, f"{name}: element type {ours[name][0]}, Python {dtype}")
        # the fixture's row count differs; what must match is which columns
        # are per row and which are empty
        their_rows = theirs["rank_region_index/region_ids"][1]
        expect = rows if length == their_rows and length else length
        check(ours[name][1] == expect, f"{name}: length {ours[name][1]}, expected {expect}")
    check(our_attrs.get("storage_layout") == their_attrs.get("storage_layout") == "aggregate",
          f"storage_layout {our_attrs.get('storage_layout')}")
    check(int(our_attrs.get("scope_profiler_schema")) == 3, "schema 3")
    with h5py.File(agg, "r") as f:
        check("rank0/call_paths" in f, "rank0/call_paths exists")


def case_finalize():
    out = os.path.join(args.workdir, "aggregate.h5")
    p = run([args.program, out, "aggregate"], {"SCOPE_PROFILER_SUMMARY": "1"})
    print(p.stdout)
    check(p.returncode == 0, f"exit {p.returncode}")
    report = [l for l in p.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(report) == 1 and "120 calls" in report[0], f"report line counts the calls: {report}")
    check(any("fib" in l and "(rec)" in l or "fib ↻" in l for l in p.stdout.splitlines()),
          "the recursive fib row is marked")
    check(any("(own)" in l for l in p.stdout.splitlines()), "the table is a tree with (own) rows")


def damage(src, name, edit):
    dst = os.path.join(args.workdir, f"damaged_{name}.h5")
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(f["rank0/call_paths"], f)
    return dst


def rewrite(group, column, values):
    dtype = group[column].dtype
    del group[column]
    group.create_dataset(column, data=np.asarray(values, dtype=dtype))


def case_damaged():
    agg, _ = record("aggregate")
    with h5py.File(agg, "r") as f:
        n = len(f["rank0/call_paths/parents"])
        regions = len(f["region_table/names"])
    edits = {
        "parent_range": lambda g, f: rewrite(g, "parents", [-1] + [n + 5] * (n - 1)),
        "cycle": lambda g, f: rewrite(g, "parents", [1, 0] + list(g["parents"][2:])),
        "counts": lambda g, f: rewrite(g, "counts", [int(c) + 1 for c in g["counts"][:]]),
        "region": lambda g, f: rewrite(g, "region_ids", [regions + 3] * n),
        "missing": lambda g, f: g.__delitem__("m2"),
        "short": lambda g, f: rewrite(g, "totals", list(g["totals"][:-1])),
        "not_aggregate": lambda g, f: f.attrs.__setitem__("storage_layout", "columnar"),
    }
    for name, edit in edits.items():
        path = damage(agg, name, edit)
        p = run([args.inspect, path])
        message = p.stderr.strip()
        ok = p.returncode == 2 and path in message and (
            "call_paths" in message or name in ("not_aggregate",))
        check(ok, f"damaged {name}: exit {p.returncode} (want 2), message {message!r}")
        print(f"{name}: exit {p.returncode}: {message}")


def case_no_extension():
    agg, _ = record("aggregate")
    plain = os.path.join(args.workdir, "python_like.h5")
    shutil.copy(agg, plain)
    with h5py.File(plain, "r+") as f:
        del f["rank0/call_paths"]
    rows = table(plain)
    print("\n".join(rows))
    check(not any("(own)" in r for r in rows), "without call paths the table is flat")
    check(calls_by_region(plain) == PLAN, f"counts {calls_by_region(plain)}")


def case_open():
    trace, _ = record("trace", "open")
    agg, _ = record("aggregate", "open")
    t_table, a_table = table(trace), table(agg)
    print("\n".join(t_table))
    print("\n".join(a_table))
    check(t_table == a_table, "with a region left open the trees differ")
    check(any(re.search(r"^\| inside\.open ", l) for l in a_table),
          "the completed call inside the open region is a root")
    check(not any("left.open" in l for l in a_table), "the open call is not counted")


def case_mpi():
    if not args.mpiexec or not args.mpi_program:
        print("SKIP: no MPI build")
        sys.exit(77)
    out = os.path.join(args.workdir, "job.h5")
    env = dict(mpi_job.OPEN_MPI_ENV, ASAN_OPTIONS=mpi_job.job_env()["ASAN_OPTIONS"])
    p = run(mpi_job.launch(args.mpiexec, 2, (), [args.mpi_program, out, "aggregate"]), env)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"mpirun exit {p.returncode}")
    check(sorted(os.listdir(args.workdir)) == ["job.h5"], f"one file: {os.listdir(args.workdir)}")
    with h5py.File(out, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        for rank in (0, 1):
            group = f[f"rank{rank}/call_paths"]
            per_region = {}
            for region, count in zip(group["region_ids"][:], group["counts"][:]):
                per_region[names[region]] = per_region.get(names[region], 0) + int(count)
            want = dict(PLAN, **{"rank.work": rank + 1})
            check(per_region == want, f"rank {rank} paths: {per_region}, want {want}")
            mine = idx["ranks"][:] == rank
            rows = {names[r]: int(c) for r, c in zip(idx["region_ids"][:][mine],
                                                      idx["aggregate_counts"][:][mine])}
            check(rows == want, f"rank {rank} rows: {rows}")
    rows = table(out)
    print("\n".join(rows))
    check(any("(own)" in r for r in rows), "the job's table is a tree")


def names_of(f):
    return [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]


def case_merge_driver():
    native = os.path.join(args.workdir, "native.h5")
    py = os.path.join(args.workdir, "py.h5")
    p = run(["/usr/bin/python3", args.driver, py, "--", args.program, native, "aggregate"])
    check(p.returncode == 0, f"driver run: {p.returncode} {p.stderr}")
    merged = os.path.join(args.workdir, "merged.h5")
    p = run([args.merge, py, native, "-o", merged])
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"scope-merge exit {p.returncode}")
    check(p.stderr.count("has per-call events") == 1 and py in p.stderr,
          f"one notice naming the driver file: {p.stderr!r}")
    with h5py.File(merged, "r") as f, h5py.File(py, "r") as d:
        check(f.attrs["storage_layout"] == "aggregate", "the merged file is aggregate")
        names = names_of(f)
        g = f["rank0/call_paths"]
        parents, regions = g["parents"][:], g["region_ids"][:]
        kernels = [i for i, r in enumerate(regions) if names[r] == "py:run_kernels"]
        check(len(kernels) == 1, "one py:run_kernels path")
        under = {names[regions[i]] for i, p in enumerate(parents) if kernels and p == kernels[0]}
        check({"setup", "timestep", "worker.task", "rank.work"} <= under,
              f"native roots under py:run_kernels: {under}")
        # the driver's exclusive time: its own minus the adopted native totals
        dnames = names_of(d)
        k = dnames.index("py:run_kernels")
        drow = list(d["rank_region_index/region_ids"][:]).index(k)
        dur = int(d["events/durations"][int(d["rank_region_index/event_offsets"][drow])])
        native_total = sum(int(g["totals"][i]) for i, p in enumerate(parents) if p == kernels[0])
        children = sum(int(g["totals"][i]) for i, p in enumerate(parents)
                       if p == kernels[0] and names[regions[i]].startswith("py:"))
        check(int(g["exclusives"][kernels[0]]) == dur - children - native_total,
              f"py:run_kernels exclusive {int(g['exclusives'][kernels[0]])}, want "
              f"{dur} - {children} - {native_total}")
    rows = table(merged)
    print("\n".join(rows))
    check(calls_by_region(merged)["fib"] == 90, "native counts kept")
    p = run([args.check, merged])
    check(p.returncode == 0, f"scope-check on the merged file: {p.returncode} {p.stdout}")


def prefixed_copy(src, prefix):
    """A copy of src with every region name prefixed (what scope-merge's
    collision rule asks of two runs of one program)."""
    dst = os.path.join(args.workdir, prefix.strip(":") + ".h5")
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        names = [prefix + n for n in names_of(f)]
        del f["region_table/names"]
        f.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))
    return dst


def case_merge_aggregates():
    recorded, _ = record("aggregate")
    a, b = prefixed_copy(recorded, "c:"), prefixed_copy(recorded, "f:")
    merged = os.path.join(args.workdir, "merged.h5")
    p = run([args.merge, args.fixture, a, b, "-o", merged])
    print(p.stdout, p.stderr)
    check(p.returncode == 0 and "has per-call events" not in p.stderr,
          f"scope-merge of aggregates: exit {p.returncode}, {p.stderr!r}")
    if p.returncode != 0:
        return
    counts = calls_by_region(merged)
    for prefix in ("c:", "f:"):
        check(all(counts.get(prefix + n) == c for n, c in PLAN.items()),
              f"counts of the {prefix} input: {counts}")
    fixture_counts = calls_by_region(args.fixture)
    check(all(counts.get(n) == c for n, c in fixture_counts.items()),
          f"the fixture's rows: {fixture_counts}")
    with h5py.File(merged, "r") as f, h5py.File(recorded, "r") as r:
        check(len(f["rank0/call_paths/parents"]) == 2 * len(r["rank0/call_paths/parents"]),
              "the paths of both native inputs")
    rows = table(merged)
    print("\n".join(rows))
    check(sum("(own)" in r for r in rows) >= 6, "both trees are in the table")
    p = run([args.check, merged])
    check(p.returncode == 0, f"scope-check on the merged file: {p.returncode} {p.stdout}")


{"merge_driver": case_merge_driver, "merge_aggregates": case_merge_aggregates,
 "compare": case_compare, "layout": case_layout, "finalize": case_finalize,
 "damaged": case_damaged, "no_extension": case_no_extension, "open": case_open,
 "mpi": case_mpi}[args.case]()
check.finish()
