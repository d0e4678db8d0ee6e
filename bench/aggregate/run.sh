#!/usr/bin/env bash
# bench/aggregate/run.sh [BUILD_DIR]: aggregate mode against a trace and the
# bare clock, in the installed Release build, one long session per process.
#
#   memory   aggregate mode, 1M and 100M pairs in one session: resident set
#            growth between them (goal < 1 MiB), and finalize time of the
#            100M-pair session (goal < 50 ms)
#   cost     ns per handle pair, 20M pairs per process; baseline (two
#            clock_gettime), trace and aggregate interleaved over 3 rounds,
#            a fresh process each time (cold memory): goal aggregate <= trace
#
# Without BUILD_DIR it configures a Release build of this tree, installs it
# into a temporary prefix and builds the benchmark against the installed
# library, as a user's program would be.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
. "${here}/../release_build.sh"
if [ $# -ge 1 ]; then
  exe="$1/bench/aggregate/sp_bench_aggregate"
else
  release_build "${root}" "${work}"
  cmake --install "${work}/build" --prefix "${work}/prefix" >/dev/null
  cc -O2 -std=c11 "${here}/aggregate_bench.c" -o "${work}/sp_bench_aggregate" \
    $(PKG_CONFIG_PATH="${work}/prefix/lib/pkgconfig" pkg-config --cflags --libs scopeprofiler)
  exe="${work}/sp_bench_aggregate"
fi
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
machine_line
echo "== memory: aggregate mode, one session each"
for pairs in 1000000 100000000; do
  ${pin} "${exe}" "${pairs}" aggregate "${work}/agg.h5"
done
echo "== cost: 20M pairs per process, 3 interleaved rounds"
for round in 1 2 3; do
  for mode in baseline trace aggregate; do
    ${pin} "${exe}" 20000000 "${mode}" "${work}/${mode}.h5"
  done
done
