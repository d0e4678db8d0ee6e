#!/usr/bin/python3
"""check_limits.py CASE PROGRAM SCOPE_CHECK WORKDIR (issue 29 item 11).

long_name: a sized name of SIZE_MAX bytes is refused (one message), the
file is written and holds only the "ok" region.
open_threads: 384 calls open at finalize on 128 threads print at most 10
lines naming them plus one line with the total, not 384 lines.
"""
import os
import subprocess
import sys

try:
    import h5py
except ImportError as exc:
    print(f"SKIP: {exc}")
    sys.exit(77)

case, program, check_tool, workdir = sys.argv[1:5]
os.makedirs(workdir, exist_ok=True)
out = os.path.join(workdir, f"{case}.h5")
env = dict(os.environ)
env.pop("SCOPE_PROFILER_QUIET", None)
p = subprocess.run([program, case, out], env=env, capture_output=True, text=True, timeout=120)
print(p.stdout)
print(p.stderr[-3000:])
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


lines = p.stderr.splitlines()
if case == "long_name":
    check(p.returncode == 0, f"exit {p.returncode}")
    refused = [l for l in lines if "was refused" in l]
    check(len(refused) == 1, f"one message for the refused names, got {len(refused)}")
    with h5py.File(out, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
    check(names == ["ok"], f"only the enclosing region recorded: {names}")
elif case == "open_threads":
    check(p.returncode == 0, f"exit {p.returncode}")
    check("finalize=10" in p.stdout, "sp_finalize says calls were open (SP_ERR_OPEN_AT_FINALIZE)")
    named = [l for l in lines if "was still open at finalize" in l]
    check(len(named) == 10, f"10 lines name open calls, got {len(named)}")
    total = [l for l in lines if "384 calls in all were still open" in l]
    check(len(total) == 1, "one line gives the total of 384")
    check(len(lines) < 40, f"stderr stays short: {len(lines)} lines")
    c = subprocess.run([check_tool, out], capture_output=True, text=True)
    check(c.returncode == 0, f"scope-check accepts the file: {c.stdout[-1000:]}")
sys.exit(1 if failures else 0)
