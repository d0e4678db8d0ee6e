#!/bin/sh
# Usage: bench/merge/run.sh BUILD_DIR [EVENTS]
# Merges two EVENTS-event files (default 5 million each: a native one from
# the C core, a driver one shaped like the Python package's output) with
# scope-merge, and repacks the same two inputs with h5repack, in the same
# run. Prints wall time and peak RSS of each (from /usr/bin/time -v).
# Goals: scope-merge <= 2x the summed h5repack time; peak RSS <= 64 MiB.
# Plain h5repack copies compressed chunks without decoding them, which no
# merge can do (ids and rows move), so the same inputs are also repacked
# with -f GZIP=1: a decode + re-encode of every event, the work a merge has.
# scope-merge also runs with SCOPE_PROFILER_MERGE_VALUE_PATH=1 (inputs
# decoded by HDF5's filters instead of merge_chunks.c); both in events/s
# (issue 31's goal: >= 30M events/s for two 20M-event files).
set -e
build=$(cd "${1:?usage: run.sh BUILD_DIR [EVENTS]}" && pwd)
events=${2:-5000000}
here=$(cd "$(dirname "$0")" && pwd)
work="$build/bench-merge-$events"
mkdir -p "$work"
native="$work/native.h5" driver="$work/driver.h5"
[ -f "$native" ] || "$build/bench/merge/merge_bench_record" "$native" "$events"
[ -f "$driver" ] || /usr/bin/python3 "$here/make_driver.py" "$native" "$driver"

measure() { # label command...: prints seconds and max RSS KiB
  label=$1; shift
  /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  printf '%-22s %8.2f s  %8d KiB peak RSS\n' "$label" "$secs" "$rss"
  echo "$secs $rss" > "$work/$label.m"
}

rm -f "$work"/repacked-*.h5 "$work/merged.h5" "$work/merged-value.h5" "$work"/*.m
measure h5repack-native h5repack "$native" "$work/repacked-native.h5"
measure h5repack-driver h5repack "$driver" "$work/repacked-driver.h5"
measure recode-native h5repack -f GZIP=1 "$native" "$work/repacked-gz-native.h5"
measure recode-driver h5repack -f GZIP=1 "$driver" "$work/repacked-gz-driver.h5"
# A loaded machine can take longer than the isolation's default read limit.
export SCOPE_PROFILER_READ_TIMEOUT=${SCOPE_PROFILER_READ_TIMEOUT:-3600}
measure scope-merge "$build/cli/scope-merge" "$driver" "$native" -o "$work/merged.h5" --quiet
# The same merge with every event decoded by HDF5's own filters (the path
# before merge/src/merge_chunks.c): same file, for the ratio.
measure scope-merge-value env SCOPE_PROFILER_MERGE_VALUE_PATH=1 \
  "$build/cli/scope-merge" "$driver" "$native" -o "$work/merged-value.h5" --quiet
awk -v events="$events" '
  FNR == 1 { v[FILENAME] = $1; r[FILENAME] = $2 }
  END {
    for (f in v) {
      if (f ~ /h5repack/) rep += v[f]
      if (f ~ /recode/) rec += v[f]
      if (f ~ /scope-merge-value/) { mv = v[f]; continue }
      if (f ~ /scope-merge/) { m = v[f]; rss = r[f] }
    }
    printf "inputs: 2 x %d events\n", events
    printf "merge / summed h5repack          = %.2f (goal <= 2)\n", m / rep
    printf "merge / summed h5repack -f GZIP=1 = %.2f\n", m / rec
    printf "merge peak RSS %.1f MiB (goal <= 64)\n", rss / 1024
    printf "merge: %.1f M events/s; value path %.1f M events/s (goal >= 30)\n",
           2 * events / m / 1e6, 2 * events / mv / 1e6
  }' "$work"/h5repack-native.m "$work"/h5repack-driver.m "$work"/recode-native.m \
     "$work"/recode-driver.m "$work"/scope-merge.m "$work"/scope-merge-value.m
ls -l "$native" "$driver" "$work/merged.h5" | awk '{print $5, $9}'
