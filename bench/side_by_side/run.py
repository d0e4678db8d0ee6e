#!/usr/bin/env python3
"""bench/side_by_side/run.py - our begin/end pair against two baselines
measured in the same run (2 x rdtsc, 2 x clock_gettime) and, when a GPTL
snapshot is at hand, GPTL's handle path: issue 31's table.

Builds pairs.c (as C, and as C++ for the binding's rows) and pairs.f90
against the INSTALLED Release library through pkg-config (PKG_CONFIG_PATH,
or --prefix), as a user's program is built;
then runs interleaved rounds (every configuration once per round, one
process each, pinned with taskset when available) of N begin/end pairs of
one region. Each of our processes writes its file as a user's run does
(default settings: summary printed, finalize paid), timed apart from the
loop. Reports per configuration the ns per pair (median, min, max over the
rounds) and the ratio of the median and of the min to 2 x rdtsc's, the
process CPU time per pair (median; not inflated by preemption on a loaded
machine, and it includes any helper thread's work), with the load average
at start and end, as a markdown table and as JSON.

    run.py [--prefix DIR] [--rounds 5] [--pairs 20000000] [--cpu N]
           [--gptl DIR] [--json FILE] [--keep DIR] [--only NAME,...]

--gptl DIR: a GPTL source tree (e.g. `git archive` of a fetched
jmrosinski/GPTL snapshot, unpacked in /tmp); it is compiled into a static
library in the work directory (no MPI, no threading, GPTLnanotime). Without
it, or when it does not compile, GPTL's rows are skipped with a note.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (program, kind, environment). Program "c", "cxx", "fortran" or "gptl".
TSC = {"SCOPE_PROFILER_CLOCK": "tsc"}
CONFIGS = [
    ("2 x rdtsc", "c", "rdtsc", {}),
    ("2 x clock_gettime", "c", "clock_gettime", {}),
    ("ours, handle, TSC, trace (default bound)", "c", "handle", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, handle, TSC, trace, no bound", "c", "handle",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, handle, TSC, aggregate", "c", "handle", dict(TSC, SCOPE_PROFILER_MODE="aggregate")),
    ("ours, by name, TSC, trace (C)", "c", "byname", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, call-site macro, TSC, trace (C)", "c", "site", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, C++ scope on a region, TSC, trace", "cxx", "cxx_region",
     dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, C++ SP_SCOPE(\"solve\"), TSC, trace", "cxx", "cxx_scope",
     dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, Fortran handle, TSC, trace", "fortran", "handle", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, Fortran by name, TSC, trace", "fortran", "byname", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    # the by-name cost apart from the spill's (issue 31: by name <= handle + 5 ns)
    ("ours, by name, TSC, trace, no bound (C)", "c", "byname",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, call-site macro, TSC, trace, no bound (C)", "c", "site",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, Fortran handle, TSC, trace, no bound", "fortran", "handle",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, Fortran by name, TSC, trace, no bound", "fortran", "byname",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, Fortran handle, TSC, aggregate", "fortran", "handle",
     dict(TSC, SCOPE_PROFILER_MODE="aggregate")),
    ("ours, Fortran by name, TSC, aggregate", "fortran", "byname",
     dict(TSC, SCOPE_PROFILER_MODE="aggregate")),
    ("ours, three nested, TSC, trace", "c", "nested", dict(TSC, SCOPE_PROFILER_MODE="trace")),
    ("ours, three nested, TSC, trace, no bound", "c", "nested",
     dict(TSC, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="0")),
    ("ours, three nested, TSC, aggregate", "c", "nested", dict(TSC, SCOPE_PROFILER_MODE="aggregate")),
    ("GPTL, nanotime + handles", "gptl", "gptl", {}),
    ("GPTL, three nested, nanotime + handles", "gptl", "gptl_nested", {}),
]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def pkg_config(*args):
    return subprocess.run(["pkg-config", *args], check=True, capture_output=True,
                          text=True).stdout.split()


def build(work, gptl_src):
    """The programs; returns {program: path} (gptl absent when not built)."""
    cc = os.environ.get("CC", "cc")
    fc = os.environ.get("FC", "gfortran")
    exes = {}
    exes["c"] = os.path.join(work, "pairs")
    subprocess.run([cc, "-O2", "-o", exes["c"], os.path.join(HERE, "pairs.c"),
                    *pkg_config("--cflags", "--libs", "scopeprofiler")], check=True)
    try:
        # the same program compiled as C++, for the C++ binding's kinds
        exes["cxx"] = os.path.join(work, "pairs_cxx")
        subprocess.run([os.environ.get("CXX", "c++"), "-O2", "-x", "c++", "-o", exes["cxx"],
                        os.path.join(HERE, "pairs.c"), "-x", "none",
                        *pkg_config("--cflags", "--libs", "scopeprofiler")], check=True)
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"note: C++ configurations skipped ({e})", file=sys.stderr)
        exes.pop("cxx", None)
    try:
        flags = pkg_config("--cflags", "--libs", "scopeprofiler-fortran")
        exes["fortran"] = os.path.join(work, "pairs_f")
        subprocess.run([fc, "-O2", "-J", work, "-o", exes["fortran"],
                        os.path.join(HERE, "pairs.f90"), *flags], check=True)
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"note: Fortran configurations skipped ({e})", file=sys.stderr)
        exes.pop("fortran", None)
    if gptl_src:
        try:
            exes["gptl"] = build_gptl(cc, work, gptl_src)
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"note: GPTL skipped, it did not build ({e})", file=sys.stderr)
    else:
        print("note: no --gptl source tree: GPTL's rows skipped", file=sys.stderr)
    return exes


def build_gptl(cc, work, src):
    """GPTL's core as a static library, configured by hand (its build is
    autotools): x86 nanotime, no MPI, no PAPI, no threading."""
    gdir = os.path.join(work, "gptl")
    os.makedirs(gdir, exist_ok=True)
    open(os.path.join(gdir, "config.h"), "w").close()
    defines = ["-DHAVE_NANOTIME", "-DBIT64", "-DHAVE_LIBRT", "-DHAVE_TIMES",
               "-DHAVE_GETTIMEOFDAY", "-DHAVE_SLASHPROC", '-DGPTL_VERSIONINFO="snapshot"']
    objects = []
    for name in ["gptl", "util", "getoverhead", "hashstats", "memstats", "memusage",
                 "thread_none"]:
        obj = os.path.join(gdir, name + ".o")
        subprocess.run([cc, "-O2", "-c", "-I", gdir, "-I", os.path.join(src, "include"),
                        "-I", os.path.join(src, "src"), *defines,
                        os.path.join(src, "src", name + ".c"), "-o", obj], check=True,
                       capture_output=True)
        objects.append(obj)
    lib = os.path.join(gdir, "libgptl.a")
    subprocess.run(["ar", "rcs", lib, *objects], check=True)
    exe = os.path.join(work, "pairs_gptl")
    subprocess.run([cc, "-O2", "-DWITH_GPTL", "-I", os.path.join(src, "include"), "-o", exe,
                    os.path.join(HERE, "pairs.c"), lib, "-lm"], check=True)
    return exe


def run_one(exe, kind, env_extra, pairs, work, pin):
    env = dict(os.environ)
    for key in ["SCOPE_PROFILER_MODE", "SCOPE_PROFILER_CLOCK", "SCOPE_PROFILER_BUFFER_LIMIT",
                "SCOPE_PROFILER_FILE", "SCOPE_PROFILER_SUMMARY", "SCOPE_PROFILER_QUIET"]:
        env.pop(key, None)
    env.update(env_extra)
    output = os.path.join(work, "out.h5" if "gptl" not in kind else "gptl_timing.txt")
    if os.path.exists(output):
        os.unlink(output)
    proc = subprocess.run([*pin, exe, kind, str(pairs), output], env=env, cwd=work,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if line.startswith("RESULT "):
            fields = dict(item.split("=") for item in line.split()[1:])
            if proc.returncode != 0 or fields.get("status") != "0":
                raise RuntimeError(f"{exe} {kind}: status {fields.get('status')}, "
                                   f"exit {proc.returncode}: {proc.stderr[-500:]}")
            return (float(fields["loop_ns_per_pair"]), float(fields["loop_cpu_ns_per_pair"]),
                    float(fields["finalize_s"]))
    raise RuntimeError(f"{exe} {kind} printed no RESULT (exit {proc.returncode}): "
                       f"{proc.stderr[-500:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", help="install prefix (sets PKG_CONFIG_PATH)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=20_000_000)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--gptl", help="GPTL source tree (optional)")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one)")
    ap.add_argument("--only", help="comma-separated substrings of configuration names")
    args = ap.parse_args()
    if args.prefix:
        os.environ["PKG_CONFIG_PATH"] = os.path.join(args.prefix, "lib", "pkgconfig")
    work = args.keep or tempfile.mkdtemp(prefix="sp_side_by_side.")
    os.makedirs(work, exist_ok=True)
    try:
        exes = build(work, args.gptl)
        pin = ["taskset", "-c", str(args.cpu)] if shutil.which("taskset") else []
        configs = [c for c in CONFIGS if c[1] in exes]
        if args.only:
            wanted = args.only.split(",")
            configs = [c for c in configs
                       if c[0].startswith("2 x") or any(w in c[0] for w in wanted)]
        load_start = loadavg()
        loops = {c[0]: [] for c in configs}
        cpus = {c[0]: [] for c in configs}
        finals = {c[0]: [] for c in configs}
        for r in range(args.rounds):
            for name, program, kind, env in configs:
                ns, cpu, fin = run_one(exes[program], kind, env, args.pairs, work, pin)
                loops[name].append(ns)
                cpus[name].append(cpu)
                finals[name].append(fin)
            print(f"round {r + 1}/{args.rounds} done, load {loadavg()}", file=sys.stderr)
        load_end = loadavg()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    floor = loops["2 x rdtsc"]
    floor_median, floor_min = statistics.median(floor), min(floor)
    cpu_floor = statistics.median(cpus["2 x rdtsc"])
    rows = []
    for name, *_ in configs:
        v = loops[name]
        rows.append({"configuration": name, "median_ns": statistics.median(v), "min_ns": min(v),
                     "max_ns": max(v), "ratio_median": statistics.median(v) / floor_median,
                     "ratio_min": min(v) / floor_min,
                     "cpu_median_ns": statistics.median(cpus[name]),
                     "cpu_ratio_median": statistics.median(cpus[name]) / cpu_floor,
                     "finalize_s_median": statistics.median(finals[name]), "samples_ns": v,
                     "cpu_samples_ns": cpus[name]})
    result = {"pairs": args.pairs, "rounds": args.rounds, "cpu_pinned": args.cpu if pin else None,
              "nproc": os.cpu_count(), "load_start": load_start, "load_end": load_end,
              "rows": rows}
    print(f"{args.pairs} pairs per process, {args.rounds} interleaved rounds, "
          f"{'pinned to cpu ' + str(args.cpu) if pin else 'not pinned'}, "
          f"{os.cpu_count()} cpus; load average at start {load_start}, at end {load_end}\n")
    print("| configuration | median ns/pair | min | max | median / 2 x rdtsc | min / min 2 x rdtsc "
          "| CPU ns/pair (median) | CPU / 2 x rdtsc | finalize s (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['configuration']} | {row['median_ns']:.1f} | {row['min_ns']:.1f} | "
              f"{row['max_ns']:.1f} | {row['ratio_median']:.2f} | {row['ratio_min']:.2f} | "
              f"{row['cpu_median_ns']:.1f} | {row['cpu_ratio_median']:.2f} | "
              f"{row['finalize_s_median']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
