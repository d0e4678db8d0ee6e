#!/usr/bin/python3
"""check_extremes.py - accepted values at the int64 ends (issue 29 item 11).

A valid file whose calls start at INT64_MIN and end near INT64_MAX (the
reader accepts any int64 time whose duration fits) and whose MPI send
names 2^62 bytes, three times: the rank's span, the MPI time inside the
enclosing region and the byte sums have no int64. Every tool that reads
it must finish cleanly (under UBSan with -fno-sanitize-recover a signed
overflow aborts) and print held values, not wrapped ones:

    check_extremes.py WORKDIR INSPECT DIFF [EXPORT]

Exit 0 pass, 1 fail, 77 skip (h5py missing).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

needs.h5py()
import synthetic  # noqa: E402  (after the skip: it needs h5py)

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
work, inspect, diff = sys.argv[1], sys.argv[2], sys.argv[3]
export = sys.argv[4] if len(sys.argv) > 4 else None
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
path = os.path.join(work, "extremes.h5")
SEND = "mpi:send kind=point-to-point bytes=4611686018427387904 peer=1 root=-1 tag=0 comm=0 lang=native"
RECV = "mpi:recv kind=point-to-point bytes=4611686018427387904 peer=0 root=-1 tag=0 comm=0 lang=native"
names = ["outer", SEND, "late", RECV]
rows = [
    {"region": 0, "rank": 0, "starts": [I64_MIN], "durations": [2**62],
     "call_ids": [0], "parent_ids": [-1]},
    {"region": 1, "rank": 0, "starts": [I64_MIN + 10, I64_MIN + 20, I64_MIN + 30],
     "durations": [2**60, 2**60, 2**60], "call_ids": [1, 2, 3], "parent_ids": [0, 0, 0]},
    {"region": 2, "rank": 0, "starts": [I64_MAX - 100], "durations": [50],
     "call_ids": [4], "parent_ids": [-1]},
    {"region": 3, "rank": 1, "starts": [I64_MIN, 0], "durations": [2**61, 2**61],
     "call_ids": [0, 1], "parent_ids": [-1, -1]},
]
synthetic.write(path, names, rows, mpi_size=2)

check = checks.Checks("check_extremes")


def run(*argv):
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        print(" ".join(argv), "->", p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p


p = run(inspect, "--json", "--comm", path)
check(p.returncode == 0, "scope-inspect --json --comm exits 0")
if p.returncode == 0:
    doc = json.loads(p.stdout)
    mpi = doc["mpi"]
    ranks = {r["rank"]: r for r in mpi["ranks"]}
    # %.9g in the JSON: 9 significant digits; a wrapped span would be <= 0
    check(abs(ranks[0]["recorded_span"] - I64_MAX / 1e9) <= 1e-8 * I64_MAX / 1e9,
          f"rank 0's span held at INT64_MAX ns: {ranks[0]['recorded_span']}")
    check(mpi["totals"]["bytes_sent"] == I64_MAX,
          f"3 x 2^62 bytes sent held at INT64_MAX: {mpi['totals']['bytes_sent']}")
    check(mpi["totals"]["bytes_received"] == 2**63 - 1,
          f"2 x 2^62 bytes received held at INT64_MAX: {mpi['totals']['bytes_received']}")
    enclosing = {e["region"]: e for e in mpi["enclosing"]}
    check("outer" in enclosing and enclosing["outer"]["mpi_duration"] > 0,
          f"the MPI time inside outer: {mpi['enclosing']}")
    pairs = doc["comm"]["pairs"]
    check(len(pairs) == 1 and pairs[0]["bytes"] == I64_MAX and pairs[0]["messages"] == 3
          and pairs[0]["receives"] == 2, f"the one pair held at INT64_MAX bytes: {pairs}")
p = run(inspect, "--comm", path)
check(p.returncode == 0, "scope-inspect --comm (text) exits 0")
for argv in ([path, path], ["--json", path, path], ["--scaling", path, path],
             ["--scaling", "--weak", "--json", path, path]):
    p = run(diff, *argv)
    check(p.returncode == 0, f"scope-diff {' '.join(argv)} exits 0")
if export:
    for fmt in ("chrome", "otf2"):
        out = os.path.join(work, f"extremes.{fmt}")
        p = run(export, "--format", fmt, "-o", out, path)
        # a build without OTF2 says so (exit 3); anything else must succeed
        missing = fmt == "otf2" and p.returncode == 3 and "no OTF2 support" in p.stderr
        check(p.returncode == 0 or missing, f"scope-export --format {fmt} exits 0 ({p.returncode})")

if check.failures:
    check.finish()
print("ok")
