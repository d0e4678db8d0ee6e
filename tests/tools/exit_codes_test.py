#!/usr/bin/python3
"""Exit codes of every tool (docs/guide/results.md "Exit codes"): 0 ok, 1 usage, 2 a bad
input, 3 any other failure. One ctest entry per tool and code:

    exit_codes_test.py --bin DIR --make BIN --data DIR TOOL CODE

Exit 0 pass, 1 fail. Runs in the current directory (ctest gives each its
own). Needs no Python packages: the tools' own behaviour is the subject.
"""
import argparse
import os
import subprocess
import sys

ARGS = None


def profile():
    """A native profile recorded by the library (tools_make_profile)."""
    if not os.path.exists("native.h5"):
        subprocess.run([ARGS.make, "native.h5"], check=True, capture_output=True)
    return "native.h5"


def fixture():
    return os.path.join(ARGS.data, "driver", "serial.h5")


def garbage():
    with open("garbage.h5", "wb") as f:
        f.write(b"not a profile\n" * 64)
    return "garbage.h5"


FULL = "/dev/full"  # every write fails with ENOSPC: an output that cannot be written

# tool -> code -> list of (argv, stdout target or None); every entry must exit
# with the code. Inputs are produced lazily so that each case does only its
# own work.
CASES = {
    "scope-inspect": {
        0: lambda: [([profile()], None)],
        1: lambda: [(["--bogus", profile()], None), ([], None), (["--sort", "nope", profile()], None)],
        2: lambda: [(["missing.h5"], None), ([garbage()], None)],
        3: lambda: [([profile()], FULL)],
    },
    "scope-check": {
        0: lambda: [([profile()], None)],
        1: lambda: [(["--bogus", profile()], None), ([], None)],
        2: lambda: [(["missing.h5"], None), ([garbage()], None)],
        3: lambda: [([profile()], FULL)],
    },
    "scope-diff": {
        0: lambda: [([profile(), profile()], None)],
        1: lambda: [(["--bogus", profile(), profile()], None), ([profile()], None)],
        2: lambda: [([profile(), "missing.h5"], None), ([garbage(), profile()], None)],
        3: lambda: [([profile(), profile()], FULL)],
    },
    "scope-export": {
        0: lambda: [([profile(), "-o", "out.json"], None)],
        1: lambda: [(["--bogus", profile(), "-o", "out.json"], None), ([profile()], None)],
        2: lambda: [(["missing.h5", "-o", "out.json"], None), ([garbage(), "-o", "out.json"], None)],
        3: lambda: [([profile(), "-o", "no-such-dir/out.json"], None), ([profile(), "-o", "-"], FULL)],
    },
    "scope-merge": {
        0: lambda: [([fixture(), profile(), "-o", "out.h5", "--allow-disjoint"], None)],
        1: lambda: [(["--bogus", fixture(), profile(), "-o", "out.h5"], None),
                    ([fixture(), profile()], None),
                    ([profile(), "-o", "out.h5"], None),
                    ([fixture(), profile(), "-o"], None)],
        2: lambda: [([fixture(), "missing.h5", "-o", "out.h5"], None),
                    ([fixture(), garbage(), "-o", "out.h5"], None),
                    ([fixture(), profile(), "-o", profile()], None)],
        3: lambda: [([fixture(), profile(), "-o", "no-such-dir/out.h5", "--allow-disjoint"], None)],
    },
}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--make", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("tool")
    ap.add_argument("code", type=int)
    ARGS = ap.parse_args()
    exe = os.path.join(ARGS.bin, ARGS.tool)
    if not os.path.exists(exe):
        print(f"{exe} not built", file=sys.stderr)
        return 77
    failures = 0
    for argv, stdout in CASES[ARGS.tool][ARGS.code]():
        out = open(stdout, "w") if stdout else subprocess.PIPE
        proc = subprocess.run([exe, *argv], stdout=out, stderr=subprocess.PIPE, text=True)
        if stdout:
            out.close()
        shown = " ".join([ARGS.tool, *argv]) + (f" > {stdout}" if stdout else "")
        if proc.returncode != ARGS.code:
            failures += 1
            print(f"FAIL: {shown}: exit {proc.returncode}, expected {ARGS.code}\n{proc.stderr}",
                  file=sys.stderr)
            continue
        err = proc.stderr
        # Failures say what happened on stderr, naming the tool (scope-check
        # reports an unreadable file in its report on stdout); an unknown
        # option points at --help.
        said = proc.stdout if ARGS.tool == "scope-check" and ARGS.code == 2 else err
        if ARGS.code != 0 and not (said.startswith(ARGS.tool + ":") or
                                   (ARGS.tool == "scope-check" and argv[0] in said)):
            failures += 1
            print(f"FAIL: {shown}: no message naming the tool or file: {said!r}", file=sys.stderr)
        if "--bogus" in argv and f"'{ARGS.tool} --help'" not in err:
            failures += 1
            print(f"FAIL: {shown}: usage error without the --help hint: {err!r}", file=sys.stderr)
        if ARGS.code == 0 and err:
            failures += 1
            print(f"FAIL: {shown}: unexpected stderr {err!r}", file=sys.stderr)
        print(f"ok: {shown} -> {proc.returncode}")
    # Nothing half-written is left behind by a failure.
    if ARGS.code != 0:
        left = [n for n in os.listdir(".") if n.startswith(".") or n.startswith("out.")]
        if left:
            failures += 1
            print(f"FAIL: files left behind: {left}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
