#!/usr/bin/python3
"""check_parallel_stall.py MPIEXEC PROGRAM WORKDIR PHASE: the collective
(parallel-HDF5) writer with job rank 2 of 3 asleep at PHASE (fault
injection, SCOPE_PROFILER_TEST_STALL=2:PHASE:sleep; PHASE is one of the
writer's points: parallel-open, parallel-layout, parallel-events,
parallel-close). Ranks 0 and 1 must come back from sp_finalize within the
timeout plus slack with SP_ERR_MPI and a message naming the file, the phase
and SCOPE_PROFILER_MPI_TIMEOUT, instead of hanging inside a collective HDF5
call (issue 29, "a deadline in every phase"); the previous file stays intact
and no temporary is left. PROGRAM is tests/mpi/mpi_stall.c."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import outputs  # noqa: E402
import stall_job  # noqa: E402

mpiexec, program, workdir, phase = sys.argv[1:5]
out = outputs.with_previous(workdir)
env = stall_job.stall_env(phase, SCOPE_PROFILER_MPI_WRITER="parallel")
stdout, stderr = stall_job.run(mpiexec, program, out, env)
check = checks.Checks("parallel writer stall")
stall_job.check_came_back(check, stdout, "18", " (a hang in the writer)")  # SP_ERR_MPI
messages = stall_job.timeout_messages(stderr)
stall_job.check_waited(check, messages, "job.h5",
                       "no message naming the file, the timeout and the phase")
check(any("keeps what it held" in l for l in messages),
      "the message does not say where the data is")
outputs.check_kept(check, out)
check.finish()
