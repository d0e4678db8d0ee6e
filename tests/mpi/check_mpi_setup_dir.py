#!/usr/bin/python3
"""check_mpi_setup_dir.py MPIEXEC PROGRAM WORKDIR RANKS CASE: sp_setup on a
missing output directory under MPI (issue 30, mpi_setup_dir.c). Rank 0
checks the path, every rank gets its verdict at once: with rank 0's
directory missing every rank's sp_setup returns SP_ERR_OUTPUT (8), no
session starts (sp_finalize: SP_ERR_NOT_ACTIVE, 2), exactly one message
names the path, nothing is written and no rank waits for a timeout; with
only the other ranks' directories missing, rank 0 writes the one file and
every rank succeeds."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import outputs  # noqa: E402

mpiexec, program, workdir, ranks, case = sys.argv[1:6]
ranks = int(ranks)
outputs.fresh_workdir(workdir)
TIMEOUT = 30
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_FILE", "SCOPE_PROFILER_DISABLE"),
                      SCOPE_PROFILER_MPI_TIMEOUT=str(TIMEOUT), SCOPE_PROFILER_SUMMARY="0")
forwarded = ()
if case == "others_missing":
    # The other ranks' paths name no file, but a bounded trace keeps its
    # spill file beside its own path: unbounded here, no spill to report.
    env["SCOPE_PROFILER_BUFFER_LIMIT"] = "0"
    forwarded = ("SCOPE_PROFILER_BUFFER_LIMIT",)
cmd = mpi_job.launch(mpiexec, ranks, forwarded, [program, workdir, case])
start = time.monotonic()
run = mpi_job.run(cmd, workdir, env, timeout=120)
elapsed = time.monotonic() - start
print(f"elapsed {elapsed:.1f} s")
check = checks.Checks(f"mpi setup dir {case}")


check(run.returncode == 0, f"mpirun exit {run.returncode}")
lines = {int(l.split()[1]): l for l in run.stdout.splitlines() if l.startswith("rank ")}
check(sorted(lines) == list(range(ranks)), f"every rank reported: {sorted(lines)}")
# Well inside the timeout: no rank waited for another that had given up.
check(elapsed < TIMEOUT, f"the job took {elapsed:.1f} s, not less than the {TIMEOUT} s timeout")
said = [l for l in run.stderr.splitlines() if l.startswith("scope-profiler:")]
missing = os.path.join(workdir, "none", "run.h5")
if case == "others_missing":
    for r in range(ranks):
        check(f"rank {r} setup=0 active=1 finalize=0" in lines.get(r, ""),
              f"rank {r}: want setup SP_OK, a session and finalize SP_OK: {lines.get(r)}")
    check(said == [], f"no diagnostic: {said}")
    check(os.path.isfile(os.path.join(workdir, "run.h5")), "rank 0 wrote run.h5")
    report = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(report) == 1 and f"over {ranks} rank" in report[0],
          f"one report, the job's {ranks} ranks: {report}")
else:
    for r in range(ranks):
        check(f"rank {r} setup=8 active=0 finalize=2" in lines.get(r, ""),
              f"rank {r}: want setup SP_ERR_OUTPUT, no session, finalize SP_ERR_NOT_ACTIVE: "
              f"{lines.get(r)}")
    check(len(said) == 1, f"exactly one message (rank 0's), got {said}")
    check(bool(said) and missing in said[0] and "does not exist" in said[0]
          and "[rank" not in said[0], f"the message names the path {missing}: {said}")
    check("wrote" not in run.stdout and "NO file" not in run.stdout,
          "no finalize report: no session ran")
    check(os.listdir(workdir) == [], f"nothing written: {os.listdir(workdir)}")
check.finish()
