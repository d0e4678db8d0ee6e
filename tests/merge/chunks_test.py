#!/usr/bin/python3
"""chunks_test.py - scope-merge reads compressed event columns chunk by chunk
(merge/src/merge_chunks.c: H5Dread_chunk, libdeflate, its own unshuffle)
and must write exactly what reading them through HDF5's filters writes.

    chunks_test.py --merge BIN --make-native BIN [--scope-check BIN] CASE

Cases:
  layouts  a C-core file (shuffle + deflate, 64K chunks, as the writer makes
           them) merged with a driver file whose columns cover every layout
           the decoder takes or leaves to HDF5: shuffle + deflate in small
           chunks that reads cross, deflate alone in odd-sized chunks,
           shuffle + deflate + fletcher32 (left to HDF5), contiguous (left
           to HDF5), a short last chunk. The merge runs twice, once with
           SCOPE_PROFILER_MERGE_VALUE_PATH=1 (HDF5 decodes everything), and
           the two outputs must agree in every dataset and attribute.
  damaged  a deflated chunk whose bytes were flipped: both paths refuse the
           input the same way (exit 2, the file named), nothing written.

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import tool_case  # noqa: E402

h5py = needs.h5py()
import h5_calls  # noqa: E402
import h5_compare  # noqa: E402
import h5_schema  # noqa: E402
import numpy as np  # noqa: E402

import package_lanes  # noqa: E402  (the Python package's lane rule, beside this file)

ARGS = None
check = checks.Checks("merge chunks")


def run(cmd, env=None):
    """A run that never inherits SCOPE_PROFILER_MERGE_VALUE_PATH."""
    return tool_case.run(cmd, env=tool_case.environment(
        drop=("SCOPE_PROFILER_MERGE_VALUE_PATH",), **(env or {})))


def merge(inputs, out, value_path):
    env = {"SCOPE_PROFILER_MERGE_VALUE_PATH": "1"} if value_path else {}
    return run([ARGS.merge, *inputs, "-o", out, "--quiet"], env)


def write_driver(native, path):
    """Calls py:a > py:b around every native:outer call (so that the merge
    adopts them), each column in another storage layout."""
    starts, durs = h5_calls.region_calls(native, "native:outer")
    n = len(starts)
    with h5py.File(native, "r") as f:
        start_time = f["metadata"].attrs.get("start_time_ns", None)
    str_t = h5_schema.STR
    regions = ["py:a", "py:b"]
    # py:a and py:b on each outer call's interval (calls back to back leave
    # no room around them): equal intervals nest driver first, row order
    row_starts = [starts, starts]
    row_durs = [durs, durs]
    total = 2 * n
    ids = [np.arange(n, dtype=np.int64) * 2, np.arange(n, dtype=np.int64) * 2 + 1]
    parents = [np.full(n, -1, np.int64), ids[0]]
    deltas, alld, allc, allp = [], [], [], []
    for k in range(2):
        d = np.empty(n, np.int64)
        d[0] = row_starts[k][0]
        d[1:] = np.diff(row_starts[k])
        deltas.append(d)
        alld.append(row_durs[k])
        allc.append(ids[k])
        allp.append(parents[k])
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        m = f.create_group("metadata")
        m.attrs["label"] = "chunks-driver"
        if start_time is not None:
            m.attrs["start_time_ns"] = start_time
        f["region_table/names"] = np.array(regions, dtype=object).astype(str_t)
        ev = f.create_group("events")
        # crossed by every read: 4096-element chunks, shuffle + deflate 6
        ev.create_dataset("start_deltas", data=np.concatenate(deltas), chunks=(4096,),
                          shuffle=True, compression="gzip", compression_opts=6)
        # deflate alone, chunks of an odd size, the last one short
        ev.create_dataset("durations", data=np.concatenate(alld), chunks=(5000,),
                          compression="gzip", compression_opts=1)
        # a checksum too: not a layout the decoder takes (HDF5 reads it)
        ev.create_dataset("call_ids", data=np.concatenate(allc), chunks=(16384,),
                          shuffle=True, compression="gzip", fletcher32=True)
        # contiguous: HDF5 reads it
        ev.create_dataset("parent_ids", data=np.concatenate(allp))
        idx = f.create_group("rank_region_index")
        idx["region_ids"] = np.array([0, 1], np.uint32)
        idx["ranks"] = np.array([0, 0], np.uint32)
        idx["event_offsets"] = np.array([0, n], np.uint64)
        idx["event_counts"] = np.array([n, n], np.uint64)
        idx["source_lines"] = np.full(2, -1, np.int64)
        for col, fill in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                          ("event_metadata", "[]")):
            idx[col] = np.array([fill] * 2, dtype=object).astype(str_t)
        idx["exclusive_totals"] = np.full(2, -1, np.int64)
    return total


def case_layouts():
    native = "native.h5"
    r = run([ARGS.make_native, native, "30000", "2"])
    if not check(r.returncode == 0, f"make_native: {r.stderr}"):
        return
    with h5py.File(native, "r") as f:
        dcpl = f["events/durations"].id.get_create_plist()
        check(dcpl.get_layout() == h5py.h5d.CHUNKED and dcpl.get_nfilters() == 2,
              "the C-core file has chunked, compressed event columns (the decoder's layout)")
    write_driver(native, "driver.h5")
    inputs = ["driver.h5", native]
    fast = merge(inputs, "fast.h5", value_path=False)
    check(fast.returncode == 0, f"merge (chunk decoder) exits 0: {fast.stderr}")
    slow = merge(inputs, "value.h5", value_path=True)
    check(slow.returncode == 0, f"merge (HDF5's filters) exits 0: {slow.stderr}")
    if fast.returncode or slow.returncode:
        return
    problems = h5_compare.differences("fast.h5", "value.h5")
    check(not problems, f"both paths write the same file: {problems[:10]}")
    with h5py.File("fast.h5", "r") as f:
        idx = f["rank_region_index"]
        check(int(idx["event_counts"][:].sum()) == 2 * 30000 + 30000 * 3,
              "every event of both inputs merged")
        # the native outer calls got the innermost driver call as parent
        names = [n.decode() for n in f["region_table/names"][:]]
        rows = {names[idx["region_ids"][r]]: r for r in range(len(idx["region_ids"]))}
        o, n = int(idx["event_offsets"][rows["native:outer"]]), \
            int(idx["event_counts"][rows["native:outer"]])
        po = f["events/parent_ids"][o:o + n]
        ob, nb = int(idx["event_offsets"][rows["py:b"]]), int(idx["event_counts"][rows["py:b"]])
        check(np.array_equal(po, f["events/call_ids"][ob:ob + nb]),
              "native outer calls adopted by py:b")
    problems = package_lanes.check_file("fast.h5")
    check(not problems, f"the package's lane rule agrees: {problems[:5]}")
    if ARGS.scope_check:
        r = run([ARGS.scope_check, "fast.h5"])
        check(r.returncode == 0, f"scope-check accepts the merged file: {r.stdout} {r.stderr}")


def case_damaged():
    native = "native.h5"
    r = run([ARGS.make_native, native, "30000", "2"])
    if not check(r.returncode == 0, f"make_native: {r.stderr}"):
        return
    write_driver(native, "driver.h5")
    # flip bytes in the middle of the second stored chunk of start_deltas
    with h5py.File("driver.h5", "r") as f:
        info = f["events/start_deltas"].id.get_chunk_info(1)
        at = info.byte_offset + info.size // 2
    with open("driver.h5", "r+b") as f:
        f.seek(at)
        b = bytearray(f.read(8))
        f.seek(at)
        f.write(bytes(x ^ 0x5A for x in b))
    outs = {}
    for value_path in (False, True):
        out = "value.h5" if value_path else "fast.h5"
        r = merge(["driver.h5", native], out, value_path)
        outs[value_path] = r
        check(r.returncode == 2, f"damaged chunk refused (value path {value_path}): "
              f"exit {r.returncode} {r.stderr}")
        check("driver.h5" in r.stderr, f"the message names the input: {r.stderr}")
        check(not os.path.exists(out), "nothing written")
    left = [n for n in os.listdir(".") if n.endswith(".tmp")]
    check(not left, f"no temporary left: {left}")


CASES = {"layouts": case_layouts, "damaged": case_damaged}


def main():
    global ARGS
    ARGS = tool_case.parse(CASES, required=("--merge", "--make-native"),
                           optional=("--scope-check",))
    # ctest runs each case in its own directory (work/chunks_<case>): start
    # it empty, so that "no temporary left" means something.
    tool_case.empty_case_dir(f"chunks_{ARGS.case}")
    tool_case.run_case(check, CASES, ARGS.case)


if __name__ == "__main__":
    main()
