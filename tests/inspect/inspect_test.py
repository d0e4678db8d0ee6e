"""Tests of scope-inspect. Every expectation is derived at test time: from
the Python package's expected/*.summary.json and .summary.txt, or from the
file itself with h5py + numpy. Nothing here restates our own output.

Usage: inspect_test.py CASE SCOPE_INSPECT DATA_DIR [ARG]
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

case, tool, data = sys.argv[1:4]
arg = sys.argv[4] if len(sys.argv) > 4 else None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

FLOAT_KEYS = ["total_duration", "inclusive_duration", "exclusive_duration", "average_duration",
              "min_duration", "max_duration", "first_duration", "last_duration", "std_duration",
              "p50_duration", "p95_duration", "p99_duration", "rank_imbalance",
              "rank_imbalance_pct"]
# Values that are sums or stored durations: exact to the ns.
NS_KEYS = {"total_duration", "inclusive_duration", "exclusive_duration", "min_duration",
           "max_duration", "first_duration", "last_duration"}


check = checks.Checks("scope-inspect")
fail = check.fail


def run(*args, expect=0):
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if expect is not None and proc.returncode != expect:
        fail(f"{' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stderr}")
    return proc


def inspect_json(path, *extra):
    proc = run("--json", *extra, path)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def close(got, want, key, where):
    if want is None or got is None:
        if want != got:
            fail(f"{where} {key}: got {got!r}, expected {want!r}")
        return
    if key in NS_KEYS:
        if round(got * 1e9) != round(want * 1e9):
            fail(f"{where} {key}: got {got!r} ({round(got * 1e9)} ns), expected {want!r}")
        return
    if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-15):
        fail(f"{where} {key}: got {got!r}, expected {want!r}")


def fixture(name):
    folder, stem = name.split("-", 1)
    return os.path.join(data, folder, stem + ".h5")


def expected(name):
    with open(os.path.join(data, "expected", name + ".summary.json")) as fh:
        return json.load(fh)


def compare_regions(got, want, where, keys=FLOAT_KEYS):
    got_rows = {r["name"]: r for r in got["regions"]}
    if [r["name"] for r in got["regions"]] != [r["name"] for r in want["regions"]]:
        fail(f"{where}: region order {[r['name'] for r in got['regions']]} != "
             f"{[r['name'] for r in want['regions']]}")
    for row in want["regions"]:
        mine = got_rows.get(row["name"])
        if mine is None:
            fail(f"{where}: region {row['name']} missing")
            continue
        for key in ("num_calls", "num_ranks"):
            if mine[key] != row[key]:
                fail(f"{where} {row['name']} {key}: got {mine[key]}, expected {row[key]}")
        if list(mine["tags"]) != list(row["tags"]):
            fail(f"{where} {row['name']} tags: {mine['tags']} != {row['tags']}")
        for key in keys:
            close(mine[key], row[key], key, f"{where} {row['name']}")


# ---- acceptance against the package's JSON ---------------------------------

def case_json():
    want = expected(arg)
    got = inspect_json(fixture(arg))
    if got is None:
        return
    if got["num_ranks"] != want["num_ranks"]:
        fail(f"num_ranks {got['num_ranks']} != {want['num_ranks']}")
    keys = FLOAT_KEYS
    with h5py.File(fixture(arg)) as h5:
        aggregate = h5.attrs.get("storage_layout") in ("aggregate", b"aggregate")
    if aggregate:
        # The package's summary() reports 0.0 for every event-derived value
        # of an aggregate file (it has no events to compute them from), while
        # FORMAT.md 7.2/7.5 define avg/min/max from the stored columns and
        # we report first/last/std/percentiles as unavailable (null). Compare
        # what both define, and check the rest against the file's columns.
        keys = ["total_duration", "inclusive_duration", "exclusive_duration",
                "rank_imbalance", "rank_imbalance_pct"]
        with h5py.File(fixture(arg)) as h5:
            idx = h5["rank_region_index"]
            names = [n.decode() if isinstance(n, bytes) else n for n in h5["region_table/names"][:]]
            rows = {names[r]: i for i, r in enumerate(idx["region_ids"][:])}
            for row in got["regions"]:
                i = rows[row["name"]]
                close(row["min_duration"], idx["aggregate_minimums"][i] / 1e9, "min_duration", row["name"])
                close(row["max_duration"], idx["aggregate_maximums"][i] / 1e9, "max_duration", row["name"])
                close(row["average_duration"], idx["aggregate_totals"][i] / idx["aggregate_counts"][i] / 1e9,
                      "average_duration", row["name"])
                for key in ("p50_duration", "std_duration", "first_duration"):
                    if row[key] is not None:
                        fail(f"{row['name']} {key} should be unavailable, got {row[key]}")
    compare_regions(got, want, arg, keys)
    for region, ranks in want["per_rank"].items():
        for rank, values in ranks.items():
            mine = got["per_rank"].get(region, {}).get(rank)
            if values["num_calls"] == 0 and mine is None:
                continue
            if aggregate:
                values = dict(values, total_ns=mine and mine["total_ns"])  # see above
            if mine != values:
                fail(f"per_rank {region} rank {rank}: {mine} != {values}")


# ---- independent numpy computation -----------------------------------------

def case_numpy():
    path = fixture(arg)
    rows = h5_calls.read_rows(path)
    # exclusive per (name, rank) from the stored parent ids
    excl = h5_calls.exclusive_ns(rows)
    got = inspect_json(path)
    if got is None:
        return
    by_name = {}
    for row in rows:
        by_name.setdefault(row[0], []).append(row)
    for name, parts in by_name.items():
        parts = [p for p in parts if len(p[3])]
        d = np.concatenate([p[3] for p in parts]) / 1e9
        totals = np.array([p[3].sum() for p in parts], dtype=float) / 1e9
        first = min(parts, key=lambda p: (p[2].min(), p[1]))
        last = max(parts, key=lambda p: ((p[2] + p[3]).max(), -p[1]))
        kept = totals[totals > 0]
        imb = float(kept.max() / kept.mean()) if len(kept) >= 2 else 0.0
        want = {
            "num_calls": len(d), "total_duration": float(d.sum()),
            "average_duration": float(d.mean()), "min_duration": float(d.min()),
            "max_duration": float(d.max()), "std_duration": float(np.std(d)),
            "p50_duration": float(np.percentile(d, 50)), "p95_duration": float(np.percentile(d, 95)),
            "p99_duration": float(np.percentile(d, 99)),
            "first_duration": float(first[3][0]) / 1e9, "last_duration": float(last[3][-1]) / 1e9,
            "rank_imbalance": imb, "rank_imbalance_pct": (imb - 1) * 100 if imb else 0.0,
            "exclusive_duration": sum(excl[(name, p[1])] for p in parts) / 1e9,
        }
        mine = next((r for r in got["regions"] if r["name"] == name), None)
        if mine is None:
            fail(f"{name} missing")
            continue
        if mine["num_calls"] != want.pop("num_calls"):
            fail(f"{name} num_calls")
        for key, value in want.items():
            close(mine[key], value, key, name)


def case_containment():
    """Without stored ids or exclusive totals, nesting comes from timestamps
    (per thread lane); exclusive time must still match the package's."""
    src = fixture(arg)
    path = os.path.join(os.getcwd(), "no_ids.h5")
    shutil.copyfile(src, path)
    with h5py.File(path, "r+") as h5:
        for col in ("call_ids", "parent_ids"):
            if col in h5["events"]:
                del h5["events"][col]
        ex = h5["rank_region_index/exclusive_totals"]
        ex[...] = -1
    got = inspect_json(path)
    if got is not None:
        compare_regions(got, expected(arg), "containment " + arg, ["exclusive_duration", "total_duration"])
        if got["warnings"]:
            fail(f"unexpected warnings {got['warnings']}")


def case_nesting():
    path = os.path.join(os.getcwd(), "bad_nesting.h5")
    shutil.copyfile(os.path.join(data, "compat", "schema3.h5"), path)
    with h5py.File(path, "r+") as h5:
        # starts [10, 20, 40]: make call 0 end at 25, inside call 1 [20, 33]
        h5["events/durations"][0] = 15
        for col in ("call_ids", "parent_ids"):
            if col in h5["events"]:
                del h5["events"][col]
        if "exclusive_totals" in h5["rank_region_index"]:
            h5["rank_region_index/exclusive_totals"][...] = -1
    proc = run("--ascii", path)
    if "nested" not in proc.stderr or "solve" not in proc.stderr:
        fail(f"nesting warning should name the region: {proc.stderr!r}")
    if "solve (3x)" not in proc.stdout:
        fail(f"flat table expected:\n{proc.stdout}")
    got = inspect_json(path)
    if got is not None:
        row = got["regions"][0]
        if row["exclusive_duration"] is not None or not got["warnings"]:
            fail(f"exclusive should be null with a warning: {row}, {got['warnings']}")
        if row["num_calls"] != 3 or round(row["total_duration"] * 1e9) != 15 + 13 + 15:
            fail(f"other statistics must survive: {row}")


# ---- the table ----------------------------------------------------------------

def table_lines(text):
    return [l for l in text.splitlines() if l.strip().startswith("\u2502") and "region" not in l]


def box_rows(lines):
    """(depth, label, [cells]) of every data row of a box table, whatever
    the alignment: the package indents its numbers, we do not."""
    rows = []
    for line in lines:
        m = re.match(r"\s*[\u2502|] ((?:[\u2502|] )*)((?:\u2514\u2500|`-) )?(.*?)\s{2,}(.*?)\s*[\u2502|]$", line)
        if not m or m.group(3).strip() == "region":
            continue
        depth = len(m.group(1)) // 2 + (1 if m.group(2) else 0)
        rows.append((depth, m.group(3).strip(), m.group(4).split()))
    return rows


def check_aligned(text):
    """Every number ends exactly under the end of its column's header, at
    any depth (issue 17: indentation lives in the region column only)."""
    lines = [l for l in text.splitlines() if l.strip().startswith(("\u2502", "|"))]
    header = next((l for l in lines if " region " in l), None)
    if header is None:
        fail("no header line:\n" + text)
        return
    # value headers: the text after the region column, ends of each header
    first = header.index("region") + len("region")
    ends = {m.end() for m in re.finditer(r"\S+(?: \[[^\]]+\]|/rank \[s\])?", header[first:-1])}
    ends = {first + e for e in ends}
    for line in lines:
        if line is header:
            continue
        # numbers: runs after the region cell (two spaces or more before them)
        body = line[:-1]
        cut = re.search(r"\S\s{2,}", body[3:])
        if not cut:
            continue
        for m in re.finditer(r"\S+", body[3 + cut.end() - 1:]):
            end = 3 + cut.end() - 1 + m.end()
            if end not in ends:
                fail(f"value {m.group()!r} ends at column {end}, not under a header "
                     f"(ends {sorted(ends)}):\n{header}\n{line}")
                return


def case_tree():
    """The package's .summary.txt rows (names, depth, calls, total) equal
    ours; our numbers are aligned under their headers at every depth; (own)
    = parent exclusive; parents before children; % parent adds up to 100."""
    path = fixture(arg)
    # --columns region,total: the package's columns, totals summed over
    # ranks (several ranks default to the per-rank mean, case_ranks).
    proc = run("--unicode", "--columns", "region,total", path)
    with open(os.path.join(data, "expected", arg + ".summary.txt"), encoding="utf-8") as fh:
        want = fh.read().strip("\n").splitlines()
    got = proc.stdout.splitlines()
    start = next((i for i, l in enumerate(got) if "\u256d" in l), None)
    mine = got[start:start + len(want)] if start is not None else []
    if box_rows(mine) != box_rows(want) or not box_rows(want):
        fail("table rows differ from the package's:\n" + "\n".join(mine) + "\nexpected:\n" +
             "\n".join(want))
    check_aligned("\n".join(mine))
    check_aligned(run("--ascii", "--columns", "region,calls,total,exclusive,avg,min,parent_percent",
                      path).stdout)
    check_aligned(run("--unicode", path).stdout)
    js = inspect_json(path)
    proc = run("--ascii", "--columns", "region,calls,total,exclusive,parent_percent", path)
    rows = []
    for line in proc.stdout.splitlines():
        m = re.match(r"  \| ((?:\| )*)(`- )?(.*?)\s{2,}(.*) \|$", line)
        if not m or m.group(3) == "region":
            continue
        depth = len(m.group(1)) // 2 + (1 if m.group(2) else 0)
        cells = m.group(4).split()
        rows.append((depth, m.group(3).strip(), cells))
    if not rows:
        fail("no rows parsed:\n" + proc.stdout)
    region_excl = {r["name"]: r["exclusive_duration"] for r in js["regions"]}
    for i, (depth, name, cells) in enumerate(rows):
        if i and depth > rows[i - 1][0] + 1:
            fail(f"row {name} deeper than its predecessor allows")
        if name == "(own)":
            parent = rows[i - 1]
            if parent[0] != depth - 1:
                fail("(own) must follow its parent directly")
            total = float(cells[0])
            # parent cells: calls, total, exclusive, % parent
            if abs(total - float(parent[2][2])) > 1e-6:
                fail(f"(own) {total} != parent exclusive {parent[2][2]}")
            pname = parent[1].split(" ")[0]
            if abs(total - region_excl[pname]) > 5e-7:
                fail(f"(own) of {pname} {total} != JSON exclusive {region_excl[pname]}")
            # children + own percentages of the parent add up to 100
            share = float(cells[1].rstrip("%"))
            j = i + 1
            while j < len(rows) and rows[j][0] >= depth:
                if rows[j][0] == depth:
                    share += float(rows[j][2][-1].rstrip("%"))
                j += 1
            if abs(share - 100.0) > 0.1 * (j - i):
                fail(f"% parent under {pname} adds up to {share}")


def case_ranks():
    """Several ranks: per row the mean of the per-rank totals over the ranks
    that ran it, their min and max, imbalance max/mean - 1 and the calls
    summed, under a caption naming the ranks; one rank selected: totals
    as for a serial run (issue 17 item 5). Expectations from per_rank."""
    path = fixture(arg)
    per_rank = expected(arg)["per_rank"]
    proc = run("--ascii", path)
    nranks = expected(arg)["num_ranks"]
    if f"mean over {nranks} ranks" not in proc.stdout:
        fail(f"caption 'mean over {nranks} ranks' missing:\n{proc.stdout}")
    check_aligned(proc.stdout)
    lines = proc.stdout.splitlines()
    header = next(l for l in lines if " region " in l)
    names = re.findall(r"\S+(?: \[[^\]]+\])?", header.strip("| "))
    for want_col in ("calls", "mean/rank [s]", "min/rank [s]", "max/rank [s]", "imbal [%]", "ranks"):
        if want_col not in names:
            fail(f"default multi-rank column {want_col!r} missing: {names}")
            return
    rows = box_rows(lines)
    seen = 0
    for depth, label, cells in rows:
        name = label.split(" ")[0]
        if name not in per_rank or name == "(own)":
            continue
        # every region of these fixtures sits on one call path
        totals = [v["total_ns"] for v in per_rank[name].values() if v["num_calls"] > 0]
        calls = sum(v["num_calls"] for v in per_rank[name].values())
        value = dict(zip(names[1:], cells))
        mean = sum(totals) / len(totals)
        imb = (max(totals) / mean - 1) * 100 if len([t for t in totals if t > 0]) >= 2 else 0.0
        checks = [("calls", int(value["calls"]), calls),
                  ("ranks", int(value["ranks"]), len(totals))]
        for key, got, want in checks:
            if got != want:
                fail(f"{name} {key}: {got} != {want}")
        for key, want in (("mean/rank [s]", mean), ("min/rank [s]", min(totals)),
                          ("max/rank [s]", max(totals))):
            if abs(float(value[key]) - want / 1e9) > 5e-7:
                fail(f"{name} {key}: {value[key]} != {want / 1e9:.9f}")
        if abs(float(value["imbal [%]"]) - imb) > 0.006:
            fail(f"{name} imbal: {value['imbal [%]']} != {imb:.3f}")
        seen += 1
    if seen < 3:
        fail(f"only {seen} rows checked:\n{proc.stdout}")
    # a selection of two ranks says so; one rank is a serial table again
    proc = run("--ascii", "--ranks", "1-2", path)
    if "mean over 2 selected ranks" not in proc.stdout:
        fail(f"--ranks 1-2 caption missing:\n{proc.stdout}")
    proc = run("--ascii", "--ranks", "3", path)
    if "mean over" in proc.stdout or "total [s]" not in proc.stdout:
        fail(f"--ranks 3 should print rank 3's totals only:\n{proc.stdout}")
    for depth, label, cells in box_rows(proc.stdout.splitlines()):
        name = label.split(" ")[0]
        if name in per_rank and "3" in per_rank[name] and name != "(own)":
            if abs(float(cells[-1]) - per_rank[name]["3"]["total_ns"] / 1e9) > 5e-7:
                fail(f"--ranks 3 {name}: {cells[-1]} != rank 3's total")
    # --columns keeps working with several ranks: total is the sum
    proc = run("--ascii", "--columns", "region,calls,total,rank_mean", path)
    for depth, label, cells in box_rows(proc.stdout.splitlines()):
        name = label.split(" ")[0]
        if name in per_rank and name != "(own)":
            total = sum(v["total_ns"] for v in per_rank[name].values())
            if abs(float(cells[1]) - total / 1e9) > 5e-7:
                fail(f"--columns total of {name}: {cells[1]} != {total / 1e9}")


def case_names():
    """Control bytes and ANSI escapes in region names are printed escaped
    in the text table (issue 19), never raw; JSON keeps the name exact."""
    path = os.path.join(os.getcwd(), "names.h5")
    shutil.copyfile(fixture("driver-serial"), path)
    evil = "\x1b[31mred\x1b[0m\tbell\x07"
    with h5py.File(path, "r+") as h5:
        names = [n.decode() if isinstance(n, bytes) else n for n in h5["region_table/names"][:]]
        names[names.index("solve")] = evil
        del h5["region_table/names"]
        h5.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))
    for style in ("--ascii", "--unicode"):
        for extra in ([], ["--flat"]):
            proc = run(style, *extra, path)
            if any(c in proc.stdout for c in "\x1b\x07\t"):
                fail(f"{style} {extra}: raw control bytes in the table: {proc.stdout!r}")
            if "\\x1b[31mred\\x1b[0m\\x09bell\\x07" not in proc.stdout:
                fail(f"{style} {extra}: escaped name missing:\n{proc.stdout}")
            check_aligned(proc.stdout)
    got = inspect_json(path)
    if got is not None and evil not in [r["name"] for r in got["regions"]]:
        fail("JSON must keep the exact name")


def check_safe_stdout(what, path, *wanted):
    """scope-inspect's text output of path: no raw control byte (but the
    line breaks), valid UTF-8, and every escaped text of `wanted`."""
    proc = subprocess.run([tool, "--ascii", path], capture_output=True)
    if proc.returncode != 0:
        fail(f"{what}: exit {proc.returncode}: {proc.stderr!r}")
        return
    out = proc.stdout
    raw = sorted({b for b in out if (b < 0x20 and b != 0x0A) or b == 0x7F})
    if raw:
        fail(f"{what}: raw control bytes {raw} in the text output:\n{out!r}")
    try:
        out.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"{what}: invalid UTF-8 printed ({exc})")
    for want in wanted:
        if want not in out:
            fail(f"{what}: escaped text {want!r} missing:\n{out.decode('utf-8', 'replace')}")


def case_sections():
    """The counter tables, the MPI section and the metadata block escape
    what they print from the file (issue 19), as the summary table does:
    ESC (ANSI sequences), control bytes, line breaks, invalid UTF-8."""
    perf = os.path.join(os.getcwd(), "perf.h5")
    shutil.copyfile(fixture("driver-perf"), perf)
    with h5py.File(perf, "r+") as h5:
        group = h5["rank0/perf_events"]
        group.move("io.write", "io\x1b[2J.write")
        group["assemble"].attrs.create(
            "event_names", data=[b"task\x1b[31m-clock", b"bad\xffname", b"ok"],
            dtype=h5py.string_dtype("ascii"))
        h5["metadata"].attrs["ev\x1bil key"] = "value\x1b[2J\nnext"
    check_safe_stdout("perf", perf, rb"io\x1b[2J.write", rb"task\x1b[31m-clock",
                      rb"bad\xffname", rb"ev\x1bil key", rb"value\x1b[2J\x0anext")
    mpi = os.path.join(os.getcwd(), "mpi.h5")
    shutil.copyfile(fixture("driver-mpi4"), mpi)
    renamed = {"exchange": "mpi:Allre\x1b[2Jduce kind=co\x07ll bytes=8", "solve": "so\x1b[31mlve\t"}
    with h5py.File(mpi, "r+") as h5:
        names = [n.decode() if isinstance(n, bytes) else n for n in h5["region_table/names"][:]]
        names = [renamed.get(n, n) for n in names]
        del h5["region_table/names"]
        h5.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))
    check_safe_stdout("mpi", mpi, rb"Allre\x1b[2Jduce co\x07ll", rb"so\x1b[31mlve\x09   ")


def case_filter():
    path = fixture(arg)
    want = expected(arg)
    got = inspect_json(path, "--include", "s", "--exclude", "solve")
    if got is not None:
        names = [r["name"] for r in got["regions"]]
        wanted = [r["name"] for r in want["regions"] if re.match("s", r["name"]) and not re.match("solve", r["name"])]
        if names != wanted:
            fail(f"--include s --exclude solve: {names} != {wanted}")
    # one rank: counts and totals must be that rank's own (per_rank)
    got = inspect_json(path, "--ranks", "1-2")
    if got is not None:
        for row in got["regions"]:
            ranks = want["per_rank"][row["name"]]
            calls = sum(v["num_calls"] for k, v in ranks.items() if k in ("1", "2"))
            total = sum(v["total_ns"] for k, v in ranks.items() if k in ("1", "2"))
            if row["num_calls"] != calls or round(row["total_duration"] * 1e9) != total:
                fail(f"--ranks 1-2 {row['name']}: {row['num_calls']}/{row['total_duration']} vs {calls}/{total}")
    # hiding a child keeps the parent's (own) equal to its exclusive time
    proc = run("--ascii", "--exclude", "exchange", path)
    if "exchange" in proc.stdout:
        fail("excluded region printed")
    # sorting by total puts the larger sibling first
    proc = run("--ascii", "--sort", "total", "--flat", path)
    order = [l.split()[1] for l in proc.stdout.splitlines() if l.startswith("  | ") and "region" not in l]
    totals = {r["name"]: r["total_duration"] for r in want["regions"]}
    if [totals[n] for n in order] != sorted((totals[n] for n in order), reverse=True):
        fail(f"--sort total order wrong: {order}")


def case_error():
    work = os.getcwd()
    if arg == "missing":
        path = os.path.join(work, "does_not_exist.h5")
    elif arg == "random":
        path = os.path.join(work, "random.h5")
        with open(path, "wb") as fh:
            fh.write(os.urandom(4096))
    elif arg == "truncated":
        path = os.path.join(work, "truncated.h5")
        with open(fixture("driver-serial"), "rb") as fh:
            blob = fh.read()
        with open(path, "wb") as fh:
            fh.write(blob[: len(blob) // 2])
    elif arg == "schema4":
        path = os.path.join(work, "schema4.h5")
        shutil.copyfile(os.path.join(data, "compat", "schema3.h5"), path)
        with h5py.File(path, "r+") as h5:
            h5.attrs["scope_profiler_schema"] = np.int64(4)
    for extra in ([], ["--json"]):
        proc = run(*extra, path, expect=2)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1 or path not in lines[0]:
            fail(f"expected one line naming {path}, got {proc.stderr!r}")
    # a good file after a bad one is still printed, exit stays 2
    proc = run("--ascii", path, fixture("driver-serial"), expect=2)
    if "timestep" not in proc.stdout:
        fail("the readable file should still be printed")


def case_usage():
    for args in (["--bogus", fixture("driver-serial")], [], ["--sort", "nope", fixture("driver-serial")],
                 ["--ranks", "3-1", fixture("driver-serial")], ["--include", "(", fixture("driver-serial")],
                 ["--columns", "region,nope", fixture("driver-serial")]):
        proc = run(*args, expect=1)
        if not proc.stderr.strip():
            fail(f"{args}: no message")
    proc = run("--help")
    if "Exit status" not in proc.stdout or "calls" not in proc.stdout:
        fail("--help must document exit codes and columns")
    proc = run("--metadata-only", fixture("driver-serial"))
    if "label" not in proc.stdout or "timestep" in proc.stdout:
        fail("--metadata-only output wrong")


CASES = {"json": case_json, "numpy": case_numpy, "containment": case_containment,
         "nesting": case_nesting, "tree": case_tree, "ranks": case_ranks, "names": case_names, "sections": case_sections,
         "filter": case_filter, "error": case_error,
         "usage": case_usage}
CASES[case]()
check.finish()
