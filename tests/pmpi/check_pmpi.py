#!/usr/bin/python3
"""Run an MPI program with NO profiler calls under mpirun, recorded by
libscopeprofiler_pmpi (linked, or preloaded with --preload), and check the
ONE file it writes with h5py: every region name decodes (a parse like the
Python package's parse_mpi_region), and each rank's MPI regions carry the
exact call counts and bytes of the program's plan (pmpi_app.c).

Modes: plan (every region of the plan), filter (SCOPE_PROFILER_MPI_FILTER
keeps only allreduce and barrier), off (SCOPE_PROFILER_MPI=off: no session,
no file), invalid (invalid datatype/communicator: the program checks the
return codes itself; the file holds the calls with bytes=-1 / comm=null),
abort (MPI_Abort on one rank still ends the whole job, with an error),
bounded (SCOPE_PROFILER_MPI_MAX_NAMES=4: at most 4 ordinary names per
rank, the rest under overflow=1 names, calls per operation still exact),
nested (pmpi_nested.c: MPI calls inside the program's own region "solve",
which scope-inspect's MPI section lists as their enclosing region).
"""
import argparse
import os
import shutil
import subprocess
import sys

try:
    import h5py
except ImportError as exc:
    print(f"skipped: {exc}")
    sys.exit(77)

ap = argparse.ArgumentParser()
ap.add_argument("--mpiexec", required=True)
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--mode", required=True, choices=["plan", "filter", "off", "invalid", "abort", "bounded", "nested"])
ap.add_argument("--program", required=True)
ap.add_argument("--preload", help="the library to LD_PRELOAD (else the program links it)")
ap.add_argument("--workdir", required=True)
ap.add_argument("--inspect", help="scope-inspect: check its --json MPI section too")
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
out = os.path.join(args.workdir, "job.h5")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none", OMPI_MCA_rmaps_base_oversubscribe="1",
           SCOPE_PROFILER_FILE=out, SCOPE_PROFILER_SUMMARY="0")
for var in ("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_MPI", "SCOPE_PROFILER_MPI_FILTER",
            "SCOPE_PROFILER_MPI_MAX_NAMES", "LD_PRELOAD"):
    env.pop(var, None)
# Open MPI keeps allocations from MPI_Init alive past exit by design.
env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
if args.mode == "filter":
    env["SCOPE_PROFILER_MPI_FILTER"] = "^(allreduce|barrier)$"
if args.mode == "off":
    env["SCOPE_PROFILER_MPI"] = "off"
if args.mode == "bounded":
    env["SCOPE_PROFILER_MPI_MAX_NAMES"] = "4"
cmd = [args.mpiexec, "--oversubscribe", "-np", str(args.ranks)]
for var in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_SUMMARY", "SCOPE_PROFILER_MPI",
            "SCOPE_PROFILER_MPI_FILTER", "SCOPE_PROFILER_MPI_MAX_NAMES", "ASAN_OPTIONS"):
    if var in env:
        cmd += ["-x", var]
if args.preload:
    # Under ASan the sanitizer runtime must come first in the preload list.
    asan = subprocess.run(["sh", "-c", f"ldd {args.program} | awk '/libasan/ {{print $3}}'"],
                          capture_output=True, text=True).stdout.strip()
    # -x NAME=value: the ranks get it, mpirun itself is not preloaded.
    cmd += ["-x", "LD_PRELOAD=" + ":".join(p for p in (asan, args.preload) if p)]
cmd += [args.program, args.mode if args.mode in ("invalid", "abort") else "plan"]
try:
    run = subprocess.run(cmd, cwd=args.workdir, env=env, capture_output=True, text=True,
                         timeout=150)
except subprocess.TimeoutExpired:
    print("FAIL: the job did not end in 150 s")
    sys.exit(1)
print(run.stdout)
print(run.stderr, file=sys.stderr)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def parse_mpi_region(name):
    """The Python package's decoding: 'mpi:<op>' then key=value tokens."""
    tokens = name.split(" ")
    if not tokens[0].startswith("mpi:"):
        return None
    info = {"op": tokens[0][4:]}
    for token in tokens[1:]:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"{name!r}: token {token!r} is not key=value")
        info[key] = value
    return info


def expected(rank, n, mode):
    """(op, kind, bytes, extra keys...) -> calls of pmpi_app.c's plan."""
    left, right = (rank + n - 1) % n, (rank + 1) % n
    tri = n * (n + 1) // 2
    w = "world"
    e = {}

    def add(calls, op, kind, nbytes=None, **keys):
        d = dict(op=op, kind=kind, lang="native", **{k: str(v) for k, v in keys.items()})
        if nbytes is not None:
            d["bytes"] = str(nbytes)
        key = tuple(sorted(d.items()))
        e[key] = e.get(key, 0) + calls

    if mode == "invalid":
        add(1, "send", "point-to-point", -1, peer=0, tag=0, comm=w)
        add(1, "allreduce", "collective", 4, comm="null")
        add(1, "bcast", "collective", -1, root=0, comm=w)
        return e
    coll, p2p = "collective", "point-to-point"
    add(2, "barrier", coll, 0, comm=w)
    add(3, "bcast", coll, 40, root=0, comm=w)
    add(5, "allreduce", coll, 8, comm=w)
    add(1, "reduce", coll, 16, root=0, comm=w)
    add(4, "irecv", p2p, 400, peer=left, tag=7, comm=w)
    add(4, "isend", p2p, 400, peer=right, tag=7, comm=w)
    add(4, "waitall", "wait", request="mixed")
    add(2, "sendrecv", p2p, 128, peer=right, tag=3, comm=w)
    if n > 1 and rank == 0:
        add(1, "send", p2p, 16, peer=1, tag=5, comm=w)
    if n > 1 and rank == 1:
        add(1, "recv", p2p, 16, peer=0, tag=5, comm=w)
    add(1, "irecv", p2p, 4, peer=right, tag=9, comm=w)
    add(1, "isend", p2p, 4, peer=left, tag=9, comm=w)
    add(1, "wait", "wait", request="irecv")
    add(1, "wait", "wait", request="isend")
    add(1, "test", "wait", request="null")
    add(1, "gather", coll, 8, root=0, comm=w)
    add(1, "gatherv", coll, 4 * (tri if rank == 0 else rank + 1), root=0, comm=w)
    add(1, "scatter", coll, 12, root=0, comm=w)
    add(1, "scatterv", coll, 4 * (tri if rank == 0 else rank + 1), root=0, comm=w)
    add(1, "allgather", coll, 8, comm=w)
    add(1, "allgatherv", coll, 4 * tri, comm=w)
    add(1, "alltoall", coll, 4, comm=w)
    add(1, "alltoallv", coll, 4 * n, comm=w)
    add(1, "reduce_scatter", coll, 4 * n, comm=w)
    add(1, "comm_split", coll, 0, comm=w)
    add(2, "allreduce", coll, 4, comm=1)
    add(1, "comm_free", coll, 0, comm=1)
    add(1, "comm_dup", coll, 0, comm=w)
    add(1, "barrier", coll, 0, comm=2)
    add(1, "comm_free", coll, 0, comm=2)
    if mode == "filter":
        e = {k: v for k, v in e.items() if dict(k)["op"] in ("allreduce", "barrier")}
    return e


if args.mode == "abort":
    check(run.returncode != 0, f"MPI_Abort ends the job with an error, got {run.returncode}")
    print(f"{len(failures)} failed" if failures else "pmpi: all checks passed")
    sys.exit(1 if failures else 0)
check(run.returncode == 0, f"mpirun exit code {run.returncode}")
if args.mode == "off":
    check(not os.path.exists(out), "SCOPE_PROFILER_MPI=off: no session, no file")
    check(run.stdout.count("scope-profiler:") == 0, "off: no report")
else:
    reports = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
    check(len(reports) == 1, f"exactly one report (rank 0 only), got {len(reports)}")
    check(os.path.exists(out), "the job's file exists")
if failures or args.mode == "off":
    print(f"{len(failures)} failed" if failures else "pmpi: all checks passed")
    sys.exit(1 if failures else 0)

with h5py.File(out, "r") as f:
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    rows = [(int(idx["ranks"][i]), names[idx["region_ids"][i]], int(idx["event_counts"][i]))
            for i in range(len(idx["ranks"]))]
    check(int(f["metadata"].attrs.get("mpi_size", 0)) == args.ranks, "mpi_size")

got = {r: {} for r in range(args.ranks)}
total_bytes = {r: 0 for r in range(args.ranks)}
for rank, name, calls in rows:
    info = parse_mpi_region(name)
    if info is None and args.mode == "nested":
        continue  # the program's own region
    check(info is not None, f"{name!r} is an MPI region")
    if info is None:
        continue
    check(info.get("lang") == "native", f"{name!r} carries lang=native")
    check(info["kind"] in ("collective", "point-to-point", "wait"), f"{name!r}: kind")
    for key in ("bytes", "peer", "root", "tag"):
        if key in info:
            int(info[key])  # every number decodes
    key = tuple(sorted(info.items()))
    got[rank][key] = got[rank].get(key, 0) + calls
    total_bytes[rank] += calls * max(int(info.get("bytes", 0)), 0)

if args.mode == "nested":
    for rank in range(args.ranks):
        names = {dict(k)["op"]: v for k, v in got[rank].items()}
        check(names == {"allreduce": 3, "barrier": 1}, f"rank {rank}: MPI calls {names}")
    check(("solve" in [n for _, n, _ in rows]), "the program's own region is in the file")
    import json
    js = subprocess.run([args.inspect, "--json", out], capture_output=True, text=True)
    doc = json.loads(js.stdout) if js.returncode == 0 else {}
    enclosing = doc.get("mpi", {}).get("enclosing", [])
    check([e["region"] for e in enclosing] == ["solve"], f"enclosing regions {enclosing}")
    for e in enclosing:
        check(0 < e["mpi_duration"] <= e["inclusive_duration"], f"MPI time inside solve: {e}")
        check(0 < e["share_pct"] <= 100, f"share of solve: {e}")
    print(f"{len(failures)} failed" if failures else "pmpi: all checks passed")
    sys.exit(1 if failures else 0)

if args.mode == "bounded":
    for rank in range(args.ranks):
        want_ops, got_ops = {}, {}
        for k, v in expected(rank, args.ranks, "plan").items():
            want_ops[dict(k)["op"]] = want_ops.get(dict(k)["op"], 0) + v
        ordinary = 0
        for k, v in got[rank].items():
            d = dict(k)
            got_ops[d["op"]] = got_ops.get(d["op"], 0) + v
            ordinary += d.get("overflow") != "1"
        check(got_ops == want_ops, f"rank {rank}: calls per op {got_ops} == {want_ops}")
        check(ordinary <= 4, f"rank {rank}: {ordinary} ordinary names <= 4")
    print(f"{len(failures)} failed" if failures else "pmpi: all checks passed")
    sys.exit(1 if failures else 0)

for rank in range(args.ranks):
    want = expected(rank, args.ranks, args.mode)
    missing = {k: v for k, v in want.items() if got[rank].get(k) != v}
    extra = {k: v for k, v in got[rank].items() if k not in want}
    check(not missing and not extra,
          f"rank {rank}: regions and call counts differ: missing/wrong {missing}, extra {extra}")
    want_bytes = sum(v * max(int(dict(k).get("bytes", 0)), 0) for k, v in want.items())
    check(total_bytes[rank] == want_bytes,
          f"rank {rank}: byte sum {total_bytes[rank]} == {want_bytes}")

if args.inspect:
    import json
    js = subprocess.run([args.inspect, "--json", out], capture_output=True, text=True)
    check(js.returncode == 0, f"scope-inspect --json: {js.stderr.strip()}")
    doc = json.loads(js.stdout) if js.returncode == 0 else {}
    ops = {(o["op"], o["kind"]): o for o in doc.get("mpi", {}).get("operations", [])}
    want_calls, want_bytes = {}, {}
    for rank in range(args.ranks):
        for k, v in expected(rank, args.ranks, args.mode).items():
            d = dict(k)
            key = (d["op"], d["kind"])
            want_calls[key] = want_calls.get(key, 0) + v
            b = int(d.get("bytes", 0))
            want_bytes[key] = want_bytes.get(key, 0) + (v * b if b >= 0 else 0)
    got_calls = {k: o["calls"] for k, o in ops.items()}
    got_bytes = {k: o["bytes"] for k, o in ops.items()}
    check(got_calls == want_calls, f"inspect calls by op {got_calls} == {want_calls}")
    check(got_bytes == want_bytes, f"inspect bytes by op {got_bytes} == {want_bytes}")
    for o in ops.values():
        check(o["rank_min_duration"] <= o["rank_avg_duration"] <= o["rank_max_duration"],
              f"{o['op']}: rank min <= avg <= max")
    ranks = doc.get("mpi", {}).get("ranks", [])
    check([r["rank"] for r in ranks] == list(range(args.ranks)), "one MPI entry per rank")
    text = subprocess.run([args.inspect, out], capture_output=True, text=True).stdout
    check("\nMPI (" in text and "all MPI" in text, "scope-inspect prints the MPI table")

print(f"{len(failures)} failed" if failures else "pmpi: all checks passed")
sys.exit(1 if failures else 0)
