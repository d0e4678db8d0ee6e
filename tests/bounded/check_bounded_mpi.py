#!/usr/bin/python3
"""check_bounded_mpi.py MPIEXEC RANKS APP SCOPE_CHECK WORKDIR: every rank of
an MPI job flushes a bounded trace (128K limit) and the one file holds every
call of every rank, with valid parents (scope-check), and no spill file is
left behind."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

mpiexec, ranks, app, scope_check, workdir = sys.argv[1:6]
ranks = int(ranks)
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
out = os.path.join(workdir, "job.h5")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_BUFFER_LIMIT="128K", SCOPE_PROFILER_SUMMARY="0")
env.pop("SCOPE_PROFILER_QUIET", None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
run = subprocess.run([mpiexec, "--oversubscribe", "-np", str(ranks), app, out], cwd=workdir,
                     env=env, capture_output=True, text=True, timeout=250)
print(run.stdout, run.stderr)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


check(run.returncode == 0, f"mpirun exit {run.returncode}")
check("flushed" in run.stdout, "rank 0's report does not say it flushed")
with h5py.File(out, "r") as f:
    idx = f["rank_region_index"]
    counts, rows_rank = idx["event_counts"][:], idx["ranks"][:]
    for r in range(ranks):
        got = int(counts[rows_rank == r].sum())
        check(got == 2 * 100000 * (r + 1), f"rank {r}: {got} calls, want {2 * 100000 * (r + 1)}")
    parents = f["events/parent_ids"][:]
    check(int((parents >= 0).sum()) == sum(100000 * (r + 1) for r in range(ranks)),
          "every inner call has its outer call as parent")
c = subprocess.run([scope_check, out], capture_output=True, text=True)
check(c.returncode == 0, f"scope-check: {c.stdout} {c.stderr}")
check(sorted(os.listdir(workdir)) == ["job.h5"], f"stray files: {os.listdir(workdir)}")
sys.exit(1 if failures else 0)
