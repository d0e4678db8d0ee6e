#!/bin/sh
# Usage: bench/read/run.sh BUILD_DIR [EVENTS]
# Makes a profile with EVENTS events (default 10 million) in BUILD_DIR and
# reads it full, summary-only, and with /usr/bin/python3 + h5py.
set -e
build=${1:?usage: run.sh BUILD_DIR [EVENTS]}
events=${2:-10000000}
here=$(cd "$(dirname "$0")" && pwd)
file="$build/bench-read-$events.h5"
[ -f "$file" ] || /usr/bin/python3 "$here/make_file.py" "$file" "$events"
"$build/bench/read/read_bench" "$file" 3
/usr/bin/python3 "$here/read_h5py.py" "$file" 3
