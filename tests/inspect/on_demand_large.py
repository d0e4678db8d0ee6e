#!/usr/bin/python3
"""The statistics of an open that keeps the calls in the file
(SP_RESULTS_CALLS_ON_DEMAND: profile_build.c streams every row twice, the
second pass reading the durations alone) against a full read, bit for bit,
on rows of more than one cursor slice (65,536 calls): a make_calls.py file
of 2 ranks x 1 thread x 25,000 iterations (its "recurse" rows hold 75,000
calls), checked by tests/reader/on_demand_test ("kept").

Usage: on_demand_large.py ON_DEMAND_TEST WORKDIR
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import os
import subprocess
import sys

try:
    import h5py  # noqa: F401 (make_calls.py needs it)
    import numpy  # noqa: F401
except ImportError as exc:  # pragma: no cover
    print(f"skip: {exc}")
    sys.exit(77)

test, work = sys.argv[1:3]
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(work, "calls.h5")
subprocess.run([sys.executable, os.path.join(here, "make_calls.py"), path, "2", "1", "25000", "3"],
               stdout=subprocess.DEVNULL, check=True)
run = subprocess.run([test, "kept", path], capture_output=True, text=True)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
sys.exit(0 if run.returncode == 0 else 1)
