#!/usr/bin/python3
"""chunk_stream_test.py - the reader's compressed event columns decoded by
helper threads (c/src/format/h5_chunk_stream.c, issue 31) give exactly what
HDF5's own filters give (SCOPE_PROFILER_READ_VALUE_PATH=1), read full and on
demand, with 0, 1 and 4 helper threads, and a chunk the stream must not take
is read (or refused) exactly as HDF5 reads it.

    chunk_stream_test.py --dump BIN --data DIR CASE

Cases:
  layouts  a file of tests/inspect/make_calls.py rewritten in every layout
           the stream takes or leaves to HDF5: shuffle + deflate in 1,000-
           element chunks (reads cross them; the last one is short),
           deflate alone in 777-element chunks, the writers' 64K chunks,
           shuffle + deflate + fletcher32 (left to HDF5), and one chunk
           stored with deflate skipped (filter mask != 0: left to HDF5);
           plus the gzip fixture of tests/data. Every call of every row
           must hash the same on every path, and the counts must be h5py's.
  damaged  a chunk whose deflate stream was flipped, and one stored larger
           than deflate's bound: every path prints the same error (the
           same status and message, naming the file).

Exit 0 pass, 1 fail, 77 skip (no h5py/numpy).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402

try:
    import h5py
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    print("h5py/numpy not available", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_CALLS = os.path.join(HERE, "..", "inspect", "make_calls.py")
COLUMNS = ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids")
# (label, environment): the value path is the reference
PATHS = [("hdf5", {"SCOPE_PROFILER_READ_VALUE_PATH": "1"}),
         ("threads0", {"SCOPE_PROFILER_READ_THREADS": "0"}),
         ("threads1", {"SCOPE_PROFILER_READ_THREADS": "1"}),
         ("threads4", {"SCOPE_PROFILER_READ_THREADS": "4"})]
check = checks.Checks("chunk stream")




def dump(binary, path, env):
    full = {k: v for k, v in os.environ.items()
            if k not in ("SCOPE_PROFILER_READ_VALUE_PATH", "SCOPE_PROFILER_READ_THREADS")}
    full.update(env)
    out = subprocess.run([binary, path], capture_output=True, text=True, env=full, timeout=300)
    check(out.returncode == 0, f"{path} {env}: exit {out.returncode}: {out.stderr[:300]}")
    return out.stdout


def compare_paths(binary, path, expect_error):
    outputs = {label: dump(binary, path, env) for label, env in PATHS}
    reference = outputs["hdf5"]
    has_error = "error" in reference
    check(has_error == expect_error,
          f"{os.path.basename(path)}: reference {'has' if has_error else 'has no'} error:\n"
          f"{reference[:600]}")
    for label, text in outputs.items():
        if text != reference:
            a, b = reference.splitlines(), text.splitlines()
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            check(False, f"{os.path.basename(path)}: {label} differs from HDF5's filters at line "
                  f"{first}: {a[first] if first < len(a) else '<end>'} vs "
                  f"{b[first] if first < len(b) else '<end>'}")
    return reference


def make_base(path):
    subprocess.run([sys.executable, MAKE_CALLS, path, "2", "2", "5000"], check=True,
                   stdout=subprocess.DEVNULL)


def rewrite(src, dst, **layout):
    """dst: src with every event column stored in `layout` (h5py keywords)."""
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        for key in f:
            if key != "events":
                f.copy(key, g)
        for k, v in f.attrs.items():
            g.attrs[k] = v
        ev = g.create_group("events")
        for name in f["events"]:
            data = f["events"][name][...]
            ev.create_dataset(name, data=data, dtype=np.int64, **layout)


def shuffle_bytes(values):
    """HDF5's shuffle of int64 values: byte k of element i at k * n + i."""
    raw = np.ascontiguousarray(values, dtype="<i8").view(np.uint8).reshape(-1, 8)
    return raw.T.copy().tobytes()


def stored_chunk(path, column, index):
    with h5py.File(path, "r") as f:
        info = f["events"][column].id.get_chunk_info(index)
        return info.byte_offset, info.size


def row_counts(text, label):
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if line.startswith(label + " row") and parts[3] == "durations:":
            total += int(parts[4])
    return total


def case_layouts(args):
    base = os.path.abspath("base.h5")
    make_base(base)
    with h5py.File(base, "r") as f:
        calls = f["events"]["durations"].shape[0]
    files = {
        "shuffle_1000.h5": dict(chunks=(1000,), compression="gzip", compression_opts=4,
                                shuffle=True),
        "deflate_777.h5": dict(chunks=(777,), compression="gzip", compression_opts=1),
        "writer_64k.h5": dict(chunks=(1 << 16,), compression="gzip", compression_opts=1,
                              shuffle=True),
        "fletcher.h5": dict(chunks=(1000,), compression="gzip", shuffle=True, fletcher32=True),
    }
    for name, layout in files.items():
        rewrite(base, name, **layout)
    check(calls % 1000 != 0 and calls % 777 != 0, f"{calls} calls: no short last chunk")
    # One chunk of durations stored shuffled but not deflated: filter mask
    # bit 1 (deflate, the second filter) set. HDF5 reads it; the stream
    # must leave it to HDF5.
    rewrite(base, "masked.h5", chunks=(1000,), compression="gzip", shuffle=True)
    with h5py.File("masked.h5", "r+") as f:
        values = f["events"]["durations"][3000:4000]
        f["events"]["durations"].id.write_direct_chunk((3000,), shuffle_bytes(values),
                                                        filter_mask=0b10)
    with h5py.File("masked.h5", "r") as f:  # reopened: not from h5py's chunk cache
        check(np.array_equal(f["events"]["durations"][3000:4000], values),
              "masked chunk does not read back in h5py")
    files["masked.h5"] = None
    paths = [os.path.abspath(n) for n in files] + [os.path.join(args.data, "driver", "gzip.h5")]
    for path in paths:
        reference = compare_paths(args.dump, path, expect_error=False)
        if os.path.basename(path) != "gzip.h5":
            for label in ("full/65536", "full/1000", "demand/65536", "demand/1000"):
                check(row_counts(reference, label) == calls,
                      f"{os.path.basename(path)} {label}: {row_counts(reference, label)} calls "
                      f"read, the file holds {calls}")


def case_damaged(args):
    base = os.path.abspath("base.h5")
    make_base(base)
    # A flipped deflate stream in a middle chunk of durations.
    rewrite(base, "flipped.h5", chunks=(1000,), compression="gzip", shuffle=True)
    offset, size = stored_chunk("flipped.h5", "durations", 7)
    with open("flipped.h5", "r+b") as f:
        f.seek(offset + size // 2)
        byte = f.read(8)
        f.seek(offset + size // 2)
        f.write(bytes(b ^ 0x5A for b in byte))
    # A chunk stored larger than deflate's bound for 1,000 int64 (its
    # size must not size a buffer, and HDF5 decides about it).
    rewrite(base, "oversized.h5", chunks=(1000,), compression="gzip", shuffle=True)
    with h5py.File("oversized.h5", "r+") as f:
        d = f["events"]["call_ids"]
        d.id.write_direct_chunk((5000,), bytes(range(256)) * 64, filter_mask=0)
    for name in ("flipped.h5", "oversized.h5"):
        out = compare_paths(args.dump, os.path.abspath(name), expect_error=True)
        check(name in out, f"{name}: the error does not name the file:\n{out[:400]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dump", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("case", choices=["layouts", "damaged"])
    args = parser.parse_args()
    {"layouts": case_layouts, "damaged": case_damaged}[args.case](args)
    check.finish()


if __name__ == "__main__":
    main()
