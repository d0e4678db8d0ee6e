"""Tests of scope-export and scope-check. Expectations come from the files
themselves, read independently with h5py (or struct for .spt), from
scope-inspect --json (the same statistics through another tool), or from
the damage the test itself planted. Nothing here restates our own output.

Usage: tools_test.py --export EXE --check EXE --inspect EXE --make EXE
                     --data DIR CASE [ARG]
Run in an empty working directory (ctest gives each case its own).
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import argparse
import collections
import csv
import glob
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

from h5_calls import read_calls  # noqa: E402

parser = argparse.ArgumentParser()
for opt in ("export", "check", "inspect", "make", "data"):
    parser.add_argument("--" + opt, required=True)
parser.add_argument("case")
parser.add_argument("arg", nargs="?")
opts = parser.parse_args()


check = checks.Checks("tools")
fail = check.fail


def expect(cond, msg):
    if not cond:
        fail(msg)
    return cond


def run(tool, *args, rc=0):
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if rc is not None and proc.returncode != rc:
        fail(f"{os.path.basename(tool)} {' '.join(args)}: exit {proc.returncode}, expected {rc}\n"
             f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
    return proc


# ---- fixtures ----------------------------------------------------------------

def fixture(name):
    """'driver-serial' -> tests/data/driver/serial.h5; 'native' -> a file
    recorded here by make_profile (nested, three threads)."""
    if name == "native":
        path = os.path.abspath("native.h5")
        if not os.path.exists(path):
            run(opts.make, path)
        return path
    folder, stem = name.split("-", 1)
    for ext in (".h5", ".spt"):
        path = os.path.join(opts.data, folder, stem + ext)
        if os.path.exists(path):
            return path
    raise SystemExit(f"no fixture {name}")


def copy_fixture(name, target):
    shutil.copyfile(fixture(name), target)
    return os.path.abspath(target)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


# ---- an independent reader ---------------------------------------------------

class Profile:
    """Every call of a file: (rank, region, k, start, end, dur, call_id,
    parent_id, thread_id), None for a column the file does not have."""

    def __init__(self, path):
        self.path = path
        self.calls = []
        self.threads = []  # (rank, index, name)
        self.regions = []
        self.ranks = 0
        self.aggregate = False
        self.total_calls = 0
        self.has_ids = False
        self.has_threads = False
        with open(path, "rb") as fh:
            head = fh.read(8)
        if head == b"SCOPEPRF":
            self._read_spt()
        else:
            self._read_h5()
        self.total_calls = self.total_calls or len(self.calls)

    def _read_spt(self):
        data = open(self.path, "rb").read()
        order = "<" if struct.unpack_from("<i", data, 8)[0] in (1, 2) else ">"
        version, rank, nregions = struct.unpack_from(order + "iiq", data, 8)
        pos = 24
        for _ in range(nregions):
            (n,) = struct.unpack_from(order + "i", data, pos)
            name = data[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
            if version == 2:
                (s,) = struct.unpack_from(order + "i", data, pos)
                pos += 4 + s + 4
            (calls,) = struct.unpack_from(order + "q", data, pos)
            pos += 8
            starts = struct.unpack_from(order + f"{calls}q", data, pos)
            ends = struct.unpack_from(order + f"{calls}q", data, pos + 8 * calls)
            pos += 16 * calls
            self.regions.append(name)
            for k in range(calls):
                self.calls.append((rank, name, k, starts[k], ends[k], ends[k] - starts[k],
                                   None, None, None))
        self.ranks = 1

    def _read_h5(self):
        with h5py.File(self.path, "r") as f:
            if "scope_profiler_schema" not in f.attrs:
                self._read_schema1(f)
                return
            self.regions = [text(n) for n in f["region_table/names"][()]]
            idx = f["rank_region_index"]
            ranks = idx["ranks"][()].astype(np.int64)
            region_ids = idx["region_ids"][()].astype(np.int64)
            mpi_size = int(f["metadata"].attrs.get("mpi_size", 1)) if "metadata" in f else 1
            self.ranks = max(mpi_size, int(ranks.max()) + 1) if len(ranks) else 0
            if text(f.attrs.get("storage_layout", "columnar")) == "aggregate":
                self.aggregate = True
                self.total_calls = int(idx["aggregate_counts"][()].sum())
                return
            self.has_ids = "call_ids" in f["events"]
            self.has_threads = "thread_ids" in f["events"]
            self.calls = [(c["rank"], c["region"], c["index"], c["start"], c["end"],
                           c["end"] - c["start"], c["id"], c["parent"], c["thread"])
                          for c in read_calls(self.path, no_thread=None)]
            if "thread_table" in f:
                tt = f["thread_table"]
                for i in range(len(tt["index"])):
                    self.threads.append((int(tt["ranks"][i]), int(tt["index"][i]),
                                         text(tt["name"][i])))

    def _read_schema1(self, f):
        groups = sorted((int(k[4:]), k) for k in f if k.startswith("rank") and k[4:].isdigit())
        self.ranks = len(groups)
        for rank, key in groups:
            for name, g in f[key]["regions"].items():
                if name not in self.regions:
                    self.regions.append(name)
                starts, ends = g["start_times"][()], g["end_times"][()]
                ids = g["call_ids"][()] if "call_ids" in g else None
                pids = g["parent_ids"][()] if "parent_ids" in g else None
                for k in range(len(starts)):
                    self.calls.append((rank, name, k, int(starts[k]), int(ends[k]),
                                       int(ends[k] - starts[k]),
                                       None if ids is None else int(ids[k]),
                                       None if pids is None else int(pids[k]), None))


# ---- scope-export ------------------------------------------------------------

ALL_FIXTURES = ["driver-serial", "driver-threads", "driver-perf", "driver-gzip",
                "driver-mpi4", "driver-mpi4_direct", "driver-aggregate", "compat-schema1",
                "compat-schema2", "compat-schema3", "compat-native-v1", "compat-native-v2",
                "native"]


def selected(prof, ranks=None, keep=lambda name: True):
    return [c for c in prof.calls if (ranks is None or c[0] in ranks) and keep(c[1])]


def no_leftovers(expected_names, where):
    names = sorted(os.listdir("."))
    extra = [n for n in names if n not in expected_names and n != "native.h5"]
    expect(not extra, f"{where}: files left in the directory: {extra}")


def check_chrome(path, prof, calls, require_pairs=True):
    with open(path) as fh:
        doc = json.load(fh)
    events = doc["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    meta = [e for e in events if e.get("ph") == "M"]
    origin = min(c[3] for c in prof.calls)
    expect(doc["otherData"]["time_origin_ns"] == origin,
           f"time_origin_ns {doc['otherData'].get('time_origin_ns')} != {origin}")
    expect("earliest" in doc["otherData"].get("time_origin", ""), "otherData names the origin")
    expect(len(xs) == len(calls), f"{len(xs)} complete events, the file has {len(calls)} calls")
    # Each event as (pid, name, k, ts, dur, call_id, parent_id, tid) with k
    # its position among the events of the same rank and region.
    got, seen = collections.Counter(), collections.Counter()
    for e in xs:
        key = (e["pid"], e["name"])
        args = e.get("args", {})
        got[(e["pid"], e["name"], seen[key], e["ts"], e["dur"], args.get("call_id"),
             args.get("parent_id"), e["tid"])] += 1
        seen[key] += 1
        if not prof.has_ids and "args" in e:
            fail(f"event with args but the file has no call ids: {e}")
    want = collections.Counter(
        (c[0], c[1], c[2], (c[3] - origin) / 1000, c[5] / 1000, c[6], c[7],
         c[8] if c[8] is not None and c[8] >= 0 else 0) for c in calls)
    if got != want:
        missing = list((want - got).elements())[:5]
        extra = list((got - want).elements())[:5]
        fail(f"chrome events differ from the file: missing {missing}, unexpected {extra}")
    # pid = rank, named "rank N"
    pnames = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    for pid in {e["pid"] for e in xs}:
        expect(pnames.get(pid) == f"rank {pid}", f"process {pid} named {pnames.get(pid)!r}")
    # thread names from the thread table
    tnames = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    for rank, index, name in prof.threads:
        if rank in pnames:
            expect(tnames.get((rank, index)) == (name or f"thread {index}"),
                   f"thread ({rank}, {index}) named {tnames.get((rank, index))!r}, file: {name!r}")
    # parent containment, on the exported numbers
    by_id = {(e["pid"], e["args"]["call_id"]): e for e in xs if "args" in e}
    checked = 0
    for e in xs:
        p = e.get("args", {}).get("parent_id", -1)
        if p is None or p < 0 or (e["pid"], p) not in by_id:
            continue
        parent = by_id[(e["pid"], p)]
        lo = round(e["ts"] * 1000)
        hi = lo + round(e["dur"] * 1000)
        plo = round(parent["ts"] * 1000)
        phi = plo + round(parent["dur"] * 1000)
        expect(plo <= lo and hi <= phi and e["tid"] == parent["tid"],
               f"event {e} not inside its parent {parent}")
        checked += 1
    if require_pairs and prof.has_ids and any(c[7] is not None and c[7] >= 0 for c in calls):
        expect(checked > 0, "no parent/child pair checked")
    return doc


def check_csv(path, prof, calls):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    expect(rows[0] == ["rank", "region", "thread", "call_id", "parent_id", "start_ns", "end_ns",
                       "duration_ns"], f"header {rows[0]}")
    got, seen = collections.Counter(), collections.Counter()
    for r in rows[1:]:
        key = (int(r[0]), r[1])
        got[(int(r[0]), r[1], seen[key], int(r[5]), int(r[6]), int(r[7]),
             r[3] and int(r[3]), r[4] and int(r[4]), r[2] and int(r[2]))] += 1
        seen[key] += 1
    want = collections.Counter(
        (c[0], c[1], c[2], c[3], c[4], c[5], "" if c[6] is None else c[6],
         "" if c[7] is None else c[7], "" if c[8] is None else c[8]) for c in calls)
    if got != want:
        fail(f"csv rows differ from the file: missing {list((want - got).elements())[:5]}, "
             f"unexpected {list((got - want).elements())[:5]}")


def check_json(path, src, extra):
    with open(path) as fh:
        got = json.load(fh)
    ref = json.loads(run(opts.inspect, "--json", *extra, src).stdout)
    expect(got["units"] == "seconds", "units")
    expect(got["num_ranks"] == ref["num_ranks"], f"num_ranks {got['num_ranks']}")
    expect([r["name"] for r in got["regions"]] == [r["name"] for r in ref["regions"]],
           f"regions {[r['name'] for r in got['regions']]} != "
           f"{[r['name'] for r in ref['regions']]}")
    for g, r in zip(got["regions"], ref["regions"]):
        for key, value in r.items():
            expect(g.get(key, "absent") == value,
                   f"region {r['name']} {key}: {g.get(key, 'absent')!r} != inspect {value!r}")
    for name, ranks in ref["per_rank"].items():
        mine = got["per_rank"].get(name, {})
        expect(sorted(mine) == sorted(ranks), f"per_rank {name}: ranks {sorted(mine)}")
        for rank, v in ranks.items():
            m = mine.get(rank, {})
            expect(m.get("num_calls") == v["num_calls"] and m.get("total_ns") == v["total_ns"],
                   f"per_rank {name} {rank}: {m.get('num_calls')}/{m.get('total_ns')} != {v}")
    return got


def case_export(fmt, name):
    src = fixture(name)
    prof = Profile(src)
    out = os.path.abspath(f"out.{ 'csv' if fmt == 'csv' else 'json'}")
    if prof.aggregate and fmt != "json":
        proc = run(opts.export, src, "-o", out, "--format", fmt, rc=2)
        expect(src in proc.stderr and "no per-call events (aggregate layout)" in proc.stderr
               and "--format json" in proc.stderr, f"message: {proc.stderr!r}")
        expect(not os.path.exists(out), "output created for an aggregate input")
        no_leftovers({"native.h5"}, "aggregate")
        return
    run(opts.export, src, "-o", out, "--format", fmt)
    no_leftovers({os.path.basename(out)}, f"{fmt} {name}")
    if fmt == "chrome":
        check_chrome(out, prof, prof.calls)
    elif fmt == "csv":
        check_csv(out, prof, prof.calls)
    else:
        got = check_json(out, src, [])
        total = sum(r["num_calls"] for r in got["regions"])
        expect(total == prof.total_calls, f"json calls {total}, the file has {prof.total_calls}")


def case_filter(fmt):
    """--ranks/--include/--exclude select exactly the calls h5py selects."""
    src = fixture("driver-mpi4")
    prof = Profile(src)
    import re
    inc, exc = re.compile(r"(solve|time)"), re.compile(r"(timestep)")
    keep = lambda n: bool(inc.match(n)) and not exc.match(n)
    args = ["--ranks", "1,3", "--include", "solve|time", "--exclude", "timestep"]
    calls = selected(prof, {1, 3}, keep)
    expect(calls and len(calls) < len(prof.calls), "the filter selects a proper subset")
    out = os.path.abspath("filtered." + ("csv" if fmt == "csv" else "json"))
    run(opts.export, src, "-o", out, "--format", fmt, *args)
    if fmt == "chrome":
        doc = check_chrome(out, prof, calls, require_pairs=False)
        pids = {e["pid"] for e in doc["traceEvents"]}
        expect(pids == {1, 3}, f"pids {pids}")
    elif fmt == "csv":
        check_csv(out, prof, calls)
    else:
        check_json(out, src, args)


def case_default_format():
    """No --format: csv for OUT ending in .csv, chrome otherwise; '-' is stdout."""
    src = fixture("driver-serial")
    prof = Profile(src)
    run(opts.export, src, "-o", "calls.csv")
    check_csv("calls.csv", prof, prof.calls)
    run(opts.export, src, "--output=trace.json")
    check_chrome("trace.json", prof, prof.calls)
    proc = run(opts.export, src, "-o", "-", "--format", "json")
    expect(json.loads(proc.stdout)["regions"], "json on stdout")


def case_error(kind):
    src = fixture("driver-aggregate")
    if kind == "missing":
        missing = os.path.abspath("no-such-file.h5")
        for fmt in ("chrome", "csv", "json"):
            proc = run(opts.export, missing, "-o", "out.json", "--format", fmt, rc=2)
            expect(missing in proc.stderr, f"message names the file: {proc.stderr!r}")
            expect(not os.path.exists("out.json"), "output created for a missing input")
        no_leftovers(set(), "missing")
    elif kind == "aggregate":
        for fmt in ("chrome", "csv"):
            with open("keep.json", "w") as fh:
                fh.write("keep me\n")
            proc = run(opts.export, src, "-o", "keep.json", "--format", fmt, rc=2)
            expect(f"{src} has no per-call events (aggregate layout); use --format json"
                   in proc.stderr, f"message: {proc.stderr!r}")
            expect(open("keep.json").read() == "keep me\n", "existing output modified")
            no_leftovers({"keep.json"}, f"aggregate {fmt}")
        run(opts.export, src, "-o", "agg.json", "--format", "json")
        check_json("agg.json", src, [])
    elif kind == "unreadable":
        with open("garbage.h5", "wb") as fh:
            fh.write(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
        with open("keep.csv", "w") as fh:
            fh.write("keep me\n")
        proc = run(opts.export, "garbage.h5", "-o", "keep.csv", rc=2)
        expect("garbage.h5" in proc.stderr, f"message: {proc.stderr!r}")
        expect(open("keep.csv").read() == "keep me\n", "existing output modified")
        no_leftovers({"garbage.h5", "keep.csv"}, "unreadable")
        proc = run(opts.export, fixture("driver-serial"), "-o", "no-dir/out.json", rc=3)
        expect("no-dir/out.json" in proc.stderr, f"message: {proc.stderr!r}")
    elif kind == "usage":
        serial = fixture("driver-serial")
        run(opts.export, serial, rc=1)                                   # no -o
        run(opts.export, "-o", "x.json", rc=1)                           # no FILE
        run(opts.export, serial, "-o", "x.json", "--format", "pdf", rc=1)
        run(opts.export, serial, "-o", "x.json", "--include", "(", rc=1)
        run(opts.export, serial, "-o", "x.json", "--ranks", "2-1", rc=1)
        run(opts.export, serial, "-o", "x.json", "--bogus", rc=1)
        mine = copy_fixture("driver-serial", "mine.h5")
        before = open(mine, "rb").read()
        run(opts.export, mine, "-o", "./mine.h5", rc=1)                  # OUT is FILE
        expect(open(mine, "rb").read() == before, "the input was modified")
        expect(run(opts.export, "--help").stdout.startswith("Usage: scope-export"), "--help")
        no_leftovers({"mine.h5"}, "usage")


# ---- scope-check -------------------------------------------------------------

def verdict_line(path, prof):
    def n(count, word):  # "1 region", "2 regions"
        return f"{count} {word}" + ("" if count == 1 else "s")
    return (f"{path}: ok ({n(len(prof.regions), 'region')}, {n(prof.total_calls, 'call')}, "
            f"{n(prof.ranks, 'rank')})")


def case_check_ok(name):
    src = fixture(name)
    prof = Profile(src)
    proc = run(opts.check, src)
    expect(proc.stdout.splitlines() == [verdict_line(src, prof)],
           f"report {proc.stdout!r}, expected {verdict_line(src, prof)!r}")
    proc = run(opts.check, "--quiet", src)
    expect(proc.stdout == "", f"--quiet printed {proc.stdout!r}")


class Damage:
    """A copy of a fixture with problems planted by h5py; each planted
    problem remembers the report line it must produce."""

    def __init__(self, name, target):
        self.path = copy_fixture(name, target)
        self.expected = []
        with h5py.File(self.path, "r") as f:
            idx = f["rank_region_index"]
            self.names = [text(n) for n in f["region_table/names"][()]]
            self.offsets = idx["event_offsets"][()].astype(np.int64)
            self.counts = idx["event_counts"][()].astype(np.int64)
            self.regions = idx["region_ids"][()].astype(np.int64)
            self.ranks = idx["ranks"][()].astype(np.int64)
            ev = f["events"]
            self.cid = ev["call_ids"][()]
            self.pid = ev["parent_ids"][()]
            self.tid = ev["thread_ids"][()] if "thread_ids" in ev else None

    def row_of(self, j):
        for r in range(len(self.offsets)):
            if self.offsets[r] <= j < self.offsets[r] + self.counts[r]:
                return r
        raise AssertionError(j)

    def prefix(self, j=None, row=None):
        row = self.row_of(j) if row is None else row
        return f"{self.path}: rank {self.ranks[row]} region {self.names[self.regions[row]]}: "

    def leaves(self):
        parents = set(int(p) for p in self.pid)
        return [j for j in range(len(self.cid)) if int(self.cid[j]) not in parents]

    def write(self, column, j, value):
        with h5py.File(self.path, "r+") as f:
            ds = f[column]
            data = ds[()]
            data[j] = value
            ds[...] = data

    def parent_later(self, j):
        with h5py.File(self.path, "r") as f:  # the ids as planted so far
            later = int(f["events/call_ids"][()].max())
        assert later > self.cid[j]
        self.write("events/parent_ids", j, later)
        self.expected.append(self.prefix(j) + f"call id {self.cid[j]}: parent id {later} is not "
                             "smaller than the call's id")

    def negative_duration(self, j):
        self.write("events/durations", j, -7)
        self.expected.append(self.prefix(j) + f"call id {self.cid[j]}: negative duration -7 ns")

    def exclusive(self, row):
        with h5py.File(self.path, "r") as f:
            old = int(f["rank_region_index/exclusive_totals"][row])
        self.write("rank_region_index/exclusive_totals", row, old + 1)
        self.expected.append(self.prefix(row=row) + f"stored exclusive total {old + 1} ns, the "
                             f"call tree gives {old} ns")

    def stats_total(self, row):
        with h5py.File(self.path, "r+") as f:
            ds = f["rank_region_index/summary_statistics"]
            data = ds[()]
            old = int(data["total"][row])
            data["total"][row] = old + 1
            ds[...] = data
        self.expected.append(self.prefix(row=row) + f"summary_statistics total is {old + 1}, "
                             f"the events give {old}")

    def duplicate_id(self, j, other):
        dup = int(self.cid[other])
        self.write("events/call_ids", j, dup)
        self.expected.append(self.prefix(j) + f"call #{j - self.offsets[self.row_of(j)]}: "
                             f"duplicate call id {dup}")

    def thread_unknown(self, j):
        self.write("events/thread_ids", j, 99)
        self.expected.append(self.prefix(j) + f"call id {self.cid[j]}: thread id 99 is not in the "
                             f"thread table of rank {self.ranks[self.row_of(j)]}")

    def thread_mismatch(self, j):
        """A call moved to another thread: its parent may stay there (an
        OpenMP worker's call under its team's fork call is such a parent),
        but then the parent's stored exclusive total, which subtracted the
        child as same-thread work, no longer matches the tree."""
        p = int(self.pid[j])
        jp = list(self.cid).index(p)
        ptid = int(self.tid[jp])
        other = 1 if ptid != 1 else 2
        self.write("events/thread_ids", j, other)
        self.expected.append(self.prefix(jp) + "stored exclusive total")

    def verify(self, at_least=None):
        proc = run(opts.check, self.path, rc=2)
        lines = proc.stdout.splitlines()
        for want in self.expected:
            expect(any(line.startswith(want) for line in lines),
                   f"no report line starting {want!r} in:\n{proc.stdout}")
        expect(lines and lines[-1].startswith(f"{self.path}: invalid: "),
               f"verdict: {lines[-1:] }")
        quiet = run(opts.check, "--quiet", self.path, rc=2).stdout.splitlines()
        expect(quiet == lines[:-1], f"--quiet report {quiet} != {lines[:-1]}")
        expect(all(line.startswith(f"{self.path}: rank ") for line in quiet),
               f"problem lines not in 'FILE: rank R region NAME: problem' form: {quiet}")
        if at_least:
            expect(len(quiet) >= at_least, f"{len(quiet)} problem lines, planted {at_least}")
        return lines


def case_check_damage(kind):
    if kind.startswith("thread"):
        d = Damage("driver-threads", "damaged.h5")
        children = [j for j in d.leaves() if d.pid[j] >= 0]
        getattr(d, kind)(children[0])
        d.verify()
        return
    d = Damage("driver-serial", "damaged.h5")
    leaves = d.leaves()
    children = [j for j in leaves if d.pid[j] >= 0]
    if kind == "parent_later":
        d.parent_later(children[0])
    elif kind == "negative_duration":
        d.negative_duration(children[0])
    elif kind == "exclusive":
        d.exclusive(1)
    elif kind == "stats_total":
        d.stats_total(2)
    elif kind == "duplicate_id":
        d.duplicate_id(leaves[-1], leaves[0])
    elif kind == "several":
        # Five problems in five different rows: all of them reported.
        used_rows = set()

        def pick(cands):
            for j in cands:
                if d.row_of(j) not in used_rows:
                    used_rows.add(d.row_of(j))
                    return j
            raise AssertionError("not enough rows")
        dup_j = pick(leaves[::-1])
        d.duplicate_id(dup_j, leaves[0] if d.row_of(leaves[0]) != d.row_of(dup_j) else leaves[1])
        d.parent_later(pick(children))
        d.negative_duration(pick(children))
        free = [r for r in range(len(d.offsets)) if r not in used_rows]
        d.exclusive(free[0])
        d.stats_total(free[1])
        d.verify(at_least=5)
        return
    else:
        raise SystemExit(f"unknown damage {kind}")
    d.verify()


def case_check_strict():
    """Calls out of start order are legal: ok without --strict, a warning
    (still exit 0) with it."""
    path = copy_fixture("compat-schema3", "unordered.h5")
    with h5py.File(path, "r+") as f:
        starts = np.cumsum(f["events/start_deltas"][()])
        durs = f["events/durations"][()]
        starts, durs = starts[::-1].copy(), durs[::-1].copy()
        f["events/start_deltas"][...] = np.diff(starts, prepend=0)
        f["events/durations"][...] = durs
        if "summary_statistics" in f["rank_region_index"]:
            ds = f["rank_region_index/summary_statistics"]
            stats = ds[()]
            stats["first"][0], stats["last"][0] = durs[0], durs[-1]
            ds[...] = stats
    prof = Profile(path)
    proc = run(opts.check, path)
    expect(proc.stdout.splitlines() == [verdict_line(path, prof)], f"report {proc.stdout!r}")
    proc = run(opts.check, "--strict", path)
    lines = proc.stdout.splitlines()
    expect(len(lines) == 2 and lines[0].startswith(f"{path}: rank 0 region solve: warning: ")
           and "start before" in lines[0] and lines[1] == verdict_line(path, prof),
           f"--strict report {lines}")


def case_check_unreadable():
    good = fixture("driver-serial")
    missing = os.path.abspath("missing.h5")
    with open("garbage.h5", "wb") as fh:
        fh.write(b"not a profile at all" * 10)
    proc = run(opts.check, good, missing, "garbage.h5", rc=2)
    lines = proc.stdout.splitlines()
    expect(verdict_line(good, Profile(good)) in lines, f"good file not ok: {lines}")
    for bad in (missing, "garbage.h5"):
        expect(any(l.startswith(f"{bad}: cannot be read: ") for l in lines), f"{bad}: {lines}")
        expect(f"{bad}: invalid (unreadable)" in lines, f"{bad} verdict: {lines}")
    run(opts.check, rc=1)
    run(opts.check, "--bogus", good, rc=1)
    expect(run(opts.check, "--help").stdout.startswith("Usage: scope-check"), "--help")


def main():
    case, arg = opts.case, opts.arg
    # Cases assert on the directory's contents (no temporary files left
    # behind), so start empty; only ever inside a ctest work folder.
    here = os.getcwd()
    if os.sep + "work" + os.sep in here + os.sep and os.path.basename(here).startswith(case):
        for entry in os.listdir(here):
            full = os.path.join(here, entry)
            shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)
    if case in ("chrome", "csv", "json"):
        case_export(case, arg)
    elif case == "filter":
        case_filter(arg)
    elif case == "default":
        case_default_format()
    elif case == "error":
        case_error(arg)
    elif case == "check_ok":
        case_check_ok(arg)
    elif case == "check_damage":
        case_check_damage(arg)
    elif case == "check_strict":
        case_check_strict()
    elif case == "check_unreadable":
        case_check_unreadable()
    else:
        raise SystemExit(f"unknown case {case}")
    if check.failures:
        print(f"{len(check.failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
