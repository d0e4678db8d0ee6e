/*
 * clock.h - the recording clock. Nothing else in the library reads a clock.
 *
 * CLOCK_MONOTONIC in int64 ns is exactly what Python's time.perf_counter_ns()
 * returns on Linux, so native and Python timestamps of one process share a
 * timeline and can be merged without any offset. On Linux the call goes
 * through the vDSO (about 20 ns, no system call). A TSC path would be faster
 * but must convert exactly to CLOCK_MONOTONIC ns; it is not worth its
 * calibration risk while the vDSO read is within the overhead budget.
 */
#ifndef SPI_CLOCK_H
#define SPI_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t spi_clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + (int64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread, ns (0 if unavailable). */
static inline int64_t spi_clock_thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + (int64_t)ts.tv_nsec;
}

#endif /* SPI_CLOCK_H */
