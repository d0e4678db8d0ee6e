#!/usr/bin/python3
"""check_mpi_missing.py MPIEXEC PROGRAM WORKDIR CASE: a rank that never sets
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
env.pop("SCOPE_PROFILER_QUIET", None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
start = time.monotonic()
try:
    run = subprocess.run([mpiexec, "--oversubscribe", "-np", "3", program, out, case], cwd=workdir,
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
else:
    for r in ("0", "1", "2"):
        check(f"rank {r} setup=0 finalize=18" in lines.get(r, ""),
              f"rank {r}: want setup SP_OK and finalize SP_ERR_MPI: {lines.get(r)}")
    check("not every rank of the communicator reached sp_finalize within 2 s" in run.stderr,
          "no message about the rank that did not reach finalize")
check(open(out, "rb").read() == b"previous contents", "the previous file changed")
check(sorted(os.listdir(workdir)) == ["job.h5"], f"files: {os.listdir(workdir)}")
sys.exit(1 if failures else 0)
