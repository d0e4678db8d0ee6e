#!/usr/bin/python3
"""check_comm.py - the communication matrix of a recorded halo exchange.

Runs halo.c (linked with the PMPI wrappers, no profiler call) on --ranks
ranks, then checks scope-inspect --comm --json against the pattern the
program sends (the same formulas as halo.c): every pair's bytes and
messages exactly, each message counted once (the totals are the sends,
not sends + receives), the receive side's count beside it, the send to
MPI_PROC_NULL and the allreduce left out, the messages on a duplicate of
MPI_COMM_WORLD placed through its world-rank map, the wildcard receive
counted. Then
the text form (--comm) and scope-report's heat map (one cell per pair,
with the same bytes).

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
from halo_job import expected_pairs, run_halo  # noqa: E402

ITERATIONS, SENDRECV_ROUNDS, SENDRECV_BYTES, DUP_BYTES = 5, 3, 64, 7

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--inspect", required=True)
ap.add_argument("--report")
ap.add_argument("--ranks", type=int, default=4)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

if not shutil.which(args.mpiexec) and not os.path.exists(args.mpiexec):
    print("SKIP: no mpiexec")
    sys.exit(77)
out = run_halo(args.mpiexec, args.program, args.ranks, args.workdir)
if out is None:
    sys.exit(1)

check = checks.Checks("check_comm")


n = args.ranks
expected, _ = expected_pairs(n, ITERATIONS, SENDRECV_ROUNDS, SENDRECV_BYTES)
# The duplicate of MPI_COMM_WORLD: its map (recorded at MPI_Comm_dup) places
# rank 0's two sends at world rank 1; rank 1's receive naming source 0 is
# counted beside them, its MPI_ANY_SOURCE receive is not.
dup = expected.setdefault((0, 1), [0, 0, 0])
dup[0] += 2 * DUP_BYTES
dup[1] += 2
dup[2] += 1

inspect = subprocess.run([args.inspect, "--comm", "--json", out], capture_output=True, text=True)
check(inspect.returncode == 0, f"scope-inspect --comm --json exits 0 ({inspect.returncode}: "
                               f"{inspect.stderr.strip()})")
doc = json.loads(inspect.stdout)
comm = doc["comm"]
got = {(p["from"], p["to"]): [p["bytes"], p["messages"], p["receives"]] for p in comm["pairs"]}
check(got == expected, f"pairs: got {sorted(got.items())}, expected {sorted(expected.items())}")
check(comm["basis"] == "send side", "the basis is named")
check(comm["world_ranks"] == n, f"world_ranks {comm['world_ranks']} == {n}")
total_bytes = sum(v[0] for v in expected.values())
total_messages = sum(v[1] for v in expected.values())
check(comm["bytes"] == total_bytes, f"total bytes {comm['bytes']} == {total_bytes} (each message once)")
check(comm["messages"] == total_messages,
      f"total messages {comm['messages']} == {total_messages} (each message once)")
ranks = {r["rank"]: r for r in comm["ranks"]}
for r in range(n):
    sent = sum(v[0] for (f, _), v in expected.items() if f == r)
    recvd = sum(v[0] for (_, t), v in expected.items() if t == r)
    check(ranks[r]["sent_bytes"] == sent, f"rank {r} sent {ranks[r]['sent_bytes']} == {sent}")
    check(ranks[r]["received_bytes"] == recvd,
          f"rank {r} received {ranks[r]['received_bytes']} == {recvd}")
    check(ranks[r]["any_source_receives"] == (1 if r == 1 else 0),
          f"rank {r} any-source receives {ranks[r]['any_source_receives']}")
check(comm["unresolved"] == [], f"nothing unresolved (the duplicate has its map): "
                                f"{comm['unresolved']}")

text = subprocess.run([args.inspect, "--comm", "--comm-top", "3", out], capture_output=True,
                      text=True)
check(text.returncode == 0, "scope-inspect --comm exits 0")
check("each message counted once, at its sender" in text.stdout, "the text names the basis")
top = sorted(expected.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:3]
for (f, t), (b, m, rc) in top:
    pattern = rf"^\s+{f}\s+{t}\s+{b}\s+{m}\s+{rc}$"
    check(re.search(pattern, text.stdout, re.M), f"top pair line {f} -> {t} {b} bytes in the text")
check(f"... {len(expected) - 3} more pairs" in text.stdout, "the text says how many pairs are left out")
check("unresolved comm=" not in text.stdout, "the text lists no unresolved communicator")

if args.report:
    page = os.path.join(args.workdir, "halo.html")
    rep = subprocess.run([args.report, out, "-o", page], capture_output=True, text=True)
    check(rep.returncode == 0, f"scope-report exits 0 ({rep.stderr.strip()})")
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    check('id="comm-heat"' in html, "the report has the heat map")
    cells = re.findall(r'data-bytes="(\d+)" data-messages="(\d+)"><title>rank (\d+) &#8594; '
                       r'rank (\d+)', html)
    drawn = {(int(f), int(t)): [int(b), int(m)] for b, m, f, t in cells}
    check(drawn == {k: v[:2] for k, v in expected.items()},
          f"heat map cells {sorted(drawn.items())}")

if check.failures:
    check.finish()
print(f"ok: {len(expected)} pairs, {total_messages} messages, {total_bytes} bytes, each once")
