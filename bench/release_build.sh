# bench/release_build.sh - sourced by the run.sh scripts of bench/: the
# Release build every benchmark measures (a user's build, not the -O0 or
# sanitizer trees of the tests), and the line that says where it ran.

# release_build ROOT WORK [TARGET...]: configure ROOT in WORK/build as
# Release with the benchmarks, build TARGETs (all when none), quietly.
release_build() {
  local root="$1" work="$2"
  shift 2
  echo "== Release build of ${root} in ${work}/build" >&2
  cmake -S "${root}" -B "${work}/build" -DCMAKE_BUILD_TYPE=Release -DSCOPE_PROFILER_TESTS=OFF \
    -DSCOPE_PROFILER_EXAMPLES=OFF -DSCOPE_PROFILER_BENCHMARKS=ON >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "${work}/build" -j "$(nproc)" "${targets[@]}" >/dev/null
}

# The conditions printed with every figure.
machine_line() {
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
}
