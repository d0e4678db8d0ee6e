#!/usr/bin/python3
"""scope-inspect's MPI bytes over names of every writer, without mpirun.

The 4-rank fixture tests/data/driver/mpi4.h5 gets its regions renamed to
MPI names (call counts per rank: driver.setup 1, assemble, solve, exchange
6 each, io.write 2, rank3.only 1 on rank 3):
  - ours: a sendrecv (bytes = its send side, recv_bytes = its receive side)
    and a collective;
  - the Python package's (no lang=native): a send, an irecv, and a wait
    that repeats its request's bytes (which must count nowhere);
  - an older file's sendrecv without recv_bytes (both sides unknown).
Then --json's per-operation rows and totals, and the text's "all MPI" line,
must give each message once as sent and once as received, the collective's
payload apart, and the unknown call counted apart.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

try:
    import h5py
except ImportError as exc:
    print(f"skipped: {exc}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pmpi_names import package_parse  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--inspect", required=True)
ap.add_argument("--fixture", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

RENAMED = {
    "driver.setup": "mpi:sendrecv kind=point-to-point bytes=100 peer=1 root=-1 tag=0 comm=0 "
                    "recv_bytes=60 lang=native",
    "assemble": "mpi:send kind=point-to-point bytes=1000 peer=1 root=-1 tag=3 comm=0",
    "solve": "mpi:wait kind=wait bytes=1000 peer=1 root=-1 tag=3 comm=0 request=isend",
    "exchange": "mpi:irecv kind=point-to-point bytes=1000 peer=0 root=-1 tag=3 comm=0",
    "io.write": "mpi:allreduce kind=collective bytes=8 peer=-1 root=-1 tag=-1 comm=0 "
                "lang=native",
    "rank3.only": "mpi:sendrecv kind=point-to-point bytes=32 peer=1 tag=0 comm=world "
                  "lang=native",
}
FIELDS = ("calls", "bytes_sent", "bytes_received", "bytes_collective", "calls_unknown_bytes")
WANT = {
    ("sendrecv", "point-to-point"): (5, 4 * 100, 4 * 60, 0, 1),
    ("send", "point-to-point"): (24, 24 * 1000, 0, 0, 0),
    ("wait", "wait"): (24, 0, 0, 0, 0),
    ("irecv", "point-to-point"): (24, 0, 24 * 1000, 0, 0),
    ("allreduce", "collective"): (8, 0, 0, 8 * 8, 0),
}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
path = os.path.join(args.workdir, "mpi_names.h5")
shutil.copyfile(args.fixture, path)
with h5py.File(path, "r+") as h5:
    names = [n.decode() if isinstance(n, bytes) else n for n in h5["region_table/names"][:]]
    check(set(RENAMED) <= set(names), f"the fixture has the regions {sorted(RENAMED)}: {names}")
    names = [RENAMED.get(n, n) for n in names]
    del h5["region_table/names"]
    h5.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))
# The test's own names are what they claim: every one but the older file's
# parses by the package's rule.
for old, name in RENAMED.items():
    check((package_parse(name) is not None) == (old != "rank3.only"),
          f"{name!r}: parses by the package's rule unless it is the older form")

js = subprocess.run([args.inspect, "--json", path], capture_output=True, text=True)
check(js.returncode == 0, f"scope-inspect --json: exit {js.returncode} {js.stderr.strip()}")
mpi = json.loads(js.stdout).get("mpi", {}) if js.returncode == 0 else {}
got = {(o["op"], o["kind"]): tuple(o[f] for f in FIELDS) for o in mpi.get("operations", [])}
check(got == WANT, f"per operation {got} == {WANT}")
want_totals = tuple(sum(row[i] for row in WANT.values()) for i in range(len(FIELDS)))
totals = tuple(mpi.get("totals", {}).get(f) for f in FIELDS)
check(totals == want_totals, f"totals {totals} == {want_totals}")

text = subprocess.run([args.inspect, path], capture_output=True, text=True)
line = re.search(r"^  all MPI +(\d+) +(\d+) +(\d+) +(\d+) ", text.stdout, re.M)
check(line is not None, f"the text has the MPI table's total line:\n{text.stdout}")
if line:
    check(tuple(int(x) for x in line.groups()) == want_totals[:4],
          f"text totals {line.groups()} == {want_totals[:4]}")
check("unknown size" in text.stdout, "the unknown sendrecv is footnoted")

print(f"{len(failures)} failed" if failures else "inspect bytes: all checks passed")
sys.exit(1 if failures else 0)
