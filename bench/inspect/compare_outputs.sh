#!/bin/sh
# Usage: bench/inspect/compare_outputs.sh NEW_SCOPE_INSPECT OLD_SCOPE_INSPECT FILE...
#
# Byte identity of two builds of scope-inspect (issue 31: a faster read or
# walk must not change one byte): both are run with 12 option sets on every
# FILE, and stdout, stderr (the binary's path removed) and the exit status
# are compared. Prints one line per difference and a count; exits 1 when
# anything differs. Default FILEs: tests/data/*/*.h5 and tests/merge/data/*.h5.
new=${1:?usage: compare_outputs.sh NEW OLD [FILE...]}
old=${2:?usage: compare_outputs.sh NEW OLD [FILE...]}
shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -gt 0 ] || set -- "$here"/tests/data/*/*.h5 "$here"/tests/merge/data/*.h5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0
diffs=0
for file in "$@"; do
    for opts in "--ascii" "--unicode" "--json" "--threads --ascii" "--json --threads" \
        "--flat --ascii" "--flat --json" "--sort total --ascii" "--sort p95 --json" \
        "--ranks 0 --ascii" "--exclude ^mark --include ^main --include ^step --ascii" \
        "--metadata-only"; do
        for which in new old; do
            eval tool=\$$which
            # shellcheck disable=SC2086
            "$tool" $opts "$file" > "$tmp/$which.out" 2> "$tmp/$which.err"
            echo $? > "$tmp/$which.rc"
        done
        runs=$((runs + 1))
        if ! cmp -s "$tmp/new.out" "$tmp/old.out" || ! cmp -s "$tmp/new.rc" "$tmp/old.rc" ||
            ! cmp -s "$tmp/new.err" "$tmp/old.err"; then
            echo "DIFFERS: $opts $file"
            diffs=$((diffs + 1))
        fi
    done
done
echo "$runs runs, $diffs differ"
[ "$diffs" -eq 0 ]
