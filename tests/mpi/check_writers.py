#!/usr/bin/python3
"""The two MPI writers give the same logical file; a failing rank stops both.

    check_writers.py same  --mpiexec M --ranks N --mode MODE --program P --workdir D [--check SCOPE_CHECK]
    check_writers.py fault --mpiexec M --ranks N --program P --workdir D
    check_writers.py full  --mpiexec M --ranks N --program P --workdir D
    check_writers.py private --mpiexec M --ranks N --program P --workdir D

"same": runs mpi_record twice on N ranks, once with SCOPE_PROFILER_MPI_WRITER=
funnel (every rank's calls through rank 0) and once with =parallel (every rank
writes its part through parallel HDF5), then compares the files with h5py:
datasets (names, types, shapes, chunking, filters), region table, the whole
index but its timings, call ids, parent ids and thread ids, the thread table
(ranks, indices, names), root attributes and metadata keys. Timestamps differ
between two runs; what can be compared of them is: deltas non-negative inside
a row, durations non-negative, and the same number of them everywhere.
scope-check (docs/FORMAT.md invariants) must accept both files.

"fault": a build with SCOPE_PROFILER_FAULT_INJECTION; rank 1 fails its part
(SCOPE_PROFILER_TEST_FAIL_RANK=1, mode bulk). Every rank must report the
error from sp_finalize, nobody hangs (timeout), the file that was at the path
before is intact and no temporary file is left.

"full": the same with a real failure: the output directory is a 128 KiB
tmpfs (root only: skipped otherwise) holding a previous file, too small for
the job's file (mode bulk: 280-330 KB on 3 ranks once the collective writer
deflates at level 5, so 256 KiB was sometimes enough). Every rank must get
an error, nobody hangs, the previous file stays, no temporary is left. (With
Open MPI's default OMPIO the collective writes do not report ENOSPC; rank
0's reopen or flush of the temporary does, and the ranks agree on it.)

"private": every rank writes a relative path from a folder of its own (as
node-local storage would give on several nodes). The collective writer must
notice that the ranks do not share the directory and leave the job to the
funnel: rank 0's folder gets one file with every rank, the others nothing.
"""
import argparse
import contextlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402
import small_fs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("what", choices=["same", "fault", "full", "private"])
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--mode", default="bulk")
ap.add_argument("--program", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--check", help="scope-check, run on both files")
args = ap.parse_args()

outputs.fresh_workdir(args.workdir)
check = checks.Checks(f"writers {args.what}")


def run(out, writer, extra=None, timeout=150):
    values = {"SCOPE_PROFILER_MPI_WRITER": writer, "SCOPE_PROFILER_QUIET": "1"}
    values.update(extra or {})
    env = mpi_job.job_env(**values)
    cmd = mpi_job.launch(args.mpiexec, args.ranks, (), [args.program, out, args.mode])
    # A hang is a failed check here, not the end of the script: the other
    # writer's run and the files left are still judged.
    try:
        done = subprocess.run(cmd, cwd=args.workdir, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, f"{writer}: no answer within {timeout} s (a rank hangs)")
        return None
    print(done.stdout)
    print(done.stderr, file=sys.stderr)
    return done


def datasets(f):
    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            found[name] = obj
    f.visititems(visit)
    return found


def compare(fun, par):
    a, b = datasets(fun), datasets(par)
    check(sorted(a) == sorted(b), f"same datasets: {sorted(set(a) ^ set(b))}")
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        check(x.dtype == y.dtype and x.shape == y.shape,
              f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
        check((x.chunks, x.compression, x.shuffle) == (y.chunks, y.compression, y.shuffle),
              f"{name}: storage {(x.chunks, x.compression, x.shuffle)} vs "
              f"{(y.chunks, y.compression, y.shuffle)}")
    check(dict(fun.attrs) == dict(par.attrs), "root attributes")
    check(sorted(fun["metadata"].attrs) == sorted(par["metadata"].attrs), "metadata keys")
    for key in ("mpi_size", "num_nodes"):
        if key in fun["metadata"].attrs:
            check(fun["metadata"].attrs[key] == par["metadata"].attrs.get(key), f"metadata {key}")
    same = ["region_table/names"]
    same += [f"rank_region_index/{c}" for c in ("region_ids", "ranks", "event_offsets",
             "event_counts", "source_lines", "source_files", "source_texts", "tags",
             "event_metadata")]
    same += [f"events/{c}" for c in ("call_ids", "parent_ids", "thread_ids")]
    same += [f"thread_table/{c}" for c in ("ranks", "index", "name")]
    for name in same:
        if name in a and name in b:
            check(np.array_equal(a[name][()], b[name][()]), f"{name} differs")
    stats_a, stats_b = a["rank_region_index/summary_statistics"][()], b["rank_region_index/summary_statistics"][()]
    check(np.array_equal(stats_a["gpu_count"], stats_b["gpu_count"]), "statistics: gpu counts")
    for f, label in ((fun, "funnel"), (par, "parallel")):
        offsets = f["rank_region_index/event_offsets"][()]
        counts = f["rank_region_index/event_counts"][()]
        deltas = f["events/start_deltas"][()]
        durations = f["events/durations"][()]
        check(bool((durations >= 0).all()), f"{label}: durations >= 0")
        for o, c in zip(offsets.astype(int), counts.astype(int)):
            if c:
                check(deltas[o] > 0 and bool((deltas[o + 1:o + c] >= 0).all()),
                      f"{label}: row at {o}: starts in order")
        # the statistics' totals are the rows' durations (written after streaming)
        for row, (o, c) in enumerate(zip(offsets.astype(int), counts.astype(int))):
            check(f["rank_region_index/summary_statistics"][row]["total"] ==
                  int(durations[o:o + c].sum()), f"{label}: row {row}: statistics total")


if args.what == "private":
    args.mode = "private"
    done = run("job.h5", "parallel")
    check(done is not None and done.returncode == 0, "mpirun succeeded")
    out = os.path.join(args.workdir, "rank0", "job.h5")
    check(os.path.exists(out), "rank 0's folder has the file")
    for r in range(1, args.ranks):
        left = os.listdir(os.path.join(args.workdir, f"rank{r}"))
        check(left == [], f"rank {r}'s folder is empty: {left}")
    if os.path.exists(out):
        with h5py.File(out) as f:
            ranks = sorted(set(int(x) for x in f["rank_region_index/ranks"][()]))
            check(ranks == list(range(args.ranks)), f"every rank in the file: {ranks}")
            counts = f["rank_region_index/event_counts"][()]
            want = sum((r + 1) * 70000 + 123 + (r + 1) * 1000 for r in range(args.ranks))
            check(int(counts.sum()) == want, f"every call: {int(counts.sum())} of {want}")
elif args.what == "same":
    files = {}
    for writer in ("funnel", "parallel"):
        out = os.path.join(args.workdir, f"{writer}.h5")
        done = run(out, writer)
        check(done is not None and done.returncode == 0, f"{writer}: mpirun succeeded")
        files[writer] = out
        if args.check and os.path.exists(out):
            c = subprocess.run([args.check, out], capture_output=True, text=True)
            check(c.returncode == 0, f"scope-check {writer}.h5: {c.stdout}{c.stderr}")
    if not check.failures:
        with h5py.File(files["funnel"]) as fun, h5py.File(files["parallel"]) as par:
            compare(fun, par)
    check(sorted(os.listdir(args.workdir)) == ["funnel.h5", "parallel.h5"],
          f"no stray files: {os.listdir(args.workdir)}")
else:
    if args.what == "full":
        where = small_fs.small_tmpfs("128k", where=os.path.join(args.workdir, "tmpfs"))
    else:
        where = contextlib.nullcontext(args.workdir)
    with where as folder:
        out = os.path.join(folder, "job.h5")
        with open(out, "wb") as f:
            f.write(b"the previous profile\n")
        extra = {"SCOPE_PROFILER_TEST_FAIL_RANK": "1"} if args.what == "fault" else {}
        done = run(out, "parallel", extra, timeout=120)
        if done is not None:
            check(done.returncode != 0, "mpirun reports the failure")
            for r in range(args.ranks):
                check(f"rank {r}: finalize failed" in done.stdout, f"rank {r} got an error")
            if args.what == "fault":
                check("injected failure of rank 1" in done.stdout, "rank 1 says why")
                check("rank 1 could not write its part" in done.stdout,
                      "the other ranks say who failed")
        with open(out, "rb") as f:
            check(f.read() == b"the previous profile\n", "the previous file is intact")
        check(os.listdir(folder) == ["job.h5"], f"no temporary left: {os.listdir(folder)}")

if check.failures:
    check.finish()
print("ok")
