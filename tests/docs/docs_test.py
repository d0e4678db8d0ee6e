#!/usr/bin/python3
"""docs_test.py - run every marked code block of README.md and docs/guide.

A fenced block is run when its info string is `LANG test [FLAGS]`:

  c test          written to app.c, built against the installed package
                  (pkg-config scopeprofiler) into ./example, and run
  cpp test        the same with app.cpp and the C++ compiler
  fortran test    written to app.f90, built with scopeprofiler-fortran
  sh test         run with bash (-e, pipefail) in the page's work folder,
                  with the installed bin/ first on PATH and PKG_CONFIG_PATH
                  pointing at the installed package
  cmake test      the lines of a user's CMakeLists.txt: wrapped in a project
                  whose executable `solver` is built from app.f90 (else
                  app.c), configured with CMAKE_PREFIX_PATH = the install
                  prefix, and built

FLAGS: `compile` builds without running; `mpi` builds with the MPI
compiler wrapper (mpicc, mpifort) and does not run. A block fenced as
`output` right after an `sh test` block is what that block prints on
stdout: compared line by line (trailing blanks ignored); a line `...`
stands for any number of lines, and `...` inside a line for any text.

Blocks of one page run in order in one folder, so a page can build a
program in one block and run it in the next. Blocks that need the network
or root are simply not marked.

Also checked: every SCOPE_PROFILER_* variable the code reads (getenv and
the env_* helpers in c/src, pmpi, shims, cli, merge/src) is listed on
docs/guide/environment.md and in docs/man/scope-profiler.7, and nothing
else is; with --man, that `man TOOL` and `man 7 scope-profiler` render from
the installed share/man.

Usage: docs_test.py --source S --build B --work W [--cmake CMAKE]
       [--generator G] [--fc FC] [--man TOOL,...] [PAGE...]
  Installs the build tree B into W/prefix (cmake --install), then runs the
  marked blocks of every page (default: README.md and docs/guide/*.md).
Exit 0 when every block ran as shown, 1 otherwise, 77 when a compiler or
pkg-config is missing.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^(`{3,})\s*(\S*)\s*(.*)$")


class Failure(Exception):
    pass


def blocks(path):
    """(line, lang, flags, text) of every fenced block of a Markdown file."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, rest = m.group(1), m.group(2), m.group(3).split()
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        out.append((start, lang, rest, "\n".join(lines[start:j]) + "\n"))
        i = j + 1
    return out


def matches(shown, got):
    """Does the output `got` fit the `shown` lines (with `...` wildcards)?"""
    pattern = ""
    for line in shown:
        if line.strip() == "...":
            pattern += r"(?:.*\n)*"
        else:
            pattern += ".*".join(re.escape(p) for p in line.split("...")) + r"\n"
    return re.fullmatch(pattern, "".join(l + "\n" for l in got)) is not None


def run(cmd, cwd, env, what, shell=False):
    proc = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if not shell else subprocess.PIPE,
                          universal_newlines=True, timeout=600)
    if proc.returncode != 0:
        raise Failure(f"{what} failed (exit {proc.returncode}):\n{proc.stdout}"
                      f"{proc.stderr or ''}")
    return proc


def pkg_flags(env, *args):
    return run(["pkg-config"] + list(args), None, env, "pkg-config " + " ".join(args)
               ).stdout.split()


def run_page(page, work, env, args):
    found = blocks(page)
    ran = 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for k, (line, lang, flags, text) in enumerate(found):
        if not flags or flags[0] != "test":
            continue
        where = f"{page}:{line} ({lang} block)"
        opts = flags[1:]
        ran += 1
        try:
            if lang in ("c", "cpp", "fortran"):
                ext = {"c": "c", "cpp": "cpp", "fortran": "f90"}[lang]
                src = os.path.join(work, "app." + ext)
                open(src, "w").write(text)
                mpi = "mpi" in opts
                if lang == "c":
                    cc = ["mpicc"] if mpi else [os.environ.get("CC", "cc"), "-std=c11"]
                    flags_ = pkg_flags(env, "--cflags", "--libs", "scopeprofiler")
                elif lang == "cpp":
                    cc = ["mpicxx"] if mpi else [os.environ.get("CXX", "c++")]
                    flags_ = pkg_flags(env, "--cflags", "--libs", "scopeprofiler")
                else:
                    cc = ["mpifort"] if mpi else [args.fc]
                    flags_ = pkg_flags(env, "--cflags", "--libs", "scopeprofiler-fortran")
                run(cc + [src] + flags_ + ["-o", "example"], work, env, f"{where}: building")
                if "compile" not in opts and not mpi:
                    run(["./example"], work, env, f"{where}: running ./example")
            elif lang == "sh":
                proc = run(["bash", "-e", "-o", "pipefail", "-c", text], work, env,
                           f"{where}: running", shell=False)
                nxt = found[k + 1] if k + 1 < len(found) else None
                if nxt and nxt[1] == "output" and nxt[0] <= line + text.count("\n") + 3:
                    shown = nxt[3].rstrip("\n").split("\n")
                    got = [l.rstrip() for l in proc.stdout.rstrip("\n").split("\n")]
                    if not matches([s.rstrip() for s in shown], got):
                        raise Failure(f"{where}: the output differs from the one shown "
                                      f"at line {nxt[0]}:\n--- shown\n" + "\n".join(shown) +
                                      "\n--- got\n" + "\n".join(got))
            elif lang == "cmake":
                proj = os.path.join(work, "cmake-project")
                shutil.rmtree(proj, ignore_errors=True)
                os.makedirs(proj)
                has_f = os.path.exists(os.path.join(work, "app.f90"))
                src = "app.f90" if has_f else "app.c"
                shutil.copy(os.path.join(work, src), proj)
                with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
                    f.write("cmake_minimum_required(VERSION 3.13)\n"
                            f"project(doc LANGUAGES C CXX{' Fortran' if has_f else ''})\n"
                            f"add_executable(solver {src})\n" + text)
                cfg = [args.cmake, "-S", proj, "-B", os.path.join(proj, "build"),
                       "-DCMAKE_PREFIX_PATH=" + args.prefix]
                if args.generator:
                    cfg += ["-G", args.generator]
                if args.fc:
                    cfg += ["-DCMAKE_Fortran_COMPILER=" + args.fc]
                run(cfg, work, env, f"{where}: configuring")
                run([args.cmake, "--build", os.path.join(proj, "build")], work, env,
                    f"{where}: building")
            else:
                raise Failure(f"{where}: unknown block language '{lang}' marked test")
        except Failure as e:
            raise Failure(str(e)) from None
    return ran


ENV_READ = re.compile(r'\b(?:getenv|env_[a-z0-9_]+|flag_on)\(\s*"(SCOPE_PROFILER_\w+)"')


def check_variables(source):
    """Every SCOPE_PROFILER_* variable the code reads is on the guide's
    environment page and in scope-profiler(7), and neither lists one the
    code does not read."""
    read = set()
    for top in ("c/src", "pmpi", "shims", "cli", "merge/src"):
        for dirpath, _, files in os.walk(os.path.join(source, top)):
            for name in files:
                if name.endswith((".c", ".h")):
                    text = open(os.path.join(dirpath, name), encoding="utf-8",
                                errors="replace").read()
                    read.update(ENV_READ.findall(text))
    page = open(os.path.join(source, "docs", "guide", "environment.md"), encoding="utf-8").read()
    listed = set(re.findall(r"^\| `(SCOPE_PROFILER_\w+)`", page, re.M))
    man = open(os.path.join(source, "docs", "man", "scope-profiler.7"), encoding="utf-8").read()
    in_man = set(re.findall(r"^\.B (SCOPE_PROFILER_\w+)", man, re.M))
    problems = []
    for what, names in (("docs/guide/environment.md", listed), ("docs/man/scope-profiler.7", in_man)):
        if read - names:
            problems.append(f"{what} misses {', '.join(sorted(read - names))}")
        if names - read:
            problems.append(f"{what} lists {', '.join(sorted(names - read))}, which no code reads")
    if problems:
        raise Failure("environment variables: " + "; ".join(problems))
    return len(read)


def check_man(args):
    """After the install, `man scope-merge` (every tool's page) and
    `man 7 scope-profiler` render from the prefix's share/man."""
    mandir = os.path.join(args.prefix, "share", "man")
    pages = [("1", t) for t in args.man.split(",")] + [("7", "scope-profiler")]
    if not shutil.which("man"):
        missing = [f"{n}.{s}" for s, n in pages
                   if not os.path.isfile(os.path.join(mandir, "man" + s, f"{n}.{s}"))]
        if missing:
            raise Failure("man pages missing from the install: " + ", ".join(missing))
        return f"{len(pages)} installed (no man command to render them)"
    env = dict(os.environ, MANPATH=mandir, MANWIDTH="80", MAN_KEEP_FORMATTING="")
    for section, name in pages:
        proc = subprocess.run(["man", section, name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)
        if proc.returncode != 0 or name.upper() not in proc.stdout.upper():
            raise Failure(f"`man {section} {name}` with MANPATH={mandir} failed "
                          f"(exit {proc.returncode}): {proc.stderr.strip()}")
        if section == "1" and "--version" not in proc.stdout:
            raise Failure(f"man {name}: no --version in the page")
    return f"{len(pages)} render with man"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--generator", default="")
    ap.add_argument("--fc", default="gfortran")
    ap.add_argument("--man", default="", help="comma list of tools whose man(1) page must install")
    ap.add_argument("pages", nargs="*")
    args = ap.parse_args()
    for tool in ("pkg-config", "bash"):
        if not shutil.which(tool):
            print(f"docs_test: {tool} not found; skipped")
            return 77
    args.prefix = os.path.join(os.path.abspath(args.work), "prefix")
    shutil.rmtree(args.prefix, ignore_errors=True)
    try:
        run([args.cmake, "--install", args.build, "--prefix", args.prefix], None, None,
            "cmake --install")
    except Failure as e:
        print(e)
        return 1
    pages = args.pages or ([os.path.join(args.source, "README.md")] +
                           sorted(glob.glob(os.path.join(args.source, "docs", "guide", "*.md"))))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env["PATH"] = os.path.join(args.prefix, "bin") + os.pathsep + env.get("PATH", "")
    libdirs = glob.glob(os.path.join(args.prefix, "lib*", "pkgconfig")) + \
        glob.glob(os.path.join(args.prefix, "lib", "*", "pkgconfig"))
    env["PKG_CONFIG_PATH"] = os.pathsep.join(libdirs)
    failed = 0
    total = 0
    if args.man:
        try:
            print(f"ok   man pages: {check_man(args)}")
        except Failure as e:
            failed += 1
            print(f"FAIL {e}")
    try:
        print(f"ok   every one of the {check_variables(args.source)} variables the code reads "
              "is documented")
    except Failure as e:
        failed += 1
        print(f"FAIL {e}")
    for page in pages:
        name = os.path.relpath(page, args.source).replace(os.sep, "_").replace(".md", "")
        try:
            n = run_page(page, os.path.join(os.path.abspath(args.work), "pages", name), env, args)
            total += n
            print(f"ok   {os.path.relpath(page, args.source)}: {n} block(s)")
        except Failure as e:
            failed += 1
            print(f"FAIL {e}")
        except subprocess.TimeoutExpired as e:
            failed += 1
            print(f"FAIL {page}: timed out: {e}")
    print(f"docs_test: {total} block(s) in {len(pages)} page(s), {failed} page(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
