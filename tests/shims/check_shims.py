#!/usr/bin/python3
"""Run a program written against GPTL's, Caliper's or LIKWID's API (built
against our shim, or against the original and run with our shim in
LD_PRELOAD), on N MPI ranks or alone, and check the ONE file it writes with
h5py: per rank, every call path (region names from the root) with its exact
number of calls, and nothing else; the notes the shim must print (each
exactly once per rank) and no other note of that shim; GPTL's tables.

The expected paths follow from the programs (tests/shims/*_app.*): see
EXPECTED below, keyed by (api, language, mode).

Usage: check_shims.py --api gptl|caliper|likwid --lang c|fortran|cxx
       --mode plan|early|bad --program P --workdir W [--mpiexec M --ranks N]
       [--preload LIB] [--threads N]
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import mpi_job  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()

LONG = "n" * 1024  # a 3000-byte name, cut to the bound
NAPS = 3  # gptl_app's "nap" timer: 2, 4 and 6 ms, queried while running
NAP_SLEEP_S = 0.012


def expected(api, lang, mode, rank, threads):
    """{path tuple: calls} of one rank (threads: the OpenMP team of caliper_app)."""
    if mode == "bad":
        return {("outer",) if api != "caliper" else ("a",): 1,
                ("outer", "inner") if api != "caliper" else ("a", "b"): 1,
                (LONG,): 1}
    work = rank + 1
    if api == "gptl":
        return {("total",): 1, ("total", "step"): 3, ("total", "step", "physics"): 3,
                ("total", "step", "dynamics"): 3, ("total", "rank_work"): work,
                ("total", "nap"): NAPS}
    if api == "likwid":
        return {("total",): 1, ("total", "compute"): 3, ("total", "rank_work"): work}
    if lang == "c":
        loop = ("plan", "timeloop")
        paths = {("plan",): 1, ("plan", "setup"): 1, loop: 1, loop + ("iteration#timeloop",): 3,
                 loop + ("iteration#timeloop", "solve"): 3, ("plan", "output"): 1,
                 ("plan", "rank_work"): work}
        if threads:
            paths[("plan", "threaded")] = threads
        return paths
    if lang == "fortran":
        return {("main",): 1, ("main", "setup"): 1, ("main", "solve"): 3,
                ("main", "rank_work"): work}
    loop = ("main", "work", "loop")
    return {("main",): 1, ("main", "work"): 1, loop: 1, loop + ("iteration#loop",): 2,
            loop + ("iteration#loop", "compute"): 2, ("main", "may_throw"): 2}


# The shim's notes each run must print exactly once per rank (regexes).
NOTES = {
    ("gptl", "plan"): [r"GPTLsetoption\(GPTLoverhead\): not implemented"],
    ("gptl", "bad"): [r"GPTLstart before GPTLinitialize", r"GPTLinitialize called again",
                      r"GPTLsetoption after GPTLinitialize", r"handle 12345",
                      r"region names longer than 1024 bytes are cut",
                      r"GPTLget_wallclock\(t = 0\): values are those of the calling thread",
                      r"GPTLstart with a NULL or empty name"],
    ("caliper", "plan"): [r"(cali_config_set|ConfigManager|cali::ConfigManager) is accepted "
                          r"and ignored"],
    ("caliper", "bad"): [r"cali_end_region\(\"nothing_open\"\) with no such region open",
                         r"cali_end_region\(\"a\"\) while \"b\" is the innermost open region",
                         r"attribute id 999999", r"cali_begin_region with a NULL or empty name",
                         r"region names longer than 1024 bytes are cut",
                         r"cali_set_int sets a value, not a region"],
    ("likwid", "plan"): [],
    ("likwid", "bad"): [r"likwid_markerStartRegion before likwid_markerInit",
                        r"region names longer than 1024 bytes are cut",
                        r"likwid_markerResetRegion\(\"outer\"\) accepted",
                        r"likwid_markerGetRegion\(\"outer\"\) gives zeros"],
}
API_NAME = {"gptl": "GPTL", "caliper": "Caliper", "likwid": "LIKWID markers"}
# Mismatched stops are the core's to report (its own words, once each).
CORE_NOTES = {("gptl", "bad"): [r"never_started", r"\bouter\b.*\binner\b|\binner\b.*\bouter\b"],
              ("likwid", "bad"): [r"never_started", r"\bouter\b.*\binner\b|\binner\b.*\bouter\b"]}

ap = argparse.ArgumentParser()
ap.add_argument("--api", required=True, choices=sorted(API_NAME))
ap.add_argument("--lang", required=True, choices=["c", "fortran", "cxx"])
ap.add_argument("--mode", required=True, choices=["plan", "early", "bad"])
ap.add_argument("--threads", type=int, default=0,
                help="caliper_app was built with OpenMP: its team of this many threads")
ap.add_argument("--program", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--mpiexec")
ap.add_argument("--ranks", type=int, default=1)
ap.add_argument("--preload", help="the shim to LD_PRELOAD (the program links the original)")
args = ap.parse_args()

outputs.fresh_workdir(args.workdir)
out = os.path.join(args.workdir, "job.h5")
env = mpi_job.job_env(drop=("SCOPE_PROFILER_QUIET", "SCOPE_PROFILER_MODE", "LD_PRELOAD",
                            "LIKWID_EVENTS", "LIKWID_FILEPATH", "SCOPE_PROFILER_LIKWID"),
                      SCOPE_PROFILER_FILE=out, SCOPE_PROFILER_DISABLE="0")
argv = [args.program, args.mode]
if args.mpiexec:
    cmd = mpi_job.launch(args.mpiexec, args.ranks,
                         ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_DISABLE", "ASAN_OPTIONS"), argv,
                         preload=args.preload)
else:
    cmd = argv
    if args.preload:
        env["LD_PRELOAD"] = mpi_job.preload_list(args.program, args.preload)
run = mpi_job.run(cmd, args.workdir, env, what="the run")
check = checks.Checks("shims")


check(run.returncode == 0, f"exit code {run.returncode}")
reports = [l for l in run.stdout.splitlines() if l.startswith("scope-profiler: wrote")]
check(len(reports) == 1, f"exactly one report (rank 0 only), got {len(reports)}")
check(os.path.isfile(out), "the job's one file exists")
stray = [n for n in os.listdir(args.workdir) if n.endswith(".h5") and n != "job.h5"]
check(not stray, f"no other profile files: {stray}")

# Notes: per rank, each expected one exactly once, and no other note of
# the shim (a spurious "before GPTLinitialize" would be a bug).
notes = NOTES[(args.api, "plan" if args.mode == "early" else args.mode)]
if args.api == "gptl" and args.lang == "fortran":
    notes = notes + [r"GPTLstop before GPTLinitialize"]  # the stop after gptlfinalize
for rank in range(args.ranks):
    # The core's lines and ours: "scope-profiler: [rank N] ..." above rank 0.
    prefix = "scope-profiler: " + (f"[rank {rank}] " if rank > 0 else "")
    lines = [l[len(prefix):] for l in run.stderr.splitlines() if l.startswith(prefix)]
    if rank == 0:
        lines = [l for l in lines if not l.startswith("[rank ")]
    ours = [l for l in lines if l.startswith(f"{API_NAME[args.api]}: ")]
    for pattern in notes:
        hits = [l for l in ours if re.search(pattern, l)]
        check(len(hits) == 1, f"rank {rank}: note /{pattern}/ once, got {len(hits)}")
    for line in ours:
        check(any(re.search(p, line) for p in notes), f"rank {rank}: unexpected note: {line}")
    for pattern in CORE_NOTES.get((args.api, args.mode), []):
        hits = [l for l in lines if l not in ours and re.search(pattern, l)]
        check(len(hits) == 1, f"rank {rank}: core message /{pattern}/ once, got {len(hits)}")
if check.failures:
    check.finish()


def paths_of(f):
    """{rank: {path: calls}} from the index, the call ids and parent ids."""
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    calls = {}  # rank -> {call id: (name, parent id)}
    for i in range(len(idx["ranks"])):
        rank, region = int(idx["ranks"][i]), int(idx["region_ids"][i])
        first, count = int(idx["event_offsets"][i]), int(idx["event_counts"][i])
        ids = f["events/call_ids"][first:first + count]
        parents = f["events/parent_ids"][first:first + count]
        for call, parent in zip(ids, parents):
            calls.setdefault(rank, {})[int(call)] = (names[region], int(parent))
    result = {}
    for rank, table in calls.items():
        counts = result.setdefault(rank, {})
        for call in table:
            path, node = [], call
            while node != -1:
                name, parent = table[node]
                path.append(name)
                check(parent < node, f"rank {rank}: parent {parent} < call {node}")
                node = parent if parent in table or parent == -1 else -1
            counts[tuple(reversed(path))] = counts.get(tuple(reversed(path)), 0) + 1
    return result


def nap_seconds(f):
    """{rank: summed duration of its "nap" calls, s} from the file."""
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    sums = {}
    for i in range(len(idx["ranks"])):
        if names[int(idx["region_ids"][i])] != "nap":
            continue
        first, count = int(idx["event_offsets"][i]), int(idx["event_counts"][i])
        rank = int(idx["ranks"][i])
        sums[rank] = sums.get(rank, 0) + int(f["events/durations"][first:first + count].sum())
    return {rank: ns * 1e-9 for rank, ns in sums.items()}


with h5py.File(out, "r") as f:
    got = paths_of(f)
    naps = nap_seconds(f)
    meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["metadata"].attrs.items()}
check(sorted(got) == list(range(args.ranks)), f"ranks in the file: {sorted(got)}")
for rank in range(args.ranks):
    want = expected(args.api, args.lang, "plan" if args.mode == "early" else args.mode, rank,
                    args.threads)
    have = got.get(rank, {})
    short = {tuple(n if len(n) < 40 else n[:8] + f"...({len(n)})" for n in p): c
             for p, c in have.items()}
    check(have == want, f"rank {rank}: call paths and counts\n  got  {short}")
if args.mpiexec:
    check(int(meta.get("mpi_size", 1)) == args.ranks, f"mpi_size {meta.get('mpi_size')}")
language = "fortran" if args.lang == "fortran" else "c"
check(meta.get("source_language") == language,
      f"source_language {meta.get('source_language')!r} == {language!r}")

# GPTLquery/GPTLget_wallclock after the naps: the count, and the wall time
# of the calls the file holds (to the clock's conversion, 2 us), which is at
# least the time slept.
if args.api == "gptl" and args.mode in ("plan", "early"):
    for rank in range(args.ranks):
        said = re.search(rf"gptl_app: rank {rank} nap count (\d+) wallclock\s+([0-9.]+)",
                         run.stdout)
        check(said is not None, f"rank {rank}: the program printed its GPTLquery values")
        if said:
            count, wall = int(said.group(1)), float(said.group(2))
            in_file = naps.get(rank, 0.0)
            check(count == NAPS, f"rank {rank}: GPTLquery count {count} == {NAPS}")
            check(wall >= NAP_SLEEP_S and abs(wall - in_file) <= 2e-6 + 1e-4 * in_file,
                  f"rank {rank}: GPTLquery wallclock {wall:.9f} s: >= {NAP_SLEEP_S} s slept "
                  f"and == the file's {in_file:.9f} s")

# GPTLpr: this process's table in timing.<rank>; GPTLpr_summary (C):
# the job's table, written once.
if args.api == "gptl" and args.mode in ("plan", "early"):
    for rank in range(args.ranks):
        table = os.path.join(args.workdir, f"timing.{rank}")
        text = open(table).read() if os.path.isfile(table) else ""
        calls = re.search(r"rank_work\s+(\d+)\s", text)
        check("physics" in text and calls and int(calls.group(1)) == rank + 1,
              f"{table} holds the rank's own table (rank_work called {rank + 1} times):\n{text}")
    if args.lang == "c":
        summary = os.path.join(args.workdir, "timing.summary")
        text = open(summary).read() if os.path.isfile(summary) else ""
        check("dynamics" in text and "(GPTLpr_summary)" in text,
              f"{summary} holds the job's table:\n{text}")
check.finish()
