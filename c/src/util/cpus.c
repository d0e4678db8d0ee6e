/*
 * cpus.c - the CPUs this process may run on (cpus.h). The affinity mask
 * first: a rank bound to 2 cores of a 128-core node must not start 128
 * helper threads.
 */
#include "util/cpus.h"

#include <limits.h>
#include <sched.h>
#include <unistd.h>

unsigned spi_cpus_available(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return (unsigned)count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)(online < INT_MAX ? online : INT_MAX) : 1;
}
