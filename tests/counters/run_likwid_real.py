"""run_likwid_real.py TEST_COUNTERS WORKDIR - the real LIKWID path.

Runs test_counters' likwid_real case under `likwid-perfctr -C 0 -g CLOCK -m`
and checks rank0/likwid with h5py. Exits 77 with the reason when the build
has no LIKWID, likwid-perfctr is missing, or the machine refuses counter
access (no msr device, unsupported CPU, a VM).
"""
import os
import shutil
import subprocess
import sys

binary, workdir, have_likwid = sys.argv[1], sys.argv[2], sys.argv[3]
if have_likwid not in ("ON", "1", "TRUE"):
    print("SKIP: this build has no LIKWID back end")
    sys.exit(77)
perfctr = shutil.which("likwid-perfctr")
if not perfctr:
    print("SKIP: likwid-perfctr not found")
    sys.exit(77)
os.makedirs(workdir, exist_ok=True)
p = subprocess.run([perfctr, "-C", "0", "-g", "CLOCK", "-m", binary, "likwid_real", workdir],
                   capture_output=True, text=True, timeout=120)
out = p.stdout + p.stderr
print(out)
if "path: REAL LIKWID" not in out:
    reason = next((l for l in out.splitlines()
                   if "access" in l.lower() or "ERROR" in l or "not supported" in l.lower()),
                  "likwid-perfctr did not run the program")
    print("SKIP: real LIKWID cannot measure on this machine:", reason.strip())
    sys.exit(77)
import h5py
with h5py.File(os.path.join(workdir, "likwid_real.h5"), "r") as f:
    ok = "rank0/likwid/regions/solve" in f
    if ok:
        r = f["rank0/likwid/regions/solve"]
        ok = r["events"].ndim == 2 and int(r["call_counts"][:].sum()) == 10
print("real LIKWID results", "OK" if ok else "MISSING/WRONG")
sys.exit(0 if ok else 1)
