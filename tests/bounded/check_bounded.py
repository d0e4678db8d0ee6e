#!/usr/bin/python3
"""check_bounded.py CASE APP SCOPE_CHECK WORKDIR: bounded traces.

Cases:
  flush_threads  4 threads, 256K limit, flush: every call in the file, the
                 report counts the flushes, scope-check passes, nothing but
                 the output is left in the directory
  drop_env       SCOPE_PROFILER_OVERFLOW=drop, limit 128K from the
                 environment: calls lost, counted, status SP_ERR_BUFFER_LIMIT
  bad_env        an unparsable SCOPE_PROFILER_BUFFER_LIMIT: one message,
                 the default limit, every call recorded
  killed         SIGKILL and SIGTERM while flushing: the previous output is
                 intact and nothing else is left in the directory
  disk_full      (root) the output directory on a 2 MiB tmpfs: one message
                 about the spill file, then drop mode; recorded + lost =
                 every call; the program ends normally
"""
import hashlib
import os
import re
import signal
import subprocess
import sys
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import outputs  # noqa: E402
import small_fs  # noqa: E402

case, app, scope_check, workdir = sys.argv[1:5]
outputs.fresh_workdir(workdir)
check = checks.Checks(f"bounded {case}")


def run(path, calls, threads, **env):
    e = dict(os.environ, SCOPE_PROFILER_QUIET="", SCOPE_PROFILER_SUMMARY="0")
    e.update(env)
    p = subprocess.run([app, path, str(calls), str(threads)], env=e, capture_output=True,
                       text=True, timeout=300)
    print(p.stdout, p.stderr)
    check(p.returncode == 0, f"exit {p.returncode}")
    m = re.search(r"status=(\d+)", p.stdout)
    return (int(m.group(1)) if m else -1), p


def calls_in(path):
    with h5py.File(path, "r") as f:
        return int(f["rank_region_index/event_counts"][:].sum())


def leftovers(directory, keep):
    return sorted(n for n in os.listdir(directory) if n not in keep)


if case == "flush_threads":
    out = os.path.join(workdir, "flush.h5")
    status, p = run(out, 100000, 4, SCOPE_PROFILER_BUFFER_LIMIT="256K")
    check(status == 0, f"status {status}")
    check(calls_in(out) == 4 * 100000 * 3, f"{calls_in(out)} calls, want 1200000")
    check(re.search(r"flushed [0-9.]+ MiB of calls to disk in \d+ writes", p.stdout),
          "the report does not say what was flushed")
    c = subprocess.run([scope_check, out], capture_output=True, text=True)
    check(c.returncode == 0, f"scope-check: {c.stdout} {c.stderr}")
    check(leftovers(workdir, {"flush.h5"}) == [], f"left behind: {leftovers(workdir, {'flush.h5'})}")
elif case == "drop_env":
    out = os.path.join(workdir, "drop.h5")
    status, p = run(out, 100000, 1, SCOPE_PROFILER_BUFFER_LIMIT="128K",
                    SCOPE_PROFILER_OVERFLOW="drop")
    check(status == 7, f"status {status}, want SP_ERR_BUFFER_LIMIT (7)")
    m = re.search(r"(\d+) calls NOT recorded", p.stdout)
    check(m is not None, "the report does not count the lost calls")
    if m:
        check(calls_in(out) + int(m.group(1)) == 300000,
              f"{calls_in(out)} recorded + {m.group(1)} lost != 300000")
    check(calls_in(out) * 24 <= 128 << 10, "more calls than 128 KiB holds (24 B each)")
elif case == "bad_env":
    out = os.path.join(workdir, "bad.h5")
    status, p = run(out, 1000, 1, SCOPE_PROFILER_BUFFER_LIMIT="12Q",
                    SCOPE_PROFILER_OVERFLOW="sometimes")
    check(status == 0, f"status {status}")
    check("SCOPE_PROFILER_BUFFER_LIMIT=12Q" in p.stderr, "no message about the bad limit")
    check("SCOPE_PROFILER_OVERFLOW=sometimes" in p.stderr, "no message about the bad overflow")
    check(calls_in(out) == 3000, "calls lost")
elif case == "killed":
    out = os.path.join(workdir, "kept.h5")
    run(out, 10, 1)
    before = hashlib.sha256(open(out, "rb").read()).hexdigest()
    for sig in (signal.SIGKILL, signal.SIGTERM):
        e = dict(os.environ, SCOPE_PROFILER_BUFFER_LIMIT="128K", SCOPE_PROFILER_QUIET="1")
        p = subprocess.Popen([app, out, "forever"], env=e, stdout=subprocess.PIPE, text=True)
        check(p.stdout.readline().strip() == "ready", "the recorder did not start")
        p.send_signal(sig)
        p.wait(timeout=60)
        check(p.returncode == -sig, f"exit {p.returncode} after {sig.name}")
        after = hashlib.sha256(open(out, "rb").read()).hexdigest()
        check(after == before, f"the previous output changed after {sig.name}")
        check(leftovers(workdir, {"kept.h5"}) == [],
              f"left behind after {sig.name}: {leftovers(workdir, {'kept.h5'})}")
    # killed while finalize streams a flushed trace into the output: the
    # previous file stays; at most the writer's hidden temporary
    # (.kept.h5.<random>.tmp, documented) is left by SIGKILL
    for sig in (signal.SIGKILL, signal.SIGTERM):
        e = dict(os.environ, SCOPE_PROFILER_BUFFER_LIMIT="128K", SCOPE_PROFILER_QUIET="1")
        p = subprocess.Popen([app, out, "3000000", "1"], env=e, stdout=subprocess.PIPE, text=True)
        check(p.stdout.readline().strip() == "finalizing", "the program did not reach finalize")
        time.sleep(0.3)
        p.send_signal(sig)
        p.wait(timeout=60)
        after = hashlib.sha256(open(out, "rb").read()).hexdigest()
        if p.returncode == -sig:
            check(after == before, f"the previous output changed after {sig.name} in finalize")
        rest = leftovers(workdir, {"kept.h5"})
        check(all(re.fullmatch(r"\.kept\.h5\..+\.tmp", n) for n in rest),
              f"left behind after {sig.name} in finalize: {rest}")
        for n in rest:
            os.unlink(os.path.join(workdir, n))
elif case == "disk_full":
    with small_fs.small_tmpfs("2m", parent=workdir) as mnt:
        out = os.path.join(mnt, "full.h5")
        status, p = run(out, 200000, 1, SCOPE_PROFILER_BUFFER_LIMIT="256K")
        check(p.stderr.count("cannot write the spill file") == 1,
              "want exactly one message about the spill file")
        check("No space left on device" in p.stderr, "the message does not give the reason")
        m = re.search(r"(\d+) calls NOT recorded", p.stdout)
        check(m is not None, "the report does not count the lost calls")
        if os.path.exists(out) and m:
            check(status == 7, f"status {status}")
            check(calls_in(out) + int(m.group(1)) == 600000,
                  f"{calls_in(out)} recorded + {m.group(1)} lost != 600000")
        else:
            check(status == 8, f"no file and status {status}, want SP_ERR_OUTPUT (8)")
        check(leftovers(mnt, {"full.h5"}) == [], f"left behind: {leftovers(mnt, {'full.h5'})}")
else:
    sys.exit(f"unknown case {case}")
check.finish()
