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
 */
#include "format/h5_chunk_deflate.h"

#include <libdeflate.h>

#include "format/byte_shuffle.h"
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
