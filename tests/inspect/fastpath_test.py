"""scope-inspect's per-call shortcuts against the file itself (issue 31).

The summary walk (c/src/analysis/call_paths.c, call_nesting.c,
call_merge.c) takes shortcuts on every call: a path's child and a path's
(path, thread) row come from small memos indexed by region and by thread
modulo 4, a call's parent from the last call of its lane (8 lanes
remembered) and that call's ancestors, closed calls stay in the open-call
table until a sweep, and the merge keeps its heads' keys in the heap. When a
memo slot is shared (regions 'compute' and 'exchange' under 'step', threads
t and t + 4, lanes l and l + 8) or a call's parent is not on those chains,
the general lookup runs instead. The file made here has 10 threads per rank
so that every shortcut both hits and misses on every iteration, and its
numbers are checked, per (rank, thread, path) and per region, against what
numpy computes from the file's own columns (ids, parents, threads,
durations), not against another run of the tool.

Usage: fastpath_test.py SCOPE_INSPECT WORKDIR [RANKS THREADS ITERATIONS]
Exit 0 pass, 1 fail, 77 skip (h5py/numpy missing).
"""
import json
import os
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as exc:  # pragma: no cover
    print(f"skip: {exc}")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import Checks  # noqa: E402

tool, work = sys.argv[1:3]
ranks, threads, iterations = (map(int, sys.argv[3:6]) if len(sys.argv) > 5 else (2, 10, 2000))
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(work, "fastpath.h5")
subprocess.run([sys.executable, os.path.join(here, "make_calls.py"), path, str(ranks),
                str(threads), str(iterations)], capture_output=True, text=True, check=True)
check = Checks("inspect.fastpath")

# What the file holds, per (rank, thread, region): calls, total ns, and own
# ns (duration minus the direct children on the same thread). In this file
# each region has one collapsed path, so a region names its path.
with h5py.File(path, "r") as f:
    ev = {k: f["events"][k][...] for k in ("start_deltas", "durations", "call_ids",
                                           "parent_ids", "thread_ids")}
    idx = f["rank_region_index"]
    names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][...]]
    rows = list(zip(idx["ranks"][...], idx["region_ids"][...], idx["event_offsets"][...],
                    idx["event_counts"][...]))
truth = {}   # (rank, thread, region name) -> [calls, total, own]
regions = {}  # region name -> [calls, own]
for rank in sorted({int(r[0]) for r in rows}):
    mine = [r for r in rows if int(r[0]) == rank]
    sel = np.concatenate([np.arange(int(o), int(o) + int(n)) for _, _, o, n in mine])
    region = np.concatenate([np.full(int(n), int(g)) for _, g, _, n in mine])
    ids, parents = ev["call_ids"][sel], ev["parent_ids"][sel]
    thread, dur = ev["thread_ids"][sel], ev["durations"][sel]
    pos = np.full(ids.max() + 1, -1)
    pos[ids] = np.arange(len(ids))
    own = dur.copy()
    has = parents >= 0
    up = pos[parents[has]]
    same = thread[has] == thread[up]
    np.subtract.at(own, up[same], dur[has][same])
    for t in np.unique(thread):
        for g in np.unique(region):
            m = (thread == t) & (region == g)
            if m.any():
                truth[(rank, int(t), names[g])] = [int(m.sum()), int(dur[m].sum()),
                                                   int(own[m].sum())]
    for g in np.unique(region):
        m = region == g
        r = regions.setdefault(names[g], [0, 0])
        r[0] += int(m.sum())
        r[1] += int(own[m].sum())

env = dict(os.environ, SCOPE_PROFILER_NO_ISOLATION="1")
proc = subprocess.run([tool, "--json", "--threads", path], capture_output=True, text=True,
                      env=env)
check(proc.returncode == 0, f"exit status {proc.returncode} ({proc.stderr.strip()})")
doc = json.loads(proc.stdout) if proc.returncode == 0 else {"threads": [], "regions": []}


def ns(seconds):
    return int(round(seconds * 1e9))


seen = set()
for entry in doc.get("threads", []):
    for row in entry["rows"]:
        key = (entry["rank"], entry["index"], row["path"][-1])
        seen.add(key)
        want = truth.get(key)
        if want is None:
            check.fail(f"thread row {key} is not in the file")
            continue
        got = [row["num_calls"], ns(row["total_duration"]), ns(row["own_duration"])]
        check(got == want, f"rank {key[0]} thread {key[1]} path {'/'.join(row['path'])}: "
              f"calls, total ns, own ns {got}, file {want}")
missing = sorted(set(truth) - seen)
check(not missing, f"(rank, thread, region) the file has and the per-thread view does not: "
      f"{missing[:5]}")
for region in doc.get("regions", []):
    want = regions.get(region["name"])
    got = [region["num_calls"], ns(region["exclusive_duration"])]
    check(got == want, f"region {region['name']}: calls, exclusive ns {got}, file {want}")
check.finish()
