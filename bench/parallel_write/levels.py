#!/usr/bin/python3
"""Bytes and CPU of zlib levels 1-6 against libdeflate level 2 on the same chunks.

    levels.py FILE.h5 [FILE.h5 ...]

Why: the streaming writer deflates event chunks with libdeflate level 2
(c/src/format/h5_column_pool.c); the collective writer cannot (HDF5 1.10
runs its own zlib filter in parallel), so h5_parallel_writer.c picks the
zlib level (PARALLEL_DEFLATE_LEVEL) from this comparison. Every event
column of every FILE is cut into the writers' chunks (65,536 int64, the last
padded with zeros), shuffled as HDF5's shuffle filter does, then compressed
by each coder; Python's zlib is the zlib HDF5 links (level 1 reproduces the
collective writer's stored chunks byte for byte). Prints total bytes and the
best of three CPU times (time.process_time) per coder. Needs h5py and
Debian's libdeflate0 (loaded through ctypes).
"""
import ctypes
import sys
import time
import zlib

import h5py
import numpy as np

CHUNK = 65536

deflate = ctypes.CDLL("libdeflate.so.0")
deflate.libdeflate_alloc_compressor.restype = ctypes.c_void_p
deflate.libdeflate_alloc_compressor.argtypes = [ctypes.c_int]
deflate.libdeflate_zlib_compress.restype = ctypes.c_size_t
deflate.libdeflate_zlib_compress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                             ctypes.c_void_p, ctypes.c_size_t]
compressor = deflate.libdeflate_alloc_compressor(2)
out = ctypes.create_string_buffer(2 * CHUNK * 8)


def shuffled_chunks(path):
    with h5py.File(path) as f:
        for column in f["events"].values():
            values = column[()]
            for i in range(0, len(values), CHUNK):
                chunk = values[i:i + CHUNK]
                if len(chunk) < CHUNK:
                    chunk = np.concatenate([chunk, np.zeros(CHUNK - len(chunk), np.int64)])
                yield chunk.astype("<i8").view(np.uint8).reshape(-1, 8).T.copy().tobytes()


chunks = [c for path in sys.argv[1:] for c in shuffled_chunks(path)]


def measure(coder):
    best = None
    for _ in range(3):
        start = time.process_time()
        stored = sum(coder(c) for c in chunks)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    return stored, best


reference, reference_cpu = measure(
    lambda c: deflate.libdeflate_zlib_compress(compressor, c, len(c), out, len(out)))
print(f"{len(sys.argv) - 1} files, {len(chunks)} chunks, {sum(len(c) for c in chunks)} raw bytes")
print(f"libdeflate 2: {reference} bytes, {reference_cpu:.3f} s CPU (best of 3)")
for level in range(1, 7):
    stored, cpu = measure(lambda c: len(zlib.compress(c, level)))
    print(f"zlib {level}: {stored} bytes ({stored / reference:.3f}x libdeflate 2), "
          f"{cpu:.3f} s CPU ({cpu / reference_cpu:.2f}x)")
