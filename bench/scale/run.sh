#!/bin/bash
# Usage: bench/scale/run.sh [WORK_DIR] [REGIONS] [DEPTH]
# Issue 19's linear paths: records a file with REGIONS distinct regions
# (default 10^5, each called once with a shared child) and one with
# alternating recursion a > b > a > ... DEPTH calls deep (default 10^6)
# with scale_make, then times every tool over each (goal: under 10 s each,
# output to /dev/null). A Release build of this tree (bench/release_build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/scope-bench-scale}
regions=${2:-100000}
depth=${3:-1000000}
. "$root/bench/release_build.sh"
mkdir -p "$work"
release_build "$root" "$work" scale_make scope-inspect scope-diff scope-export scope-check \
  scope-report scope-merge
b="$work/build"
cli="$b/cli"
"$b/bench/scale/scale_make" regions "$work/regions.h5" "$regions"
"$b/bench/scale/scale_make" depth "$work/depth.h5" "$depth"
machine_line
printf "%-10s %-40s %8s %9s %5s\n" file tool seconds "peak MiB" exit
for f in regions depth; do
  in="$work/$f.h5"
  while read -r name cmd; do
    rm -rf "$work/out"*
    set +e
    /usr/bin/time -f "%e %M" -o "$work/time" timeout 60 $cmd >/dev/null 2>"$work/err"
    rc=$?
    set -e
    read -r t m < "$work/time" || { t=timeout; m=0; }
    printf "%-10s %-40s %8s %9.1f %5s\n" "$f" "$name" "$t" "$(echo "$m / 1024" | bc -l)" "$rc"
  done <<LIST
inspect $cli/scope-inspect $in
inspect--flat $cli/scope-inspect --flat $in
inspect--json $cli/scope-inspect --json $in
check $cli/scope-check $in
diff $cli/scope-diff $in $in
diff--json $cli/scope-diff --json $in $in
export-json $cli/scope-export $in -o $work/out.json --format json
export-chrome $cli/scope-export $in -o $work/out.trace --format chrome
export-csv $cli/scope-export $in -o $work/out.csv --format csv
export-folded $cli/scope-export $in -o $work/out.folded --format folded
export-svg $cli/scope-export $in -o $work/out.svg --format svg
export-speedscope $cli/scope-export $in -o $work/out.ss --format speedscope
report $cli/scope-report $in -o $work/out.html
LIST
done
