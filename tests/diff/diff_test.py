"""Tests of scope-diff. Expected numbers are computed here, independently,
from the files with h5py + numpy (pooled per-call durations, numpy
percentiles, exclusive time from the stored call tree, Welch's t with
ddof=1); the classification rules are the ones scope-diff --help states.

Usage: diff_test.py CASE SCOPE_DIFF MAKE_RUN DATA_DIR [ARG]
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import json
import math
import os
import random
import shutil
import subprocess
import sys

case, tool, make_run, data = sys.argv[1:5]
arg = sys.argv[5] if len(sys.argv) > 5 else None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402
import h5_calls  # noqa: E402  (after the skip: it needs h5py)

METRICS = ["total", "avg", "p50", "p95", "p99", "calls", "exclusive"]
T_LIMIT = 2.0


check = checks.Checks("scope-diff")
fail = check.fail


def run(*args, expect=0):
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if expect is not None and proc.returncode != expect:
        fail(f"scope-diff {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
             f"{proc.stderr}{proc.stdout[-2000:]}")
    return proc


def diff_json(base, new, *extra, expect=0):
    proc = run("--json", *extra, base, new, expect=expect)
    try:
        return json.loads(proc.stdout)
    except ValueError:
        fail(f"not JSON: {proc.stdout[:500]!r}")
        return None


def fixture(name):
    return os.path.join(data, "driver", name + ".h5")


# ---- independent computation ---------------------------------------------------

def read_profile(path):
    """{name: {"d": pooled durations (ns), "excl": exclusive ns or None}},
    and the session: the longest rank's span from first start to last end."""
    rows = h5_calls.read_rows(path)
    with_ids = all(r[4] is not None and r[5] is not None for r in rows)
    out, spans = {}, {}
    excl = {}
    for name, rank, starts, d, c, p in rows:
        entry = out.setdefault(name, {"d": [], "excl": 0})
        entry["d"].append(d)
        if len(d):
            lo, hi = spans.get(rank, (None, None))
            s_lo, s_hi = int(starts.min()), int((starts + d).max())
            spans[rank] = (s_lo if lo is None else min(lo, s_lo), s_hi if hi is None else max(hi, s_hi))
    # exclusive = own duration minus the direct children's, from the stored ids
    if with_ids:
        for (name, _), value in h5_calls.exclusive_ns(rows).items():
            excl[name] = excl.get(name, 0) + value
    for name, entry in out.items():
        entry["d"] = np.concatenate(entry["d"]) if entry["d"] else np.array([], dtype=np.int64)
        entry["excl"] = excl.get(name, 0) if with_ids else None
    session = max(hi - lo for lo, hi in spans.values()) if spans else None
    return out, session


def metric_of(entry, metric):
    """Metric value: seconds for durations, a count for calls."""
    d = entry["d"]
    if metric == "calls":
        return len(d)
    if metric == "total":
        return int(d.sum()) / 1e9
    if metric == "exclusive":
        return entry["excl"] / 1e9
    if len(d) == 0:
        return 0.0
    if metric == "avg":
        return float(d.mean()) / 1e9
    return float(np.percentile(d, int(metric[1:]))) / 1e9


def welch(b, c):
    """(t or None, zero_spread)."""
    if len(b) < 2 or len(c) < 2:
        return None, False
    b, c = b.astype(float), c.astype(float)
    se = math.sqrt(np.var(b, ddof=1) / len(b) + np.var(c, ddof=1) / len(c))
    diff = c.mean() - b.mean()
    if se == 0:
        return (0.0 if diff == 0 else None), True
    return diff / se, False


def expected_report(base, new, metric, threshold=5.0):
    pb, sb = read_profile(base)
    pn, sn = read_profile(new)
    rows = {}
    for name in set(pb) | set(pn):
        eb, en = pb.get(name), pn.get(name)
        r = {"calls_base": len(eb["d"]) if eb else 0, "calls_new": len(en["d"]) if en else 0,
             "t_stat": None, "significant": None, "change_pct": None}
        r["base"] = metric_of(eb, metric) if eb else None
        r["new"] = metric_of(en, metric) if en else None
        if not eb:
            r.update(status="added", change=r["new"])
        elif not en:
            r.update(status="removed", change=-r["base"])
        else:
            r["change"] = r["new"] - r["base"]
            t, zero = welch(eb["d"], en["d"])
            if t is not None or zero:
                r["t_stat"] = t
                sig = bool(abs(t) >= T_LIMIT) if t is not None else True
                if metric == "calls":
                    sig = None
                elif metric in ("total", "exclusive") and r["calls_base"] != r["calls_new"]:
                    sig = True
                r["significant"] = sig
            if r["base"] != 0:
                r["change_pct"] = 100.0 * r["change"] / r["base"]
                exceeds = abs(r["change_pct"]) > threshold
            else:
                exceeds = r["change"] != 0
            if not exceeds:
                r["status"] = "unchanged"
            elif r["significant"] is False:
                r["status"] = "within_noise"
            else:
                r["status"] = "regression" if r["change"] > 0 else "improvement"
        rows[name] = r
    return rows, sb, sn


def close(got, want, what, ns=False, rel=1e-9):
    if want is None or got is None:
        if want != got:
            fail(f"{what}: got {got!r}, expected {want!r}")
        return
    if ns:
        if round(got * 1e9) != round(want * 1e9):
            fail(f"{what}: got {got!r}, expected {want!r}")
    elif not math.isclose(got, want, rel_tol=rel, abs_tol=1e-12):
        fail(f"{what}: got {got!r}, expected {want!r}")


def check_against_numpy(base, new, metric, threshold=5.0, extra=()):
    """Every number of --json against the independent computation."""
    want, sb, sn = expected_report(base, new, metric, threshold)
    got = diff_json(base, new, "--metric", metric, "--threshold", str(threshold), *extra)
    if got is None:
        return None
    where = f"{os.path.basename(base)} vs {os.path.basename(new)} --metric {metric}"
    for key, value in (("base_file", base), ("new_file", new), ("metric", metric),
                       ("threshold_pct", threshold)):
        if got.get(key) != value:
            fail(f"{where}: {key} = {got.get(key)!r}, expected {value!r}")
    names = [r["name"] for r in got["regions"]]
    if sorted(names) != sorted(want):
        fail(f"{where}: regions {sorted(names)} != {sorted(want)}")
    exact = metric in ("total", "exclusive", "calls")
    for r in got["regions"]:
        w = want.get(r["name"])
        if w is None:
            continue
        at = f"{where} [{r['name']}]"
        for key in ("status", "calls_base", "calls_new", "significant"):
            if r[key] != w[key]:
                fail(f"{at} {key}: got {r[key]!r}, expected {w[key]!r}")
        for key in ("base", "new", "change"):
            close(r[key], w[key], f"{at} {key}", ns=exact and metric != "calls")
        close(r["change_pct"], w["change_pct"], f"{at} change_pct")
        # t comes from the library's moments, not from a second pass here
        close(r["t_stat"], w["t_stat"], f"{at} t_stat", rel=1e-7)
    # default order: largest absolute change first, name breaking ties
    order = sorted(want, key=lambda n: (want[n]["change"] is None, -abs(want[n]["change"] or 0), n))
    if names != order and sorted(names) == sorted(want):
        fail(f"{where}: order {names}, expected {order}")
    s = got["summary"]
    close(s["session_base"], sb / 1e9, f"{where} session_base", ns=True)
    close(s["session_new"], sn / 1e9, f"{where} session_new", ns=True)
    close(s["session_change"], (sn - sb) / 1e9, f"{where} session_change", ns=True)
    close(s["session_change_pct"], 100.0 * (sn - sb) / sb, f"{where} session_change_pct")
    counts = {}
    for w in want.values():
        counts[w["status"]] = counts.get(w["status"], 0) + 1
    for key, status in (("regressions", "regression"), ("improvements", "improvement"),
                        ("within_noise", "within_noise"), ("unchanged", "unchanged"),
                        ("added", "added"), ("removed", "removed")):
        if s[key] != counts.get(status, 0):
            fail(f"{where}: summary {key} = {s[key]}, expected {counts.get(status, 0)}")
    if s["regions"] != len(want):
        fail(f"{where}: summary regions {s['regions']} != {len(want)}")
    return got


def row(report, name):
    for r in report["regions"] if report else []:
        if r["name"] == name:
            return r
    fail(f"region {name} missing from {report and [r['name'] for r in report['regions']]}")
    return {}


# ---- generated runs ----------------------------------------------------------

def generate(name, mode):
    path = os.path.join(os.getcwd(), name)
    proc = subprocess.run([make_run, path, mode], capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"make_run {mode}: exit {proc.returncode} {proc.stderr}")
        sys.exit(1)
    return path


def generated_pair(modes, holds):
    """Record the two runs; a loaded machine can (rarely) disturb a spin
    loop enough to break the scenario, so re-record a few times until the
    independent computation says the scenario holds."""
    for _ in range(3):
        base, new = generate("base.h5", modes[0]), generate("new.h5", modes[1])
        if holds(*expected_report(base, new, "total")[:1]):
            return base, new
    fail(f"scenario {modes} never held in three recordings")
    return base, new


def slow_scenario(want):
    return want["kernel.slow"]["status"] == "regression" and want["kernel.slow"]["change_pct"] > 100


def noise_scenario(want):
    return want["kernel.noisy"]["status"] == "within_noise"


# ---- cases ---------------------------------------------------------------------

def case_self():
    path = fixture(arg)
    for extra in ([], ["--fail-on-regression"], ["--metric", "avg", "--fail-on-regression"]):
        got = diff_json(path, path, *extra)
        if got is None:
            continue
        for r in got["regions"]:
            if r["status"] != "unchanged" or r["change"] != 0 or r["calls_base"] != r["calls_new"]:
                fail(f"self-diff {extra} changed: {r}")
            if r["change_pct"] not in (0, None):
                fail(f"self-diff change_pct {r}")
            if r["t_stat"] not in (0, None) or r["significant"] is True:
                fail(f"self-diff t {r}")
        s = got["summary"]
        if s["regressions"] or s["improvements"] or s["added"] or s["removed"] or s["any_regression"]:
            fail(f"self-diff summary {s}")
        if s["unchanged"] != len(got["regions"]) or not got["regions"]:
            fail(f"self-diff should list every region unchanged: {s}")
    proc = run("--ascii", "--fail-on-regression", path, path)
    if "0 regressions" not in proc.stdout:
        fail(f"text summary: {proc.stdout}")


def case_regression():
    base, new = generated_pair(("base", "slow"), slow_scenario)
    got = check_against_numpy(base, new, "total")
    slow = row(got, "kernel.slow")
    if slow.get("status") != "regression" or slow.get("significant") is not True:
        fail(f"kernel.slow should be a significant regression: {slow}")
    if not slow.get("change_pct", 0) > 100 or slow.get("t_stat") is None or slow["t_stat"] < T_LIMIT:
        fail(f"kernel.slow should be ~3x slower with t > 2: {slow}")
    if got and not got["summary"]["any_regression"]:
        fail("summary.any_regression should be true")
    run("--fail-on-regression", base, new, expect=4)
    run("--fail-on-regression", "--json", base, new, expect=4)
    run(base, new, expect=0)  # without the flag a regression is only reported
    proc = run("--ascii", base, new)
    line = next((ln for ln in proc.stdout.splitlines() if "kernel.slow" in ln), "")
    if "regression" not in line or "%" not in line:
        fail(f"text row of kernel.slow: {line!r}\n{proc.stdout}")
    if "regression" not in proc.stdout.split("Changes:")[-1]:
        fail(f"summary line missing: {proc.stdout}")
    # the other way round it is an improvement, and nothing fails
    back = diff_json(new, base, "--include", "kernel\\.slow", "--fail-on-regression")
    if row(back, "kernel.slow").get("status") != "improvement":
        fail(f"reverse should be an improvement: {back}")
    # a threshold above the change turns it into "unchanged"
    high = diff_json(base, new, "--threshold", "100000", "--fail-on-regression")
    if row(high, "kernel.slow").get("status") != "unchanged":
        fail(f"--threshold 100000 should hide the change: {high}")


def case_numpy():
    if arg == "generated":
        # whatever the timings, every number must match numpy's
        base, new = generated_pair(("base", "slow"), lambda want: True)
        pairs = [(base, new), (new, base)]
    else:
        a, b = arg.split("-")
        pairs = [(fixture(a), fixture(b))]
    # numpy's reference sums over the ranks: runs on different rank counts
    # are compared per rank by default, --sum asks for the sums (the
    # per-rank form is tests/mpi_views/check_scaling.py's)
    for base, new in pairs:
        for metric in METRICS:
            check_against_numpy(base, new, metric, extra=("--sum",))
        check_against_numpy(base, new, "total", threshold=0.5, extra=("--sum",))


def case_added():
    base, new = generated_pair(("base", "slow"), lambda want: True)
    got = check_against_numpy(base, new, "total")
    added, removed = row(got, "only.new"), row(got, "only.base")
    if added.get("status") != "added" or added.get("base") is not None or added.get("calls_base") != 0:
        fail(f"only.new should be added: {added}")
    if removed.get("status") != "removed" or removed.get("new") is not None or removed.get("calls_new") != 0:
        fail(f"only.base should be removed: {removed}")
    # added/removed regions are reported but do not fail a CI job
    only = diff_json(base, new, "--include", "only\\.", "--fail-on-regression")
    if only and sorted(r["name"] for r in only["regions"]) != ["only.base", "only.new"]:
        fail(f"--include only\\.: {only['regions']}")
    if only and (only["summary"]["added"], only["summary"]["removed"]) != (1, 1):
        fail(f"summary counts {only['summary']}")
    proc = run("--ascii", "--include", "only", base, new)
    for name, status in (("only.new", "added"), ("only.base", "removed")):
        line = next((ln for ln in proc.stdout.splitlines() if name in ln), "")
        if status not in line:
            fail(f"text row of {name}: {line!r}")


def case_noise():
    base, new = generated_pair(("noisy-base", "noisy-new"), noise_scenario)
    got = check_against_numpy(base, new, "total")
    noisy = row(got, "kernel.noisy")
    if noisy.get("status") != "within_noise" or noisy.get("significant") is not False:
        fail(f"kernel.noisy should be within noise: {noisy}")
    if not noisy.get("exceeds_threshold"):
        fail(f"kernel.noisy changed beyond the threshold: {noisy}")
    run("--fail-on-regression", base, new, expect=0)
    proc = run("--ascii", base, new)
    if "within noise" not in proc.stdout:
        fail(f"text should say within noise:\n{proc.stdout}")
    # call counts are exact: the t test never excuses them
    calls = diff_json(base, new, "--metric", "calls")
    if row(calls, "kernel.noisy").get("significant") is not None:
        fail(f"--metric calls has no noise verdict: {calls}")


def case_fixtures():
    serial, threads = fixture("serial"), fixture("threads")
    got = diff_json(serial, threads, "--fail-on-regression", expect=None)
    if row(got, "worker.task").get("status") != "added":
        fail("worker.task should be added")
    back = diff_json(threads, serial)
    if row(back, "worker.task").get("status") != "removed":
        fail("worker.task should be removed")
    proc = run("--ascii", serial, threads, expect=0)
    if "worker.task" not in proc.stdout or "added" not in proc.stdout:
        fail(f"text output:\n{proc.stdout}")
    # ranks pooled: mpi4 has a region on rank 3 only, serial has none of it
    got = diff_json(fixture("mpi4"), serial)
    if row(got, "rank3.only").get("status") != "removed":
        fail(f"rank3.only should be removed: {got}")
    if row(got, "timestep").get("calls_base") != 24:
        fail("mpi4 timestep pooled over 4 ranks should have 24 calls")


def case_unavailable():
    """The aggregate layout has no per-call data: no percentiles, no t."""
    agg, serial = fixture("aggregate"), fixture("serial")
    got = diff_json(agg, serial, "--metric", "p95", "--fail-on-regression")
    if got and got["noise_test"]["ran"]:
        fail("noise test cannot run on an aggregate file")
    both = [r for r in (got["regions"] if got else []) if r["status"] not in ("added", "removed")]
    if not both:
        fail("the aggregate fixture shares regions with serial.h5")
    for r in both:
        if r["status"] != "unavailable" or r["base"] is not None or r["t_stat"] is not None:
            fail(f"p95 of an aggregate region must be unavailable: {r}")
    total = diff_json(agg, serial, "--metric", "total")
    if row(total, "solve").get("base") is None:
        fail("totals of an aggregate file are available")


def case_sort():
    serial, threads = fixture("serial"), fixture("threads")
    for key, field, reverse in (("name", "name", False), ("base", "base", True), ("new", "new", True)):
        got = diff_json(serial, threads, "--sort", key)
        if not got:
            continue
        present = [r[field] for r in got["regions"] if r[field] is not None]
        if present != sorted(present, reverse=reverse):
            fail(f"--sort {key}: {present}")
        if key != "name":
            tail = [r[field] for r in got["regions"]][len(present):]
            if any(v is not None for v in tail):
                fail(f"--sort {key}: regions without a value must come last")
    got = diff_json(serial, threads, "--exclude", "worker", "--exclude", "f")
    names = sorted(r["name"] for r in got["regions"]) if got else []
    if names != ["assemble", "driver.setup", "io.write", "solve", "timestep"]:
        fail(f"--exclude: {names}")


def case_text():
    serial, threads = fixture("serial"), fixture("threads")
    for extra in ([], ["--ascii"]):
        proc = run(*extra, serial, threads)
        try:
            proc.stdout.encode("ascii")
        except UnicodeEncodeError:
            fail(f"{extra or 'piped'} output must be ASCII:\n{proc.stdout}")
        for needle in ("+---", "| region", "Session:", "Changes:", "worker.task"):
            if needle not in proc.stdout:
                fail(f"{needle!r} missing from:\n{proc.stdout}")
    # a UTF-8 terminal gets box drawing (as scope-inspect), --ascii wins
    import pty
    for extra, want_box in (([], True), (["--ascii"], False)):
        pid, fd = pty.fork()
        if pid == 0:
            os.environ.update(LC_ALL="C.UTF-8")
            os.execv(tool, [tool, *extra, serial, threads])
        chunks = []
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.waitpid(pid, 0)
        text = b"".join(chunks).decode("utf-8", "replace")
        if ("\u256d" in text) != want_box:
            fail(f"terminal {extra}: box drawing {'expected' if want_box else 'unexpected'}:\n{text}")


def case_names():
    """Region names with ESC (ANSI sequences), control bytes, a newline and
    invalid UTF-8 are printed escaped in the text table (issue 19), never
    raw, and the table stays aligned; JSON keeps what it can."""
    path = os.path.join(os.getcwd(), "names.h5")
    shutil.copyfile(fixture("serial"), path)
    renamed = {"solve": b"\x1b[31mred\x1b[0m\tbell\x07", "assemble": b"line\nbreak \xff\xfe end"}
    with h5py.File(path, "r+") as h5:
        names = [n if isinstance(n, bytes) else n.encode() for n in h5["region_table/names"][:]]
        names = [renamed.get(n.decode("utf-8", "replace"), n) for n in names]
        del h5["region_table/names"]
        # invalid UTF-8 can only be stored under the ASCII tag
        h5.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("ascii"))
    proc = subprocess.run([tool, "--ascii", path, path], capture_output=True)
    if proc.returncode != 0:
        fail(f"scope-diff on {path}: exit {proc.returncode}: {proc.stderr!r}")
        return
    out = proc.stdout
    raw = sorted({b for b in out if (b < 0x20 and b != 0x0A) or b == 0x7F or b >= 0x80})
    if raw:
        fail(f"raw control or non-ASCII bytes {raw} in the table:\n{out!r}")
    for want in (rb"\x1b[31mred\x1b[0m\x09bell\x07", rb"line\x0abreak \xff\xfe end"):
        if want not in out:
            fail(f"escaped name {want!r} missing:\n{out.decode('ascii', 'replace')}")
    rows = [l for l in out.decode("ascii", "replace").splitlines() if l.startswith("  |")]
    if len({len(l) for l in rows}) != 1:
        fail("table rows differ in width:\n" + "\n".join(rows))


def case_error():
    work, good = os.getcwd(), fixture("serial")
    if arg == "missing":
        path = os.path.join(work, "does_not_exist.h5")
    elif arg == "corrupt":
        path = os.path.join(work, "random.h5")
        with open(path, "wb") as fh:
            fh.write(random.Random(7).randbytes(4096))
    for args in ([path, good], [good, path], ["--json", "--fail-on-regression", good, path]):
        proc = run(*args, expect=2)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1 or path not in lines[0]:
            fail(f"{args}: expected one line naming {path}, got {proc.stderr!r}")
        if proc.stdout:
            fail(f"{args}: nothing should be printed on stdout: {proc.stdout!r}")
    other = os.path.join(work, "also_missing.h5")
    proc = run(path, other, expect=2)
    if path not in proc.stderr or other not in proc.stderr:
        fail(f"both unreadable files should be named: {proc.stderr!r}")


def case_usage():
    good = fixture("serial")
    for args in (["--metric", "bogus", good, good], ["--metric", "max", good, good],
                 ["--metric", good, good], ["--threshold", "-1", good, good],
                 ["--threshold", "abc", good, good], ["--threshold", "nan", good, good],
                 ["--sort", "calls", good, good], ["--include", "(", good, good],
                 ["--bogus", good, good], [good], [], [good, good, good]):
        proc = run(*args, expect=1)
        if not proc.stderr.strip() or proc.stdout:
            fail(f"{args}: want a message on stderr only, got {proc.stderr!r} / {proc.stdout!r}")
    proc = run("--metric", "bogus", good, good, expect=1)
    if "bogus" not in proc.stderr:
        fail(f"message should name the bad metric: {proc.stderr!r}")
    proc = run("--help")
    for needle in ("Welch", "|t| < 2", "Exit status", "--fail-on-regression", "exclusive"):
        if needle not in proc.stdout:
            fail(f"--help should mention {needle!r}")
    # accepted spellings
    run("--metric=p99", "--threshold=2.5%", "--sort=name", good, good)


CASES = {"names": case_names, "self": case_self, "regression": case_regression, "numpy": case_numpy,
         "added": case_added, "noise": case_noise, "fixtures": case_fixtures,
         "unavailable": case_unavailable, "sort": case_sort, "text": case_text,
         "error": case_error, "usage": case_usage}
CASES[case]()
check.finish()
