"""check_utf8.py: a file whose region and thread names were recorded as
invalid UTF-8 (utf8_record.c) stores them as valid UTF-8 with U+FFFD in
place of each invalid byte (docs/FORMAT.md 2.1): h5py decodes every name,
names that became equal are told apart by "~<region id>", the writer said
so once on stderr, and scope-check accepts the file."""
import argparse
import os
import subprocess
import sys

import h5py

parser = argparse.ArgumentParser()
parser.add_argument("--program", required=True)
parser.add_argument("--check", required=True)
parser.add_argument("--workdir", required=True)
args = parser.parse_args()
os.makedirs(args.workdir, exist_ok=True)
out = os.path.join(args.workdir, "utf8.h5")
if os.path.exists(out):
    os.remove(out)
env = dict(os.environ, SCOPE_PROFILER_SUMMARY="0")
env.pop("SCOPE_PROFILER_FILE", None)
run = subprocess.run([args.program, out], capture_output=True, text=True, env=env)
failures = []
if run.returncode != 0:
    sys.exit(f"utf8_record failed ({run.returncode}): {run.stderr}")
said = [line for line in run.stderr.splitlines() if "not valid UTF-8" in line]
if len(said) != 1:
    failures.append(f"expected one diagnostic about invalid UTF-8, got {said!r}")

R = "\ufffd"
with h5py.File(out, "r") as f:
    names_ds = f["region_table/names"]
    if names_ds.dtype.metadata.get("vlen") is not str:
        failures.append(f"region names are not typed UTF-8 strings: {names_ds.dtype!r}")
    try:
        names = list(names_ds.asstr()[()])  # strict UTF-8 decoding
    except UnicodeDecodeError as e:
        sys.exit(f"FAIL: h5py cannot decode a stored region name: {e}")
    threads = []
    if "thread_table" in f:
        threads = list(f["thread_table/names"].asstr()[()])

base = {"ok", "caf\u00e9", "cut" + R + R, R + R}
missing = base - set(names)
if missing:
    failures.append(f"names {sorted(missing)!r} missing from {names!r}")
bad = sorted(n for n in names if n.startswith("bad"))
ids = sorted(str(names.index(n)) for n in bad)
if bad != sorted(f"bad{R}~{i}" for i in ids):
    failures.append(f"the two names equal once repaired are not told apart: {bad!r}")
if len(set(names)) != len(names):
    failures.append(f"a region name twice: {names!r}")
if threads and "main" + R not in threads:
    failures.append(f"thread name not repaired: {threads!r}")

check = subprocess.run([args.check, out], capture_output=True, text=True)
if check.returncode != 0:
    failures.append(f"scope-check refused the file ({check.returncode}): {check.stdout}{check.stderr}")

for failure in failures:
    print("FAIL:", failure)
if failures:
    sys.exit(1)
print(f"ok: {names!r}, threads {threads!r}")
