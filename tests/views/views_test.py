"""Tests of the pictures of a run: scope-export --format speedscope, otf2,
folded and svg, and scope-report. Expectations come from the files, read
independently with h5py, and from real consumers: speedscope's published
JSON schema (jsonschema), the speedscope viewer and our SVG/HTML in
headless Chromium (browser_check.mjs), otf2-print, Python's json and XML
parsers.

Usage: views_test.py --export EXE --report EXE --make EXE --data DIR
                     --views DIR CASE [ARG]
Run in an empty working directory (ctest gives each case its own).
Exit 0 pass, 1 fail, 77 skip (a consumer that is truly not installed).
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402

from h5_calls import read_calls  # noqa: E402

parser = argparse.ArgumentParser()
for opt in ("export", "report", "make", "data", "views"):
    parser.add_argument("--" + opt, required=True)
parser.add_argument("case")
parser.add_argument("arg", nargs="?")
opts = parser.parse_args()
SVG = "{http://www.w3.org/2000/svg}"

# The names make_views_profile records (bytes as stored).
NAMES = [b"quote \"q\" and 'a'", b"<script>alert(1)</script>", b"a & b < c > d",
         b"line1\nline2", b"bad \xff byte", b"semi;colon"]


check = checks.Checks("views")
fail = check.fail


def expect(cond, msg):
    if not cond:
        fail(msg)
    return cond


def skip(reason):
    print("skip:", reason)
    sys.exit(77)


def run(tool, *args, rc=0, env=None):
    proc = subprocess.run([tool, *args], capture_output=True,
                          env=None if env is None else {**os.environ, **env})
    proc.stdout = proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    if rc is not None and proc.returncode != rc:
        fail(f"{os.path.basename(tool)} {' '.join(args)}: exit {proc.returncode}, expected {rc}\n"
             f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")
    return proc


def fixture(name):
    """'driver-mpi4' -> tests/data/driver/mpi4.h5; 'names' / 'native' are
    recorded here through the public C API."""
    if name in ("names", "native"):
        path = os.path.abspath(name + ".h5")
        if not os.path.exists(path):
            if name == "names":
                run(opts.make, "names", path)
            else:
                run(opts.make, "calls", "40", path)
        return path
    folder, stem = name.split("-", 1)
    return os.path.join(opts.data, folder, stem + ".h5")


def utf8(b):
    """Our tools' rule: every byte that is not valid UTF-8 becomes U+FFFD."""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


class Profile:
    """A schema-2/3 or aggregate file read with h5py alone."""

    def __init__(self, path):
        self.path = path
        self.calls = []  # (rank, thread or -1, region name, start, end, call_id, parent_id)
        self.aggregate = False
        self.exclusive = collections.Counter()  # aggregate: region -> exclusive ns
        with h5py.File(path, "r") as f:
            self.regions = [utf8(n) for n in f["region_table/names"][()]]
            idx = f["rank_region_index"]
            ranks = idx["ranks"][()].astype(np.int64)
            region_ids = idx["region_ids"][()].astype(np.int64)
            layout = f.attrs.get("storage_layout", b"columnar")
            if utf8(layout) == "aggregate":
                self.aggregate = True
                excl = idx["aggregate_exclusives"][()]
                tot = idx["aggregate_totals"][()]
                self.rows = [(int(ranks[r]), self.regions[region_ids[r]],
                              int(excl[r]) if excl[r] >= 0 else int(tot[r]))
                             for r in range(len(ranks))]
                return
        self.calls = [(c["rank"], c["thread"], c["region"], c["start"], c["end"], c["id"],
                       c["parent"]) for c in read_calls(path)]

    def lanes(self):
        lanes = collections.defaultdict(list)
        for c in self.calls:
            lanes[(c[0], c[1])].append(c)
        return lanes

    def origin(self):
        return min(c[3] for c in self.calls)

    def root_total(self, ranks=None):
        """Sum of the durations of the outermost calls of every lane."""
        total = 0
        for (rank, _), calls in self.lanes().items():
            if ranks is not None and rank not in ranks:
                continue
            if all(c[6] is not None for c in calls):
                total += sum(c[4] - c[3] for c in calls if c[6] == -1)
                continue
            end = None
            for c in sorted(calls, key=lambda c: (c[3], -c[4])):
                if end is None or c[3] >= end:
                    total += c[4] - c[3]
                    end = c[4]
        return total


def browser(mode, path):
    script = os.path.join(opts.views, "browser_check.mjs")
    node = shutil.which("node")
    if not node:
        skip("node is not installed")
    proc = subprocess.run([node, script, mode, path], capture_output=True, text=True, timeout=240)
    if proc.returncode == 77:
        skip(proc.stdout.strip())
    if proc.returncode != 0:
        fail(f"browser_check {mode} {path}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
        return None
    result = json.loads(proc.stdout)
    expect(not result["console_errors"], f"console errors: {result['console_errors']}")
    expect(not result["page_errors"], f"page errors: {result['page_errors']}")
    expect(not result["failed_requests"], f"failed requests: {result['failed_requests']}")
    expect(not result["external_requests"], f"network requests: {result['external_requests']}")
    shot = result["screenshot"]
    expect(shot["distinct"] > 20 and shot["top_share"] < 0.98,
           f"the screenshot looks blank: {shot}")
    return result


# ---- speedscope --------------------------------------------------------------

def check_speedscope(prof, doc):
    schema_path = os.path.join(opts.views, "node_modules/speedscope/dist/release/file-format-schema.json")
    if not os.path.exists(schema_path):
        skip("the speedscope package is not installed (npm ci --prefix tests/views)")
    try:
        import jsonschema
    except ImportError:
        skip("python3-jsonschema is not installed")
    with open(schema_path) as fh:
        schema = json.load(fh)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=str)
    expect(not errors, "schema violations: " + "; ".join(e.message for e in errors[:5]))
    frames = [f["name"] for f in doc["shared"]["frames"]]
    expect(frames == prof.regions, f"frames {frames} != regions {prof.regions}")
    lanes = prof.lanes()
    expect(len(doc["profiles"]) == len(lanes),
           f"{len(doc['profiles'])} profiles for {len(lanes)} (rank, thread) lanes")
    origin = prof.origin()
    firsts = []
    for p, key in zip(doc["profiles"], sorted(lanes)):
        calls = lanes[key]
        expect(p["type"] == "evented" and p["unit"] == "nanoseconds", f"profile {p['name']}")
        expect(p["name"].startswith(f"rank {key[0]}"), f"profile {p['name']} for lane {key}")
        expect(len(p["events"]) == 2 * len(calls),
               f"{p['name']}: {len(p['events'])} events for {len(calls)} calls")
        expected = sorted((c[3] - origin, frames.index(c[2])) for c in calls)
        opened = sorted((e["at"], e["frame"]) for e in p["events"] if e["type"] == "O")
        expect(opened == expected, f"{p['name']}: open events differ from the call starts")
        stack, last = [], None
        for e in p["events"]:
            expect(last is None or e["at"] >= last, f"{p['name']}: time goes back at {e}")
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            elif expect(stack and stack[-1] == e["frame"], f"{p['name']}: unmatched close {e}"):
                stack.pop()
        expect(not stack, f"{p['name']}: frames left open")
        firsts.append(p["startValue"])
    expect(min(firsts) == 0, f"the earliest profile starts at {min(firsts)}, not 0")


def case_speedscope(name):
    src = fixture(name)
    run(opts.export, src, "-o", "out.json", "--format", "speedscope")
    with open("out.json") as fh:
        doc = json.load(fh)
    check_speedscope(Profile(src), doc)


def case_viewer(name):
    src = fixture(name)
    run(opts.export, src, "-o", "out.speedscope.json", "--format", "speedscope")
    result = browser("speedscope", "out.speedscope.json")
    if result:
        with open("out.speedscope.json") as fh:
            doc = json.load(fh)
        expect(doc["profiles"][0]["name"] in result["text"],
               f"profile name {doc['profiles'][0]['name']!r} not shown by the viewer")
        expect(doc["name"] in result["title"], f"title {result['title']!r}")


# ---- otf2 --------------------------------------------------------------------

def case_otf2(name):
    src = fixture(name)
    proc = run(opts.export, src, "-o", "trace", "--format", "otf2", rc=None)
    if proc.returncode == 3 and "not built" in proc.stderr:
        skip("this build has no OTF2 (libopen-trace-format2-dev)")
    expect(proc.returncode == 0, f"otf2 export: exit {proc.returncode}: {proc.stderr}")
    printer = shutil.which("otf2-print")
    if not printer:
        skip("otf2-print is not installed (otf2-tools)")
    expect(not glob.glob(".trace*"), f"temporary left behind: {glob.glob('.trace*')}")
    out = run(printer, "trace/traces.otf2").stdout
    per_loc = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"(ENTER|LEAVE)\s+(\d+)\s+(\d+)", line)
        if m:
            per_loc[int(m.group(2))] += 1
    prof = Profile(src)
    lanes = prof.lanes()
    expected = [2 * len(lanes[k]) for k in sorted(lanes)]
    expect([per_loc[i] for i in range(len(expected))] == expected and len(per_loc) == len(expected),
           f"events per location {dict(per_loc)}, expected {expected}")
    defs = run(printer, "-G", "trace/traces.otf2").stdout
    groups = len(re.findall(r"^LOCATION_GROUP\s", defs, re.M))
    expect(groups == len({k[0] for k in lanes}), f"{groups} location groups for ranks "
           f"{sorted({k[0] for k in lanes})}")
    regions = len(re.findall(r"^REGION\s", defs, re.M))
    expect(regions == len(prof.regions), f"{regions} OTF2 regions for {len(prof.regions)}")
    # A second export must not delete what is there.
    again = run(opts.export, src, "-o", "trace", "--format", "otf2", rc=3)
    expect("not an empty directory" in again.stderr, f"message: {again.stderr}")
    expect(os.path.exists("trace/traces.otf2"), "the existing archive was touched")


# ---- folded and svg ----------------------------------------------------------

def parse_folded(path):
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            stack, weight = line.rstrip("\n").rsplit(" ", 1)
            rows.append((stack.split(";"), int(weight)))
    return rows


def case_folded(name):
    src = fixture(name)
    prof = Profile(src)
    run(opts.export, src, "-o", "out.folded", "--format", "folded")
    rows = parse_folded("out.folded")
    total = sum(w for _, w in rows)
    if prof.aggregate:
        expected = collections.Counter()
        for _, region, excl in prof.rows:
            expected[region] += excl
        got = collections.Counter({s[0]: w for s, w in rows})
        expect(all(len(s) == 1 for s, _ in rows), "aggregate stacks must be single frames")
        expect(got == +expected, f"aggregate weights {dict(got)} != {dict(expected)}")
        return
    expect(total == prof.root_total(), f"folded weights sum to {total}, roots to {prof.root_total()}")
    names = {n.replace(";", ":").replace("\n", " ") for n in prof.regions}
    expect(all(f in names for s, _ in rows for f in s), "a frame that is no region")
    ranks = sorted({c[0] for c in prof.calls})
    run(opts.export, src, "-o", "rank.folded", "--format", "folded", "--per-rank")
    per = parse_folded("rank.folded")
    expect({s[0] for s, _ in per} == {f"rank {r}" for r in ranks}, "per-rank first frames")
    expect(sum(w for _, w in per) == total, "per-rank weights differ from pooled")
    if len(ranks) > 1:
        run(opts.export, src, "-o", "one.folded", "--format", "folded", "--ranks", str(ranks[-1]))
        one = sum(w for _, w in parse_folded("one.folded"))
        expect(one == prof.root_total({ranks[-1]}), f"--ranks {ranks[-1]}: {one}")


def svg_frames(path):
    root = ET.parse(path).getroot()  # a real XML parser: the file must be well formed
    return [(g.get("data-n"), float(g.get("data-w")), int(g.get("data-d")))
            for g in root.iter(SVG + "g") if g.get("class") == "fr"]


def check_flame_in_browser(result):
    frames = result["frames"]
    expect(frames, "no frames in the page")
    widest = max(frames, key=lambda f: f["width"])
    expect(widest["name"] == "all" and widest["depth"] == 0 and frames[0] is not None,
           f"the widest frame is {widest}, not the root")
    if "zoomed" in result:
        z = result["zoomed"]["frames"]
        target = z[result["zoomed"]["index"]]
        expect(abs(target["width"] - z[0]["width"]) < 1.0,
               f"after a click, {target['name']} spans {target['width']} of {z[0]['width']}")


def case_svg(name):
    src = fixture(name)
    run(opts.export, src, "-o", "out.svg")  # the suffix picks the format
    frames = svg_frames("out.svg")
    expect(frames and frames[0][0] == "all" and frames[0][1] == 1.0, f"root frame {frames[:1]}")
    result = browser("svg", "out.svg")
    if result:
        check_flame_in_browser(result)
        expect("\u2014" in (result.get("details") or ""), f"hover details {result.get('details')!r}")


# ---- scope-report ------------------------------------------------------------

def case_report(name):
    src = fixture(name)
    run(opts.report, src, "-o", "report.html")
    size = os.path.getsize("report.html")
    expect(size < 20 * 1024 * 1024, f"report is {size} bytes")
    with open("report.html", encoding="utf-8") as fh:
        html = fh.read()
    expect(not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html),
           "the page loads something from the network")
    result = browser("html", "report.html")
    if not result:
        return
    prof = Profile(src)
    if prof.aggregate:
        expected = sorted({r for _, r, _ in prof.rows})
    else:
        expected = sorted({c[2] for c in prof.calls})
    expect(sorted(result["tables"]) == expected,
           f"table regions {sorted(result['tables'])} != {expected}")
    for region in expected:
        expect(region in result["text"], f"region {region!r} not on the page")
    calls = result["sorted_by_calls"]
    expect(calls == sorted(calls, reverse=True), f"sorting by calls gave {calls}")
    check_flame_in_browser(result)
    if prof.aggregate:
        expect(result["timeline"] is None, "an aggregate file got a timeline")
    else:
        tl = result["timeline"]
        expect(tl and tl["colours"] > 3, f"the timeline canvas looks empty: {tl}")


def case_thin(_):
    src = os.path.abspath("many.h5")
    run(opts.make, "calls", "20000", src)
    run(opts.report, src, "-o", "report.html", "--timeline-calls", "1000")
    with open("report.html", encoding="utf-8") as fh:
        html = fh.read()
    data = json.loads(re.search(r'<script type="application/json" id="tl-data">(.*?)</script>',
                                html, re.S).group(1))
    drawn = sum(len(l["calls"]) // 4 for l in data["lanes"])
    expect(0 < drawn <= 1000, f"{drawn} calls in the timeline, at most 1000 asked")
    expect(data["threshold_ns"] > 0 and "only calls of at least" in html, "no thinning note")
    durations = [l["calls"][i + 1] for l in data["lanes"] for i in range(0, len(l["calls"]), 4)]
    expect(min(durations) >= data["threshold_ns"], "a call below the threshold was kept")
    browser("html", "report.html")


# ---- escaping, aggregate files, damage, usage --------------------------------

def case_escape(fmt):
    src = fixture("names")
    want = sorted(utf8(n) for n in NAMES)
    if fmt == "json":
        run(opts.export, src, "-o", "out.json", "--format", "json")
        with open("out.json", encoding="utf-8") as fh:
            got = sorted(r["name"] for r in json.load(fh)["regions"])
        expect(got == want, f"json names {got}")
    elif fmt == "speedscope":
        run(opts.export, src, "-o", "out.json", "--format", "speedscope")
        with open("out.json", encoding="utf-8") as fh:
            doc = json.load(fh)
        expect(sorted(f["name"] for f in doc["shared"]["frames"]) == want, "speedscope names")
        check_speedscope(Profile(src), doc)
    elif fmt == "folded":
        run(opts.export, src, "-o", "out.folded", "--format", "folded")
        frames = {f for s, _ in parse_folded("out.folded") for f in s}
        expected = {n.replace(";", ":").replace("\n", " ") for n in want}
        expect(frames == expected, f"folded frames {frames} != {expected}")
    elif fmt == "svg":
        run(opts.export, src, "-o", "out.svg", "--format", "svg")
        got = sorted(n for n, _, d in svg_frames("out.svg") if d > 0)
        expect(got == want, f"svg names {got}")
        result = browser("svg", "out.svg")
        if result:
            got = sorted(f["name"] for f in result["frames"] if f["depth"] > 0)
            expect(got == want, f"names in the browser {got}")
            check_flame_in_browser(result)
    elif fmt == "html":
        run(opts.report, src, "-o", "report.html")
        result = browser("html", "report.html")
        if result:
            expect(sorted(result["tables"]) == want, f"table names {sorted(result['tables'])}")
            expect(result["title"].startswith('views <test> & "names"'), f"title {result['title']!r}")
            got = sorted(f["name"] for f in result["frames"] if f["depth"] > 0)
            expect(got == want, f"flame graph names in the page {got}")


def case_aggregate(fmt):
    src = fixture("driver-aggregate")
    if fmt in ("speedscope", "otf2", "chrome"):
        proc = run(opts.export, src, "-o", "out", "--format", fmt, rc=2)
        expect(src in proc.stderr and "no per-call events" in proc.stderr,
               f"message: {proc.stderr!r}")
        expect(not os.path.exists("out") and not glob.glob(".out*"), "output written anyway")
    elif fmt == "json":
        run(opts.export, src, "-o", "out.json", "--format", "json")
        with open("out.json") as fh:
            expect(len(json.load(fh)["regions"]) > 0, "no regions")
    elif fmt == "svg":
        run(opts.export, src, "-o", "out.svg", "--format", "svg")
        names = {n for n, _, d in svg_frames("out.svg") if d == 1}
        expect(names == {r for _, r, _ in Profile(src).rows}, f"svg frames {names}")


def case_damage(kind):
    good = fixture("native")
    bad = os.path.abspath("bad.h5")
    if kind == "truncated":
        with open(good, "rb") as fh:
            data = fh.read()
        with open(bad, "wb") as fh:
            fh.write(data[: len(data) // 2])
    elif kind == "garbage":
        with open(bad, "wb") as fh:
            fh.write(b"\x89HDF\r\n\x1a\n" + b"\x00garbage" * 100)
    elif kind == "corrupt":
        # A valid HDF5 file whose index points past the events.
        shutil.copyfile(good, bad)
        with h5py.File(bad, "r+") as f:
            off = f["rank_region_index/event_offsets"]
            off[0] = off[0] + 10 ** 6
    elif kind == "missing":
        bad = os.path.abspath("missing.h5")
    for fmt in ("speedscope", "otf2", "folded", "svg"):
        with open("keep.out", "w") as fh:
            fh.write("previous\n")
        target = "trace" if fmt == "otf2" else "keep.out"
        proc = run(opts.export, bad, "-o", target, "--format", fmt, rc=2)
        expect(bad in proc.stderr, f"{fmt}: message does not name the file: {proc.stderr!r}")
        with open("keep.out") as fh:
            expect(fh.read() == "previous\n", f"{fmt}: the output was changed")
        expect(not os.path.exists("trace"), "otf2: output directory created")
    with open("keep.out", "w") as fh:
        fh.write("previous\n")
    proc = run(opts.report, bad, "-o", "keep.out", rc=2)
    expect(bad in proc.stderr, f"report: message does not name the file: {proc.stderr!r}")
    with open("keep.out") as fh:
        expect(fh.read() == "previous\n", "report: the output was changed")
    leftovers = [p for p in os.listdir(".") if p.startswith(".")]
    expect(not leftovers, f"temporary files left: {leftovers}")


def write_two_threads(f):
    """The thread table of one rank with threads "main" (0) and "worker" (1)."""
    tt = f.create_group("thread_table")
    for name, values in (("ranks", [0, 0]), ("index", [0, 1]), ("ident", [1, 2]),
                         ("native_id", [1, 2]), ("daemon", [0, 0]), ("start_ns", [0, 0]),
                         ("end_ns", [-1, -1]), ("cpu_ns", [0, 0])):
        tt[name] = np.array(values, dtype=np.int64)
    tt.create_dataset("name", data=np.array(["main", "worker"], dtype=object),
                      dtype=h5py.string_dtype("utf-8"))


def case_crosslane(_):
    """A lane's root call whose stored parent is on another lane (what
    scope-merge writes for cross-language parents) hangs under that parent
    in the flame tree, as scope-inspect's call tree shows it."""
    path = os.path.abspath("cross.h5")
    # thread 0: A [1000, 1100]; thread 1: B [1010, 1060] (parent A), C [1020, 1030] (parent B)
    rows = [("A", [1000], [100], [0], [-1], [0]), ("B", [1010], [50], [1], [0], [1]),
            ("C", [1020], [10], [2], [1], [1])]
    vstr = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = np.int64(1)
        f.create_dataset("region_table/names", data=np.array([r[0] for r in rows], dtype=object),
                         dtype=vstr)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.arange(3, dtype=np.uint32)
        idx["ranks"] = np.zeros(3, dtype=np.uint32)
        idx["event_offsets"] = np.arange(3, dtype=np.uint64)
        idx["event_counts"] = np.ones(3, dtype=np.uint64)
        ev = f.create_group("events")
        for name, col in (("start_deltas", 1), ("durations", 2), ("call_ids", 3),
                          ("parent_ids", 4), ("thread_ids", 5)):
            ev[name] = np.array([r[col][0] for r in rows], dtype=np.int64)
        write_two_threads(f)
    run(opts.export, path, "-o", "out.folded", "--format", "folded")
    got = {";".join(s): w for s, w in parse_folded("out.folded")}
    expect(got == {"A": 50, "A;B": 40, "A;B;C": 10}, f"folded {got}")
    run(opts.export, path, "-o", "out.svg", "--format", "svg")
    frames = {n: (w, d) for n, w, d in svg_frames("out.svg")}
    expect(frames.get("B", (0, 0))[1] == 2 and frames.get("C", (0, 0))[1] == 3,
           f"B and C not under A: {frames}")


def write_unsorted(path):
    """Two threads; region "r" recurses on thread 0 and is stored in end
    order (inner call first), as a Python file may store it; exclusive
    totals are stored, so the tools keep the calls in the file and must
    sort that row themselves."""
    # (region, start, duration, call id, parent id, thread) in stored order
    calls = [("top", 100, 1000, 0, -1, 0), ("top", 150, 300, 4, -1, 1),
             ("r", 300, 100, 2, 1, 0), ("r", 200, 500, 1, 0, 0), ("r", 160, 50, 5, 4, 1),
             ("leaf", 320, 20, 3, 2, 0), ("leaf", 170, 10, 6, 5, 1)]
    regions = ["top", "r", "leaf"]
    vstr = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["mpi_size"] = np.int64(1)
        f.create_dataset("region_table/names", data=np.array(regions, dtype=object), dtype=vstr)
        idx = f.create_group("rank_region_index")
        counts = [sum(1 for c in calls if c[0] == r) for r in regions]
        idx["region_ids"] = np.arange(3, dtype=np.uint32)
        idx["ranks"] = np.zeros(3, dtype=np.uint32)
        idx["event_offsets"] = np.array([0, counts[0], counts[0] + counts[1]], dtype=np.uint64)
        idx["event_counts"] = np.array(counts, dtype=np.uint64)
        idx["exclusive_totals"] = np.array([1000 + 300 - 500 - 50, 400 + 80 + 40, 30],
                                           dtype=np.int64)
        ev = f.create_group("events")
        starts = [c[1] for c in calls]
        deltas = []
        for i, c in enumerate(calls):
            first = i == 0 or calls[i - 1][0] != c[0]
            deltas.append(c[1] if first else c[1] - calls[i - 1][1])
        ev["start_deltas"] = np.array(deltas, dtype=np.int64)
        for name, col in (("durations", 2), ("call_ids", 3), ("parent_ids", 4), ("thread_ids", 5)):
            ev[name] = np.array([c[col] for c in calls], dtype=np.int64)
        write_two_threads(f)
        assert starts  # keeps the stored order visible to a reader of this test


def case_spill(name):
    """Lanes written to the temporary file in blocks (a memory budget of
    1 KiB) give byte for byte what lanes kept in memory give, for every
    picture and the report; an unsorted row is sorted the same way and the
    speedscope export still matches the file (checked through h5py)."""
    if name == "unsorted":
        src = os.path.abspath("unsorted.h5")
        write_unsorted(src)
    else:
        src = fixture(name)
    small = {"SCOPE_PROFILER_VIEW_MEMORY": "1K"}
    outputs = [(fmt, ("-o", f"{{}}.{fmt}", "--format", fmt))
               for fmt in ("speedscope", "folded", "svg", "chrome", "csv", "json")]
    for fmt, args in outputs:
        for tag, env in (("memory", None), ("spill", small)):
            run(opts.export, src, *[a.format(tag) for a in args], env=env)
        with open(f"memory.{fmt}", "rb") as a, open(f"spill.{fmt}", "rb") as b:
            expect(a.read() == b.read(), f"{fmt}: the spilled lanes give another output")
    for tag, env in (("memory", None), ("spill", small)):
        run(opts.report, src, "-o", f"{tag}.html", env=env)
    with open("memory.html", "rb") as a, open("spill.html", "rb") as b:
        expect(a.read() == b.read(), "report: the spilled lanes give another page")
    if shutil.which("otf2-print"):
        texts = []
        for tag, env in (("memory", None), ("spill", small)):
            run(opts.export, src, "-o", f"{tag}-trace", "--format", "otf2", env=env)
            proc = subprocess.run(["otf2-print", f"{tag}-trace/traces.otf2"], capture_output=True)
            texts.append(proc.stdout)
        expect(texts[0] == texts[1] and texts[0], "otf2: the spilled lanes give other events")
    with open("spill.speedscope") as fh:
        check_speedscope(Profile(src), json.load(fh))
    if name == "native":
        # no temporary file to be had: exit 3 naming the folder, output untouched
        proc = run(opts.export, src, "-o", "memory.speedscope", "--format", "speedscope", rc=3,
                   env={**small, "TMPDIR": os.path.abspath("no-such-dir")})
        expect("no-such-dir" in proc.stderr, f"message: {proc.stderr!r}")
        with open("memory.speedscope", "rb") as a, open("spill.speedscope", "rb") as b:
            expect(a.read() == b.read(), "the output was changed by a failed export")
    if name == "unsorted":
        proc = run(os.path.join(os.path.dirname(opts.export), "scope-check"), src)
        expect(": ok (" in proc.stdout, f"the crafted file is not valid: {proc.stdout}")
    leftovers = [p for p in os.listdir(".") if p.startswith(".")]
    expect(not leftovers, f"temporary files left: {leftovers}")


DEEP_CAP = 512  # FLAME_PRINT_MAX_DEPTH (cli/views/flame_tree.h)
FOLD_FRAME = "[deeper frames folded]"


def case_deep(fmt):
    """A recursion 2,000 calls deep: folded stacks and the SVG stop at
    DEEP_CAP levels (issue 19: every line holding its whole stack made the
    folded output grow as depth^2) and say so; no time is lost."""
    src = os.path.abspath("deep.h5")
    run(opts.make, "depth", "2000", src)
    prof = Profile(src)
    if fmt == "folded":
        proc = run(opts.export, src, "-o", "out.folded", "--format", "folded")
        rows = parse_folded("out.folded")
        deepest = max(len(s) for s, _ in rows)
        expect(deepest <= DEEP_CAP + 1, f"a folded line holds {deepest} frames (cap {DEEP_CAP})")
        folded = [s for s, _ in rows if s[-1] == FOLD_FRAME]
        expect(len(folded) == 1 and len(folded[0]) == DEEP_CAP + 1,
               f"one '{FOLD_FRAME}' line at depth {DEEP_CAP}: {[len(s) for s in folded]}")
        expect(all(f in ("a", "b") for s, _ in rows for f in s[:DEEP_CAP]), "a frame that is no region")
        total = sum(w for _, w in rows)
        expect(total == prof.root_total(), f"folded weights sum to {total}, roots to {prof.root_total()}")
        expect("1488 deeper nodes folded" in proc.stderr, f"no note on stderr: {proc.stderr!r}")
        expect(os.path.getsize("out.folded") < 1 << 20, "folded output over 1 MiB")
    else:
        run(opts.export, src, "-o", "out.svg", "--format", "svg")
        frames = svg_frames("out.svg")
        deepest = max(d for _, _, d in frames)
        expect(deepest == DEEP_CAP, f"SVG frames drawn to depth {deepest}, cap {DEEP_CAP}")
        hint = [t.text for t in ET.parse("out.svg").getroot().iter(SVG + "text")
                if t.get("class") == "hint"]
        expect(hint and "1488 frames deeper than 512 levels not drawn" in hint[0],
               f"hint line {hint}")


def case_usage(_):
    src = fixture("native")
    run(opts.export, src, "-o", "x", "--format", "pdf", rc=1)
    run(opts.report, src, rc=1)
    run(opts.report, src, "-o", "r.html", "--top", "0", rc=1)
    run(opts.report, src, "-o", "r.html", "--bogus", rc=1)
    help_text = run(opts.report, "--help").stdout
    expect("scope-report FILE -o" in help_text, "help text")
    export_help = run(opts.export, "--help").stdout
    for fmt in ("speedscope", "otf2", "folded", "svg"):
        expect(fmt in export_help, f"--help does not mention {fmt}")


CASES = {"speedscope": case_speedscope, "viewer": case_viewer, "otf2": case_otf2,
         "folded": case_folded, "svg": case_svg, "report": case_report, "thin": case_thin,
         "escape": case_escape, "aggregate": case_aggregate, "damage": case_damage,
         "crosslane": case_crosslane, "usage": case_usage, "deep": case_deep,
         "spill": case_spill}
CASES[opts.case](opts.arg)
if check.failures:
    print(f"{len(check.failures)} failure(s)")
    sys.exit(1)
print("ok")
