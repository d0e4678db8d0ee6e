#!/usr/bin/python3
"""Run one Fortran test program, then check the HDF5 file it wrote.

Usage: check_profile.py CASE PROGRAM [ARGS...]

The program runs in the current directory (each ctest entry has its own) and
must exit 0; it checks its own stat/errmsg results and exits 1 on failure.
This script then reads the file back with h5py, independently of the C
reader, and checks real values: call counts, parent ids, containment of
children in their parents, names recorded whole. Exit codes: 0 pass, 1 fail,
77 skip (h5py or numpy missing).

Each failed check prints the expression's meaning and both values, and the
script goes on to report every failure of the case before exiting 1.
"""
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as exc:  # the checker needs both; skip rather than fail
    print(f"SKIP: {exc}")
    sys.exit(77)

FAILURES = []


def check(condition, what, got=None, expected=None):
    """Record a failure (with both values) and continue, like acutest's check."""
    if condition:
        return True
    detail = "" if got is None and expected is None else f": got {got!r}, expected {expected!r}"
    caller = sys._getframe(1)
    FAILURES.append(f"check_profile.py:{caller.f_lineno}: {what}{detail}")
    print("FAIL", FAILURES[-1])
    return False


class Call:
    __slots__ = ("region", "start", "duration", "call_id", "parent_id", "thread")

    def __init__(self, region, start, duration, call_id, parent_id, thread):
        self.region = region
        self.start = start
        self.duration = duration
        self.call_id = call_id
        self.parent_id = parent_id
        self.thread = thread

    @property
    def end(self):
        return self.start + self.duration


class Profile:
    """Every call of a file, decoded from the columnar schema-3 layout."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            raw = f["region_table/names"][()]
            self.names = [n.decode() if isinstance(n, bytes) else str(n) for n in raw]
            index = f["rank_region_index"]
            region_ids = index["region_ids"][()]
            offsets = index["event_offsets"][()]
            counts = index["event_counts"][()]
            events = f["events"]
            deltas = events["start_deltas"][()]
            durations = events["durations"][()]
            call_ids = events["call_ids"][()]
            parent_ids = events["parent_ids"][()]
            threads = events["thread_ids"][()] if "thread_ids" in events else None
            self.metadata = {k: (v.decode() if isinstance(v, bytes) else v)
                             for k, v in f["metadata"].attrs.items()}
        self.calls = []
        self.rows_per_region = {}
        for region, offset, count in zip(region_ids, offsets, counts):
            name = self.names[int(region)]
            self.rows_per_region[name] = self.rows_per_region.get(name, 0) + 1
            lo, hi = int(offset), int(offset) + int(count)
            # start_deltas: the first of a row is absolute, the others are
            # differences to the previous start, so a prefix sum decodes them.
            starts = np.cumsum(deltas[lo:hi], dtype=np.int64)
            for k in range(hi - lo):
                i = lo + k
                self.calls.append(Call(name, int(starts[k]), int(durations[i]),
                                       int(call_ids[i]), int(parent_ids[i]),
                                       int(threads[i]) if threads is not None else 0))
        self.by_id = {c.call_id: c for c in self.calls}
        check(len(self.by_id) == len(self.calls), "call ids are unique",
              len(self.by_id), len(self.calls))

    def of(self, name):
        return [c for c in self.calls if c.region == name]

    def parent(self, call):
        return self.by_id.get(call.parent_id)

    def children(self, call):
        return [c for c in self.calls if c.parent_id == call.call_id]

    def check_tree(self):
        """Every parent id names a call that encloses its child in time."""
        for c in self.calls:
            check(c.duration >= 0, f"duration of {c.region} >= 0", c.duration)
            if c.parent_id == -1:
                continue
            p = self.parent(c)
            if not check(p is not None, f"parent id {c.parent_id} of {c.region} exists"):
                continue
            check(p.start <= c.start and c.end <= p.end,
                  f"{c.region} [{c.start}, {c.end}] inside parent {p.region} [{p.start}, {p.end}]")
            # another thread only for an OpenMP worker's root under the call
            # that forked its team (record/openmp.h): checked by its case


def expect_names(profile, *names):
    for name in names:
        check(name in profile.names, f"region {name!r} in /region_table/names")
        check(profile.names.count(name) == 1, f"region {name!r} registered once",
              profile.names.count(name), 1)


def expect_count(profile, name, count):
    check(len(profile.of(name)) == count, f"calls of {name!r}", len(profile.of(name)), count)


def expect_parents(profile, child, parent):
    """Every call of `child` has a call of `parent` as its parent."""
    for c in profile.of(child):
        p = profile.parent(c)
        check(p is not None and p.region == parent, f"parent of {child!r}",
              p.region if p else c.parent_id, parent)


# ---- the cases ---------------------------------------------------------------

def case_nesting(stdout, stderr):
    p = Profile("nesting.h5")
    p.check_tree()
    expect_names(p, "timestep", "stencil", "reduce", "agree")
    expect_count(p, "timestep", 3)
    expect_count(p, "stencil", 6)
    expect_count(p, "reduce", 3)
    for c in p.of("timestep"):
        check(c.parent_id == -1, "timestep is a root", c.parent_id, -1)
        kids = sorted((k.region for k in p.children(c)))
        check(kids == ["reduce", "stencil", "stencil"], "children of one timestep",
              kids, ["reduce", "stencil", "stencil"])
    expect_parents(p, "stencil", "timestep")
    expect_parents(p, "reduce", "timestep")
    # by name, by handle and mixed (begin by name, end by handle and back)
    # all land in the one region "agree": 4 ways x 5 calls.
    expect_count(p, "agree", 20)
    check(p.rows_per_region.get("agree") == 1, "one index row for agree",
          p.rows_per_region.get("agree"), 1)
    for c in p.of("agree"):
        check(c.parent_id == -1, "agree is a root", c.parent_id, -1)
    inner = p.of("agree_inner")
    check(len(inner) == 20, "agree_inner calls", len(inner), 20)
    expect_parents(p, "agree_inner", "agree")


def case_recursion(stdout, stderr):
    levels = 6  # tree(6): a full binary tree of calls
    p = Profile("recursion.h5")
    p.check_tree()
    expect_names(p, "driver", "tree", "countdown")
    expect_count(p, "driver", 1)
    expect_count(p, "tree", 2 ** (levels + 1) - 1)
    driver = p.of("driver")[0]
    roots = [c for c in p.of("tree") if c.parent_id == driver.call_id]
    check(len(roots) == 1, "tree calls whose parent is driver", len(roots), 1)
    # depth k of the tree holds 2**k calls; leaves have no children, others 2
    depth = {}
    for c in sorted(p.of("tree"), key=lambda c: c.call_id):
        parent = p.parent(c)
        depth[c.call_id] = 0 if parent.region == "driver" else depth[parent.call_id] + 1
        check(parent.region in ("driver", "tree"), "parent of tree", parent.region)
    for k in range(levels + 1):
        n = sum(1 for d in depth.values() if d == k)
        check(n == 2 ** k, f"tree calls at depth {k}", n, 2 ** k)
    for c in p.of("tree"):
        kids = p.children(c)
        want = 0 if depth[c.call_id] == levels else 2
        check(len(kids) == want, f"children of a depth-{depth[c.call_id]} tree call",
              len(kids), want)
    # countdown(10) by handle: a chain of 11 calls, each the parent of the next
    chain = sorted(p.of("countdown"), key=lambda c: c.start)
    check(len(chain) == 11, "countdown calls", len(chain), 11)
    if chain:
        check(p.parent(chain[0]) is driver, "countdown chain hangs under driver",
              chain[0].parent_id, driver.call_id)
    for a, b in zip(chain, chain[1:]):
        check(b.parent_id == a.call_id, "countdown parent is the enclosing countdown",
              b.parent_id, a.call_id)


def case_errors(stdout, stderr):
    p = Profile("errors.h5")
    p.check_tree()
    # the unmatched and mismatched ends changed nothing: the open call of
    # "open_a" survived them and was closed normally, once.
    expect_count(p, "open_a", 1)
    expect_count(p, "inner_b", 1)
    expect_parents(p, "inner_b", "open_a")
    check("never_opened" not in [c.region for c in p.calls], "no call of never_opened")
    # begin nest_a; begin nest_b; end nest_a is a nesting error that changed
    # nothing either: nest_b closed inside nest_a.
    expect_count(p, "nest_a", 1)
    expect_count(p, "nest_b", 1)
    expect_parents(p, "nest_b", "nest_a")
    check(len(p.calls) == 5, "calls recorded", len(p.calls), 5)
    expect_count(p, "after_errors", 1)
    # The module's sp_setup says what language the program is in.
    check(p.metadata.get("source_language") == "fortran", "metadata source_language",
          p.metadata.get("source_language"), "fortran")
    # The calls without stat printed one line each and the program went on;
    # the calls with stat printed nothing from the module.
    lines = stderr.splitlines()
    setup_lines = [l for l in lines if "sp_setup:" in l]
    check(len(setup_lines) == 1, "stderr lines from sp_setup (one call without stat)",
          setup_lines, "one line")
    begin_lines = [l for l in lines if "sp_region_begin:" in l]
    check(len(begin_lines) == 1, "stderr lines from sp_region_begin (one call without stat)",
          begin_lines, "one line")
    unmatched = [l for l in lines if "without a matching begin" in l and "no_stat_end" in l]
    check(len(unmatched) == 1, "the core reported the unmatched end without stat",
          unmatched, "one line")
    nesting = [l for l in lines if 'end of region "nest_a" while "nest_b", begun inside it, '
               'is still open' in l]
    check(len(nesting) == 1, "the core reported the nesting error without stat (once)",
          nesting, "one line")
    check(not any("without a matching begin" in l and "nest_a" in l for l in lines),
          "nest_a is not called unmatched")
    invalid = [l for l in lines if l.startswith("scope-profiler: invalid region handle")]
    check(len(invalid) == 2, "the core reported both invalid handles (one line each)",
          invalid, "two lines")


def case_before_setup(stdout, stderr):
    p = Profile("before_setup.h5")
    p.check_tree()
    # nothing recorded before sp_setup or after the first sp_finalize shows up
    check(sorted(set(c.region for c in p.calls)) == ["recorded"],
          "regions with calls", sorted(set(c.region for c in p.calls)), ["recorded"])
    expect_count(p, "recorded", 2)


def case_unwritable(stdout, stderr):
    check(not os.path.exists("missing_dir"), "the missing directory was not created")
    leftovers = [n for n in os.listdir(".") if n.endswith(".tmp") or n.endswith(".h5")]
    check(leftovers == [], "no file left in the working directory", leftovers, [])


def case_long_names(stdout, stderr):
    p = Profile("long_names.h5")
    p.check_tree()
    long_a = "".join(chr(ord("a") + i % 26) for i in range(299)) + "A"
    long_b = long_a[:-1] + "B"
    huge = "".join(chr(ord("0") + i % 10) for i in range(5000))
    expect_names(p, long_a, long_b, huge, "padded", "  leading blanks kept")
    check(len(long_a) == 300, "test name length", len(long_a), 300)
    expect_count(p, long_a, 3)
    expect_count(p, long_b, 1)
    expect_count(p, huge, 2)
    expect_count(p, "padded", 2)
    expect_parents(p, long_b, long_a)
    check("padded   " not in p.names, "trailing blanks are not part of a name")
    for name in p.names:
        check(len(name) in (300, 5000) or len(name) < 100, "no name was truncated", len(name))


def check_mixed_chain(path, chain):
    p = Profile(path)
    p.check_tree()
    expect_names(p, *chain)
    for name in chain:
        expect_count(p, name, 2)
    for child, parent in zip(chain[1:], chain):
        expect_parents(p, child, parent)
    check(p.of(chain[0]) and all(c.parent_id == -1 for c in p.of(chain[0])),
          f"{chain[0]} is a root")


def case_mixed_fortran_main(stdout, stderr):
    # Fortran region > C region > Fortran region, in one file
    check_mixed_chain("mixed_fortran_main.h5", ["f_outer", "c_middle", "f_inner"])


def case_mixed_c_main(stdout, stderr):
    # C region > Fortran region > C region, in one file
    check_mixed_chain("mixed_c_main.h5", ["c_outer", "f_middle", "c_inner"])


def case_openmp(stdout, stderr):
    p = Profile("openmp.h5")
    p.check_tree()
    iterations = 1000
    expect_count(p, "parallel_loop", 1)
    expect_count(p, "body", iterations)
    expect_count(p, "body_inner", iterations)
    expect_parents(p, "body_inner", "body")
    loop = p.of("parallel_loop")[0]
    for c in p.of("body"):
        # the loop region is open on the main thread; the worker threads'
        # calls hang under it too (the call that forked their team)
        check(c.parent_id == loop.call_id, "parent of body", c.parent_id, loop.call_id)
    for c in p.of("body_inner"):
        parent = p.parent(c)
        check(parent is not None and parent.thread == c.thread, "body_inner on body's thread")
    threads = sorted(set(c.thread for c in p.of("body")))
    expected_threads = int(stdout.split("threads=")[1].split()[0]) if "threads=" in stdout else None
    check(len(threads) == expected_threads, "threads that recorded body",
          len(threads), expected_threads)


def case_aggregate(stdout, stderr):
    import h5py
    with h5py.File("aggregate.h5", "r") as f:
        check(f.attrs["storage_layout"] in ("aggregate", b"aggregate"), "aggregate layout")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        counts = {names[r]: int(c) for r, c in zip(idx["region_ids"][:], idx["aggregate_counts"][:])}
        check(counts == {"driver": 1, "tree": 31, "step": 5, "inner": 5}, "counts", counts)
        g = f["rank0/call_paths"]
        paths = {names[r]: (int(p), int(c), int(n)) for r, p, c, n in
                 zip(g["region_ids"][:], g["parents"][:], g["counts"][:], g["recursions"][:])}
        by_index = [names[r] for r in g["region_ids"][:]]
        check(len(paths) == 4, "one path per region", sorted(paths))
        check(by_index[paths["tree"][0]] == "driver" and paths["tree"][2] == 30,
              "tree is one path under driver with 30 recursive calls", paths["tree"])
        check(by_index[paths["inner"][0]] == "step", "inner under step", paths["inner"])
    check(not os.path.exists("bad_mode.h5"), "no file from the refused setup")


NAME_MEMO_NAMES = ["x", "y", "ab", "ac", "abc", "abd", "abXdef", "abYdef", "abcXefg", "abcYefg",
                   "solve", "omega", "abcdefgh1", "abcdefgh2", "kernel_a_x", "kernel_b_x",
                   "sixteen_chars_aa", "sixteen_chars_ab", "a_seventeen_chars",
                   "b_seventeen_chars", "stem", "stem_longer", "outer", "inner"]


def case_name_memo(stdout, stderr):
    """test_name_memo.f90: one character variable, its value changing; every
    name its own region with its own calls (3 rounds), inner under outer,
    open_a closed once after the refused end through open_b."""
    p = Profile("name_memo_trace.h5")
    p.check_tree()
    for name in NAME_MEMO_NAMES:
        expect_count(p, name, 3)
    expect_names(p, *NAME_MEMO_NAMES)
    expect_parents(p, "inner", "outer")
    expect_count(p, "open_a", 1)
    expect_count(p, "open_b", 0)
    with h5py.File("name_memo_aggregate.h5", "r") as f:
        check(f.attrs["storage_layout"] in ("aggregate", b"aggregate"), "aggregate layout")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        counts = {names[r]: int(c) for r, c in zip(idx["region_ids"][:], idx["aggregate_counts"][:])}
        expected = dict({name: 3 for name in NAME_MEMO_NAMES}, open_a=1)
        check(counts == expected, "aggregate counts per region", counts, expected)
        g = f["rank0/call_paths"]
        by_index = [names[r] for r in g["region_ids"][:]]
        parents = {names[r]: int(parent) for r, parent in zip(g["region_ids"][:], g["parents"][:])}
        check(parents.get("inner", -1) >= 0 and by_index[parents["inner"]] == "outer",
              "inner's path is under outer", parents.get("inner"))
    check(stderr.count("without a matching begin") == 0,
          "the refused ends took stat: nothing printed", stderr.count("without a matching begin"), 0)


# the same program and checks with SCOPE_PROFILER_CLOCK=tsc (CMakeLists.txt)
case_name_memo_tsc = case_name_memo


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in CASES:
        print(__doc__)
        print("cases:", " ".join(sorted(CASES)))
        return 2
    case, command = sys.argv[1], sys.argv[2:]
    for name in os.listdir("."):  # stale output of an earlier run
        if name.endswith(".h5") or name.endswith(".tmp"):
            os.remove(name)
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode == 77:
        return 77
    if not check(run.returncode == 0, f"exit status of {command[0]}", run.returncode, 0):
        return 1
    CASES[case](run.stdout, run.stderr)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed in case {case}")
        return 1
    print(f"case {case}: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
