#!/usr/bin/python3
"""check_omp_threads.py OMP_THREADS SCOPE_INSPECT WORKDIR: the summary's
threads (issue 34), in trace and in aggregate mode.

omp_threads runs "parent" on the main thread and, inside it, a team of 4
whose thread k makes k + 1 "child" calls. Checked:
- the file's thread table names the workers "omp worker 1..3" (h5py);
- the summary sp_finalize prints and scope-inspect's table have a threads
  column: 1 for parent, 4 for child;
- own times are >= 0, and parent's (own) + child's total - child's other
  thr == parent's total (own = total minus the children's time on the
  parent's threads; other thr = the workers' part, outside the parent);
- scope-inspect --threads lists 4 threads with child counts 1, 2, 3, 4 and
  the worker names, and --json carries the same, with own + children ==
  total on the main thread.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
program, inspect, workdir = sys.argv[1:4]
needs.no_tsan(program)
os.makedirs(workdir, exist_ok=True)
check = checks.Checks("omp threads")
TOL = 2.5e-6  # three values printed with %.6f


def table_rows(text, columns):
    """Rows of an ASCII summary table as {name: [values]} ("(own)" rows
    keyed by their owner's name + "/(own)")."""
    rows, last = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("| ") or "region" in line:
            continue
        cells = [c for c in re.split(r"\s{2,}", line.strip("| ").strip()) if c]
        name = re.sub(r"^[`| -]+", "", cells[0]).strip()
        values = cells[1:]
        if name == "(own)":
            rows[last + "/(own)"] = values
        else:
            last = name
            rows[name] = values
    return rows


def number(cell):
    return None if cell in ("-", "") else float(cell)


env = dict(os.environ, OMP_NUM_THREADS="4", OMP_DYNAMIC="false", OMP_WAIT_POLICY="passive")
env.pop("SCOPE_PROFILER_QUIET", None)
env.pop("SCOPE_PROFILER_SUMMARY", None)
for mode in ("trace", "aggregate"):
    out = os.path.join(workdir, f"threads_{mode}.h5")
    p = subprocess.run([program, out], env=dict(env, SCOPE_PROFILER_MODE=mode),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{mode}: exit {p.returncode}: {p.stderr[-1000:]}")
    if "team=4" not in p.stdout:
        needs.skip(f"the OpenMP runtime gave no team of 4: {p.stdout[-300:]}")

    # the thread table (h5py)
    with h5py.File(out, "r") as f:
        names = sorted(n.decode() if isinstance(n, bytes) else str(n)
                       for n in f["thread_table/name"][:])
    print(mode, "thread table:", names)
    check(names == ["MainThread", "omp worker 1", "omp worker 2", "omp worker 3"],
          f"{mode}: workers named 'omp worker N' in the thread table: {names}")

    # the finalize summary: a threads column, 4 threads for child
    print(p.stdout)
    final = table_rows(p.stdout, None)
    header = [l for l in p.stdout.splitlines() if "region" in l and "threads" in l]
    check(header, f"{mode}: the finalize summary has a threads column")
    if header and "parent" in final and "child" in final:
        check(number(final["parent"][0]) == 1 and number(final["child"][0]) == 4,
              f"{mode}: finalize threads parent 1, child 4: {final}")
    check("other thr" in p.stdout and "(own): the row's total minus" in p.stdout,
          f"{mode}: the finalize legend explains the columns")

    # scope-inspect's table: threads, calls, total, exclusive, other threads
    cols = "region,threads,calls,total,exclusive,other_threads"
    q = subprocess.run([inspect, "--ascii", "--columns", cols, out], capture_output=True,
                       text=True)
    check(q.returncode == 0, f"{mode}: scope-inspect exit {q.returncode}: {q.stderr}")
    print(q.stdout)
    rows = table_rows(q.stdout, cols)
    parent, child, own = rows.get("parent"), rows.get("child"), rows.get("parent/(own)")
    check(parent and child and own, f"{mode}: parent, child and parent's (own) rows: {rows}")
    if parent and child and own:
        threads, calls, total, excl, other = (number(c) for c in parent)
        c_threads, c_calls, c_total, c_excl, c_other = (number(c) for c in child)
        own_total = number(own[0]) if len(own) == 1 else number(own[1])
        check(threads == 1 and c_threads == 4, f"{mode}: threads parent 1, child 4")
        check(calls == 1 and c_calls == 10, f"{mode}: calls parent 1, child 10")
        check(own_total >= 0 and excl >= 0 and c_excl >= 0, f"{mode}: own times >= 0")
        check(c_other > 0 and c_other < c_total, f"{mode}: child's other thr is its workers' part")
        check(abs(own_total + c_total - c_other - total) <= TOL,
              f"{mode}: own {own_total} + child {c_total} - other {c_other} == total {total}")
    d = subprocess.run([inspect, "--ascii", out], capture_output=True, text=True)
    check(re.search(r"region\s+threads\s", d.stdout) is not None,
          f"{mode}: the default table shows the threads column:\n{d.stdout}")

    # --threads, text
    t = subprocess.run([inspect, "--ascii", "--threads", out], capture_output=True, text=True)
    check(t.returncode == 0, f"{mode}: --threads exit {t.returncode}: {t.stderr}")
    print(t.stdout[t.stdout.find("Threads:"):])
    check("Threads: 4" in t.stdout, f"{mode}: --threads lists 4 threads")
    for k in range(1, 4):
        check(re.search(rf'thread \d+ "omp worker {k}"', t.stdout) is not None,
              f"{mode}: --threads names worker {k}")

    # --threads --json
    j = subprocess.run([inspect, "--threads", "--json", out], capture_output=True, text=True)
    check(j.returncode == 0, f"{mode}: --threads --json exit {j.returncode}: {j.stderr}")
    doc = json.loads(j.stdout)
    threads = doc.get("threads", [])
    check(len(threads) == 4, f"{mode}: 4 threads in JSON, got {len(threads)}")
    counts = {}
    for th in threads:
        for row in th["rows"]:
            check(row["own_duration"] >= 0, f"{mode}: per-thread own >= 0: {row}")
            if row["path"] == ["parent", "child"]:
                counts[th["name"]] = row["num_calls"]
    check(counts == {"MainThread": 1, "omp worker 1": 2, "omp worker 2": 3, "omp worker 3": 4},
          f"{mode}: child calls per thread 1, 2, 3, 4: {counts}")
    main = next((th for th in threads if th["name"] == "MainThread"), None)
    if main:
        by_path = {tuple(r["path"]): r for r in main["rows"]}
        par, chi = by_path.get(("parent",)), by_path.get(("parent", "child"))
        # An aggregate file stores each path's total and exclusive time,
        # each converted from clock ticks to ns on its own: the sum may
        # differ from the total by the rounding of each, 1 ns at most.
        check(par and chi and abs(par["own_duration"] + chi["total_duration"] -
                                  par["total_duration"]) < 2.5e-9,
              f"{mode}: main thread: parent own + child == parent total: {main['rows']}")
        check(chi and chi["other_threads_duration"] == 0,
              f"{mode}: the main thread's child ran inside parent")
    workers = [th for th in threads if th["name"].startswith("omp worker")]
    check(all(r["other_threads_duration"] == r["total_duration"]
              for th in workers for r in th["rows"] if r["path"] == ["parent", "child"]),
          f"{mode}: workers' child calls ran beside parent (other threads)")
check.finish()
