#!/usr/bin/python3
"""check_disk_full.py TEST_FAULTS SCOPE_MERGE DATA WORKDIR SCOPE_EXPORT: a full
file system.

Mounts a 256 KiB tmpfs (root only; exit 77 with the reason otherwise),
then (1) test_faults disk_full records 2M calls into it and must get
SP_ERR_OUTPUT, keep the previous file and exit normally with its own code
(HDF5's exit handler once crashed the program with SIGSEGV), and (2)
scope-merge writing into it must fail with a message naming the output and
the system's reason, exit with its own non-zero code (never a signal), and
leave no temporary file; (3) the same for scope-export (exit 3).
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import small_fs  # noqa: E402

test_faults, merge, data, workdir, export = sys.argv[1:6]
os.makedirs(workdir, exist_ok=True)
failures = 0
with small_fs.small_tmpfs("256k", parent=workdir) as mnt:
    env = dict(os.environ, SP_TEST_FULL_DIR=mnt)
    p = subprocess.run([test_faults, "disk_full", os.path.join(workdir, "cases")], env=env,
                       capture_output=True, text=True, timeout=120)
    print(p.stdout, p.stderr)
    if p.returncode != 0:
        print(f"FAIL: test_faults disk_full exit {p.returncode}")
        failures += 1
    for name in os.listdir(mnt):
        os.unlink(os.path.join(mnt, name))
    # fill the file system, then merge into it
    with open(os.path.join(mnt, "filler"), "wb") as f:
        try:
            f.write(b"\0" * (256 << 10))
        except OSError:
            pass
    # two inputs without a common region name: gzip.h5 and a copy of it
    # whose regions carry a prefix (66,668 calls each: more than fits)
    import h5py
    renamed = os.path.join(workdir, "renamed.h5")
    shutil.copy(os.path.join(data, "driver/gzip.h5"), renamed)
    with h5py.File(renamed, "r+") as f:
        names = ["k:" + (n.decode() if isinstance(n, bytes) else n)
                 for n in f["region_table/names"][:]]
        del f["region_table/names"]
        f.create_dataset("region_table/names", data=names, dtype=h5py.string_dtype("utf-8"))
    out = os.path.join(mnt, "merged.h5")
    p = subprocess.run([merge, os.path.join(data, "driver/gzip.h5"), renamed, "-o", out],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout, p.stderr)
    temps = [n for n in os.listdir(mnt) if n.startswith(".") and n.endswith(".tmp")]
    if p.returncode <= 0 or p.returncode >= 128 or out not in p.stderr or temps:
        print(f"FAIL: scope-merge into a full disk: exit {p.returncode}, temporaries {temps}")
        failures += 1
    # and scope-export of the big input as a Chrome trace into it
    out = os.path.join(mnt, "trace.json")
    p = subprocess.run([export, os.path.join(data, "driver/gzip.h5"), "-o", out],
                       capture_output=True, text=True, timeout=120)
    print(p.stdout, p.stderr)
    temps = [n for n in os.listdir(mnt) if n.startswith(".") and n.endswith(".tmp")]
    if p.returncode != 3 or out not in p.stderr or "No space left" not in p.stderr or temps \
            or os.path.exists(out):
        print(f"FAIL: scope-export into a full disk: exit {p.returncode}, temporaries {temps}")
        failures += 1
shutil.rmtree(mnt, ignore_errors=True)
sys.exit(1 if failures else 0)
