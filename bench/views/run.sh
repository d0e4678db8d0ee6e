#!/bin/sh
# Usage: bench/views/run.sh BUILD_DIR [CALLS] [REPEATS]
# Records a profile of CALLS calls (default 10 million, 4 threads) with
# views_make_calls, then times every other output of scope-export and
# scope-report against scope-export --format chrome of the same file, as a
# ratio to chrome measured in this same run (goal <= 2x) and the peak
# resident set (goal <= 256 MiB), best wall time of REPEATS (default 3).
# With COLD=1 (root only) the page cache is dropped before every run, so
# the file is read from disk each time.
set -e
build=${1:?usage: run.sh BUILD_DIR [CALLS] [REPEATS]}
calls=${2:-10000000}
repeats=${3:-3}
file="$build/bench-views-$calls.h5"
out="$build/bench-views-out"
[ -f "$file" ] || "$build/bench/views/views_make_calls" "$file" "$calls" 4
rm -rf "$out" && mkdir -p "$out"
export="$build/cli/scope-export"
report="$build/cli/scope-report"

measure() { # name command...: prints "name seconds max_rss_kib"
  name=$1
  shift
  best_t="" best_m=0
  i=0
  while [ $i -lt "$repeats" ]; do
    rm -rf "$out/trace"
    if [ "${COLD:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
    /usr/bin/time -f "%e %M" -o "$out/time" "$@" >/dev/null
    read -r t m < "$out/time"
    if [ -z "$best_t" ] || [ "$(echo "$t < $best_t" | bc)" = 1 ]; then best_t=$t; fi
    [ "$m" -gt "$best_m" ] && best_m=$m
    i=$((i + 1))
  done
  echo "$name $best_t $best_m"
}

echo "file: $file ($(du -h "$file" | cut -f1), $calls calls), best of $repeats, cold=${COLD:-0}"
base=$(measure chrome "$export" "$file" -o "$out/t.json" --format chrome)
base_t=$(echo "$base" | cut -d' ' -f2)
printf "%-12s %9s %7s %10s\n" format seconds ratio "peak MiB"
for line in "$base" \
  "$(measure csv "$export" "$file" -o "$out/c.csv" --format csv)" \
  "$(measure json "$export" "$file" -o "$out/j.json" --format json)" \
  "$(measure speedscope "$export" "$file" -o "$out/s.json" --format speedscope)" \
  "$(measure folded "$export" "$file" -o "$out/f.folded" --format folded)" \
  "$(measure svg "$export" "$file" -o "$out/f.svg" --format svg)" \
  "$(measure otf2 "$export" "$file" -o "$out/trace" --format otf2)" \
  "$(measure report "$report" "$file" -o "$out/report.html")"; do
  set -- $line
  printf "%-12s %9s %7.2f %10.1f\n" "$1" "$2" "$(echo "$2 / $base_t" | bc -l)" "$(echo "$3 / 1024" | bc -l)"
done
ls -la "$out"
