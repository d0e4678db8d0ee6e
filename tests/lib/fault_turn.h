/*
 * fault_turn.h - the N-th-call fault injection the write-path fault tests
 * share (issue 29): write_faults.c interposes the library's HDF5 calls from
 * inside its own executable, tool_faults_preload.c interposes a tool's
 * HDF5 and C library output calls through LD_PRELOAD. Both count every
 * interposed call of the process and fail the one that
 * SCOPE_PROFILER_TEST_H5_FAIL_AT=N names; the harness raises N until the
 * failure is no longer reached.
 *
 * An interposed entry point is one FAULT_FORWARD or FAULT_CLOSE line: it
 * finds the next definition of its name (libhdf5 or the C library) once,
 * fails with the given value and errno EIO when its turn comes, and
 * otherwise forwards. A close that "fails" still closes, like a close
 * whose flush failed, so nothing leaks but the error.
 *
 * Thread-safety: the count is atomic, so each call of the process has one
 * place in it whichever thread makes it; which call is N-th among threads
 * running at once is their order, as in any real failure.
 */
#ifndef SP_TEST_FAULT_TURN_H
#define SP_TEST_FAULT_TURN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* HDF5's types, spelled without its header (the tests link no HDF5). */
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;

/* Counts one interposed call named `call`; returns 1 when it is the one
 * SCOPE_PROFILER_TEST_H5_FAIL_AT names (unset, empty or 0: never), else 0.
 * When it is, it also notes it for fault_turn_injected() and appends
 * "injected PID CALL" to the file SCOPE_PROFILER_TEST_FAULT_REPORT names
 * (when set) at once, so that a harness learns the failure was reached even
 * from a child that ends with _exit. The report is written with open and
 * write, which are not interposed: it does not count. */
int fault_turn(const char *call);

/* The interposed calls counted so far in this process. */
long fault_turn_calls_seen(void);

/* 1 once the N-th call came (and was failed), else 0. */
int fault_turn_injected(void);

/* The next definition of `name` after the caller's (dlsym RTLD_NEXT). A
 * missing one is a broken test setup, not a profiler failure: it says so
 * on stderr and ends the process with exit code 125. */
void *fault_turn_next(const char *name);

/* `ret name params` that fails with `failed` (errno EIO) on its turn and
 * otherwise calls the next definition with `args`. */
#define FAULT_FORWARD(ret, failed, name, params, args)                    \
    ret name params {                                                     \
        static ret(*next) params = NULL;                                  \
        if (!next) *(void **)&next = fault_turn_next(#name);              \
        if (fault_turn(#name)) {                                          \
            errno = EIO;                                                  \
            return failed;                                                \
        }                                                                 \
        return next args;                                                 \
    }

/* `ret name(type)`, a close: always closes, then reports `failed` (errno
 * EIO) on its turn. */
#define FAULT_CLOSE(ret, failed, name, type)                              \
    ret name(type id) {                                                   \
        static ret (*next)(type) = NULL;                                  \
        if (!next) *(void **)&next = fault_turn_next(#name);              \
        ret rc = next(id);                                                \
        if (!fault_turn(#name)) return rc;                                \
        errno = EIO;                                                      \
        return failed;                                                    \
    }

#endif
