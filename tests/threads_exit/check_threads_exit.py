#!/usr/bin/python3
"""check_threads_exit.py CASE APP SCOPE_CHECK WORKDIR: many short-lived
threads (threads_exit_app.c): what the recorder keeps of exited threads
and fork() in a process that ran them.

Cases (4,000 threads in waves of 8, one or two calls each, plus a few by
name; 8 of them exit inside a call):
  trace    every call in the file (counts per region exact, each "b" under
           an "a" of its thread), every thread in the thread table (name,
           ids, start/end, cpu), scope-check passes, peak RSS < 64 MiB
  aggregate  the same through the aggregate rows and call paths (exited
           threads' paths folded into one table)
  spill    a trace with a 256 KiB limit that flushes: exited threads' last
           events go to the spill file; the same checks, the report counts
           the flushes
  mixed    a 384 KiB limit on CLOCK_MONOTONIC: exited threads' events partly
           packed in memory, partly spilled; the same checks
  forks    ten children forked over the run while threads attach and
           exit, three more during sp_finalize: each finds no session,
           records nothing and exits 0 (one profiles itself); the parent's
           file is complete
The memory bound is skipped in sanitizer builds (their shadow memory is
not the library's).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

case, app, scope_check, workdir = sys.argv[1:5]
outputs.fresh_workdir(workdir)
check = checks.Checks(f"threads exit {case}")

THREADS, WAVE = 4000, 8
MAIN_CALLS_PER_WAVE = 50
RSS_LIMIT_KIB = 64 << 10


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def expected_counts(threads):
    waves = (threads + WAVE - 1) // WAVE
    return {"a": threads,
            "b": sum(1 for i in range(threads) if i % 2),
            "named": sum(1 for i in range(threads) if i % 3 == 0),
            "main.loop": waves * MAIN_CALLS_PER_WAVE}


def open_threads(threads):
    return [i for i in range(threads) if i % 500 == 250]


def run(out, forks=0, **env):
    e = dict(os.environ, SCOPE_PROFILER_SUMMARY="0", SCOPE_PROFILER_QUIET="")
    e.update(env)
    # A child forked while a wave's threads exit inherits them as threads
    # "finished, not joined" that it cannot join: ThreadSanitizer's leak
    # report at its _exit would fail it. Races are still reported.
    e["TSAN_OPTIONS"] = (e.get("TSAN_OPTIONS", "") + " report_thread_leaks=0").strip()
    p = subprocess.run([app, out, str(THREADS), str(WAVE), str(forks)], env=e,
                       capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == 0, f"exit {p.returncode}")
    values = dict(re.findall(r"\b(\w+)=(-?\d+)", p.stdout))
    return {k: int(v) for k, v in values.items()}, p


def check_threads(f):
    """Every thread in the thread table, with its ids and times."""
    check("thread_table" in f, "the file has a thread table")
    if "thread_table" not in f:
        return {}
    tt = f["thread_table"]
    names = [text(n) for n in tt["name"][:]]
    index = [int(i) for i in tt["index"][:]]
    start, end, cpu = tt["start_ns"][:], tt["end_ns"][:], tt["cpu_ns"][:]
    want = {"MainThread"} | {f"tx{i}" for i in range(THREADS)}
    check(len(names) == THREADS + 1, f"{len(names)} thread rows, want {THREADS + 1}")
    check(set(names) == want, f"thread names: {len(set(names) ^ want)} differ from the threads started")
    check(sorted(index) == list(range(len(index))), "thread indices dense")
    by_name = {}
    for row, name in enumerate(names):
        by_name[name] = index[row]
        if name == "MainThread":
            check(int(end[row]) == -1, "the main thread is alive at finalize")
        elif int(end[row]) < int(start[row]) or int(start[row]) <= 0:
            check(False, f"{name}: start {start[row]} end {end[row]}")
        if int(cpu[row]) < 0:
            check(False, f"{name}: cpu {cpu[row]}")
    check(all(int(i) != 0 for i in tt["native_id"][:]), "native ids set")
    check(all(int(i) != 0 for i in tt["ident"][:]), "pthread ids set")
    return by_name


def region_names(f):
    return [text(n) for n in f["region_table/names"][:]]


def check_trace(out):
    with h5py.File(out, "r") as f:
        names = region_names(f)
        idx, ev = f["rank_region_index"], f["events"]
        counts = {names[r]: int(n) for r, n in zip(idx["region_ids"][:], idx["event_counts"][:])}
        want = expected_counts(THREADS)
        check(counts == want, f"calls per region {counts}, want {want}")
        thread_of = check_threads(f)
        call_ids, parent_ids = ev["call_ids"][:], ev["parent_ids"][:]
        thread_ids = ev["thread_ids"][:]
        check(len(np.unique(call_ids)) == len(call_ids), "call ids unique")
        region_of_call = np.empty(len(call_ids), dtype=np.int64)
        for row, r in enumerate(idx["region_ids"][:]):
            off, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
            region_of_call[off:off + n] = r
        where = {int(c): k for k, c in enumerate(call_ids)}
        bad = 0
        for k in range(len(call_ids)):
            name = names[region_of_call[k]]
            parent = int(parent_ids[k])
            if name == "b":
                pk = where.get(parent)
                ok = pk is not None and names[region_of_call[pk]] == "a" and \
                    thread_ids[pk] == thread_ids[k]
            else:  # "a" (under "open" on some threads: dropped), "named", "main.loop"
                ok = parent == -1
            bad += not ok
        check(bad == 0, f"{bad} calls with a wrong parent")
        main = thread_of.get("MainThread")
        mains = set(int(t) for t, k in zip(thread_ids, range(len(thread_ids)))
                    if names[region_of_call[k]] == "main.loop")
        check(mains == {main}, f"main.loop on the main thread ({mains} vs {main})")
        a_threads = sorted(int(thread_ids[k]) for k in range(len(call_ids))
                           if names[region_of_call[k]] == "a")
        want_threads = sorted(thread_of[f"tx{i}"] for i in range(THREADS)) if thread_of else []
        check(a_threads == want_threads, "one call of a on every thread")


def check_aggregate(out):
    with h5py.File(out, "r") as f:
        names = region_names(f)
        idx = f["rank_region_index"]
        counts = {names[r]: int(n) for r, n in zip(idx["region_ids"][:], idx["aggregate_counts"][:])}
        want = expected_counts(THREADS)
        check(counts == want, f"calls per region {counts}, want {want}")
        check_threads(f)
        g = f["rank0/call_paths"]
        parents, regions = g["parents"][:], g["region_ids"][:]
        path_counts, threads = g["counts"][:], g["thread_ids"][:]
        sums = {}
        for i, r in enumerate(regions):
            sums[names[r]] = sums.get(names[r], 0) + int(path_counts[i])
            if names[r] == "b":
                p = int(parents[i])
                check(p >= 0 and names[regions[p]] == "a", f"path {i} (b) under a")
            elif names[r] != "b":
                check(int(parents[i]) == -1, f"path {i} ({names[r]}) is a root")
        check(sums == want, f"path counts {sums}, want {want}")
        check(all(int(t) >= -1 for t in threads), "path thread ids >= -1")
        # times in CLOCK_MONOTONIC ns, like the thread table's (folded
        # paths of a TSC session are converted through the same map)
        tt = f["thread_table"]
        first = int(tt["start_ns"][:].min())
        last = max(int(tt["end_ns"][:].max()), first)
        starts, ends = g["start_minimums"][:], g["end_maximums"][:]
        check(all(first - 10**9 <= int(x) <= last + 60 * 10**9 for x in starts) and
              all(first <= int(x) <= last + 60 * 10**9 for x in ends),
              f"path times outside the run [{first}, {last}]: {starts[:4]} {ends[:4]}")
        check(all(0 <= int(x) < 10**9 for x in g["totals"][:] / np.maximum(path_counts, 1)),
              "mean call times under a second")
        # folded: a few paths for 4,000 threads, not one per thread
        check(len(regions) < 100, f"{len(regions)} call paths")


def check_common(out, values, p, forks_expected=0):
    status = 10 if open_threads(THREADS) else 0
    check(values.get("status") == status, f"status {values.get('status')}, want {status}")
    opened = len(re.findall(r'region "open" was still open at finalize', p.stdout + p.stderr))
    check(opened == len(open_threads(THREADS)),
          f"{opened} open calls reported, want {len(open_threads(THREADS))}")
    check(values.get("forks") == forks_expected and values.get("failed") == 0,
          f"forks {values.get('forks')} failed {values.get('failed')}, want {forks_expected} and 0")
    if values.get("sanitized") == 0:
        check(values.get("rss_kib", 1 << 40) < RSS_LIMIT_KIB,
              f"peak RSS {values.get('rss_kib')} KiB, want < {RSS_LIMIT_KIB} KiB")
    c = subprocess.run([scope_check, out], capture_output=True, text=True)
    check(c.returncode == 0, f"scope-check: {c.stdout[-2000:]} {c.stderr[-2000:]}")


def flushed(p):
    return re.search(r"flushed [0-9.]+ MiB of calls to disk in (\d+) writes", p.stdout)


out = os.path.join(workdir, f"{case}.h5")
if case == "trace":
    values, p = run(out, SCOPE_PROFILER_MODE="trace")
    check_common(out, values, p)
    check_trace(out)
elif case == "aggregate":
    values, p = run(out, SCOPE_PROFILER_MODE="aggregate")
    check_common(out, values, p)
    check_aggregate(out)
elif case == "spill":
    values, p = run(out, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="256K",
                    SCOPE_PROFILER_OVERFLOW="flush")
    check_common(out, values, p)
    m = flushed(p)
    check(m, "the report does not say what was flushed")
    # the main thread's calls take about ten writes; the arena cannot hold
    # every exited thread's events within 256 KiB, so hundreds spilled
    check(m and int(m.group(1)) >= 100, f"{m and m.group(1)} writes: exited threads did not spill")
    check_trace(out)
elif case == "mixed":
    values, p = run(out, SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_BUFFER_LIMIT="384K",
                    SCOPE_PROFILER_OVERFLOW="flush", SCOPE_PROFILER_CLOCK="monotonic")
    check_common(out, values, p)
    check(flushed(p), "the report does not say what was flushed")
    check_trace(out)
elif case == "forks":
    values, p = run(out, forks=10, SCOPE_PROFILER_MODE="trace")
    check_common(out, values, p, forks_expected=13)
    check_trace(out)
    child = out + ".child.h5"
    check(os.path.exists(child), "the child that set up wrote its own file")
    if os.path.exists(child):
        with h5py.File(child, "r") as f:
            names = region_names(f)
            counts = {names[r]: int(n) for r, n in
                      zip(f["rank_region_index/region_ids"][:], f["rank_region_index/event_counts"][:])}
        check(counts == {"child.own": 1}, f"the child's file holds its own call only: {counts}")
    with h5py.File(out, "r") as f:
        check("child.call" not in region_names(f), "no child's call in the parent's file")
    left = sorted(n for n in os.listdir(workdir) if n not in (f"{case}.h5", f"{case}.h5.child.h5"))
    check(left == [], f"left behind: {left}")
else:
    print(f"unknown case {case}")
    sys.exit(2)
check.finish()
