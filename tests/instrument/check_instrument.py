#!/usr/bin/python3
"""Run a program built with -finstrument-functions and linked with
libscopeprofiler_instrument, then check its file with h5py: every call path
(region names from the root) with its exact count, and what it said on
stderr (tests/instrument, issue 32).

    check_instrument.py --case CASE --program PATH --workdir DIR [--plugin SO --stripped SO]

Cases: c-tree, c-filter, c-filter-files (SCOREP_FILE_NAMES rules, from the
DWARF line tables: the program and its libraries are built with -g, the
stripped plugin has no debug information left), c-regions, c-regions-bad, c-filter-bad,
c-filter-strict, c-throttle, c-throttle-default, c-throttle-off, c-pause,
c-start-paused, c-threads, cxx-tree, fortran-tree, mpi, mpi-exit (no sp_ call:
finalized from inside MPI_Finalize), mpi-exit-pmpi (the same with the PMPI
wrappers linked), mpi-seen (no new function after MPI_Init) (with --mpiexec).
Exit 0 pass, 1 fail, 77 skip (no h5py).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

try:
    import h5py
except ImportError:
    print("SKIP: h5py is not installed")
    sys.exit(77)

ap = argparse.ArgumentParser()
ap.add_argument("--case", required=True)
ap.add_argument("--program", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--plugin")
ap.add_argument("--stripped")
ap.add_argument("--mpiexec", help="run under this launcher (case mpi)")
ap.add_argument("--ranks", type=int, default=1)
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
out = os.path.join(args.workdir, "profile.h5")

env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
env["SCOPE_PROFILER_FILE"] = out
env["SCOPE_PROFILER_SUMMARY"] = "0"

TREE_FILTER = """# keep everything but compute
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE comp*
          plugin_helper
  INCLUDE main
SCOREP_REGION_NAMES_END
"""
# Source files: the linked and the dlopen'ed library's functions go by
# their files; the stripped copy of inst_plugin.c has no debug information,
# so its functions are kept; compute goes by its name.
FILES_FILTER = """SCOREP_FILE_NAMES_BEGIN
  EXCLUDE *inst_shared.c
          */inst_plugin.c
  INCLUDE */inst_app.c
SCOREP_FILE_NAMES_END
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE compute
SCOREP_REGION_NAMES_END
"""
# Line 3 has a pattern before any EXCLUDE or INCLUDE.
BAD_FILTER = """SCOREP_REGION_NAMES_BEGIN
  # a comment
  compute
SCOREP_REGION_NAMES_END
"""

case = args.case
argv = [args.program]
if case.startswith("c-throttle"):
    argv.append("throttle")
elif case in ("c-pause", "c-start-paused", "c-threads"):
    argv.append(case[2:])
elif case.startswith("c-"):
    argv += ["tree", args.plugin, args.stripped]
if case == "c-regions":
    # the core's name filter: applies to user regions and instrumented functions alike
    env["SCOPE_PROFILER_REGIONS"] = "-comp*, -setup phase,-plugin_helper"
if case == "c-regions-bad":
    env["SCOPE_PROFILER_REGIONS"] = "-compute,+"
if case in ("c-filter", "c-filter-files", "c-filter-bad", "c-filter-strict"):
    path = os.path.join(args.workdir, "scorep.filter")
    with open(path, "w") as handle:
        handle.write({"c-filter": TREE_FILTER, "c-filter-files": FILES_FILTER}.get(case, BAD_FILTER))
    env["SCOPE_PROFILER_FILTER"] = path
    if case == "c-filter-strict":
        env["SCOPE_PROFILER_FILTER_STRICT"] = "1"
if case == "c-throttle":
    env["SCOPE_PROFILER_THROTTLE"] = "100,1000"
if case == "c-throttle-off":
    env["SCOPE_PROFILER_THROTTLE"] = "off"
if case == "c-start-paused":
    env["SCOPE_PROFILER_START"] = "paused"

if args.mpiexec:
    # Open MPI leaks its own plugins' allocations at MPI_Finalize; under
    # AddressSanitizer those would fail the run as leaks that are not ours
    # (tests/mpi/check_mpi.py does the same; the non-MPI cases keep leak
    # detection and cover the instrumentation library's memory).
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    launch = [args.mpiexec, "--oversubscribe", "-np", str(args.ranks)]
    for var in sorted(env):
        if var.startswith("SCOPE_PROFILER_") or var == "ASAN_OPTIONS":
            launch += ["-x", var]
    env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    argv = launch + argv
run = subprocess.run(argv, env=env, cwd=args.workdir, capture_output=True, text=True,
                     timeout=120)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def finish():
    if failures:
        print("program stderr:\n" + run.stderr)
        for f in failures:
            print("FAIL: " + f)
        sys.exit(1)
    print("PASS")
    sys.exit(0)


check(run.returncode == 0, f"program exit status {run.returncode}")


def paths_of(f, rank=0):
    """{path tuple: calls} of one rank, from the index, call ids and parent ids."""
    names = [x.decode() for x in f["region_table/names"][:]]
    idx = f["rank_region_index"]
    table = {}
    for i in range(len(idx["ranks"])):
        if int(idx["ranks"][i]) != rank:
            continue
        region = int(idx["region_ids"][i])
        first, count = int(idx["event_offsets"][i]), int(idx["event_counts"][i])
        ids = f["events/call_ids"][first:first + count]
        parents = f["events/parent_ids"][first:first + count]
        for call, parent in zip(ids, parents):
            table[int(call)] = (names[region], int(parent))
    counts = {}
    for call in table:
        path, node = [], call
        while node != -1:
            name, parent = table[node]
            path.append(name)
            node = parent if parent in table else -1
        key = tuple(reversed(path))
        counts[key] = counts.get(key, 0) + 1
    return counts


STRIPPED = re.compile(r"^0x[0-9a-f]+@libinst_stripped\.so$")


def normalise(paths):
    """The stripped library's static function has an address for a name:
    checked by shape, then compared as one placeholder."""
    result = {}
    for path, calls in paths.items():
        key = tuple("<unnamed static>" if STRIPPED.match(n) else n for n in path)
        result[key] = result.get(key, 0) + calls
    return result


def c_tree(filtered, no_phase=False):
    main = ("main",)
    phase = main if no_phase else main + ("setup phase",)
    want = {main: 1, phase: 1}
    if filtered:
        want[phase + ("leaf",)] = 3
    else:
        want[phase + ("compute",)] = 1
        want[phase + ("compute", "leaf")] = 3
    want[main + ("call_plugin",)] = 2
    want[main + ("shared_work",)] = 1
    want[main + ("shared_work", "shared_helper")] = 1
    plugin = main + ("call_plugin", "plugin_entry")
    want[plugin] = 1
    if filtered:
        want[plugin + ("hidden_helper",)] = 1
    else:
        want[plugin + ("plugin_helper",)] = 1
        want[plugin + ("plugin_helper", "hidden_helper")] = 1
    stripped = main + ("call_plugin", "stripped_entry")
    want[stripped] = 1
    want[stripped + ("<unnamed static>",)] = 1
    return want


if case == "c-filter-files" and "SCOREP_FILE_NAMES rules cannot apply" in run.stderr:
    print("SKIP: " + run.stderr.strip())
    sys.exit(77)

if case == "c-filter-strict":
    check("scorep.filter:3: a pattern before EXCLUDE or INCLUDE" in run.stderr,
          "the message names the filter's line 3")
    check("nothing is recorded" in run.stderr, "the message says nothing is recorded")
    check(not os.path.exists(out), "no file is written when the strict filter failed")
    finish()

check(os.path.exists(out), f"{out} was written")
if failures:
    finish()
with h5py.File(out, "r") as f:
    got = normalise(paths_of(f))
    per_rank = [paths_of(f, r) for r in range(args.ranks)]
    ranks_in_file = sorted({int(r) for r in f["rank_region_index/ranks"][:]})
    meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["metadata"].attrs.items()}

if case in ("c-tree", "c-filter", "c-filter-bad", "c-regions", "c-regions-bad"):
    want = c_tree(case in ("c-filter", "c-regions"), case == "c-regions")
    if case == "c-regions-bad":
        check("SCOPE_PROFILER_REGIONS=\"-compute,+\": a '+' or '-' without a pattern; every "
              "region is recorded" in run.stderr, "the message names the bad list")
    if case == "c-filter-bad":
        check("scorep.filter:3: a pattern before EXCLUDE or INCLUDE; the run goes on unfiltered"
              in run.stderr, "the message names the filter's line 3 and says the run goes on")
elif case == "c-filter-files":
    main, phase = ("main",), ("main", "setup phase")
    stripped = main + ("call_plugin", "stripped_entry")
    want = {main: 1, phase: 1, phase + ("leaf",): 3, main + ("call_plugin",): 2,
            stripped: 1, stripped + ("<unnamed static>",): 1}
elif case == "c-throttle":
    want = {("main",): 1, ("main", "tiny"): 100}
    check(re.search(r"throttled tiny after 100 calls", run.stderr),
          "stderr reports tiny throttled after 100 calls")
    check(meta.get("instrument_throttled") == "100 tiny",
          f"metadata instrument_throttled, got {meta.get('instrument_throttled')!r}")
    check(meta.get("instrument_throttle") == "100,1000",
          f"metadata instrument_throttle, got {meta.get('instrument_throttle')!r}")
elif case in ("c-throttle-default", "c-throttle-off"):
    want = {("main",): 1, ("main", "tiny"): 1000}
    check("throttled" not in run.stderr, "nothing throttled")
    check("instrument_throttled" not in meta, "no instrument_throttled metadata")
    check(meta.get("instrument_throttle") == ("off" if case == "c-throttle-off" else "100000,10"),
          f"metadata instrument_throttle, got {meta.get('instrument_throttle')!r}")
elif case == "c-threads":
    want = {("main",): 1, ("worker",): 4, ("worker", "compute"): 200,
            ("worker", "compute", "leaf"): 600}
elif case == "c-pause":
    want = {("main",): 1, ("main", "open across the pause"): 1, ("main", "compute"): 1,
            ("main", "compute", "leaf"): 1, ("main", "tiny"): 1}
    check("without a matching begin" not in run.stderr and "still open" not in run.stderr,
          "no unmatched or nesting message")
elif case == "c-start-paused":
    want = {("compute",): 1, ("compute", "leaf"): 2}
    check("without a matching begin" not in run.stderr, "no unmatched-end message")
elif case in ("mpi", "mpi-exit", "mpi-exit-pmpi", "mpi-seen"):
    want = {("exchange",): 1, ("exchange", "leaf"): 1}
    if case == "mpi-seen":  # step and leaf once before MPI_Init, once after
        want = {("step",): 2, ("step", "leaf"): 2}
    if case == "mpi-exit-pmpi":
        # the wrappers' allreduce region under exchange, by its name's shape
        mpi_paths = [p for p in got if len(p) == 2 and p[1].startswith("mpi:allreduce ")]
        check(len(mpi_paths) == 1 and got.get(mpi_paths[0]) == 1,
              f"one mpi:allreduce call under exchange, got {sorted(got)}")
        for p in mpi_paths:
            got.pop(p)
        for r in range(args.ranks):
            per_rank[r] = {p: c for p, c in per_rank[r].items()
                           if not (len(p) == 2 and p[1].startswith("mpi:allreduce "))}
    check(ranks_in_file == list(range(args.ranks)), f"ranks in the one file: {ranks_in_file}")
    for r in range(1, args.ranks):
        check(per_rank[r] == want, f"rank {r}: call paths {sorted(per_rank[r].items())}")
    # One finalize per rank, one file: no per-rank file written at exit, and
    # no second finalize (it would say it found no session, or write again).
    others = sorted(n for n in os.listdir(args.workdir) if n.endswith(".h5") and n != "profile.h5")
    check(not others, f"no per-rank files beside the job's file, found {others}")
    wrote = run.stdout.count("scope-profiler: wrote") + run.stderr.count("scope-profiler: wrote")
    check(wrote == 1, f"the file is written once, said {wrote} times")
    check("not active" not in run.stderr and "finalized before" not in run.stderr,
          "no second finalize, no 'MPI was finalized before sp_finalize'")
elif case == "cxx-tree":
    solver = ("main", "physics::Solver::run(double)")
    want = {("main",): 1, solver: 1, solver + ("double physics::twice<double>(double)",): 1,
            solver + ("int physics::twice<int>(int)",): 1}
elif case == "fortran-tree":
    program = ("main", "main program")
    want = {("main",): 1, program: 1, program + ("physics::step",): 1,
            program + ("physics::step", "helper"): 1, program + ("rescale",): 1}
    check(not any("unrecorded" in n for p in got for n in p), "nothing recorded while paused")
    check(meta.get("source_language") == "fortran",
          f"source_language fortran, got {meta.get('source_language')}")
else:
    print(f"unknown case {case}")
    sys.exit(2)

check(got == want,
      f"call paths and counts\n  got  {sorted(got.items())}\n  want {sorted(want.items())}")
finish()
