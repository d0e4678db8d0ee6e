#!/usr/bin/python3
"""check_mpi_order.py MPIEXEC PROGRAM WORKDIR CASE: sp_setup before MPI_Init.

normal:        one file, 4 ranks, every call; rank 0's report counts the
               whole job; rank 1's diagnostics start with "[rank 1]"
late-finalize: MPI_Finalize before sp_finalize: four files order.rank<N>.h5,
               each with its rank's calls, and a message saying why
"""
import os
import re
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import outputs  # noqa: E402

mpiexec, program, workdir, case = sys.argv[1:5]
outputs.fresh_workdir(workdir)
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET",), SCOPE_PROFILER_SUMMARY="0")
out = os.path.join(workdir, "order.h5")
run = mpi_job.run(mpi_job.launch(mpiexec, 4, (), [program, out, case]), workdir, env)
check = checks.Checks(f"mpi order {case}")


def steps(path, rank=None):
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table"][:]] \
            if "region_table" in f and not hasattr(f["region_table"], "keys") else None
        idx = f["rank_region_index"]
        return idx["ranks"][:], idx["region_ids"][:], idx["event_counts"][:]


check(run.returncode == 0, f"mpirun exit {run.returncode}")
if case == "normal":
    check(sorted(os.listdir(workdir)) == ["order.h5"], f"files: {os.listdir(workdir)}")
    ranks, _, counts = steps(out)
    for r in range(4):
        want = 1000 * (r + 1) + 1
        got = int(counts[ranks == r].sum())
        check(got == want, f"rank {r}: {got} calls, want {want}")
    check(len(re.findall(r"status=0", run.stdout)) == 3, "ranks 0, 2, 3 return SP_OK")
    report = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(report) == 1 and "10004 calls over 4 ranks" in report[0], f"report: {report}")
    check(re.search(r"\[rank 1\] .*never\.begun", run.stderr) is not None,
          "rank 1's message about never.begun does not carry [rank 1]")
    check(report and re.search(r"rank 1: 2001 calls; 1 call still open at finalize dropped \(open\.r1\); 1 end without",
                               report[0] + run.stdout) is not None,
          "rank 0's report does not name rank 1's open call")
else:
    want_files = sorted(f"order.rank{r}.h5" for r in range(4))
    check(sorted(os.listdir(workdir)) == want_files, f"files: {sorted(os.listdir(workdir))}")
    check(run.stderr.count("MPI was finalized before sp_finalize") == 4,
          "every rank says why it writes its own file")
    for r in range(4):
        path = os.path.join(workdir, f"order.rank{r}.h5")
        if os.path.exists(path):
            ranks, _, counts = steps(path)
            check(int(counts.sum()) == 1000 * (r + 1) + 1, f"{path}: {int(counts.sum())} calls")
check.finish()
