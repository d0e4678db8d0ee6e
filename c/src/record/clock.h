/*
 * clock.h - the recording clock. Nothing else in the library reads a clock.
 *
 * CLOCK_MONOTONIC in int64 ns is exactly what Python's time.perf_counter_ns()
 * returns on Linux, so native and Python timestamps of one process share a
 * timeline and can be merged without any offset. On Linux the call goes
 * through the vDSO (about 20-30 ns, no system call, but a seqlock and a
 * scaling on top of the TSC it reads).
 *
 * The TSC path reads the time-stamp counter directly and leaves the
 * conversion to CLOCK_MONOTONIC ns to finalize (tick_map.h): the raw read is
 * cheaper, and an anchor (ticks and ns read back to back) now and then
 * keeps the conversion exact. It is used only where the counter is
 * invariant (constant and non-stop across power states, and the kernel's
 * own clocksource: spi_clock_tsc_usable).
 */
#ifndef SPI_CLOCK_H
#define SPI_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* the byte offset of the low 32 bits of an int64 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define SPI_CLOCK_LOW_HALF 4
#else
#define SPI_CLOCK_LOW_HALF 0
#endif

/* A CLOCK_MONOTONIC reading as the vDSO gives it, and its value in ns. */
static inline void spi_clock_read(struct timespec *ts) { clock_gettime(CLOCK_MONOTONIC, ts); }

static inline int64_t spi_clock_ns(const struct timespec *ts) {
    return (int64_t)ts->tv_sec * INT64_C(1000000000) + (int64_t)ts->tv_nsec;
}

static inline int64_t spi_clock_now_ns(void) {
    struct timespec ts;
    spi_clock_read(&ts);
    return spi_clock_ns(&ts);
}

/* Why the hot path keeps raw readings: the vDSO orders its counter read
 * (rdtscp), so it waits for every older instruction, among them whatever
 * the previous reading fed. A multiply-add (and a subtraction) on a
 * reading therefore adds its latency to every pair of reads; a reading
 * merely stored adds nothing. So a call's end is stored as it came, its
 * seconds modulo 2^32 above its nanoseconds in 64 bits (two 32-bit
 * stores, no arithmetic: spi_clock_store_end), and turned into ns
 * off the hot path by spi_clock_end_ns, from the call's start in ns. */
static inline void spi_clock_store_end(int64_t *slot, const struct timespec *ts) {
    uint32_t nsec = (uint32_t)ts->tv_nsec, sec = (uint32_t)ts->tv_sec;
    char *bytes = (char *)slot;
    memcpy(bytes + SPI_CLOCK_LOW_HALF, &nsec, 4);
    /* keeps the compiler from merging the two halves with a shift and an
     * or, which is the arithmetic this is about */
    __asm__ volatile("" ::: "memory");
    memcpy(bytes + (4 - SPI_CLOCK_LOW_HALF), &sec, 4);
}

/* The end in ns of a call that started at start_ns and whose end was
 * stored by spi_clock_store_end (a call shorter than 2^32 - 1 s, 136
 * years: the stored seconds are those modulo 2^32). */
static inline int64_t spi_clock_end_ns(int64_t start_ns, int64_t stored) {
    uint64_t bits = (uint64_t)stored;
    uint32_t nsec = (uint32_t)bits, sec = (uint32_t)(bits >> 32);
    int64_t start_sec = start_ns / INT64_C(1000000000);
    if (start_ns % INT64_C(1000000000) < 0) start_sec--; /* floor */
    int64_t end_sec = start_sec + (int64_t)(uint32_t)(sec - (uint32_t)start_sec);
    return end_sec * INT64_C(1000000000) + nsec;
}

/* The time-stamp counter (x86-64); elsewhere CLOCK_MONOTONIC ns, so that
 * a build for another architecture still records correct times. */
static inline int64_t spi_clock_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
    return (int64_t)__builtin_ia32_rdtsc();
#else
    return spi_clock_now_ns();
#endif
}

/* A (ticks, ns) pair read back to back: ticks is the middle of the two
 * counter reads around the clock read, so the pair is exact to half their
 * distance. The tightest of three reads is kept: an interrupt or a
 * preemption between the reads would otherwise widen that bound to its
 * own length. */
static inline void spi_clock_anchor(int64_t *ticks, int64_t *ns) {
    int64_t best_window = INT64_MAX;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t before = spi_clock_ticks();
        int64_t read = spi_clock_now_ns();
        int64_t after = spi_clock_ticks();
        if (after - before < best_window) {
            best_window = after - before;
            *ticks = before + (after - before) / 2;
            *ns = read;
        }
    }
}

/* true when the TSC can stand in for CLOCK_MONOTONIC here: the CPU flags
 * constant_tsc and nonstop_tsc (invariant TSC) and the kernel uses "tsc"
 * as its clocksource (it would not if it found the counters of the cores
 * out of step). `reason` says why not. Reads /proc and /sys: setup only. */
bool spi_clock_tsc_usable(char *reason, size_t reason_bytes);

/* true when the CPU says it runs under a hypervisor (the "hypervisor" flag
 * of /proc/cpuinfo). There the kernel may trust the TSC without checking
 * the virtual CPUs' counters against each other (the host vouches for them),
 * and they can be out of step: on a KVM guest here a thread moving between
 * its two vCPUs saw its TSC jump by about 100 ns, so a call's begin read on
 * one vCPU and its child's on the other came out in the wrong order. Reads
 * /proc: setup only. */
bool spi_clock_in_virtual_machine(void);

/* CPU time consumed by the calling thread, ns (0 if unavailable). */
static inline int64_t spi_clock_thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + (int64_t)ts.tv_nsec;
}

#endif /* SPI_CLOCK_H */
