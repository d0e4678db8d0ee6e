#!/usr/bin/python3
"""Silenced functions and call-site patching (tests/instrument, issue 32):
run inst_silence (see its header for what it calls) with
SCOPE_PROFILER_THROTTLE=100,1000000 and a filter excluding filtered*, once
with SCOPE_PROFILER_PATCH=0 and once with =1, and check each file with h5py
(tests/lib/h5_calls.py):

  - every call path with its exact count: the calls recorded before
    throttling (100 of hot, 100 of hot_inline, 111 of rec: the 100 before
    the verdict and the 11 open at it), nothing of them after, nothing of the
    excluded functions, and the callers' calls all there;
  - nesting: every call's parent is on its thread and contains it in time;
    the markers called inside rec's open frames after the verdict sit under
    those frames (a silenced recursive call did not end them);
  - the throttle report (stderr and metadata) with those counts;
  - both runs give the same calls, regions and throttle metadata; only
    instrument_patched differs ("off", or "<n> patched, <m> unpatchable",
    with every site of the silenced functions counted on x86-64 Linux).

    check_silence.py --program PATH --workdir DIR [--no-patching]

Also: a recursion past the shadow stack's 1024 frames (argument "deep").
Exit 0 pass, 1 fail, 77 skip (no h5py).
"""
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
try:
    import h5py
    from h5_calls import read_calls
except ImportError:
    print("SKIP: h5py is not installed")
    sys.exit(77)

ap = argparse.ArgumentParser()
ap.add_argument("--program", required=True)
ap.add_argument("--workdir", required=True)
ap.add_argument("--no-patching", action="store_true",
                help="the library was built with ThreadSanitizer: it never patches")
args = ap.parse_args()
shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
filter_path = os.path.join(args.workdir, "silence.filter")
with open(filter_path, "w") as handle:
    handle.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE filtered*\nSCOREP_REGION_NAMES_END\n")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(patch):
    out = os.path.join(args.workdir, f"patch{patch}.h5")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env.update({"SCOPE_PROFILER_FILE": out, "SCOPE_PROFILER_SUMMARY": "0",
                "SCOPE_PROFILER_THROTTLE": "100,1000000", "SCOPE_PROFILER_FILTER": filter_path,
                "SCOPE_PROFILER_PATCH": str(patch)})
    done = subprocess.run([args.program], env=env, cwd=args.workdir, capture_output=True,
                          text=True, timeout=120)
    return out, done


def tree(calls):
    """{(thread root..., path): count} and nesting problems, from ids and parents."""
    by_id = {(c["thread"], c["id"]): c for c in calls}
    paths, problems = {}, []
    for c in calls:
        path, node = [c["region"]], c
        while node["parent"] not in (None, -1):
            parent = by_id.get((node["thread"], node["parent"]))
            if parent is None:
                problems.append(f"{node['region']}: parent {node['parent']} not on its thread")
                break
            if not (parent["start"] <= node["start"] and node["end"] <= parent["end"]):
                problems.append(f"{node['region']} [{node['start']}, {node['end']}] outside "
                                f"{parent['region']} [{parent['start']}, {parent['end']}]")
            path.append(parent["region"])
            node = parent
        key = tuple(reversed(path))
        paths[key] = paths.get(key, 0) + 1
    return paths, problems


def expected():
    want = {("main",): 1, ("main", "caller_a"): 1, ("main", "caller_b"): 1}
    for caller in ("caller_a", "caller_b"):
        for leaf in ("hot", "hot_inline"):
            want[("main", caller, leaf)] = 50
    # rec(110) .. rec(0): 111 recorded levels; the outer 10 (k > 100) each
    # call marker after the verdict, inside their own frame.
    for level in range(1, 112):
        want[("main",) + ("rec",) * level] = 1
    for level in range(1, 11):
        want[("main",) + ("rec",) * level + ("marker",)] = 1
    want[("worker",)] = 2
    want[("worker", "caller_a")] = 6
    want[("worker", "caller_b")] = 6
    return want


results = {}
for patch in (0, 1):
    out, done = run(patch)
    label = f"SCOPE_PROFILER_PATCH={patch}"
    if not check(done.returncode == 0, f"{label}: exit status {done.returncode}") or \
            not check(os.path.exists(out), f"{label}: {out} was written"):
        print(f"{label} stderr:\n{done.stderr}")
        continue
    calls = read_calls(out)
    with h5py.File(out, "r") as f:
        meta = {k: (v.decode() if isinstance(v, bytes) else v)
                for k, v in f["metadata"].attrs.items()}
        names = sorted(x.decode() for x in f["region_table/names"][:])
    paths, problems = tree(calls)
    check(not problems, f"{label}: nesting: {problems[:5]}")
    want = expected()
    if not check(paths == want, f"{label}: call paths and counts"):
        for key in sorted(set(paths) | set(want)):
            if paths.get(key) != want.get(key):
                print(f"  {label}: {key}: got {paths.get(key)} want {want.get(key)}")
    check(not any(n.startswith("filtered") for n in names), f"{label}: no filtered* region")
    throttled = sorted((meta.get("instrument_throttled") or "").splitlines())
    check(throttled == ["100 hot", "100 hot_inline", "111 rec"],
          f"{label}: instrument_throttled {throttled}")
    for name, calls_before in (("hot", 100), ("hot_inline", 100), ("rec", 111)):
        check(f"throttled {name} after {calls_before} calls" in done.stderr,
              f"{label}: stderr reports {name} throttled after {calls_before} calls")
    check("without a matching begin" not in done.stderr and "still open" not in done.stderr,
          f"{label}: no unmatched or nesting message: {done.stderr}")
    patched = meta.get("instrument_patched")
    patching_exists = (platform.machine() == "x86_64" and sys.platform.startswith("linux")
                       and not args.no_patching)
    if patch == 0 or not patching_exists:
        check(patched == "off", f"{label}: instrument_patched {patched!r}")
        check("patched out" not in done.stderr, f"{label}: no patch report")
    else:
        match = re.fullmatch(r"(\d+) patched, (\d+) unpatchable", patched or "")
        if check(match, f"{label}: instrument_patched {patched!r}"):
            n, m = int(match.group(1)), int(match.group(2))
            # Sites of silenced functions, each counted once whatever the
            # threads did: the enter and exit of hot, filtered and rec (2
            # each), of the two inlined copies of hot_inline and
            # filtered_inline (4 each). Where they fall in the code decides
            # how many straddle a word (1 in 8 on average).
            check(n + m == 14 and n >= 7, f"{label}: {n} patched + {m} unpatchable sites")
            check(f"{n} hook call sites patched out, {m} left as they were" in done.stderr,
                  f"{label}: the patch report on stderr")
    results[patch] = (paths, names, meta.get("instrument_throttled"),
                      meta.get("instrument_throttle"))

# Past the shadow stack's depth (throttling off): deep(1100) .. deep(78)
# recorded under main (1024 frames in all), the probes inside their frames,
# nothing deeper, nesting intact.
out = os.path.join(args.workdir, "deep.h5")
env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
env.update({"SCOPE_PROFILER_FILE": out, "SCOPE_PROFILER_SUMMARY": "0",
            "SCOPE_PROFILER_THROTTLE": "off"})
done = subprocess.run([args.program, "deep"], env=env, cwd=args.workdir, capture_output=True,
                      text=True, timeout=120)
if check(done.returncode == 0 and os.path.exists(out), f"deep: exit status {done.returncode}"):
    paths, problems = tree(read_calls(out))
    check(not problems, f"deep: nesting: {problems[:5]}")
    want = {("main",) + ("deep",) * level: 1 for level in range(0, 1024)}
    for k in range(100, 1101, 100):
        want[("main",) + ("deep",) * (1100 - k + 1) + ("probe",)] = 1
    if not check(paths == want, "deep: call paths and counts"):
        for key in sorted(set(paths) | set(want), key=len)[:10]:
            if paths.get(key) != want.get(key):
                print(f"  deep: {len(key)} levels ending {key[-2:]}: got {paths.get(key)} "
                      f"want {want.get(key)}")
    check("without a matching begin" not in done.stderr and "still open" not in done.stderr,
          f"deep: no unmatched or nesting message: {done.stderr}")
else:
    print(f"deep stderr:\n{done.stderr}")

if len(results) == 2:
    check(results[0] == results[1], "PATCH=0 and PATCH=1 give the same calls, regions and "
          "throttle metadata")

if failures:
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1)
print("PASS")
