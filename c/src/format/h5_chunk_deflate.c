/*
 * h5_chunk_deflate.c - shuffle + zlib-format deflate of one chunk, as
 * HDF5's filter pipeline stores it (see h5_chunk_deflate.h).
 *
 * libdeflate instead of zlib: its whole-buffer interface fits a chunk
 * exactly, and at the level the pool uses it spends about zlib level 1's
 * time on shuffled event columns for a third less output (h5_column_pool.c
 * has the numbers). Its zlib wrapper writes the header and the Adler-32
 * trailer that HDF5's inflate expects.
 *
 * The shuffle of 8-byte elements (every event column) is the hot part next
 * to the compressor: 8 elements at a time are loaded as 8 words and their
 * 8x8 byte matrix transposed with three rounds of masked swaps, so each
 * plane gets one 8-byte store instead of 8 byte stores. Other element sizes
 * take the plain loop (nothing writes them today).
 */
#include "format/h5_chunk_deflate.h"

#include <libdeflate.h>
#include <stdint.h>
#include <string.h>

#include "scope_profiler.h"
#include "util/alloc.h"

struct spi_chunk_encoder {
    struct libdeflate_compressor *compressor;
    size_t max_chunk_bytes;
    unsigned char *shuffled; /* max_chunk_bytes: the shuffle's output */
};

spi_chunk_encoder *spi_chunk_encoder_create(int level, size_t max_chunk_bytes) {
    spi_chunk_encoder *encoder = spi_calloc(1, sizeof *encoder);
    if (!encoder) return NULL;
    encoder->max_chunk_bytes = max_chunk_bytes;
    encoder->shuffled = spi_malloc(max_chunk_bytes);
    encoder->compressor = libdeflate_alloc_compressor(level);
    if (!encoder->shuffled || !encoder->compressor) {
        spi_chunk_encoder_free(encoder);
        return NULL;
    }
    return encoder;
}

void spi_chunk_encoder_free(spi_chunk_encoder *encoder) {
    if (!encoder) return;
    libdeflate_free_compressor(encoder->compressor);
    spi_free(encoder->shuffled);
    spi_free(encoder);
}

size_t spi_chunk_encoded_bound(size_t raw_bytes) {
    /* NULL: a bound valid for every compression level. */
    return libdeflate_zlib_compress_bound(NULL, raw_bytes);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Swap the `mask` bytes of rows a and b that lie `shift` bits apart: one
 * round of the 8x8 byte transpose. */
#define TRANSPOSE_ROUND(a, b, shift, mask)                  \
    do {                                                    \
        uint64_t t_ = (((a) >> (shift)) ^ (b)) & (mask);    \
        (a) ^= t_ << (shift);                               \
        (b) ^= t_;                                          \
    } while (0)

/* Elements of 8 bytes, 8 at a time: word j of the transposed block holds
 * byte j of the 8 elements, which is where they go in plane j. */
static size_t shuffle8_blocks(const unsigned char *src, unsigned char *dst, size_t elements) {
    size_t i = 0;
    for (; i + 8 <= elements; i += 8) {
        uint64_t r[8];
        memcpy(r, src + i * 8, sizeof r);
        for (int k = 0; k < 4; k++) TRANSPOSE_ROUND(r[k], r[k + 4], 32, UINT64_C(0x00000000FFFFFFFF));
        for (int k = 0; k < 8; k += (k & 1) ? 3 : 1)
            TRANSPOSE_ROUND(r[k], r[k + 2], 16, UINT64_C(0x0000FFFF0000FFFF));
        for (int k = 0; k < 8; k += 2) TRANSPOSE_ROUND(r[k], r[k + 1], 8, UINT64_C(0x00FF00FF00FF00FF));
        for (int j = 0; j < 8; j++) memcpy(dst + (size_t)j * elements + i, &r[j], 8);
    }
    return i;
}
#else
static size_t shuffle8_blocks(const unsigned char *src, unsigned char *dst, size_t elements) {
    (void)src, (void)dst, (void)elements;
    return 0;
}
#endif

void spi_byte_shuffle(const void *src, void *dst, size_t bytes, size_t element_bytes) {
    const unsigned char *in = src;
    unsigned char *out = dst;
    if (element_bytes <= 1 || bytes < element_bytes) {
        memcpy(out, in, bytes);
        return;
    }
    size_t elements = bytes / element_bytes;
    size_t done = element_bytes == 8 ? shuffle8_blocks(in, out, elements) : 0;
    for (size_t i = done; i < elements; i++)
        for (size_t j = 0; j < element_bytes; j++)
            out[j * elements + i] = in[i * element_bytes + j];
    size_t whole = elements * element_bytes;
    if (whole < bytes) memcpy(out + whole, in + whole, bytes - whole);
}

int spi_chunk_encode(spi_chunk_encoder *encoder, const void *raw, size_t raw_bytes,
                     size_t element_bytes, void *out, size_t out_capacity, size_t *out_bytes) {
    *out_bytes = 0;
    if (raw_bytes > encoder->max_chunk_bytes || out_capacity < spi_chunk_encoded_bound(raw_bytes))
        return SP_ERR_INVALID_ARGUMENT;
    spi_byte_shuffle(raw, encoder->shuffled, raw_bytes, element_bytes);
    size_t stored = libdeflate_zlib_compress(encoder->compressor, encoder->shuffled, raw_bytes, out,
                                             out_capacity);
    if (stored == 0) return SP_ERR_OUTPUT; /* cannot happen within the bound */
    *out_bytes = stored;
    return SP_OK;
}
