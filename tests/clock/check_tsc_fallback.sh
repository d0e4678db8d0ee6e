#!/bin/sh
# check_tsc_fallback.sh PROGRAM WORKDIR: SCOPE_PROFILER_CLOCK=tsc where the
# kernel does not trust the TSC. A private mount namespace shows the program
# a clocksource of "hpet" (root and unshare needed, else skip 77): one
# message naming the reason, the run recorded with CLOCK_MONOTONIC, the
# metadata saying so, and every call still in the file.
program=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for a mount namespace"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
source=/sys/devices/system/clocksource/clocksource0/current_clocksource
[ -r "$source" ] || { echo "SKIP: no $source"; exit 77; }
echo hpet > "$work/clocksource"
unshare -m sh -c "mount --bind '$work/clocksource' '$source'" 2>/dev/null ||
  { echo "SKIP: cannot bind-mount in a mount namespace here"; exit 77; }
SCOPE_PROFILER_CLOCK=tsc SCOPE_PROFILER_QUIET= SCOPE_PROFILER_SUMMARY=0 \
  unshare -m sh -c "mount --bind '$work/clocksource' '$source' && exec '$program' '$work/out.h5' '$work/side.txt' 0.2" \
  2>"$work/stderr" >/dev/null
rc=$?
cat "$work/stderr"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
n=$(grep -c "the TSC clock was asked for, but the kernel does not trust the TSC (its clocksource is hpet); recording with CLOCK_MONOTONIC" "$work/stderr")
[ "$n" -eq 1 ] || { echo "FAIL: want exactly one message about the TSC, got $n"; exit 1; }
/usr/bin/python3 - "$work/out.h5" "$work/side.txt" <<'PY' || exit 1
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    clock = f["metadata"].attrs.get("clock")
    clock = clock.decode() if isinstance(clock, bytes) else clock
    calls = int(f["rank_region_index/event_counts"][:].sum())
side = sum(1 for _ in open(sys.argv[2]))
print(f"clock={clock} calls={calls} side={side}")
if clock != "monotonic" or calls != side or calls == 0:
    sys.exit("FAIL: want clock=monotonic and every call in the file")
PY
echo ok
