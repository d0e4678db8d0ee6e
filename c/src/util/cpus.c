/*
 * cpus.c - the CPUs this process may run on (cpus.h). The affinity mask
 * first: a rank bound to 2 cores of a 128-core node must not start 128
 * helper threads.
 */
#include "util/cpus.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/diag.h"

unsigned spi_cpus_available(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return (unsigned)count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)(online < INT_MAX ? online : INT_MAX) : 1;
}

unsigned spi_thread_count_setting(const char *name, const char *value, unsigned fallback,
                                  unsigned minimum, unsigned maximum, _Atomic _Bool *said) {
    if (!value || !*value) return fallback;
    char *end = NULL;
    errno = 0;
    long asked = strtol(value, &end, 10);
    while (end && (*end == ' ' || *end == '\t')) end++;
    if (errno || end == value || *end || asked < (long)minimum) {
        if (!atomic_exchange(said, 1)) /* once a process, not at every file */
            spi_diag("%s=%s is not a number of threads from %u up; using %u", name, value,
                     minimum, fallback);
        return fallback;
    }
    return (unsigned long)asked < maximum ? (unsigned)asked : maximum;
}

unsigned spi_write_threads(void) {
    static _Atomic _Bool said = 0;
    unsigned threads = spi_cpus_available();
    if (threads > SPI_WRITE_THREADS_MAX) threads = SPI_WRITE_THREADS_MAX;
    return spi_thread_count_setting("SCOPE_PROFILER_WRITE_THREADS",
                                    getenv("SCOPE_PROFILER_WRITE_THREADS"), threads, 1,
                                    SPI_WRITE_THREADS_MAX, &said);
}
