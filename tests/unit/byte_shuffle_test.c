/*
 * byte_shuffle_test.c - HDF5's shuffle and unshuffle (format/byte_shuffle.c)
 * against the filter's definition written out byte by byte: plane j of an
 * n-element buffer holds byte j of every element, in element order; bytes
 * past the last whole element are copied as they are.
 *
 * Every element count from 0 to 300 (each block path of the fast code and
 * every tail: 16 at a time, 8 at a time, one by one) and a few large ones,
 * element sizes 1, 2, 3, 4, 8 and 16, with 0-7 trailing bytes, random
 * bytes; and unshuffle(shuffle(x)) == x.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/byte_shuffle.h"

static int failures;

/* A failed comparison: file:line, the case, the first differing byte and
 * both values. */
#define CHECK_SAME(want, got, bytes, what)                                                   \
    do {                                                                                     \
        size_t at_ = 0;                                                                      \
        while (at_ < (bytes) && (want)[at_] == (got)[at_]) at_++;                            \
        if (at_ < (bytes) && failures++ < 10)                                                \
            fprintf(stderr,                                                                  \
                    "FAIL %s:%d: %s of %zu elements of %zu bytes + %zu: byte %zu is %u, "   \
                    "want %u\n",                                                            \
                    __FILE__, __LINE__, what, elements, size, extra, at_, (unsigned)(got)[at_], \
                    (unsigned)(want)[at_]);                                                  \
    } while (0)

static void reference(const unsigned char *in, unsigned char *out, size_t bytes, size_t size,
                      int unshuffle) {
    size_t elements = size ? bytes / size : 0;
    if (size <= 1 || elements == 0) {
        memcpy(out, in, bytes);
        return;
    }
    for (size_t i = 0; i < elements; i++)
        for (size_t j = 0; j < size; j++) {
            size_t plane = j * elements + i, element = i * size + j;
            if (unshuffle) out[element] = in[plane];
            else out[plane] = in[element];
        }
    memcpy(out + elements * size, in + elements * size, bytes - elements * size);
}

static uint64_t state = 0x9E3779B97F4A7C15u;
static unsigned char next_byte(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (unsigned char)(state >> 24);
}

static void check(size_t elements, size_t size, size_t extra) {
    size_t bytes = elements * size + extra;
    unsigned char *in = calloc(bytes + 1, 1), *want = calloc(bytes + 1, 1);
    unsigned char *got = calloc(bytes + 1, 1), *back = calloc(bytes + 1, 1);
    if (!in || !want || !got || !back) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t k = 0; k < bytes; k++) in[k] = next_byte();
    reference(in, want, bytes, size, 1);
    spi_byte_unshuffle(in, got, bytes, size);
    CHECK_SAME(want, got, bytes, "unshuffle");
    reference(in, want, bytes, size, 0);
    spi_byte_shuffle(in, got, bytes, size);
    CHECK_SAME(want, got, bytes, "shuffle");
    spi_byte_unshuffle(got, back, bytes, size);
    CHECK_SAME(in, back, bytes, "round trip");
    free(in);
    free(want);
    free(got);
    free(back);
}

int main(void) {
    static const size_t sizes[] = {1, 2, 3, 4, 8, 16};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t n = 0; n <= 300; n++) check(n, sizes[s], n % 8);
    /* a writer's 512 KiB chunk and odd large counts */
    check(65536, 8, 0);
    check(65536 + 15, 8, 7);
    check(100003, 8, 3);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("byte_shuffle: ok\n");
    return 0;
}
