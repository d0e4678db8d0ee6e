#!/usr/bin/python3
"""--version of one tool: exit 0, and on stdout exactly four lines

    TOOL (scope-profiler) VERSION      (the project version; help2man reads it)
    git: DESCRIBE                      (or "(not built from a git checkout)")
    HDF5: X.Y.Z[ (parallel)]           (the HDF5 CMake found)
    MPI: TEXT                          (or "(built without MPI)")

Usage: version_test.py TOOL_PATH PROJECT_VERSION HDF5_VERSION HAVE_MPI
"""
import os
import re
import subprocess
import sys


def main():
    path, version, hdf5, have_mpi = sys.argv[1:5]
    tool = os.path.basename(path)
    proc = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    failures = []
    if proc.returncode != 0:
        failures.append(f"exit {proc.returncode} (stderr: {proc.stderr.strip()})")
    lines = proc.stdout.rstrip("\n").split("\n")
    if len(lines) != 4:
        failures.append(f"{len(lines)} lines, not 4")
    lines += [""] * 4
    if lines[0] != f"{tool} (scope-profiler) {version}":
        failures.append(f"first line {lines[0]!r}, not '{tool} (scope-profiler) {version}'")
    if not re.fullmatch(r"git: (\S+|\(not built from a git checkout\))", lines[1]):
        failures.append(f"git line {lines[1]!r}")
    m = re.fullmatch(r"HDF5: (\d+\.\d+\.\d+)( \(parallel\))?", lines[2])
    if not m:
        failures.append(f"HDF5 line {lines[2]!r}")
    elif hdf5 and m.group(1) != hdf5:
        failures.append(f"HDF5 {m.group(1)}, but the build found HDF5 {hdf5}")
    if have_mpi in ("ON", "1", "TRUE"):
        if not re.fullmatch(r"MPI: .*\bMPI \d+\.\d+\)?", lines[3]):
            failures.append(f"MPI line {lines[3]!r} names no MPI version")
    elif lines[3] != "MPI: (built without MPI)":
        failures.append(f"MPI line {lines[3]!r} in a build without MPI")
    if proc.stderr:
        failures.append(f"stderr not empty: {proc.stderr!r}")
    for f in failures:
        print(f"FAIL {tool} --version: {f}")
    if not failures:
        print(f"ok: {tool} --version:\n" + proc.stdout)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
