/*
 * chunk_deflate_test.c - one chunk's shuffle + deflate (format/h5_chunk_deflate.c)
 * gives the same bytes whether the encoder compresses it or copies a constant
 * chunk's encoding from its cache (issue 31), and those bytes inflate and
 * unshuffle back to the chunk: constant chunks of several values, sizes and
 * element sizes, more distinct constants than the cache holds, in turns, and
 * chunks that differ from a constant one in a single byte (first, middle,
 * last), which must not be taken for it.
 */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/byte_shuffle.h"
#include "format/h5_chunk_deflate.h"
#include "scope_profiler.h"

#include "unit_check.h"

#define MAX_CHUNK ((size_t)65536 * 8)

static unsigned char *encoded, *fresh_encoded, *inflated, *unshuffled;
static size_t capacity;

/* Encode `raw` with the long-lived `encoder` and with a new one; the
 * bytes must be equal and decode back to `raw`. */
static void check_chunk(spi_chunk_encoder *encoder, const char *what, const unsigned char *raw,
                        size_t raw_bytes, size_t element_bytes) {
    size_t bytes = 0, fresh_bytes = 0;
    CHECK(spi_chunk_encode(encoder, raw, raw_bytes, element_bytes, encoded, capacity, &bytes) ==
              SP_OK, "%s: encode", what);
    spi_chunk_encoder *fresh = spi_chunk_encoder_create(2, MAX_CHUNK);
    CHECK(fresh != NULL, "out of memory");
    if (!fresh) exit(1);
    CHECK(spi_chunk_encode(fresh, raw, raw_bytes, element_bytes, fresh_encoded, capacity,
                           &fresh_bytes) == SP_OK, "%s: encode (fresh)", what);
    spi_chunk_encoder_free(fresh);
    CHECK(bytes == fresh_bytes && memcmp(encoded, fresh_encoded, bytes) == 0,
          "%s: %zu bytes from the cache, %zu compressed, or different bytes", what, bytes,
          fresh_bytes);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t out = 0;
    CHECK(d && libdeflate_zlib_decompress(d, encoded, bytes, inflated, raw_bytes, &out) ==
                   LIBDEFLATE_SUCCESS && out == raw_bytes, "%s: does not inflate", what);
    libdeflate_free_decompressor(d);
    spi_byte_unshuffle(inflated, unshuffled, raw_bytes, element_bytes);
    CHECK(memcmp(unshuffled, raw, raw_bytes) == 0, "%s: decodes to other values", what);
}

static void fill_constant(unsigned char *raw, size_t raw_bytes, int64_t value) {
    for (size_t i = 0; i + 8 <= raw_bytes; i += 8) memcpy(raw + i, &value, 8);
}

int main(void) {
    capacity = spi_chunk_encoded_bound(MAX_CHUNK);
    encoded = malloc(capacity);
    fresh_encoded = malloc(capacity);
    inflated = malloc(MAX_CHUNK);
    unshuffled = malloc(MAX_CHUNK);
    unsigned char *raw = malloc(MAX_CHUNK);
    spi_chunk_encoder *encoder = spi_chunk_encoder_create(2, MAX_CHUNK);
    if (!encoded || !fresh_encoded || !inflated || !unshuffled || !raw || !encoder) return 1;

    /* six constants in turn (the cache holds four), each size twice */
    const int64_t values[] = {-1, 0, 7, INT64_MIN, INT64_MAX, 123456789};
    const size_t sizes[] = {MAX_CHUNK, 4096, 8 * 1000, 8 * 50000};
    char what[128];
    for (int round = 0; round < 3; round++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
                fill_constant(raw, sizes[s], values[v]);
                snprintf(what, sizeof what, "constant %lld, %zu bytes, round %d",
                         (long long)values[v], sizes[s], round);
                check_chunk(encoder, what, raw, sizes[s], 8);
                check_chunk(encoder, what, raw, sizes[s], 8); /* from the cache now */
            }
    /* the same bytes as other element sizes: 4-byte and 2-byte elements */
    fill_constant(raw, MAX_CHUNK, -1);
    check_chunk(encoder, "constant -1 as 4-byte elements", raw, MAX_CHUNK, 4);
    check_chunk(encoder, "constant -1 as 2-byte elements", raw, MAX_CHUNK, 2);
    check_chunk(encoder, "constant -1 as 8-byte elements", raw, MAX_CHUNK, 8);
    /* a period of 16 bytes is not constant for 8-byte elements */
    for (size_t i = 0; i < MAX_CHUNK; i += 16) {
        int64_t pair[2] = {5, 6};
        memcpy(raw + i, pair, 16);
    }
    check_chunk(encoder, "alternating 5, 6", raw, MAX_CHUNK, 8);
    /* one byte off, after the constant chunk is cached */
    const size_t where[] = {0, MAX_CHUNK / 2 + 3, MAX_CHUNK - 1};
    for (size_t w = 0; w < 3; w++) {
        fill_constant(raw, MAX_CHUNK, 7);
        check_chunk(encoder, "constant 7", raw, MAX_CHUNK, 8);
        raw[where[w]] ^= 0x40;
        snprintf(what, sizeof what, "constant 7 but byte %zu", where[w]);
        check_chunk(encoder, what, raw, MAX_CHUNK, 8);
    }

    spi_chunk_encoder_free(encoder);
    free(raw);
    free(encoded);
    free(fresh_encoded);
    free(inflated);
    free(unshuffled);
    if (failures) {
        fprintf(stderr, "chunk_deflate_test: %d failures\n", failures);
        return 1;
    }
    printf("chunk_deflate_test: ok\n");
    return 0;
}
