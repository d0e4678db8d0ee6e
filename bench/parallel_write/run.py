#!/usr/bin/python3
"""The collective writer's event columns: bytes and write time per deflate level.

    run.py --mpiexec mpiexec --ranks 2,4 --scale 8 --rounds 3 \
           L1=/path/parallel_columns_test_level1 L5=/path/parallel_columns_test ...

Each LABEL=PROGRAM is a build of tests/unit/parallel_columns_test (the level is
h5_parallel_writer.c's PARALLEL_DEFLATE_LEVEL, a compile-time constant, so
compare builds). Every round runs every (ranks, program) pair once,
interleaved, in a fresh directory, and records:
  - the parallel write: the slowest rank's wall time, the ranks' CPU time
    summed (the program prints both per rank);
  - the streaming writer on the same calls (every rank writes its own file
    alone, one after the other in the program: the same data through
    libdeflate level 2 + H5Dwrite_chunk), wall of the slowest rank, CPU summed;
  - bytes of job.h5 and of its event columns, against the rank files' event
    columns together.
Prints medians and ranges over the rounds, and the load average before and
after. Needs h5py.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile

import h5py

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--ranks", default="2,4")
ap.add_argument("--scale", type=int, default=8)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("programs", nargs="+", help="LABEL=PROGRAM")
args = ap.parse_args()

programs = [p.split("=", 1) for p in args.programs]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none",
           OMPI_MCA_rmaps_base_oversubscribe="1")
LINE = re.compile(r"rank (\d+): (\d+) calls: parallel ([\d.]+) s wall ([\d.]+) s cpu, "
                  r"serial ([\d.]+) s wall ([\d.]+) s cpu")


def event_bytes(path):
    with h5py.File(path) as f:
        total = 0
        for d in f["events"].values():
            if d.chunks:
                total += sum(d.id.get_chunk_info(i).size for i in range(d.id.get_num_chunks()))
            else:
                total += d.id.get_storage_size()
        return total


def one_run(ranks, program):
    work = tempfile.mkdtemp(prefix="parallel_write_")
    try:
        done = subprocess.run([args.mpiexec, "--oversubscribe", "-np", str(ranks), program, work,
                               str(args.scale)], env=env, capture_output=True, text=True,
                              timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"{program} failed:\n{done.stdout}{done.stderr}")
        rows = [LINE.match(line) for line in done.stdout.splitlines()]
        rows = [r for r in rows if r]
        calls = sum(int(r.group(2)) for r in rows)
        job = os.path.join(work, "job.h5")
        serial = sum(event_bytes(os.path.join(work, f"rank{r}.h5")) for r in range(ranks))
        return dict(calls=calls,
                    par_wall=max(float(r.group(3)) for r in rows),
                    par_cpu=sum(float(r.group(4)) for r in rows),
                    ser_wall=max(float(r.group(5)) for r in rows),
                    ser_cpu=sum(float(r.group(6)) for r in rows),
                    job_bytes=os.path.getsize(job), job_events=event_bytes(job),
                    serial_events=serial)
    finally:
        shutil.rmtree(work, ignore_errors=True)


print("load before:", os.getloadavg())
results = {}
for _ in range(args.rounds):
    for ranks in (int(r) for r in args.ranks.split(",")):
        for label, program in programs:
            results.setdefault((ranks, label), []).append(one_run(ranks, program))
print("load after:", os.getloadavg())


def spread(values, digits=3):
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


print(f"| ranks | build | calls | parallel wall s | parallel CPU s | streaming wall s | "
      f"streaming CPU s | job.h5 bytes | event bytes | vs streaming |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (ranks, label), runs in results.items():
    first = runs[0]
    print(f"| {ranks} | {label} | {first['calls']} | {spread([r['par_wall'] for r in runs])} | "
          f"{spread([r['par_cpu'] for r in runs])} | {spread([r['ser_wall'] for r in runs])} | "
          f"{spread([r['ser_cpu'] for r in runs])} | {first['job_bytes']} | "
          f"{first['job_events']} | {first['job_events'] / first['serial_events']:.3f}x |")
