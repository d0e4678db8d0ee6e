#!/usr/bin/env bash
# bench/overhead/run.sh [BUILD_DIR]: what a begin/end pair costs.
#
# Without BUILD_DIR: a Release build of this tree, installed into a
# temporary prefix, the benchmark linked against the installed library (as
# a user's program is). Prints the warm figures (sessions reusing memory)
# and then the honest ones: ONE long session per process on cold memory,
# TSC and CLOCK_MONOTONIC, interleaved with the two-clock_gettime baseline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
if [ $# -ge 1 ]; then
  exe="$1/bench/overhead/sp_bench_overhead"
else
  echo "== Release build of ${root}, installed into ${work}/prefix" >&2
  cmake -S "${root}" -B "${work}/build" -DCMAKE_BUILD_TYPE=Release -DSCOPE_PROFILER_TESTS=OFF \
    -DSCOPE_PROFILER_EXAMPLES=OFF -DSCOPE_PROFILER_BENCHMARKS=ON >/dev/null
  cmake --build "${work}/build" -j "$(nproc)" --target sp_bench_overhead >/dev/null
  exe="${work}/build/bench/overhead/sp_bench_overhead"
fi
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
${pin} "${exe}" 3000000 5
${pin} "${exe}" --cold-report 20000000 3
