/*
 * stats_stream_test.c - a row's statistics computed as its calls stream by
 * in slices (spi_stats_stream_*, profile/row_stats.c: a streamed finalize)
 * are bit for bit those of spi_stats_compute over the whole row: every
 * field, m2's four lanes included, for row lengths around multiples of
 * four and slices of every size from 1 (blocks cut anywhere), on random
 * durations and starts with edge values.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/row_stats.h"

#include "unit_check.h"

static uint64_t state = 0x2545F4914F6CDD1Dull;
static uint64_t next_random(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
}

static int64_t any_duration(void) {
    static const int64_t edges[] = {0, 1, -1, 1000000000, (int64_t)1 << 40, -((int64_t)1 << 40)};
    uint64_t r = next_random();
    if (r % 16 == 0) return edges[(r >> 8) % 6];
    return (int64_t)(next_random() % 100000) + 10;
}

static void check_row(const int64_t *starts, const int64_t *durations, uint64_t count,
                      uint64_t slice, const char *what) {
    spi_stats whole, streamed;
    spi_stats_compute(&whole, starts, durations, NULL, count, NULL);
    uint64_t total = 0;
    for (uint64_t i = 0; i < count; i++) total += (uint64_t)durations[i];
    spi_stats_stream stream;
    spi_stats_stream_begin(&stream, count, total);
    for (uint64_t first = 0; first < count;) {
        uint64_t n = slice ? slice : 1 + next_random() % 13; /* slice 0: random sizes */
        if (n > count - first) n = count - first;
        spi_stats_stream_add(&stream, starts + first, durations + first, n);
        first += n;
    }
    spi_stats_stream_end(&stream, &streamed);
    CHECK(memcmp(&whole, &streamed, sizeof whole) == 0,
          "%s, %llu calls, slices of %llu: total %lld/%lld min %lld/%lld max %lld/%lld "
          "first %lld/%lld last %lld/%lld start_min %lld/%lld end_max %lld/%lld mean %.17g/%.17g "
          "m2 %.17g/%.17g", what, (unsigned long long)count, (unsigned long long)slice,
          (long long)whole.total, (long long)streamed.total, (long long)whole.minimum,
          (long long)streamed.minimum, (long long)whole.maximum, (long long)streamed.maximum,
          (long long)whole.first, (long long)streamed.first, (long long)whole.last,
          (long long)streamed.last, (long long)whole.start_minimum,
          (long long)streamed.start_minimum, (long long)whole.end_maximum,
          (long long)streamed.end_maximum, whole.mean, streamed.mean, whole.m2, streamed.m2);
}

int main(void) {
    enum { MAX = 70000 };
    int64_t *starts = malloc(MAX * sizeof *starts), *durations = malloc(MAX * sizeof *durations);
    if (!starts || !durations) return 1;
    int64_t start = -5000;
    for (size_t i = 0; i < MAX; i++) {
        start += (int64_t)(next_random() % 50);
        starts[i] = start;
        durations[i] = any_duration();
    }
    const uint64_t counts[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1000, 1001, 1002, 1003, 65539};
    const uint64_t slices[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64, 8192, MAX};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        for (size_t s = 0; s < sizeof slices / sizeof slices[0]; s++)
            check_row(starts, durations, counts[c], slices[s], "random");
    /* the slices at a row's very end: the last calls go to lane 0 */
    for (uint64_t count = 60; count < 68; count++)
        for (uint64_t slice = 1; slice <= 9; slice++) check_row(starts, durations, count, slice, "tail");
    free(starts);
    free(durations);
    if (failures) {
        fprintf(stderr, "stats_stream_test: %d failures\n", failures);
        return 1;
    }
    printf("stats_stream_test: ok\n");
    return 0;
}
