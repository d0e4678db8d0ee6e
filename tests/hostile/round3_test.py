#!/usr/bin/python3
"""Hostile files and faults, round 3 (issue 29): one case per ctest entry.

    round3_test.py --bin DIR [--shim LIB --recorder PROG --names PROG] --data DIR CASE

Every file is crafted here with h5py, in the current directory:

  external_storage  region_table/names stored in an external file outside
                    the profile (a "secret" the user can read): every tool
                    exits 2 naming the profile and the object, and prints
                    none of the secret's bytes; scope-merge refuses it and
                    writes nothing
  external_link     region_table an external link to another profile, and
                    rank0/line_profile/0 one for scope-merge: refused, none
                    of the other file's names printed or copied
  virtual           region_table/names a virtual dataset over another file
  soft_cycle        two soft links naming each other (and a dangling one):
                    every tool and scope-merge refuse the file
  line_profile      rank0/line_profile of scope-merge's inputs: a soft-link
                    loop, a hard link to "/", a 2^40-element dataset never
                    written: refused; a plain one is copied by value
  diff_rank_max     scope-diff of a file with ranks 0 and 4294967295 (the
                    rank + 1 that wrapped): no signal, exit 0 or 4
  long_name         one 100 KB region name among 2000 regions (a 0.78 MB
                    file): the text of scope-inspect and scope-diff stays
                    under 1 MB (it was 200 MB), the name is cut with a
                    marker there and printed whole by --json and the CSV
  summary_long_name the summary sp_finalize prints for 10^4 regions, one of
                    them named by 100 KB (many_names.c): under 1 MB of text
                    (every row was padded to the longest name: 1.0 GB),
                    the long name's start shown, finalize succeeds
  disk_full_close   the final H5Fclose of the output fails as on a full disk
                    (fail_close.c, LD_PRELOAD): sp_finalize and scope-merge
                    return an error (no signal, not even at exit), the
                    previous file is intact and no temporary is left

Exit 0 pass, 1 fail, 77 skipped (no h5py/numpy).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

FAILURES = []
TIMEOUT = 120
LEAK_MARKERS = (b"SECRET-LINE", b"LEAKED-NAME")


def fail(msg):
    FAILURES.append(msg)


def env(extra=None):
    e = dict(os.environ)
    # A real fault must end the process with its signal, as in a normal
    # build; a preloaded shim is not first in an ASan program's libraries.
    e["ASAN_OPTIONS"] = (e.get("ASAN_OPTIONS", "") + ":handle_segv=0:handle_sigbus=0:"
                         "handle_abort=0:verify_asan_link_order=0").lstrip(":")
    if extra:
        e.update(extra)
    return e


def run(argv, extra_env=None):
    try:
        p = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, env=env(extra_env))
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(argv)}: no end after {TIMEOUT} s")
        return None
    if p.returncode < 0:
        fail(f"{' '.join(argv)}: killed by {signal.Signals(-p.returncode).name}\n"
             f"{p.stderr.decode('utf-8', 'replace')[-2000:]}")
        return None
    err = p.stderr.decode("utf-8", "replace")
    if "runtime error:" in err or "AddressSanitizer" in err or "LeakSanitizer" in err:
        fail(f"{' '.join(argv)}: sanitizer report\n{err[-3000:]}")
    return p


def tool(name):
    return os.path.join(ARGS.bin, name)


# ---- crafting -------------------------------------------------------------------

def profile(path, names=("outer", "inner"), rows=None):
    from make_hostile import nested, write
    write(path, list(names), rows or nested())


def other_profile(path):
    """A second file whose names must never show up anywhere."""
    import h5py
    with h5py.File(path, "w") as f:
        f.create_dataset("region_table/names", data=[b"LEAKED-NAME-A", b"LEAKED-NAME-B"],
                         dtype="S16")
        f.create_dataset("data", data=[b"LEAKED-NAME-C", b"LEAKED-NAME-D"], dtype="S16")


# ---- checks ---------------------------------------------------------------------

def outputs_clean(base):
    """No output a tool wrote may hold a leaked byte."""
    for name in os.listdir("."):
        if name.startswith(base) and not name.endswith(".h5"):
            data = open(name, "rb").read()
            for marker in LEAK_MARKERS:
                if marker in data:
                    fail(f"{name} holds {marker!r}")
            os.remove(name)


def refused_by_every_tool(path, what):
    """Every tool exits 2 naming the file and `what`, leaking nothing."""
    clean = os.path.join(ARGS.data, "driver", "serial.h5")
    base = os.path.basename(path)
    runs = [
        ("scope-inspect", [path]),
        ("scope-inspect", ["--json", path]),
        ("scope-check", [path]),
        ("scope-export", [path, "-o", base + ".csv", "--format", "csv"]),
        ("scope-export", [path, "-o", base + ".json", "--format", "chrome"]),
        ("scope-export", [path, "-o", base + ".stats.json", "--format", "json"]),
        ("scope-report", [path, "-o", base + ".html"]),
        ("scope-diff", [clean, path]),
        ("scope-diff", ["--json", path, clean]),
    ]
    for name, argv in runs:
        p = run([tool(name)] + argv)
        if p is None:
            continue
        text = p.stdout + p.stderr
        for marker in LEAK_MARKERS:
            if marker in text:
                fail(f"{name} {' '.join(argv)}: printed {marker!r} (bytes of another file)")
        if p.returncode != 2:
            fail(f"{name} {' '.join(argv)}: exit {p.returncode}, expected 2 (refused)\n"
                 f"{p.stderr.decode('utf-8', 'replace')[-1000:]}")
            continue
        err = p.stderr.decode("utf-8", "replace")
        if name != "scope-check" and (path not in err or what not in err):
            fail(f"{name} {' '.join(argv)}: the refusal does not name {path} and {what}: "
                 f"{err[-500:]}")
        if name == "scope-check" and what not in (p.stdout + p.stderr).decode("utf-8", "replace"):
            fail(f"scope-check {path}: the refusal does not name {what}")
    outputs_clean(base)


def merge_refused(path, what, clean=None):
    clean = clean or os.path.join(ARGS.data, "driver", "threads.h5")
    out = "merged.h5"
    if os.path.exists(out):
        os.remove(out)
    argv = [tool("scope-merge"), clean, path, "-o", out, "--quiet", "--allow-disjoint",
            "--prefix", f"{path}=x:"]
    p = run(argv)
    if p is None:
        return
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 2:
        fail(f"{' '.join(argv)}: exit {p.returncode}, expected 2 (refused)\n{err[-1000:]}")
    elif path not in err or what not in err:
        fail(f"{' '.join(argv)}: the refusal does not name {path} and {what}: {err[-500:]}")
    if os.path.exists(out):
        data = open(out, "rb").read()
        leaked = [m for m in LEAK_MARKERS if m in data]
        fail(f"scope-merge wrote {out} from {path}" + (f" holding {leaked}" if leaked else ""))
        os.remove(out)
    left = [n for n in os.listdir(".") if n.endswith(".tmp")]
    if left:
        fail(f"scope-merge left {left}")


# ---- cases ----------------------------------------------------------------------

def case_external_storage():
    import h5py
    secret = os.path.abspath("secret.txt")
    with open(secret, "wb") as f:
        f.write(b"SECRET-LINE-ONE-AAAAAAAAAAAAAAAASECRET-LINE-TWO-BBBBBBBBBBBBBBBB")
    os.chmod(secret, 0o444)  # h5py must not (and cannot) write into it
    for variant, target in (("absolute", secret), ("relative", "secret.txt")):
        path = os.path.abspath(f"external_storage_{variant}.h5")
        profile(path)
        with h5py.File(path, "a") as f:
            del f["region_table/names"]
            f.create_dataset("region_table/names", shape=(2,), dtype="S32",
                             external=[(target, 0, 64)])
        refused_by_every_tool(path, "/region_table/names")
        merge_refused(path, "/region_table/names")
    # external storage where only scope-merge used to look
    path = os.path.abspath("external_storage_line_profile.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        f.create_dataset("rank0/line_profile/0/lines", shape=(2,), dtype="S32",
                         external=[(secret, 0, 64)])
    merge_refused(path, "/rank0/line_profile/0/lines")


def case_external_link():
    import h5py
    other = os.path.abspath("other.h5")
    other_profile(other)
    path = os.path.abspath("external_link.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        del f["region_table"]
        f["region_table"] = h5py.ExternalLink(other, "/region_table")
    refused_by_every_tool(path, "/region_table")
    merge_refused(path, "/region_table")
    path = os.path.abspath("external_link_line_profile.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        f["rank0/line_profile/0"] = h5py.ExternalLink(other, "/")
    refused_by_every_tool(path, "/rank0/line_profile/0")
    merge_refused(path, "/rank0/line_profile/0")


def case_virtual():
    import h5py
    other = os.path.abspath("other.h5")
    other_profile(other)
    path = os.path.abspath("virtual.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        del f["region_table/names"]
        layout = h5py.VirtualLayout(shape=(2,), dtype="S16")
        layout[:] = h5py.VirtualSource(other, "region_table/names", shape=(2,))
        f.create_virtual_dataset("region_table/names", layout)
    refused_by_every_tool(path, "/region_table/names")
    merge_refused(path, "/region_table/names")


def case_soft_cycle():
    import h5py
    path = os.path.abspath("soft_cycle.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        f["loop_a"] = h5py.SoftLink("/loop_b")
        f["loop_b"] = h5py.SoftLink("/loop_a")
    refused_by_every_tool(path, "/loop_")
    merge_refused(path, "/loop_")
    path = os.path.abspath("soft_dangling.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        f["metadata/nowhere"] = h5py.SoftLink("/no/such/group")
    refused_by_every_tool(path, "/metadata/nowhere")


def case_line_profile():
    import h5py
    import numpy as np
    bad = {
        "soft_loop": lambda g: g.__setitem__("loop", h5py.SoftLink("/rank0")),
        "hard_root": lambda g: g.__setitem__("root", g.file["/"]),
        "unwritten_2p40": lambda g: g.create_dataset("huge", shape=(2**40,), dtype="<i8",
                                                     chunks=(2**16,)),
        "reference": lambda g: g.create_dataset("ref", data=[g.file["metadata"].ref],
                                                dtype=h5py.ref_dtype),
    }
    for name, make in bad.items():
        path = os.path.abspath(f"line_profile_{name}.h5")
        profile(path)
        with h5py.File(path, "a") as f:
            g = f.create_group("rank0/line_profile/0")
            g["lines"] = np.arange(4, dtype=np.int64)
            make(g)
        merge_refused(path, "rank0/line_profile/0")
    # a plain one is still copied, by value, attributes and all
    path = os.path.abspath("line_profile_plain.h5")
    profile(path)
    with h5py.File(path, "a") as f:
        g = f.create_group("rank0/line_profile/0")
        g.attrs["file"] = "solver.py"
        g["lines"] = np.arange(6, dtype=np.int32).reshape(2, 3)
        g.create_dataset("text", data=["a", "bb"], dtype=h5py.string_dtype())
    out = "merged_plain.h5"
    clean = os.path.join(ARGS.data, "driver", "threads.h5")
    p = run([tool("scope-merge"), clean, path, "-o", out, "--quiet", "--allow-disjoint",
             "--prefix", f"{path}=x:"])
    if p is not None and p.returncode != 0:
        fail(f"scope-merge of {path}: exit {p.returncode}\n"
             f"{p.stderr.decode('utf-8', 'replace')[-1000:]}")
    elif p is not None:
        with h5py.File(out, "r") as f:
            g = f["rank0/line_profile/0"]
            if g.attrs.get("file") != "solver.py" or g["lines"].dtype != np.int32 or \
                    g["lines"][()].tolist() != [[0, 1, 2], [3, 4, 5]] or \
                    [t.decode() for t in g["text"][()]] != ["a", "bb"]:
                fail(f"{out}: rank0/line_profile/0 not copied exactly")
        c = run([tool("scope-check"), out])
        if c is not None and c.returncode != 0:
            fail(f"scope-check rejects {out}:\n{c.stdout.decode('utf-8', 'replace')[-1500:]}")


def case_diff_rank_max():
    path = os.path.abspath("rank_max.h5")
    rows = [{"region": 0, "rank": 0, "starts": [1000], "durations": [10],
             "call_ids": [0], "parent_ids": [-1]},
            {"region": 0, "rank": 2**32 - 1, "starts": [2000], "durations": [20],
             "call_ids": [0], "parent_ids": [-1]}]
    profile(path, names=["a"], rows=rows)
    clean = os.path.join(ARGS.data, "driver", "serial.h5")
    for argv in ([clean, path], [path, clean], [path, path], ["--json", clean, path]):
        # without the tools' isolation too: scope-diff compares outside it
        for extra in (None, {"SCOPE_PROFILER_NO_ISOLATION": "1"}):
            p = run([tool("scope-diff")] + argv, extra)
            if p is not None and p.returncode not in (0, 4):
                fail(f"scope-diff {' '.join(argv)}: exit {p.returncode}\n"
                     f"{p.stderr.decode('utf-8', 'replace')[-1000:]}")


def case_long_name():
    path = os.path.abspath("long_name.h5")
    long_name = "L" * 100_000
    n = 2000
    names = [long_name] + [f"r{i}" for i in range(1, n)]
    rows = [{"region": i, "rank": 0, "starts": [10 * i], "durations": [5],
             "call_ids": [i], "parent_ids": [-1]} for i in range(n)]
    profile(path, names=names, rows=rows)
    limit = 1 << 20
    for argv in ([tool("scope-inspect"), path],
                 [tool("scope-inspect"), "--flat", path],
                 [tool("scope-diff"), path, path]):
        p = run(argv)
        if p is None:
            continue
        if p.returncode not in (0, 4):
            fail(f"{' '.join(argv)}: exit {p.returncode}")
        if len(p.stdout) > limit:
            fail(f"{' '.join(argv)}: {len(p.stdout)} bytes of text for a "
                 f"{os.path.getsize(path)}-byte file")
        if long_name.encode() in p.stdout:
            fail(f"{' '.join(argv)}: the 100 KB name is printed whole in a text table")
        if b"L" * 40 not in p.stdout:
            fail(f"{' '.join(argv)}: the long name's start is not shown")
    for argv in ([tool("scope-inspect"), "--json", path],
                 [tool("scope-diff"), "--json", path, path]):
        p = run(argv)
        if p is not None and long_name.encode() not in p.stdout:
            fail(f"{' '.join(argv)}: JSON does not carry the whole name")
    p = run([tool("scope-export"), path, "-o", "long.csv", "--format", "csv"])
    if p is not None:
        if p.returncode != 0 or long_name not in open("long.csv", encoding="utf-8").read():
            fail("scope-export csv: the whole name is not in the CSV")
        os.remove("long.csv")


def case_summary_long_name():
    if not ARGS.names:
        fail("summary_long_name needs --names")
        return
    p = run([ARGS.names, os.path.abspath("summary.h5"), "10000", "100000"],
            {"SCOPE_PROFILER_SUMMARY": "1", "SCOPE_PROFILER_QUIET": "", "SCOPE_PROFILER_FILE": "",
             "SCOPE_PROFILER_DISABLE": ""})
    if p is None:
        return
    text = p.stdout + p.stderr
    if p.returncode != 0 or b"finalize 0" not in p.stdout:
        fail(f"many_names: exit {p.returncode}, {p.stdout[-200:]!r}")
    if len(text) > 1 << 20:
        fail(f"the finalize summary printed {len(text)} bytes for 10^4 regions")
    if b"L" * 40 not in text:
        fail("the summary does not show the long name's start")


def same_bytes(path, before, who):
    if not os.path.exists(path) or open(path, "rb").read() != before:
        fail(f"{who}: the previous {path} was not kept intact")


def no_temporaries(who):
    left = [n for n in os.listdir(".") if n.startswith(".") and n.endswith(".tmp")]
    if left:
        fail(f"{who}: temporaries left: {left}")
        for n in left:
            os.remove(n)


def case_disk_full_close():
    if not ARGS.shim or not ARGS.recorder:
        fail("disk_full_close needs --shim and --recorder")
        return
    shim = {"LD_PRELOAD": ARGS.shim, "FAIL_CLOSE_NTH": "1"}
    # the library: sp_finalize's final close fails
    out = os.path.abspath("run.h5")
    p = run([ARGS.recorder, out, "10"])
    if p is None or b"finalize 0" not in p.stdout:
        fail("record_calls: the first run did not write its file")
        return
    before = open(out, "rb").read()
    for calls in ("1000", "200000"):
        p = run([ARGS.recorder, out, calls], shim)
        if p is not None and (p.returncode != 0 or b"finalize 8" not in p.stdout):
            fail(f"record_calls {calls} with a failing close: exit {p.returncode}, "
                 f"{p.stdout.decode()!r} (expected SP_ERR_OUTPUT = 8)\n"
                 f"{p.stderr.decode('utf-8', 'replace')[-1000:]}")
        same_bytes(out, before, f"sp_finalize ({calls} calls)")
        no_temporaries(f"sp_finalize ({calls} calls)")
    p = run([ARGS.recorder, out, "10"])
    if p is None or b"finalize 0" not in p.stdout:
        fail("record_calls: a run after the failure did not write its file")
    # scope-merge's final close fails
    serial = os.path.join(ARGS.data, "driver", "serial.h5")
    threads = os.path.join(ARGS.data, "driver", "threads.h5")
    merged = "merged.h5"
    shutil.copy(serial, merged)
    before = open(merged, "rb").read()
    argv = [tool("scope-merge"), serial, threads, "-o", merged, "--allow-disjoint",
            "--prefix", f"{serial}=a:", "--prefix", f"{threads}=b:"]
    for extra in ({}, {"SCOPE_PROFILER_NO_ISOLATION": "1"}):
        p = run(argv, dict(shim, **extra))
        if p is None:
            continue
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 3 or merged not in err or "No space left" not in err:
            fail(f"scope-merge with a failing close {extra}: exit {p.returncode}, expected 3 "
                 f"naming {merged} and the full disk:\n{err[-1000:]}")
        same_bytes(merged, before, "scope-merge")
        no_temporaries("scope-merge")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--shim")
    ap.add_argument("--recorder")
    ap.add_argument("--names")
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        print("skipped: h5py and numpy are needed")
        return 77
    work = os.path.abspath(ARGS.case)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    CASES[ARGS.case]()
    for f in FAILURES:
        print("FAIL:", f, "\n")
    print(f"{ARGS.case}: {len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
