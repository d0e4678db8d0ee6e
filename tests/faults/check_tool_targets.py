#!/usr/bin/python3
"""check_tool_targets.py EXPORT REPORT MERGE DATA WORKDIR: the tools never
replace what is not a regular file. -o naming a FIFO (and, as root, a
character device made for the test) is refused with exit 3 and a message
naming it; the node is still there, of its kind; -o - still writes to
standard output.
"""
import os
import shutil
import stat
import subprocess
import sys

export, report, merge, data, workdir = sys.argv[1:6]
shutil.rmtree(workdir, ignore_errors=True)
os.makedirs(workdir)
fifo = os.path.join(workdir, "fifo")
os.mkfifo(fifo)
nodes = [(fifo, stat.S_ISFIFO)]
if os.geteuid() == 0:
    dev = os.path.join(workdir, "null_device")
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    nodes.append((dev, stat.S_ISCHR))
profile = os.path.join(data, "compat/schema3.h5")
failures = 0
for node, is_kind in nodes:
    for cmd in ([export, profile, "-o", node], [report, profile, "-o", node],
                [merge, profile, os.path.join(data, "compat/native-v2.spt"), "--prefix", "2=n:",
                 "--allow-disjoint", "-o", node]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        ok = p.returncode in (2, 3) and node in p.stderr and is_kind(os.stat(node).st_mode)
        print(f"{os.path.basename(cmd[0])} -o {os.path.basename(node)}: exit {p.returncode}: "
              f"{p.stderr.strip()}")
        if not ok:
            failures += 1
            print("FAIL: the target was not refused, or it was replaced")
p = subprocess.run([export, profile, "-o", "-", "--format", "csv"], capture_output=True,
                   text=True, timeout=60)
if p.returncode != 0 or "solve" not in p.stdout:
    failures += 1
    print(f"FAIL: -o - no longer writes to standard output: exit {p.returncode}")
sys.exit(1 if failures else 0)
