#!/usr/bin/python3
"""check_chunk_writer.py PROGRAM WORKDIR: run chunk_writer_test.c and check
its three files with h5py (no plugin: HDF5's built-in filters only).

- threads1.h5 and threads4.h5 are equal in content: every dataset (values,
  dtype, shape, chunking, filters) and every attribute;
- their event columns equal the reference written by HDF5's own filter
  pipeline, and list exactly shuffle + deflate (level 1), chunks of 65,536;
- every stored chunk was stored with all filters applied (filter mask 0),
  and the random gpu_durations chunks are larger than raw, as HDF5 1.10
  stores a chunk deflate cannot shrink."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

program, workdir = sys.argv[1:3]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
run = subprocess.run([program, workdir], capture_output=True, text=True, timeout=120)
if run.returncode != 0:
    print(run.stdout, run.stderr)
    sys.exit(1)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def items(f):
    found = {}
    f.visititems(lambda name, obj: found.__setitem__(name, obj))
    return found


def same_attrs(a, b, where):
    check(sorted(a.attrs.keys()) == sorted(b.attrs.keys()), f"{where}: attribute names differ")
    for key in a.attrs.keys():
        if key in b.attrs:
            check(np.array_equal(np.asarray(a.attrs[key]), np.asarray(b.attrs[key])),
                  f"{where}: attribute {key} differs")


one = h5py.File(os.path.join(workdir, "threads1.h5"), "r")
four = h5py.File(os.path.join(workdir, "threads4.h5"), "r")
ref = h5py.File(os.path.join(workdir, "reference.h5"), "r")
a, b = items(one), items(four)
check(sorted(a) == sorted(b), f"objects differ: {sorted(set(a) ^ set(b))}")
same_attrs(one, four, "/")
for name, obj in a.items():
    other = b.get(name)
    if other is None:
        continue
    same_attrs(obj, other, name)
    if isinstance(obj, h5py.Dataset):
        check(obj.dtype == other.dtype and obj.shape == other.shape, f"{name}: type or shape differ")
        check(obj.chunks == other.chunks and obj._filters == other._filters, f"{name}: storage differs")
        check(np.array_equal(obj[()], other[()]), f"{name}: values differ between 1 and 4 threads")

columns = sorted(ref["events"].keys())
check(columns == sorted(one["events"].keys()), f"event columns {sorted(one['events'].keys())}")
for name in columns:
    for f, label in ((one, "1 thread"), (four, "4 threads")):
        d = f["events"][name]
        check(d.chunks == (65536,), f"{label} {name}: chunks {d.chunks}")
        check(d._filters == {"shuffle": (8,), "gzip": 1}, f"{label} {name}: filters {d._filters}")
        check(d.dtype == np.dtype("<i8"), f"{label} {name}: dtype {d.dtype}")
        check(np.array_equal(d[()], ref["events"][name][()]), f"{label} {name}: values differ from HDF5's")
        chunks = d.id.get_num_chunks()
        check(chunks == 3, f"{label} {name}: {chunks} chunks stored")
        for i in range(chunks):
            info = d.id.get_chunk_info(i)
            check(info.filter_mask == 0, f"{label} {name} chunk {i}: filter mask {info.filter_mask}")
            if name == "gpu_durations" and i < chunks - 1:  # the last is half zero padding
                check(info.size > 65536 * 8, f"{label} {name} chunk {i}: {info.size} bytes, "
                      "a random chunk must be stored deflated and larger, as HDF5 does")
thread_ids = one["events"]["thread_ids"][()]
check(bool((thread_ids == -1).all()), "missing thread ids not stored as -1")
print(f"{len(a)} objects compared; {len(columns)} event columns equal HDF5's pipeline")
sys.exit(1 if failures else 0)
