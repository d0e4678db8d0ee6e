#!/usr/bin/python3
"""check_merge_signal.py MAKE_NATIVE SCOPE_MERGE WORKDIR: scope-merge killed by
SIGINT, SIGTERM or SIGHUP while it writes leaves no temporary file and no
output (sp_remove_partial_outputs from its handler), and dies of the signal.

Two native profiles of 3M calls each (the second's regions renamed with
--prefix) make a merge long enough to be interrupted while its temporary
sibling exists.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

make_native, merge, workdir = sys.argv[1:4]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
a, b = os.path.join(workdir, "a.h5"), os.path.join(workdir, "b.h5")
for path in (a, b):
    subprocess.run([make_native, path, "3000", "1000"], check=True, timeout=300)
failures = 0
interrupted = 0
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    out_dir = os.path.join(workdir, f"out_{sig.name}")
    os.makedirs(out_dir)
    out = os.path.join(out_dir, "merged.h5")
    proc = subprocess.Popen([merge, a, b, "--prefix", "2=b:", "--allow-disjoint", "-o", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    temp = []
    while time.time() < deadline and proc.poll() is None and not temp:
        temp = [n for n in os.listdir(out_dir) if n.endswith(".tmp")]
        time.sleep(0.002)
    if not temp:
        proc.wait()
        print(f"round {sig.name}: the merge ended (exit {proc.returncode}) before a temporary "
              f"was seen: {proc.stderr.read().decode()}")
        continue
    interrupted += 1
    time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    left = os.listdir(out_dir)
    if proc.returncode != -sig or left:
        failures += 1
        print(f"FAIL: {sig.name}: exit {proc.returncode}, left {left}")
    else:
        print(f"ok: {sig.name}: died of the signal, nothing left in {out_dir}")
if interrupted == 0:
    print("FAIL: no merge could be interrupted while writing")
    failures += 1
sys.exit(1 if failures else 0)
