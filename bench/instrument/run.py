#!/usr/bin/python3
"""bench/instrument/run.py BUILD_DIR: what compiler instrumentation costs
(issue 32), measured against the same programs built without
-finstrument-functions, in interleaved rounds (plain, instrumented, plain,
...) so that a change in the machine's load hits both alike. Reports the
median and the range of the rounds, wall and CPU (user + system) time, and
the load average before and after. Results: RESULTS.md beside this script.

  (a) overhead: kernel.c (a Jacobi sweep calling a small point function
      10^8 times, then a blocked matrix multiply), default throttling;
      and built as a user does once the report named the throttled
      function: -finstrument-functions-exclude-function-list=relax_point.
      Goal <= 10% wall.
  (b) per call: hot.c, one tiny function called 10^8 times, excluded by a
      filter file, and throttled by the default rule. Goal <= 5 ns per call
      excluded, against the same call not instrumented.
  (c) names: a generated program of 100,000 distinct functions each called
      once. Names are resolved at each function's first call; run with
      SCOPE_PROFILER_START=paused, the hooks still resolve every name but
      nothing is recorded, so (paused - plain) is the resolution (plus the
      library's start and an empty file). Goal < 1 s. Recorded, the
      finalize's own time is what the library's report line says.

Compiles with gcc against BUILD_DIR's libscopeprofiler_instrument (an
in-tree build: BUILD_DIR/instrument and BUILD_DIR/c). Options: --rounds N
(default 5), --functions N (default 100000), --skip a,b,c.

(a) and (b) also run each instrumented case with SCOPE_PROFILER_PATCH=0
(the silenced hooks without call-site patching) and, with --before
OLD_BUILD_DIR, linked against another build of the library (the code
before a change), all in the same interleaved rounds.
"""
import argparse
import atexit
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--functions", type=int, default=100000)
ap.add_argument("--skip", default="")
ap.add_argument("--before", help="another in-tree build of the library to compare with")
args = ap.parse_args()
skip = set(filter(None, args.skip.split(",")))
build = os.path.abspath(args.build)
libdir = os.path.join(build, "instrument")
if not os.path.exists(os.path.join(libdir, "libscopeprofiler_instrument.so")):
    sys.exit(f"no {libdir}/libscopeprofiler_instrument.so: build the library first")
work = tempfile.mkdtemp(prefix="sp-bench-inst-")
atexit.register(lambda: subprocess.run(["rm", "-rf", work]))
link = ["-L" + libdir, "-lscopeprofiler_instrument",
        "-Wl,-rpath," + libdir + ":" + os.path.join(build, "c")]


def link_flags(build_dir):
    lib = os.path.join(build_dir, "instrument")
    return ["-L" + lib, "-lscopeprofiler_instrument",
            "-Wl,-rpath," + lib + ":" + os.path.join(build_dir, "c")]


def compile_pair(sources, name, extra=()):
    plain = os.path.join(work, name + "_plain")
    inst = os.path.join(work, name + "_inst")
    subprocess.run(["gcc", "-O2", *extra, *sources, "-o", plain], check=True)
    subprocess.run(["gcc", "-O2", "-finstrument-functions", *extra, *sources, "-o", inst, *link],
                   check=True)
    return plain, inst


def compile_before(sources, name, extra=()):
    """The instrumented program linked with --before's library, or None."""
    if not args.before:
        return None
    inst = os.path.join(work, name + "_before")
    subprocess.run(["gcc", "-O2", "-finstrument-functions", *extra, *sources, "-o", inst,
                    *link_flags(os.path.abspath(args.before))], check=True)
    return inst


def run_once(argv, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env.update({"SCOPE_PROFILER_FILE": os.path.join(work, "bench.h5"),
                "SCOPE_PROFILER_SUMMARY": "0"})
    env.update(env_extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{argv} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def interleaved(variants, rounds):
    """variants: [(label, argv, env)] -> {label: ([walls], [cpus], last stderr)}"""
    got = {label: ([], [], "") for label, _, _ in variants}
    for _ in range(rounds):
        for label, argv, env in variants:
            wall, cpu, err = run_once(argv, env)
            got[label][0].append(wall)
            got[label][1].append(cpu)
            got[label] = (got[label][0], got[label][1], err)
    return got


def spread(values):
    return f"{statistics.median(values):.3f} s [{min(values):.3f}, {max(values):.3f}]"


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


print(f"# bench/instrument ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}), "
      f"{os.cpu_count()} CPUs, {args.rounds} interleaved rounds; {load()}")

if "a" not in skip:
    plain, inst = compile_pair([os.path.join(HERE, "kernel.c")], "kernel")
    _, inst_ex = compile_pair([os.path.join(HERE, "kernel.c")], "kernel_ex",
                              ("-finstrument-functions-exclude-function-list=relax_point",))
    before = compile_before([os.path.join(HERE, "kernel.c")], "kernel")
    variants = [("plain", [plain], {}), ("instrumented", [inst], {}),
                ("patch-off", [inst], {"SCOPE_PROFILER_PATCH": "0"}),
                ("compile-excl", [inst_ex], {})]
    if before:
        variants.append(("before", [before], {}))
    got = interleaved(variants, args.rounds)
    print("\n## (a) kernel.c: Jacobi (10^8 calls of relax_point) + matmul, default throttling")
    for label in got:
        print(f"  {label:13s} wall {spread(got[label][0])}   cpu {spread(got[label][1])}")
    for label in [v[0] for v in variants[1:]]:
        for i, what in ((0, "wall"), (1, "cpu")):
            ratio = statistics.median(got[label][i]) / statistics.median(got["plain"][i])
            print(f"  {label} overhead ({what}, medians): {100 * (ratio - 1):+.1f}%  "
                  f"(goal <= 10%)")
    print("  the library said: " + " | ".join(
        line for line in got["instrumented"][2].splitlines()
        if "throttled" in line or "patched" in line))
    print(f"  {load()}")

if "b" not in skip:
    calls = 100000000
    plain, inst = compile_pair([os.path.join(HERE, "hot.c")], "hot")
    filt = os.path.join(work, "exclude_tiny.filter")
    with open(filt, "w") as handle:
        handle.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE tiny\nSCOREP_REGION_NAMES_END\n")
    before = compile_before([os.path.join(HERE, "hot.c")], "hot")
    off = {"SCOPE_PROFILER_PATCH": "0"}
    variants = [("plain", [plain, str(calls)], {}),
                ("excluded", [inst, str(calls)], {"SCOPE_PROFILER_FILTER": filt}),
                ("throttled", [inst, str(calls)], {}),
                ("excl-nopatch", [inst, str(calls)], {"SCOPE_PROFILER_FILTER": filt, **off}),
                ("thr-nopatch", [inst, str(calls)], off)]
    if before:
        variants += [("excl-before", [before, str(calls)], {"SCOPE_PROFILER_FILTER": filt}),
                     ("thr-before", [before, str(calls)], {})]
    got = interleaved(variants, args.rounds)
    print(f"\n## (b) hot.c: tiny() called {calls:.0e} times")
    for label in got:
        print(f"  {label:13s} wall {spread(got[label][0])}   cpu {spread(got[label][1])}")
    for label in [v[0] for v in variants[1:]]:
        for i, what in ((0, "wall"), (1, "cpu")):
            per_call = [(x - statistics.median(got["plain"][i])) / calls * 1e9
                        for x in got[label][i]]
            print(f"  {label} - plain, per call ({what}): median "
                  f"{statistics.median(per_call):.2f} ns [{min(per_call):.2f}, "
                  f"{max(per_call):.2f}]  (goal <= 5 ns excluded)")
    print(f"  {load()}")

if "c" not in skip:
    n = args.functions
    parts = 4
    sources = []
    per = (n + parts - 1) // parts
    for p in range(parts):
        path = os.path.join(work, f"many_{p}.c")
        with open(path, "w") as out:
            for i in range(p * per, min(n, (p + 1) * per)):
                out.write(f"__attribute__((noinline)) int fn_{i:06d}(int x) {{ return x + {i}; }}\n")
        sources.append(path)
    main = os.path.join(work, "many_main.c")
    with open(main, "w") as out:
        out.write("#include <stdio.h>\n")
        for i in range(n):
            out.write(f"int fn_{i:06d}(int);\n")
        out.write("static int (*const table[])(int) = {\n")
        out.write(",\n".join(f"fn_{i:06d}" for i in range(n)))
        out.write("};\nint main(void) {\n  int acc = 0;\n"
                  "  for (unsigned i = 0; i < sizeof table / sizeof *table; i++) "
                  "acc += table[i](1);\n  printf(\"%d\\n\", acc);\n  return 0;\n}\n")
    sources.append(main)
    t0 = time.perf_counter()
    plain, inst = compile_pair(sources, "many", ("-O0",))
    print(f"\n## (c) {n} distinct functions, each called once (compiled in "
          f"{time.perf_counter() - t0:.0f} s)")
    got = interleaved([("plain", [plain], {}),
                       ("paused", [inst], {"SCOPE_PROFILER_START": "paused"}),
                       ("instrumented", [inst], {})], args.rounds)
    for label in got:
        print(f"  {label:13s} wall {spread(got[label][0])}   cpu {spread(got[label][1])}")
    for i, what in ((0, "wall"), (1, "cpu")):
        extra = [x - statistics.median(got["plain"][i]) for x in got["paused"][i]]
        print(f"  paused - plain ({what}): median {statistics.median(extra):.3f} s "
              f"[{min(extra):.3f}, {max(extra):.3f}]  (resolving {n} names; goal < 1 s)")
    print("  the library said: " + " | ".join(
        line for line in got["instrumented"][2].splitlines() if "wrote" in line))
    print(f"  {load()}")
