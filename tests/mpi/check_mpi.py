#!/usr/bin/python3
"""Run mpi_record under mpirun and check the ONE file it writes with h5py.

Expectations follow from mpi_record.c's recording plan (rank r records
"common"/"inner" r+1 times and "rank.r" r+1 times; rank 1 records nothing
when there are >= 3 ranks; only rank 3 records "rank3.only"), and from
FORMAT.md: one row per (rank, region), region table = union of names in
first-seen order by rank, metadata mpi_size/num_nodes/total_cores.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--mode", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--reader", required=True, help="read_back: the file through our reader")
args = ap.parse_args()

outputs.fresh_workdir(args.workdir)
out = os.path.join(args.workdir, "job.h5")
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET",))
cmd = mpi_job.launch(args.mpiexec, args.ranks, (), [args.program, out, args.mode])
run = mpi_job.run(cmd, args.workdir, env)
check = checks.Checks("mpi")


check(run.returncode == 0, f"mpirun exit code {run.returncode}")
reports = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
check(len(reports) == 1, f"exactly one report (rank 0 only), got {len(reports)}")
check(os.path.exists(out), "the job's file exists")
check(sorted(os.listdir(args.workdir)) == ["job.h5"], f"no stray files: {os.listdir(args.workdir)}")
if check.failures:
    check.finish()

n = args.ranks
expected = {}  # (rank, region) -> calls, in write order
order = []
for r in range(n):
    if r == 1 and n >= 3:
        continue
    for name, calls in [("common", r + 1), ("inner", r + 1), (f"rank.{r}", r + 1)]:
        expected[(r, name)] = calls
    if r == 3:
        expected[(r, "rank3.only")] = 1
for (r, name) in expected:
    if name not in order:
        order.append(name)

with h5py.File(out, "r") as f:
    names = [x.decode() for x in f["region_table/names"][:]]
    check(names == order, f"region table {names} == first-seen order {order}")
    idx = f["rank_region_index"]
    rows = [(int(idx["ranks"][i]), names[idx["region_ids"][i]], int(idx["event_counts"][i]))
            for i in range(len(idx["ranks"]))]
    got = {(r, name): calls for r, name, calls in rows}
    check(len(rows) == len(got), "one row per (rank, region)")
    check(got == expected, f"rows {got} == {expected}")
    check([r for r, _, _ in rows] == sorted(r for r, _, _ in rows), "rows rank by rank")
    meta = dict(f["metadata"].attrs)
    check(meta.get("mpi_size") == n, f"mpi_size {meta.get('mpi_size')} == {n}")
    check(meta.get("num_nodes") == 1, f"num_nodes {meta.get('num_nodes')} == 1 (one host)")
    check(meta.get("total_cores") == os.cpu_count(),
          f"total_cores {meta.get('total_cores')} == the machine's {os.cpu_count()} cores")
    check(meta.get("label") == "mpi-test", "label")
    ev = f["events"]
    offsets, counts = idx["event_offsets"][:], idx["event_counts"][:]
    check(int(counts.sum()) == len(ev["durations"]), "event counts add up")
    check(all(offsets[i] + counts[i] == offsets[i + 1] for i in range(len(offsets) - 1)),
          "contiguous slices")
    # per rank: ids unique, "inner" calls are children of "common" calls
    call_ids, parent_ids = ev["call_ids"][:], ev["parent_ids"][:]
    deltas, durations = ev["start_deltas"][:], ev["durations"][:]
    for r in range(n):
        sel = [i for i in range(len(rows)) if rows[i][0] == r]
        ids = {}
        for i in sel:
            sl = slice(int(offsets[i]), int(offsets[i] + counts[i]))
            starts = np.cumsum(deltas[sl])
            for k, cid in enumerate(call_ids[sl]):
                check(int(cid) not in ids, f"rank {r}: call id {cid} unique")
                ids[int(cid)] = (rows[i][1], starts[k], starts[k] + durations[sl][k], int(parent_ids[sl][k]))
        for cid, (name, s, e, parent) in ids.items():
            if name == "inner":
                check(parent in ids and ids[parent][0] == "common", f"rank {r}: inner's parent is common")
                if parent in ids:
                    check(ids[parent][1] <= s and e <= ids[parent][2], "parent encloses child")
            else:
                check(parent == -1, f"rank {r}: {name} is a root")

# The same file through our own reader (scope_profiler_results.h).
read = subprocess.run([args.reader, out], capture_output=True, text=True)
check(read.returncode == 0, f"our reader opens the file: {read.stderr.strip()}")
lines = read.stdout.splitlines()
check(bool(lines) and lines[0] == f"ranks {n}", f"our reader: {lines[:1]} ranks == {n}")
ours = {}
for line in lines[1:]:
    rank, name, calls, _first = line.split()
    ours[(int(rank), name)] = int(calls)
check(ours == expected, f"our reader's rows {ours} == {expected}")

check.finish()
