#!/usr/bin/python3
"""Run an MPI program with NO profiler calls under mpirun, recorded by
libscopeprofiler_pmpi (linked, or preloaded with --preload), and check the
ONE file it writes with h5py: every MPI region name parses by the Python
package's rule and has exactly our canonical form (pmpi_names.py), and each
rank's MPI regions carry the exact call counts and bytes of the program's
plan (pmpi_app.c: every operation of pmpi/spp_ops.h).

Modes: plan (every region of the plan), filter (SCOPE_PROFILER_MPI_FILTER
keeps only allreduce and barrier), off (SCOPE_PROFILER_MPI=off: no session,
no file), invalid (invalid datatype/communicator: the program checks the
return codes itself; the file holds the calls with bytes=-1 / comm=-1),
abort (MPI_Abort on one rank still ends the whole job, with an error),
bounded (SCOPE_PROFILER_MPI_MAX_NAMES=4: at most 4 ordinary names per
rank, the rest under overflow=1 names, calls per operation still exact),
nested (pmpi_nested.c: MPI calls inside the program's own region "solve",
which scope-inspect's MPI section lists as their enclosing region),
names_full, names_op_bytes, names_op (SCOPE_PROFILER_MPI_NAMES: the plan's
regions with the dropped values -1), names_bad (an unknown value: one
diagnostic, full names).

With --inspect, scope-inspect's MPI section (--json and text) must report
calls and bytes per operation, and in total bytes sent == bytes received ==
the bytes of the messages the program sent, each message once.
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
import mpi_job  # noqa: E402
import needs  # noqa: E402
from pmpi_names import (byte_role, canonical_problem, coarsen, decode, expected,  # noqa: E402
                        package_parse, program_messages, wrapped_ops)

h5py = needs.h5py()

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--ranks", type=int, required=True)
NAME_FORMS = {"names_full": "full", "names_op_bytes": "op-bytes", "names_op": "op",
              "names_bad": "fine"}
ap.add_argument("--mode", required=True,
                choices=["plan", "filter", "off", "invalid", "abort", "bounded", "nested"]
                + sorted(NAME_FORMS))
ap.add_argument("--program", required=True)
ap.add_argument("--preload", help="the library to LD_PRELOAD (else the program links it)")
ap.add_argument("--workdir", required=True)
ap.add_argument("--inspect", help="scope-inspect: check its --json MPI section too")
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
out = os.path.join(args.workdir, "job.h5")
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_MPI",
                            "SCOPE_PROFILER_MPI_FILTER", "SCOPE_PROFILER_MPI_MAX_NAMES",
                            "SCOPE_PROFILER_MPI_NAMES", "LD_PRELOAD"),
                      SCOPE_PROFILER_FILE=out, SCOPE_PROFILER_SUMMARY="0")
if args.mode == "filter":
    env["SCOPE_PROFILER_MPI_FILTER"] = "^(allreduce|barrier)$"
if args.mode == "off":
    env["SCOPE_PROFILER_MPI"] = "off"
if args.mode == "bounded":
    env["SCOPE_PROFILER_MPI_MAX_NAMES"] = "4"
if args.mode in NAME_FORMS:
    env["SCOPE_PROFILER_MPI_NAMES"] = NAME_FORMS[args.mode]
# The names the file should hold: names_bad keeps the full form.
form = NAME_FORMS.get(args.mode, "full").replace("fine", "full")
plan_like = args.mode in ("plan", "filter") or args.mode in NAME_FORMS
forwarded = [var for var in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_SUMMARY",
                              "SCOPE_PROFILER_MPI", "SCOPE_PROFILER_MPI_FILTER",
                              "SCOPE_PROFILER_MPI_MAX_NAMES", "SCOPE_PROFILER_MPI_NAMES",
                              "ASAN_OPTIONS") if var in env]
cmd = mpi_job.launch(args.mpiexec, args.ranks, forwarded,
                     [args.program, args.mode if args.mode in ("invalid", "abort") else "plan"],
                     preload=args.preload)
run = mpi_job.run(cmd, args.workdir, env)
check = checks.Checks("pmpi")
failures = check.failures
finish = check.finish


BYTE_FIELDS = ("calls", "bytes_sent", "bytes_received", "bytes_collective", "calls_unknown_bytes")


def inspect_rows(want):
    """scope-inspect's per-(op, kind) numbers implied by the expected names."""
    rows = {}
    for per_rank in want.values():
        for key, calls in per_rank.items():
            d = dict(key)
            row = rows.setdefault((d["op"], d["kind"]), dict.fromkeys(BYTE_FIELDS, 0))
            row["calls"] += calls
            role = byte_role(d["op"], d["kind"])
            b, rb = int(d["bytes"]), int(d.get("recv_bytes", 0))
            if role is None:
                continue
            if b < 0 or rb < 0:
                row["calls_unknown_bytes"] += calls
            elif role == "collective":
                row["bytes_collective"] += calls * b
            elif role == "received":
                row["bytes_received"] += calls * b
            else:
                row["bytes_sent"] += calls * b
                row["bytes_received"] += calls * rb
    return rows


def check_inspect(want, messages):
    """scope-inspect --json and text: the rows the names imply, and in total
    each message once as sent and once as received (`messages`: the
    program's bytes, or None when the names carry no sizes)."""
    js = subprocess.run([args.inspect, "--json", out], capture_output=True, text=True)
    check(js.returncode == 0, f"scope-inspect --json: {js.stderr.strip()}")
    mpi = json.loads(js.stdout).get("mpi", {}) if js.returncode == 0 else {}
    # (the communicators' world-rank maps, FORMAT.md 4.6.1, are a row of
    # kind `map` moving nothing; not one of the program's calls)
    ops = {(o["op"], o["kind"]): {f: o[f] for f in BYTE_FIELDS}
           for o in mpi.get("operations", []) if o["kind"] != "map"}
    check(ops == inspect_rows(want), f"inspect rows {ops} == {inspect_rows(want)}")
    for o in mpi.get("operations", []):
        check(o["rank_min_duration"] <= o["rank_avg_duration"] <= o["rank_max_duration"],
              f"{o['op']}: rank min <= avg <= max")
    totals = mpi.get("totals", {})
    if messages is not None:
        check(totals.get("bytes_sent") == messages and totals.get("bytes_received") == messages,
              f"bytes sent {totals.get('bytes_sent')} and received {totals.get('bytes_received')}"
              f" == the program's messages {messages}, each once")
    ranks = mpi.get("ranks", [])
    check([r["rank"] for r in ranks] == list(range(args.ranks)), "one MPI entry per rank")
    text = subprocess.run([args.inspect, out], capture_output=True, text=True).stdout
    line = re.search(r"^  all MPI +(\d+) +(\d+) +(\d+) +(\d+) ", text, re.M)
    check(line is not None, f"scope-inspect prints the MPI table:\n{text}")
    if line:
        printed = [int(x) for x in line.groups()]
        want_tot = [totals.get(k) for k in ("calls", "bytes_sent", "bytes_received",
                                            "bytes_collective")]
        check(printed == want_tot, f"text totals {printed} == JSON totals {want_tot}")


if args.mode == "abort":
    check(run.returncode != 0, f"MPI_Abort ends the job with an error, got {run.returncode}")
    finish()
check(run.returncode == 0, f"mpirun exit code {run.returncode}")
if args.mode == "off":
    check(not os.path.exists(out), "SCOPE_PROFILER_MPI=off: no session, no file")
    check(run.stdout.count("scope-profiler:") == 0, "off: no report")
else:
    reports = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(reports) == 1, f"exactly one report (rank 0 only), got {len(reports)}")
    check(os.path.exists(out), "the job's file exists")
if args.mode == "names_bad":
    check("SCOPE_PROFILER_MPI_NAMES" in run.stderr, "an unknown name form is diagnosed")
if failures or args.mode == "off":
    finish()

# Each rank's communicators' Fortran handles, as the program printed them.
comms = {}
for m in re.finditer(r"^pmpi_app: rank (\d+) comms (.*)$", run.stdout, re.M):
    comms[int(m[1])] = {k: int(v) for k, v in (t.split("=") for t in m[2].split())}
if plan_like or args.mode in ("invalid", "bounded"):
    check(sorted(comms) == list(range(args.ranks)), f"every rank printed its communicators: {comms}")
    if failures:
        finish()

with h5py.File(out, "r") as f:
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    rows = [(int(idx["ranks"][i]), names[idx["region_ids"][i]], int(idx["event_counts"][i]))
            for i in range(len(idx["ranks"]))]
    check(int(f["metadata"].attrs.get("mpi_size", 0)) == args.ranks, "mpi_size")

# The communicators' world-rank maps (docs/FORMAT.md 4.6.1) are not calls of
# the program: checked for their form here, then left out of what follows.
MAP = re.compile(r"mpi:comm_map kind=map bytes=0 peer=-1 root=-1 tag=-1 comm=-?\d+ "
                 r"world=(\?|\d+(\.\.\d+(/-?\d+)?)?(,\d+(\.\.\d+(/-?\d+)?)?)*) lang=native")
for name in names:
    if name.startswith("mpi:comm_map "):
        check(MAP.fullmatch(name) and package_parse(name) is not None, f"{name!r}: a map's form")
rows = [r for r in rows if not r[1].startswith("mpi:comm_map ")]
names = [n for n in names if not n.startswith("mpi:comm_map ")]

# Issue 28: EVERY mpi: name of the file parses by the package's rule, and
# has exactly our canonical form.
for name in names:
    if not name.startswith("mpi:"):
        check(args.mode == "nested", f"{name!r}: only the nested program has regions of its own")
        continue
    check(package_parse(name) is not None, f"{name!r}: the Python package cannot parse it")
    problem = canonical_problem(name)
    check(problem is None, f"{name!r}: {problem}")
if failures:
    finish()

got = {r: {} for r in range(args.ranks)}
for rank, name, calls in rows:
    if not name.startswith("mpi:"):
        continue  # the nested program's own region
    key = tuple(sorted(decode(name).items()))
    got[rank][key] = got[rank].get(key, 0) + calls

if args.mode == "plan":
    # One rank has no partner for the plan's send and recv.
    ops = {decode(n)["op"] for n in names}
    want_ops = wrapped_ops() - (set() if args.ranks > 1 else {"send", "recv"})
    check(ops == want_ops, f"the plan calls every wrapped operation: missing "
          f"{sorted(want_ops - ops)}, unknown {sorted(ops - want_ops)}")

if args.mode == "nested":
    for rank in range(args.ranks):
        names_r = {dict(k)["op"]: v for k, v in got[rank].items()}
        check(names_r == {"allreduce": 3, "barrier": 1}, f"rank {rank}: MPI calls {names_r}")
    check(("solve" in [n for _, n, _ in rows]), "the program's own region is in the file")
    js = subprocess.run([args.inspect, "--json", out], capture_output=True, text=True)
    doc = json.loads(js.stdout) if js.returncode == 0 else {}
    enclosing = doc.get("mpi", {}).get("enclosing", [])
    check([e["region"] for e in enclosing] == ["solve"], f"enclosing regions {enclosing}")
    for e in enclosing:
        check(0 < e["mpi_duration"] <= e["inclusive_duration"], f"MPI time inside solve: {e}")
        check(0 < e["share_pct"] <= 100, f"share of solve: {e}")
    finish()

if args.mode == "bounded":
    for rank in range(args.ranks):
        want_ops, got_ops = {}, {}
        for k, v in expected(rank, args.ranks, "plan", comms[rank]).items():
            want_ops[dict(k)["op"]] = want_ops.get(dict(k)["op"], 0) + v
        ordinary = 0
        for k, v in got[rank].items():
            d = dict(k)
            got_ops[d["op"]] = got_ops.get(d["op"], 0) + v
            ordinary += d.get("overflow") != "1"
        check(got_ops == want_ops, f"rank {rank}: calls per op {got_ops} == {want_ops}")
        check(ordinary <= 4, f"rank {rank}: {ordinary} ordinary names <= 4")
    finish()

mode = "invalid" if args.mode == "invalid" else "filter" if args.mode == "filter" else "plan"
want = {r: coarsen(expected(r, args.ranks, mode, comms[r]), form) for r in range(args.ranks)}
for rank in range(args.ranks):
    missing = {k: v for k, v in want[rank].items() if got[rank].get(k) != v}
    extra = {k: v for k, v in got[rank].items() if k not in want[rank]}
    check(not missing and not extra,
          f"rank {rank}: regions and call counts differ: missing/wrong {missing}, extra {extra}")
if form == "op":
    # The point of the form (issue 30): the region count is bounded by the
    # operations, whatever the peers, tags, sizes and communicators.
    check(len(names) == len({decode(n)["op"] + decode(n).get("request", "") for n in names}),
          f"op: one name per operation (and wait request): {names}")

if args.inspect:
    # The op form drops the sizes: no message has a known size then.
    known = plan_like and args.mode != "filter" and form != "op"
    check_inspect(want, program_messages(args.ranks) if known else
                  0 if args.mode == "filter" else None)
finish()
