"""mpi_job.py: what the Python checks of MPI programs share: the
environment Open MPI needs in a container run as root, the launch line
(with the sanitizer runtime first in a preload list), running the job with
a time limit (checks.py keeps the list of failed checks).

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import os
import subprocess
import sys

# Open MPI refuses root without these, and its shared-memory transport's
# single-copy mechanism is not permitted in most containers.
OPEN_MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}


def job_env(drop=(), **values):
    """The current environment with Open MPI's settings, `drop` removed and
    `values` set. Leak detection is off: Open MPI keeps allocations from
    MPI_Init alive past exit by design."""
    env = dict(os.environ, **OPEN_MPI_ENV)
    for var in drop:
        env.pop(var, None)
    env.update(values)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    return env


def preload_list(program, library):
    """LD_PRELOAD's value for `library` under `program`: a sanitizer
    runtime the program links must come first in the list."""
    asan = subprocess.run(["sh", "-c", f"ldd {program} | awk '/libasan/ {{print $3}}'"],
                          capture_output=True, text=True).stdout.strip()
    return ":".join(p for p in (asan, library) if p)


def launch(mpiexec, ranks, forwarded, argv, preload=None):
    """The mpirun command line: `forwarded` variables passed to the ranks
    (-x), LD_PRELOAD for the ranks only (mpirun itself is not preloaded)."""
    cmd = [mpiexec, "--oversubscribe", "-np", str(ranks)]
    for var in forwarded:
        cmd += ["-x", var]
    if preload:
        cmd += ["-x", "LD_PRELOAD=" + preload_list(argv[0], preload)]
    return cmd + list(argv)


def run(cmd, workdir, env, timeout=150, what="the job"):
    """Runs cmd, echoes its output, and exits with a failure when it does
    not end within `timeout` seconds."""
    try:
        done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL: {what} did not end in {timeout} s")
        sys.exit(1)
    print(done.stdout)
    print(done.stderr, file=sys.stderr)
    return done

