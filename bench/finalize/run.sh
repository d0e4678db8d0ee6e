#!/usr/bin/env bash
# bench/finalize/run.sh [CALLS] [ROUNDS]: what sp_finalize costs a long
# trace, summary included, in the installed Release build.
#
#   20M calls of one region and 60M calls over three nested regions (CALLS
#   scales both: default 20000000), default settings (256 MiB bound that
#   flushes, report and summary printed), against the same run with
#   SCOPE_PROFILER_SUMMARY=0, interleaved over ROUNDS rounds (default 3), a
#   fresh process each time. Goals (issue 27): peak RSS <= 352 MiB each with
#   the summary printed; finalize + summary <= 1.2x finalize without it.
#   Each of these runs twice more: SCOPE_PROFILER_WRITE_THREADS=1 (the
#   writing thread alone compresses) and unset (every CPU, at most 8).
#   Goals (issue 31): finalize of 20M calls, summary off, >= 30M calls/s
#   with all threads; the file within +10% of the size before issue 31.
#   The output goes to this tree's bench/finalize/out (a real disk).
#   Figures measured so far, with their conditions: RESULTS.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
calls="${1:-20000000}"
rounds="${2:-3}"
work="$(mktemp -d)"
out="${here}/out"
mkdir -p "${out}"
trap 'rm -rf "${work}" "${out}"' EXIT
. "${here}/../release_build.sh"
release_build "${root}" "${work}"
cmake --install "${work}/build" --prefix "${work}/prefix" >/dev/null
cc -O2 -std=c11 "${here}/finalize_bench.c" -o "${work}/sp_bench_finalize" \
  $(PKG_CONFIG_PATH="${work}/prefix/lib/pkgconfig" pkg-config --cflags --libs scopeprofiler)
machine_line
results="${work}/results"
for round in $(seq "${rounds}"); do
  for shape in flat nested; do
    n="${calls}"
    [ "${shape}" = nested ] && n=$((calls * 3))
    for threads in 1 ""; do
      SCOPE_PROFILER_WRITE_THREADS="${threads}" "${work}/sp_bench_finalize" "${n}" "${shape}" \
        "${out}/${shape}.h5" 2>>"${results}" >/dev/null
      SCOPE_PROFILER_WRITE_THREADS="${threads}" SCOPE_PROFILER_SUMMARY=0 \
        "${work}/sp_bench_finalize" "${n}" "${shape}" "${out}/${shape}.h5" 2>>"${results}" >/dev/null
    done
  done
done
machine_line
echo "== medians and ranges over ${rounds} rounds"
/usr/bin/python3 - "${results}" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+)\s+(summary \w+)\s+calls (\d+)\s+finalize ([\d.]+) s\s+peak RSS ([\d.]+) MiB"
                 r"\s+threads (\w+)\s+file ([\d.-]+) MiB\s+cpu ([\d.]+) s", line)
    if m:
        rows.setdefault((m[1], m[2], m[3], m[6]), []).append((float(m[4]), float(m[5]), float(m[7]), float(m[8])))
for (shape, summary, calls, threads), v in sorted(rows.items()):
    t = [x[0] for x in v]; r = [x[1] for x in v]; c = [x[3] for x in v]
    rate = int(calls) / statistics.median(t) / 1e6
    print(f"{shape:6} {summary:11} {calls:>9} calls, write threads {threads:>3}: finalize median "
          f"{statistics.median(t):.3f} s [{min(t):.3f}, {max(t):.3f}] ({rate:.1f}M calls/s)  "
          f"cpu median {statistics.median(c):.3f} s  peak RSS median {statistics.median(r):.1f} MiB "
          f"[{min(r):.1f}, {max(r):.1f}]  file {v[0][2]:.1f} MiB")
for shape in ("flat", "nested"):
    on = [x[0] for k, v in rows.items() if k[0] == shape and k[1] == "summary on" and k[3] == "all" for x in v]
    off = [x[0] for k, v in rows.items() if k[0] == shape and k[1] == "summary off" and k[3] == "all" for x in v]
    if on and off:
        print(f"{shape}: finalize with the summary / without = {statistics.median(on) / statistics.median(off):.2f}")
PY
