#!/usr/bin/env python3
"""profile_check.py - check that a profile written by a test program is a
readable schema-3 file holding the expected regions.

Used as a module by package_test.py and as a command by the C++ binding
tests (tests/cxx):

    profile_check.py [--run] FILE NAME=COUNT... [-- COMMAND...]

NAME=COUNT expects exactly COUNT recorded calls of region NAME (summed over
the rows of /rank_region_index); NAME=+ expects at least one; NAME=0 expects
the name to be absent or never called. With `-- COMMAND...` the command is
run first (its exit status must be 0) and FILE is checked after.

Exit codes follow ctest: 0 pass, 1 fail, 77 skip (h5py not importable, so
the file cannot be read back).
"""
import subprocess
import sys

SKIP = 77


class CheckError(Exception):
    pass


def read_call_counts(path):
    """Return {region name: total calls} of a schema-3 profile.

    Raises CheckError when the file is not a schema-3 profile, and
    ImportError when h5py is missing."""
    import h5py  # imported here so callers can turn ImportError into a skip

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise CheckError(f"{path}: cannot open as HDF5: {e}")
    with f:
        schema = f.attrs.get("scope_profiler_schema")
        if schema is None or int(schema) != 3:
            raise CheckError(f"{path}: scope_profiler_schema is {schema!r}, expected 3")
        if "region_table/names" not in f:
            raise CheckError(f"{path}: no /region_table/names")
        names = [n for n in f["region_table/names"].asstr()[()]]
        counts = {n: 0 for n in names}
        if "rank_region_index" in f:
            ids = f["rank_region_index/region_ids"][()]
            calls = f["rank_region_index/event_counts"][()]
            if len(ids) != len(calls):
                raise CheckError(f"{path}: region_ids and event_counts differ in length")
            for rid, n in zip(ids, calls):
                if rid >= len(names):
                    raise CheckError(f"{path}: region id {rid} outside the region table")
                counts[names[rid]] += int(n)
        return counts


def read_rank_rows(path):
    """Return ({(rank, region name): calls}, {metadata attribute: value}) of
    a schema-3 profile: the per-rank view an MPI job's one file must give.

    Raises CheckError when the file is not a schema-3 profile or a
    (rank, region) pair has two rows, and ImportError when h5py is
    missing."""
    import h5py

    read_call_counts(path)  # the schema and index checks
    with h5py.File(path, "r") as f:
        names = [n for n in f["region_table/names"].asstr()[()]]
        rows = {}
        if "rank_region_index" in f:
            idx = f["rank_region_index"]
            if "ranks" not in idx:
                raise CheckError(f"{path}: no /rank_region_index/ranks")
            for rank, rid, n in zip(idx["ranks"][()], idx["region_ids"][()],
                                    idx["event_counts"][()]):
                key = (int(rank), names[rid])
                if key in rows:
                    raise CheckError(f"{path}: two rows for rank {key[0]}, region {key[1]!r}")
                rows[key] = int(n)
        meta = {}
        if "metadata" in f:
            for key, value in f["metadata"].attrs.items():
                meta[key] = value.item() if hasattr(value, "item") else value
        return rows, meta


def check(path, expected):
    """expected: {name: int | '+'}. Returns a list of failure messages."""
    counts = read_call_counts(path)
    failures = []
    for name, want in expected.items():
        got = counts.get(name)
        if want == "+":
            if not got:
                failures.append(f"region {name!r}: expected calls, got {got!r} "
                                f"(regions in file: {sorted(counts)})")
        elif want == 0:
            if got:
                failures.append(f"region {name!r}: expected no calls, got {got}")
        elif got != want:
            failures.append(f"region {name!r}: expected {want} calls, got {got!r} "
                            f"(regions in file: {sorted(counts)})")
    return failures


def parse_expectations(items):
    expected = {}
    for item in items:
        name, sep, count = item.rpartition("=")
        if not sep or not name:
            raise SystemExit(f"profile_check: bad expectation {item!r} (NAME=COUNT)")
        expected[name] = count if count == "+" else int(count)
    return expected


def main(argv):
    command = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    path, expected = argv[0], parse_expectations(argv[1:])
    if command:
        rc = subprocess.call(command)
        if rc != 0:
            print(f"FAIL: {' '.join(command)} exited with {rc}", file=sys.stderr)
            return 1
    try:
        failures = check(path, expected)
    except ImportError:
        print("SKIP: h5py is not importable; the profile cannot be read back")
        return SKIP
    except CheckError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    for failure in failures:
        print(f"FAIL: {path}: {failure}", file=sys.stderr)
    if not failures:
        print(f"ok: {path}: schema 3, regions {expected}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
