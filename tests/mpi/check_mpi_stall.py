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
           SCOPE_PROFILER_MPI_TIMEOUT=str(TIMEOUT_S), SCOPE_PROFILER_SUMMARY="1",
           SCOPE_PROFILER_MPI_WRITER="funnel",
           SCOPE_PROFILER_TEST_STALL=f"2:{phase}:sleep")
if phase == "paths-oom":
    # rank 0's allocations for the summary's gather fail: the table is flat
    # and says so, the file and every rank's finalize are not affected
    env["SCOPE_PROFILER_TEST_STALL"] = "0:paths:fail"
env.pop("SCOPE_PROFILER_QUIET", None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
job = subprocess.Popen([mpiexec, "--oversubscribe", "-np", "3", program, out], cwd=workdir,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       start_new_session=True)
try:
    stdout, stderr = job.communicate(timeout=90)
except subprocess.TimeoutExpired:
    # What matters is that ranks 0 and 1 came back from sp_finalize (they
    # print how long it took, checked below). The launcher ending the job
    # after MPI_Abort with a rank asleep is Open MPI's business, and it is
    # sometimes slow to do it: the whole group is ended here instead.
    os.killpg(job.pid, 9)
    stdout, stderr = job.communicate()
    print("note: the launcher did not end the job after MPI_Abort; killed")
print(stdout, stderr)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


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
    with open(out, "rb") as f:
        check(f.read(8) == b"\x89HDF\r\n\x1a\n", "the job's file was not published")
    check(sorted(os.listdir(workdir)) == ["job.h5"], f"files left: {sorted(os.listdir(workdir))}")
    sys.exit(1 if failures else 0)
lines = {m.group(1): m for m in re.finditer(
    r"^rank (\d+) setup=(-?\d+) finalize=(-?\d+) seconds=([0-9.]+)$", stdout, re.M)}
want = "0" if phase == "paths" else "18"  # SP_OK / SP_ERR_MPI
for r in ("0", "1"):
    m = lines.get(r)
    check(m is not None, f"rank {r} never came back from sp_finalize")
    if m:
        check(m.group(2) == "0", f"rank {r}: setup {m.group(2)}")
        check(m.group(3) == want, f"rank {r}: finalize {m.group(3)}, want {want}")
        check(float(m.group(4)) < TIMEOUT_S + SLACK_S,
              f"rank {r}: finalize took {m.group(4)} s, timeout {TIMEOUT_S} s")
check("2" not in lines, "rank 2 should still be asleep")
messages = [l for l in stderr.splitlines() if "SCOPE_PROFILER_MPI_TIMEOUT" in l]
check(any(f"within {TIMEOUT_S} s while" in l for l in messages),
      "no message naming the timeout and the phase")
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
    with open(out, "rb") as f:
        check(f.read(8) == b"\x89HDF\r\n\x1a\n", "the job's file was not published")
else:
    check(any("keeps what it held" in l for l in messages),
          "the message does not say where the data is")
    check(open(out, "rb").read() == b"previous contents", "the previous file changed")
check(sorted(os.listdir(workdir)) == ["job.h5"], f"files left: {sorted(os.listdir(workdir))}")
sys.exit(1 if failures else 0)
