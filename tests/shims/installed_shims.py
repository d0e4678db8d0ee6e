#!/usr/bin/python3
"""The shims as users of an installed tree get them: install this build
tree into a prefix of its own, then
  - build every test program (gptl_app, caliper_app, likwid_app; C and
    Fortran) with nothing but its compiler and `pkg-config --cflags --libs
    scopeprofiler-<shim>` (mpicc/mpifort in an MPI build) and run each
    through check_shims.py (2 ranks with MPI);
  - build the three C programs from a CMake project with
    find_package(ScopeProfiler REQUIRED COMPONENTS gptl caliper
    likwid_markers) and the ScopeProfiler::<shim> targets, and run them;
  - check that the installed tree holds no header or module where it could
    shadow a real GPTL, Caliper or LIKWID: ours are under
    include/scope_profiler/shims/<shim> only, and the LIKWID shim installs
    none at all.
"""
import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument("--cmake", required=True)
ap.add_argument("--build-dir", required=True)
ap.add_argument("--config", default="")
ap.add_argument("--libdir", required=True)
ap.add_argument("--pkg-config", required=True)
ap.add_argument("--sources", required=True)
ap.add_argument("--likwid-include", required=True)
ap.add_argument("--likwid-module-dir", default="")
ap.add_argument("--cc", required=True)
ap.add_argument("--plain-cc", help="the C compiler without MPI's wrapper (CMake consumer)")
ap.add_argument("--mpi-c", action="store_true")
ap.add_argument("--fc")
ap.add_argument("--mpi-fortran", action="store_true")
ap.add_argument("--mpiexec", default="")
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

shutil.rmtree(args.workdir, ignore_errors=True)
os.makedirs(args.workdir)
prefix = os.path.join(args.workdir, "prefix")
failures = []


def fail(what):
    failures.append(what)
    print(f"FAIL: {what}")


def run(cmd, env=None):
    print("+", " ".join(shlex.quote(c) for c in cmd))
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=args.workdir)
    if r.returncode != 0:
        print(r.stdout)
        print(r.stderr, file=sys.stderr)
    return r


install = [args.cmake, "--install", args.build_dir, "--prefix", prefix]
if args.config:
    install += ["--config", args.config]
if run(install).returncode != 0:
    print("FAIL: cmake --install")
    sys.exit(1)

env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, args.libdir, "pkgconfig"))
env.pop("PKG_CONFIG_LIBDIR", None)


def pkg(name, *what):
    r = run([args.pkg_config, *what, name], env=env)
    if r.returncode != 0:
        fail(f"pkg-config {' '.join(what)} {name}")
        return []
    return shlex.split(r.stdout)


# Nothing of ours where it could shadow the originals.
include = os.path.join(prefix, "include")
for shadow in ("gptl.h", "caliper", "likwid.h", "likwid-marker.h", "gptl.mod",
               "caliper_mod.mod", "likwid.mod"):
    if os.path.exists(os.path.join(include, shadow)):
        fail(f"include/{shadow} is installed where it would shadow the original")
found = [os.path.relpath(p, prefix) for p in glob.glob(os.path.join(prefix, "**", "*"),
                                                       recursive=True)
         if os.path.basename(p) in ("gptl.h", "cali.h", "cali_macros.h", "gptl.mod",
                                    "caliper_mod.mod")]
for path in found:
    if not path.startswith(os.path.join("include", "scope_profiler", "shims")):
        fail(f"{path} outside include/scope_profiler/shims")
if any("likwid" in os.path.basename(p) and p.endswith((".h", ".mod")) for p in
       glob.glob(os.path.join(include, "**", "*"), recursive=True)):
    fail("a LIKWID header or module is installed")
if any(os.path.join("scope_profiler", "shims") in flag
       for flag in pkg("scopeprofiler-likwid-markers", "--cflags-only-I")):
    fail("scopeprofiler-likwid-markers gives an include directory of ours")

ranks = 2 if (args.mpi_c and args.mpiexec) else 1
programs = []  # (api, lang, exe, mpi)
src = args.sources
for api, pc in (("gptl", "scopeprofiler-gptl"), ("caliper", "scopeprofiler-caliper"),
                ("likwid", "scopeprofiler-likwid-markers")):
    exe = os.path.join(args.workdir, f"{api}_c")
    cmd = [args.cc, os.path.join(src, f"{api}_app.c"), "-o", exe]
    if args.mpi_c:
        cmd.append("-DSP_TEST_MPI")
    if api == "likwid":
        cmd += ["-DLIKWID_PERFMON", "-I" + args.likwid_include]
    cmd += pkg(pc, "--cflags", "--libs")
    if run(cmd).returncode == 0:
        programs.append((api, "c", exe, args.mpi_c))
    else:
        fail(f"{api}: the C program does not build with pkg-config {pc}")
    if not args.fc:
        continue
    exe = os.path.join(args.workdir, f"{api}_fortran")
    moddir = os.path.join(args.workdir, f"mod_{api}")
    os.makedirs(moddir, exist_ok=True)
    cmd = [args.fc, "-J", moddir]
    if api == "likwid" and not args.likwid_module_dir:
        cmd.append(os.path.join(src, "stand_in", "likwid.f90"))
    cmd += [os.path.join(src, f"{api}_app.F90"), "-o", exe]
    if args.mpi_fortran:
        cmd.append("-DSP_TEST_MPI")
    if api == "likwid" and args.likwid_module_dir:
        cmd.append("-I" + args.likwid_module_dir)
    cmd += pkg(pc, "--cflags", "--libs")
    if run(cmd).returncode == 0:
        programs.append((api, "fortran", exe, args.mpi_fortran))
    else:
        fail(f"{api}: the Fortran program does not build with pkg-config {pc}")

for api, lang, exe, mpi in programs:
    cmd = [sys.executable, os.path.join(HERE, "check_shims.py"), "--api", api, "--lang", lang,
           "--mode", "plan", "--program", exe,
           "--workdir", os.path.join(args.workdir, f"run_{api}_{lang}")]
    if mpi and args.mpiexec:
        cmd += ["--mpiexec", args.mpiexec, "--ranks", str(ranks)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        fail(f"{api} {lang} built with pkg-config: check_shims.py exit {r.returncode}")
    else:
        print(f"ok: {api} {lang} built with pkg-config")

# find_package with the shim components, in a project of its own (serial
# programs: the plain C compiler, no MPI of the program's).
project = os.path.join(args.workdir, "cmake_consumer")
os.makedirs(project)
with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
    f.write(f"""cmake_minimum_required(VERSION 3.25)
project(shim_consumer LANGUAGES C)
find_package(ScopeProfiler REQUIRED COMPONENTS gptl caliper likwid_markers)
foreach(api IN ITEMS gptl caliper likwid)
  add_executable(${{api}}_app "{src}/${{api}}_app.c")
endforeach()
target_link_libraries(gptl_app PRIVATE ScopeProfiler::gptl)
target_link_libraries(caliper_app PRIVATE ScopeProfiler::caliper)
target_link_libraries(likwid_app PRIVATE ScopeProfiler::likwid_markers)
target_include_directories(likwid_app PRIVATE "{args.likwid_include}")
target_compile_definitions(likwid_app PRIVATE LIKWID_PERFMON)
""")
build = os.path.join(project, "build")
configure = [args.cmake, "-S", project, "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix,
             "-DCMAKE_C_COMPILER=" + (args.plain_cc or args.cc)]
if args.config:
    configure.append("-DCMAKE_BUILD_TYPE=" + args.config)
if run(configure).returncode != 0 or run([args.cmake, "--build", build]).returncode != 0:
    fail("find_package(ScopeProfiler COMPONENTS gptl caliper likwid_markers) consumer")
else:
    for api in ("gptl", "caliper", "likwid"):
        cmd = [sys.executable, os.path.join(HERE, "check_shims.py"), "--api", api, "--lang", "c",
               "--mode", "plan", "--program", os.path.join(build, f"{api}_app"),
               "--workdir", os.path.join(args.workdir, f"run_cmake_{api}")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(r.stdout)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            fail(f"{api}: the find_package consumer's program fails check_shims.py")
        else:
            print(f"ok: {api} c built through find_package")

print(f"{len(failures)} failed" if failures else "shims installed: all checks passed")
sys.exit(1 if failures else 0)
