#!/usr/bin/python3
"""check_adopt.py: a program that calls sp_setup('mine.h5') after MPI_Init,
run with the PMPI wrappers (linked, or preloaded with --preload), which
started a session at MPI_Init already (issue 30). The program's setup must
take that session over: exit 0 on every rank, ONE file, mine.h5 (no
profiling_data.h5), holding every call of every rank: the barrier recorded
before the setup, the region "solve", the two allreduces inside it and the
barrier after; the program's label and language where it set them; no
"sp_setup called twice". Modes (pmpi_adopt.c, pmpi_adopt_f.F90):
plain, options (aggregate mode asked: stays a trace, one message on rank
0 saying so), missing (a first setup on a missing directory fails with one
message on rank 0 saying where the wrappers' session goes, the second
takes over), fortran (the Fortran program: label "adopted", language
"fortran")."""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--mode", required=True, choices=["plain", "options", "missing", "fortran"])
ap.add_argument("--program", required=True)
ap.add_argument("--preload", help="the library to LD_PRELOAD (else the program links it)")
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
# The program's own path must decide: SCOPE_PROFILER_FILE would override it.
env = mpi_job.job_env(drop=("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_MODE",
                            "SCOPE_PROFILER_LABEL", "SCOPE_PROFILER_DISABLE", "SCOPE_PROFILER_MPI",
                            "SCOPE_PROFILER_MPI_FILTER", "SCOPE_PROFILER_MPI_MAX_NAMES",
                            "LD_PRELOAD"),
                      SCOPE_PROFILER_SUMMARY="0")
cmd = mpi_job.launch(args.mpiexec, args.ranks, ("SCOPE_PROFILER_SUMMARY", "ASAN_OPTIONS"),
                     [args.program] + ([] if args.mode == "fortran" else [args.mode]),
                     preload=args.preload)
run = mpi_job.run(cmd, args.workdir, env)
check = checks.Checks("adopt")
failures = check.failures
finish = check.finish


check(run.returncode == 0, f"mpirun exit code {run.returncode}")
for r in range(args.ranks):
    check(f"pmpi_adopt: rank {r} ok" in run.stdout, f"rank {r}: every profiler call as expected")
files = sorted(f for f in os.listdir(args.workdir))
check(files == ["mine.h5"], f"the job writes mine.h5 only, it wrote {files}")
reports = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
check(len(reports) == 1 and "mine.h5" in reports[0], f"one report, naming mine.h5: {reports}")
said = [l for l in run.stderr.splitlines() if "scope-profiler:" in l]
check(not any("twice" in l or "already active" in l for l in said),
      f"no 'sp_setup called twice': {said}")
if args.mode == "options":
    check(len(said) == 1 and "[rank" not in said[0] and "mode trace (aggregate asked)" in said[0],
          f"one message, on rank 0, saying the trace mode stays: {said}")
elif args.mode == "missing":
    check(len(said) == 1 and "[rank" not in said[0] and "no_such_dir/mine.h5" in said[0]
          and "goes on unchanged and writes profiling_data.h5" in said[0],
          f"one message, on rank 0, naming the path and where the session goes: {said}")
else:
    check(said == [], f"nothing to say: {said}")
if failures:
    finish()

# (rank, what) -> calls; MPI regions by operation (the name's first word),
# whatever form the names take.
calls = {}
with h5py.File(os.path.join(args.workdir, "mine.h5"), "r") as f:
    names = list(f["region_table/names"].asstr()[()])
    idx = f["rank_region_index"]
    for rank, rid, n in zip(idx["ranks"][()], idx["region_ids"][()], idx["event_counts"][()]):
        m = re.match(r"mpi:(\w+)", names[rid])
        key = (int(rank), m[1] if m else names[rid])
        calls[key] = calls.get(key, 0) + int(n)
    meta = {k: (v.decode() if isinstance(v, bytes) else v.item() if hasattr(v, "item") else v)
            for k, v in f["metadata"].attrs.items()}
want = {}
for r in range(args.ranks):
    want.update({(r, "barrier"): 2, (r, "allreduce"): 2, (r, "solve"): 1})
check(calls == want, f"every call of every rank, before and after the setup: {calls} == {want}")
check(meta.get("mpi_size") == args.ranks, f"mpi_size {meta.get('mpi_size')} == {args.ranks}")
check(meta.get("mode", "trace") == "trace", f"the session's trace mode stays: {meta.get('mode')}")
if args.mode in ("options", "fortran"):
    check(meta.get("label") == "adopted", f"the program's label: {meta.get('label')!r}")
if args.mode == "fortran":
    check(meta.get("source_language") == "fortran",
          f"the program's language: {meta.get('source_language')!r}")
finish()
