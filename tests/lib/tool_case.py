"""tool_case.py: what a script testing a command-line tool case by case
shares (tests/merge): its arguments (tool paths and one CASE), the working
directory ctest gives each case, emptied first so that "nothing left
behind" checks mean something, the tool runs themselves, and the verdict.

Imported by the check scripts after `sys.path.insert(0, <tests/lib>)`."""
import argparse
import os
import shutil
import subprocess
import sys


def parse(cases, required=(), optional=(), doc=None):
    """The script's arguments: each option of `required` (e.g. "--merge")
    must be given, each of `optional` defaults to None, then one CASE of
    `cases` (a dict or list of names). Returns argparse's namespace."""
    ap = argparse.ArgumentParser(description=doc)
    for opt in required:
        ap.add_argument(opt, required=True)
    for opt in optional:
        ap.add_argument(opt, default=None)
    ap.add_argument("case", choices=sorted(cases))
    return ap.parse_args()


def empty_case_dir(dirname):
    """Empties the current directory (files and folders) when its name is
    `dirname`, the directory the CMakeLists gives the case (work/<dirname>);
    anywhere else (a run by hand in a source tree) it is left alone."""
    here = os.getcwd()
    if os.path.basename(here) != dirname:
        return
    for name in os.listdir(here):
        full = os.path.join(here, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.unlink(full)


def run(cmd, expect=None, env=None):
    """Runs cmd capturing its output as text, with the environment `env`
    (default: this process's). When `expect` is given and the exit code
    differs, prints both outputs and stops the script with a message naming
    the command (a setup step that must work, not a check)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if expect is not None and proc.returncode != expect:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(f"{cmd} exited {proc.returncode}, expected {expect}")
    return proc


def environment(drop=(), **set_vars):
    """This process's environment without the variables `drop`, with
    `set_vars` added: a tool run that must not inherit a setting."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(set_vars)
    return env


def text(value):
    """An HDF5 string as h5py returns it (bytes or str), as str."""
    return value.decode() if isinstance(value, bytes) else str(value)


def run_case(check, cases, case):
    """Runs cases[case]() and ends the script with check's verdict
    (checks.Checks.finish: exit 1 when any check failed, else 0)."""
    cases[case]()
    check.finish()
