#!/bin/sh
# check_clock_auto.sh PROGRAM WORKDIR: SCOPE_PROFILER_CLOCK=auto (the
# default) chooses the TSC only where it can stand in for CLOCK_MONOTONIC:
# an invariant TSC that the kernel uses as its clocksource, and, in a
# virtual machine (the "hypervisor" CPU flag), only for a process bound to
# one CPU, since a guest's vCPUs' counters may disagree. The run bound to
# one CPU and the run on two CPUs must each record the clock this machine
# calls for (metadata "clock"), with every call in the file.
# Skips (77) where the TSC is not usable at all or taskset is missing.
program=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
command -v taskset >/dev/null || { echo "SKIP: no taskset"; exit 77; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
case "$flags" in *constant_tsc*) ;; *) echo "SKIP: no invariant TSC"; exit 77 ;; esac
case "$flags" in *nonstop_tsc*) ;; *) echo "SKIP: no invariant TSC"; exit 77 ;; esac
source=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
[ "$source" = tsc ] || { echo "SKIP: the kernel's clocksource is $source"; exit 77; }
case "$flags" in *" hypervisor"*) vm=1 ;; *) vm=0 ;; esac
cpus=$(taskset -pc $$ | sed 's/.*: //')
first=$(echo "$cpus" | sed 's/[-,].*//')

run() { # NAME CPULIST WANT
  SCOPE_PROFILER_CLOCK= SCOPE_PROFILER_QUIET=1 SCOPE_PROFILER_SUMMARY=0 \
    taskset -c "$2" "$program" "$work/$1.h5" "$work/$1.txt" 0.2 >/dev/null 2>"$work/$1.err" ||
    { echo "FAIL: $1 exit $?"; cat "$work/$1.err"; return 1; }
  /usr/bin/python3 - "$work/$1.h5" "$work/$1.txt" "$3" "$1" <<'PY'
import sys, h5py
path, side_path, want, name = sys.argv[1:5]
with h5py.File(path, "r") as f:
    clock = f["metadata"].attrs.get("clock")
    clock = clock.decode() if isinstance(clock, bytes) else clock
    calls = int(f["rank_region_index/event_counts"][:].sum())
side = sum(1 for _ in open(side_path))
print(f"{name}: clock={clock} (want {want}) calls={calls} side={side}")
if clock != want or calls != side or calls == 0:
    sys.exit(f"FAIL: {name}: want clock={want} and every call in the file")
PY
}

status=0
run one_cpu "$first" tsc || status=1
if [ "$(nproc)" -gt 1 ]; then
  want=tsc
  [ $vm -eq 1 ] && want=monotonic
  run all_cpus "$cpus" $want || status=1
fi
[ $status -eq 0 ] && echo ok
exit $status
