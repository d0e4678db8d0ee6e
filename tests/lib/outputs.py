"""outputs.py: a test's working directory and the profile it writes
there. A write that fails must leave the previous file at the output path
as it was and no temporary beside it; one that succeeds publishes a whole
HDF5 file. The directory is made fresh (emptied) so that what is left in
it afterwards is what the run left.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import os
import shutil

PREVIOUS = b"previous contents"
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def fresh_workdir(workdir):
    """Removes workdir with everything in it and makes it again, empty."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)


def with_previous(workdir, name="job.h5"):
    """A fresh workdir holding `name` with PREVIOUS as its contents (not a
    profile): the path a run will write to."""
    fresh_workdir(workdir)
    path = os.path.join(workdir, name)
    with open(path, "wb") as f:
        f.write(PREVIOUS)
    return path


def files_in(workdir):
    """The names in workdir, sorted."""
    return sorted(os.listdir(workdir))


def check_only(check, path):
    """Checks that the output file is all its directory holds (no
    temporary left, nothing else written)."""
    workdir, name = os.path.split(path)
    check(files_in(workdir) == [name], f"files left: {files_in(workdir)}")


def check_kept(check, path):
    """A failed write: the previous file is intact and nothing else left."""
    with open(path, "rb") as f:
        check(f.read() == PREVIOUS, "the previous file changed")
    check_only(check, path)


def check_published(check, path, what="the job's file was not published"):
    """A write that succeeded: an HDF5 file stands at the path and nothing
    else is left."""
    with open(path, "rb") as f:
        check(f.read(8) == HDF5_SIGNATURE, what)
    check_only(check, path)
