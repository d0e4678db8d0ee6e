/*
 * omp_runtime.c - the OpenMP runtime's answers the recorder needs while it
 * records (omp_runtime.h), through weak references. Apart from openmp.c,
 * which runs at finalize over recorded calls, so that recording never
 * depends on the finalize-time code.
 *
 * Worker names. Linux gives a new thread its creator's name, which for an
 * OpenMP team is the executable's: a thread table of "a.out" x 8 tells a
 * user nothing (issue 34). libgomp and libomp leave their workers unnamed,
 * so a worker whose name is still the inherited one is named after its
 * OpenMP thread number, "omp worker N"; a name the program set wins.
 */
#include "record/omp_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Weak: resolved when the program links an OpenMP runtime, NULL otherwise. */
extern int omp_in_parallel(void) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));

bool spi_omp_present(void) { return omp_in_parallel != NULL; }

bool spi_omp_in_parallel(void) { return omp_in_parallel && omp_in_parallel(); }

bool spi_omp_thread_is_worker(void) {
    return omp_in_parallel && omp_get_thread_num && omp_in_parallel() && omp_get_thread_num() > 0;
}

/* Whether `name` is the name a thread inherits without being named: the
 * process's (the main thread's /proc/self/comm) or the executable's short
 * name, both cut to the kernel's 15 bytes. */
static bool inherited_name(const char *name) {
    if (!name[0]) return true;
    /* open/read, not stdio: a thread may attach inside a signal handler */
    char comm[64] = "";
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, comm, sizeof comm - 1);
        comm[got > 0 ? got : 0] = '\0';
        close(fd);
        comm[strcspn(comm, "\n")] = '\0';
    }
    if (comm[0] && strcmp(comm, name) == 0) return true;
    char exe[16];
    snprintf(exe, sizeof exe, "%s", program_invocation_short_name);
    return strcmp(exe, name) == 0;
}

void spi_omp_thread_name(bool worker, const char *current, char *name, size_t size) {
    if (size == 0) return;
    if (worker && omp_get_thread_num && inherited_name(current)) {
        snprintf(name, size, "omp worker %d", omp_get_thread_num());
        return;
    }
    if (name != current) snprintf(name, size, "%s", current);
}
