#!/usr/bin/python3
"""scope-check enforces the package's rules (issues 27 and 28).

Usage: check_rules.py --check EXE --make EXE --data DIR CASE

Each case copies a file of tests/data (or records a fresh one with the
program given by --make), plants one kind of violation with h5py, and
asserts that scope-check reports it, naming rank, region and call ids, and
exits 2. What the report must say is computed here, independently, with
the package's lane rule (lane = task id if >= 0, else -2 - thread id if
>= 0, else -1; sort by start, longer first; a call nests in the innermost
open call of its lane that encloses it), so a case fails when the tool
disagrees with the rule, not only when it crashes.

Cases: valid, fresh, parent_ancestor, parent_root, parent_missing,
exclusive, lanes, tasks, mpi_names, cap, id_budget. Needs h5py and numpy (exit 77
without).
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--check", required=True)
ap.add_argument("--make", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("case")
opts = ap.parse_args()
check = checks.Checks("scope-check rules")
expect = check


def run(*args, rc=None, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run([opts.check, *args], capture_output=True, text=True, env=full_env,
                          timeout=120)
    if rc is not None:
        expect(proc.returncode == rc, f"scope-check {' '.join(args)}: exit {proc.returncode}, "
               f"expected {rc}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def copy(name, target):
    shutil.copyfile(os.path.join(opts.data, "driver", name + ".h5"), target)
    return target


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


class Calls:
    """Every call of a columnar file with the package's containment tree."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            idx = f["rank_region_index"]
            self.names = [text(n) for n in f["region_table/names"][()]]
            self.offsets = idx["event_offsets"][()].astype(np.int64)
            self.counts = idx["event_counts"][()].astype(np.int64)
            self.regions = idx["region_ids"][()].astype(np.int64)
            self.ranks = idx["ranks"][()].astype(np.int64)
            self.stored_excl = idx["exclusive_totals"][()].astype(np.int64)
            ev = f["events"]
            deltas = ev["start_deltas"][()].astype(np.int64)
            self.dur = ev["durations"][()].astype(np.int64)
            n = len(deltas)
            self.cid = ev["call_ids"][()] if "call_ids" in ev else np.full(n, -1)
            self.pid = ev["parent_ids"][()] if "parent_ids" in ev else np.full(n, -1)
            self.tid = ev["thread_ids"][()] if "thread_ids" in ev else np.full(n, -1)
            self.task = ev["task_ids"][()] if "task_ids" in ev else np.full(n, -1)
        self.start = np.zeros(n, dtype=np.int64)
        self.row = np.zeros(n, dtype=np.int64)
        for r in range(len(self.offsets)):
            a, b = self.offsets[r], self.offsets[r] + self.counts[r]
            self.start[a:b] = np.cumsum(deltas[a:b])
            self.row[a:b] = r
        self.end = self.start + self.dur
        self.n = n
        self.rebuild()

    def lane(self, j):
        if self.task[j] >= 0:
            return int(self.task[j])
        if self.tid[j] >= 0:
            return -2 - int(self.tid[j])
        return -1

    def rebuild(self):
        """parent[j]: the containment parent (index) or -1; exclusive per row."""
        self.parent = [-1] * self.n
        self.excl = {}
        order = sorted(range(self.n), key=lambda j: (self.ranks[self.row[j]], self.lane(j),
                                                     self.start[j], -self.end[j], self.cid[j]))
        stack, key = [], None
        child = [0] * self.n
        for j in order:
            k = (self.ranks[self.row[j]], self.lane(j))
            if k != key:
                stack, key = [], k
            adj = lambda i: 2 * self.start[i] + 1 if self.end[i] == self.start[i] else 2 * self.end[i]
            while stack and adj(stack[-1]) <= 2 * self.start[j]:
                stack.pop()
            if stack:
                self.parent[j] = stack[-1]
                child[stack[-1]] += int(self.dur[j])
            stack.append(j)
        for j in range(self.n):
            r = int(self.row[j])
            self.excl[r] = self.excl.get(r, 0) + int(self.dur[j]) - child[j]

    def prefix(self, j):
        r = self.row[j]
        return f"{self.path}: rank {self.ranks[r]} region {self.names[self.regions[r]]}: "

    def write(self, column, j, value):
        with h5py.File(self.path, "r+") as f:
            data = f[column][()]
            data[j] = value
            f[column][...] = data


def lines_of(proc):
    return proc.stdout.splitlines()


def expect_line(proc, start, contains=""):
    ok = any(line.startswith(start) and contains in line for line in lines_of(proc))
    expect(ok, f"no line starting {start!r} containing {contains!r} in:\n{proc.stdout}")


def expect_invalid(proc, path):
    lines = lines_of(proc)
    expect(lines and lines[-1].startswith(f"{path}: invalid: "), f"verdict: {lines[-1:]}")


def depth2_call(c):
    """A call whose containment parent has a containment parent, all numbered."""
    for j in range(c.n):
        p = c.parent[j]
        if p >= 0 and c.parent[p] >= 0 and c.cid[j] >= 0 and c.pid[j] == c.cid[p]:
            return j
    raise AssertionError("no call two levels deep")


def case_valid():
    """Every file of tests/data passes, its verdict the only line."""
    paths = []
    for sub in ("driver", "compat"):
        for name in sorted(os.listdir(os.path.join(opts.data, sub))):
            if name.endswith((".h5", ".spt")):
                paths.append(os.path.join(opts.data, sub, name))
    expect(len(paths) >= 12, f"only {len(paths)} files in {opts.data}")
    for path in paths:
        proc = run(path, rc=0)
        expect(len(lines_of(proc)) == 1 and lines_of(proc)[0].startswith(f"{path}: ok ("),
               f"{path}: {proc.stdout}")
        # the independent rebuild agrees with the stored totals, so "ok" is right
        if path.endswith(".h5") and "/driver/" in path and "aggregate" not in path:
            c = Calls(path)
            for r, stored in enumerate(c.stored_excl):
                if stored >= 0:
                    expect(c.excl.get(r, 0) == stored,
                           f"{path} row {r}: lane rule gives {c.excl.get(r, 0)}, stored {stored}")


def case_fresh():
    """A run of the library itself (threads, nesting, an MPI-named region)."""
    out = record("fresh.h5")
    proc = run(out, rc=0)
    expect(lines_of(proc) and lines_of(proc)[-1].startswith(f"{out}: ok ("), proc.stdout)
    c = Calls(out)
    expect(len(set(int(t) for t in c.tid)) >= 3, "the run recorded calls on three threads")
    # stored parents are the package's containment parents on every lane
    for j in range(c.n):
        p = c.parent[j]
        expect(int(c.pid[j]) == (int(c.cid[p]) if p >= 0 else -1),
               f"call {c.cid[j]}: stored parent {c.pid[j]}, lane rule {p}")
        if check.failures:
            break


def case_parent_ancestor():
    path = copy("serial", "ancestor.h5")
    c = Calls(path)
    j = depth2_call(c)
    g = c.parent[c.parent[j]]
    c.write("events/parent_ids", j, c.cid[g])
    proc = run(path, rc=2)
    expect_line(proc, c.prefix(j) + f"call id {c.cid[j]}: stored parent id {c.cid[g]} encloses "
                "it on its lane", f"call id {c.cid[c.parent[j]]} of region "
                f"{c.names[c.regions[c.row[c.parent[j]]]]}")
    expect_invalid(proc, path)


def case_parent_root():
    path = copy("threads", "root.h5")
    c = Calls(path)
    j = depth2_call(c)
    p = c.parent[j]
    c.write("events/parent_ids", j, -1)
    proc = run(path, rc=2)
    expect_line(proc, c.prefix(j) + f"call id {c.cid[j]} [", f"is stored as a root, but call id "
                f"{c.cid[p]} of region {c.names[c.regions[c.row[p]]]}")
    expect_invalid(proc, path)


def case_parent_missing():
    """A parent id that names an earlier call which ended before the child."""
    path = copy("serial", "missing.h5")
    c = Calls(path)
    j = depth2_call(c)
    earlier = [i for i in range(c.n) if c.end[i] < c.start[j] and 0 <= c.cid[i] < c.cid[j]]
    e = earlier[-1]
    c.write("events/parent_ids", j, c.cid[e])
    proc = run(path, rc=2)
    expect_line(proc, c.prefix(j) + f"call id {c.cid[j]} [",
                f"parent id {c.cid[e]} is no call of rank 0 that encloses it")
    expect_invalid(proc, path)


def case_exclusive():
    path = copy("threads", "exclusive.h5")
    c = Calls(path)
    row = 2
    old = int(c.stored_excl[row])
    expect(old == c.excl[row], f"fixture row {row}: rule {c.excl[row]} != stored {old}")
    c.write("rank_region_index/exclusive_totals", row, old + 5)
    proc = run(path, rc=2)
    expect_line(proc, f"{path}: rank {c.ranks[row]} region {c.names[c.regions[row]]}: "
                f"stored exclusive total {old + 5} ns, the call tree gives {old} ns")
    expect_invalid(proc, path)


def record(name):
    out = os.path.abspath(name)
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, SCOPE_PROFILER_QUIET="1", SCOPE_PROFILER_FILE="")
    proc = subprocess.run([opts.make, out], capture_output=True, text=True, env=env, timeout=60)
    expect(proc.returncode == 0, f"make: {proc.returncode} {proc.stderr}")
    return out


def case_lanes():
    """A native run whose worker threads' calls overlap the main thread's
    in time: with thread ids every lane nests; without them every call is
    on lane -1, where the package cannot nest them, and the tool says so
    naming the calls."""
    path = record("lanes.h5")
    run(path, rc=0)
    with h5py.File(path, "r+") as f:
        del f["events/thread_ids"]
    proc = run(path, rc=2)
    bad = [line for line in lines_of(proc)
           if "is stored as a root, but" in line or "without nesting in it" in line]
    expect(bad, f"no lane disagreement reported:\n{proc.stdout}")
    expect(all(line.count("call id ") == 2 for line in bad), f"call ids named: {bad}")
    if any("without nesting" in line for line in bad):
        # the package refuses the rank's tree: totals cannot be compared
        expect("exclusive totals not compared" in proc.stderr, f"stderr: {proc.stderr}")
    else:
        # the workers' calls now nest under main: its exclusive total shrinks
        expect_line(proc, f"{path}: rank 0 region main: stored exclusive total ")
    expect_invalid(proc, path)


def case_tasks():
    """A call moved to a task of its own is a root of that lane: its stored
    parent (on lane -1) still encloses it, which is accepted, but the
    parent's stored exclusive total subtracted it and the package's does
    not. Task ids must reach the rule even when the reader keeps the calls
    in the file (SP_RESULTS_CALLS_ON_DEMAND)."""
    path = copy("serial", "tasks.h5")
    c = Calls(path)
    j = depth2_call(c)
    p = c.parent[j]
    with h5py.File(path, "r+") as f:
        tasks = np.full(c.n, -1, dtype=np.int64)
        tasks[j] = 5
        f.create_dataset("events/task_ids", data=tasks)
    c = Calls(path)
    expect(c.parent[j] == -1, "the rule makes the task's call a root")
    prow = int(c.row[p])
    old = int(c.stored_excl[prow])
    proc = run(path, rc=2)
    expect_line(proc, f"{path}: rank 0 region {c.names[c.regions[prow]]}: stored exclusive total "
                f"{old} ns, the call tree gives {c.excl[prow]} ns")
    expect(not any(f"call id {c.cid[j]}" in line for line in lines_of(proc)),
           f"the enclosing parent on another lane was reported: {proc.stdout}")


def rename(path, changes):
    with h5py.File(path, "r+") as f:
        names = [text(n) for n in f["region_table/names"][()]]
        for old, new in changes.items():
            names[names.index(old)] = new
        del f["region_table/names"]
        f.create_dataset("region_table/names", data=np.array(names, dtype=object),
                         dtype=h5py.string_dtype("utf-8"))
    return names


def case_mpi_names():
    path = copy("serial", "mpi_names.h5")
    with h5py.File(path, "r") as f:
        names = [text(n) for n in f["region_table/names"][()]]
    good = "mpi:allreduce kind=collective bytes=8 peer=-1 root=-1 tag=-1 comm=0 extra=x lang=native"
    no_comm = "mpi:allreduce kind=collective bytes=16 peer=-1 root=-1 tag=-1"
    world = "mpi:send kind=point-to-point bytes=8 peer=1 root=-1 tag=0 comm=world"
    rename(path, {names[1]: good, names[2]: no_comm, names[3]: world})
    proc = run(path, rc=2)
    expect_line(proc, f"{path}: region {no_comm}: MPI region name does not parse",
                "key 'comm' is missing")
    expect_line(proc, f"{path}: region {world}: MPI region name does not parse",
                "comm=world is not an integer")
    expect(not any(line.startswith(f"{path}: region {good}:") for line in lines_of(proc)),
           f"a valid MPI name was reported: {proc.stdout}")
    expect(len(lines_of(proc)) == 3, f"two problems and the verdict: {proc.stdout}")


def case_cap():
    """Past --max-problems the lines are counted, not listed."""
    path = copy("serial", "cap.h5")
    with h5py.File(path, "r+") as f:
        f["events/durations"][...] = -f["events/durations"][()]
    proc = run("--max-problems", "3", path, rc=2)
    lines = lines_of(proc)
    expect(len(lines) == 4, f"3 problem lines and the verdict: {lines}")
    expect("not listed (--max-problems)" in lines[-1], f"verdict: {lines[-1]}")
    full = run("--max-problems", "0", path, rc=2)
    expect(len(lines_of(full)) > 46, f"every problem listed with 0: {len(lines_of(full))}")


def case_id_budget():
    """gzip.h5 has 66668 calls: with 1 MiB the exact id set holds 49152;
    a repeat past that is found with the default budget, and with 1 MiB
    the tool says it could not check it instead of calling the ids unique."""
    path = copy("gzip", "ids.h5")
    c = Calls(path)
    last = int(np.argmax(c.start))
    first = int(np.argmin(c.start))
    c.write("events/call_ids", last, c.cid[first])
    proc = run(path, rc=2)
    expect_line(proc, f"{path}: rank 0 region ", f"duplicate call id {c.cid[first]}")
    small = run(path, env={"SCOPE_PROFILER_CHECK_MEMORY": "1M"})
    said = "checked for repeats among the first" in small.stderr
    found = f"duplicate call id {c.cid[first]}" in small.stdout
    expect(said or found, f"neither found nor said unchecked:\n{small.stdout}\n{small.stderr}")
    expect(said != found, "both found and unchecked")
    # The untouched file: unique ids shown past the budget, or said unchecked.
    clean = copy("gzip", "ids_clean.h5")
    proc = run(clean, env={"SCOPE_PROFILER_CHECK_MEMORY": "1M"}, rc=0)
    run("--bogus-size", clean, rc=1)
    bad_env = run(clean, env={"SCOPE_PROFILER_CHECK_MEMORY": "lots"}, rc=1)
    expect("SCOPE_PROFILER_CHECK_MEMORY" in bad_env.stderr, bad_env.stderr)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if opts.case not in CASES:
    sys.exit(f"unknown case {opts.case}; cases: {sorted(CASES)}")
CASES[opts.case]()
if check.failures:
    sys.exit(1)
print(f"{opts.case}: ok")
