#!/usr/bin/python3
"""read_threads.py - scope-inspect on one large file with the event columns
read through HDF5's filters (SCOPE_PROFILER_READ_VALUE_PATH=1, what every
read did before issue 31) and through the chunk stream with 0, 1, 2 and 4
helper threads (SCOPE_PROFILER_READ_THREADS), in interleaved rounds, so
that every configuration sees the same machine load.

    read_threads.py SCOPE_INSPECT FILE CALLS [ROUNDS]

Per configuration: median and range of wall time, CPU time (user + sys of
the tool and its supervised reading child, GNU time), calls per second of
wall time (CALLS / median wall), peak RSS; the load average before and
after. The output tables of every run must be identical (checked).
"""
import os
import statistics
import subprocess
import sys

CONFIGS = [("HDF5 filters (before)", {"SCOPE_PROFILER_READ_VALUE_PATH": "1"}),
           ("stream, 0 helpers", {"SCOPE_PROFILER_READ_THREADS": "0"}),
           ("stream, 1 helper", {"SCOPE_PROFILER_READ_THREADS": "1"}),
           ("stream, 2 helpers", {"SCOPE_PROFILER_READ_THREADS": "2"}),
           ("stream, 4 helpers", {"SCOPE_PROFILER_READ_THREADS": "4"})]


def run(tool, path, env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("SCOPE_PROFILER_READ_VALUE_PATH", "SCOPE_PROFILER_READ_THREADS")}
    full.update(env)
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M", tool, "--ascii", path],
                         capture_output=True, text=True, env=full)
    if out.returncode != 0:
        sys.exit(f"{env}: exit {out.returncode}: {out.stderr[:300]}")
    wall, user, system, rss = out.stderr.strip().splitlines()[-1].split()[1:]
    return float(wall), float(user) + float(system), int(rss) / 1024.0, out.stdout


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    tool, path, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    load_before = os.getloadavg()
    results = {label: [] for label, _ in CONFIGS}
    reference = None
    for _ in range(rounds):
        for label, env in CONFIGS:
            wall, cpu, rss, text = run(tool, path, env)
            if reference is None:
                reference = text
            elif text != reference:
                sys.exit(f"{label}: the table differs from the first run's")
            results[label].append((wall, cpu, rss))
    load_after = os.getloadavg()
    print(f"file: {path} ({calls} calls), {rounds} interleaved rounds, "
          f"load {load_before[0]:.1f} before, {load_after[0]:.1f} after, "
          f"{os.cpu_count()} CPUs")
    print(f"{'configuration':24} {'wall s (median, range)':26} {'CPU s (median, range)':26} "
          f"{'M calls/s':>9} {'peak RSS MiB':>12}")
    for label, _ in CONFIGS:
        walls = [r[0] for r in results[label]]
        cpus = [r[1] for r in results[label]]
        rss = max(r[2] for r in results[label])
        wall = statistics.median(walls)
        cpu = statistics.median(cpus)
        print(f"{label:24} {wall:7.2f} ({min(walls):.2f}-{max(walls):.2f})".ljust(51) +
              f"{cpu:7.2f} ({min(cpus):.2f}-{max(cpus):.2f})".ljust(27) +
              f"{calls / wall / 1e6:9.2f} {rss:12.1f}")


if __name__ == "__main__":
    main()
