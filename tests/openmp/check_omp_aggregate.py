#!/usr/bin/python3
"""check_omp_aggregate.py OMP_AGGREGATE SCOPE_CHECK WORKDIR (issue 28).

Runs omp_aggregate in trace and in aggregate mode and compares their call
paths (region names from the root, pooled over threads): the same paths
with the same counts, so the workers' calls hang under the path that
forked their team in aggregate mode as in the trace. Also: every
row_block/cell/pack path is under step (none a root), "loose" (forked
outside any call) stays a root, and the forking path's exclusive time
loses only its own thread's children (docs/FORMAT.md: a child on another
thread runs beside its parent). Both files pass scope-check.
"""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

program, check_tool, workdir = sys.argv[1:4]
needs.no_tsan(program)
os.makedirs(workdir, exist_ok=True)
check = checks.Checks("omp aggregate")


def trace_paths(path):
    """path (tuple of names) -> call count, from the calls' parent ids."""
    calls = h5_calls.read_calls(path)
    region_of_call = {call["id"]: call["region"] for call in calls}
    parent_of = {call["id"]: call["parent"] for call in calls}
    counts = collections.Counter()
    for call in region_of_call:
        chain, c = [], call
        while c != -1:
            chain.append(region_of_call[c])
            c = parent_of.get(c, -1)
        counts[tuple(reversed(chain))] += 1
    return counts


def aggregate_paths(path):
    """path -> count, and the paths themselves (for the exclusive check)."""
    with h5py.File(path, "r") as f:
        names = h5_calls.region_names(f)
        g = f["rank0/call_paths"]
        parents, regions = g["parents"][:], g["region_ids"][:]
        cols = {k: g[k][:] for k in ("counts", "totals", "exclusives", "thread_ids")}
    full, rows = [], []
    for i, (p, r) in enumerate(zip(parents, regions)):
        full.append((full[p] if p >= 0 else ()) + (names[r],))
        rows.append({k: int(v[i]) for k, v in cols.items()} | {"parent": int(p), "path": full[i]})
    counts = collections.Counter()
    for row in rows:
        counts[row["path"]] += row["counts"]
    return counts, rows


env = dict(os.environ, SCOPE_PROFILER_QUIET="1", OMP_NUM_THREADS="4", OMP_DYNAMIC="false",
           OMP_WAIT_POLICY="passive")
files = {}
for mode in ("trace", "aggregate"):
    out = os.path.join(workdir, f"omp_{mode}.h5")
    p = subprocess.run([program, out], env=dict(env, SCOPE_PROFILER_MODE=mode),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{mode}: exit {p.returncode}: {p.stderr[-1000:]}")
    c = subprocess.run([check_tool, out], capture_output=True, text=True)
    check(c.returncode == 0, f"{mode}: scope-check accepts the file: {c.stdout[-1500:]}")
    files[mode] = out
if check.failures:
    check.finish()

trace = trace_paths(files["trace"])
aggregate, rows = aggregate_paths(files["aggregate"])
for path in sorted(set(trace) | set(aggregate)):
    print(f"{' > '.join(path):40s} trace {trace.get(path, 0):4d} aggregate {aggregate.get(path, 0):4d}")
check(trace == aggregate, "aggregate paths and counts equal the trace's")
expected = {("step", "stencil", "row_block"): 48, ("step", "stencil", "row_block", "cell"): 96,
            ("step", "halo", "pack"): 12, ("loose",): 4}
for path, count in expected.items():
    check(aggregate.get(path) == count, f"{' > '.join(path)}: {count} calls, got {aggregate.get(path)}")
roots = {row["path"][0] for row in rows if row["parent"] < 0}
check(roots == {"step", "loose"}, f"only step and loose are roots: {roots}")
threads = {row["thread_ids"] for row in rows if row["path"][-1] == "row_block"}
check(len(threads) == 4, f"row_block recorded on the four team threads: {threads}")
for mine, row in enumerate(rows):
    if row["path"][-1] not in ("stencil", "halo"):
        continue
    children = [child for child in rows
                if child["parent"] == mine and child["thread_ids"] == row["thread_ids"]]
    own = sum(child["totals"] for child in children)
    # exact in ns; TSC ticks converted to ns round each sum on its own, so
    # allow a nanosecond a call (the workers' time would be far more)
    slack = row["counts"] + sum(child["counts"] for child in children)
    check(abs(row["exclusives"] - (row["totals"] - own)) <= slack,
          f"{' > '.join(row['path'])}: exclusive {row['exclusives']} == total {row['totals']} "
          f"- own thread's children {own} (workers' time not subtracted)")
check.finish()
