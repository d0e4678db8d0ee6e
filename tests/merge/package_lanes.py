#!/usr/bin/python3
"""package_lanes.py - the Python package's call tree, rebuilt the way the
package rebuilds it, as an oracle for scope-merge's output (issue 28).

    package_lanes.py FILE...      exit 0: every file agrees, 1: a mismatch

The package builds its summary tree and per-call exclusive times from time
containment within a lane, never from `parent_ids`:

  lane = task id when events/task_ids holds one >= 0,
         else -2 - thread id when its thread id is >= 0,
         else -1 ("thread unknown"); no thread_ids column: every call -1.

Per rank and lane, calls are sorted by start, then longest first; a call
nests in the innermost open call of its lane that encloses it (contract
7.6: times doubled, zero-length calls lengthened by one tick, an improper
overlap is a NestingError). Calls of different lanes never nest.

For every rank this checks, exactly:
  - each stored exclusive total (>= 0) equals the sum over the row's calls
    of duration minus the durations of its containment children;
  - each stored parent id on the same lane as its call is the call's
    containment parent (a parent on another lane, such as an OpenMP
    worker's fork parent, is not compared: the package never nests across
    lanes), and a numbered call whose containment parent is numbered has
    that parent stored.
Usable as a module: check_file(path) returns a list of problems.
"""
import sys

import h5py
import numpy as np


def _calls_by_rank(f):
    """{rank: dict of per-call arrays (row, start, end, call, parent, lane)}."""
    idx, ev = f["rank_region_index"], f["events"]
    deltas = "start_deltas" in ev
    first = ev["start_deltas" if deltas else "start_times"][:].astype(np.int64)
    second = ev["durations" if deltas else "end_times"][:].astype(np.int64)
    n_all = len(first)
    col = {k: ev[k][:].astype(np.int64) if k in ev else np.full(n_all, -1, np.int64)
           for k in ("call_ids", "parent_ids", "thread_ids", "task_ids")}
    offsets, counts = idx["event_offsets"][:], idx["event_counts"][:]
    ranks = idx["ranks"][:]
    out = {}
    for r in range(len(offsets)):
        o, n = int(offsets[r]), int(counts[r])
        if n == 0:
            continue
        s = first[o:o + n]
        start = np.cumsum(s) if deltas else s
        end = start + second[o:o + n] if deltas else second[o:o + n]
        task, thread = col["task_ids"][o:o + n], col["thread_ids"][o:o + n]
        lane = np.where(task >= 0, task, np.where(thread >= 0, -2 - thread, -1))
        part = dict(row=np.full(n, r), start=start, end=end, call=col["call_ids"][o:o + n],
                    parent=col["parent_ids"][o:o + n], lane=lane)
        out.setdefault(int(ranks[r]), []).append(part)
    return {rank: {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
            for rank, parts in out.items()}


def containment(calls):
    """Per call: the index of its containment parent (-1: a root of its
    lane), or raise ValueError on an improper overlap."""
    n = len(calls["start"])
    parent = np.full(n, -1, np.int64)
    for lane in np.unique(calls["lane"]):
        members = np.nonzero(calls["lane"] == lane)[0]
        s2 = 2 * calls["start"][members]
        e2 = np.where(calls["end"][members] == calls["start"][members], s2 + 1,
                      2 * calls["end"][members])
        order = sorted(range(len(members)), key=lambda k: (s2[k], -e2[k]))
        stack = []
        for k in order:
            while stack and e2[stack[-1]] <= s2[k]:
                stack.pop()
            if stack:
                if e2[k] > e2[stack[-1]]:
                    raise ValueError(f"lane {lane}: call at {calls['start'][members[k]]} "
                                     f"overlaps the call at "
                                     f"{calls['start'][members[stack[-1]]]} improperly")
                parent[members[k]] = members[stack[-1]]
            stack.append(k)
    return parent


def check_file(path):
    problems = []
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in f["region_table/names"][:]]
        idx = f["rank_region_index"]
        regions = idx["region_ids"][:]
        excl_stored = idx["exclusive_totals"][:] if "exclusive_totals" in idx else None
        has_parents = "parent_ids" in f["events"]
        for rank, calls in sorted(_calls_by_rank(f).items()):
            try:
                parent = containment(calls)
            except ValueError as e:
                problems.append(f"{path}: rank {rank}: not nested ({e})")
                continue
            dur = calls["end"] - calls["start"]
            child = np.zeros(len(dur), np.int64)
            np.add.at(child, parent[parent >= 0], dur[parent >= 0])
            own = dur - child
            if excl_stored is not None:
                for r in np.unique(calls["row"]):
                    stored = int(excl_stored[r])
                    want = int(own[calls["row"] == r].sum())
                    if stored >= 0 and stored != want:
                        problems.append(f"{path}: rank {rank} region {names[regions[r]]}: "
                                        f"stored exclusive {stored} ns, containment per lane "
                                        f"gives {want} ns")
            if not has_parents:
                continue
            lane_of_id = {int(c): int(l) for c, l in zip(calls["call"], calls["lane"]) if c >= 0}
            for k in np.nonzero(calls["call"] >= 0)[0]:
                stored = int(calls["parent"][k])
                p = int(parent[k])
                want = int(calls["call"][p]) if p >= 0 else -1
                if stored >= 0 and lane_of_id.get(stored) != int(calls["lane"][k]):
                    continue  # a parent on another lane: the package ignores it
                if stored != want:
                    problems.append(f"{path}: rank {rank} region "
                                    f"{names[regions[calls['row'][k]]]}: call "
                                    f"{int(calls['call'][k])} has stored parent {stored}, "
                                    f"containment in lane {int(calls['lane'][k])} gives {want}")
                    if len(problems) > 20:
                        return problems
    return problems


def main(argv):
    bad = 0
    for path in argv[1:]:
        problems = check_file(path)
        for p in problems:
            print(p)
        bad += bool(problems)
        if not problems:
            print(f"{path}: lanes agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
