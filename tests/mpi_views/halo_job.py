"""halo_job.py - run halo.c (linked with the PMPI wrappers) under mpirun as
the tests of this folder do: as root with oversubscription, the output
named by SCOPE_PROFILER_FILE, no summary. Returns the file's path, or None
after printing why the job failed."""
import os
import shutil
import subprocess


def run_halo(mpiexec, program, ranks, workdir, program_args=(), stderr_lines=None):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    out = os.path.join(workdir, "halo.h5")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               SCOPE_PROFILER_FILE=out, SCOPE_PROFILER_SUMMARY="0")
    for var in ("SCOPE_PROFILER_MPI", "SCOPE_PROFILER_MPI_FILTER", "SCOPE_PROFILER_MPI_MAX_NAMES",
                "SCOPE_PROFILER_MPI_NAMES", "LD_PRELOAD"):
        env.pop(var, None)
    # Open MPI keeps allocations from MPI_Init alive past exit by design.
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    cmd = [mpiexec, "--oversubscribe", "-np", str(ranks)]
    for var in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_SUMMARY", "ASAN_OPTIONS"):
        cmd += ["-x", var]
    cmd.append(program)
    cmd.extend(program_args)
    try:
        run = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                             timeout=150)
    except subprocess.TimeoutExpired:
        print("FAIL: the halo job did not end in 150 s")
        return None
    if run.returncode != 0 or not os.path.exists(out):
        print(run.stdout, run.stderr)
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
