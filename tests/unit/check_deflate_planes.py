#!/usr/bin/python3
"""check_deflate_planes.py PROBE DEFLATE_PLANES_TEST SCOPE_EXPORT WORKDIR

The chunk encoder's constant byte planes (c/src/format/deflate_planes.c,
issue 31) on real event columns:

1. a recorded run (tests/write_threads/write_threads_probe.c: nested calls
   on two threads, 2 write threads) is finalized by the library, whose
   encoder writes the constant high planes of most chunks itself (such a
   stored chunk differs from libdeflate's own stream of the whole shuffled
   chunk at the pool's level, SPI_POOL_DEFLATE_LEVEL): at least one chunk
   of each of start_deltas, durations and call_ids must be one;
2. every stored chunk, read raw (H5Dread_chunk through h5py), inflates
   with Python's zlib (the Adler-32 checked) and unshuffles to the values
   h5py reads through HDF5's own filters;
3. the calls h5py reads (tests/lib/h5_calls.py) equal the calls our reader
   gives (scope-export csv): ids, parents, threads, starts and ends;
4. every column's values, chunk by chunk, are encoded again by
   DEFLATE_PLANES_TEST and inflated by zlib and libdeflate back to the same
   bytes.
Any of them fails when the encoder writes a wrong stream (a wrong Adler-32
makes HDF5's filter and zlib refuse the chunk)."""
import ctypes
import ctypes.util
import csv
import os
import re
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
import needs  # noqa: E402
import outputs  # noqa: E402

h5py = needs.h5py()
import numpy as np  # noqa: E402
import h5_calls  # noqa: E402

probe, planes_test, export_tool, workdir = sys.argv[1:5]
CALLS = 600000
COLUMNS = ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids")
check = checks.Checks("check_deflate_planes")
outputs.fresh_workdir(workdir)
out = os.path.join(workdir, "run.h5")

env = dict(os.environ, SCOPE_PROFILER_SUMMARY="0", SCOPE_PROFILER_WRITE_THREADS="2")
for key in ("SCOPE_PROFILER_FILE", "SCOPE_PROFILER_MODE", "SCOPE_PROFILER_DISABLE",
            "SCOPE_PROFILER_BUFFER_LIMIT", "SCOPE_PROFILER_QUIET"):
    env.pop(key, None)
run = subprocess.run([probe, out, str(CALLS)], cwd=workdir, env=env, capture_output=True,
                     text=True, timeout=300)
if not check(run.returncode == 0 and "status=0" in run.stdout,
             f"recording failed: {run.stdout[-300:]} {run.stderr[-300:]}"):
    check.finish()


def pool_level():
    """SPI_POOL_DEFLATE_LEVEL, read from the header that defines it."""
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "c", "src",
                          "format", "h5_column_pool.h")
    with open(header) as f:
        found = re.search(r"^#define SPI_POOL_DEFLATE_LEVEL (\d+)$", f.read(), re.M)
    if not found:
        raise SystemExit(f"check_deflate_planes: no SPI_POOL_DEFLATE_LEVEL in {header}")
    return int(found.group(1))


class WholeChunkDeflate:
    """libdeflate's zlib stream of a whole chunk, as the encoder would give
    it without the plane encoder."""

    def __init__(self, level):
        name = ctypes.util.find_library("deflate")
        if not name:
            raise SystemExit("check_deflate_planes: libdeflate not found (libdeflate-dev)")
        self.lib = ctypes.CDLL(name)
        self.lib.libdeflate_alloc_compressor.restype = ctypes.c_void_p
        self.lib.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
        self.lib.libdeflate_zlib_compress.restype = ctypes.c_size_t
        self.lib.libdeflate_zlib_compress.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                      ctypes.c_size_t, ctypes.c_char_p,
                                                      ctypes.c_size_t]
        self.compressor = self.lib.libdeflate_alloc_compressor(level)
        if not self.compressor:
            raise SystemExit(f"check_deflate_planes: libdeflate refuses level {level}")

    def __call__(self, data):
        out = ctypes.create_string_buffer(2 * len(data) + 1024)
        size = self.lib.libdeflate_zlib_compress(self.compressor, data, len(data), out, len(out))
        return out.raw[:size]


whole_chunk_deflate = WholeChunkDeflate(pool_level())
ours = {}
with h5py.File(out, "r") as f:
    ev = f["events"]
    for name in COLUMNS:
        if name not in ev:
            continue
        d = ev[name]
        check(d.compression == "gzip" and d.shuffle, f"{name}: not shuffle + deflate")
        try:
            values = d[()].astype("<i8")
        except OSError as exc:  # HDF5's deflate filter refused a chunk
            check.fail(f"{name}: h5py cannot read it through HDF5's filters: {exc}")
            values = None
        else:
            values.tofile(os.path.join(workdir, f"{name}.bin"))
        chunk = d.chunks[0]
        ours[name] = 0
        for index in range((d.shape[0] + chunk - 1) // chunk):
            mask, raw = d.id.read_direct_chunk((index * chunk,))
            what = f"{name} chunk {index}"
            check(mask == 0, f"{what}: filter mask {mask}")
            try:
                shuffled = np.frombuffer(zlib.decompress(raw), dtype=np.uint8)
            except zlib.error as exc:
                check.fail(f"{what}: zlib refuses the stored chunk: {exc}")
                continue
            ours[name] += raw != whole_chunk_deflate(shuffled.tobytes())
            if values is None:
                continue
            got = shuffled.reshape(8, -1).T.copy().view("<i8").ravel()
            want = values[index * chunk:(index + 1) * chunk]
            check(np.array_equal(got[:len(want)], want),
                  f"{what}: inflated and unshuffled, differs from h5py's values")
for name in ("start_deltas", "durations", "call_ids"):
    check(ours.get(name, 0) > 0, f"{name}: no chunk has its constant planes written by the "
                                 f"plane encoder ({ours})")
print("chunks written with the plane encoder:", ours)

# our reader against h5py's
csv_path = os.path.join(workdir, "calls.csv")
exported = subprocess.run([export_tool, out, "-o", csv_path, "--format", "csv"],
                          capture_output=True, text=True, timeout=300)
if check(exported.returncode == 0, f"scope-export: {exported.stderr[-300:]}"):
    with open(csv_path, newline="") as stream:
        rows = [r for r in csv.reader(stream) if r and r[0] != "rank"]
    theirs = sorted((int(r[3]), int(r[4]) if r[4] else -1, int(r[2]), int(r[5]), int(r[6]))
                    for r in rows)
    reference = sorted((c["id"], -1 if c["parent"] is None else c["parent"], c["thread"],
                        c["start"], c["end"]) for c in h5_calls.read_calls(out))
    check(len(theirs) == len(reference) > 0,
          f"scope-export gave {len(theirs)} calls, h5py {len(reference)}")
    check(theirs == reference, "the calls our reader gives differ from h5py's")

# every chunk of every column encoded again and inflated by zlib and libdeflate
bins = [os.path.join(workdir, f"{name}.bin") for name in ours
        if os.path.exists(os.path.join(workdir, f"{name}.bin"))]
again = subprocess.run([planes_test] + bins, capture_output=True, text=True, timeout=300)
print(again.stdout, again.stderr, end="")
check(again.returncode == 0, "the plane encoder's streams of the recorded columns do not inflate")
check.finish()
