#!/usr/bin/python3
"""check_bounded_mpi.py MPIEXEC RANKS APP SCOPE_CHECK WORKDIR: every rank of
an MPI job flushes a bounded trace (128K limit) and the one file holds every
call of every rank, with valid parents (scope-check), and no spill file is
left behind."""
import os
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import outputs  # noqa: E402

mpiexec, ranks, app, scope_check, workdir = sys.argv[1:6]
ranks = int(ranks)
outputs.fresh_workdir(workdir)
out = os.path.join(workdir, "job.h5")
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET",), SCOPE_PROFILER_BUFFER_LIMIT="128K",
                      SCOPE_PROFILER_SUMMARY="0")
run = mpi_job.run(mpi_job.launch(mpiexec, ranks, (), [app, out]), workdir, env, timeout=250)
check = checks.Checks("bounded mpi")


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
check.finish()
