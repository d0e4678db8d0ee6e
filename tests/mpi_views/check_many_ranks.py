#!/usr/bin/python3
"""check_many_ranks.py - the communication matrix past the sizes printed
whole: a 300-rank ring (rank r sends 2 messages of (r+1)*10 bytes to
r+1), where scope-inspect --comm prints the top pairs, the spread and the
largest senders, --json every pair, and scope-report a heat map of rank
blocks (3 ranks a block: 100 x 100 cells, only those with traffic drawn);
then a file whose ranks are 0 and 4294967295, which must cost nothing per
rank number (the tools run in a supervised child that stops a runaway
allocation).

    check_many_ranks.py WORKDIR INSPECT REPORT

Exit 0 pass, 1 fail, 77 skip (h5py missing).
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

needs.h5py()
import synthetic  # noqa: E402  (after the skip: it needs h5py)

work, inspect, report = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
check = checks.Checks("check_many_ranks")


def send(nbytes, peer):
    return f"mpi:send kind=point-to-point bytes={nbytes} peer={peer} root=-1 tag=0 comm=0 lang=native"


N = 300
ring = os.path.join(work, "ring.h5")
synthetic.write(ring, [send((r + 1) * 10, (r + 1) % N) for r in range(N)],
                [{"region": r, "rank": r, "starts": [1000, 2000], "durations": [10, 10]}
                 for r in range(N)], mpi_size=N)
p = subprocess.run([inspect, "--comm", "--json", ring], capture_output=True, text=True)
check(p.returncode == 0, f"scope-inspect --comm --json exits 0 ({p.stderr.strip()})")
comm = json.loads(p.stdout)["comm"] if p.returncode == 0 else {"pairs": []}
got = {(q["from"], q["to"]): (q["bytes"], q["messages"]) for q in comm["pairs"]}
want = {(r, (r + 1) % N): (2 * (r + 1) * 10, 2) for r in range(N)}
check(got == want, "every pair of the ring in --json")
p = subprocess.run([inspect, "--comm", "--comm-top", "3", ring], capture_output=True, text=True)
check("... 297 more pairs" in p.stdout, "the text keeps to the top 3 pairs")
check("bytes sent per rank over 300 ranks with traffic: min 20, mean 3010.0, max 6000" in p.stdout,
      "the per-rank spread past 64 ranks")
check(re.search(r"^\s+299\s+6000\s+2\s+5980\s+2\s+0$", p.stdout, re.M),
      "the largest sender first")
page = os.path.join(work, "ring.html")
p = subprocess.run([report, ring, "-o", page], capture_output=True, text=True)
check(p.returncode == 0, f"scope-report exits 0 ({p.stderr.strip()})")
html = open(page, encoding="utf-8").read() if p.returncode == 0 else ""
cells = re.findall(r'data-bytes="(\d+)" data-messages="(\d+)"><title>ranks (\d+)-(\d+) &#8594; '
                   r'ranks (\d+)-(\d+)', html)
blocks = {}
for r in range(N):
    key = (r // 3, ((r + 1) % N) // 3)
    b, m = blocks.get(key, (0, 0))
    blocks[key] = (b + 2 * (r + 1) * 10, m + 2)
drawn = {(int(f0) // 3, int(t0) // 3): (int(b), int(m)) for b, m, f0, _, t0, _ in cells}
check(drawn == blocks, f"the heat map sums each 3-rank block ({len(drawn)} cells drawn)")
check("Ranks are grouped into blocks" in html, "the page says the ranks are grouped")

sparse = os.path.join(work, "sparse.h5")
synthetic.write(sparse, [send(8, 0), send(16, 1)],
                [{"region": 0, "rank": 4294967295, "starts": [1000], "durations": [10]},
                 {"region": 1, "rank": 0, "starts": [1000], "durations": [10]}])
p = subprocess.run([inspect, "--comm", "--json", sparse], capture_output=True, text=True)
check(p.returncode == 0, f"scope-inspect --comm on ranks 0 and 2^32-1 exits 0 ({p.stderr.strip()})")
p = subprocess.run([report, sparse, "-o", os.path.join(work, "sparse.html")], capture_output=True,
                   text=True)
check(p.returncode == 0, f"scope-report on ranks 0 and 2^32-1 exits 0 ({p.stderr.strip()})")

if check.failures:
    check.finish()
print("ok")
