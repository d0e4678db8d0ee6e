#!/bin/sh
# isolate_test.sh PROBE MODE: one planted failure through cli_isolate.c,
# checked for its exit status and message (see isolate_probe.c).
probe=$1
mode=$2
err=$(mktemp)
# The planted SIGSEGV must reach the supervisor as a signal: in a sanitizer
# build, AddressSanitizer's own SEGV handler would turn it into exit 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+${ASAN_OPTIONS}:}handle_segv=0"
trap 'rm -f "$err"' EXIT
fail() { echo "FAIL ($mode): $*"; cat "$err"; exit 1; }
case $mode in
segv)
  "$probe" segv 2>"$err"; rc=$?
  [ $rc -eq 2 ] || fail "exit $rc, expected 2"
  grep -q 'isolate_probe: planted.h5: damaged HDF5 file (SIGSEGV while reading it)' "$err" ||
    fail "message"
  ;;
hang)
  start=$(date +%s)
  SCOPE_PROFILER_READ_TIMEOUT=1 "$probe" hang 2>"$err"; rc=$?
  took=$(( $(date +%s) - start ))
  [ $rc -eq 2 ] || fail "exit $rc, expected 2"
  [ $took -le 6 ] || fail "took ${took} s for a 1 s timeout"
  grep -q 'planted.h5: damaged HDF5 file (reading it took more than 1 s' "$err" || fail "message"
  ;;
alloc)
  SCOPE_PROFILER_READ_MEMORY_MB=256 "$probe" alloc 2>"$err"; rc=$?
  [ $rc -eq 77 ] && exit 77
  [ $rc -eq 2 ] || fail "exit $rc, expected 2"
  grep -q 'planted.h5: damaged HDF5 file' "$err" || fail "message"
  ;;
outside)
  "$probe" outside 2>"$err"; rc=$?
  # sh reports death by signal N as 128 + N; SIGSEGV is 11.
  [ $rc -eq 139 ] || fail "exit $rc, expected death by SIGSEGV (139)"
  ;;
exit)
  "$probe" exit 5 2>"$err"; rc=$?
  [ $rc -eq 5 ] || fail "exit $rc, expected 5"
  SCOPE_PROFILER_NO_ISOLATION=1 "$probe" exit 6 2>"$err"; rc=$?
  [ $rc -eq 6 ] || fail "exit $rc without isolation, expected 6"
  ;;
*) fail "unknown mode" ;;
esac
echo "ok ($mode)"
