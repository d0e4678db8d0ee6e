"""Damage or extend a copy of a fixture in place, for reader_test.c.

Usage: mutate.py FILE HOW. Each HOW is one malformed (or unusual) input the
reader must handle; keeping them here keeps the C tests free of HDF5 writing
code. Exit 77 (ctest's skip code) when h5py is not available.
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit(77)

path, how = sys.argv[1], sys.argv[2]
with h5py.File(path, "r+") as f:
    idx = f.get("rank_region_index")
    if how == "offset_past_end":
        offsets = idx["event_offsets"][...]
        offsets[0] += 100
        idx["event_offsets"][...] = offsets
    elif how == "overlap":
        offsets = idx["event_offsets"][...]
        counts = idx["event_counts"][...]
        order = np.argsort(offsets, kind="stable")
        # Pull the second row (by offset) one event into the first one.
        first, second = order[0], order[1]
        assert counts[first] > 0
        offsets[second] = offsets[first] + counts[first] - 1
        idx["event_offsets"][...] = offsets
    elif how == "schema4":
        f.attrs["scope_profiler_schema"] = np.int64(4)
    elif how == "schema_str":
        del f.attrs["scope_profiler_schema"]
        f.attrs["scope_profiler_schema"] = "3"
    elif how == "schema_bool":
        del f.attrs["scope_profiler_schema"]
        f.attrs["scope_profiler_schema"] = True
    elif how == "schema_zero":
        f.attrs["scope_profiler_schema"] = np.int64(0)
    elif how == "region_out_of_range":
        ids = idx["region_ids"][...]
        ids[0] = 99
        idx["region_ids"][...] = ids
    elif how == "duplicate_row":
        ids = idx["region_ids"][...]
        ranks = idx["ranks"][...]
        ids[1] = ids[0]
        ranks[1] = ranks[0]
        idx["region_ids"][...] = ids
        idx["ranks"][...] = ranks
    elif how == "drop_tags":
        del idx["tags"]
    elif how == "metadata_kinds":
        m = f.require_group("metadata")
        m.attrs["an_i32"] = np.int32(-7)
        m.attrs["a_u8"] = np.uint8(200)
        m.attrs["a_float"] = 2.5
        m.attrs["a_bool"] = True
        m.attrs["a_list"] = np.array(["a", "b"], dtype=h5py.string_dtype("utf-8"))
        m.attrs["empty_list"] = np.array([], dtype=h5py.string_dtype("utf-8"))
        m.attrs.create("fixed_str", np.bytes_("fixed"), dtype=h5py.string_dtype("utf-8", 5))
    else:
        sys.exit("unknown mutation " + how)
