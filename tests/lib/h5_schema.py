"""h5_schema.py: the HDF5 types of docs/FORMAT.md (schema 3) that the
test-data writers write with h5py (hostile/make_hostile.py,
inspect/make_calls.py, mpi_views/synthetic.py): one definition, so the
files they craft agree with the contract and with each other.

Imported after `sys.path.insert(0, <tests/lib>)`; needs h5py and numpy."""
import h5py
import numpy as np

# Names, sources, tags: variable-length UTF-8 strings.
STR = h5py.string_dtype("utf-8")

# rank_region_index/summary_statistics: one compound per row.
STATS = np.dtype([(n, t) for n, t in [
    ("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
    ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
    ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")]])
