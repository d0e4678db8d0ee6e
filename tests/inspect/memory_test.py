"""scope-inspect in bounded memory (issue 27): a file of a few million calls
(make_calls.py: several ranks and threads, nested paths, recursion, ties,
zero-length calls) is summarised with a peak RSS well below what reading it
whole takes, and its table still says what the file holds: calls, totals
and exclusive times exact, p50/p95/p99 within the sketch's 1% (the paths
have more calls than the exact budget, so the sketch is what is tested).

Usage: memory_test.py SCOPE_INSPECT WORKDIR [RANKS THREADS ITERATIONS [RSS_CHECK]]
RSS_CHECK 0 skips the memory assertion (sanitizer builds).
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import json
import os
import re
import subprocess
import sys

try:
    import h5py  # noqa: F401 (make_calls.py needs it)
    import numpy  # noqa: F401
except ImportError as exc:  # pragma: no cover
    print(f"skip: {exc}")
    sys.exit(77)

tool, work = sys.argv[1:3]
ranks, threads, iterations = (map(int, sys.argv[3:6]) if len(sys.argv) > 5 else (2, 2, 100000))
rss_check = len(sys.argv) <= 6 or sys.argv[6] != "0"
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(work, "calls.h5")
made = subprocess.run([sys.executable, os.path.join(here, "make_calls.py"), path, str(ranks),
                       str(threads), str(iterations)], capture_output=True, text=True, check=True)
truth = json.loads(made.stdout)
calls = truth["calls"]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run_measured(*args):
    """Run the tool; its output and the peak RSS (KiB) of it and every
    process it waited for (the tool reads files in a supervised child)."""
    with open(os.path.join(work, "out.txt"), "w+") as out, \
         open(os.path.join(work, "err.txt"), "w+") as err:
        proc = subprocess.Popen([tool, *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), usage.ru_maxrss


columns = "region,calls,total,exclusive,p50,p95,p99"
rc, text, err, peak_kib = run_measured("--ascii", "--columns", columns, path)
if rc != 0:
    fail(f"exit {rc}: {err}")
# A whole read holds at least the five event columns (40 bytes per call);
# the call tree it built took several times that. Bounded: under half of
# the columns alone, and under 128 MiB whatever the size.
limit_kib = min(calls * 40 // 2 // 1024, 128 * 1024)
print(f"{calls} calls: peak RSS {peak_kib / 1024:.1f} MiB (limit {limit_kib / 1024:.1f} MiB)")
if rss_check and peak_kib > limit_kib:
    fail(f"peak RSS {peak_kib} KiB over {limit_kib} KiB for {calls} calls")

# The table against the generator's truth, path by path (depth from the
# tree glyphs, the name before any "(rec)" mark).
rows, stack = {}, []
for line in text.splitlines():
    m = re.match(r"  \| ((?:\| )*)(`- )?(.*?)\s{2,}(.*) \|$", line)
    if not m or m.group(3) in ("region", "(own)"):
        continue
    depth = len(m.group(1)) // 2 + (1 if m.group(2) else 0)
    name = m.group(3).split(" ")[0]
    del stack[depth:]
    stack.append(name)
    rows["/".join(stack)] = [float(x) for x in m.group(4).split()]
for name, want in truth["paths"].items():
    got = rows.get(name)
    if got is None:
        fail(f"path {name} missing:\n{text}")
        continue
    n, total, excl, p50, p95, p99 = got
    if n != want["count"]:
        fail(f"{name}: {n} calls, expected {want['count']}")
    for key, value in (("total_ns", total), ("exclusive_ns", excl)):
        if abs(value * 1e9 - want[key]) > 1000:  # printed in s with 6 decimals
            fail(f"{name} {key}: {value} s, expected {want[key]} ns")
    for key, value in (("p50_ns", p50), ("p95_ns", p95), ("p99_ns", p99)):
        exact = want[key] / 1e9
        # 1% from the sketch, plus the rounding of the printed %.3e
        if exact and abs(value - exact) / exact > 0.01 + 6e-4:
            fail(f"{name} {key}: {value} s, exact {exact} s")
# --json: every region's statistics exact (numpy's percentiles), pooled in
# one array or, past SCOPE_PROFILER_STATS_MEMORY, in passes over the calls
# (forced here with 0): both must give the same document.
rc, doc, err, json_kib = run_measured("--json", path)
os.environ["SCOPE_PROFILER_STATS_MEMORY"] = "0"
rc2, doc2, err2, passes_kib = run_measured("--json", path)
del os.environ["SCOPE_PROFILER_STATS_MEMORY"]
print(f"--json peak RSS {json_kib / 1024:.1f} MiB, in passes {passes_kib / 1024:.1f} MiB")
if rc or rc2 or doc != doc2:
    fail(f"--json in passes differs from in memory (exit {rc}, {rc2}): {err} {err2}")
else:
    for region in json.loads(doc)["regions"]:
        want = truth["paths"].get("main" if region["name"] == "main" else
                                  next((p for p in truth["paths"]
                                        if p.endswith("/" + region["name"])), ""))
        if want is None:
            fail(f"region {region['name']} not generated")
            continue
        for q in (50, 95, 99):
            got, exact = region[f"p{q}_duration"] * 1e9, want[f"p{q}_ns"]
            if abs(got - exact) > 1e-6 * max(1.0, exact):
                fail(f"--json {region['name']} p{q}: {got} ns, numpy {exact} ns")
if failures:
    sys.exit(1)
print("ok")
