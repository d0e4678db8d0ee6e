#!/usr/bin/env bash
# bench/clock/run.sh BUILD_DIR [SECONDS]: the TSC conversion over a long run.
# Records for SECONDS (default 60) with idle gaps of 0-40 ms between calls,
# two threads, every call bracketed by clock_gettime(CLOCK_MONOTONIC) reads;
# every stored start and end must lie within its brackets +-100 ns (the
# ctest clock.accuracy.* runs the same check for 3 s). Prints the number of
# calls and the worst excursion outside the brackets.
set -euo pipefail
build="${1:?usage: bench/clock/run.sh BUILD_DIR [SECONDS]}"
seconds="${2:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
for clock in tsc monotonic; do
  /usr/bin/python3 "${here}/../../tests/clock/check_clock.py" \
    "${build}/tests/clock/clock_accuracy" "${work}/${clock}" "${clock}" "${seconds}"
done
