#!/usr/bin/python3
"""check_many_metadata.py PROGRAM SCOPE_CHECK SCOPE_INSPECT WORKDIR: a file
the library writes with 20,000 metadata keys (many_metadata.c) is complete:
h5py reads every key with its value, the metadata group uses dense
attribute storage (the writer's fix for the quadratic compact storage,
issue 29 item 9), scope-check accepts the file and scope-inspect --json
prints the first, a middle and the last key. No time is asserted: the
ctest TIMEOUT and the tools' own read limit catch a quadratic cost."""
import os
import shutil
import subprocess
import sys

import h5py

program, check_tool, inspect, workdir = sys.argv[1:5]
COUNT = 20000
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
path = os.path.join(workdir, "many_metadata.h5")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


env = dict(os.environ, SCOPE_PROFILER_SUMMARY="0")
for key in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_MODE", "SCOPE_PROFILER_DISABLE"):
    env.pop(key, None)
run = subprocess.run([program, path, str(COUNT)], env=env, capture_output=True, text=True,
                     timeout=600)
check(run.returncode == 0 and run.stdout.strip() == "finalize 0",
      f"the program: exit {run.returncode}, {run.stdout!r} {run.stderr[-500:]}")
if not failures:
    with h5py.File(path, "r") as f:
        attrs = f["metadata"].attrs
        keys = [k for k in attrs.keys() if k.startswith("key_")]
        check(len(keys) == COUNT, f"{len(keys)} keys in /metadata, want {COUNT}")
        for i in (0, 12345, COUNT - 1):
            value = attrs.get(f"key_{i:05d}")
            if isinstance(value, bytes):
                value = value.decode()
            check(value == f"value {i}", f"key_{i:05d} = {value!r}")
        # dense storage: the group's attributes live in a fractal heap, not
        # in the object header (h5py exposes it through the low-level info)
        gcpl = f["metadata"].id.get_create_plist()
        check(gcpl.get_attr_phase_change() == (0, 0),
              f"attribute phase change {gcpl.get_attr_phase_change()}, want (0, 0): compact "
              "storage is quadratic")
    run = subprocess.run([check_tool, path], capture_output=True, text=True, timeout=600)
    check(run.returncode == 0, f"scope-check exit {run.returncode}: {run.stdout[-500:]} "
          f"{run.stderr[-500:]}")
    run = subprocess.run([inspect, "--json", path], capture_output=True, text=True, timeout=600)
    check(run.returncode == 0, f"scope-inspect exit {run.returncode}: {run.stderr[-500:]}")
    for i in (0, 12345, COUNT - 1):
        check(f'"key_{i:05d}": "value {i}"' in run.stdout, f"key_{i:05d} missing from the JSON")
sys.exit(1 if failures else 0)
