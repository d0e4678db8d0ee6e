#!/usr/bin/python3
"""merge_parallel_test.py - `mpirun -np N scope-merge --mpi ...` (merge/src/
merge_parts.c): the output's ranks split over N processes, each writing a
part file, process 0 assembling them (every chunk inside one part copied as
stored, the chunks across part boundaries decoded and encoded again).

Inputs: a 4-rank native job file (mpi_record bulk: ranks of different
sizes, chunks shared by ranks, a second thread) and a driver file written
here whose calls enclose every native "step" call of each rank (py:main >
py:step), the driver first.

Checks, for N = 2 and 3: the output holds exactly what the merge alone
writes (tests/lib/h5_compare.py, every dataset and attribute), scope-check
accepts it, and no part file is left; the same for three inputs (one a
job whose rank 1 recorded nothing) on 5 processes, more than the ranks. Then a native input damaged on rank 3
only (one negative duration: only the process that sweeps rank 3 sees it):
every process fails, the exit status and the message are the merge alone's
(naming the file), no output and no part file is left.

    merge_parallel_test.py --mpiexec BIN --record BIN --merge BIN --check BIN --workdir DIR

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import needs  # noqa: E402
from checks import Checks  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402  (needs.h5py() checked it is there)
import h5_calls  # noqa: E402
import h5_compare  # noqa: E402
import mpi_job  # noqa: E402
from h5_schema import STATS, STR  # noqa: E402

ARGS = None
RANKS = 4


def write_driver(native, path):
    """Per rank: py:main around all of the rank's "step" calls (id 0) and
    one py:step on each of them (ids 1.., parent 0)."""
    rows = []  # (region, rank, starts, durations, ids, parents)
    for rank in range(RANKS):
        starts, durs = h5_calls.region_calls(native, "step", rank)
        order = np.argsort(starts, kind="stable")
        starts, durs = starts[order], durs[order]
        lo, hi = int(starts.min()) - 10, int((starts + durs).max()) + 10
        n = len(starts)
        rows.append((0, rank, np.array([lo], np.int64), np.array([hi - lo], np.int64),
                     np.zeros(1, np.int64), np.full(1, -1, np.int64)))
        rows.append((1, rank, starts, durs, np.arange(1, n + 1, dtype=np.int64),
                     np.zeros(n, np.int64)))
    columns = {"start_deltas": [], "durations": [], "call_ids": [], "parent_ids": []}
    stats = np.zeros(len(rows), STATS)
    for k, (_, _, starts, durs, ids, parents) in enumerate(rows):
        deltas = np.empty(len(starts), np.int64)
        deltas[0] = starts[0]
        deltas[1:] = np.diff(starts)
        columns["start_deltas"].append(deltas)
        columns["durations"].append(durs)
        columns["call_ids"].append(ids)
        columns["parent_ids"].append(parents)
        n = len(durs)
        stats[k] = (durs.sum(), durs.min(), durs.max(), durs[0], durs[-1], starts.min(),
                    (starts + durs).max(), 0, 0, durs.mean(), durs.var() * n)
    counts = np.array([len(r[2]) for r in rows], np.uint64)
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        meta = f.create_group("metadata")
        meta.attrs["label"] = "parallel-merge-driver"
        meta.attrs["source"] = "python"
        f["region_table/names"] = np.array(["py:main", "py:step"], dtype=object).astype(STR)
        ev = f.create_group("events")
        for name, parts in columns.items():
            ev.create_dataset(name, data=np.concatenate(parts), chunks=(65536,), shuffle=True,
                              compression="gzip", compression_opts=4)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([r[0] for r in rows], np.uint32)
        idx["ranks"] = np.array([r[1] for r in rows], np.uint32)
        idx["event_offsets"] = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.uint64)
        idx["event_counts"] = counts
        idx["source_lines"] = np.full(len(rows), -1, np.int64)
        idx["exclusive_totals"] = np.full(len(rows), -1, np.int64)
        for col, fill in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                          ("event_metadata", "[]")):
            idx[col] = np.array([fill] * len(rows), dtype=object).astype(STR)
        idx["summary_statistics"] = stats


def damage_rank(native, path, rank):
    """A copy of native with the duration of the first call of `rank`'s
    "leaf" row negative."""
    shutil.copyfile(native, path)
    with h5py.File(path, "r+") as f:
        names = [h5_calls.utf8(n) for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        for r in range(len(idx["ranks"])):
            if idx["ranks"][r] == rank and names[idx["region_ids"][r]] == "leaf":
                at = int(idx["event_offsets"][r])
                f["events/durations"][at] = -5
                return
    raise KeyError("no leaf row on rank %d" % rank)


def parts_left(out):
    return glob.glob(out + ".part*")


def merge_serial(inputs, out):
    return subprocess.run([ARGS.merge, *inputs, "-o", out, "--quiet"], capture_output=True,
                          text=True, env=mpi_job.job_env(), timeout=300)


def merge_group(n, inputs, out):
    cmd = mpi_job.launch(ARGS.mpiexec, n, [], [ARGS.merge, "--mpi", *inputs, "-o", out,
                                                "--quiet"])
    return mpi_job.run(cmd, ARGS.workdir, mpi_job.job_env(), timeout=300,
                       what=f"scope-merge on {n} processes")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("--mpiexec", "--record", "--merge", "--check", "--workdir"):
        ap.add_argument(a, required=True)
    ARGS = ap.parse_args()
    shutil.rmtree(ARGS.workdir, ignore_errors=True)
    os.makedirs(ARGS.workdir)
    c = Checks("merge_parallel")
    w = lambda name: os.path.join(ARGS.workdir, name)  # noqa: E731
    native, driver = w("native.h5"), w("driver.h5")
    job = mpi_job.run(mpi_job.launch(ARGS.mpiexec, RANKS, [], [ARGS.record, native, "bulk"]),
                      ARGS.workdir, mpi_job.job_env(), what="mpi_record")
    if job.returncode != 0 or not os.path.exists(native):
        c.fail("mpi_record wrote no job file")
        return c.finish()
    write_driver(native, driver)
    serial = w("serial.h5")
    done = merge_serial([driver, native], serial)
    c(done.returncode == 0, f"the merge alone succeeds ({done.stderr.strip()})")
    for n in (2, 3):
        out = w(f"group{n}.h5")
        done = merge_group(n, [driver, native], out)
        c(done.returncode == 0, f"-np {n}: the merge succeeds")
        if done.returncode != 0 or not os.path.exists(out):
            continue
        diffs = h5_compare.differences(serial, out)
        c(not diffs, f"-np {n}: the output equals the merge alone's: {diffs[:5]}")
        check = subprocess.run([ARGS.check, out], capture_output=True, text=True)
        c(check.returncode == 0, f"-np {n}: scope-check accepts the output ({check.stdout[-300:]})")
        c(not parts_left(out), f"-np {n}: no part file left: {parts_left(out)}")
    # Three inputs, one whose rank 1 recorded nothing, and more processes
    # than ranks (blocks without ranks write no part).
    regions = w("regions.h5")
    mpi_job.run(mpi_job.launch(ARGS.mpiexec, RANKS, [], [ARGS.record, regions, "regions"]),
                ARGS.workdir, mpi_job.job_env(), what="mpi_record regions")
    three = [regions, native, driver]
    alone3 = w("three-serial.h5")
    done = subprocess.run([ARGS.merge, *three, "-o", alone3, "--quiet", "--allow-disjoint"],
                          capture_output=True, text=True, env=mpi_job.job_env(), timeout=300)
    c(done.returncode == 0, f"three inputs: the merge alone succeeds ({done.stderr.strip()})")
    out = w("three5.h5")
    cmd = mpi_job.launch(ARGS.mpiexec, 5, [], [ARGS.merge, "--mpi", *three, "-o", out, "--quiet",
                                               "--allow-disjoint"])
    done = mpi_job.run(cmd, ARGS.workdir, mpi_job.job_env(), timeout=300, what="-np 5")
    c(done.returncode == 0 and os.path.exists(out), "three inputs, -np 5: the merge succeeds")
    if os.path.exists(out) and os.path.exists(alone3):
        diffs = h5_compare.differences(alone3, out)
        c(not diffs, f"three inputs, -np 5: the output equals the merge alone's: {diffs[:5]}")
    c(not parts_left(out), f"three inputs, -np 5: no part file left: {parts_left(out)}")
    # A damage only the process that sweeps rank 3 sees.
    bad = w("native-bad.h5")
    damage_rank(native, bad, 3)
    alone = merge_serial([driver, bad], w("bad-serial.h5"))
    c(alone.returncode == 2 and "native-bad.h5" in alone.stderr,
      f"the merge alone refuses the damaged input (exit {alone.returncode}: {alone.stderr.strip()})")
    for n in (2, 3):
        out = w(f"bad{n}.h5")
        done = merge_group(n, [driver, bad], out)
        c(done.returncode != 0, f"-np {n}: the damaged input fails the merge")
        c(alone.stderr.strip() in done.stderr, f"-np {n}: the merge alone's message is given "
          f"({done.stderr.strip()[-400:]})")
        c(not os.path.exists(out), f"-np {n}: no output")
        c(not parts_left(out), f"-np {n}: no part file left: {parts_left(out)}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())
