#!/usr/bin/env bash
# bench/overhead/run.sh [BUILD_DIR]: what a begin/end pair costs.
#
# Without BUILD_DIR: a Release build of this tree (its shared library is
# the one an installation ships; the benchmark needs the build tree for its
# compiled-out and Fortran parts). Prints the warm figures (sessions reusing memory)
# and then the honest ones: ONE long session per process on cold memory,
# TSC and CLOCK_MONOTONIC, interleaved with the two-clock_gettime baseline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
. "${here}/../release_build.sh"
if [ $# -ge 1 ]; then
  exe="$1/bench/overhead/sp_bench_overhead"
else
  release_build "${root}" "${work}" sp_bench_overhead
  exe="${work}/build/bench/overhead/sp_bench_overhead"
fi
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
machine_line
${pin} "${exe}" 3000000 5
${pin} "${exe}" --cold-report 20000000 3
