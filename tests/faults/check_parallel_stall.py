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
import re
import shutil
import subprocess
import sys

mpiexec, program, workdir, phase = sys.argv[1:5]
TIMEOUT_S = 3
SLACK_S = 30  # a loaded 2-core machine; a hang is what this catches
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
out = os.path.join(workdir, "job.h5")
with open(out, "wb") as f:
    f.write(b"previous contents")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_MPI_TIMEOUT=str(TIMEOUT_S), SCOPE_PROFILER_MPI_WRITER="parallel",
           SCOPE_PROFILER_TEST_STALL=f"2:{phase}:sleep")
env.pop("SCOPE_PROFILER_QUIET", None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
job = subprocess.Popen([mpiexec, "--oversubscribe", "-np", "3", program, out], cwd=workdir,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       start_new_session=True)
try:
    stdout, stderr = job.communicate(timeout=90)
except subprocess.TimeoutExpired:
    # ranks 0 and 1 print when they came back from sp_finalize (checked
    # below); ending a job with a rank asleep is the launcher's business
    os.killpg(job.pid, 9)
    stdout, stderr = job.communicate()
    print("note: the launcher did not end the job after MPI_Abort; killed")
print(stdout, stderr)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


lines = {m.group(1): m for m in re.finditer(
    r"^rank (\d+) setup=(-?\d+) finalize=(-?\d+) seconds=([0-9.]+)$", stdout, re.M)}
for r in ("0", "1"):
    m = lines.get(r)
    check(m is not None, f"rank {r} never came back from sp_finalize (a hang in the writer)")
    if m:
        check(m.group(2) == "0", f"rank {r}: setup {m.group(2)}")
        check(m.group(3) == "18", f"rank {r}: finalize {m.group(3)}, want 18 (SP_ERR_MPI)")
        check(float(m.group(4)) < TIMEOUT_S + SLACK_S,
              f"rank {r}: finalize took {m.group(4)} s, timeout {TIMEOUT_S} s")
check("2" not in lines, "rank 2 should still be asleep")
messages = [l for l in stderr.splitlines() if "SCOPE_PROFILER_MPI_TIMEOUT" in l]
check(any(f"within {TIMEOUT_S} s while" in l and "job.h5" in l for l in messages),
      "no message naming the file, the timeout and the phase")
check(any("keeps what it held" in l for l in messages),
      "the message does not say where the data is")
check(open(out, "rb").read() == b"previous contents", "the previous file changed")
check(sorted(os.listdir(workdir)) == ["job.h5"], f"files left: {sorted(os.listdir(workdir))}")
sys.exit(1 if failures else 0)
