#!/usr/bin/python3
"""The guide's Fortran MPI program (docs/guide/fortran-mpi.md, "Fortran
with MPI, step by step"), extracted at configure time and built as written, run on 2 ranks:
one file named by the %j pattern, both ranks in it, source_language fortran.

    check_readme_example.py MPIEXEC PROGRAM WORKDIR

Exit 0 pass, 1 fail, 77 skip (no h5py).
"""
import os
import shutil
import subprocess
import sys

try:
    import h5py
except ImportError:
    print("h5py not available", file=sys.stderr)
    sys.exit(77)

mpiexec, program, work = sys.argv[1:4]
if os.path.isdir(work):
    shutil.rmtree(work)
os.makedirs(work)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_QUIET="1")
for name in ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID", "FLUX_JOB_ID",
             "SCOPE_PROFILER_FILE", "SCOPE_PROFILER_DISABLE"):
    env.pop(name, None)
env["SLURM_JOB_ID"] = "777"
# Open MPI's own allocations are never freed; under AddressSanitizer only
# the library's leaks matter, and the C-level MPI tests cover those (as
# check_mpi.py does, leak detection is off for the MPI runtime).
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
proc = subprocess.run([mpiexec, "--oversubscribe", "-np", "2", program], cwd=work, env=env,
                      capture_output=True, text=True, timeout=120)
failures = []
if proc.returncode != 0:
    failures.append(f"exit {proc.returncode}: {proc.stdout} {proc.stderr}")
files = sorted(os.listdir(work))
if files != ["run-777.h5"]:
    failures.append(f"files {files}, expected ['run-777.h5'] (one file for the job, %j expanded)")
else:
    with h5py.File(os.path.join(work, "run-777.h5"), "r") as f:
        meta = f["metadata"].attrs
        ranks = sorted(set(int(r) for r in f["rank_region_index/ranks"][:]))
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        if ranks != [0, 1]:
            failures.append(f"ranks {ranks}")
        if names != ["solve"]:
            failures.append(f"regions {names}")
        lang = meta.get("source_language")
        lang = lang.decode() if isinstance(lang, bytes) else lang
        if lang != "fortran" or int(meta.get("mpi_size")) != 2:
            failures.append(f"metadata source_language {lang!r}, mpi_size {meta.get('mpi_size')}")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
if not failures:
    print("ok: the guide's program wrote run-777.h5 with ranks 0 and 1")
sys.exit(1 if failures else 0)
