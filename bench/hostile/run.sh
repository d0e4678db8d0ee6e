#!/bin/bash
# Usage: bench/hostile/run.sh [WORK_DIR] [EVENTS] [MUTANTS_PER_FILE]
# 1. The cost of the tools' isolation (cli/cli_isolate.c): scope-inspect,
#    scope-check and scope-export --format csv on a profile of EVENTS events
#    (default 10 million), each run 5 times with and without
#    SCOPE_PROFILER_NO_ISOLATION=1, alternating; medians and the ratio.
#    The goal is under 5 % (issue 19).
# 2. A larger mutant sweep than ctest's (tests/hostile): MUTANTS_PER_FILE
#    (default 60) truncations and byte flips per fixture through every tool.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-/tmp/sp-bench-hostile}
events=${2:-10000000}
per_file=${3:-60}
mkdir -p "$work"
# shellcheck source=../release_build.sh
. "$root/bench/release_build.sh"
release_build "$root" "$work" scope-inspect scope-check scope-export scope-diff scope-report \
  scope-merge
bin="$work/build/cli"
file="$work/bench-$events.h5"
[ -f "$file" ] || /usr/bin/python3 "$root/bench/read/make_file.py" "$file" "$events"
echo "== isolation cost, $events events ($(stat -L -c %s "$file") bytes); $(machine_line)"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run_once() { # prints seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
for tool in "scope-inspect $file" "scope-check $file" \
            "scope-export $file -o $work/out.csv --format csv"; do
  iso=() off=()
  for i in 1 2 3 4 5; do
    # shellcheck disable=SC2086
    iso+=("$(run_once "$bin"/$tool)")
    # shellcheck disable=SC2086
    off+=("$(SCOPE_PROFILER_NO_ISOLATION=1 run_once "$bin"/$tool)")
  done
  a=$(printf '%s\n' "${iso[@]}" | median)
  b=$(printf '%s\n' "${off[@]}" | median)
  printf '%-14s isolated %6.3f s   one process %6.3f s   cost %+.1f %%\n' "${tool%% *}" "$a" "$b" \
    "$(echo "($a - $b) * 100 / $b" | bc -l)"
done
echo "== mutant sweep: $per_file per fixture"
mkdir -p "$work/sweep"
cd "$work/sweep"
sed "s/^MUTANTS_PER_FILE = .*/MUTANTS_PER_FILE = $per_file/" "$root/tests/hostile/hostile_test.py" \
  > hostile_sweep.py
SCOPE_PROFILER_READ_TIMEOUT=60 /usr/bin/python3 hostile_sweep.py --bin "$bin" \
  --data "$root/tests/data" --maker "$root/tests/hostile/make_hostile.py" mutants | tail -20
