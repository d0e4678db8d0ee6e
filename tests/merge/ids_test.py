#!/usr/bin/python3
"""scope-merge's id checks in bounded memory (issue 31; merge/src/merge_ids.c).

    ids_test.py --merge BIN --make-native BIN --check BIN --scope-check BIN CASE

budget    inputs whose ids pass 1 cannot number on the fly (out of start
          order, with gaps, parents on a rank that does not nest) merged with
          SCOPE_PROFILER_MERGE_MEMORY far below their calls: every dataset
          of the result equals the merge with the default budget, the ids are
          each input's offset plus the rank of the stored id, and the result
          passes scope-check and our reader.
refusals  a repeated id, a missing parent and a parent that does not enclose
          its child, each in an input larger than the budget: refused with
          the same message whatever the budget, nothing written.

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import tool_case  # noqa: E402

h5py = needs.h5py()
import h5_schema  # noqa: E402
import numpy as np  # noqa: E402

ARGS = None
check = checks.Checks("merge ids")
# Far below the calls of the inputs (64 KiB holds 1,638 sort records):
# the sort writes many runs and merges them in several rounds. 1 MiB is
# the example of the documentation.
SMALL_BUDGETS = ("64K", "1M")
OUTER = 40000  # outer calls per rank of the shuffled input (one inner each)


def run(cmd, env=None):
    return tool_case.run(cmd, env=tool_case.environment(**(env or {})))


def merge(inputs, out, budget=None):
    if os.path.exists(out):
        os.unlink(out)
    env = {"SCOPE_PROFILER_MERGE_MEMORY": budget} if budget else {}
    if not budget:
        env["SCOPE_PROFILER_MERGE_MEMORY"] = ""
    return run([ARGS.merge, *inputs, "-o", out, "--quiet", "--allow-disjoint"], env)


def write_rows(path, rows, label):
    """rows: (rank, name, starts, durations, call_ids, parent_ids), in file order."""
    names = []
    for r in rows:
        if r[1] not in names:
            names.append(r[1])
    vstr = h5_schema.STR
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["label"] = label
        f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=vstr)
        counts = np.array([len(r[2]) for r in rows], np.uint64)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.uint64)
        deltas = [np.diff(np.asarray(r[2], np.int64), prepend=np.int64(0)) for r in rows]
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([names.index(r[1]) for r in rows], np.uint32)
        idx["ranks"] = np.array([r[0] for r in rows], np.uint32)
        idx["event_offsets"] = offsets
        idx["event_counts"] = counts
        idx["source_lines"] = np.full(len(rows), -1, np.int64)
        for col, value in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                           ("event_metadata", "[]")):
            idx.create_dataset(col, data=np.array([value] * len(rows), dtype=object), dtype=vstr)
        idx["exclusive_totals"] = np.full(len(rows), -1, np.int64)
        ev = f.create_group("events")
        ev["start_deltas"] = np.concatenate(deltas)
        ev["durations"] = np.concatenate([np.asarray(r[3], np.int64) for r in rows])
        ev["call_ids"] = np.concatenate([np.asarray(r[4], np.int64) for r in rows])
        ev["parent_ids"] = np.concatenate([np.asarray(r[5], np.int64) for r in rows])
    return path


def shuffled_rows(seed, defect=None):
    """Per rank, OUTER calls of s:outer, each enclosing one s:inner call.
    Ids are a random permutation spread with gaps (3p + 5 outer, 3p + 6
    inner), so they arrive out of order and are not dense. On rank 1 the
    inner row is stored last-first: the rank does not nest and every
    parent is checked after pass 1 instead of on a lane's stack."""
    rng = np.random.default_rng(seed)
    rows = {}
    for rank in (0, 1):
        k = np.arange(OUTER, dtype=np.int64)
        p = rng.permutation(OUTER).astype(np.int64)
        outer_start = 1000 + 100 * k
        rows[rank] = dict(p=p, outer=[outer_start, np.full(OUTER, 90), 3 * p + 5,
                                      np.full(OUTER, -1)],
                          inner=[outer_start + 10, np.full(OUTER, 20), 3 * p + 6, 3 * p + 5])
    if defect:
        defect(rows)
    out = []
    for rank in (0, 1):
        r = rows[rank]
        out.append((rank, "s:outer", *r["outer"]))
        inner = r["inner"] if rank == 0 else [c[::-1] for c in r["inner"]]
        out.append((rank, "s:inner", *inner))
    return out


def datasets(path):
    """Every dataset's values and every attribute, by path."""
    found = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                found[name] = obj[()]
            found[name + "@attrs"] = {k: obj.attrs[k] for k in obj.attrs}
        f.visititems(visit)
        found["@root"] = {k: f.attrs[k] for k in f.attrs}
    return found


def same(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:  # variable-length strings: compare the values
        return a.tolist() == b.tolist()
    return a.tobytes() == b.tobytes()


def equal_files(a, b, what):
    da, db = datasets(a), datasets(b)
    check(da.keys() == db.keys(), f"{what}: the same objects ({sorted(da.keys() ^ db.keys())})")
    differ = [k for k in da if k in db and not same(da[k], db[k])]
    check(not differ, f"{what}: every dataset and attribute equal (differ: {differ[:5]})")


def case_budget():
    shuffled = write_rows("shuffled.h5", shuffled_rows(1), "shuffled")
    native = "native.h5"
    r = run([ARGS.make_native, native, "20000", "5"])
    check(r.returncode == 0, f"make_native: {r.stderr}")
    inputs = [shuffled, native]
    r = merge(inputs, "default.h5")
    if not check(r.returncode == 0, f"merge with the default budget: {r.stderr}"):
        return
    for budget in SMALL_BUDGETS:
        out = f"budget_{budget}.h5"
        r = merge(inputs, out, budget)
        if check(r.returncode == 0, f"merge in {budget}: {r.stderr}"):
            equal_files("default.h5", out, f"{budget} against the default budget")
    r = run([ARGS.scope_check, "--quiet", "default.h5"])
    check(r.returncode == 0, f"scope-check accepts the merge: {r.stdout} {r.stderr}")
    r = run([ARGS.check, "default.h5", *inputs])
    check(r.returncode == 0, f"our reader agrees with the inputs: {r.stderr}")
    # The renumbering: the driver input comes first (offset 0), and a call's
    # new id is the rank of its stored id among the input's ids on the rank.
    with h5py.File("default.h5", "r") as f, h5py.File(shuffled, "r") as s:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][:]]
        idx, ev = f["rank_region_index"], f["events"]
        sidx, sev = s["rank_region_index"], s["events"]
        for row in range(len(sidx["ranks"])):
            rank, region = int(sidx["ranks"][row]), int(sidx["region_ids"][row])
            o, n = int(sidx["event_offsets"][row]), int(sidx["event_counts"][row])
            stored = sev["call_ids"][o:o + n]
            parents = sev["parent_ids"][o:o + n]
            on_rank = np.sort(np.concatenate([
                sev["call_ids"][int(sidx["event_offsets"][q]):int(sidx["event_offsets"][q]) +
                                int(sidx["event_counts"][q])]
                for q in range(len(sidx["ranks"])) if int(sidx["ranks"][q]) == rank]))
            name = s["region_table/names"][region]
            name = name.decode() if isinstance(name, bytes) else name
            at = [q for q in range(len(idx["ranks"]))
                  if int(idx["ranks"][q]) == rank and names[int(idx["region_ids"][q])] == name]
            if not check(len(at) == 1, f"rank {rank} {name}: one merged row"):
                continue
            mo = int(idx["event_offsets"][at[0]])
            check(np.array_equal(ev["call_ids"][mo:mo + n], np.searchsorted(on_rank, stored)),
                  f"rank {rank} {name}: call ids renumbered by rank")
            want = np.where(parents >= 0, np.searchsorted(on_rank, parents), -1)
            check(np.array_equal(ev["parent_ids"][mo:mo + n], want),
                  f"rank {rank} {name}: parents renumbered by rank")


def case_refusals():
    native = "native.h5"
    r = run([ARGS.make_native, native, "3", "2"])
    check(r.returncode == 0, f"make_native: {r.stderr}")
    a, b = 100, 200  # two calls of a rank whose ids are swapped below

    def repeated(rows):
        # s:inner number a takes the id of number b (its parent keeps a smaller id)
        r0 = rows[0]
        lo, hi = sorted((a, b), key=lambda k: r0["p"][k])
        r0["inner"][2][lo] = r0["inner"][2][hi]
        rows["want"] = (0, f"rank 0: call id {int(r0['inner'][2][hi])} appears twice")

    def missing(rows):
        r1 = rows[1]
        r1["inner"][3][a] = 3 * r1["p"][a] + 4  # no id is 1 modulo 3
        rows["want"] = (1, f"rank 1 region s:inner: parent id {int(r1['inner'][3][a])} "
                           "does not exist on the rank")

    def not_inside(rows):
        r1 = rows[1]
        # the parent of inner a becomes an outer call that ended before it
        # started, with a smaller id than inner a
        earlier = [k for k in range(a) if r1["p"][k] < r1["p"][a]]
        c = earlier[0]
        r1["inner"][3][a] = 3 * r1["p"][c] + 5
        start = int(r1["inner"][0][a])
        rows["want"] = (1, f"rank 1 region s:inner: a call starting at {start} ns is not inside "
                           f"its parent, call id {int(r1['inner'][3][a])}")

    for what, defect in (("repeated id", repeated), ("missing parent", missing),
                         ("parent not enclosing", not_inside)):
        captured = {}

        def apply(rows, defect=defect):
            defect(rows)
            captured["want"] = rows.pop("want")[1]
        path = write_rows(f"bad_{what.replace(' ', '_')}.h5", shuffled_rows(7, apply), "bad")
        want = f"scope-merge: {path}: {captured['want']}; scope-merge copies nothing scope-check rejects"
        for budget in (None, *SMALL_BUDGETS):
            r = merge([path, native], "refused.h5", budget)
            label = f"{what} ({budget or 'default budget'})"
            check(r.returncode == 2, f"{label}: exit {r.returncode} (want 2): {r.stderr.strip()}")
            check(want in r.stderr, f"{label}: message {r.stderr.strip()!r} (want {want!r})")
            check(not os.path.exists("refused.h5"), f"{label}: nothing written")


CASES = {"budget": case_budget, "refusals": case_refusals}


def main():
    global ARGS
    ARGS = tool_case.parse(CASES, required=("--merge", "--make-native", "--check",
                                            "--scope-check"))
    tool_case.empty_case_dir(f"ids_{ARGS.case}")
    CASES[ARGS.case]()
    leftovers = [f for f in os.listdir(".") if f.startswith("tmp") or f.endswith(".tmp")]
    check(not leftovers, f"no temporary files left behind: {leftovers}")
    check.finish()


if __name__ == "__main__":
    main()
