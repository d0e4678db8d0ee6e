#!/usr/bin/python3
"""check_omp.py OMP_FORK SCOPE_CHECK SCOPE_INSPECT WORKDIR: OpenMP workers'
calls under the call that forked their team; a plain pthread's not.
"""
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as exc:
    print(f"SKIP: {exc}")
    sys.exit(77)

program, check_tool, inspect, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
out = os.path.join(workdir, "omp.h5")
env = dict(os.environ, SCOPE_PROFILER_QUIET="1", OMP_NUM_THREADS="3", OMP_DYNAMIC="false")
p = subprocess.run([program, out], env=env, capture_output=True, text=True, timeout=60)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


check(p.returncode == 0, f"omp_fork exit {p.returncode}: {p.stderr}")
with h5py.File(out, "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
    idx, ev = f["rank_region_index"], f["events"]
    calls = {}
    for row, region in enumerate(idx["region_ids"][:]):
        off, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
        calls[names[region]] = [(int(ev["call_ids"][k]), int(ev["parent_ids"][k]),
                                 int(ev["thread_ids"][k])) for k in range(off, off + n)]
fork_id, _, fork_thread = calls["fork"][0]
work = calls["work"]
check(len(work) == 12, f"12 work calls, got {len(work)}")
check(all(parent == fork_id for _, parent, _ in work),
      f"every work call under fork: {[p for _, p, _ in work]}")
check(len({t for _, _, t in work}) == 3, "work on three threads")
check(any(t != fork_thread for _, _, t in work), "some work on worker threads")
io = calls["io.write"]
check(len(io) == 1 and io[0][1] == -1, f"io.write (a plain pthread) stays a root: {io}")
p = subprocess.run([check_tool, out], capture_output=True, text=True)
check(p.returncode == 0, f"scope-check accepts the cross-thread parents: {p.stdout}")
p = subprocess.run([inspect, "--ascii", "--columns", "region,calls", out], capture_output=True,
                   text=True)
table = [l.strip() for l in p.stdout.splitlines() if l.strip().startswith("|")]
print("\n".join(table))
check(any(l.startswith("| `- work") for l in table) and
      not any(l.startswith("| work") for l in table), "work only under fork in the summary")
sys.exit(1 if failures else 0)
