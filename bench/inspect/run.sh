#!/bin/sh
# Usage: bench/inspect/run.sh NEW_SCOPE_INSPECT [OLD_SCOPE_INSPECT] [RANKS THREADS ITERATIONS]
#
# Peak RSS and wall time of scope-inspect's summary (text table, --json)
# on an 8-rank file of tens of millions of calls (issue 27: the table of a
# 200M-call, 8-rank file in <= 256 MiB). The file is written once by
# tests/inspect/make_calls.py (h5py + numpy: RANKS x THREADS threads x
# ITERATIONS iterations of 8 nested calls; default 8 x 2 x 250,000 = 32M
# calls) into $BENCH_DIR (default /tmp). OLD_SCOPE_INSPECT, when given, is
# the same tool built from an earlier commit (a `git worktree add` of it
# built in a scratch directory), measured on the same file: the ratio is
# the result, both measured in the same run.
#
# Peak RSS: GNU time's %M, the largest resident set of the tool and the
# supervised child that reads the file (cli_isolate.c).
set -e
new=${1:?usage: run.sh NEW_SCOPE_INSPECT [OLD_SCOPE_INSPECT] [RANKS THREADS ITERATIONS]}
old=${2:-}
ranks=${3:-8}
threads=${4:-2}
iterations=${5:-250000}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp}
file="$dir/bench-inspect-$ranks-$threads-$iterations.h5"
if [ ! -f "$file" ]; then
    /usr/bin/python3 "$here/../../tests/inspect/make_calls.py" "$file.tmp" "$ranks" "$threads" \
        "$iterations" > /dev/null
    mv "$file.tmp" "$file"
fi
calls=$((ranks * threads * (1 + 8 * iterations)))
echo "file: $file ($calls calls, $ranks ranks, $(du -m "$file" | cut -f1) MiB)"
measure() { # label tool args...
    label=$1
    shift
    /usr/bin/time -f "%M %e" -o "$dir/bench-inspect.time" "$@" > /dev/null 2> "$dir/bench-inspect.err" ||
        { echo "$label: exit $? ($(head -c 300 "$dir/bench-inspect.err"))"; return 0; }
    set -- $(tail -1 "$dir/bench-inspect.time")
    printf '%-28s peak RSS %8.1f MiB  wall %7.2f s\n' "$label" "$(echo "$1 / 1024" | bc -l)" "$2"
}
for mode in table json; do
    args="--ascii"
    [ "$mode" = json ] && args="--json"
    measure "new  $mode" "$new" $args "$file"
    [ -n "$old" ] && measure "old  $mode" "$old" $args "$file"
done
measure "new  open only (metadata)" "$new" --metadata-only "$file"
exit 0
