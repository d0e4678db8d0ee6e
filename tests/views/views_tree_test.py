#!/usr/bin/env python3
"""views_tree_test.py - one tree for every view (issue 28), the views'
memory per lane (issue 29 item 8), extreme timestamps (issue 29 item 11)
and the size of a speedscope export (issue 34).

    views_tree_test.py --export E --report R --make M CASE ARG

Cases:
  tree interleaved   two unrelated trees on one lane, stored parents: the
                     second tree's root lies inside the first tree's call
  tree containment   the same calls without call/parent ids: containment
  tree merged        two runs recorded at the same time, merged with
                     scope-merge --allow-disjoint
      Every view (folded, speedscope, chrome, svg, the report's table,
      flame graph and timeline) holds every call, under the same parent as
      the reference tree: the stored parent ids (scope-inspect's tree,
      whose text is checked too), or containment per lane without ids.
  lanes million      10^6 thread ids: refused by default with a message
                     naming SCOPE_PROFILER_VIEW_MEMORY, done within a
                     raised budget under ulimit -v (not in sanitizer builds)
  extreme stamps     INT64_MIN/INT64_MAX starts and durations: every view
                     exits cleanly (the sanitizer build catches overflow)
  size speedscope    a regular program of many calls: the export's size
                     grows with distinct stacks, not calls
  report columns     the report's imbalance labels (ellipsis, full name in
                     the tooltip) and its "% session" column

Memory is checked with ulimit -v; nothing here measures time.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402
from h5_calls import read_calls  # noqa: E402

parser = argparse.ArgumentParser()
for opt in ("export", "report", "make"):
    parser.add_argument("--" + opt, required=True)
parser.add_argument("case")
parser.add_argument("arg")
opts = parser.parse_args()
BIN = os.path.dirname(opts.export)
SVG = "{http://www.w3.org/2000/svg}"
check = checks.Checks("views tree")
expect = check


def run(tool, *args, rc=0, env=None, prefix=None):
    cmd = (prefix or []) + [tool, *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)
    if rc is not None and proc.returncode != rc:
        print(f"FAIL: {' '.join(cmd)}: exit {proc.returncode}, expected {rc}\n"
              f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
        sys.exit(1)
    return proc


# ---- crafted files -------------------------------------------------------------

VSTR = h5py.string_dtype("utf-8")


def write_file(path, calls, ids=True, threads=1):
    """calls: (region, start, duration, call id, parent id, thread); one
    rank; rows per region in start order."""
    regions = sorted({c[0] for c in calls})
    rows = [sorted((c for c in calls if c[0] == r), key=lambda c: c[1]) for r in regions]
    flat = [c for row in rows for c in row]
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = np.int64(1)
        f.create_dataset("region_table/names", data=np.array(regions, dtype=object), dtype=VSTR)
        idx = f.create_group("rank_region_index")
        counts = [len(r) for r in rows]
        idx["region_ids"] = np.arange(len(regions), dtype=np.uint32)
        idx["ranks"] = np.zeros(len(regions), dtype=np.uint32)
        idx["event_offsets"] = np.array([sum(counts[:i]) for i in range(len(counts))], dtype=np.uint64)
        idx["event_counts"] = np.array(counts, dtype=np.uint64)
        ev = f.create_group("events")
        ev["start_times"] = np.array([c[1] for c in flat], dtype=np.int64)
        ev["end_times"] = np.array([c[1] + c[2] for c in flat], dtype=np.int64)
        ev["durations"] = np.array([c[2] for c in flat], dtype=np.int64)
        if ids:
            ev["call_ids"] = np.array([c[3] for c in flat], dtype=np.int64)
            ev["parent_ids"] = np.array([c[4] for c in flat], dtype=np.int64)
        ev["thread_ids"] = np.array([c[5] for c in flat], dtype=np.int64)
        tt = f.create_group("thread_table")
        for name, values in (("ranks", [0] * threads), ("index", list(range(threads))),
                             ("ident", list(range(1, threads + 1))),
                             ("native_id", list(range(1, threads + 1))),
                             ("daemon", [0] * threads), ("start_ns", [0] * threads),
                             ("end_ns", [-1] * threads), ("cpu_ns", [0] * threads)):
            tt[name] = np.array(values, dtype=np.int64)
        tt.create_dataset("name", data=np.array([f"t{i}" for i in range(threads)], dtype=object),
                          dtype=VSTR)


# Tree A: A:main > A:flux_row > A:leaf x2; tree C: C:main_loop > C:step x2,
# a root that lies inside A:flux_row in time (issue 28's picture).
INTERLEAVED = [("A:main", 0, 1000, 0, -1, 0), ("A:flux_row", 100, 800, 1, 0, 0),
               ("C:main_loop", 150, 600, 5, -1, 0), ("C:step", 160, 100, 6, 5, 0),
               ("A:leaf", 200, 50, 2, 1, 0), ("C:step", 300, 100, 7, 5, 0),
               ("A:leaf", 500, 50, 3, 1, 0)]


# ---- the reference tree, read with h5py ---------------------------------------

def reference_paths(calls):
    """Each call's path (regions from its root): by stored parent when the
    file has ids, else by containment per lane (start, longest first)."""
    stored = all(c["id"] is not None and c["parent"] is not None for c in calls)
    path = {}
    if stored:
        by_id = {(c["rank"], c["id"]): c for c in calls}
        def walk(c):
            key = (c["rank"], c["id"])
            if key not in path:
                p = by_id.get((c["rank"], c["parent"]))
                path[key] = (walk(p) if p else ()) + (c["region"],)
            return path[key]
        return [walk(c) for c in calls]
    out = [None] * len(calls)
    lanes = collections.defaultdict(list)
    for i, c in enumerate(calls):
        lanes[(c["rank"], c["thread"])].append(i)
    for lane in lanes.values():
        stack = []
        for i in sorted(lane, key=lambda i: (calls[i]["start"], -calls[i]["end"])):
            c = calls[i]
            while stack and stack[-1][0]["end"] <= c["start"]:
                stack.pop()
            out[i] = (stack[-1][1] if stack else ()) + (c["region"],)
            stack.append((c, out[i]))
    return out


def exclusive_by_path(calls, paths):
    """ns of own time per path (duration minus direct children)."""
    own = collections.Counter()
    for c, p in zip(calls, paths):
        own[p] += c["end"] - c["start"]
    # a child's time leaves its parent's path
    for c, p in zip(calls, paths):
        if len(p) > 1:
            own[p[:-1]] -= c["end"] - c["start"]
    return +own


# ---- what each view says -------------------------------------------------------

def folded_paths(path):
    weights = collections.Counter()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            stack, w = line.rstrip("\n").rsplit(" ", 1)
            weights[tuple(stack.split(";"))] += int(w)
    return weights


def speedscope_paths(doc):
    """Calls per path from evented profiles, weights per path from sampled
    ones; the number of calls each profile says it holds."""
    frames = [f["name"] for f in doc["shared"]["frames"]]
    calls, weights = collections.Counter(), collections.Counter()
    for p in doc["profiles"]:
        if p["type"] == "evented":
            stack, opened = [], {}
            for e in p["events"]:
                if e["type"] == "O":
                    stack.append(frames[e["frame"]])
                    calls[tuple(stack)] += 1
                    opened[len(stack)] = e["at"]
                else:
                    expect(stack and stack[-1] == frames[e["frame"]], f"unmatched close {e}")
                    stack.pop()
        else:
            for sample, w in zip(p["samples"], p["weights"]):
                weights[tuple(frames[i] for i in sample)] += w
    return calls, weights


def svg_calls(root):
    """(depth, name) -> calls, from the frames' details."""
    out = collections.Counter()
    for g in root.iter(SVG + "g"):
        if g.get("class") != "fr" or int(g.get("data-d")) == 0:
            continue
        m = re.search(r", (\d+) calls$", g.get("data-info"))
        out[(int(g.get("data-d")), g.get("data-n"))] += int(m.group(1)) if m else 0
    return +out


def inspect_paths(path):
    """Paths of scope-inspect's text tree: "| " rows, a child one level
    deeper per "| " or "  " before its "`- " (names without "(Nx)")."""
    text = run(os.path.join(BIN, "scope-inspect"), path, "--ascii").stdout
    paths, stack = set(), []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("| ") and line.endswith("|")):
            continue
        inner = line[2:-1]
        m = re.match(r"^((?:\| |  )*)(`- |\|- )?(.*?)\s{2,}\S+\s*$", inner)
        if not m or m.group(3) in ("region", "(own)"):
            continue
        depth = len(m.group(1)) // 2 + (1 if m.group(2) else 0)
        del stack[depth:]
        stack.append(re.sub(r" \(\d+x\)$", "", m.group(3)))
        paths.add(tuple(stack))
    return paths


def check_views(src, calls, ids):
    paths = reference_paths(calls)
    want_calls = collections.Counter(paths)
    want_own = exclusive_by_path(calls, paths)
    n = len(calls)

    run(opts.export, src, "-o", "out.folded", "--format", "folded")
    got = folded_paths("out.folded")
    expect(got == want_own, f"folded {dict(got)} != reference {dict(want_own)}")
    # lanes spilled to the temporary file in blocks: the same tree
    run(opts.export, src, "-o", "spill.folded", "--format", "folded",
        env={"SCOPE_PROFILER_VIEW_MEMORY": "1K"})
    expect(folded_paths("spill.folded") == got, "the spilled lanes give another tree")

    run(opts.export, src, "-o", "out.speedscope", "--format", "speedscope")
    with open("out.speedscope") as fh:
        doc = json.load(fh)
    got_calls, _ = speedscope_paths(doc)
    expect(sum(got_calls.values()) == n, f"speedscope holds {sum(got_calls.values())} of {n} calls")
    expect(got_calls == want_calls, f"speedscope paths {dict(got_calls)} != {dict(want_calls)}")

    run(opts.export, src, "-o", "out.json", "--format", "chrome")
    with open("out.json") as fh:
        events = [e for e in json.load(fh)["traceEvents"] if e["ph"] == "X"]
    expect(len(events) == n, f"chrome trace holds {len(events)} of {n} calls")
    if ids:
        got = sorted((e["args"]["call_id"], e["args"]["parent_id"]) for e in events)
        expect(got == sorted((c["id"], c["parent"]) for c in calls), "chrome parent ids differ")
        # Perfetto nests a tid's events by time: that nesting must be the
        # stored one (an unrelated tree on its own tid)
        tracks = collections.defaultdict(list)
        for e in events:
            tracks[(e["pid"], e["tid"])].append(e)
        for evs in tracks.values():
            stack = []
            for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])):
                while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                    stack.pop()
                drawn = stack[-1]["args"]["call_id"] if stack else -1
                stored = e["args"]["parent_id"]
                on_track = any(x["args"]["call_id"] == stored for x in evs)
                expect(drawn == (stored if on_track else -1),
                       f"chrome tid {e['tid']}: call {e['args']['call_id']} drawn under "
                       f"{drawn}, stored parent {stored}")
                stack.append(e)

    depth_calls = collections.Counter({(len(p), p[-1]): k for p, k in want_calls.items()})
    run(opts.export, src, "-o", "out.svg", "--format", "svg")
    got = svg_calls(ET.parse("out.svg").getroot())
    expect(got == depth_calls, f"svg frames {dict(got)} != {dict(depth_calls)}")

    run(opts.report, src, "-o", "report.html")
    with open("report.html", encoding="utf-8") as fh:
        html = fh.read()
    svg = re.search(r"<svg[^>]*class=\"flamegraph\".*?</svg>", html, re.S).group(0)
    got = svg_calls(ET.fromstring(svg))
    expect(got == depth_calls, f"report flame graph {dict(got)} != {dict(depth_calls)}")
    table = {}
    for row in re.findall(r"<tr><td>(.*?)</td>(.*?)</tr>", html):
        cells = re.findall(r'data-v="([^"]*)"', row[1])
        if len(cells) >= 2:
            table[row[0]] = int(float(cells[1]))
    per_region = collections.Counter(c["region"] for c in calls)
    expect(table == dict(per_region), f"report table calls {table} != {dict(per_region)}")
    data = json.loads(re.search(r'<script type="application/json" id="tl-data">(.*?)</script>',
                                html, re.S).group(1))
    drawn = collections.Counter()
    for lane in data["lanes"]:
        c = lane["calls"]
        for i in range(0, len(c), 4):
            drawn[(c[i + 2] + 1, data["names"][c[i + 3]])] += 1
    expect(drawn == depth_calls, f"report timeline {dict(drawn)} != {dict(depth_calls)}")
    return paths


def case_tree(kind):
    src = os.path.abspath(f"{kind}.h5")
    if kind in ("interleaved", "containment"):
        write_file(src, INTERLEAVED, ids=kind == "interleaved")
    else:
        for attempt in range(5):
            procs = [subprocess.Popen([opts.make, "tree", p, f"{p}.h5"]) for p in ("A", "C")]
            expect(all(p.wait() == 0 for p in procs), "recording the two runs failed")
            spans = []
            for p in ("A", "C"):
                cs = read_calls(f"{p}.h5")
                spans.append((min(c["start"] for c in cs), max(c["end"] for c in cs)))
            if spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]:
                break
        expect(spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1],
               f"the two runs never overlapped in time: {spans}")
        run(os.path.join(BIN, "scope-merge"), "A.h5", "C.h5", "-o", src, "--allow-disjoint")
    calls = read_calls(src)
    paths = check_views(src, calls, ids=kind != "containment")
    if kind == "interleaved":
        expect(("A:main", "A:flux_row", "C:main_loop") not in paths and
               ("C:main_loop",) in paths, "the reference itself re-parents C:main_loop")
    if kind != "containment":
        got = inspect_paths(src)
        expect(got == set(paths), f"scope-inspect's tree {sorted(got)} != {sorted(set(paths))}")


def sanitized(exe):
    """ASan reserves terabytes of address space: no ulimit -v then."""
    with open(exe, "rb") as fh:
        return b"__asan_init" in fh.read()


def limited(kib):
    return None if sanitized(opts.export) else ["sh", "-c", f"ulimit -v {kib} && exec \"$@\"", "sh"]


def case_lanes(_):
    """10^6 thread ids, one call each (issue 29 item 8: 4.1 GB before)."""
    n = 10 ** 6
    src = os.path.abspath("million.h5")
    with h5py.File(src, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = np.int64(1)
        f.create_dataset("region_table/names", data=np.array(["work"], dtype=object), dtype=VSTR)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.zeros(1, dtype=np.uint32)
        idx["ranks"] = np.zeros(1, dtype=np.uint32)
        idx["event_offsets"] = np.zeros(1, dtype=np.uint64)
        idx["event_counts"] = np.array([n], dtype=np.uint64)
        ev = f.create_group("events")
        deltas = np.full(n, 10, dtype=np.int64)
        deltas[0] = 1000
        ev["start_deltas"] = deltas
        ev["durations"] = np.full(n, 5, dtype=np.int64)
        ev["call_ids"] = np.arange(n, dtype=np.int64)
        ev["parent_ids"] = np.full(n, -1, dtype=np.int64)
        ev["thread_ids"] = np.arange(n, dtype=np.int64)
    cap = limited(1536 * 1024)  # 1.5 GiB of address space, libraries included
    for fmt in ("folded", "speedscope"):
        proc = run(opts.export, src, "-o", f"out.{fmt}", "--format", fmt, rc=3, prefix=cap)
        expect("SCOPE_PROFILER_VIEW_MEMORY" in proc.stderr and src in proc.stderr,
               f"{fmt}: the refusal does not name the file and the setting: {proc.stderr!r}")
        expect(not os.path.exists(f"out.{fmt}"), f"{fmt}: output written anyway")
    proc = run(opts.report, src, "-o", "report.html", rc=3, prefix=cap)
    expect("SCOPE_PROFILER_VIEW_MEMORY" in proc.stderr, f"report: {proc.stderr!r}")
    raised = {"SCOPE_PROFILER_VIEW_MEMORY": "256M"}
    run(opts.export, src, "-o", "out.folded", "--format", "folded", env=raised, prefix=cap)
    expect(folded_paths("out.folded") == {("work",): 5 * n}, "folded weights of a million lanes")
    run(opts.export, src, "-o", "out.speedscope", "--format", "speedscope", env=raised,
        prefix=cap)
    with open("out.speedscope") as fh:
        doc = json.load(fh)
    calls, weights = speedscope_paths(doc)
    said = sum(int(m) for p in doc["profiles"]
               for m in re.findall(r"aggregated: (\d+) calls", p["name"]))
    expect(len(doc["profiles"]) == n and sum(calls.values()) + said == n,
           f"{len(doc['profiles'])} profiles, calls {dict(calls)} + {said} aggregated")
    expect(set(calls) | set(weights) == {("work",)}, "a path that is not the region")
    # Stopped by SIGTERM while it writes: no temporary left, here or in
    # TMPDIR (the lanes' file never has a name; the output's is removed).
    os.mkdir("tmpdir")
    run(opts.make, "calls", 2000000, "many.h5")
    proc = subprocess.Popen([opts.export, "many.h5", "-o", "killed.speedscope", "--format",
                             "speedscope"], env={**os.environ, "SCOPE_PROFILER_VIEW_MEMORY": "8M",
                                                 "TMPDIR": os.path.abspath("tmpdir")},
                            stderr=subprocess.DEVNULL)
    for _ in range(600):  # until the output's temporary exists, or the export ended
        if proc.poll() is not None or any(p.startswith(".killed") for p in os.listdir(".")):
            break
        time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=120)
    leftovers = [p for p in os.listdir(".") if p.startswith(".")] + os.listdir("tmpdir")
    expect(not leftovers, f"temporary files left: {leftovers}")


I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


def case_extreme(_):
    """Starts and ends at both ends of int64 (issue 29 item 11): spans from
    the origin reach 2^64 - 1 and pooled totals pass INT64_MAX. Every view
    must finish without signed overflow (UBSan in the sanitizer build says
    "runtime error") and write times that do not go back."""
    src = os.path.abspath("extreme.h5")
    # (rank, region, start, duration, call id, parent id, thread)
    calls = [(0, "A", I64_MIN, I64_MAX, 0, -1, 0), (0, "B", I64_MIN, 5, 1, 0, 0),
             (0, "B", I64_MAX - 1, 1, 2, -1, 0),
             (1, "A", 0, I64_MAX, 0, -1, 0), (1, "B", I64_MAX - 10, 10, 1, 0, 0)]
    regions = ["A", "B"]
    rows = [(rank, r) for rank in (0, 1) for r in regions]
    flat = [c for key in rows for c in calls if (c[0], c[1]) == key]
    with h5py.File(src, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = np.int64(2)
        f.create_dataset("region_table/names", data=np.array(regions, dtype=object), dtype=VSTR)
        idx = f.create_group("rank_region_index")
        counts = [sum(1 for c in calls if (c[0], c[1]) == key) for key in rows]
        idx["region_ids"] = np.array([regions.index(r) for _, r in rows], dtype=np.uint32)
        idx["ranks"] = np.array([rank for rank, _ in rows], dtype=np.uint32)
        idx["event_offsets"] = np.array([sum(counts[:i]) for i in range(len(counts))],
                                        dtype=np.uint64)
        idx["event_counts"] = np.array(counts, dtype=np.uint64)
        ev = f.create_group("events")
        ev["start_times"] = np.array([c[2] for c in flat], dtype=np.int64)
        ev["end_times"] = np.array([c[2] + c[3] for c in flat], dtype=np.int64)
        ev["durations"] = np.array([c[3] for c in flat], dtype=np.int64)
        ev["call_ids"] = np.array([c[4] for c in flat], dtype=np.int64)
        ev["parent_ids"] = np.array([c[5] for c in flat], dtype=np.int64)
        ev["thread_ids"] = np.array([c[6] for c in flat], dtype=np.int64)
    outputs = [(opts.export, "out.folded", "folded"), (opts.export, "out.speedscope", "speedscope"),
               (opts.export, "out.json", "chrome"), (opts.export, "out.csv", "csv"),
               (opts.export, "out.stats", "json"), (opts.export, "out.svg", "svg"),
               (opts.report, "report.html", None)]
    for tool, out, fmt in outputs:
        args = [src, "-o", out] + (["--format", fmt] if fmt else [])
        proc = run(tool, *args, rc=None)
        expect("runtime error" not in proc.stderr and "Sanitizer" not in proc.stderr,
               f"{fmt or 'report'}: {proc.stderr[-1500:]}")
        expect(proc.returncode in (0, 2), f"{fmt or 'report'}: exit {proc.returncode}")
        if proc.returncode == 2:
            expect(src in proc.stderr, f"{fmt}: refused without naming the file")
            continue
        if fmt == "speedscope":
            with open(out) as fh:
                doc = json.load(fh)
            for p in doc["profiles"]:
                ats = [e["at"] for e in p.get("events", [])]
                expect(ats == sorted(ats) and all(0 <= a <= 2 ** 64 - 1 for a in ats),
                       f"{p['name']}: times {ats}")
            expect(max(e["at"] for p in doc["profiles"] for e in p.get("events", []))
                   == 2 ** 64 - 1, "the latest end is not 2^64 - 1 ns after the origin")
        if fmt == "chrome":
            with open(out) as fh:
                ts = [e["ts"] for e in json.load(fh)["traceEvents"] if e["ph"] == "X"]
            expect(min(ts) == 0 and all(t >= 0 for t in ts), f"chrome ts {ts}")
        if fmt == "folded":
            expect(all(w > 0 for w in folded_paths(out).values()), "a folded weight <= 0")
    # an end past INT64_MAX is refused by the reader, naming the file
    bad = os.path.abspath("overflow.h5")
    write_file(bad, [("A", 10, 5, 0, -1, 0)])
    with h5py.File(bad, "r+") as f:  # duration INT64_MAX: the end 10 + INT64_MAX wraps
        f["events/durations"][0] = I64_MAX
        f["events/end_times"][0] = I64_MIN + 9
    for fmt in ("folded", "speedscope", "chrome"):
        proc = run(opts.export, bad, "-o", "bad.out", "--format", fmt, rc=None)
        expect(proc.returncode == 2 and bad in proc.stderr and "runtime error" not in proc.stderr,
               f"{fmt} of an overflowing end: exit {proc.returncode}, {proc.stderr[-500:]!r}")


def case_size(_):
    """3.1M calls of a regular program (issue 34: 249 MB before): the
    export stays under 50 MB, its aggregated profiles weigh every path as
    the folded stacks do, and it still follows speedscope's schema."""
    src = os.path.abspath("regular.h5")
    run(opts.make, "calls", 3100000, src)
    run(opts.export, src, "-o", "out.speedscope", "--format", "speedscope")
    size = os.path.getsize("out.speedscope")
    expect(size <= 50 * 1024 * 1024, f"speedscope export of 3.1M calls is {size} bytes")
    with open("out.speedscope") as fh:
        doc = json.load(fh)
    expect(any(p["type"] == "sampled" for p in doc["profiles"]), "no aggregated profile")
    calls, weights = speedscope_paths(doc)
    run(opts.export, src, "-o", "out.folded", "--format", "folded")
    folded = folded_paths("out.folded")
    for path, k in calls.items():  # evented lanes, if any, count calls: weigh them apart
        folded.pop(path, None)
    expect(weights == folded, f"aggregated weights {dict(weights)} != folded {dict(folded)}")
    said = sum(int(m) for p in doc["profiles"]
               for m in re.findall(r"aggregated: (\d+) calls", p["name"]))
    expect(said + sum(calls.values()) == 3100001,
           f"the profiles hold {said} + {sum(calls.values())} calls, not 3100001")
    schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "node_modules/speedscope/dist/release/file-format-schema.json")
    try:
        import jsonschema
        with open(schema_path) as fh:
            schema = json.load(fh)
        errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
        expect(not errors, "schema violations: " + "; ".join(e.message for e in errors[:5]))
    except (ImportError, OSError):
        print("note: speedscope's schema or python3-jsonschema not installed: schema not checked")


def case_report(_):
    """Issue 34's report fixes: a long region name is cut with an ellipsis
    in the imbalance chart and kept whole in its tooltip; "% session" is
    the pooled total over the rank's recorded span, also for a native
    recording (no scope_profiler.session region)."""
    long_name = "A:" + "very_long_region_name_" * 6 + "end"
    calls = [(long_name if c[0] == "A:main" else c[0],) + c[1:] for c in INTERLEAVED]
    src = os.path.abspath("long.h5")
    write_file(src, calls)
    run(opts.report, src, "-o", "report.html")
    with open("report.html", encoding="utf-8") as fh:
        html = fh.read()
    chart = re.search(r'<svg[^>]*id="imbalance-chart".*?</svg>\n', html, re.S).group(0)
    row = re.search(r'<g class="imb" data-name="' + re.escape(long_name) + r'"><title>(.*?)</title>'
                    r'.*?<text[^>]*>(.*?)</text>', chart, re.S)
    expect(row is not None, "no imbalance row with the long name in data-name")
    if row:
        expect(row.group(1).startswith(long_name), f"tooltip {row.group(1)!r}")
        expect(row.group(2).endswith("\u2026") and long_name.startswith(row.group(2)[:-1]) and
               len(row.group(2)) < len(long_name), f"label {row.group(2)!r}")
    pct = session_column(html)
    span = max(c[1] + c[2] for c in calls) - min(c[1] for c in calls)
    for region in {c[0] for c in calls}:
        total = sum(c[2] for c in calls if c[0] == region)
        expect(abs(pct.get(region, -1) - 100.0 * total / span) < 1e-9,
               f"% session of {region}: {pct.get(region)} != {100.0 * total / span}")
    # a native recording: every region gets a share, none "-"
    run(opts.make, "tree", "N", "native.h5")
    run(opts.report, "native.h5", "-o", "native.html")
    with open("native.html", encoding="utf-8") as fh:
        shares = session_column(fh.read())
    expect(shares and all(0 < v <= 100.0 + 1e-9 for v in shares.values()),
           f"native % session {shares}")
    # a merged report keeps "defined in": the driver's regions name its file
    driver = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "driver",
                          "serial.h5")
    for order in (("native.h5", driver), (driver, "native.h5")):
        run(os.path.join(BIN, "scope-merge"), *order, "-o", "merged.h5", "--allow-disjoint")
        run(opts.report, "merged.h5", "-o", "merged.html")
        with open("merged.html", encoding="utf-8") as fh:
            page = fh.read()
        table = re.search(r'<table class="sortable" id="summary">(.*?)</table>', page, re.S).group(1)
        expect("<th>defined in</th>" in table, f"merged report ({order[0]} first): no defined in")
        expect("<td>driver.py</td>" in table, f"merged report ({order[0]} first): no driver.py")
    os.remove("merged.h5")


def session_column(html):
    """region -> the "% session" value of the report's region table."""
    table = re.search(r'<table class="sortable" id="summary">(.*?)</table>', html, re.S).group(1)
    heads = re.findall(r"<th[^>]*>(.*?)</th>", re.search(r"<thead>(.*?)</thead>", table).group(1))
    expect("% session" in heads, f"no % session column: {heads}")
    if "% session" not in heads:
        return {}
    col = heads.index("% session")
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", re.search(r"<tbody>(.*?)</tbody>", table, re.S).group(1)):
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", row)
        value = re.search(r'data-v="([^"]*)"', cells[col][0])
        out[cells[0][1]] = float(value.group(1)) if value else -1
    return out


CASES = {"tree": case_tree, "lanes": case_lanes, "extreme": case_extreme, "size": case_size,
         "report": case_report}
CASES[opts.case](opts.arg)
if check.failures:
    print(f"{len(check.failures)} failure(s)")
    sys.exit(1)
print("ok")
