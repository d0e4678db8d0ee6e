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
 * reached. A close that "fails" still closes, like a close whose flush
 * failed, so nothing leaks but the error.
 *
 * Counts are per process: a forked child goes on from its parent's count,
 * which only means a run may fail the N-th call in both; each run is still
 * judged by what the tool did.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* HDF5's types, spelled without its header. */
typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;

static long calls_seen = 0;
static long fail_at = -1;

/* Whether this call is the one to fail; says so in the report file. */
static int fails(const char *call) {
    if (fail_at < 0) {
        const char *value = getenv("SCOPE_PROFILER_TEST_H5_FAIL_AT");
        fail_at = value && *value ? atol(value) : 0;
    }
    if (++calls_seen != fail_at) return 0;
    const char *report = getenv("SCOPE_PROFILER_TEST_FAULT_REPORT");
    if (report && *report) {
        /* open and write are not interposed: the report does not count */
        int fd = open(report, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            char line[160];
            int n = snprintf(line, sizeof line, "injected %ld %s\n", (long)getpid(), call);
            if (n > 0) (void)!write(fd, line, (size_t)n);
            close(fd);
        }
    }
    return 1;
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "tool_faults_preload: %s not found\n", name);
        _exit(125);
    }
    return f;
}

/* Fail with `failed` (and errno EIO) when this call's turn comes, else
 * forward to the next definition (libhdf5 or the C library). */
#define FORWARD(ret, failed, name, params, args)                          \
    ret name params {                                                     \
        static ret(*next) params = NULL;                                  \
        if (!next) *(void **)&next = real(#name);                         \
        if (fails(#name)) {                                               \
            errno = EIO;                                                  \
            return failed;                                                \
        }                                                                 \
        return next args;                                                 \
    }
/* A close that reports a failure after it closed. */
#define CLOSE(ret, failed, name, type)                                    \
    ret name(type id) {                                                   \
        static ret (*next)(type) = NULL;                                  \
        if (!next) *(void **)&next = real(#name);                         \
        ret rc = next(id);                                                \
        if (!fails(#name)) return rc;                                     \
        errno = EIO;                                                      \
        return failed;                                                    \
    }

FORWARD(hid_t, -1, H5Fcreate, (const char *n, unsigned f, hid_t c, hid_t a), (n, f, c, a))
FORWARD(hid_t, -1, H5Gcreate2, (hid_t l, const char *n, hid_t a, hid_t b, hid_t c),
        (l, n, a, b, c))
FORWARD(hid_t, -1, H5Gopen2, (hid_t l, const char *n, hid_t a), (l, n, a))
FORWARD(hid_t, -1, H5Dcreate2,
        (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b, hid_t c),
        (l, n, t, s, a, b, c))
FORWARD(herr_t, -1, H5Dwrite, (hid_t d, hid_t m, hid_t ms, hid_t fs, hid_t p, const void *b),
        (d, m, ms, fs, p, b))
FORWARD(hid_t, -1, H5Acreate2, (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b),
        (l, n, t, s, a, b))
FORWARD(herr_t, -1, H5Awrite, (hid_t a, hid_t t, const void *b), (a, t, b))
FORWARD(hid_t, -1, H5Screate_simple, (int r, const hsize_t *d, const hsize_t *m), (r, d, m))
FORWARD(hid_t, -1, H5Pcreate, (hid_t c), (c))
FORWARD(herr_t, -1, H5Pset_chunk, (hid_t p, int n, const hsize_t *d), (p, n, d))
FORWARD(herr_t, -1, H5Pset_deflate, (hid_t p, unsigned l), (p, l))
FORWARD(herr_t, -1, H5Fflush, (hid_t o, int s), (o, s))
FORWARD(herr_t, -1, H5Ocopy, (hid_t s, const char *sn, hid_t d, const char *dn, hid_t o, hid_t l),
        (s, sn, d, dn, o, l))
CLOSE(herr_t, -1, H5Fclose, hid_t)
CLOSE(herr_t, -1, H5Dclose, hid_t)
CLOSE(herr_t, -1, H5Gclose, hid_t)
CLOSE(herr_t, -1, H5Aclose, hid_t)

FORWARD(FILE *, NULL, fopen, (const char *p, const char *m), (p, m))
FORWARD(FILE *, NULL, fdopen, (int fd, const char *m), (fd, m))
FORWARD(int, EOF, fflush, (FILE * f), (f))
FORWARD(int, -1, fsync, (int fd), (fd))
FORWARD(int, -1, rename, (const char *a, const char *b), (a, b))
FORWARD(int, -1, mkdir, (const char *p, mode_t m), (p, m))
CLOSE(int, EOF, fclose, FILE *)
