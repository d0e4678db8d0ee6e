#!/usr/bin/python3
"""check_spill_writer.py CASE APP SCOPE_CHECK WORKDIR: the spill writer thread
(issue 31; c/src/record/spill_writer.c) on real runs of spill_writer_app.

Every run records a known pattern on several threads well past a small
buffer limit (flush mode). The file must hold exactly the calls recorded:
per thread, call ids contiguous, every call's region and parent as the
pattern says, in begin order (nothing lost, duplicated or reordered), and
sp_region_thread_totals asked during and at the end of the run must equal
the sums of the file's calls.

Cases:
  threads    CLOCK_MONOTONIC (exact sums), 4 threads, 32 MiB limit: with
             SCOPE_PROFILER_SPILL_THREAD=1 (an "sp-spill" thread runs) and =0
             (none), both exact; peak resident memory within the limit plus
             slack; a run that never reaches its bound starts no writer
  tsc        the default clock (TSC where invariant): the same checks, the
             query's time within 0.1% of the file's
  fork       thread 0 forks halfway while the others spill: the child finds
             no session, profiles itself into its own file (which holds only
             its calls), never blocks; the parent's file is exact
  disk_full  (root) the output on a small tmpfs: one message about the spill
             file, recorded + lost = every call, scope-check passes
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402
import small_fs  # noqa: E402
from tool_case import text  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

case, app, scope_check, workdir = sys.argv[1:5]
outputs.fresh_workdir(workdir)
check = checks.Checks(f"spill_writer {case}")
THREADS = 4
ITERATIONS = 400000
LIMIT = 32 << 20
LEAVES = 7


def calls_per_thread(n):
    return 3 * n + (n + 2) // 3


def run(path, iterations, threads, extra=(), lossy=False, **env):
    e = dict(os.environ, SCOPE_PROFILER_QUIET="", SCOPE_PROFILER_SUMMARY="0",
             SCOPE_PROFILER_MODE="trace", SCOPE_PROFILER_OVERFLOW="flush")
    for k in ("SCOPE_PROFILER_DISABLE", "SCOPE_PROFILER_FILE", "SCOPE_PROFILER_REGIONS",
              "SCOPE_PROFILER_START"):
        e.pop(k, None)
    e.update(env)
    p = subprocess.run([app, path, str(iterations), str(threads), *extra], env=e,
                       capture_output=True, text=True, timeout=900)
    print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == 0, f"exit {p.returncode}")
    if not lossy:  # calls dropped after a failed write are not counted, rightly
        check("BAD" not in p.stdout, "a query during the run did not count every ended call")
    m = re.search(r"status=(\d+)\s*$", p.stdout)
    return (int(m.group(1)) if m else -1), p


def printed_totals(stdout):
    totals = {}
    for m in re.finditer(r"totals thread=(\S+) region=(\S+) status=(\d+) calls=(\d+) "
                         r"total_ns=(-?\d+)", stdout):
        check(m.group(3) == "0", f"query status {m.group(3)} for {m.group(1)} {m.group(2)}")
        totals[(m.group(1), m.group(2))] = (int(m.group(4)), int(m.group(5)))
    return totals


def load(path):
    """Per thread name: (call ids, region names index, parent ids, durations)."""
    with h5py.File(path, "r") as f:
        names = [text(n) for n in f["region_table/names"][:]]
        rids = f["rank_region_index/region_ids"][:]
        offsets = f["rank_region_index/event_offsets"][:]
        counts = f["rank_region_index/event_counts"][:]
        ev = f["events"]
        ids = ev["call_ids"][:]
        parents = ev["parent_ids"][:]
        durations = ev["durations"][:]
        tids = ev["thread_ids"][:]
        thread_names = {int(i): text(n) for i, n in
                        zip(f["thread_table/index"][:], f["thread_table/name"][:])}
    region = np.empty(len(ids), dtype=np.int64)
    for r, o, c in zip(rids, offsets, counts):
        region[o:o + c] = r
    threads = {}
    for t, tname in thread_names.items():
        mask = tids == t
        order = np.argsort(ids[mask], kind="stable")
        threads[tname] = (ids[mask][order], region[mask][order], parents[mask][order],
                          durations[mask][order])
    return names, threads


def check_pattern(names, threads, iterations, nthreads, label):
    """Each rec-k thread holds exactly the pattern of spill_writer_app.c."""
    index = {n: i for i, n in enumerate(names)}
    ok = True
    for k in range(nthreads):
        tname = f"rec-{k}"
        if not check(tname in threads, f"{label}: no thread {tname} in the file"):
            ok = False
            continue
        ids, region, parents, _ = threads[tname]
        n = calls_per_thread(iterations)
        ok &= check(len(ids) == n, f"{label}: {tname} has {len(ids)} calls, want {n}")
        if len(ids) != n:
            continue
        ok &= check(bool(np.all(np.diff(ids) == 1)),
                    f"{label}: {tname}'s call ids are not contiguous (lost or repeated calls)")
        i = np.arange(iterations)
        leaf = np.array([index[f"leaf{j}"] for j in range(LEAVES)])
        want = np.full((iterations, 4), -1, dtype=np.int64)
        back = np.zeros((iterations, 4), dtype=np.int64)
        want[:, 0] = index[f"t{k}.outer"]
        want[:, 1] = index[f"t{k}.inner"]
        want[:, 2] = leaf[(i + k) % LEAVES]
        want[:, 3] = np.where(i % 3 == 0, leaf[(3 * i) % LEAVES], -1)
        back[:, 0] = -1
        back[:, 1] = 1
        back[:, 2] = 1
        back[:, 3] = 3
        keep = want.ravel() != -1
        want_region = want.ravel()[keep]
        want_back = back.ravel()[keep]
        bad = np.nonzero(region != want_region)[0]
        ok &= check(len(bad) == 0, f"{label}: {tname}: {len(bad)} calls of the wrong region in "
                    f"begin order (first at call {bad[:1]})")
        want_parent = np.where(want_back < 0, -1, ids - want_back)
        bad = np.nonzero(parents != want_parent)[0]
        ok &= check(len(bad) == 0, f"{label}: {tname}: {len(bad)} calls with the wrong parent")
    return ok


def check_totals(names, threads, totals, label, tolerance=0.0):
    checked = 0
    for (tname, rname), (calls, total_ns) in totals.items():
        if tname not in threads:
            continue
        _, region, _, durations = threads[tname]
        mask = region == names.index(rname)
        file_calls, file_ns = int(mask.sum()), int(durations[mask].sum())
        check(calls == file_calls, f"{label}: query {tname} {rname}: {calls} calls, file {file_calls}")
        allowed = tolerance * abs(file_ns)
        check(abs(total_ns - file_ns) <= allowed,
              f"{label}: query {tname} {rname}: {total_ns} ns, file {file_ns}")
        checked += 1
    check(checked == THREADS * (2 + LEAVES), f"{label}: {checked} query totals compared")


def scope_check_ok(path, label):
    # sanitizer builds read 10-50x slower than the tool's default timeout allows
    env = dict(os.environ, SCOPE_PROFILER_READ_TIMEOUT="600")
    c = subprocess.run([scope_check, path], capture_output=True, text=True, timeout=900, env=env)
    check(c.returncode == 0, f"{label}: scope-check: {c.stdout[-2000:]} {c.stderr[-2000:]}")


def sanitized():
    """Sanitizer builds map shadow memory: resident sizes say nothing there."""
    out = subprocess.run(["ldd", app], capture_output=True, text=True).stdout
    return "libasan" in out or "libtsan" in out


def bounded_run(label, spill_thread, clock, tolerance, extra=()):
    out = os.path.join(workdir, f"{label}.h5")
    status, p = run(out, ITERATIONS, THREADS, extra, SCOPE_PROFILER_BUFFER_LIMIT=str(LIMIT),
                    SCOPE_PROFILER_SPILL_THREAD=spill_thread, SCOPE_PROFILER_CLOCK=clock)
    check(status == 0, f"{label}: status {status}")
    check(re.search(r"flushed [0-9.]+ MiB of calls to disk in \d+ writes", p.stdout),
          f"{label}: the report does not say what was flushed (no spill?)")
    m = re.search(r"spill_thread=(\d)", p.stdout)
    want = "1" if spill_thread == "1" else "0"
    check(m and m.group(1) == want, f"{label}: sp-spill thread running: "
          f"{m.group(1) if m else '?'}, want {want}")
    m = re.search(r"rss_before_kib=(-?\d+) peak_kib=(-?\d+)", p.stdout)
    if m and not sanitized():
        grown = (int(m.group(2)) - int(m.group(1))) * 1024
        # the bound (limit + a 64 KiB first chunk per thread) plus the
        # program's own: thread stacks, query sums, spilled lists, registry
        slack = 16 << 20
        check(grown <= LIMIT + THREADS * (64 << 10) + slack,
              f"{label}: resident memory grew by {grown >> 20} MiB, bound {LIMIT >> 20} MiB "
              f"+ {slack >> 20} MiB slack")
        print(f"{label}: resident memory grew by {grown / 2**20:.1f} MiB (limit {LIMIT >> 20} MiB)")
    names, threads = load(out)
    check_pattern(names, threads, ITERATIONS, THREADS, label)
    check_totals(names, threads, printed_totals(p.stdout), label, tolerance)
    return out, p


if case == "threads":
    bounded_run("writer", "1", "monotonic", 0.0)
    bounded_run("no_writer", "0", "monotonic", 0.0)
    # within the default 256 MiB bound: a spill file, but no writer thread
    out = os.path.join(workdir, "unspilled.h5")
    status, p = run(out, 50000, 2, SCOPE_PROFILER_BUFFER_LIMIT="256M",
                    SCOPE_PROFILER_SPILL_THREAD="1")
    check(status == 0, f"unspilled: status {status}")
    check("spill_thread=0" in p.stdout, "a run that never reached its bound started the writer")
    scope_check_ok(os.path.join(workdir, "writer.h5"), "writer")
elif case == "tsc":
    bounded_run("tsc", "1", "auto", 1e-3)
elif case == "fork":
    # the fork child starts a writer thread of its own, which
    # ThreadSanitizer cannot follow in the child of a threaded process: there
    # the child's session writes its own spill
    tsan = "libtsan" in subprocess.run(["ldd", app], capture_output=True, text=True).stdout
    out, p = bounded_run("fork", "1", "monotonic", 0.0,
                         extra=("fork-nothread" if tsan else "fork",))
    check("child_exit=0" in p.stdout, "the fork child failed or blocked")
    child = out + ".child.h5"
    if check(os.path.exists(child), "the fork child wrote no file of its own"):
        with h5py.File(child, "r") as f:
            names = [text(n) for n in f["region_table/names"][:]]
            counts = f["rank_region_index/event_counts"][:]
            rids = f["rank_region_index/region_ids"][:]
        recorded = {names[r]: int(c) for r, c in zip(rids, counts)}
        check(recorded == {"child.own": 400000},
              f"the child's file holds {recorded}, want only child.own x 400000")
    scope_check_ok(out, "fork")
elif case == "disk_full":
    # The spill file is extended 64 MiB at a time, two extents ahead: on a
    # 170 MiB tmpfs its first 128 MiB fit, the next extension fails, by
    # then (4 x 600,000 iterations, 32 MiB limit) in the writer thread's
    # hands; the output (~12 MB) still fits beside it.
    with small_fs.small_tmpfs("170m", parent=workdir) as mnt:
        out = os.path.join(mnt, "full.h5")
        iterations = 600000
        status, p = run(out, iterations, THREADS, lossy=True, SCOPE_PROFILER_BUFFER_LIMIT=str(LIMIT),
                        SCOPE_PROFILER_SPILL_THREAD="1", SCOPE_PROFILER_CLOCK="monotonic")
        check(p.stderr.count("cannot write the spill file") == 1,
              "want exactly one message about the spill file")
        check("spill_thread=1" in p.stdout, "the writer thread never ran")
        m = re.search(r"(\d+) calls NOT recorded", p.stdout)
        check(m is not None, "the report does not count the lost calls")
        total = THREADS * calls_per_thread(iterations)
        if os.path.exists(out) and m:
            check(status == 7, f"status {status}")
            names, threads = load(out)
            recorded = sum(len(v[0]) for v in threads.values())
            check(recorded + int(m.group(1)) == total,
                  f"{recorded} recorded + {m.group(1)} lost != {total}")
            for tname, (ids, _, _, _) in threads.items():
                check(bool(np.all(np.diff(ids) > 0)), f"disk_full: {tname} repeats a call id")
            # what the threads asked at the end counts what the file holds,
            # chunks the writer could not write (kept in memory) included
            check_totals(names, threads, printed_totals(p.stdout), "disk_full")
            scope_check_ok(out, "disk_full")
        else:
            check(status == 8, f"no file and status {status}, want SP_ERR_OUTPUT (8)")
else:
    sys.exit(f"unknown case {case}")
check.finish()
