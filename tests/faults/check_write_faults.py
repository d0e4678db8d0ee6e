#!/usr/bin/python3
"""check_write_faults.py PROGRAM WORKDIR: fail the N-th HDF5 call of the
write path (write_faults.c) for N = 1, 2, ... until the failure is no
longer reached, and check every run: the program was not killed (no crash,
no abort), sp_finalize reported the failure (or succeeded when the failed
call did not matter, and then the file is complete), the previous file at
the output path is intact when the write failed, and no temporary is left
beside it."""
import os
import shutil
import subprocess
import sys

import h5py

program, workdir = sys.argv[1:3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


PREVIOUS = b"previous contents"
env = dict(os.environ, SCOPE_PROFILER_QUIET="1", SCOPE_PROFILER_SUMMARY="0")
for key in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_MODE", "SCOPE_PROFILER_DISABLE"):
    env.pop(key, None)
failed_runs = 0
for n in range(1, 400):
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    out = os.path.join(workdir, "out.h5")
    with open(out, "wb") as f:
        f.write(PREVIOUS)
    env["SCOPE_PROFILER_TEST_H5_FAIL_AT"] = str(n)
    run = subprocess.run([program, out], cwd=workdir, env=env, capture_output=True, text=True,
                         timeout=60)
    where = f"HDF5 call {n}"
    check(run.returncode == 0, f"{where}: exit {run.returncode}: {run.stderr[-800:]}")
    fields = dict(item.split("=") for item in run.stdout.split())
    if fields.get("injected") != "1":
        # past the last call: the write succeeds untouched
        check(fields.get("status") == "0", f"no failure injected, yet status {fields}")
        print(f"{n - 1} HDF5 calls failed in turn, {failed_runs} of them failed the write")
        break
    check(sorted(os.listdir(workdir)) == ["out.h5"],
          f"{where}: files left: {sorted(os.listdir(workdir))}")
    with open(out, "rb") as f:
        head = f.read()
    if fields.get("status") == "0":
        # the failed call did not matter (a close reporting an error after
        # closing, say, or a probe): the file must then be whole
        try:
            with h5py.File(out, "r") as f:
                check("region_table" in f, f"{where}: published file without a region table")
        except OSError as e:
            check(False, f"{where}: status 0 but the file does not open: {e}")
    else:
        failed_runs += 1
        check(head == PREVIOUS, f"{where}: status {fields.get('status')} but the previous file "
              "changed")
else:
    check(False, "the failure was still reached after 400 calls")
sys.exit(1 if failures else 0)
