#!/usr/bin/python3
"""check_omp.py OMP_FORK SCOPE_CHECK SCOPE_INSPECT WORKDIR: OpenMP workers'
calls under the call that forked their team; a plain pthread's not.
"""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

needs.h5py()
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

program, check_tool, inspect, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
out = os.path.join(workdir, "omp.h5")
env = dict(os.environ, SCOPE_PROFILER_QUIET="1", OMP_NUM_THREADS="3", OMP_DYNAMIC="false")
p = subprocess.run([program, out], env=env, capture_output=True, text=True, timeout=60)
check = checks.Checks("omp fork")
check(p.returncode == 0, f"omp_fork exit {p.returncode}: {p.stderr}")
calls = collections.defaultdict(list)  # region -> [(call id, parent id, thread id)]
for call in h5_calls.read_calls(out):
    calls[call["region"]].append((call["id"], call["parent"], call["thread"]))
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
check.finish()
