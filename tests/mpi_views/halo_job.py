"""halo_job.py - run halo.c (linked with the PMPI wrappers) under mpirun as
the tests of this folder do: as root with oversubscription, the output
named by SCOPE_PROFILER_FILE, no summary (tests/lib/mpi_job.py's
environment, launch line and time limit). Returns the file's path, or None
after printing why the job failed."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import mpi_job  # noqa: E402
import outputs  # noqa: E402


def run_halo(mpiexec, program, ranks, workdir, program_args=(), stderr_lines=None):
    outputs.fresh_workdir(workdir)
    out = os.path.join(workdir, "halo.h5")
    env = mpi_job.job_env(drop=("SCOPE_PROFILER_MPI", "SCOPE_PROFILER_MPI_FILTER",
                                "SCOPE_PROFILER_MPI_MAX_NAMES", "SCOPE_PROFILER_MPI_NAMES",
                                "LD_PRELOAD"),
                          SCOPE_PROFILER_FILE=out, SCOPE_PROFILER_SUMMARY="0")
    cmd = mpi_job.launch(mpiexec, ranks,
                         ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_SUMMARY", "ASAN_OPTIONS"),
                         [program, *program_args])
    run = mpi_job.run(cmd, workdir, env, what="the halo job")
    if run.returncode != 0 or not os.path.exists(out):
        print(f"FAIL: the halo job exited {run.returncode}, file written: {os.path.exists(out)}")
        return None
    if stderr_lines is not None:
        stderr_lines.extend(run.stderr.splitlines())
    return out


def expected_pairs(ranks, iterations=5, sendrecv_rounds=3, sendrecv_bytes=64):
    """(from, to) -> [bytes, messages, receives naming the sender], as halo.c sends;
    and (from, to, tag) -> message lengths of the isends, in order."""
    pairs, messages = {}, {}
    for r in range(ranks):
        right, left = (r + 1) % ranks, (r - 1) % ranks
        for peer, size, tag in ((right, (r + 1) * 1000, 1), (left, (r + 1) * 100, 2)):
            e = pairs.setdefault((r, peer), [0, 0, 0])
            e[0] += iterations * size
            e[1] += iterations
            e[2] += iterations  # the receiver's irecv names r as its source
            messages.setdefault((r, peer, tag), []).extend([size] * iterations)
        e = pairs.setdefault((r, (r + 2) % ranks), [0, 0, 0])
        e[0] += sendrecv_rounds * sendrecv_bytes
        e[1] += sendrecv_rounds  # sendrecv's receive side names no source: no receives
    return pairs, messages
