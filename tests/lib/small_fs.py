"""small_fs.py: a small file system for the disk-full checks: a tmpfs of
a given size mounted for the length of a `with` block. Mounting needs root
(and a container that allows it); where it is not possible the check is
skipped (exit 77, with the reason), not failed: a full disk cannot be
faked faithfully any other way.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import contextlib
import os
import subprocess
import tempfile

import needs


@contextlib.contextmanager
def small_tmpfs(size, parent=None, where=None):
    """Mounts a tmpfs of `size` (mount's size= option: "256k", "2m") on
    `where` (made when missing) or else on a new directory under `parent`,
    yields the mount point and unmounts it afterwards. Skips when this is
    not root or the mount fails."""
    if os.geteuid() != 0:
        needs.skip("mounting a small file system needs root")
    if where is None:
        where = tempfile.mkdtemp(dir=parent)
    else:
        os.makedirs(where, exist_ok=True)
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", where],
                           capture_output=True, text=True)
    if mount.returncode != 0:
        needs.skip(f"cannot mount a tmpfs here: {mount.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", where])
