#!/usr/bin/python3
"""check_mpi_summary.py --mpiexec M --program mpi_record --inspect scope-inspect
--ranks N --mode MODE --workdir DIR: the end-of-run summary of an MPI job, which
rank 0 now builds from the ranks' call paths pooled one rank at a time
(profile/path_pool.h, issue 27), must show what the job's file says.

The file is read back twice with scope-inspect: its table (built from the
calls themselves, rank by rank, by another route than finalize's pooled
paths) must equal the finalize table line for line (calls, per-rank
mean/min/max, imbalance, ranks); and its --json statistics give each
region's calls and ranks, which must equal the table's tree rows summed per
region. Modes of tests/mpi/mpi_record.c: "regions" (a rank that records
nothing, regions only some ranks run) and "bulk" (two threads on every
rank, ranks of different sizes)."""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--inspect", required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--mode", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
out = os.path.join(args.workdir, "job.h5")
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_MODE"),
                      SCOPE_PROFILER_SUMMARY="1", SCOPE_PROFILER_MPI_WRITER="funnel")
cmd = mpi_job.launch(args.mpiexec, args.ranks, (), [args.program, out, args.mode])
run = mpi_job.run(cmd, args.workdir, env)
check = checks.Checks("mpi summary")


def table(text):
    """The table's rows (box lines between the rules), cells split."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("│") and line.endswith("│"):
            rows.append(line)
    return rows


check(run.returncode == 0, f"mpirun exit code {run.returncode}")
check("summary:" not in run.stderr, "finalize reports a problem with the summary")
finalize_rows = table(run.stdout)
check(len(finalize_rows) > 2, "rank 0 printed a summary table")
inspect = subprocess.run([args.inspect, "--unicode", out], capture_output=True, text=True)
check(inspect.returncode == 0, f"scope-inspect exit code {inspect.returncode}: {inspect.stderr}")
file_rows = table(inspect.stdout)
check(finalize_rows == file_rows,
      "the finalize table differs from the file's:\n" + "\n".join(finalize_rows) + "\n---\n" +
      "\n".join(file_rows))

# Per region: the calls, ranks and total time the file's statistics give,
# against the table's tree rows (each region of these programs sits on one
# path). Row cells: name, calls, mean/rank, min/rank, max/rank, imbal, ranks.
stats = subprocess.run([args.inspect, "--json", "--flat", out], capture_output=True, text=True)
check(stats.returncode == 0, f"scope-inspect --json exit code {stats.returncode}")
regions = json.loads(stats.stdout).get("regions", [])
check(regions, "scope-inspect --json lists the regions")
in_table = {}
for row in finalize_rows[1:]:
    cells = row.strip("│").split()
    if "(own)" in cells:
        continue
    name, calls, mean, ranks = cells[-7], int(cells[-6]), float(cells[-5]), int(cells[-1])
    check(name not in in_table, f"{name} has one row")
    in_table[name] = (calls, ranks, mean * ranks)
for region in regions:
    name = region["name"]
    calls, ranks, total = in_table.get(name, (None, None, None))
    check(calls == region["num_calls"],
          f"{name}: {calls} calls in the summary, {region['num_calls']} in the file")
    check(ranks == region["num_ranks"],
          f"{name}: {ranks} ranks in the summary, {region['num_ranks']} in the file")
    # mean/rank is printed with 6 decimals: its sum over ranks is that close
    check(total is not None and abs(total - region["total_duration"]) <= 1e-6 * max(1, ranks or 1),
          f"{name}: total {total} s in the summary, {region['total_duration']} s in the file")
check(sorted(in_table) == sorted(r["name"] for r in regions),
      f"regions in the summary {sorted(in_table)}, in the file "
      f"{sorted(r['name'] for r in regions)}")
check.finish()
