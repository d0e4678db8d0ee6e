#!/usr/bin/python3
"""check_mpi_stall.py MPIEXEC PROGRAM WORKDIR PHASE: job rank 2 of 3 stops
answering inside sp_finalize at PHASE (fault injection,
SCOPE_PROFILER_TEST_STALL), after the barrier every rank passed. Ranks 0
and 1 must come back from sp_finalize within the timeout plus slack, each
with a message naming the phase and the rank it waited for; nothing is left
half-written: before the file is published the previous file is intact and
no temporary remains; after it (PHASE paths: the summary's gather) the file
is complete and finalize succeeds."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import outputs  # noqa: E402
import stall_job  # noqa: E402

mpiexec, program, workdir, phase = sys.argv[1:5]
out = outputs.with_previous(workdir)
env = stall_job.stall_env(phase, SCOPE_PROFILER_SUMMARY="1", SCOPE_PROFILER_MPI_WRITER="funnel")
if phase == "paths-oom":
    # rank 0's allocations for the summary's gather fail: the table is flat
    # and says so, the file and every rank's finalize are not affected
    env["SCOPE_PROFILER_TEST_STALL"] = "0:paths:fail"
stdout, stderr = stall_job.run(mpiexec, program, out, env)
check = checks.Checks(f"mpi stall {phase}")

if phase == "paths-oom":
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=0" in stdout, f"rank {r}: finalize did not succeed")
    check("summary: rank 0 ran out of memory gathering the other ranks' call paths; the table "
          "above has one row per region (the file is complete)" in stderr,
          "the summary does not say what it lacks")
    check("SCOPE_PROFILER_MPI_TIMEOUT" not in stderr, "a rank waited out the timeout")
    # flat: "inner" is a row of its own, not a child of "work"
    check(re.search(r"^\s*\W\s*work\s+300\s", stdout, re.M) is not None and
          re.search(r"^\s*\W\s*inner\s+300\s", stdout, re.M) is not None,
          "no flat summary table with work and inner")
    outputs.check_published(check, out)
    check.finish()
want = "0" if phase == "paths" else "18"  # SP_OK / SP_ERR_MPI
stall_job.check_came_back(check, stdout, want)
messages = stall_job.timeout_messages(stderr)
stall_job.check_waited(check, messages)
if phase == "rows":
    # rank 0 waits for rank 2's rows by name; rank 1 for rank 0's verdict
    check(any("receiving row headers" in l and "no answer from rank 2" in l for l in messages),
          "rank 0 does not name rank 2 and the phase")
    check(any(l.startswith("scope-profiler: [rank 1]") and "no answer from rank 0" in l
              for l in messages), "rank 1 does not say it waited for rank 0")
if phase == "counts":
    check(any("gathering counts" in l for l in messages), "the phase is not named")
if phase == "paths":
    check(any("summary" in l for l in messages), "the summary's phase is not named")
    check(any("the profile's file is written" in l for l in messages),
          "the message does not say where the data is")
    outputs.check_published(check, out)
else:
    check(any("keeps what it held" in l for l in messages),
          "the message does not say where the data is")
    outputs.check_kept(check, out)
check.finish()
