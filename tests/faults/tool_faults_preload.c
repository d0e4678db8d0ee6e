/*
 * tool_faults_preload.c - a preload library (LD_PRELOAD) that fails the
 * N-th call a tool makes to one of the output entry points below
 * (issue 29: the write-path fault test for scope-merge and scope-export;
 * write_faults.c does the same for the library, which it links itself).
 *
 * SCOPE_PROFILER_TEST_H5_FAIL_AT=N picks the call; counting covers the
 * HDF5 calls of writing a profile (and the reads that share them: a read
 * failing must give a clean refusal too) and the C library calls that
 * create, flush, sync, close and publish an output (fopen, fdopen,
 * fclose, fflush, fsync, rename, mkdir). When the N-th call comes,
 * "injected PID CALL" is appended to the file named by
 * SCOPE_PROFILER_TEST_FAULT_REPORT at once (a child process of the tools'
 * isolation may end with _exit), so the harness knows the failure was
 * reached. The counting, the report and the interposing macros are
 * tests/lib/fault_turn.h's, shared with write_faults.c, and so are the
 * HDF5 calls of tests/lib/fault_turn_hdf5.c; below are the ones only the
 * tools make (scope-merge's object copy and the C library's file calls).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fault_turn.h"

FAULT_FORWARD(herr_t, -1, H5Ocopy,
              (hid_t s, const char *sn, hid_t d, const char *dn, hid_t o, hid_t l),
              (s, sn, d, dn, o, l))
FAULT_FORWARD(FILE *, NULL, fopen, (const char *p, const char *m), (p, m))
FAULT_FORWARD(FILE *, NULL, fdopen, (int fd, const char *m), (fd, m))
FAULT_FORWARD(int, EOF, fflush, (FILE * f), (f))
FAULT_FORWARD(int, -1, fsync, (int fd), (fd))
FAULT_FORWARD(int, -1, rename, (const char *a, const char *b), (a, b))
FAULT_FORWARD(int, -1, mkdir, (const char *p, mode_t m), (p, m))
FAULT_CLOSE(int, EOF, fclose, FILE *)
