#!/usr/bin/python3
"""check_large_valid.py SCOPE_INSPECT SOURCE_FILE WORKDIR CASE: a valid file
with very many metadata keys (CASE metadata) or perf regions (CASE perf) is
read, not refused as damaged (issue 29 item 9). Each used to take a time
quadratic in the count (HDF5 lookups by index, each sorting the group), so
20,000 ran past the tools' read limit and every tool exited 2. No time is asserted here: the
ctest TIMEOUT of this entry catches a return of the quadratic cost.

The file is SOURCE_FILE (a real profile with rank0/perf_events) with the
extra keys or regions added by h5py, laid out as the writers lay them out
(/metadata attributes; rank0/perf_events/<region> groups with a calls and
an event_names attribute and a values dataset)."""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

inspect, source, workdir, case = sys.argv[1:5]
# 20,000 perf regions (issue 29's case). Metadata: 8,000 keys. HDF5 stores
# h5py's (and our writer's) attributes in the object header ("compact"),
# where opening one by name walks the header from its start, so even one
# pass over the names costs a walk of n^2/2 header messages inside HDF5
# (about 0.2 s of CPU at 8,000 keys, 4 s at 20,000). The reader used to add
# a sorted copy of every attribute per key on top (minutes at 8,000).
COUNT = 20000 if case == "perf" else 8000
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
path = os.path.join(workdir, f"many_{case}.h5")
shutil.copyfile(source, path)
STR = h5py.string_dtype()
with h5py.File(path, "a") as f:
    if case == "metadata":
        meta = f["metadata"]
        for i in range(COUNT):
            meta.attrs[f"key_{i:05d}"] = f"value {i}" if i % 2 else np.int64(i)
    else:
        perf = f["rank0/perf_events"]
        names = np.array(["task-clock", "page-faults"], dtype=object)
        for i in range(COUNT):
            g = perf.create_group(f"region_{i:05d}")
            g.attrs["calls"] = np.int64(i + 1)
            g.attrs.create("event_names", names, dtype=STR)
            g["values"] = np.array([i, 2 * i], dtype=np.uint64)

run = subprocess.run([inspect, "--json", path], capture_output=True, text=True, timeout=600)
print(run.stderr[-2000:])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


check(run.returncode == 0, f"scope-inspect exit {run.returncode}: {run.stderr[-500:]}")
if case == "metadata":
    # first, last and a middle key with their values, as stored
    last = f"key_{COUNT - 1:05d}"
    for key, value in (("key_00000", "0"), (last, f'"value {COUNT - 1}"'),
                       ("key_04001", '"value 4001"')):
        check(f'"{key}": {value}' in run.stdout, f"{key} missing from the JSON")
else:
    check(f"region_{COUNT - 1:05d}" in run.stdout and "region_00000" in run.stdout,
          "the perf regions are missing from the JSON")
sys.exit(1 if failures else 0)
