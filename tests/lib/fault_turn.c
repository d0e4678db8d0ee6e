/*
 * fault_turn.c - the call count and the verdict of fault_turn.h: which
 * interposed call of the process is the one SCOPE_PROFILER_TEST_H5_FAIL_AT
 * names, and the report that it came.
 *
 * Counts are per process: a forked child goes on from its parent's count,
 * which only means a run may fail the N-th call in both; each run is still
 * judged by what the program did.
 */
#define _GNU_SOURCE
#include "fault_turn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_long calls_seen = 0;
static atomic_int injected = 0;

/* Read once per call rather than cached: getenv is cheap next to the
 * interposed HDF5 and file calls, and a cache would be a second shared
 * variable to order against the count. */
static long fail_at(void) {
    const char *value = getenv("SCOPE_PROFILER_TEST_H5_FAIL_AT");
    return value && *value ? atol(value) : 0;
}

/* Appends "injected PID CALL" to the report file, if one is named. */
static void report(const char *call) {
    const char *path = getenv("SCOPE_PROFILER_TEST_FAULT_REPORT");
    if (!path || !*path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[160];
    int n = snprintf(line, sizeof line, "injected %ld %s\n", (long)getpid(), call);
    if (n > 0) (void)!write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    close(fd);
}

int fault_turn(const char *call) {
    long seen = atomic_fetch_add(&calls_seen, 1) + 1;
    if (seen != fail_at()) return 0;
    atomic_store(&injected, 1);
    report(call);
    return 1;
}

long fault_turn_calls_seen(void) { return atomic_load(&calls_seen); }

int fault_turn_injected(void) { return atomic_load(&injected); }

void *fault_turn_next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "fault injection: %s has no next definition (libhdf5 or libc)\n", name);
        _exit(125);
    }
    return f;
}
