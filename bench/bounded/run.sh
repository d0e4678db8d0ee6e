#!/usr/bin/env bash
# bench/bounded/run.sh [CALLS] : a bounded trace against the unlimited one,
# in the installed Release build, one long session per process.
#
#   50M calls (default) with a 64 MiB limit that flushes, and without a
#   limit (the in-memory path), interleaved over 3 rounds, a fresh process
#   each time. Goals (issue: bounded traces): flushing peak RSS, finalize
#   included, <= limit + 64 MiB; every call in the file (h5py and
#   scope-inspect agree, scope-check passes); recording cost of flushing
#   <= 5 ns per call over the unlimited run; finalize <= 1.5x the
#   in-memory finalize. The output goes to this tree's bench/bounded/out
#   (the disk a user's output would be on), not to a tmpfs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
calls="${1:-50000000}"
work="$(mktemp -d)"
out="${here}/out"
mkdir -p "${out}"
trap 'rm -rf "${work}" "${out}"' EXIT
. "${here}/../release_build.sh"
release_build "${root}" "${work}"
cmake --install "${work}/build" --prefix "${work}/prefix" >/dev/null
cc -O2 -std=c11 "${here}/bounded_bench.c" -o "${work}/sp_bench_bounded" \
  $(PKG_CONFIG_PATH="${work}/prefix/lib/pkgconfig" pkg-config --cflags --libs scopeprofiler)
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
machine_line
echo "output directory: ${out} ($(df -T "${out}" | awk 'NR==2 {print $2}'))"
for round in 1 2 3; do
  ${pin} "${work}/sp_bench_bounded" "${calls}" 0 flush "${out}/unlimited.h5"
  ${pin} "${work}/sp_bench_bounded" "${calls}" $((64 << 20)) flush "${out}/flushed.h5"
done
echo "== the flushed file"
/usr/bin/python3 - "${out}/flushed.h5" "${calls}" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    n = int(f["rank_region_index/event_counts"][:].sum())
print(f"h5py: {n} calls (want {sys.argv[2]}): {'ok' if n == int(sys.argv[2]) else 'MISSING CALLS'}")
PY
"${work}/prefix/bin/scope-check" "${out}/flushed.h5"
"${work}/prefix/bin/scope-inspect" "${out}/flushed.h5" | grep -E "outer|inner" | head -3
