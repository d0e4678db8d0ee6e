#!/usr/bin/python3
"""check_mpi_missing.py MPIEXEC PROGRAM WORKDIR CASE: (bad-timeout: SCOPE_PROFILER_MPI_TIMEOUT=abc
is refused with one message a rank, the default used, the file written) a rank that never sets
up (or reaches finalize long after the others gave up): the others get
SP_ERR_MPI (18) and a message naming the timeout within seconds, no rank
hangs, no file is written and a previous file at the path is intact."""
import hashlib
import os
import shutil
import subprocess
import sys
import time

mpiexec, program, workdir, case = sys.argv[1:5]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
out = os.path.join(workdir, "job.h5")
with open(out, "wb") as f:
    f.write(b"previous contents")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_MPI_TIMEOUT="2", SCOPE_PROFILER_SUMMARY="0")
if case == "bad-timeout":
    # not a number of seconds: refused with a message, the default used
    env["SCOPE_PROFILER_MPI_TIMEOUT"] = "abc"
env.pop("SCOPE_PROFILER_QUIET", None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
start = time.monotonic()
command = [mpiexec, "--oversubscribe", "-np", "3", program, out, case]
if case == "mixed-modes":
    # rank 1 alone records in aggregate mode (one launch, three contexts)
    command = [mpiexec, "--oversubscribe", "-np", "1", program, out, case, ":",
               "-np", "1", "-x", "SCOPE_PROFILER_MODE=aggregate", program, out, case, ":",
               "-np", "1", program, out, case]
try:
    run = subprocess.run(command, cwd=workdir,
                         env=env, capture_output=True, text=True, timeout=90)
except subprocess.TimeoutExpired:
    print("FAIL: the job hung")
    sys.exit(1)
elapsed = time.monotonic() - start
print(run.stdout, run.stderr, f"elapsed {elapsed:.1f} s")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


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
    check(open(out, "rb").read() == b"previous contents", "the previous file changed")
    check(sorted(os.listdir(workdir)) == ["job.h5"], f"files: {os.listdir(workdir)}")
    sys.exit(1 if failures else 0)
elif case == "bad-timeout":
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=0" in lines.get(r, ""),
              f"rank {r}: want setup and finalize SP_OK: {lines.get(r)}")
    said = [l for l in run.stderr.splitlines()
            if "SCOPE_PROFILER_MPI_TIMEOUT=abc is not a positive number of seconds; using the "
               "default, 600 s" in l]
    check(len(said) == 3, f"want the refusal once on each rank, got {len(said)}")
    with open(out, "rb") as f:
        check(f.read(8) == b"\x89HDF\r\n\x1a\n", "the job's file was not written")
    check(sorted(os.listdir(workdir)) == ["job.h5"], f"files: {os.listdir(workdir)}")
    sys.exit(1 if failures else 0)
else:
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=18" in lines.get(r, ""),
              f"rank {r}: want setup SP_OK and finalize SP_ERR_MPI: {lines.get(r)}")
    check("not every rank of the communicator reached sp_finalize within 2 s" in run.stderr,
          "no message about the rank that did not reach finalize")
check(open(out, "rb").read() == b"previous contents", "the previous file changed")
check(sorted(os.listdir(workdir)) == ["job.h5"], f"files: {os.listdir(workdir)}")
sys.exit(1 if failures else 0)
