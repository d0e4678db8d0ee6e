/*
 * h5_event_chunks.c - event columns filled chunk by chunk and written with
 * H5Dwrite_chunk after the column pool compressed them (see
 * h5_event_chunks.h).
 *
 * Why not HDF5's own pipeline: it filters a chunk on the thread that
 * writes, when the chunk leaves the cache, so finalize compressed every
 * column on one core. Here HDF5 only receives finished chunks, in the
 * order of the file (chunk k of every column before chunk k + 1), which
 * is also the order the old cache evicted them.
 */
#include "format/h5_event_chunks.h"

#include <string.h>

#include "format/h5_column_pool.h"
#include "format/h5_file_parts.h"
#include "scope_profiler.h"
#include "util/alloc.h"

struct spi_event_chunks {
    hid_t datasets[SPI_EV_COUNT];
    int64_t *filling[SPI_EV_COUNT]; /* the column's current chunk, NULL for absent columns */
    uint64_t event_count;
    size_t chunk_elements;
    size_t filled;                  /* values in the current chunks */
    uint64_t chunk_index;           /* of the current chunks */
    uint64_t written;               /* values submitted, whole chunks */
    int failed;
    bool finished;
    spi_column_pool *pool;
};

bool spi_event_chunks_wanted(uint64_t event_count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return spi_h5_event_columns_chunked(event_count);
#else
    (void)event_count; /* the file is little-endian: let HDF5 convert */
    return false;
#endif
}

/* The pool's sink: one compressed chunk into its dataset. */
static int store_chunk(void *context, const spi_encoded_chunk *chunk) {
    spi_event_chunks *chunks = context;
    hsize_t offset[1] = {(hsize_t)chunk->index * chunks->chunk_elements};
    return H5Dwrite_chunk(chunks->datasets[chunk->column], H5P_DEFAULT, 0, offset, chunk->bytes,
                          chunk->data) < 0
               ? SP_ERR_HDF5
               : SP_OK;
}

int spi_event_chunks_open(spi_event_chunks **out, const hid_t datasets[SPI_EV_COUNT],
                          uint64_t event_count, unsigned threads) {
    *out = NULL;
    spi_event_chunks *chunks = spi_calloc(1, sizeof *chunks);
    if (!chunks) return SP_ERR_OUT_OF_MEMORY;
    chunks->event_count = event_count;
    chunks->chunk_elements = event_count < SPI_EVENT_CHUNK_ELEMENTS ? (size_t)event_count
                                                                    : SPI_EVENT_CHUNK_ELEMENTS;
    chunks->failed = SP_OK;
    unsigned columns = 0;
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        chunks->datasets[c] = datasets[c];
        if (datasets[c] >= 0) columns++;
    }
    int status = spi_column_pool_open(&chunks->pool, threads, columns,
                                      chunks->chunk_elements * sizeof(int64_t), sizeof(int64_t),
                                      store_chunk, chunks);
    for (int c = 0; c < SPI_EV_COUNT && status == SP_OK; c++)
        if (datasets[c] >= 0 && !(chunks->filling[c] = spi_column_pool_buffer(chunks->pool)))
            status = SP_ERR_OUT_OF_MEMORY;
    if (status != SP_OK) {
        spi_event_chunks_close(chunks);
        return status;
    }
    *out = chunks;
    return SP_OK;
}

int64_t *spi_event_chunks_span(spi_event_chunks *chunks, int column, size_t *room) {
    *room = chunks->chunk_elements - chunks->filled;
    return chunks->filling[column] + chunks->filled;
}

/* Submit the current chunk of every column (raw_bytes: the whole chunk,
 * the partial last one padded with zeros). */
static int submit_chunks(spi_event_chunks *chunks) {
    size_t bytes = chunks->chunk_elements * sizeof(int64_t);
    if (chunks->filled < chunks->chunk_elements)
        for (int c = 0; c < SPI_EV_COUNT; c++)
            if (chunks->filling[c])
                memset(chunks->filling[c] + chunks->filled, 0,
                       (chunks->chunk_elements - chunks->filled) * sizeof(int64_t));
    for (int c = 0; c < SPI_EV_COUNT && chunks->failed == SP_OK; c++)
        if (chunks->filling[c])
            chunks->failed = spi_column_pool_submit(chunks->pool, (void **)&chunks->filling[c],
                                                    bytes, c, chunks->chunk_index);
    chunks->written += chunks->filled;
    chunks->filled = 0;
    chunks->chunk_index++;
    return chunks->failed;
}

int spi_event_chunks_advance(spi_event_chunks *chunks, size_t count) {
    if (chunks->failed != SP_OK) return chunks->failed;
    if (count > chunks->chunk_elements - chunks->filled)
        return chunks->failed = SP_ERR_INVALID_ARGUMENT;
    chunks->filled += count;
    bool last = chunks->written + chunks->filled == chunks->event_count;
    if (chunks->filled == chunks->chunk_elements || (last && chunks->filled))
        submit_chunks(chunks);
    if (last && chunks->failed == SP_OK) chunks->failed = spi_event_chunks_finish(chunks);
    return chunks->failed;
}

int spi_event_chunks_finish(spi_event_chunks *chunks) {
    if (chunks->failed != SP_OK || chunks->finished) return chunks->failed;
    if (chunks->written + chunks->filled != chunks->event_count)
        return chunks->failed = SP_ERR_INVALID_ARGUMENT;
    if (chunks->filled) submit_chunks(chunks);
    if (chunks->failed == SP_OK) chunks->failed = spi_column_pool_drain(chunks->pool);
    /* The threads are not needed past the last chunk: join them now. */
    spi_column_pool_close(chunks->pool);
    chunks->pool = NULL;
    for (int c = 0; c < SPI_EV_COUNT; c++) chunks->filling[c] = NULL; /* freed by the pool */
    chunks->finished = chunks->failed == SP_OK;
    return chunks->failed;
}

void spi_event_chunks_close(spi_event_chunks *chunks) {
    if (!chunks) return;
    spi_column_pool_close(chunks->pool);
    spi_free(chunks);
}
