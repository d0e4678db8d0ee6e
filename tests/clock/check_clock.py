#!/usr/bin/python3
"""check_clock.py PROGRAM WORKDIR CLOCK SECONDS: the stored times of every
call against two clock_gettime(CLOCK_MONOTONIC) reads around it.

With CLOCK=tsc the hot path stores TSC ticks that finalize converts through
anchors (tick_map.h); the program sleeps 0-40 ms between calls, so most
calls lie between anchors far apart. Every start and end must lie within
the call's brackets, widened by 100 ns (the goal of the conversion), and
every duration must be >= 0. Exit 77 when the TSC cannot be the clock here
(the metadata then says "monotonic").
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

program, workdir, clock, seconds = sys.argv[1:5]
outputs.fresh_workdir(workdir)
out, side = os.path.join(workdir, "run.h5"), os.path.join(workdir, "side.txt")
env = dict(os.environ, SCOPE_PROFILER_CLOCK=clock, SCOPE_PROFILER_QUIET="1")
env.pop("SCOPE_PROFILER_MODE", None)
p = subprocess.run([program, out, side, seconds], env=env, capture_output=True, text=True,
                   timeout=120)
if p.returncode != 0:
    print(f"FAIL: exit {p.returncode}: {p.stderr}")
    sys.exit(1)
TOLERANCE = 100
brackets = {}
for line in open(side):
    name, before, after = line.split()
    brackets.setdefault(name, []).append((int(before), int(after)))
failures = 0
with h5py.File(out, "r") as f:
    used = f["metadata"].attrs.get("clock")
    used = used.decode() if isinstance(used, bytes) else used
    if used != clock:
        needs.skip(f"asked for the {clock} clock, the run used {used}")
    names = h5_calls.region_names(f)
    idx = f["rank_region_index"]
    deltas, durations = f["events/start_deltas"][:], f["events/durations"][:]
    worst = 0
    for row, region in enumerate(idx["region_ids"][:]):
        off, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
        starts = np.cumsum(deltas[off:off + n])
        ends = starts + durations[off:off + n]
        calls = sorted(brackets[names[region]])
        if len(calls) != n:
            print(f"FAIL: {names[region]}: {n} calls stored, {len(calls)} made")
            failures += 1
            continue
        for (before, after), start, end, d in zip(calls, starts, ends, durations[off:off + n]):
            early = before - TOLERANCE - start
            late = end - (after + TOLERANCE)
            worst = max(worst, before - start, end - after)
            if d < 0 or early > 0 or late > 0:
                failures += 1
                if failures <= 10:
                    print(f"FAIL: {names[region]}: stored [{start}, {end}] outside "
                          f"[{before}, {after}] +- {TOLERANCE} ns")
    total = sum(len(v) for v in brackets.values())
    print(f"{total} calls over {seconds} s with the {used} clock; worst excursion outside the "
          f"brackets {worst} ns (tolerance {TOLERANCE} ns)")
sys.exit(1 if failures else 0)
