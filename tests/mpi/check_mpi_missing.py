#!/usr/bin/python3
"""check_mpi_missing.py MPIEXEC PROGRAM WORKDIR CASE: (bad-timeout: SCOPE_PROFILER_MPI_TIMEOUT=abc
is refused with one message a rank, the default used, the file written) a rank that never sets
up (or reaches finalize long after the others gave up): the others get
SP_ERR_MPI (18) and a message naming the timeout within seconds, no rank
hangs, no file is written and a previous file at the path is intact."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import outputs  # noqa: E402

mpiexec, program, workdir, case = sys.argv[1:5]
out = outputs.with_previous(workdir)
# not a number of seconds: refused with a message, the default used
timeout = "abc" if case == "bad-timeout" else "2"
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET",), SCOPE_PROFILER_MPI_TIMEOUT=timeout,
                      SCOPE_PROFILER_SUMMARY="0")
start = time.monotonic()
command = mpi_job.launch(mpiexec, 3, (), [program, out, case])
if case == "mixed-modes":
    # rank 1 alone records in aggregate mode (one launch, three contexts)
    command = [mpiexec, "--oversubscribe", "-np", "1", program, out, case, ":",
               "-np", "1", "-x", "SCOPE_PROFILER_MODE=aggregate", program, out, case, ":",
               "-np", "1", program, out, case]
run = mpi_job.run(command, workdir, env, timeout=90)
print(f"elapsed {time.monotonic() - start:.1f} s")
check = checks.Checks(f"mpi missing {case}")


check(run.returncode == 0, f"mpirun exit {run.returncode}")
lines = {l.split()[1]: l for l in run.stdout.splitlines() if l.startswith("rank ")}
if case == "no-setup":
    for r in ("0", "1"):
        check(f"rank {r} setup=18 finalize=2" in lines.get(r, ""),
              f"rank {r}: want setup SP_ERR_MPI and finalize SP_ERR_NOT_ACTIVE: {lines.get(r)}")
    check(run.stderr.count("not every rank of the communicator called sp_setup within 2 s") == 2,
          "ranks 0 and 1 each say which step was missing and the timeout")
elif case == "mixed-modes":
    # one file has one layout: refused on every rank, the message names the
    # two ranks (not "ranks 0 and 0") and their modes
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=1" in lines.get(r, ""),
              f"rank {r}: want SP_ERR_INVALID_ARGUMENT from finalize: {lines.get(r)}")
    check("rank 0 recorded in trace mode but rank 1 in aggregate mode; set SCOPE_PROFILER_MODE "
          "on every rank" in run.stderr, "the message does not name ranks 0 and 1 and their modes")
    outputs.check_kept(check, out)
    check.finish()
elif case == "bad-timeout":
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=0" in lines.get(r, ""),
              f"rank {r}: want setup and finalize SP_OK: {lines.get(r)}")
    said = [l for l in run.stderr.splitlines()
            if "SCOPE_PROFILER_MPI_TIMEOUT=abc is not a positive number of seconds; using the "
               "default, 600 s" in l]
    check(len(said) == 3, f"want the refusal once on each rank, got {len(said)}")
    outputs.check_published(check, out, "the job's file was not written")
    check.finish()
else:
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=18" in lines.get(r, ""),
              f"rank {r}: want setup SP_OK and finalize SP_ERR_MPI: {lines.get(r)}")
    check("not every rank of the communicator reached sp_finalize within 2 s" in run.stderr,
          "no message about the rank that did not reach finalize")
outputs.check_kept(check, out)
check.finish()
