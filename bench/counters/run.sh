#!/usr/bin/env bash
# bench/counters/run.sh [SAMPLES]: the task-clock / wall-time ratio of a
# busy loop inside a region (default 20 samples of 20 ms), in the installed
# Release build, with the machine's load. The ratio is ~1 on an idle core
# and falls with preemption; it is a measurement, not a test (issue 30:
# counters.perf_software failed at 0.59 on a loaded machine).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
samples="${1:-20}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
. "${here}/../release_build.sh"
release_build "${root}" "${work}"
cmake --install "${work}/build" --prefix "${work}/prefix" >/dev/null
cc -O2 -std=c11 -Wall -Wextra "${here}/task_clock_ratio.c" -o "${work}/sp_bench_task_clock" \
  $(PKG_CONFIG_PATH="${work}/prefix/lib/pkgconfig" pkg-config --cflags --libs scopeprofiler)
machine_line
"${work}/sp_bench_task_clock" "${samples}" "${work}/ratio.h5" | tail -1
machine_line
