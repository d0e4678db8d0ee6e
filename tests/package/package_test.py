#!/usr/bin/env python3
"""package_test.py - drive the packaging tests: install the build tree, then
build and run out-of-tree consumers against the installed (and relocated)
package, the way a user would.

Subcommands (see tests/package/CMakeLists.txt for how ctest calls them):

  install  --build-dir B --prefix P [--config C]
      `cmake --install B --prefix P` into an empty P, check that the expected
      files are there and that no installed file names P (a file naming its
      own prefix would break when the tree moves).

  relocate --build-dir B --staging S --dest D [--config C]
      Install into S, then move S to D (a different, deeper path). S no
      longer exists afterwards, so any reference to it fails loudly.

  consumer --kind c|cxx|fortran|fortran_stub|makefile|mpi|old_policies|pkgconfig_c|pkgconfig_fortran
           --prefix P --work W [-- CMAKE_ARGS]
      Configure, build and run consumers/<kind> out of tree against P; the
      written profile must be schema 3 and hold the consumer's regions, and
      P/bin/scope-inspect must read it. The mpi kind runs under
      `mpirun -np 2` (--mpiexec) and expects one file with both ranks.
      The pkgconfig kinds compile consumers/c or consumers/fortran with
      nothing but the compiler and `pkg-config --cflags --libs` (plus
      --static when P holds a static build), the line a user types, and
      check with ldd that the program needs no liblikwid or liblua.
      The old_policies kind builds the c and fortran consumers' sources in
      a project that starts with cmake_minimum_required(VERSION 3.5) and
      (CMake < 4) lowers its policies to a VERSION 3.0 project's: the
      package must configure without a warning or error of its own.
      The fortran_stub kind builds consumers/fortran's source unchanged
      with ScopeProfiler::scopeprofiler_fortran_stub, and again with the
      stub source pkg-config names: it must run, write no profile and
      need no libscopeprofiler.

  static --source S --work W [-- CMAKE_ARGS]
      Build S with -DBUILD_SHARED_LIBS=OFF, install it, move the tree, and
      run the installed tools and the c, pkgconfig_c and pkgconfig_fortran
      consumers against the moved static tree.

  subproject --mode add_subdirectory|fetchcontent --source S --work W
             --expect-targets a,b [-- CMAKE_ARGS]
      Build consumers/<mode>, which pulls the SOURCE tree S into its own
      build, and run the C, C++ and Fortran programs it builds through the
      in-tree ScopeProfiler:: targets; each profile is checked as above.

  missing-component --prefix P --work W [-- CMAKE_ARGS]
      Requesting a component this installation lacks must fail the
      configuration with a message naming it and the reason; requesting it
      as optional must succeed with <comp>_FOUND false.

  version --prefix P --work W [-- CMAKE_ARGS]
      A newer major version must be refused; the installed one accepted.

Exit codes: 0 pass, 1 fail, 77 skip.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_check  # noqa: E402  (sibling module)

HERE = os.path.dirname(os.path.abspath(__file__))
CONSUMERS = os.path.join(HERE, "consumers")
SKIP = 77

# Regions each consumer records, with their call counts (see its source).
EXPECTED = {
    "c": {"c_consumer_outer": 1, "c_consumer_inner": 3},
    "cxx": {"cxx_consumer_main": 1, "cxx_consumer_loop": 3, "cxx_consumer_work": 3},
    "fortran": {"fortran_consumer_outer": 1, "fortran_consumer_inner": 2},
    "makefile": {"make_consumer_outer": 1, "make_consumer_inner": 2},
    # Summed over the ranks of a 2-rank job; per rank in MPI_ROWS.
    "mpi": {"mpi_consumer_all": 2, "mpi_consumer_rank0": 1, "mpi_consumer_rank1": 2},
}
EXECUTABLE = {"c": "c_consumer", "cxx": "cxx_consumer", "fortran": "fortran_consumer",
              "makefile": "make_consumer", "mpi": "mpi_consumer"}
# The pkg-config consumers build the c and fortran consumers' sources.
PKGCONFIG_KINDS = {"pkgconfig_c": ("c", "main.c", "scopeprofiler"),
                   "pkgconfig_fortran": ("fortran", "main.f90", "scopeprofiler-fortran")}
for _kind, (_base, _, _) in PKGCONFIG_KINDS.items():
    EXPECTED[_kind] = EXPECTED[_base]
    EXECUTABLE[_kind] = f"{_kind}_consumer"
# Optional libraries a plain consumer must never load (LIKWID is dlopened
# by the library only when a run asks for it).
FORBIDDEN_LIBRARIES = ("liblikwid", "liblua")
MPI_RANKS = 2
# (rank, region) -> calls that the one file of the MPI job must hold.
MPI_ROWS = {(0, "mpi_consumer_all"): 1, (0, "mpi_consumer_rank0"): 1,
            (1, "mpi_consumer_all"): 1, (1, "mpi_consumer_rank1"): 2}
# Open MPI refuses root without these (CI containers run as root), and the
# vader single-copy mechanism needs ptrace rights containers rarely grant.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
# Public headers every installation has (c/include and merge/include); the
# MPI header only comes with an MPI build.
PUBLIC_HEADERS = ["scope_profiler.h", "scope_profiler_version.h", "scope_profiler_results.h",
                  "scope_profiler_summary.h", "scope_profiler_merge.h"]


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def run(cmd, cwd=None, env=None, expect_ok=True):
    """Run cmd, echo it and its output; return (returncode, output)."""
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    if expect_ok and proc.returncode != 0:
        raise Failure(f"command failed with exit code {proc.returncode}: {' '.join(cmd)}")
    return proc.returncode, proc.stdout


def fresh_dir(path):
    if os.path.lexists(path):
        shutil.rmtree(path)
    os.makedirs(path)


def cmake_dir(prefix, libdir):
    return os.path.join(prefix, libdir, "cmake", "ScopeProfiler")


def installed_facts(prefix, libdir):
    """What the installed config says: (components built, static?)."""
    config = os.path.join(cmake_dir(prefix, libdir), "ScopeProfilerConfig.cmake")
    if not os.path.isfile(config):
        raise Failure(f"{config} is missing (did the install step run?)")
    text = open(config, encoding="utf-8").read()
    built = re.search(r'set\(ScopeProfiler_COMPONENTS_BUILT "([^"]*)"\)', text)
    static = re.search(r"set\(ScopeProfiler_STATIC (\w+)\)", text)
    if not built or not static:
        raise Failure(f"{config}: cannot find COMPONENTS_BUILT / STATIC")
    return built.group(1).split(";"), static.group(1).upper() in ("ON", "TRUE", "1")


# ---------------------------------------------------------------- install

def do_install(build_dir, prefix, config, libdir, cmake):
    fresh_dir(prefix)
    cmd = [cmake, "--install", build_dir, "--prefix", prefix]
    if config:
        cmd += ["--config", config]
    run(cmd)


def check_install_tree(prefix, libdir, includedir, tools):
    built, static = installed_facts(prefix, libdir)
    must = [
        os.path.join(cmake_dir(prefix, libdir), name)
        for name in ("ScopeProfilerConfig.cmake", "ScopeProfilerConfigVersion.cmake",
                     "ScopeProfilerTargets.cmake")
    ] + [
        os.path.join(prefix, libdir, "pkgconfig", "scopeprofiler.pc"),
    ] + [os.path.join(prefix, includedir, h) for h in PUBLIC_HEADERS]
    if "MPI" in built:
        must.append(os.path.join(prefix, includedir, "scope_profiler_mpi.h"))
    if "CXX" in built:
        must.append(os.path.join(prefix, includedir, "scope_profiler.hpp"))
    if "Fortran" in built:
        must.append(os.path.join(prefix, libdir, "pkgconfig", "scopeprofiler-fortran.pc"))
    missing = [p for p in must if not os.path.isfile(p)]
    if "Fortran" in built:
        mods = [os.path.join(root, f) for root, _, files in
                os.walk(os.path.join(prefix, includedir, "scope_profiler", "fortran"))
                for f in files if f.endswith(".mod")]
        if not mods:
            missing.append(f"{prefix}/{includedir}/scope_profiler/fortran/<compiler>/*.mod")
    # Tools are collected before the verdict, so a missing one fails too.
    missing += [os.path.join(prefix, "bin", t) for t in tools
                if not os.path.isfile(os.path.join(prefix, "bin", t))]
    if missing:
        raise Failure("missing from the install tree:\n  " + "\n  ".join(missing))
    # Internal headers must stay internal.
    leaked = [f for f in os.listdir(os.path.join(prefix, includedir))
              if f.endswith(".h") and not f.startswith("scope_profiler")]
    if leaked:
        raise Failure(f"non-public headers installed: {leaked}")

    # Relocatability: no installed file may contain the prefix it was
    # installed to (binaries included: an RPATH naming it would break too).
    needle = os.path.realpath(prefix).encode()
    offenders = []
    for root, _, files in os.walk(prefix):
        for f in files:
            path = os.path.join(root, f)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                if needle in fh.read():
                    offenders.append(os.path.relpath(path, prefix))
    if offenders:
        raise Failure(f"installed files name the install prefix {prefix} "
                      f"(not relocatable): {offenders}")
    check_runnable(prefix, libdir, tools, built)
    print(f"ok: install tree complete and relocatable; components {built}, "
          f"{'static' if static else 'shared'}")


def check_runnable(prefix, libdir, tools, built):
    """Every installed tool and shared library resolves its libraries with
    no help from LD_LIBRARY_PATH (ldd reports no "not found"), and the
    Fortran .pc file points at the directory holding the modules."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    ldd = shutil.which("ldd")
    lib = os.path.join(prefix, libdir)
    binaries = [os.path.join(prefix, "bin", t) for t in tools]
    binaries += [os.path.join(lib, f) for f in os.listdir(lib)
                 if re.search(r"\.so(\.[0-9]+)*$", f) and not os.path.islink(os.path.join(lib, f))]
    for binary in binaries if ldd else []:
        _, out = run([ldd, binary], env=env, expect_ok=False)
        if "not found" in out:
            raise Failure(f"{binary} has unresolved libraries:\n{out}")
    # ldd only proves the loader is satisfied; each tool must also start and
    # answer --help with success from where the tree now is.
    for tool in tools:
        rc, out = run([os.path.join(prefix, "bin", tool), "--help"], env=env, expect_ok=False)
        if rc != 0:
            raise Failure(f"{prefix}/bin/{tool} --help exited with {rc}")
        if "usage" not in out.lower():
            raise Failure(f"{prefix}/bin/{tool} --help printed no usage text")
    pkg_config = shutil.which("pkg-config")
    if "Fortran" in built and pkg_config:
        env["PKG_CONFIG_PATH"] = os.path.join(lib, "pkgconfig")
        _, out = run([pkg_config, "--cflags", "scopeprofiler-fortran"], env=env)
        dirs = [f[2:] for f in out.split() if f.startswith("-I")]
        if not any(os.path.isfile(os.path.join(d, "scope_profiler.mod")) for d in dirs):
            raise Failure(f"pkg-config --cflags scopeprofiler-fortran ({out.strip()}) "
                          "names no directory holding scope_profiler.mod")


def cmd_install(a):
    do_install(a.build_dir, a.prefix, a.config, a.libdir, a.cmake)
    check_install_tree(a.prefix, a.libdir, a.includedir, a.tools)


def cmd_relocate(a):
    do_install(a.build_dir, a.staging, a.config, a.libdir, a.cmake)
    if os.path.lexists(a.dest):
        shutil.rmtree(a.dest)
    os.makedirs(os.path.dirname(a.dest), exist_ok=True)
    shutil.move(a.staging, a.dest)
    if os.path.exists(a.staging):
        raise Failure(f"{a.staging} still exists after the move")
    check_install_tree(a.dest, a.libdir, a.includedir, a.tools)
    print(f"ok: installed tree moved from {a.staging} to {a.dest}")


# ---------------------------------------------------------------- consumers

def configure_args(a, source, build):
    return [a.cmake, "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={a.prefix}",
            # Only the tree under test may satisfy find_package.
            "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
            "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"] + a.cmake_args


def check_profile(path, expected):
    if not os.path.isfile(path):
        raise Failure(f"the consumer wrote no profile at {path}")
    try:
        failures = profile_check.check(path, expected)
    except ImportError:
        raise Skip("h5py is not importable: the profile was written but not read back")
    except profile_check.CheckError as e:
        raise Failure(str(e))
    if failures:
        raise Failure("\n".join(failures))
    print(f"ok: {path} is schema 3 with {expected}")


def check_stub_build(exe, prefix, work):
    """A program built with the stub module runs, writes no profile and
    needs no libscopeprofiler (nothing of the profiler is linked)."""
    profile = os.path.join(work, "stub_consumer.h5")
    run([exe, profile], cwd=work, env=consumer_env())
    if os.path.exists(profile):
        raise Failure(f"{exe}, built with the stub, wrote {profile}")
    ldd = shutil.which("ldd")
    if ldd:
        _, out = run([ldd, exe])
        if "libscopeprofiler" in out:
            raise Failure(f"{exe}, built with the stub, needs libscopeprofiler:\n{out}")
    print(f"ok: {os.path.basename(exe)} runs with the profiler compiled out, links none of it")


def cmd_fortran_stub(a):
    """ScopeProfiler::scopeprofiler_fortran_stub from find_package, and the
    stub source named by pkg-config, each compiled with the unchanged
    Fortran consumer."""
    built, _ = installed_facts(a.prefix, a.libdir)
    if not a.fortran_compiler:
        raise Skip("no Fortran compiler")
    fresh_dir(a.work)
    build = os.path.join(a.work, "build")
    run(configure_args(a, os.path.join(CONSUMERS, "fortran_stub"), build))
    cmd = [a.cmake, "--build", build]
    if a.config:
        cmd += ["--config", a.config]
    run(cmd)
    exe = find_executable(build, "fortran_stub_consumer")
    if exe is None:
        raise Failure(f"fortran_stub_consumer was not built under {build}")
    check_stub_build(exe, a.prefix, a.work)
    pkg_config = shutil.which("pkg-config")
    if "Fortran" not in built or not pkg_config:
        return
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(a.prefix, a.libdir, "pkgconfig")
    _, stub = run([pkg_config, "--variable=fortran_stub", "scopeprofiler-fortran"], env=env)
    stub = stub.strip()
    if not os.path.realpath(stub).startswith(os.path.realpath(a.prefix)) or not os.path.isfile(stub):
        raise Failure(f"pkg-config's fortran_stub {stub!r} is not a file under {a.prefix}")
    pc_build = os.path.join(a.work, "pkgconfig")
    os.makedirs(pc_build)
    exe = os.path.join(pc_build, "stub_consumer")
    run([a.fortran_compiler, "-Wall", "-Werror", stub,
         os.path.join(CONSUMERS, "fortran", "main.f90"), "-o", exe], cwd=pc_build)
    check_stub_build(exe, a.prefix, pc_build)


def cmd_old_policies(a, built):
    """consumers/old_policies: find_package from a project with old policy
    settings (issue 30), C and (when installed) Fortran; both programs run
    and write their profiles."""
    fortran = "Fortran" in built and bool(a.fortran_compiler)
    fresh_dir(a.work)
    build = os.path.join(a.work, "build")
    _, out = run(configure_args(a, os.path.join(CONSUMERS, "old_policies"), build)
                 + [f"-DWITH_FORTRAN={'ON' if fortran else 'OFF'}"])
    # Anything the package file itself warns about (a policy it relies on
    # the caller to set, say) is a failure here, even if the build works.
    own = re.findall(r"CMake (?:Warning|Error|Deprecation Warning)[^\n]*at [^\n]*"
                     r"ScopeProfiler[A-Za-z]*\.cmake:\d+", out)
    if own:
        raise Failure(f"the package file complains under old policies: {own}")
    cmd = [a.cmake, "--build", build]
    if a.config:
        cmd += ["--config", a.config]
    run(cmd)
    kinds = ["c"] + (["fortran"] if fortran else [])
    for kind in kinds:
        exe = find_executable(build, f"old_policies_{kind}_consumer")
        if exe is None:
            raise Failure(f"old_policies_{kind}_consumer was not built under {build}")
        profile = os.path.join(a.work, f"old_policies_{kind}.h5")
        run_consumer(exe, profile, a.work)
        check_profile(profile, EXPECTED[kind])
    print(f"ok: a project with old policies found the package and built {kinds}")


def cmd_consumer(a):
    built, static = installed_facts(a.prefix, a.libdir)
    kind = a.kind
    if kind == "fortran_stub":
        return cmd_fortran_stub(a)
    if kind == "old_policies":
        return cmd_old_policies(a, built)
    if kind == "cxx" and "CXX" not in built:
        raise Skip("the C++ binding was not built")
    if kind == "fortran":
        if "Fortran" not in built:
            raise Skip("the Fortran module was not built")
    if kind == "mpi" and "MPI" not in built:
        raise Skip("MPI support was not built")
    if kind == "pkgconfig_fortran" and "Fortran" not in built:
        raise Skip("the Fortran module was not built")
    fresh_dir(a.work)
    source = os.path.join(CONSUMERS, PKGCONFIG_KINDS.get(kind, (kind,))[0])
    build = os.path.join(a.work, "build")
    if kind in PKGCONFIG_KINDS:
        build_pkgconfig_consumer(a, kind, source, build, static)
    elif kind == "makefile":
        make = shutil.which(a.make or "make")
        pkg_config = shutil.which("pkg-config")
        if not make or not pkg_config:
            raise Skip("make or pkg-config is not available")
        os.makedirs(build)
        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.path.join(a.prefix, a.libdir, "pkgconfig")
        # The prefix pkg-config reports must be the tree under test, wherever
        # it was moved: the .pc derives it from its own location.
        _, reported = run([pkg_config, "--variable=prefix", "scopeprofiler"], env=env)
        if os.path.realpath(reported.strip()) != os.path.realpath(a.prefix):
            raise Failure(f"pkg-config prefix {reported.strip()!r} is not {a.prefix!r}")
        cmd = [make, "-f", os.path.join(source, "Makefile"), f"SRCDIR={source}"]
        if a.c_compiler:
            cmd.append(f"CC={a.c_compiler}")
        if static:
            cmd.append("PKG_CONFIG_STATIC=--static")
        run(cmd, cwd=build, env=env)
    else:
        run(configure_args(a, source, build))
        cmd = [a.cmake, "--build", build]
        if a.config:
            cmd += ["--config", a.config]
        run(cmd)
    exe = find_executable(build, EXECUTABLE[kind])
    if exe is None:
        raise Failure(f"{EXECUTABLE[kind]} was not built under {build}")
    profile = os.path.join(a.work, f"{kind}_consumer.h5")
    if kind == "mpi":
        run_mpi_consumer(a, exe, profile)
    else:
        run_consumer(exe, profile, a.work)
    check_profile(profile, EXPECTED[kind])
    # The installed tool must read what an installed library wrote, from
    # the same (possibly moved) tree.
    inspect_profile(os.path.join(a.prefix, "bin", "scope-inspect"), profile, EXPECTED[kind],
                    MPI_RANKS if kind == "mpi" else 1)


def build_pkgconfig_consumer(a, kind, source, build, static):
    """compiler source -o exe $(pkg-config [--static] --cflags --libs pc):
    no other flag, no LD_LIBRARY_PATH at run time."""
    pkg_config = shutil.which("pkg-config")
    if not pkg_config:
        raise Skip("pkg-config is not available")
    _, file_name, package = PKGCONFIG_KINDS[kind]
    compiler = a.c_compiler if kind == "pkgconfig_c" else a.fortran_compiler
    if not compiler:
        raise Skip(f"no compiler given for {kind}")
    os.makedirs(build)
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(a.prefix, a.libdir, "pkgconfig")
    query = [pkg_config] + (["--static"] if static else []) + ["--cflags", "--libs", package]
    _, flags = run(query, env=env)
    exe = os.path.join(build, EXECUTABLE[kind])
    run([compiler, os.path.join(source, file_name), "-o", exe] + flags.split(), env=env)
    check_needed_libraries(exe, a.prefix, static)


def check_needed_libraries(exe, prefix, static):
    """ldd of a consumer: no optional library it does not use; the shared
    libscopeprofiler found in the tree under test (by the run path the .pc
    gave), or not needed at all when linked statically."""
    ldd = shutil.which("ldd")
    if not ldd:
        return
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    _, out = run([ldd, exe], env=env)
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    forbidden = [n for n in names if n.startswith(FORBIDDEN_LIBRARIES)]
    if forbidden:
        raise Failure(f"{exe} loads {forbidden}, which it does not use:\n{out}")
    ours = [line for line in out.splitlines() if "libscopeprofiler" in line]
    if static and ours:
        raise Failure(f"{exe} was linked statically but needs {ours}")
    real_prefix = os.path.realpath(prefix)
    if not static and not any(real_prefix in os.path.realpath(line.split("=>")[-1].split()[0])
                              for line in ours if "=>" in line):
        raise Failure(f"{exe} does not find libscopeprofiler under {prefix}:\n{out}")
    print(f"ok: ldd {os.path.basename(exe)}: {' '.join(names)}")


def find_executable(build, name):
    for root, _, files in os.walk(build):
        if name in files:
            return os.path.join(root, name)
    return None


def consumer_env():
    env = dict(os.environ)
    # The library must be found through the consumer's own RUNPATH, not an
    # inherited search path.
    env.pop("LD_LIBRARY_PATH", None)
    env["SCOPE_PROFILER_QUIET"] = "1"
    return env


def run_consumer(exe, profile, work):
    run([exe, profile], cwd=work, env=consumer_env())


def run_mpi_consumer(a, exe, profile):
    mpiexec = a.mpiexec or shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpiexec:
        raise Skip("no mpirun/mpiexec to start the MPI consumer")
    env = consumer_env()
    env.update(MPI_ENV)
    run([mpiexec, "--oversubscribe", "-np", str(MPI_RANKS), exe, profile], cwd=a.work, env=env)
    # One file for the job: no per-rank files next to it.
    written = sorted(f for f in os.listdir(a.work) if f != "build")
    if written != [os.path.basename(profile)]:
        raise Failure(f"the MPI job should write exactly {os.path.basename(profile)}, "
                      f"it wrote {written}")
    try:
        rows, meta = profile_check.read_rank_rows(profile)
    except ImportError:
        raise Skip("h5py is not importable: the profile was written but not read back")
    except profile_check.CheckError as e:
        raise Failure(str(e))
    if rows != MPI_ROWS:
        raise Failure(f"{profile}: rows (rank, region) -> calls are {rows}, expected {MPI_ROWS}")
    if meta.get("mpi_size") != MPI_RANKS:
        raise Failure(f"{profile}: metadata mpi_size is {meta.get('mpi_size')!r}, "
                      f"expected {MPI_RANKS}")
    print(f"ok: one file holds ranks 0..{MPI_RANKS - 1}, mpi_size {MPI_RANKS}")


def inspect_profile(tool, profile, expected, ranks):
    """`tool --json profile` must succeed and report the regions and call
    counts the consumer recorded, over `ranks` ranks."""
    if not os.path.isfile(tool):
        raise Failure(f"{tool} is missing")
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    # stdout only: the JSON is parsed, diagnostics stay out of it.
    print(f"+ {tool} --json {profile}", flush=True)
    proc = subprocess.run([tool, "--json", profile], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    sys.stdout.write(proc.stderr)
    if proc.returncode != 0:
        raise Failure(f"{tool} exited with {proc.returncode} on {profile}")
    try:
        report = json.loads(proc.stdout)
    except ValueError as e:
        raise Failure(f"{tool} --json printed no JSON: {e}\n{proc.stdout}")
    calls = {r.get("name"): r.get("num_calls") for r in report.get("regions", [])}
    wrong = {name: calls.get(name) for name, n in expected.items() if calls.get(name) != n}
    if wrong or report.get("num_ranks") != ranks:
        raise Failure(f"{tool} reports calls {calls} over {report.get('num_ranks')} ranks; "
                      f"expected {expected} over {ranks}")
    print(f"ok: {os.path.basename(tool)} reads {os.path.basename(profile)}")


# ---------------------------------------------------------------- in-tree

def cmd_subproject(a):
    """Build consumers/<mode> (add_subdirectory or FetchContent of the
    source tree) and run each program it built."""
    fresh_dir(a.work)
    source = os.path.join(CONSUMERS, a.mode)
    build = os.path.join(a.work, "build")
    targets = ";".join(a.expect_targets)
    run([a.cmake, "-S", source, "-B", build,
         f"-DSCOPE_PROFILER_SOURCE_DIR={a.source}",
         f"-DSCOPE_PROFILER_EXPECT_TARGETS={targets}",
         # The nested build: the library, its bindings and tools only.
         "-DBUILD_TESTING=OFF", "-DSCOPE_PROFILER_EXAMPLES=OFF",
         "-DSCOPE_PROFILER_BENCHMARKS=OFF",
         # No installed copy may stand in for the source tree.
         "-DCMAKE_DISABLE_FIND_PACKAGE_ScopeProfiler=ON"] + a.cmake_args)
    cmd = [a.cmake, "--build", build]
    if a.config:
        cmd += ["--config", a.config]
    run(cmd)
    # Each program the installed package's targets allow must have been
    # built from the in-tree targets of the same names.
    kinds = ["c"]
    if "scopeprofiler_cxx" in a.expect_targets:
        kinds.append("cxx")
    if "scopeprofiler_fortran" in a.expect_targets:
        kinds.append("fortran")
    inspect = find_executable(build, "scope-inspect")
    for kind in kinds:
        exe = find_executable(build, EXECUTABLE[kind])
        if exe is None:
            raise Failure(f"{EXECUTABLE[kind]} was not built under {build}")
        profile = os.path.join(a.work, f"{kind}_consumer.h5")
        run_consumer(exe, profile, a.work)
        check_profile(profile, EXPECTED[kind])
        # The tool built in the same nested build reads it too.
        if inspect:
            inspect_profile(inspect, profile, EXPECTED[kind], 1)
    print(f"ok: {a.mode} of {a.source}: {kinds} built and ran through "
          f"ScopeProfiler::{{{','.join(a.expect_targets)}}}")


def cmd_static(a):
    """The static archive, still available with -DBUILD_SHARED_LIBS=OFF:
    installed, moved, its tools run, and the find_package and pkg-config
    --static consumers link it and run."""
    fresh_dir(a.work)
    build = os.path.join(a.work, "build")
    # The caller's arguments first: this test's choices win over theirs.
    run([a.cmake, "-S", a.source, "-B", build] + a.cmake_args +
        ["-DBUILD_SHARED_LIBS=OFF", "-DSCOPE_PROFILER_TESTS=OFF",
         "-DSCOPE_PROFILER_EXAMPLES=OFF", "-DSCOPE_PROFILER_BENCHMARKS=OFF"])
    cmd = [a.cmake, "--build", build]
    if a.config:
        cmd += ["--config", a.config]
    run(cmd + ["--parallel", str(os.cpu_count() or 2)])
    staging = os.path.join(a.work, "staging")
    dest = os.path.join(a.work, "moved", "static", "tree")
    do_install(build, staging, a.config, a.libdir, a.cmake)
    os.makedirs(os.path.dirname(dest))
    shutil.move(staging, dest)
    check_install_tree(dest, a.libdir, a.includedir, a.tools)
    built, static = installed_facts(dest, a.libdir)
    if not static:
        raise Failure(f"{dest}: the package config does not say STATIC for a static build")
    consumer_args = [arg for arg in a.cmake_args if not arg.startswith("-DBUILD_SHARED_LIBS")]
    for kind in ["c", "pkgconfig_c", "pkgconfig_fortran"]:
        if kind == "pkgconfig_fortran" and "Fortran" not in built:
            continue
        args = argparse.Namespace(**dict(vars(a), kind=kind, prefix=dest,
                                         work=os.path.join(a.work, "consumers", kind),
                                         cmake_args=consumer_args))
        cmd_consumer(args)
    print(f"ok: static build installed at {dest} links and runs its consumers")


REASONS = {"MPI": "MPI support was not built",
           "Fortran": "the Fortran module was not built",
           "CXX": "the C++ binding was not built"}


def expect_missing(a, prefix, comp, reason, name):
    """Requesting comp from the package at prefix must fail, naming comp and
    the reason; requesting it as optional must succeed with _FOUND false."""
    source = os.path.join(CONSUMERS, "probe")
    args = dict(vars(a))
    args["prefix"] = prefix
    probe = argparse.Namespace(**args)

    build = os.path.join(a.work, name, "required")
    fresh_dir(build)
    rc, out = run(configure_args(probe, source, build) + [f"-DPROBE_COMPONENTS={comp}"],
                  expect_ok=False)
    flat = " ".join(out.split())  # CMake wraps long messages
    if rc == 0:
        raise Failure(f"configuration succeeded although component {comp} is missing")
    for needle in (f"lacks the requested component(s): {comp} ({reason}",
                   "considered to be NOT FOUND"):
        if needle not in flat:
            raise Failure(f"the failure message does not contain {needle!r}")
    print(f"ok: requesting {comp} fails with a message naming it and why")

    build = os.path.join(a.work, name, "optional")
    fresh_dir(build)
    rc, out = run(configure_args(probe, source, build) + [f"-DPROBE_OPTIONAL={comp}"],
                  expect_ok=False)
    if rc != 0:
        raise Failure(f"an optional missing component {comp} failed the configuration")
    if f"probe: ScopeProfiler_{comp}_FOUND=FALSE" not in out:
        raise Failure(f"ScopeProfiler_{comp}_FOUND is not FALSE for a missing optional component")
    print(f"ok: optional {comp} is reported not found without failing")


def cmd_missing_component(a):
    built, _ = installed_facts(a.prefix, a.libdir)
    source = os.path.join(CONSUMERS, "probe")

    # Every built component can be requested, and comes with its target
    # (the probe checks the targets).
    build = os.path.join(a.work, "built")
    fresh_dir(build)
    run(configure_args(a, source, build) + ["-DPROBE_COMPONENTS=" + ";".join(built)])
    print(f"ok: the built components {built} are found with their targets")

    # A typo must not look like success.
    expect_missing(a, a.prefix, "NoSuchComponent", "unknown component", "unknown")

    absent = [c for c in ("MPI", "Fortran", "CXX") if c not in built]
    if absent:
        expect_missing(a, a.prefix, absent[0], REASONS[absent[0]], "absent")
        return
    # This build has every component. The not-built path is still checked,
    # on a copy of the installed tree whose config declares only C built
    # (the tree is relocatable, so the copy is a complete package).
    fake = os.path.join(a.work, "c-only-prefix")
    if os.path.lexists(fake):
        shutil.rmtree(fake)
    shutil.copytree(a.prefix, fake, symlinks=True)
    config = os.path.join(cmake_dir(fake, a.libdir), "ScopeProfilerConfig.cmake")
    text = open(config, encoding="utf-8").read()
    text, n = re.subn(r'set\(ScopeProfiler_COMPONENTS_BUILT "[^"]*"\)',
                      'set(ScopeProfiler_COMPONENTS_BUILT "C")', text)
    if n != 1:
        raise Failure(f"{config}: cannot rewrite ScopeProfiler_COMPONENTS_BUILT")
    open(config, "w", encoding="utf-8").write(text)
    expect_missing(a, fake, "MPI", REASONS["MPI"], "absent")


def cmd_version(a):
    source = os.path.join(CONSUMERS, "probe")
    config = os.path.join(cmake_dir(a.prefix, a.libdir), "ScopeProfilerConfigVersion.cmake")
    m = re.search(r'set\(PACKAGE_VERSION "([0-9]+)\.([0-9]+)\.([0-9]+)"\)',
                  open(config, encoding="utf-8").read())
    if not m:
        raise Failure(f"{config}: no PACKAGE_VERSION")
    major, minor = int(m.group(1)), int(m.group(2))

    build = os.path.join(a.work, "same")
    fresh_dir(build)
    run(configure_args(a, source, build) + [f"-DPROBE_VERSION={major}.{minor}"])

    build = os.path.join(a.work, "newer")
    fresh_dir(build)
    rc, out = run(configure_args(a, source, build) + [f"-DPROBE_VERSION={major + 1}.0"],
                  expect_ok=False)
    if rc == 0:
        raise Failure(f"version {major + 1}.0 was accepted by {m.group(0)}")
    if "compatible with requested version" not in " ".join(out.split()):
        raise Failure("the refusal does not say the version is not compatible")
    print(f"ok: {major}.{minor} accepted, {major + 1}.0 refused (SameMajorVersion)")


def main(argv):
    cmake_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, cmake_args = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command",
                   choices=["install", "relocate", "consumer", "subproject",
                            "missing-component", "version", "static"])
    p.add_argument("--build-dir")
    p.add_argument("--prefix")
    p.add_argument("--staging")
    p.add_argument("--dest")
    p.add_argument("--work")
    p.add_argument("--kind", choices=sorted(EXPECTED) + ["fortran_stub", "old_policies"])
    p.add_argument("--config", default="")
    p.add_argument("--cmake", default="cmake")
    p.add_argument("--make", default="")
    p.add_argument("--c-compiler", default="")
    p.add_argument("--fortran-compiler", default="")
    p.add_argument("--libdir", default="lib")
    p.add_argument("--includedir", default="include")
    p.add_argument("--tools", default="", help="comma-separated tools that must be in bin/")
    p.add_argument("--mpiexec", default="", help="MPI launcher for the mpi consumer")
    p.add_argument("--mode", choices=["add_subdirectory", "fetchcontent"])
    p.add_argument("--source", help="scope-profiler source tree (subproject)")
    p.add_argument("--expect-targets", default="",
                   help="comma-separated ScopeProfiler:: names the in-tree build must have")
    a = p.parse_args(argv)
    a.cmake_args = [arg for arg in cmake_args if arg]
    a.tools = [t for t in a.tools.split(",") if t]
    a.expect_targets = [t for t in a.expect_targets.split(",") if t]
    handler = {"install": cmd_install, "relocate": cmd_relocate, "consumer": cmd_consumer,
               "subproject": cmd_subproject, "static": cmd_static,
               "missing-component": cmd_missing_component, "version": cmd_version}[a.command]
    try:
        handler(a)
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP
    except Failure as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
