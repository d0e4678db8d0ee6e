/*
 * run_codec_test.c - the compact form of a streamed finalize's sorted runs
 * (record/run_codec.h) gives back exactly the calls it was given: random
 * calls of every magnitude, the int64 and uint32 edges (INT64_MIN/MAX, -1,
 * 0, differences that wrap), runs like a real trace's (ids +1, roots,
 * siblings of one parent), each call within SPI_RUN_CALL_MAX_BYTES, and
 * bytes that are not an encoded call refused instead of read past.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/run_codec.h"

#include "unit_check.h"

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) { /* xorshift64*: the same sequence on every run */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
}

static const int64_t edges[] = {0, 1, -1, 2, -2, 127, 128, -128, -129, 16383, 16384,
                                INT32_MAX, INT32_MIN, (int64_t)UINT32_MAX, INT64_MAX,
                                INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
#define EDGE_COUNT (sizeof edges / sizeof edges[0])

/* A value of any magnitude: an edge, a few bits, or all 64. */
static int64_t any_value(void) {
    uint64_t r = next_random();
    switch (r % 4) {
    case 0: return edges[(r >> 8) % EDGE_COUNT];
    case 1: return (int64_t)(next_random() >> (r >> 8) % 64) * ((r >> 16) & 1 ? -1 : 1);
    case 2: return (int64_t)(next_random() & 0xff);
    default: return (int64_t)next_random();
    }
}

static uint32_t any_u32(void) {
    static const uint32_t u32_edges[] = {0, 1, 127, 128, UINT32_MAX, UINT32_MAX - 1};
    uint64_t r = next_random();
    return r % 3 == 0 ? u32_edges[(r >> 8) % 6] : (uint32_t)(next_random() >> (r >> 8) % 32);
}

static int same_call(const spi_run_call *a, const spi_run_call *b) {
    return a->start == b->start && a->duration == b->duration && a->call_id == b->call_id &&
           a->parent_id == b->parent_id && a->region == b->region && a->thread == b->thread;
}

/* Encode `n` calls into one buffer, decode them back, compare; returns the
 * bytes used. */
static size_t round_trip(const char *what, const spi_run_call *calls, size_t n) {
    uint8_t *bytes = malloc(n * SPI_RUN_CALL_MAX_BYTES + SPI_RUN_CALL_MAX_BYTES);
    if (!bytes) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    spi_run_codec codec;
    spi_run_codec_reset(&codec);
    uint8_t *out = bytes;
    for (size_t i = 0; i < n; i++) {
        uint8_t *end = spi_run_call_encode(&codec, &calls[i], out);
        CHECK(end > out && (size_t)(end - out) <= SPI_RUN_CALL_MAX_BYTES,
              "%s: call %zu took %td bytes", what, i, end - out);
        out = end;
    }
    size_t size = (size_t)(out - bytes);
    memset(out, 0, SPI_RUN_CALL_MAX_BYTES);
    spi_run_codec_reset(&codec);
    const uint8_t *in = bytes;
    for (size_t i = 0; i < n && in; i++) {
        in = spi_run_call_decode(&codec, in);
        const spi_run_call back = codec.previous;
        CHECK(in != NULL, "%s: call %zu refused", what, i);
        if (!in) break;
        CHECK(same_call(&back, &calls[i]),
              "%s: call %zu: start %" PRId64 "/%" PRId64 " duration %" PRId64 "/%" PRId64
              " id %" PRId64 "/%" PRId64 " parent %" PRId64 "/%" PRId64 " region %u/%u"
              " thread %u/%u", what, i, back.start, calls[i].start, back.duration,
              calls[i].duration, back.call_id, calls[i].call_id, back.parent_id,
              calls[i].parent_id, back.region, calls[i].region, back.thread, calls[i].thread);
    }
    CHECK(in == bytes + size, "%s: %td of %zu bytes decoded", what, in ? in - bytes : -1, size);
    free(bytes);
    return size;
}

int main(void) {
    enum { N = 200000 };
    spi_run_call *calls = calloc(N, sizeof *calls);
    if (!calls) return 1;

    /* every field random, of any magnitude */
    for (size_t i = 0; i < N; i++)
        calls[i] = (spi_run_call){.start = any_value(), .duration = any_value(),
                                  .call_id = any_value(), .parent_id = any_value(),
                                  .region = any_u32(), .thread = any_u32()};
    size_t random_bytes = round_trip("random", calls, N);

    /* every pair of edge values in every field, one after the other */
    size_t n = 0;
    for (size_t a = 0; a < EDGE_COUNT; a++)
        for (size_t b = 0; b < EDGE_COUNT; b++) {
            calls[n++] = (spi_run_call){edges[a], edges[a], edges[a], edges[a], 0, 0};
            calls[n++] = (spi_run_call){edges[b], edges[b], edges[b], edges[b],
                                        (uint32_t)edges[b], (uint32_t)edges[a]};
        }
    /* the id flag at the wrap: INT64_MAX then INT64_MIN is "previous + 1" */
    calls[n++] = (spi_run_call){.call_id = INT64_MAX, .parent_id = -1};
    calls[n++] = (spi_run_call){.call_id = INT64_MIN, .parent_id = INT64_MAX};
    calls[n++] = (spi_run_call){.call_id = INT64_MIN + 1, .parent_id = INT64_MAX};
    round_trip("edges", calls, n);

    /* a trace's run: one region, ids +1, roots, then siblings of one parent */
    int64_t start = 1700000000000000000;
    for (size_t i = 0; i < N; i++) {
        start += 20 + (int64_t)(next_random() % 16);
        calls[i] = (spi_run_call){.start = start, .duration = 9 + (int64_t)(next_random() % 8),
                                  .call_id = 1000 + (int64_t)i,
                                  .parent_id = i < N / 2 ? -1 : 999, .region = 3, .thread = 0};
    }
    size_t loop_bytes = round_trip("loop", calls, N);
    CHECK(loop_bytes <= 4 * (size_t)N, "a loop's run took %zu bytes for %d calls", loop_bytes, N);
    CHECK(random_bytes > loop_bytes, "random %zu bytes, loop %zu", random_bytes, loop_bytes);

    /* bytes that are not a call: unknown flags, a varint of 11 bytes */
    uint8_t bad[2 * SPI_RUN_CALL_MAX_BYTES];
    spi_run_codec codec;
    memset(bad, 0, sizeof bad);
    bad[0] = 0x80;
    spi_run_codec_reset(&codec);
    CHECK(spi_run_call_decode(&codec, bad) == NULL, "unknown flags accepted");
    memset(bad, 0xff, 12);
    bad[0] = 0;
    spi_run_codec_reset(&codec);
    CHECK(spi_run_call_decode(&codec, bad) == NULL, "an 11-byte varint accepted");

    free(calls);
    if (failures) {
        fprintf(stderr, "run_codec_test: %d failures\n", failures);
        return 1;
    }
    printf("run_codec_test: ok (random %zu bytes, a loop's run %zu bytes for %d calls each)\n",
           random_bytes, loop_bytes, N);
    return 0;
}
