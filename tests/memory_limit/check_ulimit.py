#!/usr/bin/python3
"""check_ulimit.py PROGRAM SCOPE_CHECK WORKDIR (issue 29 item 10).

An unbounded trace run under `ulimit -v` set 160 MiB above the program's
address space after setup, recording more calls than fit: the file is
written, scope-check accepts it, and the finalize report says how many
calls were lost, which with the calls in the file adds up to the calls
made. Skipped under sanitizers (their shadow memory needs terabytes of
address space).
"""
import os
import re
import subprocess
import sys

try:
    import h5py
except ImportError as exc:
    print(f"SKIP: {exc}")
    sys.exit(77)

program, check_tool, workdir = sys.argv[1:4]
with open(program, "rb") as binary:
    image = binary.read()
if b"__asan_init" in image or b"__tsan_init" in image:
    print("SKIP: a sanitizer build cannot run under ulimit -v")
    sys.exit(77)
os.makedirs(workdir, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


env = dict(os.environ, SCOPE_PROFILER_BUFFER_LIMIT="0", SCOPE_PROFILER_MODE="trace",
           SCOPE_PROFILER_PRINT_SUMMARY="0")
env.pop("SCOPE_PROFILER_QUIET", None)
probe = subprocess.run([program, os.path.join(workdir, "probe.h5"), "0"], env=env,
                       capture_output=True, text=True, timeout=60)
m = re.search(r"vmsize_kib=(\d+)", probe.stdout)
if probe.returncode != 0 or not m:
    print(f"probe failed: {probe.returncode} {probe.stdout} {probe.stderr}")
    sys.exit(1)
limit_kib = int(m.group(1)) + 160 * 1024
iterations = 6_000_000  # 12M calls, 288 MB of events: more than the limit leaves
out = os.path.join(workdir, "ulimit.h5")
if os.path.exists(out):
    os.unlink(out)
p = subprocess.run(["/bin/sh", "-c", f'ulimit -v {limit_kib} && exec "$0" "$1" "$2"', program,
                    out, str(iterations)], env=env, capture_output=True, text=True, timeout=300)
print(f"ulimit -v {limit_kib}: exit {p.returncode}")
print(p.stdout[-2000:])
print(p.stderr[-2000:])
check(p.returncode == 0, f"exit {p.returncode}")
check(os.path.exists(out), "the file is written")
if os.path.exists(out):
    c = subprocess.run([check_tool, out], capture_output=True, text=True)
    check(c.returncode == 0, f"scope-check accepts the file: {c.stdout[-1500:]}")
    with h5py.File(out, "r") as f:
        recorded = int(f["rank_region_index"]["event_counts"][:].sum())
    lost_match = re.search(r"(\d+) calls? NOT recorded", p.stdout)
    lost = int(lost_match.group(1)) if lost_match else 0
    print(f"recorded {recorded}, lost {lost}")
    check(recorded > 0, "calls recorded")
    check(lost > 0, "the report says calls were lost (more calls than the limit holds)")
    status = re.search(r"finalize=(\w+)", p.stdout)
    check(status and status.group(1) in ("SP_ERR_BUFFER_LIMIT", "SP_ERR_OUT_OF_MEMORY"),
          f"sp_finalize reports the loss: {status.group(1) if status else None}")
    check(recorded + lost == 2 * iterations,
          f"recorded {recorded} + lost {lost} == calls made {2 * iterations}")
sys.exit(1 if failures else 0)
