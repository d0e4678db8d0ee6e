#!/usr/bin/env bash
# bench/bounded/pair_cost.sh LIBDIR_A LIBDIR_B [PAIRS] [ROUNDS]
#
# The handle pair's cost with the default 256 MiB bound (issue 31), two
# builds of the library interleaved: each LIBDIR holds a libscopeprofiler.so.0
# (e.g. copied from two Release build trees, before and after a change);
# sp_bench_pair_cost (pair_cost.c) is built once against LIBDIR_A's headers
# in this tree and run with LD_LIBRARY_PATH set to each. Per round and
# build: pinned to CPU 0 (an MPI rank bound to one core) with the spill
# writer thread and without it (SCOPE_PROFILER_SPILL_THREAD=0), not pinned,
# and no bound (the floor: the same loop without any spill). TSC clock,
# trace, no summary; BUILD_DIR (default ./build) gives the generated version
# header. The output goes to bench/bounded/out (the disk a
# user's output would be on, not a tmpfs). One line per run, with the
# 1-minute load; summarize the medians yourself (RESULTS.md shows how).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
a="$1" b="$2" pairs="${3:-20000000}" rounds="${4:-3}"
out="${here}/out"
mkdir -p "${out}"
work="$(mktemp -d)"
trap 'rm -rf "${work}" "${out}"' EXIT
cc -O2 -std=c11 "${here}/pair_cost.c" -I"${root}/c/include" -I"${BUILD_DIR:-${root}/build}/c/include" \
  -L"${a}" -l:libscopeprofiler.so.0 -o "${work}/pair_cost"
one() { # LABEL LIBDIR PIN LIMIT [ENV...]
  local label="$1" lib="$2" pin="$3" limit="$4"
  shift 4
  local r
  r=$(env LD_LIBRARY_PATH="${lib}" SCOPE_PROFILER_CLOCK=tsc SCOPE_PROFILER_MODE=trace \
        SCOPE_PROFILER_SUMMARY=0 SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_BUFFER_LIMIT="${limit}" "$@" \
        ${pin} "${work}/pair_cost" "${pairs}" "${out}/p.h5" | grep RESULT)
  rm -f "${out}/p.h5"
  echo "${label} | ${r} | load $(cut -d' ' -f1 /proc/loadavg)"
}
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg), ${pairs} pairs, $(nproc) cpus"
for round in $(seq "${rounds}"); do
  for lib in "${a}" "${b}"; do
    one "pinned writer $(basename "${lib}")" "${lib}" "taskset -c 0" 256M
    one "pinned no-writer $(basename "${lib}")" "${lib}" "taskset -c 0" 256M SCOPE_PROFILER_SPILL_THREAD=0
    one "unpinned writer $(basename "${lib}")" "${lib}" "" 256M
  done
  one "pinned no bound $(basename "${b}")" "${b}" "taskset -c 0" 0
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
