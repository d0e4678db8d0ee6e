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
 * The shuffle (byte_shuffle.h) is the hot part next to the compressor.
 * libdeflate sees only the planes up to the last one that varies: the
 * constant high planes after it (zeros in deltas, durations and ids) are
 * appended by deflate_planes.c, which took two thirds of libdeflate's time
 * for a few hundred bytes (issue 31); the stream is otherwise libdeflate's.
 *
 * Constant chunks (every element the same: a row's parent ids when its
 * calls share one parent or are roots, its thread ids) are common and cost
 * libdeflate as much as any other (issue 31: 10.6 ns a value at level 2 for
 * a column of -1, a quarter of the deflate time of a one-region trace).
 * The encoder keeps the encodings of the last few constant chunks it made,
 * keyed by the element, the element size and the chunk size, and copies
 * the bytes instead of compressing again. The output is the same bytes
 * libdeflate gives for that input (it is deterministic at one level), so
 * the file does not change; the test is one memcmp that stops at the first
 * difference, nothing for a chunk that varies.
 */
#include "format/h5_chunk_deflate.h"

#include <libdeflate.h>
#include <stdbool.h>
#include <string.h>

#include "format/byte_shuffle.h"
#include "format/deflate_planes.h"
#include "scope_profiler.h"
#include "util/alloc.h"

#define CONSTANT_ENTRIES 4
#define CONSTANT_MAX_ELEMENT 16
#define CONSTANT_MAX_ENCODED 4096 /* a constant chunk of 512 KiB takes ~550 bytes */
#define CONSTANT_MIN_RAW 4096     /* smaller chunks compress in no time anyway */

typedef struct constant_chunk {
    size_t raw_bytes;         /* 0: an empty entry */
    size_t element_bytes;
    unsigned char element[CONSTANT_MAX_ELEMENT];
    size_t encoded_bytes;
    unsigned char encoded[CONSTANT_MAX_ENCODED];
} constant_chunk;

struct spi_chunk_encoder {
    struct libdeflate_compressor *compressor;
    size_t max_chunk_bytes;
    unsigned char *shuffled; /* max_chunk_bytes: the shuffle's output */
    constant_chunk constants[CONSTANT_ENTRIES];
    unsigned next_constant;  /* the entry replaced next (round robin) */
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

/* Whether every element of the chunk equals the first: each byte equals
 * the one an element further on. */
static bool chunk_is_constant(const unsigned char *raw, size_t raw_bytes, size_t element_bytes) {
    return element_bytes >= 1 && element_bytes <= CONSTANT_MAX_ELEMENT &&
           raw_bytes >= CONSTANT_MIN_RAW && raw_bytes % element_bytes == 0 &&
           memcmp(raw, raw + element_bytes, raw_bytes - element_bytes) == 0;
}

static constant_chunk *find_constant(spi_chunk_encoder *encoder, const unsigned char *raw,
                                     size_t raw_bytes, size_t element_bytes) {
    for (unsigned i = 0; i < CONSTANT_ENTRIES; i++) {
        constant_chunk *c = &encoder->constants[i];
        if (c->raw_bytes == raw_bytes && c->element_bytes == element_bytes &&
            memcmp(c->element, raw, element_bytes) == 0)
            return c;
    }
    return NULL;
}

int spi_chunk_encode(spi_chunk_encoder *encoder, const void *raw, size_t raw_bytes,
                     size_t element_bytes, void *out, size_t out_capacity, size_t *out_bytes) {
    *out_bytes = 0;
    if (raw_bytes > encoder->max_chunk_bytes || out_capacity < spi_chunk_encoded_bound(raw_bytes))
        return SP_ERR_INVALID_ARGUMENT;
    bool constant = chunk_is_constant(raw, raw_bytes, element_bytes);
    const constant_chunk *known = constant ? find_constant(encoder, raw, raw_bytes, element_bytes)
                                           : NULL;
    if (known) {
        memcpy(out, known->encoded, known->encoded_bytes);
        *out_bytes = known->encoded_bytes;
        return SP_OK;
    }
    spi_byte_shuffle(raw, encoder->shuffled, raw_bytes, element_bytes);
    /* The constant high planes written directly, the rest by libdeflate
     * (deflate_planes.h); a chunk whose top plane varies, or one too small,
     * is libdeflate's alone. */
    size_t stored = 0;
    int planes = spi_deflate_planes(encoder->compressor, encoder->shuffled, raw_bytes,
                                    element_bytes, out, out_capacity, &stored);
    if (planes == SPI_PLANES_FAILED) return SP_ERR_OUTPUT;
    if (planes == SPI_PLANES_DECLINED)
        stored = libdeflate_zlib_compress(encoder->compressor, encoder->shuffled, raw_bytes, out,
                                          out_capacity);
    if (stored == 0) return SP_ERR_OUTPUT; /* cannot happen within the bound */
    if (constant && stored <= CONSTANT_MAX_ENCODED) {
        constant_chunk *c = &encoder->constants[encoder->next_constant];
        encoder->next_constant = (encoder->next_constant + 1) % CONSTANT_ENTRIES;
        c->raw_bytes = raw_bytes;
        c->element_bytes = element_bytes;
        memcpy(c->element, raw, element_bytes);
        c->encoded_bytes = stored;
        memcpy(c->encoded, out, stored);
    }
    *out_bytes = stored;
    return SP_OK;
}
