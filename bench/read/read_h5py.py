"""The same read in Python: index plus start_deltas/durations, decoded per
row into starts and ends (what the C full read produces). Usage:
read_h5py.py FILE [repeats]"""
import resource
import sys
import time

import h5py
import numpy as np

path = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
best = float("inf")
for _ in range(repeats):
    t0 = time.perf_counter()
    with h5py.File(path, "r") as f:
        offsets = f["rank_region_index/event_offsets"][...]
        counts = f["rank_region_index/event_counts"][...]
        deltas = f["events/start_deltas"][...]
        durations = f["events/durations"][...]
        rows = []
        for off, cnt in zip(offsets, counts):
            starts = np.cumsum(deltas[off:off + cnt])
            rows.append((starts, starts + durations[off:off + cnt]))
    best = min(best, time.perf_counter() - t0)
print(f"{'h5py':<13} {best:10.3f} s  {int(counts.sum()):12d} calls  peak RSS "
      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss:8d} KiB")
