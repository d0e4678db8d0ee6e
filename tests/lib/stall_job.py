"""stall_job.py: a 3-rank job of tests/mpi/mpi_stall.c whose job rank 2
stops answering at one point of sp_finalize (fault injection,
SCOPE_PROFILER_TEST_STALL=2:PHASE:sleep), and what the checks of such a
job share: the environment with a short MPI timeout, running the job and
ending it when the launcher does not, and the verdict that ranks 0 and 1
came back from sp_finalize in time with the status wanted while rank 2
never did.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import os
import re
import subprocess

import mpi_job

TIMEOUT_S = 3  # SCOPE_PROFILER_MPI_TIMEOUT of the job
SLACK_S = 30  # a loaded 2-core machine; a hang is what these checks catch
RANKS = 3
ASLEEP = "2"

# What mpi_stall.c prints on a rank that came back from sp_finalize.
_CAME_BACK = re.compile(r"^rank (\d+) setup=(-?\d+) finalize=(-?\d+) seconds=([0-9.]+)$", re.M)


def stall_env(phase, **values):
    """The job's environment: Open MPI's settings, the timeout, rank 2
    asleep at `phase`, diagnostics on (SCOPE_PROFILER_QUIET removed), then
    `values` (which may replace any of these)."""
    settings = {"SCOPE_PROFILER_MPI_TIMEOUT": str(TIMEOUT_S),
                "SCOPE_PROFILER_TEST_STALL": f"{ASLEEP}:{phase}:sleep"}
    settings.update(values)
    return mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET",), **settings)


def run(mpiexec, program, out, env, limit_s=90):
    """Runs `program out` on RANKS ranks in out's directory; returns
    (stdout, stderr), both echoed. When the job has not ended after
    limit_s, its whole process group is killed: what the checks judge is
    that ranks 0 and 1 came back from sp_finalize (they print it), and
    ending a job with a rank asleep after MPI_Abort is Open MPI's business,
    which it is sometimes slow to do."""
    job = subprocess.Popen(mpi_job.launch(mpiexec, RANKS, (), [program, out]),
                           cwd=os.path.dirname(out), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, 9)
        stdout, stderr = job.communicate()
        print("note: the launcher did not end the job after MPI_Abort; killed")
    print(stdout, stderr)
    return stdout, stderr


def check_came_back(check, stdout, want, hang=""):
    """Checks that ranks 0 and 1 came back from sp_finalize with setup 0,
    finalize status `want` (a number, as text) and within the timeout plus
    slack, and that rank 2 did not come back. `hang` is added to the
    message of a rank that never came back."""
    lines = {m.group(1): m for m in _CAME_BACK.finditer(stdout)}
    for r in ("0", "1"):
        m = lines.get(r)
        check(m is not None, f"rank {r} never came back from sp_finalize{hang}")
        if m:
            check(m.group(2) == "0", f"rank {r}: setup {m.group(2)}")
            check(m.group(3) == want, f"rank {r}: finalize {m.group(3)}, want {want}")
            check(float(m.group(4)) < TIMEOUT_S + SLACK_S,
                  f"rank {r}: finalize took {m.group(4)} s, timeout {TIMEOUT_S} s")
    check(ASLEEP not in lines, f"rank {ASLEEP} should still be asleep")


def timeout_messages(stderr):
    """The diagnostics that name the timeout's variable."""
    return [line for line in stderr.splitlines() if "SCOPE_PROFILER_MPI_TIMEOUT" in line]


def check_waited(check, messages, also="", what="no message naming the timeout and the phase"):
    """Checks that a message says the wait ended after TIMEOUT_S (and
    contains `also`, when given)."""
    check(any(f"within {TIMEOUT_S} s while" in line and also in line for line in messages), what)
