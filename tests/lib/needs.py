"""needs.py: what a check needs from this machine and this build, and the
skip when it is missing: ctest counts exit code 77 as skipped
(SKIP_RETURN_CODE 77 in the tests' CMakeLists), which says more than a
pass that checked nothing and is not a failure of the profiler.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import importlib
import sys

SKIP = 77


def skip(why):
    """Prints "SKIP: why" and exits with SKIP."""
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def h5py():
    """The h5py module (with numpy, which it needs), or a skip naming what
    is missing."""
    try:
        importlib.import_module("numpy")  # h5py needs it: a clear skip if absent
        return importlib.import_module("h5py")
    except ImportError as exc:
        skip(exc)


def no_tsan(program):
    """Skips when `program` is a ThreadSanitizer build: Debian's libgomp is
    not built with TSan, so the team's barriers are invisible to it and it
    reports races that are not there (tests/openmp/CMakeLists.txt)."""
    with open(program, "rb") as binary:
        if b"__tsan_init" in binary.read():
            skip("ThreadSanitizer build; libgomp's synchronisation is invisible to it")
