#!/usr/bin/env bash
# bench/threads/run.sh [THREADS] [BUILD_DIR]: 40,000 short-lived threads
# (default), one call each, in waves of 8, with default settings (report
# and summary printed, the default buffer limit), in trace and aggregate
# mode and without the profiler (the baseline), each in a fresh process,
# over 3 rounds; ten children forked over each run, timed from fork() to
# waitpid(). Goals (issue: bounded memory after recording): peak RSS
# <= 96 MiB in both modes; every forked child done in <= 100 ms.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
threads="${1:-40000}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
. "${here}/../release_build.sh"
if [ $# -ge 2 ]; then
  exe="$2/bench/threads/sp_bench_threads"
else
  release_build "${root}" "${work}" sp_bench_threads
  exe="${work}/build/bench/threads/sp_bench_threads"
fi
machine_line
for round in 1 2 3; do
  for mode in none trace aggregate; do
    # the report and the summary go to stdout: only the figures are shown
    "${exe}" "${threads}" "${mode}" "${work}/${mode}.h5" 10 | grep -E "^(none|trace|aggregate) "
  done
done
