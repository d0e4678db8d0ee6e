#!/usr/bin/python3
"""check_write_threads.py PROBE SCOPE_CHECK SCOPE_INSPECT SCOPE_MERGE WORKDIR MODE

MODE "roundtrip": recorded runs (write_threads_probe.c) finalized with 4
write threads, in memory and through the spill path (a 1 MiB buffer limit
that flushes): scope-check and scope-inspect accept them, the event
columns list shuffle + deflate; two of them merged by scope-merge with 1
and with 4 write threads give files equal in every dataset and attribute.

MODE "faults": H5Dwrite_chunk, the compressor and its allocation fail in
turn, with 1 and with 4 write threads: sp_finalize reports it (the
message names the output), the previous file is intact, no temporary is
left, the process is not killed and has no thread left (every writer
thread joined)."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

probe, check_tool, inspect_tool, merge_tool, workdir, mode = sys.argv[1:7]
CALLS = 200000
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def environment(threads, **extra):
    env = dict(os.environ, SCOPE_PROFILER_SUMMARY="0", SCOPE_PROFILER_WRITE_THREADS=str(threads))
    for key in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_MODE", "SCOPE_PROFILER_DISABLE",
                "SCOPE_PROFILER_BUFFER_LIMIT", "SCOPE_PROFILER_QUIET"):
        env.pop(key, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def record(out, threads, **extra):
    run = subprocess.run([probe, out, str(CALLS)], cwd=os.path.dirname(out),
                         env=environment(threads, **extra), capture_output=True, text=True,
                         timeout=120)
    fields = dict(item.split("=") for item in run.stdout.split() if "=" in item)
    return run, fields


def items(f):
    found = {}
    f.visititems(lambda name, obj: found.__setitem__(name, obj))
    return found


def same_content(path_a, path_b, label):
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        ia, ib = items(a), items(b)
        check(sorted(ia) == sorted(ib), f"{label}: objects differ {sorted(set(ia) ^ set(ib))}")
        for name, obj in [("/", a)] + sorted(ia.items()):
            other = b if name == "/" else ib.get(name)
            if other is None:
                continue
            check(sorted(obj.attrs.keys()) == sorted(other.attrs.keys()), f"{label} {name}: attributes")
            for key in obj.attrs.keys():
                if key in other.attrs:
                    check(np.array_equal(np.asarray(obj.attrs[key]), np.asarray(other.attrs[key])),
                          f"{label} {name}: attribute {key} differs")
            if isinstance(obj, h5py.Dataset):
                check(obj.dtype == other.dtype and obj.shape == other.shape, f"{label} {name}: type/shape")
                check(obj._filters == other._filters, f"{label} {name}: filters differ")
                check(np.array_equal(obj[()], other[()]), f"{label} {name}: values differ")
        return len(ia)


def roundtrip():
    paths = []
    for label, extra in (("memory", {}), ("memory2", {}),
                         ("spilled", {"SCOPE_PROFILER_BUFFER_LIMIT": "1M"})):
        out = os.path.join(workdir, f"{label}.h5")
        run, fields = record(out, 4, **extra)
        check(run.returncode == 0 and fields.get("status") == "0",
              f"{label}: exit {run.returncode} {run.stdout} {run.stderr[-500:]}")
        check(fields.get("threads") == "1", f"{label}: threads left after finalize: {fields}")
        checked = subprocess.run([check_tool, out], capture_output=True, text=True, timeout=120)
        check(checked.returncode == 0, f"{label}: scope-check: {checked.stdout[-500:]}{checked.stderr[-500:]}")
        shown = subprocess.run([inspect_tool, out], capture_output=True, text=True, timeout=120)
        check(shown.returncode == 0 and f"{CALLS} calls" in shown.stdout,
              f"{label}: scope-inspect: {shown.stdout[:300]}{shown.stderr[-300:]}")
        with h5py.File(out, "r") as f:
            for name, d in f["events"].items():
                check(d._filters == {"shuffle": (8,), "gzip": 1}, f"{label} {name}: {d._filters}")
                check(d.id.get_num_chunks() >= 3, f"{label} {name}: {d.id.get_num_chunks()} chunks")
        paths.append(out)
    merged = []
    for threads in (1, 4):
        out = os.path.join(workdir, f"merged{threads}.h5")
        run = subprocess.run([merge_tool, paths[0], paths[1], "-o", out, "--prefix", "1=first.",
                              "--prefix", "2=second.", "--allow-disjoint", "--quiet"],
                             env=environment(threads), capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, f"scope-merge with {threads} threads: {run.stderr[-500:]}")
        merged.append(out)
    if not failures:
        count = same_content(merged[0], merged[1], "merged with 1 vs 4 threads")
        print(f"merged files equal in {count} objects")


def faults():
    previous = b"previous contents"
    cases = [("PROBE_FAIL_CHUNK_AT", n) for n in (1, 2, 9)] + \
            [("PROBE_FAIL_COMPRESS_AT", n) for n in (1, 6)] + \
            [("PROBE_FAIL_COMPRESSOR_AT", n) for n in (1, 2)]
    for threads in (1, 4):
        for variable, at in cases:
            if variable == "PROBE_FAIL_COMPRESSOR_AT" and at > threads:
                continue
            where = f"{variable}={at}, {threads} write threads"
            case = os.path.join(workdir, f"{variable}_{at}_{threads}")
            shutil.rmtree(case, ignore_errors=True)
            os.makedirs(case)
            out = os.path.join(case, "out.h5")
            with open(out, "wb") as f:
                f.write(previous)
            run, fields = record(out, threads, **{variable: at})
            check(run.returncode == 0, f"{where}: exit {run.returncode}: {run.stderr[-500:]}")
            check(fields.get("status") not in (None, "0"), f"{where}: not reported: {fields}")
            check("out.h5" in run.stderr, f"{where}: message does not name the file: {run.stderr[-300:]}")
            check(fields.get("threads") == "1", f"{where}: threads left: {fields}")
            check(sorted(os.listdir(case)) == ["out.h5"], f"{where}: files left {os.listdir(case)}")
            with open(out, "rb") as f:
                check(f.read() == previous, f"{where}: the previous file changed")
    print(f"{len(cases)} faults checked with 1 and 4 write threads")


shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
roundtrip() if mode == "roundtrip" else faults()
sys.exit(1 if failures else 0)
