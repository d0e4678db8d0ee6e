#!/usr/bin/python3
"""chunk_copy_test.py - scope-merge copies an input's stored chunk into the
output without decoding it (merge/src/merge_write.c, H5Dread_chunk ->
H5Dwrite_chunk through h5_event_chunks.c) where the chunk lines up with an
output chunk and its column does not change; everything else is decoded
and encoded as before. Either way the merged file must hold exactly what a
merge that decodes everything writes (SCOPE_PROFILER_MERGE_VALUE_PATH=1).

    chunk_copy_test.py --merge BIN --make-native BIN [--scope-check BIN] CASE

Inputs: a C-core file (native:outer > 3 x native:inner) and a driver file
written here with h5py (py:a > py:b > py:c > py:d on every outer call's
interval, so the native outer calls are adopted by py:d: their parents
change), the driver first (its ids keep their values, the native ones move
up by the driver's count).

Cases:
  aligned     both inputs hold whole 64K chunks (131,072 events each): every
              column of the driver's chunks is copied, and of the native
              file the start deltas and durations (its ids are renumbered);
              the output's stored chunk bytes prove which were copied.
  misaligned  30,000 outer calls (120,000 events an input): only the
              driver's first chunk lines up; the native file starts in the
              middle of an output chunk and nothing of it is copied. Then
              a native row that starts an output chunk but not one of its
              input's (two driver levels of 81,920 calls, two inner calls
              an outer one), the driver's
              columns in 32K chunks, and with deflate alone (no shuffle):
              nothing of them copied.

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import needs  # noqa: E402
from checks import Checks  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402  (needs.h5py() checked it is there)
import h5_calls  # noqa: E402
import h5_compare  # noqa: E402
from h5_schema import STATS, STR  # noqa: E402

CHUNK = 65536
COLUMNS = ("start_deltas", "durations", "call_ids", "parent_ids")
ARGS = None
check = Checks("chunk_copy_test")


def run(cmd, env=None):
    full = dict(os.environ)
    full.pop("SCOPE_PROFILER_MERGE_VALUE_PATH", None)
    full.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=full)


def merge(inputs, out, value_path):
    env = {"SCOPE_PROFILER_MERGE_VALUE_PATH": "1"} if value_path else {}
    return run([ARGS.merge, *inputs, "-o", out, "--quiet"], env)


def make_native(path, outer, inner=3):
    r = run([ARGS.make_native, path, str(outer), str(inner)])
    return check(r.returncode == 0, f"make_native {outer}: {r.stderr}")


def write_driver(native, path, chunk=CHUNK, shuffle=True, levels=4):
    """`levels` driver regions nested on the interval of every native outer
    call: levels x outer events, ids levels x k + level, parents the level
    above."""
    starts, durs = h5_calls.region_calls(native, "native:outer")
    n = len(starts)
    regions = ["py:a", "py:b", "py:c", "py:d"][:levels]
    ids = np.arange(n, dtype=np.int64) * levels
    deltas = np.empty(n, np.int64)
    deltas[0] = starts[0]
    deltas[1:] = np.diff(starts)
    values = {
        "start_deltas": [deltas] * levels,
        "durations": [durs] * levels,
        "call_ids": [ids + k for k in range(levels)],
        "parent_ids": [ids + k - 1 if k else np.full(n, -1, np.int64) for k in range(levels)],
    }
    stats = np.zeros(levels, STATS)
    for k in range(levels):
        stats[k] = (durs.sum(), durs.min(), durs.max(), durs[0], durs[-1], starts.min(),
                    (starts + durs).max(), 0, 0, durs.mean(), durs.var() * n)
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        f.create_group("metadata").attrs["label"] = "chunk-copy-driver"
        f["region_table/names"] = np.array(regions, dtype=object).astype(STR)
        ev = f.create_group("events")
        for name in COLUMNS:
            ev.create_dataset(name, data=np.concatenate(values[name]),
                              chunks=(min(chunk, levels * n),),
                              shuffle=shuffle, compression="gzip", compression_opts=4)
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.arange(levels, dtype=np.uint32)
        idx["ranks"] = np.zeros(levels, np.uint32)
        idx["event_offsets"] = np.arange(levels, dtype=np.uint64) * n
        idx["event_counts"] = np.full(levels, n, np.uint64)
        idx["source_lines"] = np.full(levels, -1, np.int64)
        idx["exclusive_totals"] = np.full(levels, -1, np.int64)
        for col, fill in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                          ("event_metadata", "[]")):
            idx[col] = np.array([fill] * levels, dtype=object).astype(STR)
        idx["summary_statistics"] = stats
    return levels * n


def stored(path, column, index):
    """Chunk `index` of events/<column> as stored (filter mask, bytes)."""
    with h5py.File(path, "r") as f:
        return f["events/" + column].id.read_direct_chunk((index * CHUNK,))


def merge_both(inputs):
    """The merge with the chunk copy and the one that decodes everything:
    same file, readable by h5py; the copy's path, or None."""
    fast = merge(inputs, "copied.h5", value_path=False)
    slow = merge(inputs, "value.h5", value_path=True)
    ok = check(fast.returncode == 0, f"merge with chunk copy exits 0: {fast.stderr}")
    ok = check(slow.returncode == 0, f"value-path merge exits 0: {slow.stderr}") and ok
    if not ok:
        return None
    found = h5_compare.differences("copied.h5", "value.h5")
    check(not found, f"chunk copy and value path write the same values: {found[:10]}")
    if ARGS.scope_check:
        r = run([ARGS.scope_check, "copied.h5"])
        check(r.returncode == 0, f"scope-check accepts the merged file: {r.stdout} {r.stderr}")
    return "copied.h5"


def case_aligned():
    if not make_native("native.h5", 2 * CHUNK // 4):
        return
    events = write_driver("native.h5", "driver.h5")
    check(events == 2 * CHUNK, "the driver holds two whole chunks")
    out = merge_both(["driver.h5", "native.h5"])
    if not out:
        return
    with h5py.File(out, "r") as f:
        check(f["events/call_ids"].shape == (4 * CHUNK,), "every event merged")
        check(f["events/durations"].chunks == (CHUNK,) and f["events/durations"].shuffle,
              "the output keeps the writer's layout (64K chunks, shuffle + deflate)")
    # The driver's chunks, every column, are the output's first two, byte
    # for byte: copied, not encoded again (the pool encodes with libdeflate
    # level 2, the driver was written by zlib level 4).
    for column in COLUMNS:
        for k in range(2):
            check(stored(out, column, k) == stored("driver.h5", column, k),
                  f"driver chunk {k} of {column} copied as stored")
    # The native file starts at output chunk 2: its unchanged columns are
    # copied; its renumbered ids cannot be.
    for k in range(2):
        for column in ("start_deltas", "durations"):
            check(stored(out, column, 2 + k) == stored("native.h5", column, k),
                  f"native chunk {k} of {column} copied as stored")
        check(stored(out, "call_ids", 2 + k) != stored("native.h5", "call_ids", k),
              f"native chunk {k} of call_ids renumbered, not copied")
    with h5py.File(out, "r") as f, h5py.File("native.h5", "r") as n:
        check(np.array_equal(f["events/call_ids"][2 * CHUNK:],
                             n["events/call_ids"][:] + 2 * CHUNK),
              "native call ids moved up by the driver's count")


def case_misaligned():
    if not make_native("native.h5", 30000):
        return
    write_driver("native.h5", "driver.h5")
    out = merge_both(["driver.h5", "native.h5"])
    if out:
        for column in COLUMNS:
            check(stored(out, column, 0) == stored("driver.h5", column, 0),
                  f"the driver's one whole chunk of {column} copied as stored")
        with h5py.File(out, "r") as f, h5py.File("native.h5", "r") as n:
            chunks = f["events/durations"].shape[0] // CHUNK
            natives = {stored("native.h5", "durations", k)[1]
                       for k in range(n["events/durations"].shape[0] // CHUNK)}
            check(all(stored(out, "durations", k)[1] not in natives for k in range(chunks)),
                  "no native chunk copied (none lines up)")
    # A row that starts an output chunk but lies mid-chunk in its input:
    # 81,920 native outer calls with two inner calls each (the inner row
    # first, then the outer row at file position 163,840, mid-chunk) behind
    # two driver levels of 81,920 calls, so the outer row starts at output
    # position 327,680 (chunk 5). Not copied: no input chunk holds its events.
    if make_native("native2.h5", 5 * CHUNK // 4, 2):
        write_driver("native2.h5", "driver2.h5", levels=2)
        out = merge_both(["driver2.h5", "native2.h5"])
        if out:
            check(all(stored(out, "durations", 5) != stored("native2.h5", "durations", k)
                      for k in range(3)),
                  "a row starting an output chunk mid-chunk in its input: not copied")
    # Layouts that are not the output's: decoded and encoded again.
    for label, chunk, shuffle in (("32K chunks", CHUNK // 2, True),
                                  ("deflate alone", CHUNK, False)):
        write_driver("native.h5", "driver.h5", chunk=chunk, shuffle=shuffle)
        out = merge_both(["driver.h5", "native.h5"])
        if out:
            check(stored(out, "durations", 0) != stored("driver.h5", "durations", 0),
                  f"driver in {label}: its chunk not copied")


CASES = {"aligned": case_aligned, "misaligned": case_misaligned}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--merge", required=True)
    ap.add_argument("--make-native", required=True)
    ap.add_argument("--scope-check", default=None)
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    # ctest runs each case in its own directory (work/chunk_copy_<case>):
    # start it empty.
    if os.path.basename(os.getcwd()) == f"chunk_copy_{ARGS.case}":
        for name in os.listdir("."):
            if name.endswith(".h5") or name.endswith(".tmp"):
                os.unlink(name)
    CASES[ARGS.case]()
    check.finish()


if __name__ == "__main__":
    main()
