#!/usr/bin/python3
"""docs_test.py - run every code block of README.md and docs/guide.

Every fenced block names its language and is either a test or says why it
cannot be one; a block that does neither fails the test, so a new block is
tested from the day it is written:

  ```LANG test [FLAGS]      run (below)
  ```LANG norun:REASON      not run, for the reason given (a job script for a
                            batch system, a command that needs root or the
                            network, the quick start that would run this
                            test suite itself); the reason must not be empty
  ```output                 what the test block just before it prints (below)

Test blocks:

  c test          written to app.c, built against the installed package
                  (pkg-config scopeprofiler) into ./example, and run
  cpp test        the same with app.cpp and the C++ compiler
  fortran test    written to app.f90, built with scopeprofiler-fortran
  sh test         run with bash (-e, pipefail) in the page's work folder,
                  with the installed bin/ first on PATH and PKG_CONFIG_PATH
                  pointing at the installed package
  cmake test      the lines of a user's CMakeLists.txt: wrapped in a project
                  whose executable `solver` is built from the page's program
                  (the last c, cpp or fortran block before it, else the next
                  one), configured with CMAKE_PREFIX_PATH = the install
                  prefix, and built

FLAGS of c, cpp and fortran blocks: `compile` builds without running;
`mpi` builds with the MPI compiler wrapper (mpicc, mpicxx, mpifort) and
does not run; `mpirun=N` builds with the wrapper and runs the program
under `mpirun --oversubscribe -np N`; `exe=NAME` names the program NAME
instead of `example`; `pkg=NAME` builds against pkg-config package NAME
(e.g. scopeprofiler-gptl) instead; a flag starting with `-` goes to the
compiler (`-fopenmp`). For cmake blocks a `-D...` flag goes to the
configure step.

A block fenced as `output` right after a test block is what that block
prints on stdout (an sh block's commands; a program's run): compared line
by line (trailing blanks ignored); a line `...` stands for any number of
lines, and `...` inside a line for any text.

Blocks of one page run in order in one folder, so a page can build a
program in one block and run it in the next. The folder has `examples`,
a link to the source tree's examples/, so that commands shown from the
top of the source tree work. Open MPI is allowed to run as root and to
oversubscribe (OMPI_* variables), and no batch job id variable is set.
A page whose block needs what the build lacks (MPI, Fortran) is skipped
from that block on, and says so.

Also checked: every SCOPE_PROFILER_* variable the code reads (getenv and
the env_* helpers in c/src, pmpi, shims, instrument, cli, merge/src) is listed on
docs/guide/environment.md and in docs/man/scope-profiler.7, and nothing
else is; with --man, that `man TOOL` and `man 7 scope-profiler` render from
the installed share/man.

Usage: docs_test.py --source S --build B --work W [--cmake CMAKE]
       [--generator G] [--fc FC] [--man TOOL,...] [PAGE...]
  Installs the build tree B into W/prefix (cmake --install), then runs the
  blocks of every page (default: README.md and docs/guide/*.md).
       docs_test.py --lint [--source S] [PAGE...]
  Only checks that every block of the pages is marked (no install, no run).
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
PROGRAMS = {"c": "c", "cpp": "cpp", "fortran": "f90"}
TESTED = set(PROGRAMS) | {"sh", "cmake"}
# The batch-system variables a job id comes from (lifecycle/output_path.c):
# the blocks run as outside any job, so that %j is `nojob`.
JOB_IDS = ("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID", "FLUX_JOB_ID")


class Failure(Exception):
    pass


def blocks(path):
    """(line, lang, info words, text) of every fenced block of a Markdown
    file; line is the line of its opening fence (1-based)."""
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
        if j >= len(lines):
            out.append((start, lang, ["<unclosed>"], ""))
            break
        out.append((start, lang, rest, "\n".join(lines[start:j]) + "\n"))
        i = j + 1
    return out


def follows(prev, block):
    """Is block an `output` block right after the block prev (at most one
    blank line between them)?"""
    return prev is not None and block[0] <= prev[0] + prev[3].count("\n") + 3


def indented_blocks(path):
    """First lines (1-based) of the indented code blocks of a Markdown file:
    a line indented by four spaces or a tab after a blank line, outside
    fences and lists. They cannot carry a mark, so they must be fenced."""
    out = []
    fence = None
    prev = ""
    in_list = False
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and line.startswith(fence):
            fence = None
        elif fence is None:
            if re.match(r"\s*([-*+]|\d+[.)])\s", line):
                in_list = True
            elif not line.strip() == "" and not line.startswith((" ", "\t")):
                in_list = False
            if prev.strip() == "" and re.match(r"( {4}|\t)\S", line) and not in_list:
                out.append(n)
        prev = line
    return out


def lint(page):
    """Every block of the page marked: problems as a list of strings."""
    problems = [f"{page}:{n}: an indented code block: fence it as `LANG test` or "
                "`LANG norun:REASON`" for n in indented_blocks(page)]
    found = blocks(page)
    for k, (line, lang, flags, text) in enumerate(found):
        where = f"{page}:{line}"
        if flags == ["<unclosed>"]:
            problems.append(f"{where}: the block is never closed")
        elif not lang:
            problems.append(f"{where}: a block without a language; fence it as "
                            "`LANG test`, `LANG norun:REASON` or `output`")
        elif lang == "output":
            prev = found[k - 1] if k else None
            if not (prev and prev[2] and prev[2][0] == "test" and follows(prev, found[k])):
                problems.append(f"{where}: an `output` block must follow a test block")
        elif flags and flags[0] == "test":
            if lang not in TESTED:
                problems.append(f"{where}: `{lang} test`: no test runs {lang} blocks "
                                f"(only {', '.join(sorted(TESTED))})")
        elif flags and flags[0].startswith("norun:"):
            if not (flags[0][len("norun:"):] or flags[1:]):
                problems.append(f"{where}: `norun:` needs a reason")
        else:
            problems.append(f"{where}: `{' '.join([lang] + flags)}` is not marked: fence it as `" + lang +
                            " test` (run by this test) or `" + lang +
                            " norun:REASON` (why it cannot run in a test)")
    return problems


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


def has_pkg(env, name):
    return subprocess.run(["pkg-config", "--exists", name], env=env).returncode == 0


def needs(lang, opts, text, env, args):
    """Why this build cannot run the block (None when it can)."""
    mpi = any(o == "mpi" or o.startswith("mpirun=") for o in opts) or \
        (lang in ("sh", "cmake") and
         re.search(r"\bmpi(run|cc|cxx|fort|exec)\b|MPI::|COMPONENTS[^)\n]*\bMPI\b", text))
    if mpi and not (shutil.which("mpirun") and has_pkg(env, "scopeprofiler-pmpi")):
        return "an MPI build and mpirun"
    fortran = lang == "fortran" or (lang in ("sh", "cmake") and
                                    re.search(r"\.f90\b|_fortran\b|COMPONENTS[^)\n]*Fortran",
                                              text))
    if fortran and not (args.fc and has_pkg(env, "scopeprofiler-fortran")):
        return "the Fortran module"
    # Optional parts (the shims, the PMPI library) by their pkg-config names.
    for name in set(re.findall(r"\bscopeprofiler(?:-[a-z]+)+", text + " " +
                               option(opts, "pkg", ""))):
        if not has_pkg(env, name):
            return name
    return None


def option(opts, name, default=None):
    for o in opts:
        if o.startswith(name + "="):
            return o[len(name) + 1:]
    return default


def compare(where, found, k, stdout):
    """The output block after block k, if any, against what it printed."""
    nxt = found[k + 1] if k + 1 < len(found) else None
    if nxt and nxt[1] == "output" and follows(found[k], nxt):
        shown = nxt[3].rstrip("\n").split("\n")
        got = [l.rstrip() for l in stdout.rstrip("\n").split("\n")]
        if not matches([s.rstrip() for s in shown], got):
            raise Failure(f"{where}: the output differs from the one shown "
                          f"at line {nxt[0]}:\n--- shown\n" + "\n".join(shown) +
                          "\n--- got\n" + "\n".join(got))


def build_program(where, lang, opts, text, work, env, args):
    ext = PROGRAMS[lang]
    src = os.path.join(work, "app." + ext)
    open(src, "w").write(text)
    np_ = option(opts, "mpirun")
    mpi = "mpi" in opts or np_ is not None
    pkg = option(opts, "pkg", "scopeprofiler-fortran" if lang == "fortran" else "scopeprofiler")
    exe = option(opts, "exe", "example")
    if lang == "c":
        cc = ["mpicc"] if mpi else [os.environ.get("CC", "cc"), "-std=c11"]
    elif lang == "cpp":
        cc = ["mpicxx"] if mpi else [os.environ.get("CXX", "c++")]
    else:
        cc = ["mpifort"] if mpi else [args.fc]
    extra = [o for o in opts if o.startswith("-")]
    flags_ = pkg_flags(env, "--cflags", "--libs", pkg)
    run(cc + extra + [src] + flags_ + ["-o", exe], work, env, f"{where}: building")
    if "compile" in opts or ("mpi" in opts and np_ is None):
        return None
    cmd = ["./" + exe]
    if np_ is not None:
        cmd = [shutil.which("mpirun"), "--oversubscribe", "-np", np_] + cmd
    return run(cmd, work, env, f"{where}: running {' '.join(cmd[-4:])}").stdout


def build_cmake(where, opts, text, work, program, env, args):
    proj = os.path.join(work, "cmake-project")
    shutil.rmtree(proj, ignore_errors=True)
    os.makedirs(proj)
    if program is None:
        raise Failure(f"{where}: a cmake block needs a c, cpp or fortran block on its page")
    lang, source = program
    src = "app." + PROGRAMS[lang]
    open(os.path.join(proj, src), "w").write(source)
    langs = ["C", "CXX"]
    if lang == "fortran" or (args.fc and re.search(r"fortran", text, re.I)):
        langs.append("Fortran")
    with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.13)\n"
                f"project(doc LANGUAGES {' '.join(langs)})\n"
                f"add_executable(solver {src})\n" + text)
    cfg = [args.cmake, "-S", proj, "-B", os.path.join(proj, "build"),
           "-DCMAKE_PREFIX_PATH=" + args.prefix] + [o for o in opts if o.startswith("-D")]
    if args.generator:
        cfg += ["-G", args.generator]
    if args.fc:
        cfg += ["-DCMAKE_Fortran_COMPILER=" + args.fc]
    run(cfg, work, env, f"{where}: configuring")
    run([args.cmake, "--build", os.path.join(proj, "build")], work, env, f"{where}: building")


def run_page(page, work, env, args):
    """Run the test blocks of one page in order: (blocks run, skip reason)."""
    problems = lint(page)
    if problems:
        raise Failure("\n     ".join(problems))
    found = blocks(page)
    ran = 0
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.symlink(os.path.join(args.source, "examples"), os.path.join(work, "examples"))
    program = None  # the page's last (lang, text) program, for cmake blocks
    for k, (line, lang, flags, text) in enumerate(found):
        if not flags or flags[0] != "test":
            continue
        where = f"{page}:{line} ({lang} block)"
        opts = flags[1:]
        missing = needs(lang, opts, text, env, args)
        if missing:
            return ran, f"from line {line} on: this build has no {missing}"
        ran += 1
        if lang in PROGRAMS:
            program = (lang, text)
            stdout = build_program(where, lang, opts, text, work, env, args)
            if stdout is not None:
                compare(where, found, k, stdout)
            elif k + 1 < len(found) and found[k + 1][1] == "output" and \
                    follows(found[k], found[k + 1]):
                raise Failure(f"{where}: an output is shown for a program that is not run")
        elif lang == "sh":
            proc = run(["bash", "-e", "-o", "pipefail", "-c", text], work, env,
                       f"{where}: running", shell=False)
            compare(where, found, k, proc.stdout)
        else:
            nxt = next(((b[1], b[3]) for b in found[k + 1:]
                        if b[1] in PROGRAMS and b[2] and b[2][0] == "test"), None)
            build_cmake(where, opts, text, work, program or nxt, env, args)
    return ran, None


ENV_READ = re.compile(r'\b(?:getenv|env_[a-z0-9_]+|flag_on)\(\s*"(SCOPE_PROFILER_\w+)"')


def check_variables(source):
    """Every SCOPE_PROFILER_* variable the code reads is on the guide's
    environment page and in scope-profiler(7), and neither lists one the
    code does not read."""
    read = set()
    for top in ("c/src", "pmpi", "shims", "instrument", "cli", "merge/src"):
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
    ap.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--build")
    ap.add_argument("--work")
    ap.add_argument("--lint", action="store_true", help="only check that every block is marked")
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--generator", default="")
    ap.add_argument("--fc", default="gfortran")
    ap.add_argument("--man", default="", help="comma list of tools whose man(1) page must install")
    ap.add_argument("pages", nargs="*")
    args = ap.parse_args()
    args.source = os.path.abspath(args.source)
    pages = [os.path.abspath(p) for p in args.pages] or \
        ([os.path.join(args.source, "README.md")] +
         sorted(glob.glob(os.path.join(args.source, "docs", "guide", "*.md"))))
    if args.lint:
        problems = [p for page in pages for p in lint(page)]
        for p in problems:
            print("FAIL", p)
        print(f"docs_test --lint: {len(pages)} page(s), {len(problems)} unmarked or "
              "misplaced block(s)")
        return 1 if problems else 0
    if not args.build or not args.work:
        ap.error("--build and --work are needed (or --lint)")
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
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SCOPE_PROFILER_") and k not in JOB_IDS}
    env["PATH"] = os.path.join(args.prefix, "bin") + os.pathsep + env.get("PATH", "")
    libdirs = glob.glob(os.path.join(args.prefix, "lib*", "pkgconfig")) + \
        glob.glob(os.path.join(args.prefix, "lib", "*", "pkgconfig"))
    env["PKG_CONFIG_PATH"] = os.pathsep.join(libdirs)
    # As tests/mpi: Open MPI as root (CI, containers), more ranks than
    # cores, no single-copy mechanism a container may refuse.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
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
        rel = os.path.relpath(page, args.source)
        name = rel.replace(os.sep, "_").replace(".md", "")
        try:
            n, skipped = run_page(page, os.path.join(os.path.abspath(args.work), "pages", name),
                                  env, args)
            total += n
            print(f"ok   {rel}: {n} block(s)" + (f"; skipped {skipped}" if skipped else ""))
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
