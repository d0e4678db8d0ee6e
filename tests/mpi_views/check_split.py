#!/usr/bin/python3
"""check_split.py - messages inside communicators split from MPI_COMM_WORLD
(split.c, 4 ranks, reversed key order) placed at world ranks: scope-inspect
--comm --json gives exactly the pairs, bytes, messages and receives the
program sent, nothing unresolved; the text form and scope-report's heat
map agree. The file holds one world-rank map region per communicator
(docs/FORMAT.md 4.6.1), which h5py reads as a region like any other.

Exit 0 pass, 1 fail, 77 skip (no mpirun).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
from halo_job import run_halo  # noqa: E402

ROUNDS = 3

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--inspect", required=True)
ap.add_argument("--report")
ap.add_argument("--workdir", required=True)
ap.add_argument("--many", action="store_true",
                help="split.c's `many` mode: 3000 communicators first, past the cap of maps")
args = ap.parse_args()
MAP_CAP = 256  # SPP_COMM_MAPS, docs/FORMAT.md 4.6.1

if not shutil.which(args.mpiexec) and not os.path.exists(args.mpiexec):
    print("SKIP: no mpiexec")
    sys.exit(77)
stderr = []
out = run_halo(args.mpiexec, args.program, 4, args.workdir, ["many"] if args.many else [], stderr)
if out is None:
    sys.exit(1)

check = checks.Checks("check_split")


# world rank w sends ROUNDS messages of (w + 1) * 10 bytes to its partner
# (0 <-> 2, 1 <-> 3), plus the one-int sendrecv of its world rank (4 bytes,
# once per split: its receive side names no source).
expected = {}
for w, partner in ((0, 2), (2, 0), (1, 3), (3, 1)):
    expected[(w, partner)] = [ROUNDS * (w + 1) * 10 + 2 * 4, ROUNDS + 2, ROUNDS]

inspect = subprocess.run([args.inspect, "--comm", "--json", out], capture_output=True, text=True)
check(inspect.returncode == 0, f"scope-inspect --comm --json exits 0 ({inspect.stderr.strip()})")
comm = json.loads(inspect.stdout)["comm"] if inspect.returncode == 0 else {"pairs": [],
                                                                             "unresolved": []}
got = {(p["from"], p["to"]): [p["bytes"], p["messages"], p["receives"]] for p in comm["pairs"]}
if args.many:
    # past the cap: the split messages are totalled per handle as unresolved
    sent = sum(v[0] for v in expected.values())
    check(got == {}, f"no pair can be placed past the cap: {sorted(got.items())}")
    check(sum(u["bytes"] for u in comm["unresolved"]) == sent,
          f"the unresolved total {comm['unresolved']} holds every byte sent ({sent})")
else:
    check(got == expected, f"pairs: got {sorted(got.items())}, expected {sorted(expected.items())}")
    check(comm["unresolved"] == [], f"nothing unresolved: {comm['unresolved']}")

text = subprocess.run([args.inspect, "--comm", out], capture_output=True, text=True)
for (f, t), (b, m, rc) in ({} if args.many else expected).items():
    check(re.search(rf"^\s+{f}\s+{t}\s+{b}\s+{m}\s+{rc}$", text.stdout, re.M),
          f"pair line {f} -> {t} {b} bytes in the text:\n{text.stdout}")
check(args.many or "unresolved" not in text.stdout, "the text lists nothing unresolved")

if args.report and not args.many:
    page = os.path.join(args.workdir, "split.html")
    rep = subprocess.run([args.report, out, "-o", page], capture_output=True, text=True)
    check(rep.returncode == 0, f"scope-report exits 0 ({rep.stderr.strip()})")
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    cells = re.findall(r'data-bytes="(\d+)" data-messages="(\d+)"><title>rank (\d+) &#8594; '
                       r'rank (\d+)', html)
    drawn = {(int(f), int(t)): [int(b), int(m)] for b, m, f, t in cells}
    check(drawn == {k: v[:2] for k, v in expected.items()}, f"heat map cells {sorted(drawn.items())}")

import h5py  # noqa: E402

with h5py.File(out, "r") as f:
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    map_calls, unknown_calls = {}, {}
    for i in range(len(idx["ranks"])):
        name = names[int(idx["region_ids"][i])]
        if name.startswith("mpi:comm_map "):
            calls = unknown_calls if " world=? " in name else map_calls
            rank = int(idx["ranks"][i])
            calls[rank] = calls.get(rank, 0) + int(idx["event_counts"][i])
maps = sorted(n for n in names if n.startswith("mpi:comm_map "))
lists = sorted({re.search(r" world=(\S+)", n).group(1) for n in maps})
if not args.many:
    # per rank, its half in reversed order; the two splits give the same lists
    check(lists == ["2,0", "3,1"], f"the maps name the members in communicator order: {maps}")
    check(all(map_calls.get(r) == 2 for r in range(4)), f"two maps per rank: {map_calls}")
else:
    # 3000 dups then 2 splits: the cap holds (the splits, past it, get none:
    # their messages are unresolved, counted per handle); a handle reused
    # past the cap is marked `world=?` once, so its older map (a dup's) is
    # never applied to a split's messages
    check(all(map_calls.get(r) == MAP_CAP for r in range(4)),
          f"{MAP_CAP} maps per rank, not one per communicator: {map_calls}")
    check(all(1 <= unknown_calls.get(r, 0) <= 4 for r in range(4)),
          f"the reused handles are marked unknown once each: {unknown_calls}")
    notes = [l for l in stderr if "world-rank map" in l]
    check(len(notes) == 4, f"the cap is noted once per rank: {notes}")

if check.failures:
    check.finish()
print("ok: past the cap, maps bounded and the messages unresolved" if args.many else
      f"ok: {len(expected)} pairs inside split communicators, placed at world ranks")
