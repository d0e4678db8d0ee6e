#!/usr/bin/python3
"""check_tool_write_faults.py CASE TOOL PRELOAD SCOPE_CHECK SERIAL_H5 WORKDIR:
fail the N-th output call of scope-merge (CASE merge) or scope-export (CASE
export-chrome, export-otf2) for N = 1, 2, ... until the failure is no
longer reached (tool_faults_preload.c, LD_PRELOAD), and check every run
(issue 29, "a fault-injection test that fails every HDF5 call of the write
path in turn (library, merge, export)"): the tool was not killed by a
signal; a failed run exits non-zero with a message naming a file; no
temporary is left beside the output; the previous output is intact when
the run failed; a run that succeeded wrote a complete output (scope-check
accepts a merge). SERIAL_H5 is a small real profile (tests/data)."""
import os
import shutil
import subprocess
import sys

import h5py

case, tool, preload, scope_check, serial, workdir = sys.argv[1:7]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


shutil.rmtree(workdir, ignore_errors=True)
inputs = os.path.join(workdir, "inputs")
os.makedirs(inputs)
first = os.path.join(inputs, "a.h5")
shutil.copy(serial, first)
second = os.path.join(inputs, "b.h5")
# a second input without a common region name (its regions carry a prefix)
shutil.copy(serial, second)
with h5py.File(second, "r+") as f:
    names = ["k:" + (n.decode() if isinstance(n, bytes) else n)
             for n in f["region_table/names"][:]]
    del f["region_table/names"]
    f.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))

outdir = os.path.join(workdir, "out")
PREVIOUS = b"previous contents"
if case == "merge":
    name = "merged.h5"
    command = [tool, first, second, "-o", None]
elif case == "export-chrome":
    name = "trace.json"
    command = [tool, first, "-o", None]
elif case == "export-otf2":
    name = "archive"
    command = [tool, first, "--format", "otf2", "-o", None]
else:
    sys.exit(f"unknown case {case}")
out = os.path.join(outdir, name)
command[command.index(None)] = out
report = os.path.join(workdir, "report.txt")
env = dict(os.environ)
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0:"
                       "detect_leaks=0").lstrip(":")


def prepare():
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    if case != "export-otf2":  # an archive's directory must not exist
        with open(out, "wb") as f:
            f.write(PREVIOUS)
    if os.path.exists(report):
        os.unlink(report)


# the run without a fault must succeed (or the format is not built: skip)
prepare()
plain = subprocess.run(command, capture_output=True, text=True, timeout=120)
if case == "export-otf2" and plain.returncode != 0 and "otf2" in plain.stderr.lower():
    print(f"SKIP: {plain.stderr.strip()}")
    sys.exit(77)
check(plain.returncode == 0, f"without a fault: exit {plain.returncode}: {plain.stderr[-800:]}")

failed_runs = 0
for n in range(1, 3000):
    prepare()
    env["SCOPE_PROFILER_TEST_H5_FAIL_AT"] = str(n)
    env["SCOPE_PROFILER_TEST_FAULT_REPORT"] = report
    env["LD_PRELOAD"] = preload
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    injected = open(report).read().split("\n")[0] if os.path.exists(report) else ""
    where = f"call {n} ({injected.split(' ')[-1] if injected else 'not reached'})"
    check(0 <= run.returncode < 128, f"{where}: killed or crashed, exit {run.returncode}: "
          f"{run.stderr[-800:]}")
    if not injected:
        check(run.returncode == 0, f"no failure injected, yet exit {run.returncode}")
        print(f"{case}: {n - 1} output calls failed in turn, {failed_runs} of them failed the run")
        break
    left = sorted(os.listdir(outdir))
    want = [name] if case != "export-otf2" or run.returncode == 0 else []
    check(left == want, f"{where}: files left: {left}, want {want}")
    if run.returncode != 0:
        failed_runs += 1
        check(any(p in run.stderr for p in (out, first, second, outdir)),
              f"{where}: exit {run.returncode} without naming a file: {run.stderr[-400:]}")
        if case != "export-otf2":
            with open(out, "rb") as f:
                check(f.read() == PREVIOUS, f"{where}: exit {run.returncode} but the previous "
                      "output changed")
    elif case == "merge":
        verdict = subprocess.run([scope_check, out], capture_output=True, text=True, timeout=120)
        check(verdict.returncode == 0, f"{where}: exit 0 but scope-check rejects the output: "
              f"{verdict.stdout[-400:]} {verdict.stderr[-400:]}")
    elif case == "export-chrome":
        with open(out, "rb") as f:
            check(f.read() != PREVIOUS, f"{where}: exit 0 but the output was not replaced")
else:
    check(False, "the failure was still reached after 3000 calls")
sys.exit(1 if failures else 0)
