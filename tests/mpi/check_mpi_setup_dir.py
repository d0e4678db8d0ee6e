#!/usr/bin/python3
"""check_mpi_setup_dir.py MPIEXEC PROGRAM WORKDIR RANKS CASE: sp_setup on a
missing output directory under MPI (issue 30, mpi_setup_dir.c). Rank 0
checks the path, every rank gets its verdict at once: with rank 0's
directory missing every rank's sp_setup returns SP_ERR_OUTPUT (8), no
session starts (sp_finalize: SP_ERR_NOT_ACTIVE, 2), exactly one message
names the path, nothing is written and no rank waits for a timeout; with
only the other ranks' directories missing, rank 0 writes the one file and
every rank succeeds."""
import os
import shutil
import subprocess
import sys
import time

mpiexec, program, workdir, ranks, case = sys.argv[1:6]
ranks = int(ranks)
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
TIMEOUT = 30
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_MPI_TIMEOUT=str(TIMEOUT), SCOPE_PROFILER_SUMMARY="0")
for var in ("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_FILE", "SCOPE_PROFILER_DISABLE"):
    env.pop(var, None)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
cmd = [mpiexec, "--oversubscribe", "-np", str(ranks)]
if case == "others_missing":
    # The other ranks' paths name no file, but a bounded trace keeps its
    # spill file beside its own path: unbounded here, no spill to report.
    env["SCOPE_PROFILER_BUFFER_LIMIT"] = "0"
    cmd += ["-x", "SCOPE_PROFILER_BUFFER_LIMIT"]
cmd += [program, workdir, case]
start = time.monotonic()
try:
    run = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
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
lines = {int(l.split()[1]): l for l in run.stdout.splitlines() if l.startswith("rank ")}
check(sorted(lines) == list(range(ranks)), f"every rank reported: {sorted(lines)}")
# Well inside the timeout: no rank waited for another that had given up.
check(elapsed < TIMEOUT, f"the job took {elapsed:.1f} s, not less than the {TIMEOUT} s timeout")
said = [l for l in run.stderr.splitlines() if l.startswith("scope-profiler:")]
missing = os.path.join(workdir, "none", "run.h5")
if case == "others_missing":
    for r in range(ranks):
        check(f"rank {r} setup=0 active=1 finalize=0" in lines.get(r, ""),
              f"rank {r}: want setup SP_OK, a session and finalize SP_OK: {lines.get(r)}")
    check(said == [], f"no diagnostic: {said}")
    check(os.path.isfile(os.path.join(workdir, "run.h5")), "rank 0 wrote run.h5")
    report = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(report) == 1 and f"over {ranks} rank" in report[0],
          f"one report, the job's {ranks} ranks: {report}")
else:
    for r in range(ranks):
        check(f"rank {r} setup=8 active=0 finalize=2" in lines.get(r, ""),
              f"rank {r}: want setup SP_ERR_OUTPUT, no session, finalize SP_ERR_NOT_ACTIVE: "
              f"{lines.get(r)}")
    check(len(said) == 1, f"exactly one message (rank 0's), got {said}")
    check(bool(said) and missing in said[0] and "does not exist" in said[0]
          and "[rank" not in said[0], f"the message names the path {missing}: {said}")
    check("wrote" not in run.stdout and "NO file" not in run.stdout,
          "no finalize report: no session ran")
    check(os.listdir(workdir) == [], f"nothing written: {os.listdir(workdir)}")
sys.exit(1 if failures else 0)
