/*
 * clock_end_test.c - a call's end as the hot path stores it (seconds
 * modulo 2^32 above the nanoseconds, c/src/record/clock.h) and back to ns
 * from the call's start: across second boundaries, across the 2^32 s wrap
 * of the stored seconds, from a negative start (a time namespace may shift
 * CLOCK_MONOTONIC), and for the real clock.
 *
 * A unit test of an internal header (scripts/check-layout allows c/src
 * headers in tests/unit only).
 */
#include <stdio.h>

#include "check.h"
#include "record/clock.h"

int check_failures = 0;

#define NS INT64_C(1000000000)

static int64_t round_trip(int64_t start_ns, int64_t end_ns) {
    int64_t sec = end_ns / NS, nsec = end_ns % NS;
    if (nsec < 0) nsec += NS, sec--;
    struct timespec ts = {.tv_sec = (time_t)sec, .tv_nsec = (long)nsec};
    int64_t stored = 0;
    spi_clock_store_end(&stored, &ts);
    return spi_clock_end_ns(start_ns, stored);
}

static void test_cases(void) {
    static const int64_t starts[] = {0, 1, NS - 1, NS, 5 * NS + 123456789,
                                     (INT64_C(1) << 32) * NS - 7, (INT64_C(1) << 32) * NS + 42,
                                     -1, -NS, -NS - 1, -(INT64_C(1) << 32) * NS + 5};
    static const int64_t durations[] = {0, 1, 999, NS - 1, NS, NS + 1, 3 * NS + 777,
                                        ((INT64_C(1) << 32) - 2) * NS + NS - 1};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        for (size_t j = 0; j < sizeof durations / sizeof *durations; j++)
            CHECK_EQ_INT(round_trip(starts[i], starts[i] + durations[j]) - starts[i], durations[j]);
}

static void test_clock(void) {
    for (int i = 0; i < 1000; i++) {
        int64_t start = spi_clock_now_ns();
        struct timespec end;
        spi_clock_read(&end);
        int64_t stored = 0;
        spi_clock_store_end(&stored, &end);
        CHECK_EQ_INT(spi_clock_end_ns(start, stored), spi_clock_ns(&end));
    }
}

int main(void) {
    test_cases();
    test_clock();
    if (check_failures) {
        fprintf(stderr, "clock_end_test: %d check(s) failed\n", check_failures);
        return 1;
    }
    printf("clock_end_test: ok\n");
    return 0;
}
