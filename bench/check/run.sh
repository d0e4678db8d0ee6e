#!/bin/sh
# Usage: bench/check/run.sh NEW_SCOPE_CHECK [OLD_SCOPE_CHECK] [CALLS RANKS THREADS]
#
# Peak RSS and wall time of scope-check on a native-shaped file of CALLS
# calls (default 200M) over RANKS ranks (default 8), THREADS threads a rank
# (default 4), written once by make_big.py (h5py, in chunks) into
# $BENCH_DIR (default /tmp; 200M calls take 8 GB of disk). Issue 27's goal:
# 200M calls, 8 ranks in <= 256 MiB. OLD_SCOPE_CHECK, when given (the tool
# built from an earlier commit), is measured on the same file in the same
# run; an old tool that reads every call needs ~75 bytes a call, so give it
# a smaller CALLS.
#
# Peak RSS: GNU time's %M, the largest resident set of the tool and of the
# supervised child that reads the file (cli/cli_isolate.c). The second
# line sets SCOPE_PROFILER_CHECK_MEMORY=1M (a 1 MiB id set): what is left is
# the reader and the sweep.
set -e
new=${1:?usage: run.sh NEW_SCOPE_CHECK [OLD_SCOPE_CHECK] [CALLS RANKS THREADS]}
old=${2:-}
calls=${3:-200000000}
ranks=${4:-8}
threads=${5:-4}
here=$(cd "$(dirname "$0")" && pwd)
dir=${BENCH_DIR:-/tmp}
file="$dir/bench-check-$calls-$ranks-$threads.h5"
if [ ! -f "$file" ]; then
    /usr/bin/python3 "$here/make_big.py" "$file.tmp" "$calls" "$ranks" "$threads" > /dev/null
    mv "$file.tmp" "$file"
fi
echo "file: $file ($calls calls, $ranks ranks, $(du -m "$file" | cut -f1) MiB)"
measure() { # label tool args...
    label=$1
    shift
    /usr/bin/time -f "%M %e" -o "$dir/bench-check.time" "$@" > "$dir/bench-check.out" 2>&1 ||
        { echo "$label: exit $? ($(tail -c 300 "$dir/bench-check.out"))"; return 0; }
    set -- $(tail -1 "$dir/bench-check.time")
    printf '%-30s peak RSS %8.1f MiB  wall %8.2f s  (%s)\n' "$label" \
        "$(echo "$1 / 1024" | bc -l)" "$2" "$(tail -1 "$dir/bench-check.out")"
}
measure "new" "$new" "$file"
measure "new, 1 MiB id set" env SCOPE_PROFILER_CHECK_MEMORY=1M "$new" "$file"
[ -n "$old" ] && measure "old" "$old" "$file"
exit 0
