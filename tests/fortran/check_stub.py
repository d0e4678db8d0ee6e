#!/usr/bin/python3
"""The Fortran stub (ScopeProfiler::scopeprofiler_fortran_stub).

    check_stub.py interface REAL.f90 STUB.f90
        The stub module declares exactly the public names of the real one
        (procedures, generic interfaces and parameters, with the same values).
    check_stub.py run STUB_EXE REAL_EXE
        The stub build runs, writes no file, needs no libscopeprofiler and
        holds no symbol of the C API; the real build of the same program does
        record (so the program is a fair test).

Exit 0 pass, 1 fail, 77 skip (no readelf/nm).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def source_text(path):
    """The file with its `include '...'` lines replaced by the files they
    name (looked up beside it, as the compiler does)."""
    def expand(m):
        return source_text(os.path.join(os.path.dirname(path), m.group(1)))
    return re.sub(r"^\s*include\s+'([^']+)'\s*$", expand, open(path).read(), flags=re.M)


def public_names(path):
    text = source_text(path)
    names = {}
    for m in re.finditer(r"^\s*public\s*::\s*(.+)$", text, re.M):
        for n in m.group(1).split(","):
            names[n.strip().lower()] = None
    for m in re.finditer(r"parameter,\s*public\s*::\s*(\w+)\s*=\s*(\S+)", text, re.I):
        names[m.group(1).lower()] = m.group(2)
    return names


def interface(real, stub):
    a, b = public_names(real), public_names(stub)
    if a != b:
        print(f"FAIL: public names differ:\n only real: {sorted(set(a) - set(b))}\n"
              f" only stub: {sorted(set(b) - set(a))}\n"
              f" values: {[(k, a[k], b.get(k)) for k in a if k in b and a[k] != b[k]]}",
              file=sys.stderr)
        return 1
    print(f"ok: {len(a)} public names, the same in both")
    return 0


def run(stub_exe, real_exe):
    readelf, nm = shutil.which("readelf"), shutil.which("nm")
    if not readelf or not nm:
        print("readelf/nm not available", file=sys.stderr)
        return 77
    failures = []
    env = dict(os.environ, SCOPE_PROFILER_QUIET="1")
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.run([stub_exe, "stub.h5"], cwd=work, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or "stub_program done" not in proc.stdout:
            failures.append(f"the stub build failed: {proc.returncode} {proc.stdout} {proc.stderr}")
        if os.listdir(work):
            failures.append(f"the stub build wrote {os.listdir(work)}")
        if proc.stderr:
            failures.append(f"the stub build printed {proc.stderr!r}")
        # The same program with the real module records: the test is fair.
        proc = subprocess.run([real_exe, "real.h5"], cwd=work, env=env, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(os.path.join(work, "real.h5")):
            failures.append(f"the real build did not record: {proc.returncode} {proc.stderr}")
    dyn = subprocess.run([readelf, "-d", stub_exe], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]", dyn)
    if any("scopeprofiler" in n for n in needed):
        failures.append(f"the stub build needs {needed}")
    symbols = subprocess.run([nm, stub_exe], capture_output=True, text=True).stdout.split("\n")
    c_api = [line for line in symbols if re.search(r"\s(sp_|spi_|spf_)\w*$", line)]
    if c_api:
        failures.append(f"the stub build holds C API symbols: {c_api[:10]}")
    real_needed = re.findall(r"\(NEEDED\).*\[(.+)\]",
                             subprocess.run([readelf, "-d", real_exe], capture_output=True,
                                            text=True).stdout)
    real_api = [line for line in subprocess.run([nm, real_exe], capture_output=True,
                                                text=True).stdout.split("\n")
                if re.search(r"\s(sp_|spf_)\w*$", line)]
    if not real_api and not any("scopeprofiler" in n for n in real_needed):
        failures.append("the real build links no profiler either: the check proves nothing")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if not failures:
        print(f"ok: stub build needs {needed}, no C API symbol, writes nothing; "
              f"the real build needs {real_needed}")
    return 1 if failures else 0


def main():
    if sys.argv[1] == "interface":
        return interface(sys.argv[2], sys.argv[3])
    return run(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    sys.exit(main())
