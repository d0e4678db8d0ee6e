#!/usr/bin/env python3
"""check_summary_memory.py APP WORK - the finalize summary of a bounded
trace stays within the bound (issue 27).

Runs summary_app twice with an 8 MiB buffer limit that flushes and the
default summary: once with 10,000 steps (the process's own baseline: the
library, HDF5, the sanitizers' shadow when built with them) and once with
2,000,000 steps (6M calls, 144 MB of events). The long run's peak RSS may
exceed the short one's by at most the limit plus 64 MiB: reading the calls
back for the summary, as sp_finalize did before, takes about 1 GB here.
The table must still be the call tree with the exact counts.
"""
import os
import re
import subprocess
import sys

app, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, SCOPE_PROFILER_BUFFER_LIMIT=str(8 << 20), SCOPE_PROFILER_OVERFLOW="flush")
for key in ("SCOPE_PROFILER_SUMMARY", "SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_FILE",
            "SCOPE_PROFILER_MODE", "SCOPE_PROFILER_DISABLE"):
    env.pop(key, None)
failures = []


def run(steps):
    out = os.path.join(work, f"summary_{steps}.h5")
    p = subprocess.run([app, str(steps), out], capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode != 0:
        sys.exit(f"FAIL: summary_app {steps} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    peak = int(re.search(r"peak_rss_kib (\d+)", p.stdout).group(1))
    return peak, p.stdout


def sanitized(stdout):
    return "sanitized 1" in stdout


small, _ = run(10_000)
steps = 2_000_000
large, table = run(steps)
growth_mib = (large - small) / 1024
allowed_mib = 8 + 64
print(f"peak RSS: {small / 1024:.1f} MiB for 30k calls, {large / 1024:.1f} MiB for "
      f"{3 * steps} calls (+{growth_mib:.1f} MiB, at most {allowed_mib} allowed)")
if sanitized(table):
    print("sanitizer build: the memory bound is not checked (shadow memory, quarantine)")
elif growth_mib > allowed_mib:
    failures.append(f"peak RSS grew by {growth_mib:.1f} MiB > {allowed_mib} MiB")
for name, indent in (("a", ""), ("b", r"[^\w\s]+ "), ("c", r"[^\w\s| ]+[^\w]*")):
    if not re.search(rf"\b{name} \({steps}x\)", table):
        failures.append(f"the summary has no row '{name} ({steps}x)':\n{table}")
# the tree: b under a, c under b (indented further), not three roots
rows = [line for line in table.splitlines() if re.search(r"\b[abc] \(\d+x\)", line)]
depth = {re.search(r"\b([abc]) \(", r).group(1): r.index(re.search(r"\b[abc] \(", r).group(0))
         for r in rows}
if not (depth.get("a", 0) < depth.get("b", 0) < depth.get("c", 0)):
    failures.append(f"the summary is not the tree a > b > c:\n{table}")
if "summary in" not in table:
    failures.append("the summary's time is not reported")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
