/*
 * byte_shuffle.c - HDF5's shuffle and unshuffle (see byte_shuffle.h).
 *
 * For 8-byte elements, 8 elements at a time: the 8 words (8 elements, or
 * one word from each of the 8 byte planes) are an 8x8 byte matrix, and
 * transposing it in registers with three rounds of masked swaps turns one
 * layout into the other with 8 word stores instead of 64 byte stores. The
 * transpose is its own inverse, so both directions share it.
 */
#include "format/byte_shuffle.h"

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HAVE_WORD_TRANSPOSE 1

/* Swap the `mask` bytes of rows a and b that lie `shift` bits apart: one
 * round of the 8x8 byte transpose. */
#define TRANSPOSE_ROUND(a, b, shift, mask)               \
    do {                                                 \
        uint64_t t_ = (((a) >> (shift)) ^ (b)) & (mask); \
        (a) ^= t_ << (shift);                            \
        (b) ^= t_;                                       \
    } while (0)

/* Byte j of word i <-> byte i of word j. */
static inline void transpose8x8(uint64_t r[8]) {
    for (int k = 0; k < 4; k++) TRANSPOSE_ROUND(r[k], r[k + 4], 32, UINT64_C(0x00000000FFFFFFFF));
    for (int k = 0; k < 8; k += (k & 1) ? 3 : 1)
        TRANSPOSE_ROUND(r[k], r[k + 2], 16, UINT64_C(0x0000FFFF0000FFFF));
    for (int k = 0; k < 8; k += 2) TRANSPOSE_ROUND(r[k], r[k + 1], 8, UINT64_C(0x00FF00FF00FF00FF));
}
#endif

/* Elements [0, return) of 8 bytes moved between layouts 8 at a time. */
static size_t shuffle8_blocks(const unsigned char *src, unsigned char *dst, size_t elements,
                              int unshuffle) {
    size_t i = 0;
#ifdef HAVE_WORD_TRANSPOSE
    for (; i + 8 <= elements; i += 8) {
        uint64_t r[8];
        if (unshuffle)
            for (size_t j = 0; j < 8; j++) memcpy(&r[j], src + j * elements + i, 8);
        else
            memcpy(r, src + i * 8, sizeof r);
        transpose8x8(r);
        if (unshuffle)
            memcpy(dst + i * 8, r, sizeof r);
        else
            for (size_t j = 0; j < 8; j++) memcpy(dst + j * elements + i, &r[j], 8);
    }
#else
    (void)src, (void)dst, (void)elements, (void)unshuffle;
#endif
    return i;
}

static void move_bytes(const unsigned char *in, unsigned char *out, size_t bytes,
                       size_t element_bytes, int unshuffle) {
    if (element_bytes <= 1 || bytes < element_bytes) {
        memcpy(out, in, bytes);
        return;
    }
    size_t elements = bytes / element_bytes;
    size_t done = element_bytes == 8 ? shuffle8_blocks(in, out, elements, unshuffle) : 0;
    for (size_t i = done; i < elements; i++)
        for (size_t j = 0; j < element_bytes; j++) {
            size_t plane = j * elements + i, element = i * element_bytes + j;
            if (unshuffle) out[element] = in[plane];
            else out[plane] = in[element];
        }
    size_t whole = elements * element_bytes;
    if (whole < bytes) memcpy(out + whole, in + whole, bytes - whole);
}

void spi_byte_shuffle(const void *src, void *dst, size_t bytes, size_t element_bytes) {
    move_bytes(src, dst, bytes, element_bytes, 0);
}

void spi_byte_unshuffle(const void *src, void *dst, size_t bytes, size_t element_bytes) {
    move_bytes(src, dst, bytes, element_bytes, 1);
}
